"""How the helper answers: one JSON envelope on stdout, or one on stderr for a failure.

`{"ok":true,"result":…}` / `{"ok":false,"error":"…","code":"…"}`, always UTF-8 with
`ensure_ascii=False`. Display-first commands print their `text` instead unless `--json`.
Only standard JSON goes out: a NaN or infinite number in a result is a bug in the command
(`allow_nan=False` makes it an internal error instead of `NaN` on stdout).
"""

from __future__ import annotations

import json
import os
import sys

_pretty = False


def set_pretty(value: bool) -> None:
    global _pretty
    _pretty = value


def _want_indent(stream) -> bool:
    if _pretty or os.environ.get("AETHER_PRETTY") not in (None, "", "0"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def dumps(obj, indent: bool = False) -> str:
    if indent:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2)
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def write(stream, text: str) -> None:
    """Write text as UTF-8 whatever the locale, and flush."""
    if not text.endswith("\n"):
        text += "\n"
    data = text.encode("utf-8", "replace")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        try:
            buffer.write(data)
            buffer.flush()
        except BrokenPipeError:
            # The reader went away (`aether status | head -1`): the command did its work, so
            # send the rest to /dev/null and finish normally instead of failing at exit.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
    else:  # e.g. a StringIO in tests
        stream.write(text)
        stream.flush()


def success(result, *, display: bool = False, as_json: bool = False, text_only: bool = False) -> None:
    """Print a command's result (see the module docstring)."""
    if (display and not as_json) or text_only:
        text = result.get("text") if isinstance(result, dict) else None
        if text is not None:
            write(sys.stdout, text)
            return
    write(sys.stdout, dumps({"ok": True, "result": result}, _want_indent(sys.stdout)))


def failure(envelope: dict) -> None:
    try:
        text = dumps(envelope)
    except ValueError:  # a detail held NaN: the message and code still go out
        text = dumps({k: envelope.get(k) for k in ("ok", "error", "code")})
    write(sys.stderr, text)


def use_color(stream=None) -> bool:
    """Color only on a terminal, never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
