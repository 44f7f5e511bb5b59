"""What callers hand Aether, checked the same way by every command.

- JSON documents (`parse_json`, `loads`): strict. Refused: NaN, Infinity and numbers too large
  for a float (1e400), lone UTF-16 surrogates (`"\\ud800"`: UTF-8 cannot store them), nesting
  deeper than the parser can follow, and integers longer than Python converts (4300 digits).
- File paths from a document or an answer (`check_path`): no NUL character.
- Free text (`is_blank`): text made only of spaces, control and invisible format characters
  (zero-width spaces, joiners, BOMs) counts as empty.
- Inputs that feed a pattern matcher or a query engine (`check_size`): bounded, so no input
  can make a command run for minutes.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from aether.core.exceptions import input_error

if TYPE_CHECKING:
    from collections.abc import Iterable


class JSONRefused(ValueError):
    """The text is JSON syntax but holds something Aether refuses (see the module docstring)."""


def _constant(name: str):
    raise JSONRefused(f"{name} is not a JSON number; use null or a finite number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JSONRefused(f"the number {text[:40]} is too large for a float")
    return value


def _check_strings(doc) -> None:
    """Raise JSONRefused at the first string (key or value) that UTF-8 cannot encode."""
    stack = [doc]
    while stack:
        item = stack.pop()
        strings: Iterable[str]
        if isinstance(item, str):
            strings = (item,)
        elif isinstance(item, dict):
            strings = item.keys()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for text in strings:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = text[exc.start]
                raise JSONRefused(
                    f"a string holds a lone UTF-16 surrogate (\\u{ord(bad):04x}), which is not "
                    f"text; send the characters themselves, in UTF-8"
                ) from None


def loads(text: str):
    """Parse JSON strictly. Raises `JSONRefused` for refused content and `ValueError`
    (json.JSONDecodeError) for a syntax error."""
    try:
        doc = json.loads(text, parse_constant=_constant, parse_float=_float)
    except RecursionError:
        raise JSONRefused("it is nested too deeply") from None
    except JSONRefused:
        raise
    except ValueError as exc:
        if "digits" in str(exc) and "integer" in str(exc):  # int_max_str_digits
            raise JSONRefused("an integer has too many digits") from None
        raise
    if "\\ud" in text or "\\uD" in text:  # only escapes can make a lone surrogate
        _check_strings(doc)
    return doc


def parse_json(text: str, what: str = "input", code: str = "invalid_json"):
    """Parse a caller's JSON document; any problem is an input error (`code`, exit 1) that
    says where it broke."""
    try:
        return loads(text)
    except ValueError as exc:
        raise input_error(code, f"{what} is not valid JSON: {exc}") from None


# ---------------------------------------------------------------- paths and text


def path_problem(path: str) -> str | None:
    """Why a path given by a caller cannot name a file (None when it can). Only what no
    filesystem takes is refused: a NUL character, or text that is not UTF-8."""
    if "\x00" in path:
        return "it holds a NUL character"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid UTF-8"
    return None


def check_path(path: str, what: str, code: str = "invalid_path") -> str:
    """The path itself, or an input error (`code`) naming what is wrong with it."""
    problem = path_problem(path)
    if problem:
        raise input_error(code, f"{what}: the path {path[:80]!r} cannot name a file: {problem}")
    return path


_INVISIBLE = frozenset("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0\ufeff")


def is_blank(text: str) -> bool:
    """True when text shows nothing: only whitespace, control characters and invisible
    format characters (zero-width spaces and joiners, word joiners, BOMs, soft hyphens)."""
    stripped = text.strip()
    if not stripped:
        return True
    if stripped.isascii():
        return not any(" " < ch < "\x7f" for ch in stripped)
    import unicodedata  # noqa: PLC0415 — start-up: unicodedata only where text is normalised

    for ch in stripped:
        if ch.isspace() or ch in _INVISIBLE:
            continue
        if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Zs"):
            return False
    return True


def check_size(text: str, limit: int, what: str, advice: str | None = None) -> str:
    """The text itself, or `content_too_long` when it is longer than `limit` characters
    (`advice`, when given, is added to the message in parentheses)."""
    if len(text) > limit:
        tail = f" ({advice})" if advice else ""
        raise input_error(
            "content_too_long", f"{what} is {len(text)} characters; the limit is {limit}{tail}", length=len(text), limit=limit
        )
    return text


def require_text(
    value, what: str, limit: int, *, code: str = "invalid_content", empty: str | None = None, advice: str | None = None
) -> str:
    """Free text a caller must give, unchanged: `code` when it is not text or shows nothing
    (see `is_blank`; `empty` replaces the message), `content_too_long` past `limit`."""
    if not isinstance(value, str) or is_blank(value):
        raise input_error(code, empty or f"{what} is empty")
    return check_size(value, limit, what, advice)
