"""build-finish and build-abort: the end of a phase's build — its outcome recorded (tasks, errors,
signals, the phase record, the colony READY), or the build given up (the phase failed)."""

from __future__ import annotations

import functools

from aether.core import inputs
from aether.core.castes import CASTES
from aether.core.exceptions import AetherError, input_error
from aether.core.text import one_line
from aether.core.vocabulary import DONE_STATUSES  # tasks that let a phase complete; phases the colony moves past
from aether.rules import evidence as evidence_rules
from aether.rules import lifecycle, modes, spawn_tree
from aether.rules import plans as plans_rules
from aether.rules.lifecycle import check_phase_id
from aether.state import error_log, events, memory, pheromones, store
from aether.steps import checks, completion, syntax_check, worktrees
from aether.steps.build_results import (
    MAX_FILES_PER_TASK,
    MAX_RESULTS_TEXT,
    TASK_FAILURE,
    WATCHER_FAILURE,
    validate_results,
)

MAX_REASON_LENGTH = 4000
SUCCESS_NODE, FAILURE_NODE = "completed", "failed"  # spawn tree node statuses counted in spawn_outcomes


def _running_check(colony: dict, phase_id: int, command: str) -> None:
    """build-finish / build-abort: the colony is EXECUTING phase_id."""

    lifecycle.require_transition(colony, "READY", command)
    current = colony.get("current_phase")
    if phase_id != current:
        raise input_error(
            "phase_mismatch", f"the running build is phase {current}, not {phase_id}; use `aether {command} {current}`", running=current
        )


def _spawn_outcomes(colony: dict, outcomes: list) -> dict:
    """Update spawn_outcomes per caste; returns {caste: {successes, failures}} of this build."""
    tree = colony.get("spawn_tree")
    nodes = tree.get("nodes") if isinstance(tree, dict) else None
    tally: dict = {}
    if isinstance(nodes, dict) and nodes:
        pairs = [(n.get("caste"), n.get("status")) for n in nodes.values() if isinstance(n, dict)]
        pairs = [(c, "completed" if s == SUCCESS_NODE else "failed" if s == FAILURE_NODE else None) for c, s in pairs]
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
    for item in tasks if isinstance(data, dict) and isinstance(tasks := data.get("tasks"), list) else []:
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
    if (
        modes.profile(colony.get("mode"))["watcher"] == "syntax"
        and isinstance(data, dict)
        and data.get("watcher") is None
        and colony.get("state") == "EXECUTING"
    ):
        return _syntax_files(data, colony)[: syntax_check.MAX_FILES]
    return None


