"""The completion summary (seed 004, phase 6): when the last phase completes, phase-advance answers
it and `completion-summary` shows it — loop scores and iterations, phases, files of every build
(kept per phase, since the spawn tree is replaced), tests and coverage, promoted learnings,
next steps."""

import json

from helpers.colony import flat_plan, make_plan, ok, plan_waves, worker


def build_phase(project, phase, files, watcher, loop_parts=None):
    ok(project, "build-start", phase)
    plan_waves(project, [worker("a", [f"{phase}.1"], writes=[files[0]]), worker("b", [f"{phase}.2"], writes=[files[1]])])
    for node, path in (("w1", files[0]), ("w2", files[1])):
        ok(project, "spawn-start", node)
        full = project.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        existed = full.exists()
        full.write_text(f"# {path} v{phase}\n")
        key = "files_modified" if existed else "files_created"
        ok(project, "spawn-finish", node, "-", input={"status": "completed", key: [path]})
    if loop_parts is not None:
        loop = project.load("loops.json")["loops"][-1]["id"]
        ok(project, "loop-score", "-", "--loop", loop, input=loop_parts)
    return ok(project, "build-finish", phase, "--results", "-", input={"watcher": watcher})


def test_the_last_phase_completes_with_a_summary(project, _isolated_home):
    project_id = ok(project, "colony-init", "Build a stats tool")["project_id"]
    # a plan loop: two iterations, the second passes
    ok(project, "plan-start")
    plan_loop = ok(project, "loop-init", "plan")["loop_id"]
    ok(project, "plan-draft-store", plan_loop, "-", input=flat_plan(2, phases=2))
    ok(project, "loop-decide", plan_loop, 70)
    ok(project, "plan-draft-store", plan_loop, "-", input=flat_plan(2, phases=2))
    ok(project, "loop-decide", plan_loop, 86)
    ok(project, "plan-load", "--from-loop", plan_loop)
    # a promoted global learning this project contributed to
    (_isolated_home / ".aether").mkdir(exist_ok=True)
    (_isolated_home / ".aether" / "learnings.json").write_text(
        json.dumps(
            {
                "version": 2,
                "learnings": [
                    {
                        "id": "global_1_aaaa",
                        "content": "pin your test runner's version",
                        "category": "tooling",
                        "tags": [],
                        "source_projects": ["proj_a", "proj_b", project_id],
                        "occurrence_count": 3,
                        "promoted": True,
                    },
                    {
                        "id": "global_2_bbbb",
                        "content": "someone else's",
                        "category": None,
                        "tags": [],
                        "source_projects": ["proj_z"],
                        "occurrence_count": 3,
                        "promoted": True,
                    },
                ],
            }
        )
    )
    tests = {"name": "tests", "passed": True, "detail": "14 passed"}
    build_phase(
        project,
        1,
        ["src/stats.py", "tests/test_stats.py"],
        {"passed": True, "score": 93, "checks": [tests, {"name": "coverage", "passed": True, "detail": "88%"}]},
    )
    ok(project, "phase-advance")
    ok(project, "build-start", 2, "--loop")
    ok(project, "build-abort", 2, "--reason", "restart with the loop bound")
    parts = {
        "tests": {"passed": 20, "failed": 0},
        "types": True,
        "lint": True,
        "coverage": 90,
        "plan_alignment": True,
        "spec_alignment": True,
    }
    second = build_phase_resume(project, parts)
    assert second["phase_status"] == "completed"
    early = ok(project, "completion-summary", "--json")
    assert early["complete"] is False and "COLONY SUMMARY (READY)" in early["text"]
    done = ok(project, "phase-advance")
    assert done["state"] == "COMPLETED" and done["to"] is None
    s = done["summary"]
    assert s["complete"] is True and [p["status"] for p in s["phases"]] == ["completed", "completed"]
    assert s["planning"] == {"score": 86, "iterations": 2, "loops": 1}
    assert s["coding"]["scores"] == {"2": 100} and s["coding"]["iterations"] == 1
    assert s["files"]["created"] == ["src/stats.py", "tests/test_stats.py", "src/cli.py"]
    assert s["files"]["modified"] == []  # phase 2 changed src/stats.py, which phase 1 created
    p1, p2 = s["phases"]
    assert (p1["tests"], p1["coverage"], p1["watcher_score"]) == ("14 passed", "88%", 93)
    assert (p2["tests"], p2["coverage"], p2["code_score"]) == ("20 passed, 0 failed", "90% ≥ 80%", 100)
    assert s["learnings"]["promoted"] == [{"id": "global_1_aaaa", "content": "pin your test runner's version", "projects": 3}]
    assert any("/ant:init" in step for step in s["next_steps"])
    text = done["text"]
    for piece in (
        "Every phase is completed: the colony is COMPLETED.",
        "COLONY COMPLETE",
        "Phases: 2/2 completed",
        "Planning: score 86 after 2 iteration(s)",
        "Coding: 1 iteration(s) in 1 code loop(s) (phase 2: 100)",
        "+ src/stats.py",
        "tests 14 passed · coverage 88%",
        "★ pin your test runner's version",
        "Next steps:",
    ):
        assert piece in text, piece
    shown = project.run("completion-summary").stdout
    assert shown.rstrip("\n") == ok(project, "completion-summary", "--json")["text"]


