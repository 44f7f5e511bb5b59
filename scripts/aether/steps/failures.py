"""failure-decide, friction-add and abort-report: load the build's state, apply the failure
ladder (rules.failures; docs/decisions/failure-ladder.md), keep the history in failures.json,
the auto-retry log and the friction records (FR-NNN), and write the abort report.

The ladder, first match wins (`rules.failures.decide`):
 1. breakers over this build's failures (decided, still pending in the wave, and this one):
    retries + debuggers would exceed 10 → abort_phase; one file in more than 2 failing tasks →
    abort_phase (redesign); one normalised error in ≥ 3 tasks, or ≥ 2 tasks of one wave →
    abort_phase (common cause); more than 2 consecutive failed workers in the wave → abort_wave
 2. category security / missing dependency / circular dependency → abort_phase
 3. first failure: confidence ≥ 80 and the fix contained to the task's files → retry, else debug
 4. the retry failed → debug (a builder with patch-only constraints)
 5. the debugger failed or found it UNDIAGNOSABLE → flag (the task maps to a success
    criterion) or skip; the task is failed either way and the build goes on
 6. more than 5 retries + debuggers in the phase adds a warning
"""

from __future__ import annotations

from aether.core import clock
from aether.core.exceptions import AetherError, input_error, state_error
from aether.core.text import clip, one_line
from aether.rules import contracts, spawn_tree
from aether.rules import plans as plans_rules
from aether.rules.failures import (
    HISTORY_TEXT,
    MAX_RETRIES_AND_DEBUGGERS,
    decide,
    failure_item,
    friction_for,
    new_friction,
    normalize_report,
    render_debugger,
    render_retry,
    wave_streak,
)
from aether.state import checkpoints, events, store
from aether.steps import recovery

MAX_HISTORY = 1000  # failure entries kept in failures.json (oldest dropped)
MAX_RETRY_LOG = 500
MAX_ABORTS = 50


# ---------------------------------------------------------------- failure-decide


def _task_text(plan: dict, phase, task: str) -> str:
    """` (the task's description)` for the answer's lines, or "" when the plan has none."""
    for item in plan.get("phases", []):
        if isinstance(item, dict) and item.get("id") == phase:
            for t in item.get("tasks", []):
                if isinstance(t, dict) and str(t.get("id")) == task and t.get("description"):
                    return f" ({one_line(t['description'], 200)})"
    return ""


def _node_for_task(tree: dict, task: str) -> dict:
    """The latest spawn of a task, a failed one first (reviewers aside)."""
    candidates = [n for n in tree["nodes"].values() if task in [str(t) for t in n["tasks"]] and n["role"] != "reviewer"]
    if not candidates:
        raise input_error("unknown_task", f"task {task!r} is not in the spawn tree of this build; name the failed spawn with --worker")
    failed = [n for n in candidates if n["status"] == "failed"]
    pool = failed or candidates
    return max(pool, key=lambda n: (n.get("seq", 0), n["id"]))


def build_history(failures: dict, build_id: str | None) -> list:
    """This build's decided failures, oldest first."""
    return [h for h in failures["history"] if h.get("build") == build_id]


@store.writes("colony", "events", "failures")
def _decide_failure(files, given: dict | None, worker: str | None, maps_to_criterion) -> dict:
    """Decide what follows the spawn's failure and record it (a repeated call answers as before)."""
    failures = files["failures"]
    plan = store.read("plan")  # inside the colony lock: every plan writer holds it too
    tree = spawn_tree.tree_of(files["colony"])
    node, report = _failed_node(tree, worker, given)
    history = build_history(failures, tree.get("id"))
    repeat = _repeat(history, node) if node.get("failure_decided") else None
    if repeat is not None:
        return repeat
    _refuse_closed_build(tree)
    pending = _pending_failures(tree, node)
    said = _criterion_said(plan, tree.get("phase"), report, maps_to_criterion)
    verdict = decide(report, history, pending, node["wave"], wave_streak(tree, node), said)
    entry = _history_entry(failures, tree, node, report, verdict)
    _record_failure(failures, node, entry)
    task_text = _task_text(plan, tree.get("phase"), report["task"])
    result = _answer(entry, verdict)
    result.update(_apply_decision(failures, tree, node, report, verdict, entry, task_text, history, pending))
    events.append(
        files["events"],
        "failure_decided",
        "queen",
        f"task {entry['task']} ({entry['worker']}): {entry['action']} — {one_line(entry['reason'], 200)}",
    )
    result["text"] = _render_decision(result)
    return result