# not @store.writes: the files it locks depend on the call (loops.json when it exists)
def _record_build(files, phase_id: int, data, checked: tuple | None) -> dict:
    """Record the build's outcome: task and phase statuses, errors, spawn outcomes, signals, READY."""
    colony, plan = files["colony"], files["plan"]
    _running_check(colony, phase_id, "build-finish")
    wanted = _own_check_files(data, colony)
    syntax = None
    if wanted is not None:
        # the check build-finish ran before taking the lock, when it covered the same files
        if checked is not None and checked[0] == wanted:
            syntax = checked[1]
        else:
            syntax = syntax_check.compact(syntax_check.run(wanted))
    phase = plans_rules.require_phase(plan, phase_id)
    mode_profile = modes.profile(colony.get("mode"))
    auto = mode_profile["auto_signals"]
    payload = data
    if isinstance(data, dict) and "tasks" not in data:  # the spawn tree knows each task's outcome
        payload = {**data, "tasks": task_outcomes(colony.get("spawn_tree"), phase)}
    results, defects = validate_results(payload, phase, mode_profile["watcher"])
    if defects:
        raise input_error("invalid_results", plans_rules.defect_message(defects, "the results have", "send them again"), defects=defects)
    assert results is not None  # validate_results returns no results only with defects
    by_id = {t.get("id"): t for t in phase.get("tasks") or [] if isinstance(t, dict)}
    for outcome in results["tasks"]:
        by_id[outcome["id"]]["status"] = outcome["status"]
    failed = [o for o in results["tasks"] if o["status"] == "failed"]
    watcher = results["watcher"]
    proof = data.get("evidence") if isinstance(data, dict) and isinstance(data.get("evidence"), dict) else None
    results["evidence"] = proof
    all_done = all((t.get("status") in DONE_STATUSES) for t in by_id.values())
    completed = (
        all_done
        and (watcher is None or watcher["passed"])
        and (syntax is None or syntax["passed"])
        and (proof is None or proof["passed"])  # every required check verified by a run (or accepted by the person)
    )
    phase["status"] = "completed" if completed else "failed"

    errors = files["errors"]
    flagged_before = {str(p.get("category")).lower() for p in errors.get("flagged_patterns") or [] if isinstance(p, dict)}
    recorded = []
    for o in failed:
        info = o["error"] or {"category": TASK_FAILURE[0], "severity": TASK_FAILURE[1], "description": "", "root_cause": None}
        description = info["description"] or o["summary"] or f"task {o['id']} failed"
        recorded.append(
            error_log.append(
                errors, info["category"], info["severity"], description, phase=phase_id, task_id=o["id"], root_cause=info["root_cause"]
            )
        )
    if watcher is not None and not watcher["passed"]:
        bad = [c["name"] for c in watcher["checks"] if c["passed"] is False]
        text = "watcher verification failed" + (f" ({', '.join(bad)})" if bad else "")
        if watcher["summary"]:
            text += f": {watcher['summary']}"
        recorded.append(error_log.append(errors, WATCHER_FAILURE[0], WATCHER_FAILURE[1], text, phase=phase_id))
    for v in (proof or {}).get("checks") or []:
        if v["status"] in ("contradicted", "failed", "unverified"):
            run = v.get("run") or {}
            said = f"{v['name']} {v['status']}: " + (f"`{v['command']}` exited {run.get('exit')}" if run else v["why"])
            if v["status"] == "contradicted":
                said += " while the watcher claimed a pass"
            err = evidence_rules.error_line(run.get("tail") or "")
            recorded.append(
                error_log.append(errors, "verification", WATCHER_FAILURE[1], said + (f" — {err}" if err else ""), phase=phase_id)
            )
    if syntax is not None and not syntax["passed"]:
        where = ", ".join(f"{f['path']}" + (f":{f['line']}" if f["line"] else "") for f in syntax["failures"][:10])
        recorded.append(error_log.append(errors, "syntax", WATCHER_FAILURE[1], f"syntax check failed: {where}", phase=phase_id))
    newly = [
        p for p in errors.get("flagged_patterns") or [] if isinstance(p, dict) and str(p.get("category")).lower() not in flagged_before
    ]

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
    outcome_text = (
        f"Phase {phase_id} ({name}) {'completed' if completed else 'failed'}: "
        f"{counts['completed']}/{counts['total']} tasks completed"
        + (f", {counts['failed']} failed ({', '.join(o['id'] for o in failed)})" if failed else "")
        + (f", {counts['skipped']} skipped" if counts["skipped"] else "")
        + f"; watcher {verdict}"
    )
    events.append(files["events"], "build_finished" if completed else "build_failed", "queen", outcome_text)
    signals = []
    if "FEEDBACK" in auto:
        advice = "Build on what worked." if completed else "Fix these before moving on."
        signals.append(pheromones.auto_signal(files["pheromones"], "FEEDBACK", f"{outcome_text}. {advice}", "auto:build"))
    if "REDIRECT" in auto:
        for pattern in newly:
            signals.append(
                pheromones.auto_signal(
                    files["pheromones"],
                    "REDIRECT",
                    f"Recurring {pattern.get('category')} errors: {pattern.get('description')}. Avoid this pattern.",
                    "auto:errors",
                )
            )
    items = plans_rules.phases(plan)
    last = items and items[-1].get("id") == phase_id
    return {
        "phase": phase,
        "completed": completed,
        "counts": counts,
        "failed": failed,
        "results": results,
        "recorded": recorded,
        "newly": newly,
        "signals": signals,
        "tally": tally,
        "last": bool(last),
        "tasks_from": "results" if payload is data else "spawn_tree",
        "syntax": syntax,
        "mode": colony.get("mode"),
        "record": record,
    }


