"""build-start: mark a pending phase in progress and the colony EXECUTING, with a git checkpoint
and, in FULL mode, a code loop bound to the build; and build-start --approve (the wave plan)."""

from __future__ import annotations

import functools

from aether.core.exceptions import AetherError, input_error, state_error
from aether.core.vocabulary import DONE_STATUSES  # tasks that let a phase complete; phases the colony moves past
from aether.rules import lifecycle, modes
from aether.rules import loops as loops_rules
from aether.rules import plans as plans_rules
from aether.rules.lifecycle import check_phase_id, require_building
from aether.state import checkpoints, events, pheromones, store
from aether.steps import loops, waves, worktrees
from aether.steps.phase_advance import _build_hint, _index, _next_open, advance, phase_focus


def _check_start(colony: dict, plan: dict, phase_id: int, resume: bool) -> None:

    current = colony.get("current_phase") or 0
    if colony.get("state") == "EXECUTING":
        if not resume:
            raise state_error(
                "invalid_transition",
                f"`build-start` cannot run while the colony is EXECUTING: a build of phase {current} "
                f"is already running: go on with it with /ant:build {current}, start it over with /ant:build "
                f"{current} --resume, or give it up with `aether build-abort {current} --reason -`",
                state="EXECUTING",
                legal=["build-abort", "build-finish", "build-start --resume"],
            )
        if phase_id != current:
            raise input_error(
                "phase_mismatch",
                f"the interrupted build is phase {current}; resume it with /ant:build {current} --resume or abort it",
                running=current,
            )
        return
    lifecycle.require_transition(colony, "EXECUTING", "build-start")
    items = plans_rules.require_plan(plan)
    phase = plans_rules.require_phase(plan, phase_id)
    status = phase.get("status") or "pending"
    name = phase.get("name")
    if status in DONE_STATUSES:
        nxt = _next_open(items, _index(items, phase_id))
        hint = (
            f"the next phase is {nxt['id']}: /ant:continue (`aether next --continue`), then /ant:build {nxt['id']}"
            if nxt
            else "every later phase is completed too"
        )
        raise state_error("phase_completed", f"phase {phase_id} ({name}) is already {status}; {hint}", phase=phase_id)
    if current == 0:
        first = _next_open(items, None)
        assert first is not None  # the requested phase itself is open
        if first is not phase:
            raise state_error(
                "phase_out_of_order",
                f"phase {first['id']} ({first.get('name')}) comes first: build it with /ant:build {first['id']}",
                expected=first["id"],
            )
    elif phase_id != current:
        cur = plans_rules.find_phase(plan, current) or {}
        if cur.get("status") in DONE_STATUSES:
            nxt = _next_open(items, _index(items, current))
            hint = (
                f"run /ant:continue (`aether next --continue`) to move on to phase {nxt['id']}"
                if nxt
                else "run /ant:continue (`aether next --continue`)"
            )
            raise state_error(
                "phase_out_of_order", f"phase {current} is completed and phase {phase_id} is not the next step; {hint}", expected=None
            )
        raise state_error(
            "phase_out_of_order",
            f"phase {current} ({cur.get('name')}) is {cur.get('status') or 'pending'} and comes "
            f"first: {_build_hint(cur) if cur else '/ant:build ' + str(current)}",
            expected=current,
        )
    elif status in ("failed", "in_progress") and not resume:
        raise state_error(
            "resume_required",
            f"phase {phase_id} ({name}) is {status} (an interrupted, aborted or failed build); "
            f"rebuild it with /ant:build {phase_id} --resume (`aether next --build {phase_id} --resume`)",
            phase=phase_id,
        )
    for before in items[: _index(items, phase_id)]:
        if before.get("status") not in DONE_STATUSES:
            raise state_error(
                "phase_out_of_order",
                f"phase {before.get('id')} ({before.get('name')}) is not completed yet; it comes first",
                expected=before.get("id"),
            )


# not @store.writes: the files it locks depend on the call (checkpoints, pheromones, loops)
def _start_build(files, phase_id: int, resume: bool, record: dict | None, focus: bool, want_loop: bool) -> dict:
    """Mark the phase in progress and the colony EXECUTING; keep the checkpoint, bind the code loop."""
    colony, plan = files["colony"], files["plan"]
    _check_start(colony, plan, phase_id, resume)
    entered = advance(colony, plan) if not colony.get("current_phase") else None
    phase = plans_rules.require_phase(plan, phase_id)
    previous = phase.get("status") or "pending"
    phase["status"] = "in_progress"
    for task in phase.get("tasks") or []:
        if isinstance(task, dict) and task.get("status") not in DONE_STATUSES:
            task["status"] = "pending"
    was_running = colony.get("state") == "EXECUTING"
    colony["state"] = "EXECUTING"
    colony["spawn_tree"] = None
    resumed = previous != "pending" or was_running
    events.append(
        files["events"],
        "build_resumed" if resumed else "build_started",
        "queen",
        f"Phase {phase_id} {'resumed' if resumed else 'started'}: {phase.get('name')}",
    )
    dropped = checkpoints.remember(files["checkpoints"], record) if record else []
    signal = phase_focus(files["pheromones"], phase) if focus and entered else None
    code_loop = None
    if want_loop:
        session = colony.get("session_id")
        bound = next(
            (
                l
                for l in reversed(files["loops"]["loops"])
                if l.get("type") == "code"
                and l.get("phase") == phase_id
                and l.get("status") != "complete"
                and l.get("session_id") == session
            ),
            None,
        )
        reused = bound is not None
        if bound is None:
            bound = loops.new_loop(files["loops"], "code", loops_rules.THRESHOLDS["code"], phase_id, session)
            events.append(files["events"], "loop_started", "queen", f"code loop {bound['id']} bound to the build of phase {phase_id}")
        code_loop = {
            "loop_id": bound["id"],
            "threshold": bound["threshold"],
            "status": bound["status"],
            "iterations": len(bound["iterations"]),
            "reused": reused,
        }
    items = plans_rules.phases(plan)
    return {
        "phase": phase,
        "resumed": resumed,
        "previous_status": previous,
        "mode": colony.get("mode"),
        "dropped": dropped,
        "signal": signal,
        "code_loop": code_loop,
        "last": bool(items) and items[-1].get("id") == phase_id,
    }


