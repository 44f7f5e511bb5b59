"""The failure policy: a failed task's report, normalised, and the one action the ladder gives
for it (retry, debug, flag, skip, abort_wave, abort_phase), with the retry and debugger briefs.
Pure: the history and the tree are passed in. See docs/decisions/failure-ladder.md.
"""

from __future__ import annotations

import math
import re

from aether.core import clock
from aether.core.exceptions import input_error
from aether.core.text import clip, one_line
from aether.rules import contracts, plans, spawn_tree
from aether.rules import evidence as evidence_rules

RETRY_MIN_CONFIDENCE = 80  # percent; below it a blind retry is skipped for the debugger


MAX_RETRIES_AND_DEBUGGERS = 10  # retries + debuggers per phase build; one more aborts the phase


WARN_RETRIES_AND_DEBUGGERS = 5  # more than this many warns


MAX_CONSECUTIVE_WAVE_FAILURES = 2  # more consecutive failed workers in a wave abort the wave


MAX_FAILING_TASKS_PER_FILE = 2  # more failing tasks on one file abort the phase (redesign)


COMMON_ERROR_TASKS_PHASE = 3  # tasks of the phase failing with one normalised error


COMMON_ERROR_TASKS_WAVE = 2  # … or this many in one wave: abort with that common cause
MERGE_CONFLICT = "merge_conflict"  # an isolated builder's result that did not merge: never a common cause


ABORT_CATEGORIES = {
    "security": "a security issue cannot be fixed automatically; it needs a security review",
    "missing_dependency": "a prerequisite (from an earlier phase or outside) is missing",
    "circular_dependency": "the tasks depend on each other in a circle; the wave structure is broken",
}


CATEGORY_ALIASES = {
    "security_vulnerability": "security",
    "security_issue": "security",
    "vulnerability": "security",
    "dependency_missing": "missing_dependency",
    "missing_dep": "missing_dependency",
    "missing_prerequisite": "missing_dependency",
    "circular": "circular_dependency",
    "dependency_cycle": "circular_dependency",
    "cyclic_dependency": "circular_dependency",
    "circular_import": "circular_dependency",
}


HISTORY_TEXT = 500  # characters of an error, root cause or fix kept in a history entry


MAX_HYPOTHESES = 20


NORMALIZED_ERROR_LENGTH = 300


def _confidence(value, lenient: bool) -> float:

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
    """The error with its volatile parts (folders of paths, numbers, hex ids, spacing, case) taken
    out, so that the same failure in two tasks compares equal."""

    flat = evidence_rules.normal_paths(text[:2000]).lower()
    flat = re.sub(r"0x[0-9a-f]+|\b[0-9a-f]{7,40}\b", "#", flat)
    flat = re.sub(r"\d+", "#", flat)
    return " ".join(flat.split())[:NORMALIZED_ERROR_LENGTH]


def normalize_report(report, lenient: bool = False) -> dict:
    """A worker's failure report, checked and in one shape (see docs/contracts.md)."""

    if not isinstance(report, dict):
        raise input_error("invalid_report", f"a failure report must be a JSON object, found {type(report).__name__}")
    what = "failure report"
    task = report.get("task", report.get("task_id"))
    if isinstance(task, bool) or not isinstance(task, (str, int, float)) or not str(task).strip():
        raise input_error("invalid_report", f"{what}: `task` (the task id) is missing")
    error = contracts.text_field(report, "error", what, required=not lenient) or "(no error text)"
    hypotheses = []
    raw_h = report.get("hypotheses") or report.get("investigation") or []
    if isinstance(raw_h, (str, dict)):
        raw_h = [raw_h]
    if not isinstance(raw_h, list):
        raise input_error("invalid_report", f"{what}: `hypotheses` must be an array")
    for item in raw_h[:MAX_HYPOTHESES]:
        if isinstance(item, dict):
            hypotheses.append({"hypothesis": one_line(item.get("hypothesis", ""), 500), "result": one_line(item.get("result", ""), 500)})
        elif isinstance(item, str) and item.strip():
            hypotheses.append({"hypothesis": one_line(item, 500), "result": ""})
    maps = report.get("maps_to_criterion")
    attempt = report.get("attempt")
    out = {
        "task": clip(str(task).strip(), 64),
        "caste": contracts.normalize_caste(report.get("caste")) or "builder",
        "attempt": attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0 else None,
        "error": error,
        "root_cause": contracts.text_field(report, "root_cause", what),
        "suggested_fix": contracts.text_field(report, "suggested_fix", what),
        "confidence": _confidence(report.get("confidence", 0), lenient),
        "fix_scope": _fix_scope(report.get("fix_scope")),
        "files": [contracts.norm_path(f) for f in contracts.str_list(report.get("files"), f"{what}: files")],
        "category": normalize_category(report.get("category")),
        "hypotheses": hypotheses,
        "maps_to_criterion": maps if isinstance(maps, bool) else None,
        "undiagnosable": bool(report.get("undiagnosable")) or "UNDIAGNOSABLE" in error.upper(),
    }
    return out


