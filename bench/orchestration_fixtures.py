"""Bench fixtures for the orchestration commands: a 200-task assignment plan for `plan-waves`
and a 1,000-entry failure history for `failure-decide`.

bench/run.py registers them as hooks:

    from orchestration_fixtures import HOOKS as ORCHESTRATION_HOOKS
    HOOKS.update(ORCHESTRATION_HOOKS)

Each builder takes the bench's fixture Project (it uses only `project.root` and
`project.setup(argv, stdin)`), turns it into a colony building phase 1, and returns the
(argv, stdin) of the command to time. Both commands write state, so their rows are best run on
a private copy of the fixture (`write=True`). Both stay repeatable on one copy: the plan is
LIGHTWEIGHT (auto-approved, so re-planning is not a revision), and a repeated failure report
gets the answer already recorded for it.
"""

from __future__ import annotations

import json
import os

GOAL = "Build a small REST API for a todo list with tests"
PLAN_TASKS = 200
HISTORY_ENTRIES = 1000


def _data(project) -> str:
    return os.path.join(project.root, ".aether", "data")


def _write(project, name: str, data: dict) -> None:
    folder = _data(project)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(f"bench fixture: `{what}` failed")


def _building(project, tasks: int, mode: str) -> None:
    """A fresh colony whose phase 1 has `tasks` tasks, with phase 1 being built.

    The plan is written directly: plan-load keeps phases to 100 tasks, the bench wants 200."""
    _check(project.setup(["colony-init", "--force", "--mode", mode, GOAL]), "colony-init")
    phase_tasks = [
        {
            "id": f"1.{t}",
            "description": f"bench task {t}",
            "status": "pending",
            "depends_on": [f"1.{t - 20}"] if t > 20 and t % 7 == 0 else [],
        }
        for t in range(1, tasks + 1)
    ]
    _write(
        project,
        "PROJECT_PLAN.json",
        {
            "version": 1,
            "goal": GOAL,
            "generated_at": None,
            "phases": [
                {
                    "id": 1,
                    "name": "Bench phase",
                    "description": "many tasks",
                    "status": "pending",
                    "tasks": phase_tasks,
                    "success_criteria": ["the bench runs"],
                },
                {
                    "id": 2,
                    "name": "Next",
                    "description": "after",
                    "status": "pending",
                    "tasks": [{"id": "2.1", "description": "later", "status": "pending", "depends_on": []}],
                    "success_criteria": ["done"],
                },
            ],
        },
    )
    _check(project.setup(["build-start", "1"]), "build-start 1")


def assignment_plan(tasks: int = PLAN_TASKS) -> dict:
    """A Phase Lead plan: two tasks per worker; every tenth worker also writes a shared module
    (same-file merges); chains of dependencies give several levels; reads across workers."""
    workers = []
    for w in range(tasks // 2):
        writes = [f"src/pkg{w % 25}/mod{w}.py"]
        if w % 10 == 3:
            writes.append(f"src/shared/common{w % 3}.py")
        workers.append(
            {
                "id": f"lead-{w}",
                "caste": ("builder", "scout", "architect", "watcher")[w % 4] if w % 5 else "builder",
                "tasks": [f"1.{2 * w + 1}", f"1.{2 * w + 2}"],
                "writes": writes,
                "reads": [f"src/pkg{(w + 1) % 25}/mod{(w + 1) % (tasks // 2)}.py", "src/config.py"],
                "depends_on": [f"lead-{w - 12}"] if w >= 12 and w % 4 == 0 else [],
            }
        )
    return {"phase": 1, "workers": workers}


def plan200(project):
    """`plan-waves -` with a 200-task plan (stdin)."""
    _building(project, PLAN_TASKS, "LIGHTWEIGHT")
    return ["plan-waves", "-"], json.dumps(assignment_plan())


def _entry(n: int, build: str, phase: int, wave: int, task: str, action: str) -> dict:
    error = f"AssertionError: expected {n % 17} items, got {n % 13} in test_case_{n % 41}"
    return {
        "id": f"fail_{1770000000 + n}_{n:04x}",
        "build": build,
        "phase": phase,
        "wave": wave,
        "worker": f"w{n % 9 + 1}",
        "task": task,
        "caste": "builder",
        "error": error,
        "root_cause": "an off-by-one in the pagination helper",
        "suggested_fix": "use < instead of <=",
        "confidence": 60 + n % 40,
        "fix_scope": "contained",
        "files": [f"src/mod{n % 50}.py"],
        "category": ("logic", "type", "test", "import")[n % 4],
        "normalized_error": " ".join(error.lower().split()),
        "action": action,
        "step": 3,
        "reason": "first failure with confidence 90% ≥ 80% and a fix contained to the task's files",
        "timestamp": "2026-02-01T10:00:00Z",
    }


def history1000(project):
    """`failure-decide -` for a fresh failure, with 1,000 entries of failure history on file
    (990 from earlier builds, 10 from this one on distinct tasks and files)."""
    _building(project, 40, "STANDARD")
    workers = [
        {"id": f"lead-{w}", "caste": "builder", "tasks": [f"1.{4 * w + k}" for k in range(1, 5)], "writes": [f"src/area{w}.py"]}
        for w in range(10)
    ]
    _check(project.setup(["plan-waves", "-"], json.dumps({"phase": 1, "workers": workers})), "plan-waves")
    _check(project.setup(["plan-waves", "--approve"]), "plan-waves --approve")
    with open(os.path.join(_data(project), "COLONY_STATE.json"), encoding="utf-8") as fh:
        build = json.load(fh)["spawn_tree"]["id"]
    _check(project.setup(["spawn-start", "w1"]), "spawn-start w1")
    history = [
        _entry(
            n,
            f"build_{1760000000 + n // 40}_beef",
            1 + n // 200,
            1 + n % 3,
            f"{1 + n // 200}.{n % 40}",
            ("retry", "debug", "skip", "flag")[n % 4],
        )
        for n in range(HISTORY_ENTRIES - 10)
    ]
    history += [
        dict(
            _entry(n, build, 1, 1, f"1.{n % 10 + 5}", ("retry", "debug", "skip")[n % 3] if n < 6 else "flag"),
            files=[f"src/own{n}.py"],
            normalized_error=f"distinct failure {n}",
        )
        for n in range(10)
    ]
    _write(project, "failures.json", {"version": 1, "history": history, "retry_log": [], "friction": [], "aborts": [], "next_friction": 1})
    report = {
        "task": "1.1",
        "caste": "builder",
        "error": "TypeError: 'NoneType' object is not iterable",
        "root_cause": "the loader returns None for an empty file",
        "suggested_fix": "return [] instead",
        "confidence": 90,
        "fix_scope": "contained",
        "files": ["src/area0.py"],
        "category": "type",
        "hypotheses": [{"hypothesis": "empty input", "result": "confirmed"}],
    }
    return ["failure-decide", "-"], json.dumps(report)


HOOKS = {"plan200": plan200, "history1000": history1000}
