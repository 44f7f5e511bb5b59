"""The colony's lifecycle: COLONY_STATE `state`, its legal transitions, and colony-init."""

from __future__ import annotations

from aether import clock, events, inputs, paths, store
from aether.errors import input_error, state_error
from aether.modes import DEFAULT_MODE, PROFILES
from aether.pheromones import MAX_CONTENT_LENGTH

# state → {command: the states it may lead to}. `build-start --resume` is the way back into a
# build interrupted by a crash or /clear; `phase-advance` past the last phase completes the colony.
TRANSITIONS = {
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
    seen, queue = {current}, [(current, [])]
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
        hint = (f"run `aether {way[0]}` first" if way else f"`{command}` is not possible from {current}")
        hint += f" (legal now: {moves})"
    raise state_error(
        "invalid_transition",
        f"`{command}` cannot run while the colony is {current}; {hint}",
        state=current,
        legal=sorted(legal),
    )


def new_session_id() -> str:
    return f"session_{int(clock.now())}_{clock.hex_bits(3)}"


def init(goal: str, mode: str | None = None, force: bool = False, mode_indicators: dict | None = None,
         detect: bool = False) -> dict:
    """colony-init: create every project state file for a new colony with this goal.

    detect: choose the mode by complexity detection (instead of STANDARD). Promoted global
    learnings become FEEDBACK signals (see `learning.for_init`)."""
    goal = inputs.require_text(goal.strip(), "the goal", MAX_CONTENT_LENGTH, code="invalid_goal")
    if mode is not None and mode not in PROFILES:
        raise input_error("invalid_mode", f"unknown mode {mode!r}; use one of {', '.join(PROFILES)}")
    from aether import learning

    detection = None
    if detect:
        if mode is not None:
            raise input_error("invalid_argument",
                              "--mode and --detect exclude each other; give one of them")
        from aether import complexity

        detection = complexity.detect(paths.project_root(), goal)
        mode, mode_indicators = detection["mode"], detection["signals"]
    global_learnings, learnings_warning = learning.for_init()
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
        taken = {s["id"] for s in files["pheromones"]["signals"]}
        for entry in global_learnings:
            files["pheromones"]["signals"].append(learning.feedback_signal(entry, now, taken))
        if detection is not None:
            from aether import memory

            memory.append_decision(files["memory"], f"Colony mode {detection['mode']} chosen by complexity detection",
                                   type="mode", context="; ".join(detection["reasons"]) or None, phase=0)
        events.append(files["events"], "colony_initialized", "queen", f"Colony initialized: {goal}")
        extra = {"global_learnings_injected": len(global_learnings)}
        if detection is not None:
            extra["complexity"] = detection
        if learnings_warning:
            extra["warnings"] = [learnings_warning]
        return {
            "goal": goal,
            "state": "READY",
            "mode": colony["mode"],
            "session_id": colony["session_id"],
            "project_id": colony["project_id"],
            "data_dir": paths.data_dir(),
            **extra,
        }

    result = store.update_many(names, change)
    events.ensure_activity_log()  # an empty activity.log: readers find it from the start
    return result