def failure_decide(report_text: str | None, worker: str | None, maps_to_criterion=None) -> dict:
    """failure-decide: record a failure and answer the one thing to do next."""
    given = _given_report(report_text)
    if given is None and worker is None:
        raise input_error("usage_error", "give the failure report (a file or `-`) or --worker <id>")

    return _decide_failure(given, worker, maps_to_criterion)


def _given_report(report_text: str | None) -> dict | None:
    """The piped failure report, normalised (a spawn result's `failure` object counts), or None."""
    if report_text is None:
        return None
    given = contracts.extract_json(report_text, "the failure report")
    if isinstance(given, dict) and isinstance(given.get("failure"), dict) and "error" not in given:
        given = given["failure"]
    return normalize_report(given)


def _failed_node(tree: dict, worker: str | None, given: dict | None) -> tuple[dict, dict]:
    """The failed spawn and its report: --worker's (with its recorded failure unless one is given),
    else the latest spawn of the given report's task."""
    if worker is None:
        assert given is not None  # failure_decide refuses a call with neither
        return _node_for_task(tree, given["task"]), given
    node = spawn_tree.node_of(tree, worker)
    report = given or node.get("failure")
    if report is None:
        raise state_error(
            "no_failure_report",
            f"{worker} is {node['status']} and has no failure on record; record its result with spawn-finish, or pipe the report",
        )
    if given is not None and node["tasks"] and report["task"] not in [str(t) for t in node["tasks"]]:
        raise input_error("unknown_task", f"task {report['task']!r} is not one of {worker}'s tasks ({', '.join(map(str, node['tasks']))})")
    return node, report


def _refuse_closed_build(tree: dict) -> None:
    """A finished or aborted build has nothing more to decide."""
    if tree.get("status") in ("finished", "aborted"):
        phase = tree.get("phase")
        raise state_error(
            f"build_{tree['status']}",
            f"this build of phase {phase} is {tree['status']}: nothing more to decide (`aether abort-report {phase}` shows an abort)",
        )


def _pending_failures(tree: dict, node: dict) -> list:
    """The build's other failed spawns whose failure is not decided yet, as the breakers count them."""
    return [
        failure_item(n["failure"], n["wave"])
        for n in tree["nodes"].values()
        if n["id"] != node["id"] and n["status"] == "failed" and n.get("failure") and not n.get("failure_decided")
    ]


def _criterion_said(plan: dict, phase, report: dict, maps_to_criterion) -> bool | None:
    """Whether the task maps to a success criterion, as the caller, else the report, else the plan says (None: nobody)."""
    said = maps_to_criterion if maps_to_criterion is not None else report.get("maps_to_criterion")
    if said is None:
        said = plans_rules.criterion_said(plans_rules.find_task(plan, report["task"], phase))
    return said


def _history_entry(failures: dict, tree: dict, node: dict, report: dict, verdict: dict) -> dict:
    """The failures.json history entry of this decision (the retry log and the abort take its timestamp)."""
    now = clock.iso()
    return {
        "id": clock.new_id("fail", {h.get("id") for h in failures["history"]}),
        "build": tree.get("id"),
        "phase": tree.get("phase"),
        "wave": node["wave"],
        "worker": node["id"],
        "task": report["task"],
        "caste": report["caste"],
        "error": clip(report["error"], HISTORY_TEXT),
        "root_cause": clip(report["root_cause"], HISTORY_TEXT),
        "suggested_fix": clip(report["suggested_fix"], HISTORY_TEXT),
        "confidence": report["confidence"],
        "fix_scope": report["fix_scope"],
        "files": report["files"],
        "category": report["category"],
        "normalized_error": verdict["normalized_error"],
        "action": verdict["action"],
        "step": verdict["step"],
        "reason": verdict["reason"],
        "timestamp": now,
    }