def finish(phase_id: int, results_text, lessons_asked: bool = False) -> dict:
    """build-finish: record the outcome of a build and return its summary.

    In a mode whose watcher is `syntax` (LIGHTWEIGHT) and without a watcher report, the helper
    runs the syntax check itself on the build's files; a failed check fails the phase. Everything
    recorded comes from the state as the locked update finds it: the check runs ahead (outside
    the lock) and again under it only when the colony changed in between."""

    check_phase_id(phase_id)
    if isinstance(results_text, str):
        data = inputs.parse_json(results_text, "the build results")
        if isinstance(data, dict):  # the verdicts are the helper's, from what ran: never the caller's
            data.pop("evidence", None)
    else:
        data = results_text

    ahead = _own_check_files(data, store.read("colony"))
    checked = None if ahead is None else (ahead, syntax_check.compact(syntax_check.run(ahead)))

    names = ["colony", "plan", "errors", "events", "pheromones", "phase_records"]
    tree = store.read("colony").get("spawn_tree")
    out = store.update_many(
        names + (["loops"] if store.exists("loops") else []),
        functools.partial(_record_build, phase_id=phase_id, data=data, checked=checked),
    )
    ended = worktrees.abandon(tree, "the build finished")  # worktrees of tasks that ended failed; results were merged
    result = _finish_result(phase_id, out, lessons_asked)
    result["kept"] = ended["kept"]
    if ended["kept"] or ended["notes"]:
        head, sep, tail = result["text"].rpartition("\nNext: ")
        notes = "\n".join(abort_lines(ended))
        result["text"] = f"{head}\n{notes}{sep}{tail}" if sep else f"{result['text']}\n{notes}"
    return result


def task_outcomes(tree, phase: dict) -> list:
    """build-finish results without `tasks`: each open task's outcome read from the spawn tree.

    A task's outcome is its worker lineage's latest finished run (the worker, its retry,
    debugger, rerun or rebuild); a `flag` decision fails it, `skip` skips it; a task no worker
    had, or whose runs never finished (an aborted wave), failed. Files are those its completed
    runs reported (and spawn-finish verified)."""

    if not isinstance(tree, dict) or tree.get("phase") != phase.get("id") or not isinstance(tree.get("nodes"), dict):
        raise input_error(
            "results_need_tasks",
            f"there is no spawn tree of phase {phase.get('id')} to read the task "
            f"outcomes from: send the results with `tasks` (see docs/contracts.md)",
        )
    nodes = sorted((n for n in tree["nodes"].values() if isinstance(n, dict)), key=lambda n: n.get("seq") or 0)
    decided = raw if isinstance(raw := tree.get("failed_tasks"), dict) else {}
    outcomes = []
    for task in phase.get("tasks") or []:
        if not isinstance(task, dict) or task.get("status") in DONE_STATUSES:
            continue
        tid = task.get("id")
        worker = next((n for n in nodes if n.get("role") == "worker" and tid in (n.get("tasks") or [])), None)
        if worker is None:
            outcomes.append({"id": tid, "status": "failed", "summary": "no worker of the wave plan had this task"})
            continue
        runs = [
            n for n in nodes if spawn_tree.origin_of(tree, n) == worker["id"] and n.get("role") in ("worker",) + spawn_tree.RESPAWN_ROLES
        ]
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
        outcome = {
            "id": tid,
            "status": status,
            "summary": summary[:MAX_RESULTS_TEXT],
            "files_created": created[:MAX_FILES_PER_TASK],
            "files_modified": [f for f in modified if f not in created][:MAX_FILES_PER_TASK],
            "caste": worker.get("caste") if worker.get("caste") in CASTES else None,
            "worker_id": worker["id"],
        }
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
            outcome["error"] = {
                "category": category,
                "severity": TASK_FAILURE[1],
                "description": str(failure.get("error") or summary or f"task {tid} failed")[:MAX_RESULTS_TEXT],
                "root_cause": str(cause)[:MAX_RESULTS_TEXT] if cause else None,
            }
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
        nxt = {
            "slash": "/ant:continue",
            "command": "aether next --continue",
            "reason": "the last phase is done: advancing completes the colony" if out["last"] else "advance to the next phase",
        }
    else:
        nxt = {
            "slash": f"/ant:build {phase_id}",
            "command": f"aether next --build {phase_id}",
            "reason": "rebuild the failed tasks"
            + ("" if not watcher or watcher["passed"] else " and what the watcher rejected")
            + ("" if not results.get("evidence") or results["evidence"]["passed"] else " and what the checks' runs showed"),
        }
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
        "evidence": results.get("evidence"),
        "learnings": _learnings_answer(phase_id, phase, out),
        "last_phase": out["last"],
        "next": nxt,
    }
    lines = [
        f"Phase {phase_id} · {phase.get('name')} — {phase['status'].upper()}",
        f"Tasks: {counts['completed']} completed, {counts['failed']} failed, {counts['skipped']} skipped (of {counts['total']})",
    ]
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
    proof = results.get("evidence")
    if proof:
        lines.append("Verified by what ran:" if proof["passed"] else "Verification from what ran:")
        lines += [checks.line(v) for v in proof["checks"]]
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
    return {
        "extract_now": now,
        "already_extracted": done,
        "reason": reason,
        "command": f"aether learning-add {phase_id} - --each-line" if now else None,
    }


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
    event = events.append(files["events"], "build_aborted", "queen", f"Phase {phase_id} aborted: {one_line(reason, 500)}")
    return {"name": phase.get("name"), "event": event["id"]}


