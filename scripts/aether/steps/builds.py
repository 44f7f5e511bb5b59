"""Builds and phases: build-start, build-finish, build-abort, phase-advance.

`current_phase` is the phase being worked on (0 before the first build). `advance` is the only
code that moves it forward: to the next phase in plan order, and only when the phase it leaves
is completed (phase 0 counts as completed). `rewind` moves it back when plan-load replaces the
plan. A phase is built only when every phase before it is completed, so no sequence of
commands skips a phase or has two phases in progress.
"""

from __future__ import annotations

import functools
import math

from aether.core import clock, inputs
from aether.core.castes import CASTES
from aether.core.exceptions import AetherError, input_error, state_error
from aether.core.text import json_type, one_line
from aether.core.vocabulary import DONE_STATUSES  # tasks that let a phase complete; phases the colony moves past
from aether.rules import lifecycle, modes, spawn_tree
from aether.rules import loops as loops_rules
from aether.rules import plans as plans_rules
from aether.rules.lifecycle import check_phase_id, require_building
from aether.rules.pheromones import DEFAULTS
from aether.state import checkpoints, error_log, events, memory, pheromones, store
from aether.steps import completion, loops, syntax_check, waves, worktrees

RESULT_STATUSES = ("completed", "failed", "skipped")  # a task's outcome in build-finish
WATCHER_OPTIONAL = ("syntax",)  # watcher depths (modes.py) where no watcher report is required
MAX_RESULTS_TEXT = 20000  # one summary or detail in build-finish results
MAX_FILES_PER_TASK = 1000
MAX_REASON_LENGTH = 4000
MAX_SIGNAL_TEXT = 300  # auto-emitted pheromones stay short: every worker reads them
TASK_FAILURE = ("task_failure", "high")  # category, severity of a failed task that gave none
WATCHER_FAILURE = ("verification", "high")
SUCCESS_NODE, FAILURE_NODE = "completed", "failed"  # spawn tree node statuses counted in spawn_outcomes


