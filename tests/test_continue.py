"""The lifecycle answers around a phase: continue-start (verification, learnings, the archivist,
completion), hygiene-check (oversized state files), and the pheromone-first suggestion before
planning (signals-suggest, plan-start, complexity-detect --apply)."""

import json

import pytest

from helpers.colony import flat_plan, make_plan, ok

WATCHER_OK = {"passed": True, "score": 91, "checks": [{"name": "tests", "passed": True, "detail": "9 passed"}]}


def colony(project, mode="STANDARD", phases=3, plan=None):
    ok(project, "colony-init", "Build a todo API", "--mode", mode)
    ok(project, "plan-load", "-", input=plan or make_plan(phases=phases))


def finish(project, phase, failed=(), watcher=WATCHER_OK):
    ok(project, "build-start", phase)
    tasks = [{"id": f"{phase}.{t}", "status": "failed" if f"{phase}.{t}" in failed else "completed"} for t in (1, 2, 3)]
    doc = {"tasks": tasks}
    if watcher is not None:
        doc["watcher"] = watcher
    return ok(project, "build-finish", phase, "--results", "-", input=doc)


def test_after_a_completed_phase(project):
    colony(project)
    finish(project, 1)
    out = ok(project, "continue-start")
    v = out["verification"]
    assert (v["completed"], v["status"], v["failed_tasks"], v["flagged_tasks"]) == (True, "completed", [], [])
    assert v["watcher"]["score"] == 91 and out["can_advance"] is True and out["last_phase"] is False
    assert out["learnings"]["extract_now"] is True and out["learnings"]["command"] == "aether learning-add 1 - --each-line"
    assert out["archivist"]["run"] is False and out["mode_profile"]["when"] == "continue"
    assert [n["command"] for n in out["next"]] == ["aether learning-add 1 - --each-line", "aether next --continue"]
    assert "Continue · phase 1" in project.run("continue-start", "--text").stdout
    ok(project, "learning-add", 1, "-", "--each-line", input="- small phases work\n")
    assert ok(project, "continue-start")["learnings"] == {
        **out["learnings"],
        "extract_now": False,
        "already_extracted": True,
        "reason": "the build extracted them already (learning-add refuses a second entry per phase)",
    }


def test_learnings_answers_carry_the_categories_learning_promote_takes(project):
    from aether.state.learning import CATEGORIES

    colony(project)
    built = finish(project, 1)["learnings"]
    continuing = ok(project, "continue-start")["learnings"]
    for learnings in (built, continuing):
        assert learnings["categories"] == list(CATEGORIES)
        assert learnings["promote_command"] == "aether learning-promote - --category <category>"
    for category in built["categories"]:  # each one is accepted by the command it is for
        out = project.run("learning-promote", "-", "--category", category, input=f"a lesson about {category} here\n")
        assert out.code == 0 and out.json["stored"] is True, out.stderr
    assert project.run("learning-promote", "-", "--category", "folklore", input="x y z\n").code == 1


def test_a_failed_phase_is_not_advanced_and_lists_recovery(project):
    colony(project)
    finish(project, 1, failed=("1.2",))
    out = ok(project, "continue-start")
    assert out["can_advance"] is False and out["verification"]["failed_tasks"][0]["id"] == "1.2"
    assert out["next"][0]["command"] == "aether next --build 1"
    assert [o["id"] for o in out["recovery"]][:3] == ["resume", "skip_task", "skip_phase"]
    assert out["learnings"]["extract_now"] is False


def test_flagged_tasks_come_from_the_failure_ladder(project):
    colony(project)
    finish(project, 1)
    entry = {
        "id": "fail_1_aaaa",
        "build": "build_1",
        "phase": 1,
        "wave": 1,
        "worker": "d1",
        "task": "1.2",
        "error": "boom",
        "normalized_error": "boom",
        "action": "flag",
        "reason": "the debugger could not fix it",
        "files": [],
        "timestamp": "2026-02-04T10:00:00Z",
    }
    project.write("failures.json", {"version": 1, "next_friction": 1, "history": [entry], "retry_log": [], "friction": [], "aborts": []})
    flagged = ok(project, "continue-start")["verification"]["flagged_tasks"]
    assert flagged == [{"task": "1.2", "action": "flag", "reason": "the debugger could not fix it"}]


