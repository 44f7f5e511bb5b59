"""The colony's lifecycle: the states of COLONY_STATE `state` and the commands that move between them."""

from __future__ import annotations

from aether.core.exceptions import input_error, state_error
from aether.rules import plans

# state → {command: the states it may lead to}. `build-start --resume` is the way back into a
# build interrupted by a crash or /clear; `phase-advance` past the last phase completes the colony.
TRANSITIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "IDLE": {"colony-init": ("READY",)},
    "READY": {
        "plan-start": ("PLANNING",),
        "plan-load": ("READY",),
        "build-start": ("EXECUTING",),
        "phase-advance": ("READY", "COMPLETED"),
    },
    "PLANNING": {"plan-start": ("PLANNING",), "plan-load": ("READY",)},
    "EXECUTING": {
        "build-finish": ("READY",),
        "build-abort": ("READY",),
        "build-start --resume": ("EXECUTING",),
    },
    "COMPLETED": {"plan-start": ("PLANNING",), "plan-load": ("READY",), "colony-init": ("READY",)},
}


# A colony in one of these states is "active": colony-init refuses to clobber it without --force.
ACTIVE_STATES = ("READY", "PLANNING", "EXECUTING")


def _way_to(current: str, command: str) -> list:
    """The shortest list of commands that leads from `current` to a state where `command` runs."""
    seen = {current}
    queue: list[tuple[str, list[str]]] = [(current, [])]
    while queue:
        state, path = queue.pop(0)
        if command in TRANSITIONS.get(state, {}):
            return path
        for step, targets in TRANSITIONS.get(state, {}).items():
            for target in targets:
                if target not in seen:
                    seen.add(target)
                    queue.append((target, path + [step]))
    return []


def require_transition(colony: dict, target: str, command: str) -> None:
    """Raise `invalid_transition` unless `command` may move the colony to `target` now.

    The message names the current state and the command(s) that would make `command` legal.
    """
    current = colony.get("state", "IDLE")
    legal = TRANSITIONS.get(current, {})
    if target in legal.get(command, ()):
        return
    if current == "IDLE":
        hint = "start a colony first: `aether colony-init` (/ant:init)"
    else:
        way = _way_to(current, command)
        moves = ", ".join(f"`{cmd}`" for cmd in legal) or "none"
        hint = f"run `aether {way[0]}` first" if way else f"`{command}` is not possible from {current}"
        hint += f" (legal now: {moves})"
    raise state_error(
        "invalid_transition",
        f"`{command}` cannot run while the colony is {current}; {hint}",
        state=current,
        legal=sorted(legal),
    )


def require_building(colony: dict, phase_id: int, command: str) -> None:
    """Commands that act inside a running build: the colony is EXECUTING phase_id."""
    check_phase_id(phase_id)
    state = colony.get("state") or "IDLE"
    if state != "EXECUTING":
        raise state_error(
            "not_building",
            f"`{command}` needs a running build, but the colony is {state}; start one with /ant:build N (`aether next --build N`)",
            state=state,
        )
    current = colony.get("current_phase")
    if phase_id != current:
        raise input_error(
            "phase_mismatch", f"the running build is phase {current}, not {phase_id}; use `aether {command} {current}`", running=current
        )


def check_phase_id(phase_id) -> None:
    if isinstance(phase_id, bool) or not isinstance(phase_id, int) or phase_id < 1:
        raise input_error("invalid_argument", f"a phase is a whole number ≥ 1, got {phase_id!r}")


def _step(slash: str, command: str, reason: str) -> dict:
    return {"slash": slash, "command": command, "reason": reason}


def next_step(colony: dict, plan: dict) -> dict:
    """What the user should run next: {slash, command, reason}."""
    state = colony.get("state") or "IDLE"
    current = colony.get("current_phase") or 0
    if state == "IDLE":
        return _step('/ant:init "<goal>"', "aether colony-init -", "no colony here yet: start one with its goal")
    if state == "PLANNING":
        return _step("/ant:plan", "aether next --plan", "planning is under way: finish it")
    if state == "EXECUTING":
        return _step(
            f"/ant:build {current}",
            f"aether next --build {current}",
            f"phase {current} is being built; if that build was interrupted, resume it "
            f"(or give it up: aether build-abort {current} --reason -)",
        )
    if state == "COMPLETED":
        return _step(
            '/ant:init "<goal>"', "aether colony-init -", "every phase is completed; start a new goal (or /ant:plan to extend this one)"
        )
    return _next_in_plan(plans.phases(plan), plan, current)


def _next_in_plan(items: list, plan: dict, current: int) -> dict:
    """next_step for a READY colony: build, rebuild, continue, or plan."""
    if not items:
        return _step("/ant:plan", "aether next --plan", "the colony has no plan yet (steer it first with /ant:focus or /ant:redirect)")
    if current == 0:
        first = next((p for p in items if p.get("status") != "completed"), items[0])
        return _step(
            f"/ant:build {first.get('id')}",
            f"aether next --build {first.get('id')}",
            f"start with phase {first.get('id')}: {first.get('name')}",
        )
    phase = plans.find_phase(plan, current)
    if phase is None:
        return _step("/ant:plan --force", "aether next --plan --force", f"current phase {current} is not in the plan; plan again")
    status = phase.get("status") or "pending"
    if status == "completed":
        nxt = next((p for p in items[items.index(phase) + 1 :] if p.get("status") != "completed"), None)
        reason = (
            f"phase {current} is completed; advance to phase {nxt.get('id')}: {nxt.get('name')}"
            if nxt
            else f"phase {current}, the last, is completed; advancing completes the colony"
        )
        return _step("/ant:continue", "aether next --continue", reason)
    if status in ("failed", "in_progress"):
        return _step(f"/ant:build {current}", f"aether next --build {current}", f"phase {current} is {status}: rebuild what is not done")
    return _step(f"/ant:build {current}", f"aether next --build {current}", f"build phase {current}: {phase.get('name')}")


def refuse_while_executing(colony: dict, command: str, then: str = "") -> None:
    """Raise `colony_executing` when a build is running: `command` waits for it to end."""
    if colony.get("state") != "EXECUTING":
        return
    cur = colony.get("current_phase")
    raise state_error(
        "colony_executing",
        f"a build of phase {cur} is running; `{command}` runs after it: finish it (/ant:build {cur}) "
        f"or abort it (`aether build-abort {cur} --reason -`){', then ' + then if then else ''}",
        state="EXECUTING",
    )
