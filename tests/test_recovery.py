"""Recovery after an abort (seed 002): the auto-retry log in status and the abort report, the
options with their exact commands, resume after a manual fix, task-skip, phase-skip (only off a
success criterion's path), checkpoint-list/restore, and friction records read back."""

import pytest

from helpers.colony import flat_plan, ok, plan_waves, run_worker, worker
from helpers.git import git, init_repo

FAIL = {
    "error": "ImportError: cannot import name 'Todo'",
    "root_cause": "circular import between models and store",
    "suggested_fix": "move Todo into its own module",
    "confidence": 90,
    "fix_scope": "contained",
    "category": "import",
}


def supporting(plan, *critical):
    """Mark every task of a plan supporting (`maps_to_criterion: false`) but the `critical` ones."""
    for phase in plan["phases"]:
        for task in phase["tasks"]:
            task["maps_to_criterion"] = task["id"] in critical
    return plan


def plan_with(project, extra=None, phases=3, tasks=3, said=True):
    """A loaded plan; its tasks say they are supporting unless `extra` says otherwise (or said=False)."""
    ok(project, "colony-init", "Build a todo API")
    plan = flat_plan(tasks, phases=phases, **(extra or {}))
    for task in (t for p in plan["phases"] for t in p["tasks"]) if said else ():
        task.setdefault("maps_to_criterion", False)
    ok(project, "plan-load", "-", input=plan)


def write(project, rel, text="x = 1\n"):
    path = project.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def aborted_build(project):
    """Phase 1: w1 fails, its retry fails with the same error as w2 → a common cause aborts the phase."""
    ok(project, "build-start", 1)
    plan_waves(
        project,
        [worker("a", ["1.1"], writes=["src/a.py"]), worker("b", ["1.2"], writes=["src/b.py"]), worker("c", ["1.3"], writes=["src/c.py"])],
    )
    for node in ("w1", "w2", "w3"):
        ok(project, "spawn-start", node)
    ok(project, "spawn-finish", "w1", "-", input={"status": "failed", "failure": {"task": "1.1", "files": ["src/a.py"], **FAIL}})
    write(project, "src/c.py")
    ok(project, "spawn-finish", "w3", "-", input={"status": "completed", "files_created": ["src/c.py"]})
    assert ok(project, "failure-decide", "--worker", "w1")["action"] == "retry"
    ok(project, "spawn-start", "r1")
    ok(
        project,
        "spawn-finish",
        "r1",
        "-",
        input={"status": "failed", "failure": {"task": "1.1", "files": ["src/a.py"], **FAIL, "confidence": 60}},
    )
    ok(project, "spawn-finish", "w2", "-", input={"status": "failed", "failure": {"task": "1.2", "files": ["src/b.py"], **FAIL}})
    verdict = ok(project, "failure-decide", "--worker", "r1")
    assert verdict["action"] == "abort_phase", verdict
    ok(project, "build-abort", 1, "--reason", "common cause: circular import")


def test_abort_report_and_status_show_the_retry_log_and_the_recovery_options(project):
    plan_with(project)
    aborted_build(project)
    report = ok(project, "abort-report", 1, "--json")
    assert [(r["task"], r["attempt"], r["kind"], r["result"]) for r in report["retry_log"]] == [("1.1", 2, "retry", "failed")]
    assert report["retry_log"][0]["fix_applied"] == "move Todo into its own module"
    commands = {o["id"]: o["command"] for o in report["recovery"]}
    assert commands == {
        "resume": "aether next --build 1",
        "skip_task": "aether task-skip 1.1 --reason -",
        "skip_phase": "aether phase-skip 1 --reason -",
        "restore": "aether checkpoint-restore --phase 1",
        "replan": "aether next --plan",
    }
    text = report["text"]
    assert "| Task | Attempt | Error | Fix applied | Result |" in text and "✗ still failing" in text
    assert "/ant:build 1 (`aether next --build 1`)" in text
    assert "Skip to the next phase: `aether phase-skip 1 --reason -`\n" in text  # no criterion depends on phase 1
    assert "`aether checkpoint-restore --phase 1` — not available: no checkpoint recorded (outside git?)" in text
    status = ok(project, "status", "--json")
    assert status["retry_log"] == report["retry_log"]
    assert [o["id"] for o in status["recovery"]] == ["resume", "skip_task", "skip_phase", "restore", "replan"]
    assert "AUTO-RETRY LOG (phase 1)" in status["text"] and "RECOVERY (phase 1 aborted)" in status["text"]
    assert "aether task-skip 1.1 --reason -" in status["text"]


