"""Helper commands the Queen's big commands lean on: `build-start N --approve`, build-finish
reading task outcomes from the spawn tree, `verify-brief` and `phase-check`."""

import json

import pytest

PLAN = {
    "goal": "A todo CLI",
    "phases": [
        {
            "id": 1,
            "name": "Core",
            "description": "store and cli",
            "success_criteria": ["pytest passes"],
            "tasks": [
                {"id": "1.1", "description": "store module", "depends_on": []},
                {"id": "1.2", "description": "cli module", "depends_on": []},
                {"id": "1.3", "description": "tests", "depends_on": []},
            ],
        },
        {
            "id": 2,
            "name": "Docs",
            "description": "readme",
            "success_criteria": ["a README"],
            "tasks": [{"id": "2.1", "description": "readme", "depends_on": []}],
        },
        {
            "id": 3,
            "name": "Polish",
            "description": "packaging",
            "success_criteria": ["installs"],
            "tasks": [{"id": "3.1", "description": "pyproject", "depends_on": []}],
        },
    ],
}
WATCHER = {"passed": True, "score": 88, "summary": "green", "checks": [{"name": "tests", "passed": True}]}


def result(status="completed", created=(), modified=(), **extra):
    return json.dumps(
        {
            "status": status,
            "summary": extra.pop("summary", f"{status} work"),
            "files_created": list(created),
            "files_modified": list(modified),
            **extra,
        }
    )


def failed(task, error="AssertionError: add() returned None", confidence=60, scope="other_files", category="logic"):
    return json.dumps(
        {
            "status": "failed",
            "summary": "tests fail",
            "failure": {
                "task": task,
                "error": error,
                "root_cause": "add() does not return the item",
                "suggested_fix": "return it",
                "confidence": confidence,
                "fix_scope": scope,
                "files": ["todo/store.py"],
                "category": category,
            },
        }
    )


@pytest.fixture
def colony(project):
    project.run("colony-init", "A todo CLI").json
    project.run("plan-load", "-", input=json.dumps(PLAN)).json
    return project


def start_build(project, workers, phase=1):
    project.run("build-start", phase).json
    return project.run("plan-waves", "-", input=json.dumps({"workers": workers})).json


def make(project, *paths):
    for path in paths:
        target = project.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x = 1\n", "utf-8")


def run_spawn(project, node, answer):
    project.run("spawn-start", node).json
    return project.run("spawn-finish", node, "-", input=answer).json


THREE = [
    {"id": "store", "caste": "builder", "tasks": ["1.1"], "writes": ["todo/store.py"]},
    {"id": "cli", "caste": "builder", "tasks": ["1.2"], "writes": ["todo/cli.py"]},
    {"id": "tests", "caste": "builder", "tasks": ["1.3"], "writes": ["tests/test_todo.py"], "depends_on": ["store", "cli"]},
]


# ---------------------------------------------------------------- build-start --approve


def test_approve_lets_the_waves_start_and_is_recorded(colony):
    plan = start_build(colony, THREE)
    assert plan["status"] == "awaiting_approval" and plan["approval"]["required"] is True
    assert colony.run("spawn-start", "w1").error["code"] == "plan_not_approved"

    approved = colony.run("build-start", "1", "--approve").json
    assert approved["status"] == "approved" and approved["approval"]["approved_by"] == "user"
    assert [[w["id"] for w in wave["workers"]] for wave in approved["waves"]] == [["w1", "w2"], ["w3"]]
    assert "Wave 1" in approved["text"]
    assert colony.run("spawn-start", "w1").json["subagent_type"] == "ant:builder"
    events = [e["type"] for e in colony.load("events.json")["events"]]
    assert "plan_approved" in events
    # the build was not restarted: still phase 1, the tree kept
    state = colony.load("COLONY_STATE.json")
    assert state["state"] == "EXECUTING" and state["spawn_tree"]["nodes"]["w1"]["status"] == "running"


def test_approve_refuses_without_a_running_build_of_that_phase(colony):
    err = colony.run("build-start", "1", "--approve").error
    assert err["code"] == "not_building" and "/ant:build" in err["error"]
    start_build(colony, THREE)
    assert colony.run("build-start", "2", "--approve").error["code"] == "phase_mismatch"
    err = colony.run("build-start", "1", "--approve", "--resume").error
    assert err["code"] == "invalid_argument"
    colony.run("build-start", "1", "--approve").json
    # approving twice answers the approved plan again
    assert colony.run("build-start", "1", "--approve").json["status"] == "approved"