def aborted(colony: dict, phase_id: int) -> bool:
    """The build of phase_id was aborted (the colony READY again, its spawn tree `aborted`): an
    abort run again, or one killed after that write, finishes what it left."""
    tree = colony.get("spawn_tree")
    return (
        colony.get("state") != "EXECUTING"
        and colony.get("current_phase") == phase_id
        and isinstance(tree, dict)
        and tree.get("phase") == phase_id
        and tree.get("status") == "aborted"
    )


def abort(phase_id: int, reason: str) -> dict:
    """build-abort: give up the running build; the phase is marked failed. Run again (after a kill
    at any point, or by hand), it finishes what the first left: the worktrees dealt with, any work
    in them kept on branches, and says where."""
    check_phase_id(phase_id)
    reason = inputs.require_text(
        reason, "the reason", MAX_REASON_LENGTH, code="invalid_reason", empty="say why the build is aborted (the reason is empty)"
    ).strip()

    colony = store.read("colony")
    tree = colony.get("spawn_tree")
    again = aborted(colony, phase_id)
    if again:
        phase = plans_rules.find_phase(store.read("plan"), phase_id) or {}
        out = {"name": phase.get("name"), "event": None}
    else:
        out = _abort_build(phase_id, reason)
        store.flush()  # the abort is on disk before the worktrees are dealt with: run again, it finishes them
    ended = worktrees.abandon(tree, "the build was aborted")  # never raises: what it could not do is in its notes
    ended["kept"] += _kept_before(tree, ended["kept"])
    text = (
        f"Phase {phase_id} ({out['name']}) was aborted already: what that abort left is done now"
        if again
        else f"Phase {phase_id} ({out['name']}) aborted: {one_line(reason, 200)}"
    )
    text += f"\nRebuild it with /ant:build {phase_id} (`aether next --build {phase_id}`)."
    text += "".join(f"\n{line}" for line in abort_lines(ended))
    return {
        "phase": phase_id,
        "name": out["name"],
        "phase_status": "failed",
        "state": "READY",
        "reason": reason,
        "event": out["event"],
        "again": again,
        "next": {
            "slash": f"/ant:build {phase_id}",
            "command": f"aether next --build {phase_id}",
            "report": f"aether abort-report {phase_id}",
        },
        "kept": ended["kept"],
        "worktree_notes": ended["notes"],
        "text": text,
    }


def _kept_before(tree, now: list) -> list:
    """The build's results kept on branches before this abort (conflicts, an abort killed half-way)."""
    scope = worktrees.scope_of(tree)
    shown = {k["branch"] for k in now}
    try:
        return [k for k in (worktrees.kept(scope) if scope else []) if k["branch"] not in shown]
    except AetherError:  # worktrees.json unreadable: the abort's own notes say what it could do
        return []


def abort_lines(ended: dict) -> list:
    """What ending a build's worktrees kept, and where (with the commands), and what it could not do."""
    lines = []
    if ended["kept"]:
        lines += ["Results not merged, kept on branches:", *worktrees.render_kept(ended["kept"])]
    if ended["notes"]:
        lines += ["The builders' worktrees:", *(f"  {line}" for line in ended["notes"])]
    return lines