def test_resume_after_a_manual_fix(project):
    plan_with(project)
    aborted_build(project)
    write(project, "src/models.py", "class Todo: pass\n")  # the manual fix
    resumed = ok(project, "build-start", 1, "--resume")
    assert resumed["resumed"] is True and resumed["todo"] == ["1.1", "1.2", "1.3"]
    plan_waves(project, [worker("a", ["1.1", "1.2", "1.3"], writes=["src/a.py"])])
    ok(project, "spawn-start", "w1")
    write(project, "src/a.py")
    ok(project, "spawn-finish", "w1", "-", input={"status": "completed", "files_created": ["src/a.py"]})
    done = ok(project, "build-finish", 1, "--results", "-", input={"watcher": {"passed": True, "score": 90, "checks": []}})
    assert done["phase_status"] == "completed" and ok(project, "status", "--json")["recovery"] is None


def test_task_skip_rules(project):
    plan_with(project, {"1.1": {"maps_to_criterion": True}, "1.2": {"maps_to_criterion": False}}, phases=2, tasks=4)
    ok(project, "build-start", 1)
    ok(project, "build-abort", 1, "--reason", "stop")
    err = project.run("task-skip", "1.1", "--reason", "not needed").error
    assert err["code"] == "task_required" and "maps to a success criterion" in err["reasons"][0]
    assert project.run("task-skip", "9.9", "--reason", "x").error["code"] == "unknown_task"
    assert project.run("task-skip", "1.2", "--reason", "  ").error["code"] == "invalid_reason"
    skipped = ok(project, "task-skip", "1.2", "--reason", "-", input="the docs task can wait\n")
    assert skipped["status"] == "skipped" and skipped["remaining"] == ["1.1", "1.3", "1.4"]
    assert skipped["next"]["command"] == "aether next --build 1"
    assert ok(project, "task-skip", "1.2", "--reason", "again")["already_skipped"] is True
    forced = ok(project, "task-skip", "1.1", "--reason", "user says so", "--force")
    assert forced["forced"] is True and forced["overridden"]
    task = project.load("PROJECT_PLAN.json")["phases"][0]["tasks"][0]
    assert task["status"] == "skipped" and task["skipped"]["forced"] is True
    # the resumed build keeps skipped tasks skipped and needs outcomes only for the others
    resumed = ok(project, "build-start", 1, "--resume")
    assert resumed["todo"] == ["1.3", "1.4"]
    out = ok(
        project,
        "build-finish",
        1,
        "--results",
        "-",
        input={
            "tasks": [{"id": "1.3", "status": "completed"}, {"id": "1.4", "status": "completed"}],
            "watcher": {"passed": True, "score": 90, "checks": []},
        },
    )
    assert out["phase_status"] == "completed" and out["tasks"]["skipped"] == 2
    assert project.run("task-skip", "1.3", "--reason", "late").error["code"] == "phase_completed"
    assert "task_skipped" in [e["type"] for e in project.load("events.json")["events"]]


def test_task_skip_refuses_a_task_others_depend_on_and_a_running_build(project):
    plan_with(project, {"deps": {"1.2": ["1.1"]}}, phases=1)
    err = project.run("task-skip", "1.1", "--reason", "x").error
    assert err["code"] == "task_required" and "1.2" in err["reasons"][0]
    ok(project, "build-start", 1)
    assert project.run("task-skip", "1.3", "--reason", "x").error["code"] == "colony_executing"


