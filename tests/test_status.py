"""status and phase: what the Queen shows, on every colony state."""

import json

import pytest

from aether.rules import lifecycle

from helpers.colony import finish, ids, make_plan, results


def tree(phase=1):
    def node(nid, caste, parent, children, status, role="worker", depth=1, tasks=()):
        return {
            "id": nid,
            "caste": caste,
            "tasks": list(tasks),
            "depth": depth,
            "parent": parent,
            "children": children,
            "status": status,
            "wave": 1,
            "role": role,
        }

    return {
        "phase": phase,
        "status": "running",
        "max_depth": 3,
        "waves": [["w1", "w2"]],
        "spawn_requests": [],
        "nodes": {
            "w1": node("w1", "builder", None, ["s1"], "completed", tasks=["1.1", "1.2"]),
            "s1": node("s1", "scout", "w1", [], "running", role="sub_spawn", depth=2),
            "w2": node("w2", "builder", None, [], "failed", tasks=["1.3"]),
        },
    }


def status(project):
    out = project.run("status")
    assert out.code == 0, out.stderr
    return out.stdout


def test_uninitialised_project(project):
    text = status(project)
    assert "No colony here yet" in text and '/ant:init "<goal>"' in text
    data = project.run("status", "--json").json
    assert data["initialized"] is False and data["next"]["command"] == "aether colony-init -"
    assert not project.data.exists()  # reading never creates files


def test_colony_without_plan(project):
    project.run("colony-init", "Build a todo API").json
    text = status(project)
    assert "READY" in text and "Goal: Build a todo API" in text and "No plan yet." in text
    assert "Next: /ant:plan" in text and "ACTIVE PHEROMONES" in text and "INIT" in text


