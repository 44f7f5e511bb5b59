"""The failure policy: what to do when a task fails (seed 000 governs the task, seed 002 gives the
report, the retry gate and the phase breakers), the auto-retry log, friction records (FR-NNN)
and the abort report. History lives in failures.json, one entry per decided failure.

The ladder, first match wins (`decide`):
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

from aether import clock, events, store
from aether.errors import input_error, state_error

RETRY_MIN_CONFIDENCE = 80  # percent; below it a blind retry is skipped for the debugger
MAX_RECOVERY_SPAWNS = 10  # retries + debuggers per phase build; one more aborts the phase
WARN_RECOVERY_SPAWNS = 5  # more than this many warns
MAX_CONSECUTIVE_WAVE_FAILURES = 2  # more consecutive failed workers in a wave abort the wave
MAX_FAILING_TASKS_PER_FILE = 2  # more failing tasks on one file abort the phase (redesign)
COMMON_ERROR_TASKS_PHASE = 3  # tasks of the phase failing with one normalised error
COMMON_ERROR_TASKS_WAVE = 2  # … or this many in one wave: abort with that common cause
ABORT_CATEGORIES = {
    "security": "a security issue cannot be fixed automatically; it needs a security review",
    "missing_dependency": "a prerequisite (from an earlier phase or outside) is missing",
    "circular_dependency": "the tasks depend on each other in a circle; the wave structure is broken",
}
CATEGORY_ALIASES = {
    "security_vulnerability": "security", "security_issue": "security", "vulnerability": "security",
    "dependency_missing": "missing_dependency", "missing_dep": "missing_dependency",
    "missing_prerequisite": "missing_dependency", "circular": "circular_dependency",
    "dependency_cycle": "circular_dependency", "cyclic_dependency": "circular_dependency",
    "circular_import": "circular_dependency",
}
MAX_HISTORY = 1000  # failure entries kept in failures.json (oldest dropped)
HISTORY_TEXT = 500  # characters of an error, root cause or fix kept in a history entry
MAX_RETRY_LOG = 500
MAX_FRICTION = 200
MAX_ABORTS = 50
MAX_HYPOTHESES = 20
NORMALIZED_ERROR_LENGTH = 300


# ---------------------------------------------------------------- the report


def _confidence(value, lenient: bool) -> float:
    import math

    raw = value
    if isinstance(value, str):
        value = value.strip().rstrip("%").strip()
        try:
            value = float(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 100:
        if lenient:
            return 0
        raise input_error("invalid_report", f"failure report: `confidence` must be a number 0–100, found {raw!r}")
    return round(float(value), 1) if value != int(value) else int(value)


def _fix_scope(value) -> str:
    if not isinstance(value, str):
        return "unknown"
    text = value.strip().lower()
    if any(word in text for word in ("other", "outside", "requires", "beyond", "not contained", "external")):
        return "other_files"
    if "contain" in text or text in ("task_files", "task files", "local", "self-contained"):
        return "contained"
    return "unknown"


def normalize_category(value) -> str:
    if not isinstance(value, str) or not value.strip():
        return "unknown"
    name = "_".join(value.strip().lower().replace("-", " ").replace("/", " ").split())[:64]
    return CATEGORY_ALIASES.get(name, name)


def normalize_error(text: str) -> str:
    """The error with its volatile parts (numbers, hex ids, spacing, case) taken out, so that
    the same failure in two tasks compares equal."""
    import re

    flat = text[:2000].lower()
    flat = re.sub(r"0x[0-9a-f]+|\b[0-9a-f]{7,40}\b", "#", flat)
    flat = re.sub(r"\d+", "#", flat)
    return " ".join(flat.split())[:NORMALIZED_ERROR_LENGTH]


def normalize_report(report, lenient: bool = False) -> dict:
    """A worker's failure report, checked and in one shape (see docs/contracts.md)."""
    from aether import spawning

    if not isinstance(report, dict):
        raise input_error("invalid_report", f"a failure report must be a JSON object, found {type(report).__name__}")
    what = "failure report"
    task = report.get("task", report.get("task_id"))
    if isinstance(task, bool) or not isinstance(task, (str, int, float)) or not str(task).strip():
        raise input_error("invalid_report", f"{what}: `task` (the task id) is missing")
    error = spawning.text_field(report, "error", what, required=not lenient) or "(no error text)"
    hypotheses = []
    raw_h = report.get("hypotheses") or report.get("investigation") or []
    if isinstance(raw_h, (str, dict)):
        raw_h = [raw_h]
    if not isinstance(raw_h, list):
        raise input_error("invalid_report", f"{what}: `hypotheses` must be an array")
    for item in raw_h[:MAX_HYPOTHESES]:
        if isinstance(item, dict):
            hypotheses.append({"hypothesis": spawning.one_line(item.get("hypothesis", ""), 500),
                               "result": spawning.one_line(item.get("result", ""), 500)})
        elif isinstance(item, str) and item.strip():
            hypotheses.append({"hypothesis": spawning.one_line(item, 500), "result": ""})
    maps = report.get("maps_to_criterion")
    attempt = report.get("attempt")
    out = {
        "task": spawning.clip(str(task).strip(), 64),
        "caste": spawning.normalize_caste(report.get("caste")) or "builder",
        "attempt": attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0 else None,
        "error": error,
        "root_cause": spawning.text_field(report, "root_cause", what),
        "suggested_fix": spawning.text_field(report, "suggested_fix", what),
        "confidence": _confidence(report.get("confidence", 0), lenient),
        "fix_scope": _fix_scope(report.get("fix_scope")),
        "files": [spawning.norm_path(f) for f in spawning.str_list(report.get("files"), f"{what}: files")],
        "category": normalize_category(report.get("category")),
        "hypotheses": hypotheses,
        "maps_to_criterion": maps if isinstance(maps, bool) else None,
        "undiagnosable": bool(report.get("undiagnosable")) or "UNDIAGNOSABLE" in error.upper(),
    }
    return out


