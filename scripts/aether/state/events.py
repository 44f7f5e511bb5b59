"""The colony's event log (events.json, last 100 kept) and its activity log (activity.log).

activity.log is plain text, one entry per line: `[HH:MM:SS] ACTION caste: description` (UTC).
A multi-line description is folded onto its line: each line break (`\\n`, `\\r` and every other
separator `str.splitlines` knows: U+0085, U+2028, U+2029, `\\v`, `\\f`, U+001C–U+001E) becomes
` ⏎ ` and other control characters become spaces, so a line is always one entry; the log is
read back split on `\\n` only. `activity-log-init N` copies a non-empty log to
`activity-phase-N.log` (or `-2`, `-3`… if that exists) and appends a `# Phase N: name -- <ISO
time>` header; the combined log is never truncated.
"""

from __future__ import annotations

import os
import re
import time

from aether.core import clock, containment, inputs, paths
from aether.core.exceptions import input_error, state_error
from aether.core.text import clip
from aether.rules import modes
from aether.state import atomic_files, store

MAX_EVENTS = 100  # events.json keeps the newest 100
MAX_EVENT_CONTENT = 4000  # event-add refuses longer content; library callers get it clipped
MAX_LABEL_LENGTH = 64  # event type and source, activity action and caste

ACTIVITY_LOG = "activity.log"
ARCHIVE_NAME = "activity-phase-{phase}{suffix}.log"
MAX_ACTIVITY_DESCRIPTION = 1000  # longer descriptions are clipped with `…`
MAX_PHASE_NAME = 120  # in a phase header; clipped
READ_LAST_MATCHES = 20  # activity-log-read CASTE: the last 20 lines of that caste
LINE_BREAK_MARK = " ⏎ "


# ---------------------------------------------------------------- helpers


def _control(ch: str) -> bool:
    """C0/C1 control characters and the Unicode line and paragraph separators."""
    return ch < " " or "\x7f" <= ch <= "\x9f" or ch in "\u2028\u2029"


def label(value: str, what: str, *, spaces: bool = True, colon: bool = True) -> str:
    """A short one-line label (event type, source, action, caste), stripped; raises if bad."""
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        raise input_error("invalid_argument", f"{what} is empty")
    if len(text) > MAX_LABEL_LENGTH:
        raise input_error("invalid_argument", f"{what} is {len(text)} characters; the limit is {MAX_LABEL_LENGTH}")
    if any(_control(ch) for ch in text):
        raise input_error("invalid_argument", f"{what} must be one line without control characters")
    if not spaces and any(ch.isspace() for ch in text):
        raise input_error("invalid_argument", f"{what} must be one word (no spaces), got {text!r}")
    if not colon and ":" in text:
        raise input_error("invalid_argument", f"{what} must not contain ':', got {text!r}")
    return text


def fold(text: str) -> str:
    """One line: every line break `str.splitlines` knows becomes ` ⏎ `, other control
    characters spaces; ends trimmed."""
    lines = text.strip().splitlines()
    flat = LINE_BREAK_MARK.join(line.strip() for line in lines)
    return "".join(" " if _control(ch) else ch for ch in flat)


# ---------------------------------------------------------------- events.json


def append(data: dict, event_type: str, source: str, content: str) -> dict:
    """Append an event to loaded events.json data (call inside a store update); returns it.

    Keeps the newest 100; content longer than 4000 characters is clipped with `…`.
    """
    events = data["events"]
    taken = {e.get("id") for e in events if isinstance(e, dict)}
    event = {
        "id": clock.new_id("evt", taken),
        "type": event_type,
        "source": source,
        "content": clip(content, MAX_EVENT_CONTENT),
        "timestamp": clock.iso(),
    }
    events.append(event)
    del events[:-MAX_EVENTS]
    return event


def add(event_type: str, source: str, content: str) -> dict:
    """event-add: record one event; returns it."""
    event_type = label(event_type, "the event type", spaces=False)
    source = label(source, "the event source")
    inputs.require_text(
        content, "the event content", MAX_EVENT_CONTENT, advice="events are a short record: keep details in the files they concern"
    )
    return store.update("events", lambda data: append(data, event_type, source, content))


# ---------------------------------------------------------------- activity.log


def activity_log_path() -> str:
    return os.path.join(paths.data_dir(), ACTIVITY_LOG)