def _ladder_step(report: dict, prior_actions: set, maps_to_criterion) -> tuple:
    """Steps 2–5 for one task: (action, step, reason). maps_to_criterion: True/False when someone
    said, None when nobody did (plans.maps_to_criterion decides)."""

    category = report["category"]
    if category in ABORT_CATEGORIES:
        return "abort_phase", 2, f"category {category}: {ABORT_CATEGORIES[category]}"
    if prior_actions & {"debug", "flag", "skip"}:
        why = "the debugger found it UNDIAGNOSABLE" if report["undiagnosable"] else "the debugger could not fix it"
        if not plans.maps_to_criterion(None, maps_to_criterion):
            return "skip", 5, f"{why}; a supporting task is skipped (marked failed) and the build continues"
        tail = "it maps to a success criterion" if maps_to_criterion else "the plan does not say it is only a supporting task"
        return "flag", 5, f"{why}; the task is flagged to the user ({tail}), marked failed, and the build continues"
    if "retry" in prior_actions:
        return "debug", 4, "the retry failed too: a debugger ant patches the code"
    if report["confidence"] >= RETRY_MIN_CONFIDENCE and report["fix_scope"] == "contained":
        return (
            "retry",
            3,
            (
                f"first failure with confidence {report['confidence']}% ≥ {RETRY_MIN_CONFIDENCE}% "
                f"and a fix contained to the task's files: one retry with the suggested fix"
            ),
        )
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
    this = failure_item(report, wave)
    breaker = _breaker(action, recovery, history + pending + [this], wave, streak)
    if breaker is not None:
        (action, reason), step = breaker, 1
    after = recovery + (1 if action in ("retry", "debug") else 0)
    return {
        "action": action,
        "step": step,
        "reason": reason,
        "warnings": _recovery_warnings(after),
        "attempt": sum(1 for h in history if h["task"] == task) + 1,
        "recovery_spawns": after,
        "max_recovery_spawns": MAX_RETRIES_AND_DEBUGGERS,
        "consecutive_failures": streak,
        "normalized_error": this["normalized_error"],
    }


def failure_item(report: dict, wave) -> dict:
    """A failure as the breakers count it: its task, wave, files, category and normalised error —
    the error its own failing call printed when the evidence has one (the ant's words otherwise)."""
    observed = report.get("observed") if isinstance(report.get("observed"), dict) else None
    error = observed["error"] if observed and observed.get("error") else report["error"]
    return {
        "task": report["task"],
        "wave": wave,
        "files": report["files"],
        "category": report.get("category"),
        "normalized_error": normalize_error(error),
    }


def _breaker(action: str, recovery: int, everything: list, wave, streak: int) -> tuple | None:
    """Step 1: the first breaker that trips, as (action, reason), or None. everything: this
    build's failures (decided, pending and this one); recovery: retries + debuggers so far."""
    return (
        _recovery_breaker(action, recovery)
        or _file_breaker(everything)
        or _common_error_breaker(everything)
        or _streak_breaker(streak, wave)
    )


def _recovery_breaker(action: str, recovery: int) -> tuple | None:
    """One more retry or debugger than MAX_RETRIES_AND_DEBUGGERS aborts the phase."""
    if action in ("retry", "debug") and recovery + 1 > MAX_RETRIES_AND_DEBUGGERS:
        return (
            "abort_phase",
            f"this would be retry/debugger number {recovery + 1} in the phase; more than {MAX_RETRIES_AND_DEBUGGERS} aborts it",
        )
    return None


