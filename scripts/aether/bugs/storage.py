"""Where a bug lives and how its state is read and written.

```
<storage_path>/                  .aether/bugs by default (bug_bash.storage_path)
  approvals.jsonl                append-only approval audit log (all bugs)
  <bug_id>/
    state.json                   the bug's state: the source of truth (schema version 1)
    state.json.lock              its lock
    report.md  reproduction.md  root-cause-analysis.md  fix-plan.md  test-cases.py
    rollback.json                what `bug fix` changed, to undo it (`bug rollback`)
    verification.log             output of the last verification run
    history/phase_transitions.jsonl   append-only transition log
```

Every write goes through `aether.state.store` (lock → read → change → validate → atomic replace,
with backups); transitions made by a write are appended to the history log while the state's
lock is still held, so the log's order is the order of the writes.
"""

from __future__ import annotations

import copy
import os

from aether.bugs.exit_codes import BUG_EXIT_INPUT, bug_error, not_found
from aether.bugs.phases import PHASES, STOP_AT, TRIGGERS
from aether.core import containment, paths
from aether.state import atomic_files, schema_checks, schemas, store

STATE_VERSION = 1
STATE_FILE = "state.json"
ROLLBACK_FILE = "rollback.json"
HISTORY_DIR = "history"
TRANSITIONS_LOG = "phase_transitions.jsonl"
AUDIT_LOG = "approvals.jsonl"
MAX_ID_LENGTH = 64
AUTO_ID_WORDS = 6  # an id made from the description keeps its first words…
AUTO_ID_LENGTH = 40  # …up to this many characters
MAX_NOTES = 100  # state.notes keeps the newest ones

STATE_DEFAULT: dict = {
    "bug_id": None,
    "phase": "created",
    "created_at": None,
    "updated_at": None,
    "report": {},
    "stop_at": None,
    "reproduction": None,
    "root_cause": None,
    "fix_plan": None,
    "implementation": None,
    "costs": [],
    "transitions": [],
    "approval_record": None,
    "blocked_reason": None,
    "rejection": None,
    "notes": [],
    "agent_rejections": {},
    "previous_attempts": [],
}


# ---------------------------------------------------------------- ids


def _slug_problem(bug_id) -> str | None:
    if not isinstance(bug_id, str) or not bug_id:
        return "is empty"
    if len(bug_id) > MAX_ID_LENGTH:
        return f"is longer than {MAX_ID_LENGTH} characters"
    if any(not (c.isascii() and (c.islower() or c.isdigit() or c == "-")) for c in bug_id):
        return "may only hold lowercase letters, digits and hyphens"
    if bug_id.startswith("-") or bug_id.endswith("-") or "--" in bug_id:
        return "must not start or end with a hyphen or hold two in a row"
    return None


def slugify(text: str, limit: int = AUTO_ID_LENGTH) -> str:
    """Lowercase ASCII words joined by hyphens (`Login fails!` → `login-fails`)."""
    import unicodedata  # noqa: PLC0415 — start-up: unicodedata only where text is normalised

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words, word = [], []
    for ch in ascii_text.lower():
        if ch.isalnum():
            word.append(ch)
        elif word:
            words.append("".join(word))
            word = []
    if word:
        words.append("".join(word))
    slug = ""
    for w in words[:AUTO_ID_WORDS]:
        candidate = f"{slug}-{w}" if slug else w
        if len(candidate) > limit:
            break
        slug = candidate
    return slug or (words[0][:limit] if words else "")


def check_id(bug_id) -> str:
    """A bug id as given, if it is a safe slug; raises `invalid_bug_id` (exit 1) otherwise."""
    problem = _slug_problem(bug_id)
    if problem:
        suggestion = slugify(bug_id, MAX_ID_LENGTH) if isinstance(bug_id, str) else ""
        hint = f" (try {suggestion!r})" if suggestion and suggestion != bug_id else ""
        raise bug_error("invalid_bug_id", f"bug id {bug_id!r} {problem}: use a slug like `login-special-chars`{hint}", BUG_EXIT_INPUT)
    return bug_id