def test_phase_skip_only_off_the_criterion_path(project):
    plan = supporting(flat_plan(2, phases=3), "3.1")
    plan["phases"][1]["tasks"][0]["depends_on"] = ["1.1"]  # phase 2 needs phase 1
    ok(project, "colony-init", "goal")
    ok(project, "plan-load", "-", input=plan)
    err = project.run("phase-skip", 1, "--reason", "x").error
    assert err["code"] == "phase_required" and "2.1" in err["reasons"][0]
    assert project.run("phase-skip", 2, "--reason", "x").error["code"] == "phase_out_of_order"
    for phase in (1,):
        ok(project, "build-start", phase)
        ok(
            project,
            "build-finish",
            phase,
            "--results",
            "-",
            input={
                "tasks": [{"id": f"{phase}.1", "status": "completed"}, {"id": f"{phase}.2", "status": "completed"}],
                "watcher": {"passed": True, "score": 90, "checks": []},
            },
        )
    ok(project, "phase-advance")
    skipped = ok(project, "phase-skip", 2, "--reason", "-", input="not needed for the demo")
    assert (skipped["status"], skipped["to"], skipped["skipped_tasks"]) == ("skipped", 3, ["2.1", "2.2"])
    assert skipped["next"]["command"] == "aether next --build 3"
    colony = project.load("COLONY_STATE.json")
    assert colony["current_phase"] == 3 and colony["state"] == "READY"
    assert [p["status"] for p in project.load("PROJECT_PLAN.json")["phases"]] == ["completed", "skipped", "pending"]
    err = project.run("phase-skip", 3, "--reason", "x").error
    assert err["code"] == "phase_required" and "3.1" in err["reasons"][0]
    ok(project, "build-start", 3)  # the phase after a skipped one builds normally


def test_a_task_the_plan_says_nothing_about_counts_as_critical_for_every_caller(project):
    """One rule, one default (plans.maps_to_criterion): the failure ladder flags such a task after its
    debugger, task-skip refuses it without --force, phase-skip refuses its phase."""
    plan_with(project, said=False, phases=2, tasks=2)
    ok(project, "build-start", 1)
    plan_waves(project, [worker("a", ["1.1"], writes=["src/a.py"]), worker("b", ["1.2"], writes=["src/b.py"])])
    run_worker(
        project,
        "w1",
        "failed",
        failure={"task": "1.1", "error": "KeyError: 'id'", "confidence": 20, "fix_scope": "contained", "files": ["src/a.py"]},
    )
    assert ok(project, "failure-decide", "--worker", "w1")["action"] == "debug"
    run_worker(project, "d1", "failed", diagnosis="UNDIAGNOSABLE: no idea", fix_applied=False)
    flagged = ok(project, "failure-decide", "--worker", "d1")
    assert flagged["action"] == "flag" and "the plan does not say it is only a supporting task" in flagged["reason"]
    ok(project, "build-abort", 1, "--reason", "stop")
    err = project.run("task-skip", "1.1", "--reason", "x").error
    assert err["code"] == "task_required" and "does not say whether task(s) 1.1" in err["reasons"][0]
    options = {o["id"]: o for o in ok(project, "status", "--json")["recovery"]}
    assert not options["skip_task"]["available"] and not options["skip_phase"]["available"]
    err = project.run("phase-skip", 1, "--reason", "x").error
    assert err["code"] == "phase_required" and "1.1, 1.2" in err["reasons"][0]
    assert ok(project, "task-skip", "1.1", "--reason", "user says so", "--force")["forced"] is True


def test_a_supporting_task_is_skipped_by_the_ladder_and_may_be_skipped_by_hand(project):
    plan_with(project, phases=2, tasks=2)  # every task says maps_to_criterion: false
    ok(project, "build-start", 1)
    plan_waves(project, [worker("a", ["1.1"], writes=["src/a.py"]), worker("b", ["1.2"], writes=["src/b.py"])])
    run_worker(
        project,
        "w1",
        "failed",
        failure={"task": "1.1", "error": "KeyError: 'id'", "confidence": 20, "fix_scope": "contained", "files": ["src/a.py"]},
    )
    ok(project, "failure-decide", "--worker", "w1")
    run_worker(project, "d1", "failed", diagnosis="UNDIAGNOSABLE: no idea", fix_applied=False)
    assert ok(project, "failure-decide", "--worker", "d1")["action"] == "skip"
    ok(project, "build-abort", 1, "--reason", "stop")
    assert ok(project, "task-skip", "1.1", "--reason", "x")["forced"] is False