def test_approve_before_any_wave_plan_says_so(colony):
    colony.run("build-start", "1").json
    err = colony.run("build-start", "1", "--approve").error
    assert err["code"] in ("no_spawn_tree", "nothing_to_approve")
    assert colony.load("COLONY_STATE.json")["state"] == "EXECUTING"


# ---------------------------------------------------------------- build-finish from the tree


def build_with_recoveries(project):
    """w1 claims a file it never made (caught), its retry recovers; w2 completes; w3 fails
    and the debugger fixes it."""
    start_build(project, THREE)
    project.run("build-start", "1", "--approve").json
    make(project, "todo/store.py", "todo/cli.py")
    project.run("spawn-start", "w1").json
    project.run("spawn-start", "w2").json
    claim = project.run("spawn-finish", "w1", "-", input=result(created=["todo/store.py", "todo/__init__.py"])).json
    assert claim["status"] == "failed" and claim["unverified"] == [{"path": "todo/__init__.py", "problem": "missing"}]
    project.run("spawn-finish", "w2", "-", input=result(created=["todo/cli.py"], summary="cli added")).json
    assert project.run("failure-decide", "--worker", "w1").json["action"] == "retry"
    make(project, "todo/__init__.py")
    run_spawn(project, "r1", result(created=["todo/__init__.py"], modified=["todo/store.py"], summary="package made"))
    project.run("spawn-start", "w3").json
    assert project.run("spawn-finish", "w3", "-", input=failed("1.3")).json["status"] == "failed"
    assert project.run("failure-decide", "--worker", "w3").json["action"] == "debug"
    make(project, "tests/test_todo.py")
    fixed = run_spawn(
        project,
        "d1",
        json.dumps(
            {
                "status": "completed",
                "diagnosis": "add() did not return the item",
                "fix_applied": True,
                "files_modified": ["todo/store.py", "tests/test_todo.py"],
                "verification": {"status": "pass", "details": "3 passed"},
            }
        ),
    )
    assert fixed["status"] == "completed" and fixed["friction"]["id"] == "FR-002"


def test_build_finish_reads_each_tasks_outcome_from_the_spawn_tree(colony):
    build_with_recoveries(colony)
    out = colony.run("build-finish", "1", "--results", "-", input=json.dumps({"watcher": WATCHER})).json

    assert out["tasks_from"] == "spawn_tree"
    assert out["phase_status"] == "completed"
    assert out["tasks"]["completed"] == 3
    assert out["files_created"] == ["todo/__init__.py", "todo/cli.py"]
    assert out["files_modified"] == ["todo/store.py", "tests/test_todo.py"]
    plan = colony.load("PROJECT_PLAN.json")
    assert [t["status"] for t in plan["phases"][0]["tasks"]] == ["completed"] * 3
    assert plan["phases"][0]["status"] == "completed"
    tree = colony.load("COLONY_STATE.json")["spawn_tree"]
    assert tree["status"] == "finished"


def test_tasks_flagged_skipped_or_never_run_are_reported_as_such(colony):
    start_build(colony, THREE)
    colony.run("build-start", "1", "--approve").json
    colony.run("spawn-start", "w1").json
    colony.run("spawn-start", "w2").json
    colony.run("spawn-finish", "w1", "-", input=failed("1.1", confidence=50)).json
    make(colony, "todo/cli.py")
    colony.run("spawn-finish", "w2", "-", input=result(created=["todo/cli.py"])).json
    assert colony.run("failure-decide", "--worker", "w1").json["action"] == "debug"
    colony.run("spawn-start", "d1").json
    colony.run(
        "spawn-finish",
        "d1",
        "-",
        input=json.dumps({"status": "failed", "diagnosis": "UNDIAGNOSABLE: the store is never imported", "fix_applied": False}),
    ).json
    decision = colony.run("failure-decide", "--worker", "d1", "--supporting").json
    assert decision["action"] == "skip"
    # w3 (wave 2) never runs
    out = colony.run("build-finish", "1", "--results", "-", input=json.dumps({"watcher": WATCHER})).json

    assert out["phase_status"] == "failed"
    by_id = {t["id"]: t["status"] for t in colony.load("PROJECT_PLAN.json")["phases"][0]["tasks"]}
    assert by_id == {"1.1": "skipped", "1.2": "completed", "1.3": "failed"}
    assert [f["id"] for f in out["failed_tasks"]] == ["1.3"]
    errors = colony.load("errors.json")["errors"]
    assert [e["task_id"] for e in errors] == ["1.3"]
    assert errors[0]["description"] == "its runs never finished"