def _record_failure(failures: dict, node: dict, entry: dict) -> None:
    """Keep the entry, mark the spawn's failure decided, and close the task's pending retry-log entries."""
    failures["history"].append(entry)
    del failures["history"][:-MAX_HISTORY]
    node["failure_decided"] = True
    if node["status"] == "running":
        node["status"] = "failed"
    for log in failures["retry_log"]:
        if log.get("build") == entry["build"] and log.get("task") == entry["task"] and log.get("result") == "pending":
            log["result"] = "failed"


def _answer(entry: dict, verdict: dict) -> dict:
    """The answer's fields every action shares."""
    return {
        "action": entry["action"],
        "reason": entry["reason"],
        "task": entry["task"],
        "worker": entry["worker"],
        "wave": entry["wave"],
        "phase": entry["phase"],
        "attempt": verdict["attempt"],
        "step": verdict["step"],
        "warnings": verdict["warnings"],
        "recovery_spawns": verdict["recovery_spawns"],
        "max_recovery_spawns": MAX_RETRIES_AND_DEBUGGERS,
        "consecutive_failures": verdict["consecutive_failures"],
        "already_decided": False,
    }


def _apply_decision(
    failures: dict, tree: dict, node: dict, report: dict, verdict: dict, entry: dict, task_text: str, history: list, pending: list
) -> dict:
    """Carry the action out on the tree and failures.json; returns the answer's `next` (and a retry's
    or debugger's `context`)."""
    action = entry["action"]
    if action in ("retry", "debug"):
        earlier = [h for h in history if h["task"] == report["task"]]
        return _respawn(failures, tree, node, report, verdict, entry, task_text, earlier)
    if action in ("flag", "skip"):
        return {"next": _fail_task(tree, entry, task_text)}
    if action == "abort_wave":
        return {"next": _abort_wave(tree, entry["wave"])}
    skipped = _skip_planned(tree, None)
    tree["status"] = "aborted"
    _record_abort(failures, tree, report, verdict, entry, task_text, history + pending)
    return {
        "next": {
            "skipped": skipped,
            "command": f"aether abort-report {entry['phase']}",
            "message": "the phase is aborted: show the abort report, then end the build",
        }
    }


def _respawn(failures: dict, tree: dict, node: dict, report: dict, verdict: dict, entry: dict, task_text: str, earlier: list) -> dict:
    """Retry: the worker again with the suggested fix; debug: a patch-only builder. Logs the attempt."""
    if entry["action"] == "retry":
        kind, context = "retry", render_retry(report, task_text)
        spawn = spawn_tree.respawn(tree, node, "retry", context)
    else:
        kind, context = "debugger", render_debugger(report, earlier, task_text)
        spawn = spawn_tree.respawn(tree, node, "debugger", context, caste="builder")
    failures["retry_log"].append(
        {
            "build": entry["build"],
            "phase": entry["phase"],
            "task": report["task"],
            "attempt": verdict["attempt"] + 1,
            "kind": kind,
            "error": one_line(report["error"], 300),
            "fix_applied": one_line(report["suggested_fix"], 300) if kind == "retry" else "",
            "result": "pending",
            "node": spawn["id"],
            "timestamp": entry["timestamp"],
        }
    )
    del failures["retry_log"][:-MAX_RETRY_LOG]
    entry["spawn"] = spawn["id"]
    return {"next": {"spawn": spawn["id"], "caste": spawn["caste"], "command": f"aether spawn-start {spawn['id']}"}, "context": context}


def _fail_task(tree: dict, entry: dict, task_text: str) -> dict:
    """Flag or skip: the task is failed and the build goes on (a flag is shown to the user)."""
    action = entry["action"]
    tree.setdefault("failed_tasks", {})[entry["task"]] = action
    return {
        "task_status": "failed",
        "show_user": action == "flag",
        "message": f"Task {entry['task']}{task_text} "
        + ("is flagged for your review" if action == "flag" else "was skipped")
        + f": {entry['reason']}",
    }