def build_phase_resume(project, parts):
    """Phase 2, resumed with a code loop (the aborted start made one; it is reused)."""
    started = ok(project, "build-start", 2, "--resume")
    assert started["code_loop"]["reused"] is True
    plan_waves(project, [worker("a", ["2.1", "2.2"], writes=["src/cli.py", "src/stats.py"])])
    ok(project, "spawn-start", "w1")
    (project.root / "src" / "cli.py").write_text("print('cli')\n")
    (project.root / "src" / "stats.py").write_text("# v2\n")
    ok(
        project,
        "spawn-finish",
        "w1",
        "-",
        input={"status": "completed", "files_created": ["src/cli.py"], "files_modified": ["src/stats.py"]},
    )
    ok(project, "loop-score", "-", "--loop", started["code_loop"]["loop_id"], input=parts)
    return ok(project, "build-finish", 2, "--results", "-", input={"watcher": {"passed": True, "score": 99, "checks": []}})


def test_lightweight_completion_asks_for_the_projects_learnings(project):
    ok(project, "colony-init", "tiny script", "--mode", "LIGHTWEIGHT")
    ok(project, "plan-load", "-", input=make_plan(phases=1))
    ok(project, "build-start", 1)
    out = ok(project, "build-finish", 1, "--results", "-", input={"tasks": [{"id": f"1.{t}", "status": "completed"} for t in (1, 2, 3)]})
    assert out["learnings"]["extract_now"] is True  # the last phase is the project's end
    done = ok(project, "phase-advance")
    assert any(step.startswith("Record the project's learnings: aether learning-add 1") for step in done["summary"]["next_steps"])
    assert done["summary"]["phases"][0]["tests"].startswith("not run (syntax check")
    ok(project, "learning-add", 1, "keep scripts small")
    again = ok(project, "completion-summary", "--json")
    assert not any("learning-add" in step for step in again["next_steps"])
    assert again["learnings"]["phases_extracted"] == [1]


def test_summary_needs_a_colony(project):
    assert project.run("completion-summary").error["code"] == "state_missing"


def test_phase_records_survive_the_next_build_and_are_capped(project):
    ok(project, "colony-init", "goal")
    ok(project, "plan-load", "-", input=make_plan(phases=2))
    for _ in range(3):
        ok(project, "build-start", 1, "--resume") if project.file("phase_records.json").exists() else ok(project, "build-start", 1)
        ok(
            project,
            "build-finish",
            1,
            "--results",
            "-",
            input={
                "tasks": [
                    {"id": "1.1", "status": "completed", "files_created": ["a.py"]},
                    {"id": "1.2", "status": "failed"},
                    {"id": "1.3", "status": "completed"},
                ],
                "watcher": {"passed": True, "score": 80, "checks": []},
            },
        )
    records = project.load("phase_records.json")["records"]
    assert [r["status"] for r in records] == ["failed", "failed", "failed"]
    assert records[0]["files_created"] == ["a.py"] and records[0]["failed_tasks"] == ["1.2"]
    assert ok(project, "validate-state", "phase_records")["pass"] is True