@pytest.mark.parametrize("phase,runs", [(2, False), (3, True)])
def test_the_archivist_runs_every_third_phase_in_full(project, phase, runs):
    colony(project, mode="FULL", plan=flat_plan(3, phases=4))
    for p in range(1, phase + 1):
        finish(project, p)
        if p < phase:
            ok(project, "phase-advance")
    out = ok(project, "continue-start")
    assert out["archivist"]["run"] is runs and out["archivist"]["every"] == 3
    if runs:
        brief = out["archivist"]["brief"]
        assert "REPORT ONLY" in brief and "stale files" in brief and "orphaned config" in brief
        assert out["archivist"]["subagent_type"] == "ant:architect"
        assert any("ant:architect" in n["command"] for n in out["next"])
    assert out["learnings"]["between_phases"] is True  # FULL: inter-phase learnings too
    assert out["learnings"]["between_command"] == f"aether learning-add {phase} - --each-line --append"


def test_the_last_phase_leads_to_completion(project):
    colony(project, phases=1)
    finish(project, 1)
    out = ok(project, "continue-start")
    assert out["last_phase"] is True and out["completion"] is True
    assert "completes the colony" in out["next"][-1]["reason"]
    ok(project, "phase-advance")
    done = ok(project, "continue-start")
    assert done["state"] == "COMPLETED" and done["can_advance"] is False
    assert done["next"][-1]["command"] == "aether completion-summary"


def test_states_continue_refuses(project):
    assert project.run("continue-start").error["code"] == "state_missing"
    colony(project)
    assert project.run("continue-start").error["code"] == "nothing_built"
    ok(project, "build-start", 1)
    assert project.run("continue-start").error["code"] == "colony_executing"
    ok(project, "build-abort", 1, "--reason", "x")
    ok(project, "plan-start")
    assert project.run("continue-start").error["code"] == "invalid_transition"


def test_hygiene_check_lists_oversized_state_files(project):
    colony(project, mode="FULL", phases=4)
    assert ok(project, "hygiene-check")["oversized_state_files"] == []
    events = {
        "version": 1,
        "events": [
            {"id": f"evt_{i}", "type": "note", "source": "queen", "content": "x" * 3000, "timestamp": "2026-02-04T10:00:00Z"}
            for i in range(100)
        ],
    }
    project.write("events.json", events)
    memory = project.load("memory.json")
    memory["decisions"] = [{"id": f"d{i}", "type": "general", "content": "word " * 400, "phase": 1} for i in range(30)]
    project.write("memory.json", memory)
    (project.data / "activity-phase-1.log").write_text("x" * 1_000_001)
    out = ok(project, "hygiene-check", "--phase", 3)
    files = {o["file"]: o for o in out["oversized_state_files"]}
    assert set(files) == {"events.json", "memory.json", "activity-phase-1.log"}
    assert files["memory.json"]["suggestion"] == "aether memory-compress"
    assert out["run_archivist"] is True and "events.json" in out["brief"]
    assert ok(project, "hygiene-check", "--phase", 4)["run_archivist"] is False


# ---------------------------------------------------------------- pheromone-first


def test_signals_are_suggested_before_planning(project):
    assert ok(project, "signals-suggest")["suggest"] is False  # no colony
    ok(project, "colony-init", "Build a todo API")
    out = ok(project, "signals-suggest")
    assert out["suggest"] is True and out["commands"][0].startswith("/ant:focus")
    assert "/ant:redirect" in project.run("signals-suggest", "--text").stdout
    ok(project, "pheromone-emit", "REDIRECT", "no global state, ever")
    steered = ok(project, "signals-suggest")
    assert steered["suggest"] is False and steered["active"] == {"FOCUS": 0, "REDIRECT": 1}
    assert ok(project, "plan-start")["suggest_signals"] is False


def test_no_suggestion_once_a_plan_exists(project):
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-start")
    assert ok(project, "signals-suggest")["suggest"] is True  # PLANNING, nothing steers it
    ok(project, "plan-load", "-", input=make_plan())
    out = ok(project, "signals-suggest")
    assert out["suggest"] is False and "with a plan" in out["reason"]