def _abort_wave(tree: dict, wave) -> dict:
    """The wave's planned spawns are skipped and the wave is recorded as aborted."""
    skipped = _skip_planned(tree, wave)
    tree.setdefault("aborted_waves", [])
    if wave not in tree["aborted_waves"]:
        tree["aborted_waves"].append(wave)
    return {
        "skipped": skipped,
        "message": f"wave {wave} stops here: no more retries or debuggers in "
        f"it; run wave-conflicts and review-needed for it, then go on with the next wave",
    }


def _record_abort(failures: dict, tree: dict, report: dict, verdict: dict, entry: dict, task_text: str, others: list) -> None:
    """The phase abort abort-report shows. others: this build's other failures (decided and pending)."""
    touched = sorted(
        {f for n in tree["nodes"].values() for f in n.get("files_created", []) + n.get("files_modified", [])}
        | {f for h in others for f in h.get("files", [])}
        | set(report["files"])
    )
    failures["aborts"].append(
        {
            "build": entry["build"],
            "phase": entry["phase"],
            "wave": entry["wave"],
            "task": report["task"],
            "task_text": task_text,
            "reason": entry["reason"],
            "report": report,
            "failures": len(others) + 1,
            "recovery_spawns": verdict["recovery_spawns"],
            "files_touched": touched[:200],
            "timestamp": entry["timestamp"],
            "tag": None,
            "tag_error": None,
        }
    )
    del failures["aborts"][:-MAX_ABORTS]


def _render_decision(result: dict) -> str:
    lines = [f"Task {result['task']} ({result['worker']}): {result['action'].upper()} — {result['reason']}"]
    lines += [f"WARNING: {w}" for w in result.get("warnings", [])]
    nxt = result.get("next") or {}
    if nxt.get("message"):
        lines.append(nxt["message"])
    if nxt.get("command"):
        lines.append(f"Next: {nxt['command']}")
    return "\n".join(lines)


def _repeat(history: list, node: dict) -> dict | None:
    """The answer already given for this spawn's failure (a repeated call decides nothing new)."""
    entry = next((h for h in reversed(history) if h.get("worker") == node["id"]), None)
    if entry is None:
        return None
    result = {
        "action": entry["action"],
        "reason": entry["reason"],
        "task": entry["task"],
        "worker": node["id"],
        "wave": entry.get("wave"),
        "phase": entry.get("phase"),
        "step": entry.get("step"),
        "already_decided": True,
        "warnings": [],
    }
    if entry.get("spawn"):
        result["next"] = {"spawn": entry["spawn"], "command": f"aether spawn-start {entry['spawn']}"}
    result["text"] = _render_decision(result)
    return result


def _skip_planned(tree: dict, wave) -> list:
    skipped = []
    for n in tree["nodes"].values():
        if n["status"] == "planned" and (wave is None or n["wave"] == wave):
            n["status"] = "skipped"
            skipped.append(n["id"])
    return skipped


# ---------------------------------------------------------------- recoveries and friction


@store.writes("colony", "events", "failures")
def _add_friction(files, task: str, resolution: str | None, pattern: str | None) -> dict:
    """Create or complete the friction record of a task this build recovered."""
    tree = spawn_tree.tree_of(files["colony"])
    failures = files["failures"]
    build_id = tree.get("id")
    if not any(h.get("build") == build_id and h.get("task") == task for h in failures["history"]):
        raise state_error(
            "no_failure_recorded",
            f"task {task!r} has no failure in this build; friction records are for tasks a retry or debugger recovered",
        )
    record = friction_for(failures, build_id, task)
    created = record is None
    if record is None:
        record = new_friction(failures, build_id, tree.get("phase"), task, resolution or "", None)
    elif resolution:
        record["resolution"] = one_line(resolution, 500)
    if pattern:
        record["pattern"] = one_line(pattern, 500)
    if created:
        events.append(files["events"], "friction_recorded", "queen", f"{record['id']}: task {task} recovered")
    text = "\n".join(
        [
            f"{record['id']}: auto-recovery needed for task {task}",
            f"- Phase: {record['phase']}",
            f"- Attempts: {record['attempts']}",
            f"- Root cause: {record['root_cause'] or '-'}",
            f"- Resolution: {record['resolution'] or '-'}",
            f"- Pattern: {record['pattern'] or '-'}",
        ]
    )
    return {**record, "created": created, "text": text}