# ---------------------------------------------------------------- locations


def storage_dir(cfg: dict) -> str:

    base = os.path.expanduser(cfg["storage_path"])
    if not os.path.isabs(base):
        base = os.path.join(paths.project_root(), base)
    base = os.path.normpath(base)
    if not (os.environ.get("AETHER_BUG_STORAGE_PATH") or containment.inside(base, os.path.abspath(paths.project_root()))):
        raise containment.refusal(
            "path_outside_project",
            base,
            "(bug_bash.storage_path) is outside the project; only AETHER_BUG_STORAGE_PATH may name a folder elsewhere",
        )
    return base


def bug_dir(cfg: dict, bug_id: str) -> str:
    return os.path.join(storage_dir(cfg), check_id(bug_id))


def state_path(cfg: dict, bug_id: str) -> str:
    return os.path.join(bug_dir(cfg, bug_id), STATE_FILE)


def history_path(cfg: dict, bug_id: str) -> str:
    return os.path.join(bug_dir(cfg, bug_id), HISTORY_DIR, TRANSITIONS_LOG)


def audit_path(cfg: dict) -> str:
    return os.path.join(storage_dir(cfg), AUDIT_LOG)


def display_path(path: str) -> str:
    """A path relative to the project root when it is inside it."""

    root = paths.project_root()
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


# ---------------------------------------------------------------- schema


def _check_state(data: dict) -> list:
    p: list = []
    w = "bug state"
    fc = schema_checks.field_check
    fc(p, data, "bug_id", str, w)
    if isinstance(data.get("bug_id"), str) and _slug_problem(data["bug_id"]):
        p.append(f"{w}.bug_id {data['bug_id']!r} is not a valid bug id")
    fc(p, data, "phase", str, w, choices=PHASES)
    fc(p, data, "created_at", str, w)
    fc(p, data, "updated_at", str, w)
    fc(p, data, "report", dict, w)
    if isinstance(data.get("report"), dict):
        fc(p, data["report"], "description", str, f"{w}.report")
    fc(p, data, "stop_at", (str, type(None)), w, choices=STOP_AT + (None,))
    for key in ("reproduction", "root_cause", "fix_plan", "implementation", "approval_record", "rejection"):
        fc(p, data, key, (dict, type(None)), w)
    fc(p, data, "blocked_reason", (str, type(None)), w)
    fc(p, data, "notes", list, w)
    fc(p, data, "agent_rejections", dict, w)
    fc(p, data, "previous_attempts", list, w)

    def cost(p, c, where):
        fc(p, c, "agent_name", str, where)
        fc(p, c, "input_tokens", int, where)
        fc(p, c, "output_tokens", int, where)
        fc(p, c, "cost_usd", (int, float), where)
        fc(p, c, "timestamp", str, where)

    def transition(p, t, where):
        fc(p, t, "from_phase", str, where, choices=PHASES)
        fc(p, t, "to_phase", str, where, choices=PHASES)
        fc(p, t, "timestamp", str, where)
        fc(p, t, "trigger", str, where, choices=TRIGGERS)
        fc(p, t, "metadata", dict, where)

    schema_checks.records(p, data, "costs", cost, f"{w}.")
    schema_checks.records(p, data, "transitions", transition, f"{w}.")
    approval = data.get("approval_record")
    if isinstance(approval, dict):
        for key in ("approved_by", "approved_at", "fix_plan_hash"):
            fc(p, approval, key, str, f"{w}.approval_record")
    return p


def _upgrade_state(data: dict) -> dict:
    """Version 0 (no `version`) had no cost records (docs/decisions/bug-bash-gate.md); fill every missing key."""

    if data.get("version", 0) < 1:
        data.setdefault("costs", [])
    for key, value in STATE_DEFAULT.items():
        if key not in data:
            data[key] = copy.deepcopy(value)
    return data