# ---------------------------------------------------------------- current_phase


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
        return f"/ant:build {pid} (`aether build-start {pid} --resume`)"
    return f"/ant:build {pid} (`aether build-start {pid}`)"


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
            raise state_error("phase_missing", f"current phase {current} is not in the plan; "
                                               f"reload the plan with `aether plan-load`")
        phase = items[index]
        if phase.get("status") not in DONE_STATUSES:
            raise state_error(
                "phase_not_completed",
                f"phase {current} ({phase.get('name')}) is {phase.get('status') or 'pending'}, not "
                f"completed; build it first: {_build_hint(phase)}",
                phase=current, status=phase.get("status"),
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


# ---------------------------------------------------------------- helpers


def _signal(data: dict, kind: str, content: str, source: str) -> dict:
    """Append an automatic pheromone to loaded pheromones.json data."""

    strength, half_life = DEFAULTS[kind]
    taken = {s.get("id") for s in data["signals"] if isinstance(s, dict)}
    signal = {
        "id": clock.new_id(kind.lower(), taken),
        "type": kind,
        "content": one_line(content, MAX_SIGNAL_TEXT),
        "strength": strength,
        "half_life_seconds": half_life,
        "created_at": clock.iso(),
        "source": source,
        "auto": True,
    }
    data["signals"].append(signal)
    return signal


def _phase_focus(pheromone_data: dict, phase: dict) -> dict:
    text = f"Phase {phase['id']}: {phase.get('name')}"
    if phase.get("description"):
        text += f" — {phase['description']}"
    return _signal(pheromone_data, "FOCUS", text, "auto:phase")


def _running_check(colony: dict, phase_id: int, command: str) -> None:
    """build-finish / build-abort: the colony is EXECUTING phase_id."""

    lifecycle.require_transition(colony, "READY", command)
    current = colony.get("current_phase")
    if phase_id != current:
        raise input_error("phase_mismatch", f"the running build is phase {current}, not {phase_id}; "
                                            f"use `aether {command} {current}`", running=current)


# ---------------------------------------------------------------- build-start


def _check_start(colony: dict, plan: dict, phase_id: int, resume: bool) -> None:

    current = colony.get("current_phase") or 0
    if colony.get("state") == "EXECUTING":
        if not resume:
            raise state_error(
                "invalid_transition",
                f"`build-start` cannot run while the colony is EXECUTING: a build of phase {current} "
                f"is already running; if it was interrupted, resume it with `aether build-start "
                f"{current} --resume` or give it up with `aether build-abort {current} --reason -`",
                state="EXECUTING", legal=["build-abort", "build-finish", "build-start --resume"],
            )
        if phase_id != current:
            raise input_error("phase_mismatch", f"the interrupted build is phase {current}; resume it with "
                                                f"`aether build-start {current} --resume` or abort it",
                              running=current)
        return
    lifecycle.require_transition(colony, "EXECUTING", "build-start")
    items = plans_rules.require_plan(plan)
    phase = plans_rules.require_phase(plan, phase_id)
    status = phase.get("status") or "pending"
    name = phase.get("name")
    if status in DONE_STATUSES:
        nxt = _next_open(items, _index(items, phase_id))
        hint = (f"the next phase is {nxt['id']}: /ant:continue (`aether phase-advance`), then "
                f"/ant:build {nxt['id']}" if nxt else "every later phase is completed too")
        raise state_error("phase_completed", f"phase {phase_id} ({name}) is already {status}; {hint}",
                          phase=phase_id)
    if current == 0:
        first = _next_open(items, None)
        if first is not phase:
            raise state_error("phase_out_of_order", f"phase {first['id']} ({first.get('name')}) comes first: "
                                                    f"build it with /ant:build {first['id']}",
                              expected=first["id"])
    elif phase_id != current:
        cur = plans_rules.find_phase(plan, current) or {}
        if cur.get("status") in DONE_STATUSES:
            nxt = _next_open(items, _index(items, current))
            hint = (f"run /ant:continue (`aether phase-advance`) to move on to phase {nxt['id']}"
                    if nxt else "run /ant:continue (`aether phase-advance`)")
            raise state_error("phase_out_of_order", f"phase {current} is completed and phase {phase_id} "
                                                    f"is not the next step; {hint}", expected=None)
        raise state_error("phase_out_of_order",
                          f"phase {current} ({cur.get('name')}) is {cur.get('status') or 'pending'} and comes "
                          f"first: {_build_hint(cur) if cur else '/ant:build ' + str(current)}",
                          expected=current)
    elif status in ("failed", "in_progress") and not resume:
        raise state_error("resume_required",
                          f"phase {phase_id} ({name}) is {status} (an interrupted, aborted or failed build); "
                          f"rebuild it with `aether build-start {phase_id} --resume` (/ant:build {phase_id})",
                          phase=phase_id)
    for before in items[: _index(items, phase_id)]:
        if before.get("status") not in DONE_STATUSES:
            raise state_error("phase_out_of_order", f"phase {before.get('id')} ({before.get('name')}) "
                                                    f"is not completed yet; it comes first",
                              expected=before.get("id"))


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
    events.append(files["events"], "build_resumed" if resumed else "build_started", "queen",
                  f"Phase {phase_id} {'resumed' if resumed else 'started'}: {phase.get('name')}")
    dropped = checkpoints.remember(files["checkpoints"], record) if record else []
    signal = _phase_focus(files["pheromones"], phase) if focus and entered else None
    code_loop = None
    if want_loop:
        session = colony.get("session_id")
        bound = next((l for l in reversed(files["loops"]["loops"]) if l.get("type") == "code"
                      and l.get("phase") == phase_id and l.get("status") != "complete"
                      and l.get("session_id") == session), None)
        reused = bound is not None
        if bound is None:
            bound = loops.new_loop(files["loops"], "code", loops_rules.THRESHOLDS["code"], phase_id, session)
            events.append(files["events"], "loop_started", "queen",
                          f"code loop {bound['id']} bound to the build of phase {phase_id}")
        code_loop = {"loop_id": bound["id"], "threshold": bound["threshold"], "status": bound["status"],
                     "iterations": len(bound["iterations"]), "reused": reused}
    items = plans_rules.phases(plan)
    return {"phase": phase, "resumed": resumed, "previous_status": previous, "mode": colony.get("mode"),
            "dropped": dropped, "signal": signal, "code_loop": code_loop,
            "last": bool(items) and items[-1].get("id") == phase_id}


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
    want_loop = loop or bool(profile.get("code_loop")) or (resume and any(  # a resumed build keeps its open loop
        l.get("type") == "code" and l.get("phase") == phase_id and l.get("status") != "complete"
        and l.get("session_id") == colony.get("session_id") for l in store.read("loops")["loops"]))
    warnings = []
    record = None
    label = f"build-start phase {phase_id}" + (" (resume)" if resume else "")
    try:
        record = checkpoints.snapshot(label, phase_id)
    except AetherError as exc:
        warnings.append(f"no git checkpoint: {exc.message}")
    names = (["colony", "plan", "events"] + (["checkpoints"] if record else []) + (["pheromones"] if focus else [])
             + (["loops"] if want_loop else []))

    old_tree = colony.get("spawn_tree") if colony.get("state") == "EXECUTING" else None
    try:
        out = store.update_many(names, functools.partial(_start_build, phase_id=phase_id, resume=resume, record=record,
                                                       focus=focus, want_loop=want_loop))
    except BaseException:
        if record:
            checkpoints.forget([record])  # the build did not start: drop its checkpoint
        raise
    checkpoints.forget(out["dropped"])
    ended = worktrees.abandon(old_tree, "the build started over")  # its builders' worktrees go; results stay
    if ended["kept"]:
        warnings.append(f"{len(ended['kept'])} result(s) of the interrupted build kept on branches: `aether worktrees`")
    warnings += ended["notes"]
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
    lines = [f"Phase {phase['id']} {verb}: {phase.get('name')} · {len(todo)} of {len(tasks)} tasks to build · "
             f"mode {result['mode']}"]
    lines.append(f"Checkpoint: {record['ref']} ({record['commit'][:10]})" if record else
                 "Checkpoint: none (" + (warnings[0] if warnings else "not a git repository") + ")")
    if out["code_loop"]:
        lines.append(f"Code loop: {out['code_loop']['loop_id']} (threshold {out['code_loop']['threshold']:g}); after the "
                     f"waves score the verification with `aether loop-score - --loop {out['code_loop']['loop_id']}`")
    lines.append(block)
    result["text"] = "\n".join(lines)
    return result


# ---------------------------------------------------------------- build-finish results


def _defect(defects: list, path: str, problem: str) -> None:
    defects.append({"path": path, "problem": problem})


def _opt_text(defects: list, obj: dict, key: str, path: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        _defect(defects, f"{path}.{key}", f"must be a string, found {json_type(value)}")
        return ""
    if len(value) > MAX_RESULTS_TEXT:
        _defect(defects, f"{path}.{key}", f"is {len(value)} characters; the limit is {MAX_RESULTS_TEXT}")
        return ""
    return value


def _file_list(defects: list, obj: dict, key: str, path: str) -> list:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        _defect(defects, f"{path}.{key}", f"must be a list of paths, found {json_type(value)}")
        return []
    if len(value) > MAX_FILES_PER_TASK:
        _defect(defects, f"{path}.{key}", f"lists {len(value)} files; the limit is {MAX_FILES_PER_TASK}")
        return []
    out = []
    for k, item in enumerate(value):
        if not isinstance(item, str) or not item.strip() or "\0" in item:
            _defect(defects, f"{path}.{key}[{k}]", "must be a non-empty path string")
        elif item not in out:
            out.append(item)
    return out


def _error_info(defects: list, task: dict, path: str):

    value = task.get("error")
    if value is None:
        return None
    if not isinstance(value, dict):
        _defect(defects, f"{path}.error", f"must be an object {{category, severity, description, root_cause}}, "
                                          f"found {json_type(value)}")
        return None
    info = {}
    for key, default, normalise in (("category", TASK_FAILURE[0], error_log.check_category),
                                    ("severity", TASK_FAILURE[1], error_log.check_severity)):
        raw = value.get(key)
        if raw is None:
            info[key] = default
            continue
        try:
            info[key] = normalise(raw)
        except AetherError as exc:
            _defect(defects, f"{path}.error.{key}", exc.message)
    info["description"] = _opt_text(defects, value, "description", f"{path}.error")
    info["root_cause"] = _opt_text(defects, value, "root_cause", f"{path}.error") or None
    return info


def validate_results(data, phase: dict, watcher_depth: str) -> tuple[dict | None, list]:
    """Check build-finish results against the phase. Returns (normalised results, defects)."""
    defects: list = []
    if not isinstance(data, dict):
        return None, [{"path": "$", "problem": f"results must be a JSON object, found {json_type(data)}"}]
    tasks = data.get("tasks")
    if not isinstance(tasks, list):
        return None, [{"path": "tasks", "problem": "is missing or not an array of task outcomes"}]
    known = {t.get("id"): t for t in phase.get("tasks") or [] if isinstance(t, dict)}
    seen: dict = {}
    outcomes = []
    for i, item in enumerate(tasks):
        path = f"tasks[{i}]"
        if not isinstance(item, dict):
            _defect(defects, path, f"must be an object, found {json_type(item)}")
            continue
        tid = item.get("id")
        if not isinstance(tid, str):
            _defect(defects, f"{path}.id", f'must be a task id string like "1.1", found {json_type(tid)}')
        elif tid not in known:
            _defect(defects, f"{path}.id", f"phase {phase.get('id')} has no task {tid!r} "
                                           f"(its tasks: {', '.join(map(str, known))})")
        elif tid in seen:
            _defect(defects, f"{path}.id", f"task {tid!r} is also reported by {seen[tid]}")
        else:
            seen[tid] = path
        status = item.get("status")
        if status not in RESULT_STATUSES:
            _defect(defects, f"{path}.status", f"is {status!r}; expected one of {', '.join(RESULT_STATUSES)}")
        caste = item.get("caste")
        if caste is not None and caste not in CASTES:
            _defect(defects, f"{path}.caste", f"unknown caste {caste!r}; castes: {', '.join(CASTES)}")
        worker = item.get("worker_id")
        if worker is not None and not isinstance(worker, str):
            _defect(defects, f"{path}.worker_id", f"must be a string, found {json_type(worker)}")
        outcomes.append({
            "id": tid,
            "status": status,
            "summary": _opt_text(defects, item, "summary", path),
            "files_created": _file_list(defects, item, "files_created", path),
            "files_modified": _file_list(defects, item, "files_modified", path),
            "caste": caste,
            "worker_id": worker,
            "error": _error_info(defects, item, path),
        })
    missing = [tid for tid, t in known.items() if t.get("status") not in DONE_STATUSES and tid not in seen]
    if missing:
        _defect(defects, "tasks", f"no outcome for task{'s' if len(missing) > 1 else ''} "
                                  f"{', '.join(map(str, missing))}; report every task the build worked on")
    watcher = data.get("watcher")
    report = None
    if watcher is None:
        if watcher_depth not in WATCHER_OPTIONAL:
            _defect(defects, "watcher", f"is missing; this mode's watcher ({watcher_depth}) must report "
                                        f"{{passed, score, checks, summary}}")
    elif not isinstance(watcher, dict):
        _defect(defects, "watcher", f"must be an object {{passed, score, checks, summary}}, found {json_type(watcher)}")
    else:
        report = _watcher(defects, watcher)
    if defects:
        return None, defects
    return {"tasks": outcomes, "watcher": report}, []


def _watcher(defects: list, watcher: dict) -> dict:

    passed = watcher.get("passed")
    if not isinstance(passed, bool):
        _defect(defects, "watcher.passed", f"must be true or false, found {json_type(passed)}")
    score = watcher.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                              or not math.isfinite(score) or not 0 <= score <= 100):
        _defect(defects, "watcher.score", f"must be a number from 0 to 100 or null, found {score!r}"[:200])
        score = None
    checks = watcher.get("checks")
    out_checks = []
    if checks is not None and not isinstance(checks, list):
        _defect(defects, "watcher.checks", f"must be a list of {{name, passed, detail}}, found {json_type(checks)}")
    for k, check in enumerate(checks or [] if isinstance(checks, list) else []):
        path = f"watcher.checks[{k}]"
        if not isinstance(check, dict):
            _defect(defects, path, f"must be an object {{name, passed, detail}}, found {json_type(check)}")
            continue
        name = check.get("name")
        if not isinstance(name, str) or not name.strip():
            _defect(defects, f"{path}.name", "must be a non-empty string")
        if not isinstance(check.get("passed"), bool):
            _defect(defects, f"{path}.passed", f"must be true or false, found {json_type(check.get('passed'))}")
        out_checks.append({"name": name, "passed": check.get("passed"),
                           "detail": _opt_text(defects, check, "detail", path)})
    return {"passed": passed, "score": score, "checks": out_checks,
            "summary": _opt_text(defects, watcher, "summary", "watcher")}


# ---------------------------------------------------------------- build-finish


def _spawn_outcomes(colony: dict, outcomes: list) -> dict:
    """Update spawn_outcomes per caste; returns {caste: {successes, failures}} of this build."""
    tree = colony.get("spawn_tree")
    nodes = tree.get("nodes") if isinstance(tree, dict) else None
    tally: dict = {}
    if isinstance(nodes, dict) and nodes:
        pairs = [(n.get("caste"), n.get("status")) for n in nodes.values() if isinstance(n, dict)]
        pairs = [(c, "completed" if s == SUCCESS_NODE else "failed" if s == FAILURE_NODE else None)
                 for c, s in pairs]
    else:
        pairs = [(o["caste"], o["status"]) for o in outcomes]
    table = colony.setdefault("spawn_outcomes", {})
    for caste, status in pairs:
        if caste not in CASTES or status not in ("completed", "failed"):
            continue
        row = table.setdefault(caste, {"alpha": 1, "beta": 1, "total_spawns": 0, "successes": 0, "failures": 0})
        for key, start in (("alpha", 1), ("beta", 1), ("total_spawns", 0), ("successes", 0), ("failures", 0)):
            if isinstance(row.get(key), bool) or not isinstance(row.get(key), (int, float)):
                row[key] = start
        won = status == "completed"
        row["alpha" if won else "beta"] += 1
        row["successes" if won else "failures"] += 1
        row["total_spawns"] += 1
        mine = tally.setdefault(caste, {"successes": 0, "failures": 0})
        mine["successes" if won else "failures"] += 1
    return tally


def _syntax_files(data, colony: dict) -> list:
    """The files a build created or modified: its results' claims, then the spawn tree's."""

    found: list = []
    for item in (data.get("tasks") if isinstance(data, dict) and isinstance(data.get("tasks"), list) else []):
        if isinstance(item, dict):
            for key in ("files_created", "files_modified"):
                value = item.get(key)
                for path in value if isinstance(value, list) else []:
                    if isinstance(path, str) and path.strip() and "\0" not in path and path not in found:
                        found.append(path)
    created, modified = completion.tree_files(colony.get("spawn_tree"))
    return found + [f for f in created + modified if f not in found]


def _own_check_files(data, colony: dict) -> list | None:
    """The files the helper's own syntax check covers, None when it does not run."""
    if (modes.profile(colony.get("mode"))["watcher"] == "syntax" and isinstance(data, dict)
            and data.get("watcher") is None and colony.get("state") == "EXECUTING"):
        return _syntax_files(data, colony)[:syntax_check.MAX_FILES]
    return None


# not @store.writes: the files it locks depend on the call (loops.json when it exists)
def _record_build(files, phase_id: int, data, checked: tuple | None) -> dict:
    """Record the build's outcome: task and phase statuses, errors, spawn outcomes, signals, READY."""
    colony, plan = files["colony"], files["plan"]
    _running_check(colony, phase_id, "build-finish")
    wanted = _own_check_files(data, colony)
    syntax = None
    if wanted is not None:
        same = checked is not None and checked[0] == wanted
        syntax = checked[1] if same else syntax_check.compact(syntax_check.run(wanted))
    phase = plans_rules.require_phase(plan, phase_id)
    mode_profile = modes.profile(colony.get("mode"))
    auto = mode_profile["auto_signals"]
    payload = data
    if isinstance(data, dict) and "tasks" not in data:  # the spawn tree knows each task's outcome
        payload = {**data, "tasks": task_outcomes(colony.get("spawn_tree"), phase)}
    results, defects = validate_results(payload, phase, mode_profile["watcher"])
    if defects:
        raise input_error("invalid_results", plans_rules.defect_message(defects, "the results have", "send them again"),
                          defects=defects)
    by_id = {t.get("id"): t for t in phase.get("tasks") or [] if isinstance(t, dict)}
    for outcome in results["tasks"]:
        by_id[outcome["id"]]["status"] = outcome["status"]
    failed = [o for o in results["tasks"] if o["status"] == "failed"]
    watcher = results["watcher"]
    all_done = all((t.get("status") in DONE_STATUSES) for t in by_id.values())
    completed = all_done and (watcher is None or watcher["passed"]) and (syntax is None or syntax["passed"])
    phase["status"] = "completed" if completed else "failed"

    errors = files["errors"]
    flagged_before = {str(p.get("category")).lower() for p in errors.get("flagged_patterns") or []
                      if isinstance(p, dict)}
    recorded = []
    for o in failed:
        info = o["error"] or {"category": TASK_FAILURE[0], "severity": TASK_FAILURE[1],
                              "description": "", "root_cause": None}
        description = info["description"] or o["summary"] or f"task {o['id']} failed"
        recorded.append(error_log.append(errors, info["category"], info["severity"], description,
                                         phase=phase_id, task_id=o["id"], root_cause=info["root_cause"]))
    if watcher is not None and not watcher["passed"]:
        bad = [c["name"] for c in watcher["checks"] if c["passed"] is False]
        text = "watcher verification failed" + (f" ({', '.join(bad)})" if bad else "")
        if watcher["summary"]:
            text += f": {watcher['summary']}"
        recorded.append(error_log.append(errors, WATCHER_FAILURE[0], WATCHER_FAILURE[1], text, phase=phase_id))
    if syntax is not None and not syntax["passed"]:
        bad = ", ".join(f"{f['path']}" + (f":{f['line']}" if f["line"] else "") for f in syntax["failures"][:10])
        recorded.append(error_log.append(errors, "syntax", WATCHER_FAILURE[1],
                                         f"syntax check failed: {bad}", phase=phase_id))
    newly = [p for p in errors.get("flagged_patterns") or []
             if isinstance(p, dict) and str(p.get("category")).lower() not in flagged_before]

    tally = _spawn_outcomes(colony, results["tasks"])
    # a bound loop is created and decided with the colony locked, as it is now
    loops_data = files["loops"] if "loops" in files else store.read("loops")
    loop = completion.bound_loop(loops_data, phase_id, colony.get("session_id"))
    record = completion.record_build(files["phase_records"], colony, phase, results, syntax, loop)
    tree = colony.get("spawn_tree")
    if isinstance(tree, dict):
        tree["status"] = "finished"
    colony["state"] = "READY"

    counts = plans_rules.task_counts(phase)
    name = phase.get("name")
    verdict = _verdict(watcher, syntax)
    outcome_text = (f"Phase {phase_id} ({name}) {'completed' if completed else 'failed'}: "
                    f"{counts['completed']}/{counts['total']} tasks completed"
                    + (f", {counts['failed']} failed ({', '.join(o['id'] for o in failed)})" if failed else "")
                    + (f", {counts['skipped']} skipped" if counts["skipped"] else "")
                    + f"; watcher {verdict}")
    events.append(files["events"], "build_finished" if completed else "build_failed", "queen", outcome_text)
    signals = []
    if "FEEDBACK" in auto:
        advice = ("Build on what worked." if completed else "Fix these before moving on.")
        signals.append(_signal(files["pheromones"], "FEEDBACK", f"{outcome_text}. {advice}", "auto:build"))
    if "REDIRECT" in auto:
        for pattern in newly:
            signals.append(_signal(files["pheromones"], "REDIRECT",
                                   f"Recurring {pattern.get('category')} errors: {pattern.get('description')}. "
                                   f"Avoid this pattern.", "auto:errors"))
    items = plans_rules.phases(plan)
    last = items and items[-1].get("id") == phase_id
    return {"phase": phase, "completed": completed, "counts": counts, "failed": failed,
            "results": results, "recorded": recorded, "newly": newly, "signals": signals,
            "tally": tally, "last": bool(last), "tasks_from": "results" if payload is data else "spawn_tree",
            "syntax": syntax, "mode": colony.get("mode"), "record": record}


def finish(phase_id: int, results_text, lessons_asked: bool = False) -> dict:
    """build-finish: record the outcome of a build and return its summary.

    In a mode whose watcher is `syntax` (LIGHTWEIGHT) and without a watcher report, the helper
    runs the syntax check itself on the build's files; a failed check fails the phase. Everything
    recorded comes from the state as the locked update finds it: the check runs ahead (outside
    the lock) and again under it only when the colony changed in between."""

    check_phase_id(phase_id)
    if isinstance(results_text, str):

        data = inputs.parse_json(results_text, "the build results")
    else:
        data = results_text

    ahead = _own_check_files(data, store.read("colony"))
    checked = None if ahead is None else (ahead, syntax_check.compact(syntax_check.run(ahead)))

    names = ["colony", "plan", "errors", "events", "pheromones", "phase_records"]
    tree = store.read("colony").get("spawn_tree")
    out = store.update_many(names + (["loops"] if store.exists("loops") else []),
                            functools.partial(_record_build, phase_id=phase_id, data=data, checked=checked))
    ended = worktrees.abandon(tree, "the build finished")  # worktrees of tasks that ended failed; results were merged
    result = _finish_result(phase_id, out, lessons_asked)
    if ended["notes"]:
        head, sep, tail = result["text"].rpartition("\nNext: ")
        notes = "\n".join(["The builders' worktrees:", *(f"  {line}" for line in ended["notes"])])
        result["text"] = f"{head}\n{notes}{sep}{tail}" if sep else f"{result['text']}\n{notes}"
    return result


def task_outcomes(tree, phase: dict) -> list:
    """build-finish results without `tasks`: each open task's outcome read from the spawn tree.

    A task's outcome is its worker lineage's latest finished run (the worker, its retry,
    debugger, rerun or rebuild); a `flag` decision fails it, `skip` skips it; a task no worker
    had, or whose runs never finished (an aborted wave), failed. Files are those its completed
    runs reported (and spawn-finish verified)."""

    if not isinstance(tree, dict) or tree.get("phase") != phase.get("id") or not isinstance(tree.get("nodes"), dict):
        raise input_error("results_need_tasks", f"there is no spawn tree of phase {phase.get('id')} to read the task "
                                                f"outcomes from: send the results with `tasks` (see docs/contracts.md)")
    nodes = sorted((n for n in tree["nodes"].values() if isinstance(n, dict)), key=lambda n: n.get("seq") or 0)
    decided = tree.get("failed_tasks") if isinstance(tree.get("failed_tasks"), dict) else {}
    outcomes = []
    for task in phase.get("tasks") or []:
        if not isinstance(task, dict) or task.get("status") in DONE_STATUSES:
            continue
        tid = task.get("id")
        worker = next((n for n in nodes if n.get("role") == "worker" and tid in (n.get("tasks") or [])), None)
        if worker is None:
            outcomes.append({"id": tid, "status": "failed", "summary": "no worker of the wave plan had this task"})
            continue
        runs = [n for n in nodes if spawn_tree.origin_of(tree, n) == worker["id"]
                and n.get("role") in ("worker",) + spawn_tree.RESPAWN_ROLES]
        done = [n for n in runs if n.get("status") == SUCCESS_NODE]
        finished = [n for n in runs if n.get("status") in (SUCCESS_NODE, FAILURE_NODE)]
        last = finished[-1] if finished else None
        status = last.get("status") if last else "failed"
        if decided.get(tid) == "skip":
            status = "skipped"
        elif decided.get(tid) == "flag":
            status = "failed"
        created, modified = [], []
        for n in done:
            created += [f for f in n.get("files_created") or [] if isinstance(f, str) and f not in created]
            modified += [f for f in n.get("files_modified") or [] if isinstance(f, str) and f not in modified]
        summary = str((last or {}).get("summary") or ("its runs never finished" if last is None else ""))
        outcome = {"id": tid, "status": status, "summary": summary[:MAX_RESULTS_TEXT],
                   "files_created": created[:MAX_FILES_PER_TASK],
                   "files_modified": [f for f in modified if f not in created][:MAX_FILES_PER_TASK],
                   "caste": worker.get("caste") if worker.get("caste") in CASTES else None,
                   "worker_id": worker["id"]}
        if status == "failed":
            reports = [n["failure"] for n in reversed(runs) if isinstance(n.get("failure"), dict)]
            failure = reports[0] if reports else {}
            # a made-up report (a debugger that gave none) keeps the kind and cause of the real one
            known = next((r for r in reports if r.get("category") not in (None, "", "unknown")), failure)
            try:
                category = error_log.check_category(known.get("category") or TASK_FAILURE[0])
            except AetherError:
                category = TASK_FAILURE[0]
            cause = known.get("root_cause") if known is not failure else failure.get("root_cause")
            outcome["error"] = {"category": category, "severity": TASK_FAILURE[1],
                                "description": str(failure.get("error") or summary or f"task {tid} failed")[:MAX_RESULTS_TEXT],
                                "root_cause": str(cause)[:MAX_RESULTS_TEXT] if cause else None}
        outcomes.append(outcome)
    return outcomes


def _verdict(watcher: dict | None, syntax: dict | None = None) -> str:
    if watcher is None and syntax is not None and syntax["checked"]:
        return f"syntax check {'passed' if syntax['passed'] else 'failed'} ({syntax['summary']})"
    if watcher is None:
        return "not run (syntax check only in this mode" + (": no file to check)" if syntax else ")")
    word = "passed" if watcher["passed"] else "failed"
    if watcher["score"] is not None:
        word += f" (score {watcher['score']:g})"
    return word


def _finish_result(phase_id: int, out: dict, lessons_asked: bool = False) -> dict:
    phase, results = out["phase"], out["results"]
    created, modified = [], []
    for o in results["tasks"]:
        created += [f for f in o["files_created"] if f not in created]
        modified += [f for f in o["files_modified"] if f not in modified and f not in created]
    watcher = results["watcher"]
    if out["completed"]:
        nxt = {"slash": "/ant:continue", "command": "aether phase-advance",
               "reason": "the last phase is done: advancing completes the colony" if out["last"]
               else "advance to the next phase"}
    else:
        nxt = {"slash": f"/ant:build {phase_id}", "command": f"aether next --build {phase_id}",
               "reason": "rebuild the failed tasks" + ("" if not watcher or watcher["passed"] else
                                                       " and what the watcher rejected")}
    counts = out["counts"]
    result = {
        "phase": phase_id,
        "name": phase.get("name"),
        "phase_status": phase["status"],
        "tasks": counts,
        "failed_tasks": [{"id": o["id"], "summary": o["summary"]} for o in out["failed"]],
        "files_created": created,
        "files_modified": modified,
        "watcher": watcher,
        "errors_recorded": [e["id"] for e in out["recorded"]],
        "flagged_patterns": [p.get("category") for p in out["newly"]],
        "signals_emitted": out["signals"],
        "spawn_outcomes": out["tally"],
        "tasks_from": out["tasks_from"],
        "syntax_check": out["syntax"],
        "code_loop": out["record"]["code_loop"],
        "learnings": _learnings_answer(phase_id, phase, out),
        "next": nxt,
    }
    lines = [f"Phase {phase_id} · {phase.get('name')} — {phase['status'].upper()}",
             f"Tasks: {counts['completed']} completed, {counts['failed']} failed, {counts['skipped']} skipped "
             f"(of {counts['total']})"]
    for o in out["failed"]:
        lines.append(f"  ✗ {o['id']}" + (f": {one_line(o['summary'], 120)}" if o["summary"] else ""))
    lines.append(f"Files: {len(created)} created, {len(modified)} modified")
    verdict = f"Watcher: {_verdict(watcher, out['syntax'])}"
    if watcher and watcher["checks"]:
        good = sum(1 for c in watcher["checks"] if c["passed"])
        verdict += f" · {good}/{len(watcher['checks'])} checks"
    lines.append(verdict)
    if watcher and watcher["summary"]:
        lines.append(f"  {one_line(watcher['summary'], 200)}")
    if result["flagged_patterns"]:
        lines.append("Recurring errors flagged: " + ", ".join(map(str, result["flagged_patterns"])))
    if out["syntax"] and not out["syntax"]["passed"]:
        for f in out["syntax"]["failures"][:10]:
            lines.append(f"  ✗ {f['path']}" + (f":{f['line']}" if f["line"] else "") + f" {one_line(f['error'] or '', 120)}")
    for s in out["signals"]:
        lines.append(f"Signal: {s['type']} {one_line(s['content'], 100)}")
    if result["learnings"]["extract_now"] and not lessons_asked:  # the driver asks for them itself
        lines.append(f"Learnings: extract them now — {result['learnings']['command']}")
    lines.append(f"Next: {nxt['slash']} — {nxt['reason']}")
    result["text"] = "\n".join(lines)
    return result


def _learnings_answer(phase_id: int, phase: dict, out: dict) -> dict:
    """Whether the build extracts the phase's learnings now (mode cadence, phase completed, not
    extracted yet — learning-add refuses a second entry per phase)."""

    due, reason = modes.learning_now(out["mode"], "build", out["last"])
    done = memory.has_learnings(store.read("memory"), phase_id)
    now = due and out["completed"] and not done
    if not out["completed"]:
        reason = "the phase did not complete: learnings wait for a completed build"
    elif done:
        reason = "already extracted for this phase (learning-add refuses a second entry)"
    return {"extract_now": now, "already_extracted": done, "reason": reason,
            "command": f"aether learning-add {phase_id} - --each-line" if now else None}


# ---------------------------------------------------------------- build-abort, phase-advance


@store.writes("colony", "plan", "events")
def _abort_build(files, phase_id: int, reason: str) -> dict:
    """Give up the running build: its phase failed, its running tasks pending, the colony READY."""
    colony, plan = files["colony"], files["plan"]
    _running_check(colony, phase_id, "build-abort")
    phase = plans_rules.require_phase(plan, phase_id)
    phase["status"] = "failed"
    for task in phase.get("tasks") or []:
        if isinstance(task, dict) and task.get("status") == "in_progress":
            task["status"] = "pending"
    tree = colony.get("spawn_tree")
    if isinstance(tree, dict):
        tree["status"] = "aborted"
    colony["state"] = "READY"
    event = events.append(files["events"], "build_aborted", "queen",
                          f"Phase {phase_id} aborted: {one_line(reason, 500)}")
    return {"name": phase.get("name"), "event": event["id"]}


def abort(phase_id: int, reason: str) -> dict:
    """build-abort: give up the running build; the phase is marked failed."""
    check_phase_id(phase_id)
    reason = inputs.require_text(reason, "the reason", MAX_REASON_LENGTH, code="invalid_reason",
                                 empty="say why the build is aborted (the reason is empty)").strip()

    tree = store.read("colony").get("spawn_tree")
    out = _abort_build(phase_id, reason)
    ended = worktrees.abandon(tree, "the build was aborted")  # never raises: what it could not do is in its notes
    text = (f"Phase {phase_id} ({out['name']}) aborted: {one_line(reason, 200)}\n"
            f"Rebuild it with /ant:build {phase_id} (`aether next --build {phase_id}`).")
    if ended["kept"]:
        text += "\nResults not merged, kept on branches:\n" + "\n".join(worktrees.render_kept(ended["kept"]))
    if ended["notes"]:
        text += "\nThe builders' worktrees:\n" + "\n".join(f"  {line}" for line in ended["notes"])
    return {
        "phase": phase_id,
        "name": out["name"],
        "phase_status": "failed",
        "state": "READY",
        "reason": reason,
        "event": out["event"],
        "next": {"slash": f"/ant:build {phase_id}", "command": f"aether next --build {phase_id}",
                 "report": f"aether abort-report {phase_id}"},
        "kept": ended["kept"],
        "worktree_notes": ended["notes"],
        "text": text,
    }


def approve(phase_id: int) -> dict:
    """build-start N --approve: the user approved the wave plan of the running build of phase N."""

    require_building(store.read("colony"), phase_id, "build-start --approve")
    return waves.approve()


# not @store.writes: the files it locks depend on the call (pheromones with a FOCUS signal)
def _advance_phase(files, focus: bool) -> dict:
    """Leave the completed current phase for the next (FOCUS on it when `focus`), or complete the colony."""
    colony, plan = files["colony"], files["plan"]
    lifecycle.require_transition(colony, "READY", "phase-advance")
    before = colony.get("current_phase") or 0
    entered = advance(colony, plan)
    if entered is None:
        events.append(files["events"], "colony_completed", "queen",
                      f"Colony completed: every phase of the plan is done (goal: {colony.get('goal')})")
        return {"from": before, "to": None, "state": colony["state"], "phase": None, "signal": None}
    events.append(files["events"], "phase_advanced", "queen",
                  f"Phase {entered['id']} entered: {entered.get('name')}")
    signal = _phase_focus(files["pheromones"], entered) if focus else None
    return {"from": before, "to": entered["id"], "state": colony["state"],
            "phase": {k: entered.get(k) for k in ("id", "name", "description", "success_criteria")},
            "signal": signal}


def phase_advance() -> dict:
    """phase-advance: leave the completed current phase for the next (or complete the colony)."""

    mode = store.read("colony").get("mode")
    focus = "FOCUS" in modes.profile(mode)["auto_signals"]
    names = ["colony", "plan", "events"] + (["pheromones"] if focus else [])

    out = store.update_many(names, functools.partial(_advance_phase, focus=focus))
    signal = out.pop("signal")
    out["signals_emitted"] = [signal] if signal else []
    if out["to"] is None:

        out["next"] = {"slash": "/ant:init", "command": "aether colony-init",
                       "reason": "the colony is complete; start a new goal (or /ant:plan to extend this one)"}
        summary = completion.summary()
        out["summary"] = {k: v for k, v in summary.items() if k != "text"}
        out["text"] = "Every phase is completed: the colony is COMPLETED.\n\n" + summary["text"]
    else:
        out["next"] = {"slash": f"/ant:build {out['to']}", "command": f"aether next --build {out['to']}",
                       "reason": f"build phase {out['to']}"}
        out["text"] = f"Phase {out['to']}: {out['phase']['name']} is next. Run /ant:build {out['to']}."
    return out
