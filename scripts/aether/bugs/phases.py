"""The 14 phases of a bug and the only moves between them (docs/decisions/bug-bash-gate.md).

State files store the lowercase value (`planned`); commands print the uppercase name
(`PLANNED`). Every move is recorded twice: in the state's `transitions` and, append-only, in
`history/phase_transitions.jsonl`, each with a trigger (`auto`, `user_command`,
`agent_output`) and metadata.
"""

from __future__ import annotations

from aether.bugs.exit_codes import BUG_EXIT_FAILED, BUG_EXIT_PHASE, bug_error
from aether.core import clock
from aether.core.exceptions import input_error

PHASES = (
    "created",
    "reproducing",
    "reproduced",
    "not_reproducible",
    "analyzing",
    "analyzed",
    "planning",
    "planned",
    "approved",
    "implementing",
    "verifying",
    "fixed",
    "wont_fix",
    "blocked",
)
TRIGGERS = ("auto", "user_command", "agent_output")

# from → {to: the command that makes the move}. Nothing else moves a bug.
TRANSITIONS = {
    "created": {"reproducing": "bug analyze"},
    "reproducing": {"reproduced": "bug record reproduction", "not_reproducible": "bug record reproduction"},
    "reproduced": {"analyzing": "bug analyze"},  # automatic unless stopped at reproduce
    "analyzing": {"analyzed": "bug record root-cause"},
    "analyzed": {"planning": "bug analyze"},  # automatic unless stopped at analyze
    "planning": {"planned": "bug record fix-plan"},
    "planned": {"approved": "bug approve", "wont_fix": "bug reject"},
    "approved": {"implementing": "bug fix"},
    "implementing": {"verifying": "bug fix"},
    "verifying": {"fixed": "bug fix", "blocked": "bug fix"},
    "blocked": {"reproducing": "bug analyze --retry"},
    "not_reproducible": {"wont_fix": "bug reject"},
    "fixed": {},
    "wont_fix": {},
}
TERMINAL = ("fixed", "wont_fix")
RUNNING = ("reproducing", "analyzing", "planning", "implementing", "verifying")
STOP_AT = ("reproduce", "analyze")

# What the user (or the Queen) may run in each phase, besides status/list/cost.
LEGAL_COMMANDS = {
    "created": ["aether bug analyze {id}"],
    "reproducing": ["aether bug record {id} reproduction -"],
    "reproduced": ["aether bug analyze {id}"],
    "not_reproducible": ["aether bug reject {id} --reason -"],
    "analyzing": ["aether bug record {id} root-cause -"],
    "analyzed": ["aether bug analyze {id}"],
    "planning": ["aether bug record {id} fix-plan -"],
    "planned": ["/ant:bug approve {id}", "aether bug reject {id} --reason -", "aether bug fix {id} --dry-run"],
    "approved": ["aether bug fix {id}", "aether bug fix {id} --dry-run"],
    "implementing": ["aether bug fix {id}"],
    "verifying": ["aether bug fix {id}"],
    "fixed": [],
    "wont_fix": [],
    "blocked": ["aether bug analyze {id} --retry", "aether bug rollback {id}"],
}
# The one-word "Next" column of `bug list`.
NEXT_WORD = {
    "created": "analyze",
    "reproducing": "(running)",
    "reproduced": "analyze",
    "not_reproducible": "reject",
    "analyzing": "(running)",
    "analyzed": "analyze",
    "planning": "(running)",
    "planned": "approve",
    "approved": "fix",
    "implementing": "(running)",
    "verifying": "(running)",
    "fixed": "-",
    "wont_fix": "-",
    "blocked": "retry",
}
# Shown next to the phase in `bug status`.
PHASE_NOTE = {
    "planned": "awaiting approval",
    "approved": "ready to fix",
    "blocked": "needs attention",
    "not_reproducible": "close with reject, or re-open with a new bug",
}


def label(phase: str) -> str:
    return phase.upper()


def parse(value: str) -> str:
    """A phase name from the command line, in any case; raises on an unknown one."""

    phase = value.strip().lower().replace("-", "_")
    if phase not in PHASES:
        raise input_error("invalid_phase_name", f"unknown phase {value!r}; use one of {', '.join(PHASES)}")
    return phase


def legal_commands(phase: str, bug_id: str) -> list[str]:
    return [c.format(id=bug_id) for c in LEGAL_COMMANDS.get(phase, [])]


def refuse(state: dict, command: str, *, code: str = "invalid_phase", exit_code: int = BUG_EXIT_PHASE, why: str = ""):
    """The error for `command` run in the wrong phase: names what is legal now."""
    phase, bug_id = state["phase"], state["bug_id"]
    legal = legal_commands(phase, bug_id)
    if legal:
        hint = "legal now: " + "; ".join(f"`{c}`" for c in legal)
    else:
        hint = f"the bug is closed ({label(phase)}); start a new one with `aether bug init`"
    return bug_error(
        code,
        f"`aether {command}` cannot run while bug {bug_id} is {label(phase)}{'; ' + why if why else ''}; {hint}",
        exit_code,
        bug_id=bug_id,
        phase=label(phase),
        legal=legal,
    )


def not_reproducible(state: dict):
    return refuse(
        state, "bug analyze", code="not_reproducible", exit_code=BUG_EXIT_FAILED, why="it could not be reproduced (see reproduction.md)"
    )


def move(state: dict, to: str, trigger: str, command: str, **metadata) -> dict:
    """Change `state`'s phase to `to` if the table allows it; returns the transition record.

    Raises `invalid_phase` (exit 2) naming the legal commands otherwise.
    """
    current = state["phase"]
    if to not in TRANSITIONS.get(current, {}):
        raise refuse(state, command)
    if trigger not in TRIGGERS:
        raise ValueError(f"unknown trigger {trigger!r}")
    now = clock.iso()
    record = {
        "from_phase": current,
        "to_phase": to,
        "timestamp": now,
        "trigger": trigger,
        "metadata": {"command": command, **metadata},
    }
    state["phase"] = to
    state["updated_at"] = now
    state["transitions"].append(record)
    return record