class BugFileSpec(schemas.FileSpec):
    """A FileSpec whose corrupt-file hint names `aether bug restore <id>`."""

    __slots__ = ("restore_command",)
    restore_command: str


def state_spec(bug_id: str) -> BugFileSpec:

    def default() -> dict:
        data = copy.deepcopy(STATE_DEFAULT)
        data["version"] = STATE_VERSION
        return data

    spec = BugFileSpec(
        name=f"bug {bug_id}",
        filename=STATE_FILE,
        version=STATE_VERSION,
        default=default,
        validate=_check_state,
        upgrade=_upgrade_state,
        missing_hint="; `aether bug list` shows the bugs of this project",
    )
    spec.restore_command = f"aether bug restore {bug_id}"
    return spec


def _check_rollback(data: dict) -> list:
    p: list = []
    schema_checks.field_check(p, data, "files", list, "rollback")
    schema_checks.field_check(p, data, "created_dirs", list, "rollback")
    return p


def rollback_spec(bug_id: str) -> BugFileSpec:
    def default() -> dict:
        return {"version": 1, "bug_id": bug_id, "files": [], "created_dirs": [], "applied_at": None, "rolled_back_at": None}

    spec = BugFileSpec(name=f"bug {bug_id} rollback", filename=ROLLBACK_FILE, version=1, default=default, validate=_check_rollback)
    spec.restore_command = f"aether bug restore {bug_id} --file rollback"
    return spec


# ---------------------------------------------------------------- reading and writing


def exists(cfg: dict, bug_id: str) -> bool:
    return os.path.exists(state_path(cfg, bug_id))


def load(cfg: dict, bug_id: str) -> dict:
    """The bug's state (upgraded in memory); `bug_not_found` (exit 1) if there is none."""
    path = state_path(cfg, bug_id)
    if not os.path.exists(path):
        raise not_found(bug_id)
    return store.read_file(path, state_spec(bug_id), missing_ok=False)


def update(cfg: dict, bug_id: str, change, *, create: bool = False):
    """Apply `change(state)` under the bug's lock; its new transitions go to the history log.

    Without `create`, a bug that does not exist is `bug_not_found`.
    """
    path = state_path(cfg, bug_id)
    if not create and not os.path.exists(path):
        raise not_found(bug_id)
    log = history_path(cfg, bug_id)
    new_transitions: list = []

    def wrapped(state):
        if not create and state.get("bug_id") is None:
            raise not_found(bug_id)
        before = len(state["transitions"])
        result = change(state)
        new_transitions[:] = state["transitions"][before:]
        if len(state["notes"]) > MAX_NOTES:
            del state["notes"][:-MAX_NOTES]
        return result

    def after(_result):
        if new_transitions:
            atomic_files.append_jsonl(log, [{"bug_id": bug_id, **t} for t in new_transitions])

    return store.update_file(path, state_spec(bug_id), wrapped, after=after)


def list_ids(cfg: dict) -> list[str]:
    base = containment.check_read(storage_dir(cfg))
    try:
        entries = os.scandir(base)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with entries:
        return sorted(
            e.name for e in entries if e.is_dir() and _slug_problem(e.name) is None and os.path.exists(os.path.join(e.path, STATE_FILE))
        )


def read_history(cfg: dict, bug_id: str) -> list[dict]:
    """The transition log's records (a torn last line, from a crash, is skipped)."""
    return [r for r in atomic_files.read_jsonl(history_path(cfg, bug_id)) if isinstance(r, dict)]


def write_text(path: str, text: str) -> None:
    """Write a report file whole (see `atomic_files.write_text_atomic`), creating its folder."""
    containment.make_dirs(os.path.dirname(path))
    atomic_files.write_text_atomic(path, text)
