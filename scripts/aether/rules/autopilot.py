"""The autopilot's order and stop rules: `/ant:run` builds phase after phase (pure).

`next_run_step(view)` answers the run's next step from a view of the colony and the run record
(colony/autopilot.py builds it). Steps: `continue` (the phase is done: what /ant:continue does —
its lessons when due, the archivist, phase-advance — colony/continue_drive.py decides), `skip`
(a phase before the run's range: phase-skip), `build` (go on with the phase's build — its own
next step decides what). Ends: `done` (COMPLETED, or the
range or phase count reached) and `stop` (a reason the user must act on). Stops that come from
inside a build — the wave plan's approval, a code loop's question, abort_phase, the spend cap —
are decided by the build and the cap (rules/drive.py, rules/spend.py); this module words them.
"""

from __future__ import annotations

from aether.core.exceptions import input_error, state_error
from aether.core.vocabulary import DONE_STATUSES

# why → what the stop tells the user first (the run's stop text adds what was done and spent)
STOP_REASONS = {
    "approval": "the wave plan needs your approval",
    "code_loop": "the code loop asks you how to go on",
    "unverified": "checks no run proved (two watchers) wait for your word",
    "abort_phase": "the failure protocol aborted the phase",
    "phase_failed": "the phase's build ended with failed tasks",
    "budget": "the spend cap",
    "user": "you asked it to stop",
    "lead_refused": "the Phase Lead's plan was refused twice",
    "blocked": "spawns wait for spawns that will not run",
    "no_plan": "the colony has no plan to build",
    "limit": "a usage or rate limit held the ants (nothing failed)",
    "api_refused": "the API refused the account Claude Code uses (nothing failed)",
    "failed_calls": "an ant's Agent call failed again and again",
    "deadline": "an ant was stopped twice before it answered (its deadline, or Claude Code stopped it)",
    "refused": "Claude Code refused to start an ant",
}
END_REASONS = {
    "completed": "the colony is COMPLETED",
    "range": "the last phase of the run's range is done",
    "max_phases": "the run built as many phases as it was allowed",
    "superseded": "another command took over",
}


def open_phases(phases: list) -> list:
    return [p["id"] for p in phases if p.get("status") not in DONE_STATUSES]


def check_range(phases: list, start: int | None, end: int | None, only: int | None, max_phases: int | None) -> dict:
    """The run's range from its options, checked against the plan: {from, to, max_phases, only}."""
    ids = [p["id"] for p in phases]
    if not ids:
        raise state_error("no_plan", "the colony has no plan: run /ant:plan first")
    if only is not None and (start is not None or end is not None):
        raise input_error("usage_error", "--only N builds one phase: give it without --from and --to")
    if only is not None:
        start = end = only
    for name, value in (("--from", start), ("--to", end), ("--only", only)):
        if value is not None and value not in ids:
            raise input_error("unknown_phase", f"{name} {value}: the plan's phases are {ids[0]}–{ids[-1]}")
    first_open = next(iter(open_phases(phases)), None)
    start = start if start is not None else (first_open or ids[-1])
    end = end if end is not None else ids[-1]
    if ids.index(end) < ids.index(start):
        raise input_error("usage_error", f"--to {end} comes before --from {start}")
    if max_phases is not None and max_phases < 1:
        raise input_error("usage_error", "--max-phases must be at least 1")
    return {"from": start, "to": end, "max_phases": max_phases, "only": only is not None}


def _after(ids: list, a: int, b: int) -> bool:
    return ids.index(a) > ids.index(b)


def next_run_step(view: dict) -> dict:
    """The run's next step. view: {state, current, phases: [{id, status}], range, built,
    failed_here, building, unfinished (a phase whose finished build still asks for its lessons)}.
    (A stop the user asked for is the spend guard's: it holds the next spawn action, so the
    helper's own steps before it still run.)"""
    state = view.get("state")
    if state == "COMPLETED":
        return {"do": "done", "why": "completed"}
    if state == "EXECUTING":
        return {"do": "build", "phase": view["building"]}
    if state != "READY":
        return {"do": "stop", "why": "no_plan"}
    phases = view.get("phases") or []
    ids = [p["id"] for p in phases]
    status = {p["id"]: p.get("status") for p in phases}
    current = view.get("current") or 0
    if current and status.get(current) in DONE_STATUSES:
        if view.get("unfinished") == current:
            return {"do": "build", "phase": current}
        return {"do": "continue", "phase": current}
    todo = open_phases(phases)
    if not todo:
        return {"do": "continue", "phase": current}
    target = todo[0]
    rng = view.get("range") or {}
    if rng.get("to") in ids and _after(ids, target, rng["to"]):
        return {"do": "done", "why": "range"}
    built = view.get("built") or []
    if rng.get("max_phases") and len(built) >= rng["max_phases"]:
        return {"do": "done", "why": "max_phases"}
    if target in (view.get("failed_here") or []):
        return {"do": "stop", "why": "phase_failed", "phase": target}
    if rng.get("from") in ids and _after(ids, rng["from"], target):
        return {"do": "skip", "phase": target}
    return {"do": "build", "phase": target}