def start(phase_id: int, resume: bool = False, loop: bool = False) -> dict:
    """build-start: mark the phase in progress, EXECUTING, checkpoint, and hand back its work.
    In FULL mode (or with `loop`) a code loop is bound to the build (reused when one of this
    phase is still open)."""

    check_phase_id(phase_id)
    colony = store.read("colony")
    plan = store.read("plan")
    _check_start(colony, plan, phase_id, resume)  # refuse before making a checkpoint
    profile = modes.profile(colony.get("mode"))
    focus = "FOCUS" in profile["auto_signals"]
    want_loop = (
        loop
        or bool(profile.get("code_loop"))
        or (
            resume
            and any(  # a resumed build keeps its open loop
                l.get("type") == "code"
                and l.get("phase") == phase_id
                and l.get("status") != "complete"
                and l.get("session_id") == colony.get("session_id")
                for l in store.read("loops")["loops"]
            )
        )
    )
    warnings, said = [], []  # said: the warnings the start text shows too
    try:
        excluded = checkpoints.exclude_colony()  # the colony's files out of the user's git commands (and its snapshots)
    except AetherError as exc:
        excluded = exc.message
    if excluded:
        said.append(f"the colony's files are not kept out of git stash -u and git clean: {excluded}")
    record = None
    label = f"build-start phase {phase_id}" + (" (resume)" if resume else "")
    try:
        record = checkpoints.snapshot(label, phase_id)
    except AetherError as exc:
        warnings.append(f"no git checkpoint: {exc.message}")
    names = (
        ["colony", "plan", "events"]
        + (["checkpoints"] if record else [])
        + (["pheromones"] if focus else [])
        + (["loops"] if want_loop else [])
    )

    old_tree = colony.get("spawn_tree")  # the build before: interrupted, or ended with worktrees left (a killed abort)
    try:
        out = store.update_many(
            names, functools.partial(_start_build, phase_id=phase_id, resume=resume, record=record, focus=focus, want_loop=want_loop)
        )
    except BaseException:
        if record:
            checkpoints.forget([record])  # the build did not start: drop its checkpoint
        raise
    checkpoints.forget(out["dropped"])
    # whatever the build before left in worktrees goes; any work in them is kept on branches first
    ended = worktrees.abandon(old_tree if isinstance(old_tree, dict) else None, "the build started over")
    if ended["kept"]:
        warnings.append(f"{len(ended['kept'])} result(s) of the build before kept on branches: `aether worktrees`")
    said += ended["notes"]
    warnings += said
    phase = out["phase"]
    block = pheromones.render(None)["text"]
    tasks = [t for t in phase.get("tasks") or [] if isinstance(t, dict)]
    todo = [t.get("id") for t in tasks if t.get("status") not in DONE_STATUSES]
    result = {
        "phase": {k: phase.get(k) for k in ("id", "name", "description", "success_criteria")},
        "tasks": tasks,
        "todo": todo,
        "resumed": out["resumed"],
        "previous_status": out["previous_status"],
        "mode": out["mode"] or modes.DEFAULT_MODE,
        "mode_profile": modes.describe(out["mode"], when="build", phase=phase_id, last_phase=out["last"]),
        "code_loop": out["code_loop"],
        "checkpoint": record,
        "pheromones": block,
        "pheromones_for_caste": "aether pheromone-render --caste <caste>",
        "signals_emitted": [out["signal"]] if out["signal"] else [],
        "warnings": warnings,
    }
    verb = "resumed" if out["resumed"] else "started"
    lines = [f"Phase {phase['id']} {verb}: {phase.get('name')} · {len(todo)} of {len(tasks)} tasks to build · mode {result['mode']}"]
    lines.append(
        f"Checkpoint: {record['ref']} ({record['commit'][:10]})"
        if record
        else "Checkpoint: none (" + (warnings[0] if warnings else "not a git repository") + ")"
    )
    if out["code_loop"]:
        lines.append(
            f"Code loop: {out['code_loop']['loop_id']} (threshold {out['code_loop']['threshold']:g}): the "
            f"helper scores each verification after the waves"
        )
    if ended["kept"]:
        lines += ["Kept from the build before (not merged):", *worktrees.render_kept(ended["kept"])]
    lines += [f"Warning: {w}" for w in said]
    lines.append(block)
    result["text"] = "\n".join(lines)
    return result


def approve(phase_id: int) -> dict:
    """build-start N --approve: the user approved the wave plan of the running build of phase N."""

    require_building(store.read("colony"), phase_id, "build-start --approve")
    return waves.approve()
