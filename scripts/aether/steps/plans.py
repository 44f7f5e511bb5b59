"""PROJECT_PLAN: validation of a plan the planner produced, loading it, and plan look-ups.

A plan is `{goal, phases:[{id, name, description, tasks:[{id, description, depends_on,
maps_to_criterion}], success_criteria}]}`. Validation reports every defect at once as `{path, problem}` (e.g.
`phases[1].tasks[0].depends_on[0]`). Statuses are the colony's record of progress, so a
loaded plan starts all pending; replacing a plan with completed phases needs `force`, and
then keeps those phases (by id) as they were.
"""

from __future__ import annotations

from aether.core import inputs
from aether.core.exceptions import input_error, state_error
from aether.rules import lifecycle, modes
from aether.rules.plans import TASKS_PER_PHASE, defect_message, phases, validate
from aether.state import events, pheromones, store
from aether.steps import phase_advance, recovery

# ---------------------------------------------------------------- validation


# ---------------------------------------------------------------- look-ups


# ---------------------------------------------------------------- commands


@store.writes("colony", "events")
def _enter_planning(files) -> tuple[dict, bool]:
    """Move the colony to PLANNING (logged once); (colony, whether it was planning already)."""
    colony = files["colony"]
    lifecycle.require_transition(colony, "PLANNING", "plan-start")
    again = colony["state"] == "PLANNING"
    colony["state"] = "PLANNING"
    if not again:
        events.append(files["events"], "planning_started", "queen", "Planning started")
    return colony, again


def start() -> dict:
    """plan-start: READY/COMPLETED → PLANNING. Returns what the planner needs to know."""

    colony, again = _enter_planning()
    mode = colony.get("mode")
    profile = modes.profile(mode)
    plan = store.read("plan")
    block = pheromones.render(None)
    steering = [s for s in block["signals"] if s.get("type") in ("FOCUS", "REDIRECT")]
    existing = [{"id": p.get("id"), "name": p.get("name"), "status": p.get("status", "pending")} for p in phases(plan)]
    lo, hi = profile["phase_count"]
    result = {
        "state": "PLANNING",
        "resumed": again,
        "goal": colony.get("goal"),
        "mode": mode,
        "phase_count": [lo, hi],
        "tasks_per_phase": list(TASKS_PER_PHASE),
        "existing_phases": existing,
        "completed_phases": [p["id"] for p in existing if p["status"] == "completed"],
        "pheromones": block["text"],
        "suggest_signals": not steering,
    }

    frictions = recovery.friction_summary()
    result["friction"] = frictions["text"] or None  # recurring recoveries, for the planner's brief
    result["friction_recurring"] = len(frictions["recurring"])
    lines = [
        f"Planning: {colony.get('goal')}",
        f"Mode {mode}: aim for {lo}–{hi} phases of {TASKS_PER_PHASE[0]}–{TASKS_PER_PHASE[1]} tasks.",
        block["text"],
    ]
    if not steering:
        lines.append("No FOCUS or REDIRECT signal yet: consider /ant:focus or /ant:redirect before planning.")
    if result["friction"]:
        lines.append(result["friction"])
    if result["completed_phases"]:
        lines.append(
            "Completed phases are kept only with `plan-load --force` (same ids): " + ", ".join(map(str, result["completed_phases"]))
        )
    result["text"] = "\n".join(lines)
    return result


def _merge_completed(old: dict, new: dict) -> list:
    """Carry completed phases of the stored plan into the new one (same id, content as stored)."""
    done = {p.get("id"): p for p in phases(old) if p.get("status") == "completed"}
    kept = []
    for index, phase in enumerate(new["phases"]):
        if phase["id"] in done:
            new["phases"][index] = done[phase["id"]]
            kept.append(phase["id"])
    return kept


@store.writes("colony", "plan", "events")
def _replace_plan(files, plan: dict, force: bool) -> dict:
    """Store the validated plan (keeping completed phases with `force`), rewind the phase, READY."""
    colony, old = files["colony"], files["plan"]
    lifecycle.require_transition(colony, "READY", "plan-load")
    completed = [p.get("id") for p in phases(old) if p.get("status") == "completed"]
    if completed and not force:
        raise state_error(
            "plan_has_progress",
            f"the stored plan has completed phases ({', '.join(map(str, completed))}); "
            f"`plan-load --force` replaces it and keeps completed phases whose id is in the new "
            f"plan (the old plan stays in .aether/data/.backups)",
            completed=completed,
        )
    new = dict(plan)
    new["phases"] = list(plan["phases"])
    if not new.get("goal"):
        new["goal"] = colony.get("goal")
    kept = _merge_completed(old, new) if force else []
    dropped = [pid for pid in completed if pid not in kept]
    phase_advance.rewind(colony, new)
    colony["state"] = "READY"
    old.clear()
    old.update(new)
    count = len(new["phases"])
    events.append(
        files["events"],
        "plan_loaded",
        "queen",
        f"Plan loaded: {count} phase{'s' if count != 1 else ''}" + (f" (kept completed: {', '.join(map(str, kept))})" if kept else ""),
    )
    return {
        "kept": kept,
        "dropped": dropped,
        "state": colony["state"],
        "current_phase": colony["current_phase"],
        "mode": colony.get("mode"),
        "next": lifecycle.next_step(colony, new),
    }


def load(text_or_data, force: bool = False) -> dict:
    """plan-load: validate a PROJECT_PLAN and store it (PLANNING/READY/COMPLETED → READY)."""

    if isinstance(text_or_data, str):
        data = inputs.parse_json(text_or_data, "the plan")
    else:
        data = text_or_data
    plan, defects, warnings = validate(data)
    if defects:
        raise input_error("invalid_plan", defect_message(defects), defects=defects)
    assert plan is not None  # validate returns no plan only with defects

    outcome = _replace_plan(plan, force)
    lo, hi = modes.profile(outcome["mode"])["phase_count"]
    count = len(plan["phases"])
    if not lo <= count <= hi:
        warnings.insert(
            0, f"{count} phase{'s' if count != 1 else ''} is outside the {outcome['mode'] or modes.DEFAULT_MODE} range of {lo}–{hi}"
        )
    tasks = sum(len(p["tasks"]) for p in plan["phases"])
    result = {
        "phases": count,
        "tasks": tasks,
        "state": outcome["state"],
        "current_phase": outcome["current_phase"],
        "kept_completed": outcome["kept"],
        "dropped_completed": outcome["dropped"],
        "warnings": warnings,
        "next": outcome["next"],
    }
    lines = [f"Plan stored: {count} phases, {tasks} tasks."]
    lines += [f"  warning: {w}" for w in warnings]
    lines.append(f"Next: {result['next']['slash']} — {result['next']['reason']}")
    result["text"] = "\n".join(lines)
    return result
