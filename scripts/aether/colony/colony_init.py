"""colony-init: a new colony's state files, its session id, its mode and the promoted learnings it starts with."""

from __future__ import annotations

from aether.colony import complexity
from aether.core import clock, inputs, paths
from aether.core.exceptions import AetherError, input_error, state_error
from aether.rules.lifecycle import ACTIVE_STATES
from aether.rules.modes import DEFAULT_MODE, PROFILES
from aether.rules.pheromones import MAX_CONTENT_LENGTH
from aether.state import checkpoints, events, learning, memory, store


def new_session_id() -> str:
    return f"session_{int(clock.now())}_{clock.hex_bits(3)}"


# The files colony-init rewrites, in replace order (memory is kept, not reset).
_INIT_FILES = ("colony", "pheromones", "plan", "errors", "memory", "events")


@store.writes(*_INIT_FILES)
def _start_colony(files, goal, mode, force, mode_indicators, detection, global_learnings, learnings_warning):
    """Reset the colony's files to their defaults for GOAL, seeded with INIT and promoted-learning signals."""
    old = files["colony"]
    if old.get("state") in ACTIVE_STATES and not force:
        raise state_error(
            "colony_exists",
            f"a colony is already {old['state']} here (goal: {old.get('goal')!r}); "
            f"pass --force to start over (the old files stay in .aether/data/.backups)",
            state=old["state"],
        )
    now = clock.iso()
    for name in _INIT_FILES:
        if name != "memory":  # learnings and decisions outlive a colony
            files[name].clear()
            files[name].update(store.spec_for(name).default())
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
    files["pheromones"]["signals"].append(
        {
            "id": clock.new_id("init"),
            "type": "INIT",
            "content": goal,
            "strength": 1.0,
            "half_life_seconds": None,
            "created_at": now,
            "source": "queen",
            "auto": True,
        }
    )
    taken = {s["id"] for s in files["pheromones"]["signals"]}
    for entry in global_learnings:
        files["pheromones"]["signals"].append(learning.feedback_signal(entry, now, taken))
    if detection is not None:
        memory.append_decision(
            files["memory"],
            f"Colony mode {detection['mode']} chosen by complexity detection",
            type="mode",
            context="; ".join(detection["reasons"]) or None,
            phase=0,
        )
    events.append(files["events"], "colony_initialized", "queen", f"Colony initialized: {goal}")
    extra: dict = {"global_learnings_injected": len(global_learnings)}
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


def init(goal: str, mode: str | None = None, force: bool = False, mode_indicators: dict | None = None, detect: bool = False) -> dict:
    """colony-init: create every project state file for a new colony with this goal.

    detect: choose the mode by complexity detection (instead of STANDARD). Promoted global
    learnings become FEEDBACK signals (see `learning.for_init`)."""
    goal = inputs.require_text(goal.strip(), "the goal", MAX_CONTENT_LENGTH, code="invalid_goal")
    if mode is not None and mode not in PROFILES:
        raise input_error("invalid_mode", f"unknown mode {mode!r}; use one of {', '.join(PROFILES)}")

    detection = None
    if detect:
        if mode is not None:
            raise input_error("invalid_argument", "--mode and --detect exclude each other; give one of them")

        detection = complexity.detect(paths.project_root(), goal)
        mode, mode_indicators = detection["mode"], detection["signals"]
    global_learnings, learnings_warning = learning.for_init()
    result = _start_colony(goal, mode, force, mode_indicators, detection, global_learnings, learnings_warning)
    events.ensure_activity_log()  # an empty activity.log: readers find it from the start
    try:  # in git: the colony's files stay out of the user's git stash -u, clean -fd, add -A
        excluded = checkpoints.exclude_colony()
    except AetherError as exc:
        excluded = exc.message
    if excluded:
        result.setdefault("warnings", []).append(f"the colony's files are not kept out of git stash -u and git clean: {excluded}")
    return result
