"""The colony's error log (errors.json): the last 50 errors and the categories that recur.

A category with at least 3 errors among the kept ones is a pattern. Once flagged, a category
stays in `flagged_patterns`: its count and last_seen follow every new error of that category,
even after the oldest errors fall off the 50-error window; its description (written when it
was flagged) is kept.
"""

from __future__ import annotations

from aether.core import clock, inputs
from aether.core.exceptions import input_error
from aether.core.text import clip
from aether.state import store

MAX_ERRORS = 50  # errors.json keeps the newest 50
MAX_FLAGGED_PATTERNS = 50  # the least recently seen pattern goes first
PATTERN_THRESHOLD = 3  # errors of one category that make a pattern
SEVERITIES = ("critical", "high", "medium", "low")
MAX_CATEGORY_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 4000  # the CLI refuses longer text; library callers get it clipped
MAX_FIELD_LENGTH = 1000  # task_id and root_cause


def _key(value) -> str:
    """Grouping key of a category or severity (the original Aether's files may hold any case)."""
    return value.strip().lower() if isinstance(value, str) else str(value)


def check_category(category: str) -> str:
    """A category is a short single-line label, stored lower-case (`security`, `import`)."""
    value = category.strip().lower() if isinstance(category, str) else ""
    if not value:
        raise input_error("invalid_category", "the error category is empty; name one, e.g. `runtime`")
    if len(value) > MAX_CATEGORY_LENGTH:
        raise input_error(
            "invalid_category",
            f"the error category is {len(value)} characters; the limit is "
            f"{MAX_CATEGORY_LENGTH} (a category is a short label such as `security`)",
        )
    if any(ch < " " or ch == "\x7f" for ch in value):
        raise input_error("invalid_category", "the error category must be one line without control characters")
    return value


def check_severity(severity: str) -> str:
    value = severity.strip().lower() if isinstance(severity, str) else ""
    if value not in SEVERITIES:
        raise input_error("invalid_severity", f"unknown severity {severity!r}; use one of {', '.join(SEVERITIES)}")
    return value


def _pattern_rows(errors: list) -> dict:
    """category key → {category, count, first_seen, last_seen} over the given errors."""
    rows: dict = {}
    for err in errors:
        if not isinstance(err, dict):
            continue
        key = _key(err.get("category"))
        stamp = err.get("timestamp")
        row = rows.get(key)
        if row is None:
            rows[key] = {"category": key, "count": 1, "first_seen": stamp, "last_seen": stamp}
            continue
        row["count"] += 1
        if isinstance(stamp, str):
            if not isinstance(row["first_seen"], str) or stamp < row["first_seen"]:
                row["first_seen"] = stamp
            if not isinstance(row["last_seen"], str) or stamp > row["last_seen"]:
                row["last_seen"] = stamp
    return rows


def patterns(data: dict) -> list:
    """Categories with ≥ 3 of the kept errors: [{category, count, first_seen, last_seen}],
    sorted by category."""
    rows = _pattern_rows(data.get("errors") or [])
    return [row for _, row in sorted(rows.items()) if row["count"] >= PATTERN_THRESHOLD]


def _flag(data: dict, error: dict) -> None:
    """Keep flagged_patterns up to date after `error` was appended."""
    flagged = data.setdefault("flagged_patterns", [])
    key = error["category"]
    for entry in flagged:
        if isinstance(entry, dict) and _key(entry.get("category")) == key:
            entry["count"] = (count if isinstance(count := entry.get("count"), int) else 0) + 1
            entry["last_seen"] = error["timestamp"]
            return
    row = _pattern_rows(data["errors"]).get(key)
    if row is None or row["count"] < PATTERN_THRESHOLD:
        return
    summary = clip(" ".join(error["description"].split()), 200)
    flagged.append(
        {
            "category": key,
            "count": row["count"],
            "first_seen": row["first_seen"],
            "last_seen": row["last_seen"],
            "flagged_at": error["timestamp"],
            "description": f"recurring {key} errors; flagged on: {summary}",
        }
    )
    if len(flagged) > MAX_FLAGGED_PATTERNS:
        flagged.sort(key=lambda e: str(e.get("last_seen") or "") if isinstance(e, dict) else "")
        del flagged[:-MAX_FLAGGED_PATTERNS]


def append(
    data: dict,
    category: str,
    severity: str,
    description: str,
    phase: int | None = None,
    task_id: str | None = None,
    root_cause: str | None = None,
) -> dict:
    """Append an error to loaded errors.json data (call inside a store update); returns it.

    Keeps the newest 50 errors and updates flagged_patterns. Long text is clipped.
    """
    if not isinstance(description, str) or not description.strip():
        raise input_error("invalid_description", "the error description is empty")
    if phase is not None and (isinstance(phase, bool) or not isinstance(phase, int) or phase < 0):
        raise input_error("invalid_argument", f"phase must be a whole number ≥ 0, got {phase!r}")
    task_id = str(task_id) if task_id not in (None, "") else None  # plan task ids may be numbers
    root_cause = str(root_cause) if root_cause not in (None, "") else None
    errors = data.setdefault("errors", [])
    taken = {e.get("id") for e in errors if isinstance(e, dict)}
    error = {
        "id": clock.new_id("err", taken),
        "category": check_category(category),
        "severity": check_severity(severity),
        "description": clip(description, MAX_DESCRIPTION_LENGTH),
        "root_cause": clip(root_cause, MAX_FIELD_LENGTH) if root_cause else None,
        "phase": phase,
        "task_id": clip(task_id, MAX_FIELD_LENGTH) if task_id else None,
        "timestamp": clock.iso(),
    }
    errors.append(error)
    del errors[:-MAX_ERRORS]
    _flag(data, error)
    return error


def summary(data: dict) -> dict:
    """{total, by_category, by_severity} over the kept errors."""
    by_category: dict = {}
    by_severity: dict = {}
    errors = [e for e in data.get("errors") or [] if isinstance(e, dict)]
    for err in errors:
        cat, sev = _key(err.get("category")), _key(err.get("severity"))
        by_category[cat] = by_category.get(cat, 0) + 1
        by_severity[sev] = by_severity.get(sev, 0) + 1
    return {
        "total": len(errors),
        "by_category": dict(sorted(by_category.items())),
        "by_severity": dict(sorted(by_severity.items())),
    }


# ---------------------------------------------------------------- commands


def _check_text_limit(text: str | None, limit: int, what: str) -> None:
    if text is not None:
        inputs.check_size(text, limit, what, "say it shorter")


def add(
    category: str, severity: str, description: str, phase: int | None = None, task_id: str | None = None, root_cause: str | None = None
) -> str:
    """error-add: record an error; returns its id."""
    _check_text_limit(description, MAX_DESCRIPTION_LENGTH, "the description")
    _check_text_limit(task_id, MAX_FIELD_LENGTH, "--task-id")
    _check_text_limit(root_cause, MAX_FIELD_LENGTH, "--root-cause")
    # Validate before taking the lock: bad input never touches the file.
    check_category(category)
    check_severity(severity)
    if not description.strip():
        raise input_error("invalid_description", "the error description is empty")
    error = store.update("errors", lambda data: append(data, category, severity, description, phase, task_id, root_cause))
    return error["id"]


def pattern_check() -> list:
    """error-pattern-check."""
    return patterns(store.read("errors"))


def summarize() -> dict:
    """error-summary."""
    return summary(store.read("errors"))