def test_skipping_the_last_phase_completes_the_colony(project):
    plan_with(project, phases=2, tasks=2)
    for phase in (1,):
        ok(project, "build-start", phase)
        ok(
            project,
            "build-finish",
            phase,
            "--results",
            "-",
            input={
                "tasks": [{"id": "1.1", "status": "completed"}, {"id": "1.2", "status": "completed"}],
                "watcher": {"passed": True, "score": 90, "checks": []},
            },
        )
    ok(project, "phase-advance")
    out = ok(project, "phase-skip", 2, "--reason", "out of scope")
    assert out["to"] is None and out["state"] == "COMPLETED" and out["next"]["command"] == "aether completion-summary"
    assert project.run("phase-skip", 2, "--reason", "x").error["code"] == "invalid_transition"


# ---------------------------------------------------------------- checkpoints


def test_checkpoint_list_and_restore_the_start_of_a_phase(project):
    init_repo(project.root, {"README.md": "# todo\n"})
    plan_with(project, phases=2, tasks=2)
    ok(project, "build-start", 1)
    plan_waves(project, [worker("a", ["1.1"], writes=["src/a.py"]), worker("b", ["1.2"], writes=["src/b.py"])])
    ok(project, "spawn-start", "w1")
    write(project, "src/a.py", "a = 1\n")
    ok(project, "spawn-finish", "w1", "-", input={"status": "completed", "files_created": ["src/a.py"]})
    assert project.run("checkpoint-restore", "--phase", 1).error["code"] == "colony_executing"
    ok(
        project,
        "build-finish",
        1,
        "--results",
        "-",
        input={
            "tasks": [{"id": "1.1", "status": "completed"}, {"id": "1.2", "status": "failed"}],
            "watcher": {"passed": False, "score": 40, "checks": []},
        },
    )
    listed = ok(project, "checkpoint-list")
    assert listed["count"] == 1 and listed["checkpoints"][0]["label"] == "build-start phase 1"
    assert "build-start phase 1" in project.run("checkpoint-list", "--text").stdout
    assert ok(project, "checkpoint-list", "--phase", 2)["count"] == 0
    err = project.run("checkpoint-restore", "--phase", 1).error
    assert err["code"] == "unsaved_changes"  # src/a.py is in no checkpoint or commit
    out = ok(project, "checkpoint-restore", "--phase", 1, "--force")
    assert out["removed"] == ["src/a.py"] and out["saved_first"]["ref"].startswith("refs/aether/checkpoints/")
    assert not (project.root / "src" / "a.py").exists() and (project.root / "README.md").exists()
    assert out["tasks_reset"] == ["1.1"] and out["next"]["command"] == "aether next --build 1"
    assert [t["status"] for t in project.load("PROJECT_PLAN.json")["phases"][0]["tasks"]] == ["pending", "failed"]
    assert project.run("checkpoint-restore", "--phase", 2).error["code"] == "no_checkpoint"
    assert project.run("checkpoint-restore").error["code"] == "usage_error"
    assert project.run("checkpoint-restore", "refs/nope", "--phase", 1).error["code"] == "usage_error"
    assert project.run("checkpoint-restore", "refs/aether/none").error["code"] == "unknown_checkpoint"
    again = ok(project, "checkpoint-restore", listed["checkpoints"][0]["ref"])  # by ref: nothing unsaved now
    assert again["removed"] == [] and again["phase"] == 1


