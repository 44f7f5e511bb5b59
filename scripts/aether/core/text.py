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


_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object", type(None): "null"}
# The same types as Bug Bash's messages word them ("must be a JSON object, found a list").
_WITH_ARTICLE = {
    "string": "a string",
    "boolean": "a boolean",
    "integer": "a number",
    "number": "a number",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def json_type(value, article: bool = False) -> str:
    """The JSON type of a parsed value, for messages: `string`, `integer`, `array`, … (or, with
    `article`, `a string`, `a number`, `a list`, …)."""
    name = _JSON_TYPES.get(type(value), type(value).__name__)
    return _WITH_ARTICLE.get(name, name) if article else name
