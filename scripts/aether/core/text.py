"""Text the helper stores or shows: clipped to a limit, or flattened onto one line."""

from __future__ import annotations


def clip(value, limit: int) -> str:
    """`value` as a string of at most `limit` characters, ending with `…` when cut (None → "")."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(value, limit: int = 160) -> str:
    """`value` with every run of whitespace made one space, then clipped to `limit` characters."""
    return clip(" ".join(clip(value, limit * 4).split()), limit)
