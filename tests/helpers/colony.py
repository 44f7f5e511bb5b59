"""A colony through the real CLI: plans, a build started, waves planned, workers run, and the
results a build finishes with. Every function takes the `project` fixture (tests/conftest.py)."""

from __future__ import annotations

import json


def ok(project, *args, input=None):
    """`aether ARGS` in-process: its result (fails the test on an error). A dict or a list is sent
    as JSON on stdin."""
    if isinstance(input, (dict, list)):
        input = json.dumps(input)
    return project.run(*args, input=input).json


def write(project, *paths):
    """Files a worker claims, each holding a line naming it."""
    for path in paths:
        full = project.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(f"# {path}\n", encoding="utf-8")


# ---------------------------------------------------------------- plans


def make_plan(phases=3, tasks=3):
    """A plan whose tasks each depend on the one before (the first on the phase before's first)."""
    plan = {"goal": "Build a todo API", "phases": []}
    for p in range(1, phases + 1):
        plan["phases"].append(
            {
                "id": p,
                "name": f"Phase {p} name",
                "description": f"what phase {p} does",
                "tasks": [
                    {
                        "id": f"{p}.{t}",
                        "description": f"task {p}.{t}",
                        "depends_on": [f"{p}.{t - 1}"] if t > 1 else ([f"{p - 1}.1"] if p > 1 else []),
                        "maps_to_criterion": t == 1,
                    }
                    for t in range(1, tasks + 1)
                ],
                "success_criteria": [f"criterion of phase {p}"],
            }
        )
    return plan


def flat_plan(tasks=6, phases=2, deps=None, **task_extra):
    """A plan whose phase-1 tasks are independent unless `deps` says {task: [tasks]}."""
    deps = deps or {}
    return {
        "goal": "Build a todo API",
        "phases": [
            {
                "id": p,
                "name": f"Phase {p}",
                "description": f"phase {p}",
                "tasks": [
                    {
                        "id": f"{p}.{t}",
                        "description": f"task {p}.{t}",
                        "depends_on": deps.get(f"{p}.{t}", []),
                        **task_extra.get(f"{p}.{t}", {}),
                    }
                    for t in range(1, tasks + 1)
                ],
                "success_criteria": [f"phase {p} works"],
            }
            for p in range(1, phases + 1)
        ],
    }


PHASE_PLAN = flat_plan(4, deps={"1.4": ["1.3"]})  # four tasks; 1.4 waits for 1.3


# ---------------------------------------------------------------- a build, its waves and workers


def start_build(project, mode="STANDARD", tasks=6, plan=None):
    """colony-init → plan-load → build-start 1, through the real CLI."""
    project.run("colony-init", "Build a todo API", "--mode", mode).json
    project.run("plan-load", "-", input=json.dumps(plan or flat_plan(tasks))).json
    project.run("build-start", 1).json
    return project


def plan_waves(project, workers, approve=True, **extra):
    result = project.run("plan-waves", "-", input=json.dumps({"workers": workers, **extra})).json
    if approve and result["approval"]["required"]:
        project.run("plan-waves", "--approve").json
    return result


def worker(label, tasks, writes=(), reads=(), caste="builder", depends_on=()):
    return {"id": label, "caste": caste, "tasks": list(tasks), "writes": list(writes), "reads": list(reads), "depends_on": list(depends_on)}


def tree(project):
    """The colony's spawn tree."""
    return project.load("COLONY_STATE.json")["spawn_tree"]


def run_worker(project, node_id, status="completed", created=(), modified=(), failure=None, **extra):
    """spawn-start + spawn-finish, creating the files it claims."""
    project.run("spawn-start", node_id).json
    for path in list(created) + list(modified):
        full = project.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(f"written by {node_id}\n")
    payload = {
        "status": status,
        "summary": f"{node_id} {status}",
        "files_created": list(created),
        "files_modified": list(modified),
        "failure": failure,
        **extra,
    }
    return project.run("spawn-finish", node_id, "-", input=json.dumps(payload)).json


# ---------------------------------------------------------------- build-finish


WATCHER_OK = {"passed": True, "score": 92, "checks": [{"name": "tests", "passed": True}], "summary": "all green"}


def results(phase_tasks, failed=(), skipped=(), watcher=WATCHER_OK, **extra):
    """build-finish --results: each task completed unless failed or skipped, and the watcher's report."""
    tasks = []
    for tid in phase_tasks:
        status = "failed" if tid in failed else "skipped" if tid in skipped else "completed"
        tasks.append(
            {
                "id": tid,
                "status": status,
                "summary": f"{tid} {status}",
                "caste": "builder",
                "worker_id": f"w-{tid}",
                "files_created": [f"src/{tid}.py"],
                "files_modified": ["README.md"],
                **extra.get(tid, {}),
            }
        )
    doc = {"tasks": tasks}
    if watcher is not None:
        doc["watcher"] = watcher
    return json.dumps(doc)


def ids(phase, n=3):
    """The task ids of a phase of `make_plan`: 1.1, 1.2, 1.3."""
    return [f"{phase}.{t}" for t in range(1, n + 1)]


def finish(project, phase, **kw):
    return project.run("build-finish", phase, "--results", "-", input=results(ids(phase), **kw))