def activity_enabled(mode: str | None = None) -> bool:
    """False when the colony's mode turns the activity log off (LIGHTWEIGHT).

    `mode` None reads it from COLONY_STATE (a missing colony counts as STANDARD).
    """

    if mode is None:
        mode = store.read("colony").get("mode")
    return modes.profile(mode).get("activity_log") != "off"


def ensure_activity_log() -> str:
    """Create an empty activity.log if there is none (colony-init); returns its path."""
    path = activity_log_path()
    if not os.path.exists(path):
        atomic_files.append_text(path, "")
    return path


def format_entry(action: str, caste: str, description: str, now: float | None = None) -> str:
    """The log line (without newline) for one entry; raises input_error on a bad field."""

    action = label(action, "the action", spaces=False).upper()
    caste = label(caste, "the caste", colon=False)
    text = fold(description) if isinstance(description, str) else ""
    if inputs.is_blank(text):
        raise input_error("invalid_argument", "the description is empty")
    stamp = time.strftime("%H:%M:%S", time.gmtime(clock.now() if now is None else now))
    return f"[{stamp}] {action} {caste}: {clip(text, MAX_ACTIVITY_DESCRIPTION)}"


def activity_log(action: str, caste: str, description: str, mode: str | None = None) -> bool:
    """Append one entry to activity.log; returns False (nothing written) when the mode
    turns the log off. Pass `mode` when you already hold the colony state."""
    line = format_entry(action, caste, description)
    if not activity_enabled(mode):
        return False
    atomic_files.append_text(activity_log_path(), line + "\n")
    return True


def _phase_label(phase: int) -> int:
    if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
        raise input_error("invalid_argument", f"phase must be a whole number ≥ 0, got {phase!r}")
    return phase


def activity_log_init(phase: int, phase_name: str | None = None, mode: str | None = None) -> dict:
    """activity-log-init: archive a non-empty log for phase N, then append the phase header.

    Returns {archived, archive, header} (`skipped: true` when the mode turns the log off).
    """
    phase = _phase_label(phase)
    name = fold(phase_name) if phase_name else ""
    name = clip(name, MAX_PHASE_NAME) or "unnamed"
    if not activity_enabled(mode):
        return {"archived": False, "archive": None, "header": None, "skipped": True}
    path = activity_log_path()
    folder = os.path.dirname(path)
    header = f"# Phase {phase}: {name} -- {clock.iso()}"
    with atomic_files.text_lock(path):
        current = _read_log(path)
        archive = None
        if current:
            n = 1
            while archive is None:
                candidate = os.path.join(folder, ARCHIVE_NAME.format(phase=phase, suffix="" if n == 1 else f"-{n}"))
                if atomic_files.create_text(candidate, current):
                    archive = candidate
                n += 1
        prefix = "" if not current or current.endswith(b"\n\n") else ("\n" if current.endswith(b"\n") else "\n\n")
        atomic_files.append_text(path, f"{prefix}{header}\n", locked=True)
    return {"archived": archive is not None, "archive": archive, "header": header}


def _read_log(path: str) -> bytes:
    """The activity log's bytes (b"" when it does not exist yet)."""

    containment.check_read(path)
    try:
        return containment.read_bytes(path)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        what = "is a directory, not the activity log" if isinstance(exc, IsADirectoryError) else f"cannot be read: {exc.strerror or exc}"
        raise state_error("state_unreadable", f"{path} {what}; move it away or fix the folder, then try again", file=path) from None


def _caste_of(line: str) -> str | None:
    """The caste field of an entry line, or None for headers and other lines."""
    if not line.startswith("[") or "] " not in line:
        return None
    rest = line.split("] ", 1)[1]
    if " " not in rest:
        return None
    rest = rest.split(" ", 1)[1]
    if ": " in rest:
        return rest.split(": ", 1)[0]
    return rest[:-1] if rest.endswith(":") else None


def activity_log_read(caste: str | None = None) -> str:
    """activity-log-read: the whole log, or the last 20 entries whose caste field names CASTE
    (a whole word, any case: `builder` matches `builder` and `builder-ant`, not `builders`)."""
    text = _read_log(activity_log_path()).decode("utf-8", "replace")
    if caste is None or not caste.strip():
        return text

    word = re.compile(r"(?<!\w)" + re.escape(caste.strip()) + r"(?!\w)", re.IGNORECASE)
    matches = []
    for line in text.split("\n"):  # not splitlines(): U+2028 & co. never end an entry
        field = _caste_of(line)
        if field is not None and word.search(field):
            matches.append(line)
    matches = matches[-READ_LAST_MATCHES:]
    return "".join(line + "\n" for line in matches)
