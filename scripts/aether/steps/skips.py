"""task-skip and phase-skip: a task or a phase the user gives up on, so the colony can go on
(refused on a success criterion's path; docs/decisions/failure-ladder.md)."""

from __future__ import annotations

from aether.core import clock, inputs
from aether.core.exceptions import input_error, state_error
from aether.core.text import one_line
from aether.core.vocabulary import DONE_STATUSES
from aether.rules import lifecycle
from aether.rules import plans as plans_rules
from aether.state import events, store
from aether.steps import phase_advance
from aether.steps.recovery import phase_blockers, task_blockers


@store.writes("colony", "plan", "events")
def _skip_task(files, task_id: str, reason: str, force: bool) -> dict:
    """Mark the task skipped unless a success criterion needs it (`force` overrides) and log it."""
    colony, plan = files["colony"], files["plan"]
    _not_ready(colony, "task-skip")
    plans_rules.require_plan(plan)
    phase = task = None
    for item in plans_rules.phases(plan):
        task = next((t for t in item.get("tasks") or [] if isinstance(t, dict) and str(t.get("id")) == task_id), None)
        if task is not None:
            phase = item
            break
    if task is None or phase is None:  # found together: both or neither
        raise input_error("unknown_task", f"no task {task_id!r} in the plan; `aether phase list` shows the phases")
    if phase.get("status") in DONE_STATUSES:
        raise state_error("phase_completed", f"phase {phase['id']} is {phase['status']}: its tasks are settled")
    if task.get("status") == "completed":
        raise state_error("task_completed", f"task {task_id} is completed; nothing to skip")
    already = task.get("status") == "skipped"
    blockers = task_blockers(plan, task)
    if blockers and not force and not already:
        raise state_error(
            "task_required",
            f"task {task_id} cannot be skipped: {'; '.join(blockers)}; pass --force to skip it anyway, or re-plan with /ant:plan",
            reasons=blockers,
        )
    if not already:
        task["status"] = "skipped"
        task["skipped"] = {"reason": reason, "at": clock.iso(), "forced": bool(blockers)}
        events.append(
            files["events"],
            "task_skipped",
            "queen",
            f"task {task_id} skipped" + (" (forced)" if blockers else "") + f": {one_line(reason, 300)}",
        )
    remaining = [t.get("id") for t in phase.get("tasks") or [] if isinstance(t, dict) and t.get("status") not in DONE_STATUSES]
    pid = phase["id"]
    nxt = {
        "slash": f"/ant:build {pid}",
        "command": f"aether next --build {pid}",
        "reason": (
            f"build the remaining task(s) {', '.join(map(str, remaining))}"
            if remaining
            else "no task is left: the build only verifies the phase, then it completes"
        ),
    }
    return {
        "task": task_id,
        "phase": pid,
        "status": "skipped",
        "reason": reason,
        "already_skipped": already,
        "forced": bool(blockers) and not already,
        "overridden": blockers if force else [],
        "remaining": remaining,
        "next": nxt,
        "text": f"Task {task_id} (phase {pid}) skipped: {one_line(reason, 200)}\nNext: {nxt['slash']} — {nxt['reason']}",
    }


def task_skip(task_id: str, reason: str, force: bool = False) -> dict:
    """task-skip: mark a task skipped so its phase can finish without it."""
    reason = _reason(reason)
    task_id = task_id.strip()

    return _skip_task(task_id, reason, force)


@store.writes("colony", "plan", "events")
def _skip_phase(files, phase_id: int, reason: str) -> dict:
    """Skip the phase next in line (with its open tasks) and advance past it."""
    colony, plan = files["colony"], files["plan"]
    _not_ready(colony, "phase-skip")
    items = plans_rules.require_plan(plan)
    phase = plans_rules.require_phase(plan, phase_id)
    if phase.get("status") in DONE_STATUSES:
        raise state_error("phase_completed", f"phase {phase_id} is already {phase['status']}")
    current = colony.get("current_phase") or 0
    expected = current if current and (plans_rules.find_phase(plan, current) or {}).get("status") not in DONE_STATUSES else None
    if expected is None:
        expected = next((p.get("id") for p in items if p.get("status") not in DONE_STATUSES), None)
    if phase_id != expected:
        raise state_error("phase_out_of_order", f"phase {expected} is next in line; only it can be skipped now", expected=expected)
    blockers = phase_blockers(plan, phase)
    if blockers:
        raise state_error(
            "phase_required",
            f"phase {phase_id} ({phase.get('name')}) is on a success criterion's "
            f"path: {'; '.join(blockers)}; rebuild it (/ant:build {phase_id}) or "
            f"re-plan with /ant:plan",
            reasons=blockers,
        )
    skipped = []
    for task in phase.get("tasks") or []:
        if isinstance(task, dict) and task.get("status") not in DONE_STATUSES:
            task["status"] = "skipped"
            skipped.append(task.get("id"))
    phase["status"] = "skipped"
    phase["skipped"] = {"reason": reason, "at": clock.iso()}
    events.append(files["events"], "phase_skipped", "queen", f"phase {phase_id} skipped: {one_line(reason, 300)}")
    entered = phase_advance.advance(colony, plan)  # past the skipped phase: it is done now
    if entered is None:
        events.append(
            files["events"],
            "colony_completed",
            "queen",
            f"Colony completed: every phase of the plan is done or skipped (goal: {colony.get('goal')})",
        )
    return {
        "phase": phase_id,
        "name": phase.get("name"),
        "status": "skipped",
        "reason": reason,
        "skipped_tasks": skipped,
        "to": entered["id"] if entered else None,
        "state": colony["state"],
    }


def phase_skip(phase_id: int, reason: str) -> dict:
    """phase-skip: skip the phase next in line and move to the one after it (the colony completes
    when it was the last). Only for a phase off every success criterion's path."""

    reason = _reason(reason)

    out = _skip_phase(phase_id, reason)
    if out["to"] is None:
        out["next"] = {
            "slash": "/ant:continue",
            "command": "aether completion-summary",
            "reason": "that was the last phase: the colony is COMPLETED",
        }
    else:
        out["next"] = {
            "slash": f"/ant:build {out['to']}",
            "command": f"aether next --build {out['to']}",
            "reason": f"build phase {out['to']}",
        }
    out["text"] = (
        f"Phase {phase_id} ({out['name']}) skipped: {one_line(reason, 200)}\nNext: {out['next']['slash']} — {out['next']['reason']}"
    )
    return out


MAX_REASON_LENGTH = 4000


def _reason(reason: str) -> str:
    return inputs.require_text(
        reason, "the reason", MAX_REASON_LENGTH, code="invalid_reason", empty="say why (the reason is empty)"
    ).strip()


def _not_ready(colony: dict, command: str) -> None:
    state = colony.get("state")
    lifecycle.refuse_while_executing(colony, command)
    if state not in ("READY",):
        raise state_error(
            "invalid_transition", f"`{command}` needs a READY colony with a plan (the colony is {state})", state=state, legal=[]
        )