def test_a_flagged_task_fails_with_its_failure_report_as_the_error(colony):
    start_build(colony, THREE[:1])  # one worker: approved by itself
    colony.run("spawn-start", "w1").json
    colony.run("spawn-finish", "w1", "-", input=failed("1.1", confidence=40, category="Import")).json
    colony.run("failure-decide", "--worker", "w1").json
    colony.run("spawn-start", "d1").json
    colony.run("spawn-finish", "d1", "-", input=json.dumps({"status": "failed", "diagnosis": "UNDIAGNOSABLE", "fix_applied": False})).json
    assert colony.run("failure-decide", "--worker", "d1", "--maps-to-criterion").json["action"] == "flag"
    out = colony.run("build-finish", "1", "--results", "-", input=json.dumps({"watcher": WATCHER})).json

    statuses = {t["id"]: t["status"] for t in colony.load("PROJECT_PLAN.json")["phases"][0]["tasks"]}
    assert statuses == {"1.1": "failed", "1.2": "failed", "1.3": "failed"}  # 1.2, 1.3: no worker had them
    errors = {e["task_id"]: e for e in colony.load("errors.json")["errors"]}
    assert errors["1.1"]["category"] == "import"
    assert errors["1.1"]["root_cause"] == "add() does not return the item"
    assert errors["1.1"]["description"] == "UNDIAGNOSABLE"  # what failed last: the debugger
    assert errors["1.2"]["description"] == "no worker of the wave plan had this task"
    assert out["tasks"]["failed"] == 3


def test_results_without_tasks_need_a_spawn_tree_of_the_phase(colony):
    colony.run("build-start", "1").json
    before = colony.load("PROJECT_PLAN.json")
    err = colony.run("build-finish", "1", "--results", "-", input=json.dumps({"watcher": WATCHER})).error
    assert err["code"] == "results_need_tasks" and "tasks" in err["error"]
    assert colony.load("PROJECT_PLAN.json") == before
    assert colony.load("COLONY_STATE.json")["state"] == "EXECUTING"


def test_results_with_tasks_are_still_taken_as_given(colony):
    start_build(colony, THREE[:1])
    tasks = [{"id": t, "status": "completed"} for t in ("1.1", "1.2", "1.3")]
    out = colony.run("build-finish", "1", "--results", "-", input=json.dumps({"tasks": tasks, "watcher": WATCHER})).json
    assert out["tasks_from"] == "results" and out["phase_status"] == "completed"


# ---------------------------------------------------------------- verify-brief


def test_verify_brief_gives_the_watcher_what_the_build_changed(colony):
    colony.run("pheromone-emit", "FOCUS", "-", input="the store's error handling first\n").json
    build_with_recoveries(colony)
    brief = colony.run("verify-brief", "1").json

    assert brief["spawn"] is True and brief["subagent_type"] == "ant:watcher" and brief["watcher"] is None
    assert brief["depth"] == "full" and brief["mode"] == "STANDARD"
    assert brief["files"] == ["todo/cli.py", "todo/__init__.py", "todo/store.py", "tests/test_todo.py"]
    text = brief["text"]
    assert text.startswith("--- VERIFICATION ---")
    # each check is a command the helper names, to be run as written (its run is the evidence)
    here = f"cd {colony.root} && "  # in the project's own folder, whatever folder the shell was left in
    assert f'  - imports: {here}python3 -c "import todo, todo.cli, todo.store"' in text
    assert f"  - tests: {here}python3 -m pytest -q" in text and "  - syntax: checked by Aether itself" in text
    assert "launch" not in text and "no pipe" in text
    assert "  - pytest passes" in text
    assert "  - 1.3: tests — completed (w3)" in text
    assert "ACTIVE PHEROMONES (as sensed by watcher)" in text and "error handling first" in text
    assert '"passed": true' in text and text.rstrip().endswith("```")
    assert colony.run("verify-brief", "1", "--text").stdout == text + "\n"