def test_planning(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-start").json
    data = project.run("status", "--json").json
    assert data["state"] == "PLANNING" and data["next"]["slash"] == "/ant:plan"


def test_ready_with_plan(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    text = status(project)
    assert "3 phases planned" in text and "0/3 phases" in text and "0/9 tasks" in text
    assert "Next: /ant:build 1" in text


def test_executing_shows_the_spawn_tree(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    project.run("pheromone-emit", "FOCUS", "input validation everywhere, please").json
    project.run("build-start", 1).json
    colony = project.load("COLONY_STATE.json")
    colony["spawn_tree"] = tree()
    project.write("COLONY_STATE.json", colony)
    text = status(project)
    assert "EXECUTING" in text and "Phase 1  ░░░░" in text and "0/3 phases" in text
    assert "▸◐  1" in text  # the current phase, in progress
    assert "FOCUS" in text and "input validation" in text
    assert "SPAWN TREE" in text
    for word in ("w1", "s1", "w2", "builder", "scout"):
        assert word in text
    assert text.index("w1") < text.index("s1") < text.index("w2")  # the sub-spawn sits under its parent
    assert "build_started" in text
    assert project.run("status", "--json").json["next"]["command"] == "aether next --build 1"


def test_after_a_failed_build_shows_open_errors(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    project.run("build-start", 1).json
    extra = {"1.2": {"error": {"category": "import", "severity": "high", "description": "no module named fastapi"}}}
    project.run("build-finish", 1, "--results", "-", input=results(ids(1), failed=("1.2",), **extra)).json
    data = project.run("status", "--json").json
    assert data["errors"]["open_count"] == 1 and data["errors"]["open"][0]["task_id"] == "1.2"
    assert data["progress"] == {"phases_total": 3, "phases_completed": 0, "tasks_total": 9, "tasks_completed": 2}
    assert data["next"]["command"] == "aether next --build 1"
    text = data["text"]
    assert "OPEN ERRORS (1)" in text and "no module named fastapi" in text and "✗" in text
    # the errors of a phase count as resolved once the phase completes
    project.run("build-start", 1, "--resume").json
    project.run("build-finish", 1, "--results", "-", input=results(["1.2"])).json
    assert project.run("status", "--json").json["errors"]["open_count"] == 0


def test_completed_colony(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=2))).json
    for phase in (1, 2):
        project.run("build-start", phase).json
        finish(project, phase).json
        project.run("phase-advance").json
    data = project.run("status", "--json").json
    assert data["state"] == "COMPLETED" and data["progress"]["phases_completed"] == 2
    assert "2/2 phases" in data["text"] and "████████████████████" in data["text"]
    assert data["next"]["slash"] == '/ant:init "<goal>"'
    assert data["spawn_tree"] is None


def test_status_on_corrupt_state_says_what_to_do(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-start").json  # a second write: a backup exists
    project.file("COLONY_STATE.json").write_text("{", encoding="utf-8")
    err = project.run("status").error
    assert err["code"] == "state_corrupt" and "state-restore" in err["error"]


def test_no_color_unless_terminal(project, monkeypatch):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    assert "\033[" not in status(project)
    from aether.core import output

    monkeypatch.setattr(output, "use_color", lambda stream=None: True)
    project.run("build-start", 1).json
    assert "\033[33m◐\033[0m" in status(project)


# ---------------------------------------------------------------- phase


@pytest.fixture
def planned(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    return project


def test_phase_default_is_the_list_before_the_first_build(planned):
    text = planned.run("phase").stdout
    assert text.startswith("PHASES (0/3 completed)") and "Phase 3 name" in text


def test_phase_list_and_one_phase(planned):
    planned.run("build-start", 1).json
    finish(planned, 1).json
    planned.run("phase-advance").json
    data = planned.run("phase", "list", "--json").json
    assert [p["status"] for p in data["phases"]] == ["completed", "pending", "pending"]
    assert data["current_phase"] == 2 and "▸○  2" in data["text"]
    text = planned.run("phase").stdout  # the current phase
    assert text.startswith("Phase 2: Phase 2 name — pending (current)")
    assert "2.2  task 2.2  (after 2.1)" in text and "criterion of phase 2" in text
    one = planned.run("phase", "1", "--json").json
    assert one["phase"]["status"] == "completed" and one["tasks"]["completed"] == 3
    assert "● 1.1" in one["text"]


@pytest.mark.parametrize("arg,code", [("9", "unknown_phase"), ("two", "invalid_argument"), ("-x", "usage_error")])
def test_phase_errors(planned, arg, code):
    assert planned.run("phase", arg).error["code"] == code


def test_phase_without_plan(project):
    project.run("colony-init", "Build a todo API").json
    assert project.run("phase").error["code"] == "plan_missing"


# ---------------------------------------------------------------- one tree renderer, any tree


def test_render_tree_nesting_and_bad_shapes():
    """status draws every tree with plan-waves' renderer: damaged trees too, each node once."""
    from aether.rules.waves import render_tree

    lines = render_tree(tree()).splitlines()
    assert lines[1] == "Queen" and lines[2] == "└─ Wave 1"
    assert lines[3].startswith("   ├─ w1 builder [completed]") and "tasks 1.1, 1.2" in lines[3]
    assert lines[4].startswith("   │  └─ s1 scout sub-spawn [running]") and lines[5].startswith("   └─ w2 builder")
    cyclic = {
        "nodes": {"a": {"caste": "builder", "parent": "b", "children": ["b"]}, "b": {"caste": "scout", "parent": "a", "children": ["a"]}}
    }
    drawn = render_tree(cyclic)
    assert drawn.count("a builder") == 1 and drawn.count("b scout") == 1  # each node once, no endless walk
    assert render_tree({"nodes": []}).splitlines()[1:] == ["Queen"]
    assert render_tree(None) == "No spawn tree."
    assert render_tree({"nodes": {"x": "junk", "y": {"caste": None}}}).splitlines()[-1] == "   └─ y None [planned]"


def test_next_step_for_each_state():

    plan = make_plan()
    assert lifecycle.next_step({"state": "IDLE"}, plan)["command"] == "aether colony-init -"
    assert lifecycle.next_step({"state": "READY", "current_phase": 0}, {"phases": []})["slash"] == "/ant:plan"
    assert lifecycle.next_step({"state": "READY", "current_phase": 0}, plan)["command"] == "aether next --build 1"
    plan["phases"][0]["status"] = "completed"
    assert lifecycle.next_step({"state": "READY", "current_phase": 1}, plan)["command"] == "aether next --continue"
    plan["phases"][1]["status"] = "failed"
    assert lifecycle.next_step({"state": "READY", "current_phase": 2}, plan)["command"] == "aether next --build 2"
    assert lifecycle.next_step({"state": "READY", "current_phase": 9}, plan)["command"] == "aether next --plan --force"
    assert lifecycle.next_step({"state": "COMPLETED", "current_phase": 3}, plan)["slash"] == '/ant:init "<goal>"'
