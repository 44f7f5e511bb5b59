"""The phase pointer and phase-advance: `current_phase` is the phase being worked on (0 before
the first build). `advance` is the only code that moves it forward: to the next phase in plan
order, and only when the phase it leaves is completed (phase 0 counts as completed). `rewind`
moves it back when plan-load replaces the plan. A phase is built only when every phase before it
is completed, so no sequence of commands skips a phase or has two phases in progress.
"""

from __future__ import annotations

import functools

from aether.core.exceptions import state_error
from aether.core.vocabulary import DONE_STATUSES  # tasks that let a phase complete; phases the colony moves past
from aether.rules import lifecycle, modes
from aether.rules import plans as plans_rules
from aether.state import events, pheromones, store
from aether.steps import completion


def phase_focus(pheromone_data: dict, phase: dict) -> dict:
    """The FOCUS signal a phase gets when the colony enters it (modes that auto-emit FOCUS)."""
    text = f"Phase {phase['id']}: {phase.get('name')}"
    if phase.get("description"):
        text += f" — {phase['description']}"
    return pheromones.auto_signal(pheromone_data, "FOCUS", text, "auto:phase")


def _index(items: list, phase_id: int):
    for i, phase in enumerate(items):
        if phase.get("id") == phase_id:
            return i
    return None


def _next_open(items: list, after: int | None) -> dict | None:
    """The first phase not completed after index `after` (from the start when None)."""
    start = 0 if after is None else after + 1
    return next((p for p in items[start:] if p.get("status") not in DONE_STATUSES), None)


def _build_hint(phase: dict) -> str:
    pid = phase.get("id")
    if phase.get("status") in ("failed", "in_progress"):
        return f"/ant:build {pid} --resume (`aether next --build {pid} --resume`)"
    return f"/ant:build {pid} (`aether next --build {pid}`)"


def advance(colony: dict, plan: dict) -> dict | None:
    """Move current_phase to the next phase not yet completed; the phase left must be completed.
    Past the last phase the colony becomes COMPLETED (current_phase keeps the last id).
    Returns the phase entered, or None when the colony completed."""
    items = plans_rules.require_plan(plan)
    current = colony.get("current_phase") or 0
    index = None
    if current:
        index = _index(items, current)
        if index is None:
            raise state_error("phase_missing", f"current phase {current} is not in the plan; plan again with /ant:plan --force")
        phase = items[index]
        if phase.get("status") not in DONE_STATUSES:
            raise state_error(
                "phase_not_completed",
                f"phase {current} ({phase.get('name')}) is {phase.get('status') or 'pending'}, not "
                f"completed; build it first: {_build_hint(phase)}",
                phase=current,
                status=phase.get("status"),
            )
    nxt = _next_open(items, index)
    if nxt is None:
        colony["state"] = "COMPLETED"
        return None
    colony["current_phase"] = nxt["id"]
    return nxt


def rewind(colony: dict, plan: dict) -> None:
    """After a plan replacement: keep current_phase when its phase is still there and completed,
    else go back to the last phase of the plan's leading run of completed phases (0 if none)."""
    items = plans_rules.phases(plan)
    current = colony.get("current_phase") or 0
    index = _index(items, current) if current else None
    if index is not None and items[index].get("status") in DONE_STATUSES:
        return
    last = 0
    for phase in items:
        if phase.get("status") not in DONE_STATUSES:
            break
        last = phase["id"]
    colony["current_phase"] = last


# not @store.writes: the files it locks depend on the call (pheromones with a FOCUS signal)
def _advance_phase(files, focus: bool) -> dict:
    """Leave the completed current phase for the next (FOCUS on it when `focus`), or complete the colony."""
    colony, plan = files["colony"], files["plan"]
    lifecycle.require_transition(colony, "READY", "phase-advance")
    before = colony.get("current_phase") or 0
    entered = advance(colony, plan)
    if entered is None:
        events.append(
            files["events"], "colony_completed", "queen", f"Colony completed: every phase of the plan is done (goal: {colony.get('goal')})"
        )
        return {"from": before, "to": None, "state": colony["state"], "phase": None, "signal": None}
    events.append(files["events"], "phase_advanced", "queen", f"Phase {entered['id']} entered: {entered.get('name')}")
    signal = phase_focus(files["pheromones"], entered) if focus else None
    return {
        "from": before,
        "to": entered["id"],
        "state": colony["state"],
        "phase": {k: entered.get(k) for k in ("id", "name", "description", "success_criteria")},
        "signal": signal,
    }


def phase_advance() -> dict:
    """phase-advance: leave the completed current phase for the next (or complete the colony)."""

    mode = store.read("colony").get("mode")
    focus = "FOCUS" in modes.profile(mode)["auto_signals"]
    names = ["colony", "plan", "events"] + (["pheromones"] if focus else [])

    out = store.update_many(names, functools.partial(_advance_phase, focus=focus))
    signal = out.pop("signal")
    out["signals_emitted"] = [signal] if signal else []
    if out["to"] is None:
        out["next"] = {
            "slash": "/ant:init",
            "command": "aether colony-init",
            "reason": "the colony is complete; start a new goal (or /ant:plan to extend this one)",
        }
        summary = completion.summary()
        out["summary"] = {k: v for k, v in summary.items() if k != "text"}
        out["text"] = "Every phase is completed: the colony is COMPLETED.\n\n" + summary["text"]
    else:
        out["next"] = {
            "slash": f"/ant:build {out['to']}",
            "command": f"aether next --build {out['to']}",
            "reason": f"build phase {out['to']}",
        }
        out["text"] = f"Phase {out['to']}: {out['phase']['name']} is next. Run /ant:build {out['to']}."
    return out
