"""The `bug` group's exit statuses (docs/decisions/bug-bash-gate.md: its own codes, plus 5 and 6) and its common errors."""

from __future__ import annotations

from aether.core.exceptions import AetherError

BUG_EXIT_OK = 0
BUG_EXIT_INPUT = 1  # invalid arguments, bug not found
BUG_EXIT_PHASE = 2  # bug id exists, invalid phase for the command, not approved, reason missing
BUG_EXIT_FAILED = 3  # bug not reproducible (analyze), implementation failed (fix)
BUG_EXIT_AGENT = 4  # agent output rejected (record), verification failed (fix)
BUG_EXIT_STORAGE = 5  # lock timeout, corrupt or unreadable state
BUG_EXIT_COST = 6  # a cost limit is exceeded

# Store error codes that the `bug` group reports with BUG_EXIT_STORAGE.
STORAGE_CODES = frozenset(
    {
        "lock_timeout",
        "state_corrupt",
        "state_unreadable",
        "state_unwritable",
        "state_too_new",
        "no_backup",
        "path_outside_project",
        "path_is_symlink",
    }
)


def bug_error(code: str, message: str, exit_code: int, **details) -> AetherError:
    return AetherError(code, message, exit_code, **details)


def not_found(bug_id: str) -> AetherError:
    return bug_error("bug_not_found", f"no bug {bug_id!r}; `aether bug list` shows the bugs of this project", BUG_EXIT_INPUT, bug_id=bug_id)