def test_verify_brief_in_full_mode_asks_for_an_execution_check_and_score_parts(project):
    project.run("colony-init", "--mode", "full", "A todo CLI").json
    project.run("plan-load", "-", input=json.dumps(PLAN)).json
    started = project.run("build-start", "1").json
    project.run("plan-waves", "-", input=json.dumps({"workers": THREE[:1]})).json
    project.run("build-start", "1", "--approve").json  # FULL always asks
    brief = project.run("verify-brief", "1").json

    assert brief["depth"] == "full+execution"
    # no entry point and no tests in this project: said, so the check cannot pass unnoticed
    assert "  - launch: cannot be run — no entry point found" in brief["text"] and "verify: launch:" in brief["text"]
    assert "  - tests: cannot be run — no test command found" in brief["text"]
    loop_id = started["code_loop"]["loop_id"]
    assert brief["code_loop"] == {"loop_id": loop_id, "threshold": 95, "command": f"aether loop-score - --loop {loop_id}"}
    assert '"score_parts"' in brief["text"] and f"Code loop {loop_id}" in brief["text"]
    # the block the watcher is asked for is one loop-score reads
    block = brief["text"].split("```json\n", 1)[1].split("\n```", 1)[0]
    scored = project.run("loop-score", "-", "--loop", loop_id, input=block).json
    assert scored["loop"]["decision"] in ("refine", "complete", "user_input")


def test_lightweight_spawns_no_watcher(project):
    project.run("colony-init", "--mode", "lightweight", "A todo CLI").json
    project.run("plan-load", "-", input=json.dumps(PLAN)).json
    start_build(project, [{"id": "a", "caste": "builder", "tasks": ["1.1", "1.2", "1.3"], "writes": ["todo/store.py"]}])
    (project.root / "todo").mkdir()
    (project.root / "todo" / "store.py").write_text("def add(x):\n    return x\n", "utf-8")
    run_spawn(project, "w1", result(created=["todo/store.py"]))

    brief = project.run("verify-brief", "1").json
    assert (brief["spawn"], brief["watcher"], brief["depth"]) == (False, None, "syntax")
    assert brief["files"] == ["todo/store.py"] and "build-finish" in brief["text"]
    out = project.run("build-finish", "1", "--results", "-", input="{}").json
    assert out["tasks_from"] == "spawn_tree" and out["phase_status"] == "completed"


def test_verify_brief_refuses_outside_a_build_or_before_its_waves(colony):
    assert colony.run("verify-brief", "1").error["code"] == "not_building"
    colony.run("build-start", "1").json
    assert colony.run("verify-brief", "2").error["code"] == "phase_mismatch"
    assert colony.run("verify-brief", "1").error["code"] == "no_spawn_tree"
    assert colony.run("verify-brief", "0").error["code"] == "invalid_argument"


# ---------------------------------------------------------------- build-finish --watcher


def test_build_finish_takes_the_watchers_whole_answer(colony):
    build_with_recoveries(colony)
    answer = "All checks pass.\n\n```json\n" + json.dumps(WATCHER) + "\n```\n"
    out = colony.run("build-finish", "1", "--watcher", "-", input=answer).json
    assert out["tasks_from"] == "spawn_tree" and out["phase_status"] == "completed"
    assert out["watcher"]["score"] == 88 and out["watcher"]["summary"] == "green"


def test_build_finish_watcher_errors_change_nothing(colony):
    start_build(colony, THREE[:1])
    run_spawn(colony, "w1", result())
    before = colony.load("PROJECT_PLAN.json")
    err = colony.run("build-finish", "1", "--watcher", "-", input="it all passed, trust me").error
    assert err["code"] == "invalid_json" and "```json" in err["error"]
    err = colony.run("build-finish", "1", "--watcher", "-", input='```json\n{"score": 90}\n```').error
    assert err["code"] == "invalid_results" and err["defects"][0]["path"] == "watcher.passed"
    err = colony.run("build-finish", "1", "--watcher", "-", "--results", "-", input="{}").error
    assert err["code"] == "invalid_argument"
    # STANDARD needs a watcher report: finishing with neither option is refused
    err = colony.run("build-finish", "1").error
    assert err["code"] == "invalid_results" and err["defects"][0]["path"] == "watcher"
    assert colony.load("PROJECT_PLAN.json") == before
    assert colony.load("COLONY_STATE.json")["state"] == "EXECUTING"


def test_lightweight_finishes_without_a_watcher(project):
    project.run("colony-init", "--mode", "lightweight", "A todo CLI").json
    project.run("plan-load", "-", input=json.dumps(PLAN)).json
    start_build(project, [{"id": "a", "caste": "builder", "tasks": ["1.1", "1.2", "1.3"]}])
    make(project, "todo/store.py")
    run_spawn(project, "w1", result(created=["todo/store.py"]))
    out = project.run("build-finish", "1").json
    assert out["phase_status"] == "completed" and out["watcher"] is None