def friction_add(task: str, resolution: str | None, pattern: str | None) -> dict:
    """friction-add: record (or complete) the FR-NNN record of a task a retry or debugger recovered."""

    task = task.strip()

    return _add_friction(task, resolution, pattern)


# ---------------------------------------------------------------- abort-report


@store.writes("failures", "events")
def _record_abort_tag(files, phase: int, abort: dict, tag: str | None, tag_error: str | None) -> None:
    """Keep the abort tag (or why there is none) on the abort and log the phase's abort once."""
    for a in reversed(files["failures"]["aborts"]):
        if a.get("phase") == phase and a.get("timestamp") == abort["timestamp"]:
            a["tag"], a["tag_error"] = tag, tag_error
            break
    events.append(
        files["events"],
        "phase_aborted",
        "queen",
        f"phase {phase} aborted: {one_line(abort['reason'], 200)}" + (f" (tag {tag})" if tag else ""),
    )


def abort_report(phase: int) -> dict:
    """abort-report: the report of the phase's latest abort; creates the abort tag once (in git)."""

    found = [a for a in store.read("failures")["aborts"] if a.get("phase") == phase]
    if not found:
        raise state_error("no_abort", f"phase {phase} has no recorded abort (failure-decide records one when it answers abort_phase)")
    abort = found[-1]
    tag, tag_error = abort.get("tag"), abort.get("tag_error")
    if tag is None and tag_error is None:
        try:
            tag = checkpoints.tag_abort(phase, one_line(abort["reason"], 300))
            tag_error = None if tag else "not a git repository"
        except AetherError as exc:
            tag_error = exc.message

        _record_abort_tag(phase, abort, tag, tag_error)
    try:
        checkpoint = checkpoints.latest(phase)
    except AetherError:
        checkpoint = None
    report = abort["report"]
    lines = [
        f"AETHER BUILD ABORTED — phase {phase}",
        f"Task:   {abort['task']}{abort.get('task_text', '')}",
        f"Reason: {abort['reason']}",
        "",
        "Failure details:",
    ]
    lines += [f"  {line}" for line in report["error"].splitlines()[:40]]
    lines += ["", "Investigation:"]
    lines += [
        f"  - {one_line(h['hypothesis'], 300)}: {one_line(h['result'], 300) or '(untested)'}" for h in report.get("hypotheses", [])
    ] or ["  (no hypotheses reported)"]
    lines += [
        f"Root cause: {one_line(report.get('root_cause'), 600) or '(not identified)'}",
        f"Suggested fix ({report.get('confidence', 0)}% confident): {one_line(report.get('suggested_fix'), 600) or '(none given)'}",
        f"Failures in this build: {abort['failures']} (retries + debuggers: {abort['recovery_spawns']})",
        "",
    ]

    retries = recovery.retry_log(phase, abort.get("build"))
    if retries:
        lines += ["Auto-retry log:"] + ["  " + line for line in recovery.render_retry_log(retries)] + [""]
    options = recovery.options(phase)
    lines += ["Recovery options:"]
    lines += recovery.render_options(options)
    lines += [
        "  (Start from the suggested fix; steer the next attempt with /ant:redirect or /ant:focus if it helps.)",
        "",
        "Files to review:",
    ]
    lines += [f"  - {f}" for f in abort.get("files_touched", [])[:50]] or ["  (none recorded)"]
    lines += ["", "Git state:"]
    if checkpoint:
        lines.append(f"  Last good checkpoint: {checkpoint.get('ref')} ({str(checkpoint.get('commit', ''))[:12]})")
    else:
        lines.append("  Last good checkpoint: none recorded")
    lines.append(f"  Abort tag: {tag}" if tag else f"  Abort tag: none ({tag_error})")
    return {
        "phase": phase,
        "task": abort["task"],
        "reason": abort["reason"],
        "report": report,
        "files_touched": abort.get("files_touched", []),
        "failures": abort["failures"],
        "recovery_spawns": abort["recovery_spawns"],
        "checkpoint": checkpoint,
        "tag": tag,
        "tag_error": tag_error,
        "timestamp": abort["timestamp"],
        "retry_log": retries,
        "recovery": options,
        "text": "\n".join(lines),
    }