def test_complexity_detect_apply_carries_the_suggestion(project):
    ok(project, "colony-init", "Build a todo API")
    out = ok(project, "complexity-detect", "--apply")
    assert out["suggest_signals"] is True and "/ant:focus" in out["signals_suggestion"]
    ok(project, "pheromone-emit", "FOCUS", "the parser first")
    assert ok(project, "complexity-detect", "--apply")["suggest_signals"] is False


# ---------------------------------------------------------------- /ant:continue, driven: aether next --continue


def test_continue_driven_asks_the_lessons_then_advances(project):
    colony(project)
    finish(project, 1)
    lessons = ok(project, "next", "--continue")
    assert lessons["action"] == "lessons" and "phase 1 taught" in lessons["text"]
    assert ok(project, "next")["action"] == "lessons"  # asked again: the same
    done = ok(project, "record", "lessons", "-", input="- small phases work\n")["next"]
    assert done["action"] == "done" and done["command"] == "/ant:build 2"
    assert "Phase 1 (" in done["text"] and "is closed" in done["text"] and "Run /ant:build 2" in done["text"]
    colony_state = json.loads((project.data / "COLONY_STATE.json").read_text("utf-8"))
    assert colony_state["current_phase"] == 2
    memory = json.loads((project.data / "memory.json").read_text("utf-8"))
    assert [e["learnings"] for e in memory["phase_learnings"]] == [["small phases work"]]
    assert ok(project, "next")["action"] == "done"  # asked again after: how it ended, nothing advanced twice
    assert json.loads((project.data / "COLONY_STATE.json").read_text("utf-8"))["current_phase"] == 2


def test_continue_driven_runs_the_archivist_when_due_and_shows_its_report(project):
    colony(project, mode="FULL", phases=4)
    for phase in (1, 2):
        finish(project, phase)
        ok(project, "learning-add", phase, "-", "--each-line", input=f"- lesson {phase}\n")
        ok(project, "phase-advance")
    finish(project, 3)
    ok(project, "learning-add", 3, "-", "--each-line", input="- lesson 3\n")
    spawn = ok(project, "next", "--continue")
    assert spawn["action"] == "spawn" and [s["id"] for s in spawn["spawns"]] == ["arch3"]
    assert spawn["spawns"][0]["subagent_type"] == "ant:architect"
    report = (
        "Checked.\n```json\n"
        + json.dumps(
            {
                "summary": "one stale file",
                "recommendations": [{"file": "old.py", "issue": "stale", "recommendation": "delete it", "risk": "low"}],
            }
        )
        + "\n```"
    )
    done = ok(project, "record", "arch3", "-", input=report)["next"]
    assert done["action"] == "done" and "Archivist after phase 3: one stale file" in done["text"]
    assert "old.py: stale — delete it (risk low)" in done["text"] and "You decide" in done["text"]
    events = json.loads((project.data / "events.json").read_text("utf-8"))["events"]
    assert [e for e in events if e["type"] == "hygiene_report"]


def test_continue_driven_on_a_phase_not_built_stops_with_its_recovery(project):
    colony(project)
    finish(project, 1, failed=("1.2",))
    stop = ok(project, "next", "--continue")
    assert stop["action"] == "stop" and stop["why"] == "not_built" and stop["command"] == "/ant:build 1"
    assert "Recovery options" in stop["text"]


def test_continue_driven_on_a_completed_colony_shows_its_summary(project):
    colony(project, phases=1)
    finish(project, 1)
    ok(project, "learning-add", 1, "-", "--each-line", input="- lesson\n")
    assert ok(project, "next", "--continue")["action"] == "done"
    state = json.loads((project.data / "COLONY_STATE.json").read_text("utf-8"))["state"]
    assert state == "COMPLETED"
    summary = ok(project, "next", "--continue")
    assert summary["action"] == "done" and "COLONY COMPLETE" in summary["text"]


def test_continue_and_build_flags_contradict(project):
    colony(project)
    out = project.run("next", "--continue", "--build", "1")
    assert out.code == 1 and "give one" in out.error["error"]