def test_checkpoint_restore_refuses_before_it_touches_a_file(project):
    """A refusal (damaged plan, running build, unknown checkpoint) leaves the working tree and the state
    as they were: everything is checked, under the lock, before the files are restored."""
    init_repo(project.root, {"README.md": "# todo\n"})
    plan_with(project, phases=2, tasks=2)
    ok(project, "build-start", 1)
    ok(project, "build-abort", 1, "--reason", "stop")
    start = ok(project, "checkpoint-list")["checkpoints"][0]["ref"]
    write(project, "added.txt", "new\n")
    git(project.root, "add", "added.txt")
    git(project.root, "commit", "-q", "-m", "base")  # saved work: a restore would remove it
    good_plan = project.file("PROJECT_PLAN.json").read_bytes()
    project.file("PROJECT_PLAN.json").write_text("{", encoding="utf-8")
    err = project.run("checkpoint-restore", "--phase", 1).error
    assert err["code"] == "state_corrupt" and "PROJECT_PLAN.json" in err["error"]
    assert (project.root / "added.txt").read_text() == "new\n"
    project.file("PROJECT_PLAN.json").write_bytes(good_plan)
    ok(project, "build-start", 1, "--resume")
    err = project.run("checkpoint-restore", "--phase", 1).error
    assert err["code"] == "colony_executing" and (project.root / "added.txt").exists()
    ok(project, "build-abort", 1, "--reason", "stop")
    events = len(project.load("events.json")["events"])
    assert project.run("checkpoint-restore", "refs/aether/none").error["code"] == "unknown_checkpoint"
    assert len(project.load("events.json")["events"]) == events and project.file("PROJECT_PLAN.json").exists()
    out = ok(project, "checkpoint-restore", start)
    assert out["removed"] == ["added.txt"] and not (project.root / "added.txt").exists()
    assert project.load("events.json")["events"][-1]["type"] == "checkpoint_restored"


def test_checkpoint_restore_outside_git(project):
    plan_with(project)
    assert project.run("checkpoint-restore", "refs/aether/x").error["code"] == "not_a_git_repo"
    assert ok(project, "checkpoint-list")["count"] == 0


# ---------------------------------------------------------------- friction read back


def friction(n, task, root_cause, pattern=None, phase=1):
    return {
        "id": f"FR-{n:03d}",
        "build": f"build_{phase}",
        "phase": phase,
        "task": task,
        "attempts": 2,
        "root_cause": root_cause,
        "resolution": f"fixed {task}",
        "pattern": pattern,
        "node": "r1",
        "timestamp": "2026-02-04T10:00:00Z",
    }


def test_recurring_friction_reaches_status_and_the_planner(project):
    plan_with(project)
    assert ok(project, "friction-summary") == {"total": 0, "recurring": [], "recent": [], "text": ""}
    assert ok(project, "plan-start")["friction"] is None
    records = [
        friction(1, "1.1", "Port 8080 already in use"),
        friction(2, "1.3", "schema drift in users table"),
        friction(3, "2.2", "port 9090 already in use", phase=2),
        friction(4, "2.3", "flaky clock in tests", pattern="seen before in 1/1.2", phase=2),
    ]
    project.write("failures.json", {"version": 1, "next_friction": 5, "history": [], "retry_log": [], "friction": records, "aborts": []})
    summary = ok(project, "friction-summary")
    assert summary["total"] == 4
    assert [(g["count"], g["tasks"]) for g in summary["recurring"]] == [(2, ["1/1.1", "2/2.2"]), (1, ["2/2.3"])]
    assert [r["id"] for r in summary["recent"]] == ["FR-004", "FR-003", "FR-002"]
    assert summary["text"].startswith("--- FRICTION") and "×2" in summary["text"]
    planning = ok(project, "plan-start")
    assert planning["friction"] == summary["text"] and planning["friction_recurring"] == 2
    status = ok(project, "status", "--json")
    assert status["frictions"]["recurring"][0]["count"] == 2
    assert "RECURRING FRICTION" in status["text"] and "port 9090 already in use" in status["text"]


@pytest.mark.parametrize("field,value", [("root_cause", -1), ("resolution", ["x"]), ("pattern", True), ("phase", "1")])
def test_a_damaged_friction_record_is_corrupt_state(project, field, value):
    plan_with(project)
    record = friction(1, "1.1", "Port 8080 already in use")
    record[field] = value
    project.write("failures.json", {"version": 1, "next_friction": 2, "history": [], "retry_log": [], "friction": [record], "aborts": []})
    for args in (["friction-summary"], ["status", "--json"], ["colony-pause"]):
        err = project.run(*args).error
        assert err["code"] == "state_corrupt" and f"friction[0].{field}" in err["error"], args
