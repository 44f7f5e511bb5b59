"""The words state files use: modes, colony states, task and phase statuses, spawn roles and statuses."""

from __future__ import annotations

MODES = ("LIGHTWEIGHT", "STANDARD", "FULL")


COLONY_STATES = ("IDLE", "READY", "PLANNING", "EXECUTING", "COMPLETED")


STATUSES = ("pending", "in_progress", "completed", "failed", "skipped")  # PROJECT_PLAN phases and tasks


DONE_STATUSES = ("completed", "skipped")  # a task or phase that is settled: its phase completes, the colony moves past


SPAWN_ROLES = ("worker", "retry", "debugger", "sub_spawn", "rerun", "rebuild", "reviewer", "refine", "verify")


SPAWN_STATUSES = ("planned", "running", "completed", "failed", "skipped")


SPAWN_FINISHED = ("completed", "failed", "skipped")


NO_CODE_ROLES = ("reviewer", "verify")  # spawns that check code and write none


# Tree statuses: awaiting_approval → approved → running → finished (build-finish); `aborted`
# by build-abort or an abort_phase decision.
TREE_STATUSES = ("awaiting_approval", "approved", "running", "finished", "aborted")


FAILURE_ACTIONS = ("retry", "debug", "flag", "skip", "abort_wave", "abort_phase")


LOOP_STATUSES = ("active", "awaiting_user", "complete")
