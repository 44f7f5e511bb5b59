"""build-finish's results, checked: each task's outcome (status, summary, files, failure) and the
watcher's report, with every defect named by its path in the document."""

from __future__ import annotations

import math

from aether.core.castes import CASTES
from aether.core.exceptions import AetherError
from aether.core.text import json_type
from aether.core.vocabulary import DONE_STATUSES  # tasks that let a phase complete; phases the colony moves past
from aether.state import error_log

RESULT_STATUSES = ("completed", "failed", "skipped")  # a task's outcome in build-finish
WATCHER_OPTIONAL = ("syntax",)  # watcher depths (modes.py) where no watcher report is required
MAX_RESULTS_TEXT = 20000  # one summary or detail in build-finish results
MAX_FILES_PER_TASK = 1000
TASK_FAILURE = ("task_failure", "high")  # category, severity of a failed task that gave none
WATCHER_FAILURE = ("verification", "high")


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
        _defect(defects, f"{path}.error", f"must be an object {{category, severity, description, root_cause}}, found {json_type(value)}")
        return None
    info: dict = {}
    for key, default, normalise in (
        ("category", TASK_FAILURE[0], error_log.check_category),
        ("severity", TASK_FAILURE[1], error_log.check_severity),
    ):
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
            _defect(defects, f"{path}.id", f"phase {phase.get('id')} has no task {tid!r} (its tasks: {', '.join(map(str, known))})")
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
        outcomes.append(
            {
                "id": tid,
                "status": status,
                "summary": _opt_text(defects, item, "summary", path),
                "files_created": _file_list(defects, item, "files_created", path),
                "files_modified": _file_list(defects, item, "files_modified", path),
                "caste": caste,
                "worker_id": worker,
                "error": _error_info(defects, item, path),
            }
        )
    missing = [tid for tid, t in known.items() if t.get("status") not in DONE_STATUSES and tid not in seen]
    if missing:
        _defect(
            defects,
            "tasks",
            f"no outcome for task{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}; report every task the build worked on",
        )
    watcher = data.get("watcher")
    report = None
    if watcher is None:
        if watcher_depth not in WATCHER_OPTIONAL:
            _defect(defects, "watcher", f"is missing; this mode's watcher ({watcher_depth}) must report {{passed, score, checks, summary}}")
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
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) or not 0 <= score <= 100
    ):
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
        out_checks.append({"name": name, "passed": check.get("passed"), "detail": _opt_text(defects, check, "detail", path)})
    return {"passed": passed, "score": score, "checks": out_checks, "summary": _opt_text(defects, watcher, "summary", "watcher")}