# ---------------------------------------------------------------- the ladder (pure)


def _ladder_step(report: dict, prior_actions: set, maps_to_criterion) -> tuple:
    """Steps 2–5 for one task: (action, step, reason). maps_to_criterion: True/False when someone
    said, None when nobody did (plans.maps_to_criterion decides)."""
    from aether import plans

    category = report["category"]
    if category in ABORT_CATEGORIES:
        return "abort_phase", 2, f"category {category}: {ABORT_CATEGORIES[category]}"
    if prior_actions & {"debug", "flag", "skip"}:
        why = "the debugger found it UNDIAGNOSABLE" if report["undiagnosable"] else "the debugger could not fix it"
        if not plans.maps_to_criterion(None, maps_to_criterion):
            return "skip", 5, f"{why}; a supporting task is skipped (marked failed) and the build continues"
        tail = ("it maps to a success criterion" if maps_to_criterion
                else "the plan does not say it is only a supporting task")
        return "flag", 5, f"{why}; the task is flagged to the user ({tail}), marked failed, and the build continues"
    if "retry" in prior_actions:
        return "debug", 4, "the retry failed too: a debugger ant patches the code"
    if report["confidence"] >= RETRY_MIN_CONFIDENCE and report["fix_scope"] == "contained":
        return "retry", 3, (f"first failure with confidence {report['confidence']}% ≥ {RETRY_MIN_CONFIDENCE}% "
                            f"and a fix contained to the task's files: one retry with the suggested fix")
    if report["fix_scope"] != "contained":
        why = "the fix needs files outside the task" if report["fix_scope"] == "other_files" else "the fix scope is unknown"
    else:
        why = f"confidence {report['confidence']}% is below {RETRY_MIN_CONFIDENCE}%"
    return "debug", 3, f"first failure, but {why}: no blind retry, a debugger ant diagnoses it"