def _file_breaker(everything: list) -> tuple | None:
    """A file in more than MAX_FAILING_TASKS_PER_FILE failing tasks aborts the phase (the most crowded one is named)."""
    by_file: dict = {}
    for item in everything:
        for path in item["files"]:
            by_file.setdefault(path, set()).add(item["task"])
    crowded = sorted((f for f, tasks in by_file.items() if len(tasks) > MAX_FAILING_TASKS_PER_FILE), key=lambda f: (-len(by_file[f]), f))
    if not crowded:
        return None
    f = crowded[0]
    return (
        "abort_phase",
        f"{f} is involved in {len(by_file[f])} failing tasks ({', '.join(sorted(by_file[f]))}): the design around it needs rethinking",
    )


def _common_error_breaker(everything: list) -> tuple | None:
    """One normalised error in COMMON_ERROR_TASKS_PHASE tasks, or COMMON_ERROR_TASKS_WAVE of one wave, aborts the phase."""
    phase_groups: dict = {}
    wave_groups: dict = {}
    for item in everything:
        if item.get("category") == MERGE_CONFLICT:  # the merge order's doing, no shared defect: retried on the merge
            continue
        phase_groups.setdefault(item["normalized_error"], set()).add(item["task"])
        if item["wave"] is not None:
            wave_groups.setdefault((item["wave"], item["normalized_error"]), set()).add(item["task"])
    for err, tasks in sorted(phase_groups.items()):
        if len(tasks) >= COMMON_ERROR_TASKS_PHASE:
            return (
                "abort_phase",
                f"{len(tasks)} tasks ({', '.join(sorted(tasks))}) fail with the same error — a common cause: {err[:160]}",
            )
    for (w, err), tasks in sorted(wave_groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if len(tasks) >= COMMON_ERROR_TASKS_WAVE:
            return (
                "abort_phase",
                f"{len(tasks)} tasks of wave {w} ({', '.join(sorted(tasks))}) fail with the same error — a common cause: {err[:160]}",
            )
    return None


def _streak_breaker(streak: int, wave) -> tuple | None:
    """More than MAX_CONSECUTIVE_WAVE_FAILURES failed workers in a row stop the wave."""
    if streak > MAX_CONSECUTIVE_WAVE_FAILURES:
        return (
            "abort_wave",
            f"{streak} workers of wave {wave} failed in a row (more than {MAX_CONSECUTIVE_WAVE_FAILURES}): the wave stops",
        )
    return None


def _recovery_warnings(after: int) -> list:
    """Step 6: a warning once the phase has used more than WARN_RETRIES_AND_DEBUGGERS retries and debuggers."""
    if after > WARN_RETRIES_AND_DEBUGGERS:
        return [
            f"{after} retries/debuggers in this phase (more than {WARN_RETRIES_AND_DEBUGGERS}); "
            f"{MAX_RETRIES_AND_DEBUGGERS} is the most before the phase aborts"
        ]
    return []


def _observed(report: dict) -> list:
    """What the failing call really printed (from the evidence), for the next ant's brief."""
    seen = report.get("observed") if isinstance(report.get("observed"), dict) else None
    if not seen:
        return []
    return [
        f"What failed, as it ran: `{one_line(str(seen.get('command')), 300)}` exited {seen.get('exit')}; its output ends:",
        str(seen.get("tail") or "")[-1500:],
    ]


def render_retry(report: dict, task_text: str) -> str:
    return "\n".join(
        [
            "--- RETRY CONTEXT ---",
            f"Task {report['task']}{task_text} failed once. This is its one retry; if it fails again a debugger ant takes over.",
            *_observed(report),
            f"Previous error (the worker's account): {report['error']}",
            f"Root cause: {report['root_cause'] or '(not given)'}",
            f"Suggested fix ({report['confidence']}% confident): {report['suggested_fix'] or '(not given)'}",
            "Apply the suggested fix inside your own files, then run the task's checks again before you report.",
            "--- END RETRY CONTEXT ---",
        ]
    )


def render_debugger(report: dict, earlier: list, task_text: str) -> str:
    errors = [h["error"] for h in earlier] + [report["error"]]
    first = errors[0]
    second = errors[1] if len(errors) > 1 else "(none: there was no blind retry — the first report was not confident or contained enough)"
    files = sorted({f for h in earlier for f in h.get("files", [])} | set(report["files"]))
    return "\n".join(
        [
            "--- DEBUGGER ANT ---",
            f"Task {report['task']}{task_text} failed {len(errors)} time(s). Diagnose the failure and fix it.",
            f"Caste that failed: {report['caste']}",
            f"First attempt error: {first}",
            f"Second attempt error: {second}",
            f"Reported root cause: {report['root_cause'] or '(not given)'}",
            *_observed(report),
            "Files involved: " + (", ".join(files) or "(not given)"),
            "Mission: read the files, find the root cause, make the smallest patch that fixes it, run the verification, report.",
            "Constraints:",
            "- Patch the code that is there; never rewrite it from scratch.",
            "- Keep the original worker's approach and intent.",
            "- When a test fails, change the code until it passes; change the test's expectation only if the task was to write that test.",
            "- If you cannot find the cause, answer UNDIAGNOSABLE with your analysis.",
            "--- END DEBUGGER ANT ---",
        ]
    )


def wave_streak(tree: dict, node: dict) -> int:
    """Failed workers in a row at the end of the node's wave, this one included (a retry or
    debugger counts as the worker it replaces)."""
    finished = sorted(
        (
            n
            for n in tree["nodes"].values()
            if n["wave"] == node["wave"] and n["role"] != "reviewer" and "seq" in n and n["status"] in ("completed", "failed")
        ),
        key=lambda n: -n["seq"],
    )
    origins = []
    for n in finished:
        if n["status"] == "completed":
            break
        origin = spawn_tree.origin_of(tree, n)
        if origin not in origins:
            origins.append(origin)
    if spawn_tree.origin_of(tree, node) not in origins:
        origins.append(spawn_tree.origin_of(tree, node))
    return len(origins)


MAX_FRICTION = 200


def _friction_pattern(failures: dict, build_id: str | None, task: str, normalized: str | None) -> str | None:
    if not normalized:
        return None
    seen = [
        h
        for h in failures["history"]
        if h.get("normalized_error") == normalized and not (h.get("build") == build_id and h.get("task") == task)
    ]
    if not seen:
        return None
    tasks = sorted({f"{h.get('phase')}/{h.get('task')}" for h in seen})[:5]
    return f"the same error was seen {len(seen)} more time(s) (phase/task {', '.join(tasks)})"


def new_friction(failures: dict, build_id: str | None, phase, task: str, resolution: str, node_id: str | None) -> dict:
    """Add the next FR-NNN friction record for a task of this build (the oldest beyond MAX_FRICTION are dropped)."""
    failed = [h for h in failures["history"] if h.get("build") == build_id and h.get("task") == task]
    last = failed[-1] if failed else {}
    number = failures.get("next_friction", 1)
    failures["next_friction"] = number + 1
    record = {
        "id": f"FR-{number:03d}",
        "build": build_id,
        "phase": phase,
        "task": task,
        "attempts": len(failed) + 1,
        "root_cause": one_line(last.get("root_cause") or last.get("error", ""), 500),
        "resolution": one_line(resolution, 500),
        "pattern": _friction_pattern(failures, build_id, task, last.get("normalized_error")),
        "node": node_id,
        "timestamp": clock.iso(),
    }
    failures["friction"].append(record)
    del failures["friction"][:-MAX_FRICTION]
    return record


def record_recovery(failures: dict, tree: dict, node: dict, status: str, data: dict) -> dict | None:
    """spawn-finish of a retry or debugger: close its retry-log entry; a recovery gets a friction record."""

    resolution = data.get("diagnosis") or data.get("summary") or ""
    for log in failures["retry_log"]:
        if log.get("node") == node["id"] and log.get("result") == "pending":
            log["result"] = "recovered" if status == "completed" else "failed"
            if node["role"] == "debugger" and resolution:
                log["fix_applied"] = one_line(resolution, 300)
    if status != "completed":
        return None
    for task in node["tasks"]:
        tree.get("failed_tasks", {}).pop(str(task), None)
    task = next(
        (
            h["task"]
            for h in reversed(failures["history"])
            if h.get("build") == tree.get("id") and h.get("worker") in (node.get("parent"), node["id"])
        ),
        str(node["tasks"][0]) if node["tasks"] else node["id"],
    )
    existing = friction_for(failures, tree.get("id"), task)
    if existing:
        return existing
    return new_friction(
        failures, tree.get("id"), tree.get("phase"), task, resolution or f"recovered by {node['role']} {node['id']}", node["id"]
    )


def friction_for(failures: dict, build_id, task: str) -> dict | None:
    """The friction record of a task of this build, or None."""
    return next((f for f in failures["friction"] if f.get("build") == build_id and f.get("task") == task), None)
