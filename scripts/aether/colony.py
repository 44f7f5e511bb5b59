"""The colony's lifecycle: COLONY_STATE `state`, its legal transitions, and colony-init."""

from __future__ import annotations

from aether import clock, events, paths, store
from aether.errors import input_error, state_error
from aether.modes import DEFAULT_MODE, PROFILES
from aether.pheromones import MAX_CONTENT_LENGTH

# state → {target state: the command that makes that move}
TRANSITIONS = {
    "IDLE": {"READY": "colony-init"},
    "READY": {"PLANNING": "plan-start", "EXECUTING": "build-start", "COMPLETED": "phase-advance"},
    "PLANNING": {"READY": "plan-load"},
    "EXECUTING": {"READY": "build-finish"},
    "COMPLETED": {},
}
# A colony in one of these states is "active": colony-init refuses to clobber it without --force.
ACTIVE_STATES = ("READY", "PLANNING", "EXECUTING")


def require_transition(colony: dict, target: str, command: str) -> None:
    """Raise `invalid_transition` unless `command` may move the colony to `target` now."""
    current = colony.get("state", "IDLE")
    legal = TRANSITIONS.get(current, {})
    if legal.get(target) == command:
        return
    if current == "IDLE":
        hint = "start a colony first: `aether colony-init` (/ant:init)"
    else:
        moves = ", ".join(f"`{cmd}` → {state}" for state, cmd in legal.items()) or "none"
        hint = f"legal from {current}: {moves}"
    raise state_error(
        "invalid_transition",
        f"`{command}` cannot run while the colony is {current}; {hint}",
        state=current,
        legal=sorted(set(legal.values())),
    )


def new_session_id() -> str:
    return f"session_{int(clock.now())}_{clock.hex_bits(3)}"


def init(goal: str, mode: str | None = None, force: bool = False, mode_indicators: dict | None = None) -> dict:
    """colony-init: create every project state file for a new colony with this goal."""
    goal = goal.strip()
    if not goal:
        raise input_error("invalid_goal", "the goal is empty")
    if len(goal) > MAX_CONTENT_LENGTH:
        raise input_error("content_too_long",
                          f"the goal is {len(goal)} characters; the limit is {MAX_CONTENT_LENGTH}")
    if mode is not None and mode not in PROFILES:
        raise input_error("invalid_mode", f"unknown mode {mode!r}; use one of {', '.join(PROFILES)}")
    names = ["colony", "pheromones", "plan", "errors", "memory", "events"]
    schemas_defaults = {name: store.spec_for(name).default for name in names}

    def change(files):
        old = files["colony"]
        if old.get("state") in ACTIVE_STATES and not force:
            raise state_error(
                "colony_exists",
                f"a colony is already {old['state']} here (goal: {old.get('goal')!r}); "
                f"pass --force to start over (the old files stay in .aether/data/.backups)",
                state=old["state"],
            )
        now = clock.iso()
        for name in names:
            if name != "memory":  # learnings and decisions outlive a colony
                files[name].clear()
                files[name].update(schemas_defaults[name]())
        colony = files["colony"]
        colony.update(
            goal=goal,
            state="READY",
            current_phase=0,
            mode=mode or DEFAULT_MODE,
            mode_set_at=now,
            mode_indicators=mode_indicators,
            session_id=new_session_id(),
            project_id=paths.project_id(),
            initialized_at=now,
        )
        files["plan"]["goal"] = goal
        files["pheromones"]["signals"].append({
            "id": clock.new_id("init"),
            "type": "INIT",
            "content": goal,
            "strength": 1.0,
            "half_life_seconds": None,
            "created_at": now,
            "source": "queen",
            "auto": True,
        })
        events.append(files["events"], "colony_initialized", "queen", f"Colony initialized: {goal}")
        return {
            "goal": goal,
            "state": "READY",
            "mode": colony["mode"],
            "session_id": colony["session_id"],
            "project_id": colony["project_id"],
            "data_dir": paths.data_dir(),
        }

    return store.update_many(names, change)