def decide(report: dict, history: list, pending: list, wave, streak: int, maps_to_criterion=None) -> dict:
    """One action for a normalised failure report.

    history: this build's decided failures ({task, wave, files, normalized_error, action});
    pending: other failures of this build not decided yet (same keys, no action);
    streak: consecutive failed workers in this wave, this one included."""
    task = report["task"]
    prior_actions = {h["action"] for h in history if h["task"] == task}
    action, step, reason = _ladder_step(report, prior_actions, maps_to_criterion)
    recovery = sum(1 for h in history if h["action"] in ("retry", "debug"))
    this = {"task": task, "wave": wave, "files": report["files"], "normalized_error": normalize_error(report["error"])}
    everything = history + pending + [this]
    breaker = None
    if action in ("retry", "debug") and recovery + 1 > MAX_RECOVERY_SPAWNS:
        breaker = ("abort_phase", f"this would be retry/debugger number {recovery + 1} in the phase; more than "
                                  f"{MAX_RECOVERY_SPAWNS} aborts it")
    if breaker is None:
        by_file: dict = {}
        for item in everything:
            for path in item["files"]:
                by_file.setdefault(path, set()).add(item["task"])
        crowded = sorted((f for f, tasks in by_file.items() if len(tasks) > MAX_FAILING_TASKS_PER_FILE),
                         key=lambda f: (-len(by_file[f]), f))
        if crowded:
            f = crowded[0]
            breaker = ("abort_phase", f"{f} is involved in {len(by_file[f])} failing tasks "
                                      f"({', '.join(sorted(by_file[f]))}): the design around it needs rethinking")
    if breaker is None:
        phase_groups: dict = {}
        wave_groups: dict = {}
        for item in everything:
            phase_groups.setdefault(item["normalized_error"], set()).add(item["task"])
            if item["wave"] is not None:
                wave_groups.setdefault((item["wave"], item["normalized_error"]), set()).add(item["task"])
        for err, tasks in sorted(phase_groups.items()):
            if len(tasks) >= COMMON_ERROR_TASKS_PHASE:
                breaker = ("abort_phase", f"{len(tasks)} tasks ({', '.join(sorted(tasks))}) fail with the same error "
                                          f"— a common cause: {err[:160]}")
                break
        if breaker is None:
            for (w, err), tasks in sorted(wave_groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
                if len(tasks) >= COMMON_ERROR_TASKS_WAVE:
                    breaker = ("abort_phase", f"{len(tasks)} tasks of wave {w} ({', '.join(sorted(tasks))}) fail with "
                                              f"the same error — a common cause: {err[:160]}")
                    break
    if breaker is None and streak > MAX_CONSECUTIVE_WAVE_FAILURES:
        breaker = ("abort_wave", f"{streak} workers of wave {wave} failed in a row (more than "
                                 f"{MAX_CONSECUTIVE_WAVE_FAILURES}): the wave stops")
    if breaker is not None:
        action, reason = breaker
        step = 1
    after = recovery + (1 if action in ("retry", "debug") else 0)
    warnings = []
    if after > WARN_RECOVERY_SPAWNS:
        warnings.append(f"{after} retries/debuggers in this phase (more than {WARN_RECOVERY_SPAWNS}); "
                        f"{MAX_RECOVERY_SPAWNS} is the most before the phase aborts")
    return {"action": action, "step": step, "reason": reason, "warnings": warnings,
            "attempt": sum(1 for h in history if h["task"] == task) + 1,
            "recovery_spawns": after, "max_recovery_spawns": MAX_RECOVERY_SPAWNS, "consecutive_failures": streak,
            "normalized_error": this["normalized_error"]}


# ---------------------------------------------------------------- rendered contexts


def render_retry(report: dict, task_text: str) -> str:
    return "\n".join([
        "--- RETRY CONTEXT ---",
        f"Task {report['task']}{task_text} failed once. This is its one retry; if it fails again a debugger ant takes over.",
        f"Previous error: {report['error']}",
        f"Root cause: {report['root_cause'] or '(not given)'}",
        f"Suggested fix ({report['confidence']}% confident): {report['suggested_fix'] or '(not given)'}",
        "Apply the suggested fix inside your own files, then run the task's checks again before you report.",
        "--- END RETRY CONTEXT ---",
    ])


def render_debugger(report: dict, earlier: list, task_text: str) -> str:
    errors = [h["error"] for h in earlier] + [report["error"]]
    first = errors[0]
    second = errors[1] if len(errors) > 1 else "(none: there was no blind retry — the first report was not confident or contained enough)"
    files = sorted({f for h in earlier for f in h.get("files", [])} | set(report["files"]))
    return "\n".join([
        "--- DEBUGGER ANT ---",
        f"Task {report['task']}{task_text} failed {len(errors)} time(s). Diagnose the failure and fix it.",
        f"Caste that failed: {report['caste']}",
        f"First attempt error: {first}",
        f"Second attempt error: {second}",
        f"Reported root cause: {report['root_cause'] or '(not given)'}",
        "Files involved: " + (", ".join(files) or "(not given)"),
        "Mission: read the files, find the root cause, make the smallest patch that fixes it, run the verification, report.",
        "Constraints:",
        "- Patch the code that is there; never rewrite it from scratch.",
        "- Keep the original worker's approach and intent.",
        "- When a test fails, change the code until it passes; change the test's expectation only if the task was to write that test.",
        "- If you cannot find the cause, answer UNDIAGNOSABLE with your analysis.",
        "--- END DEBUGGER ANT ---",
    ])


# ---------------------------------------------------------------- failure-decide


def _task_text(plan: dict, phase, task: str) -> str:
    from aether import spawning

    for item in plan.get("phases", []):
        if isinstance(item, dict) and item.get("id") == phase:
            for t in item.get("tasks", []):
                if isinstance(t, dict) and str(t.get("id")) == task and t.get("description"):
                    return f" ({spawning.one_line(t['description'], 200)})"
    return ""


def _streak(tree: dict, node: dict) -> int:
    from aether import spawning

    finished = sorted((n for n in tree["nodes"].values()
                       if n["wave"] == node["wave"] and n["role"] != "reviewer" and "seq" in n
                       and n["status"] in ("completed", "failed")), key=lambda n: -n["seq"])
    origins = []
    for n in finished:
        if n["status"] == "completed":
            break
        origin = spawning.origin_of(tree, n)
        if origin not in origins:
            origins.append(origin)
    if spawning.origin_of(tree, node) not in origins:
        origins.append(spawning.origin_of(tree, node))
    return len(origins)


def _node_for_task(tree: dict, task: str) -> dict:
    candidates = [n for n in tree["nodes"].values() if task in [str(t) for t in n["tasks"]] and n["role"] != "reviewer"]
    if not candidates:
        raise input_error("unknown_task", f"task {task!r} is not in the spawn tree of this build; "
                                          f"name the failed spawn with --worker")
    failed = [n for n in candidates if n["status"] == "failed"]
    pool = failed or candidates
    return max(pool, key=lambda n: (n.get("seq", 0), n["id"]))


def build_history(failures: dict, build_id: str) -> list:
    return [h for h in failures["history"] if h.get("build") == build_id]


def failure_decide(report_text: str | None, worker: str | None, maps_to_criterion=None) -> dict:
    """failure-decide: record a failure and answer the one thing to do next."""
    from aether import plans, spawning

    given = None
    if report_text is not None:
        given = spawning.extract_json(report_text, "the failure report")
        if isinstance(given, dict) and isinstance(given.get("failure"), dict) and "error" not in given:
            given = given["failure"]
        given = normalize_report(given)
    if given is None and worker is None:
        raise input_error("usage_error", "give the failure report (a file or `-`) or --worker <id>")

    def change(files):
        colony, failures = files["colony"], files["failures"]
        plan = store.read("plan")  # inside the colony lock: every plan writer holds it too
        tree = spawning.tree_of(colony)
        if worker is not None:
            node = spawning.node_of(tree, worker)
            report = given or node.get("failure")
            if report is None:
                raise state_error("no_failure_report", f"{worker} is {node['status']} and has no failure on record; "
                                                       f"record its result with spawn-finish, or pipe the report")
            if given is not None and node["tasks"] and report["task"] not in [str(t) for t in node["tasks"]]:
                raise input_error("unknown_task", f"task {report['task']!r} is not one of {worker}'s tasks "
                                                  f"({', '.join(map(str, node['tasks']))})")
        else:
            report = given
            node = _node_for_task(tree, report["task"])
        build_id, phase, wave = tree.get("id"), tree.get("phase"), node["wave"]
        history = build_history(failures, build_id)
        if node.get("failure_decided"):
            repeat = _repeat(history, node)
            if repeat is not None:
                return repeat
        if tree.get("status") in ("finished", "aborted"):
            raise state_error(f"build_{tree['status']}", f"this build of phase {phase} is {tree['status']}: nothing "
                                                         f"more to decide (`aether abort-report {phase}` shows an abort)")
        pending = [{"task": n["failure"]["task"], "wave": n["wave"], "files": n["failure"]["files"],
                    "normalized_error": normalize_error(n["failure"]["error"])}
                   for n in tree["nodes"].values()
                   if n["id"] != node["id"] and n["status"] == "failed" and n.get("failure")
                   and not n.get("failure_decided")]
        said = maps_to_criterion if maps_to_criterion is not None else report.get("maps_to_criterion")
        if said is None:
            said = plans.criterion_said(plans.find_task(plan, report["task"], phase))
        verdict = decide(report, history, pending, wave, _streak(tree, node), said)
        action = verdict["action"]
        now = clock.iso()
        entry = {"id": clock.new_id("fail", {h.get("id") for h in failures["history"]}), "build": build_id,
                 "phase": phase, "wave": wave, "worker": node["id"], "task": report["task"], "caste": report["caste"],
                 "error": spawning.clip(report["error"], HISTORY_TEXT), "root_cause": spawning.clip(report["root_cause"], HISTORY_TEXT),
                 "suggested_fix": spawning.clip(report["suggested_fix"], HISTORY_TEXT), "confidence": report["confidence"],
                 "fix_scope": report["fix_scope"], "files": report["files"], "category": report["category"],
                 "normalized_error": verdict["normalized_error"], "action": action, "step": verdict["step"],
                 "reason": verdict["reason"], "timestamp": now}
        earlier = [h for h in history if h["task"] == report["task"]]
        failures["history"].append(entry)
        del failures["history"][:-MAX_HISTORY]
        node["failure_decided"] = True
        if node["status"] == "running":
            node["status"] = "failed"
        for log in failures["retry_log"]:
            if log.get("build") == build_id and log.get("task") == report["task"] and log.get("result") == "pending":
                log["result"] = "failed"
        task_text = _task_text(plan, phase, report["task"])
        result = {"action": action, "reason": verdict["reason"], "task": report["task"], "worker": node["id"],
                  "wave": wave, "phase": phase, "attempt": verdict["attempt"], "step": verdict["step"],
                  "warnings": verdict["warnings"], "recovery_spawns": verdict["recovery_spawns"],
                  "max_recovery_spawns": MAX_RECOVERY_SPAWNS, "consecutive_failures": verdict["consecutive_failures"],
                  "already_decided": False}
        if action in ("retry", "debug"):
            if action == "retry":
                context = render_retry(report, task_text)
                spawn = spawning.respawn(tree, node, "retry", context)
            else:
                context = render_debugger(report, earlier, task_text)
                spawn = spawning.respawn(tree, node, "debugger", context, caste="builder")
            failures["retry_log"].append({
                "build": build_id, "phase": phase, "task": report["task"], "attempt": verdict["attempt"] + 1,
                "kind": "retry" if action == "retry" else "debugger", "error": spawning.one_line(report["error"], 300),
                "fix_applied": spawning.one_line(report["suggested_fix"], 300) if action == "retry" else "",
                "result": "pending", "node": spawn["id"], "timestamp": now})
            del failures["retry_log"][:-MAX_RETRY_LOG]
            entry["spawn"] = spawn["id"]
            result["next"] = {"spawn": spawn["id"], "caste": spawn["caste"], "command": f"aether spawn-start {spawn['id']}"}
            result["context"] = context
        elif action in ("flag", "skip"):
            tree.setdefault("failed_tasks", {})[report["task"]] = action
            result["next"] = {"task_status": "failed", "show_user": action == "flag",
                              "message": f"Task {report['task']}{task_text} "
                                         + ("is flagged for your review" if action == "flag" else "was skipped")
                                         + f": {verdict['reason']}"}
        elif action == "abort_wave":
            skipped = _skip_planned(tree, wave)
            tree.setdefault("aborted_waves", [])
            if wave not in tree["aborted_waves"]:
                tree["aborted_waves"].append(wave)
            result["next"] = {"skipped": skipped, "message": f"wave {wave} stops here: no more retries or debuggers in "
                              f"it; run wave-conflicts and review-needed for it, then go on with the next wave"}
        else:  # abort_phase
            skipped = _skip_planned(tree, None)
            tree["status"] = "aborted"
            touched = sorted({f for n in tree["nodes"].values() for f in n.get("files_created", []) + n.get("files_modified", [])}
                             | {f for h in history + pending for f in h.get("files", [])} | set(report["files"]))
            failures["aborts"].append({
                "build": build_id, "phase": phase, "wave": wave, "task": report["task"], "task_text": task_text,
                "reason": verdict["reason"], "report": report, "failures": len(history) + len(pending) + 1,
                "recovery_spawns": verdict["recovery_spawns"], "files_touched": touched[:200],
                "timestamp": now, "tag": None, "tag_error": None})
            del failures["aborts"][:-MAX_ABORTS]
            result["next"] = {"skipped": skipped, "command": f"aether abort-report {phase}",
                              "message": "the phase is aborted: show the abort report, then end the build"}
        events.append(files["events"], "failure_decided", "queen",
                      f"task {report['task']} ({node['id']}): {action} — {spawning.one_line(verdict['reason'], 200)}")
        result["text"] = _render_decision(result)
        return result

    return store.update_many(["colony", "events", "failures"], change)


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
    result = {"action": entry["action"], "reason": entry["reason"], "task": entry["task"], "worker": node["id"],
              "wave": entry.get("wave"), "phase": entry.get("phase"), "step": entry.get("step"),
              "already_decided": True, "warnings": []}
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


def _friction_pattern(failures: dict, build_id: str, task: str, normalized: str | None) -> str | None:
    if not normalized:
        return None
    seen = [h for h in failures["history"] if h.get("normalized_error") == normalized
            and not (h.get("build") == build_id and h.get("task") == task)]
    if not seen:
        return None
    tasks = sorted({f"{h.get('phase')}/{h.get('task')}" for h in seen})[:5]
    return f"the same error was seen {len(seen)} more time(s) (phase/task {', '.join(tasks)})"


def _new_friction(failures: dict, build_id: str, phase, task: str, resolution: str, node_id: str | None) -> dict:
    from aether import spawning

    failed = [h for h in failures["history"] if h.get("build") == build_id and h.get("task") == task]
    last = failed[-1] if failed else {}
    number = failures.get("next_friction", 1)
    failures["next_friction"] = number + 1
    record = {"id": f"FR-{number:03d}", "build": build_id, "phase": phase, "task": task,
              "attempts": len(failed) + 1, "root_cause": spawning.one_line(last.get("root_cause") or last.get("error", ""), 500),
              "resolution": spawning.one_line(resolution, 500),
              "pattern": _friction_pattern(failures, build_id, task, last.get("normalized_error")),
              "node": node_id, "timestamp": clock.iso()}
    failures["friction"].append(record)
    del failures["friction"][:-MAX_FRICTION]
    return record


def record_recovery(failures: dict, tree: dict, node: dict, status: str, data: dict) -> dict | None:
    """spawn-finish of a retry or debugger: close its retry-log entry; a recovery gets a friction record."""
    from aether import spawning

    resolution = data.get("diagnosis") or data.get("summary") or ""
    for log in failures["retry_log"]:
        if log.get("node") == node["id"] and log.get("result") == "pending":
            log["result"] = "recovered" if status == "completed" else "failed"
            if node["role"] == "debugger" and resolution:
                log["fix_applied"] = spawning.one_line(resolution, 300)
    if status != "completed":
        return None
    for task in node["tasks"]:
        tree.get("failed_tasks", {}).pop(str(task), None)
    task = next((h["task"] for h in reversed(failures["history"])
                 if h.get("build") == tree.get("id") and h.get("worker") in (node.get("parent"), node["id"])),
                str(node["tasks"][0]) if node["tasks"] else node["id"])
    existing = _friction_for(failures, tree.get("id"), task)
    if existing:
        return existing
    return _new_friction(failures, tree.get("id"), tree.get("phase"), task,
                         resolution or f"recovered by {node['role']} {node['id']}", node["id"])


def _friction_for(failures: dict, build_id, task: str) -> dict | None:
    return next((f for f in failures["friction"] if f.get("build") == build_id and f.get("task") == task), None)


def friction_add(task: str, resolution: str | None, pattern: str | None) -> dict:
    """friction-add: record (or complete) the FR-NNN record of a task a retry or debugger recovered."""
    from aether import spawning

    task = task.strip()

    def change(files):
        tree = spawning.tree_of(files["colony"])
        failures = files["failures"]
        build_id = tree.get("id")
        if not any(h.get("build") == build_id and h.get("task") == task for h in failures["history"]):
            raise state_error("no_failure_recorded", f"task {task!r} has no failure in this build; friction records "
                                                     f"are for tasks a retry or debugger recovered")
        record = _friction_for(failures, build_id, task)
        created = record is None
        if created:
            record = _new_friction(failures, build_id, tree.get("phase"), task, resolution or "", None)
        elif resolution:
            record["resolution"] = spawning.one_line(resolution, 500)
        if pattern:
            record["pattern"] = spawning.one_line(pattern, 500)
        if created:
            events.append(files["events"], "friction_recorded", "queen", f"{record['id']}: task {task} recovered")
        text = "\n".join([f"{record['id']}: auto-recovery needed for task {task}",
                          f"- Phase: {record['phase']}", f"- Attempts: {record['attempts']}",
                          f"- Root cause: {record['root_cause'] or '-'}", f"- Resolution: {record['resolution'] or '-'}",
                          f"- Pattern: {record['pattern'] or '-'}"])
        return {**record, "created": created, "text": text}

    return store.update_many(["colony", "events", "failures"], change)


# ---------------------------------------------------------------- abort-report


def abort_report(phase: int) -> dict:
    """abort-report: the report of the phase's latest abort; creates the abort tag once (in git)."""
    from aether import checkpoints, spawning
    from aether.errors import AetherError

    found = [a for a in store.read("failures")["aborts"] if a.get("phase") == phase]
    if not found:
        raise state_error("no_abort", f"phase {phase} has no recorded abort (failure-decide records one when it "
                                      f"answers abort_phase)")
    abort = found[-1]
    tag, tag_error = abort.get("tag"), abort.get("tag_error")
    if tag is None and tag_error is None:
        try:
            tag = checkpoints.tag_abort(phase, spawning.one_line(abort["reason"], 300))
            tag_error = None if tag else "not a git repository"
        except AetherError as exc:
            tag_error = exc.message

        def change(files):
            for a in reversed(files["failures"]["aborts"]):
                if a.get("phase") == phase and a.get("timestamp") == abort["timestamp"]:
                    a["tag"], a["tag_error"] = tag, tag_error
                    break
            events.append(files["events"], "phase_aborted", "queen",
                          f"phase {phase} aborted: {spawning.one_line(abort['reason'], 200)}"
                          + (f" (tag {tag})" if tag else ""))

        store.update_many(["failures", "events"], change)
    try:
        checkpoint = checkpoints.latest(phase)
    except AetherError:
        checkpoint = None
    report = abort["report"]
    lines = [f"AETHER BUILD ABORTED — phase {phase}",
             f"Task:   {abort['task']}{abort.get('task_text', '')}",
             f"Reason: {abort['reason']}", "", "Failure details:"]
    lines += [f"  {line}" for line in report["error"].splitlines()[:40]]
    lines += ["", "Investigation:"]
    lines += [f"  - {h['hypothesis']}: {h['result'] or '(untested)'}" for h in report.get("hypotheses", [])] or ["  (no hypotheses reported)"]
    lines += [f"Root cause: {report.get('root_cause') or '(not identified)'}",
              f"Suggested fix ({report.get('confidence', 0)}% confident): {report.get('suggested_fix') or '(none given)'}",
              f"Failures in this build: {abort['failures']} (retries + debuggers: {abort['recovery_spawns']})", ""]
    from aether import recovery

    retries = recovery.retry_log(phase, abort.get("build"))
    if retries:
        lines += ["Auto-retry log:"] + ["  " + line for line in recovery.render_retry_log(retries)] + [""]
    options = recovery.options(phase)
    lines += ["Recovery options:"]
    lines += recovery.render_options(options)
    lines += ["  (Start from the suggested fix; steer the next attempt with /ant:redirect or /ant:focus if it helps.)",
              "", "Files to review:"]
    lines += [f"  - {f}" for f in abort.get("files_touched", [])[:50]] or ["  (none recorded)"]
    lines += ["", "Git state:"]
    if checkpoint:
        lines.append(f"  Last good checkpoint: {checkpoint.get('ref')} ({str(checkpoint.get('commit', ''))[:12]})")
    else:
        lines.append("  Last good checkpoint: none recorded")
    lines.append(f"  Abort tag: {tag}" if tag else f"  Abort tag: none ({tag_error})")
    return {"phase": phase, "task": abort["task"], "reason": abort["reason"], "report": report,
            "files_touched": abort.get("files_touched", []), "failures": abort["failures"],
            "recovery_spawns": abort["recovery_spawns"], "checkpoint": checkpoint, "tag": tag,
            "tag_error": tag_error, "timestamp": abort["timestamp"], "retry_log": retries, "recovery": options,
            "text": "\n".join(lines)}
