"""plan-start / plan-load: PROJECT_PLAN validation (every defect, precisely) and storage."""

import copy
import json

import pytest

from aether.rules import plans as plans_rules

from helpers.colony import make_plan


@pytest.fixture
def colony(project):
    project.run("colony-init", "Build a todo API").json
    return project


def load(project, plan, *extra):
    return project.run("plan-load", "-", *extra, input=json.dumps(plan))


def test_load_stores_plan_all_pending(colony):
    plan = make_plan()
    plan["phases"][0]["status"] = "completed"  # progress is not the planner's to claim
    plan["phases"][0]["tasks"][0]["status"] = "completed"
    plan["phases"][0]["tasks"][0]["files"] = ["src/app.py"]  # extra fields survive
    out = load(colony, plan).json
    assert (out["phases"], out["tasks"], out["state"], out["current_phase"]) == (3, 9, "READY", 0)
    assert (out["next"]["slash"], out["next"]["command"]) == ("/ant:build 1", "aether next --build 1")
    assert any("status 'completed' ignored" in w for w in out["warnings"])
    stored = colony.load("PROJECT_PLAN.json")
    assert stored["version"] == 1 and stored["generated_at"]
    assert {p["status"] for p in stored["phases"]} == {"pending"}
    assert {t["status"] for p in stored["phases"] for t in p["tasks"]} == {"pending"}
    assert stored["phases"][0]["tasks"][0]["files"] == ["src/app.py"]
    assert stored["phases"][0]["tasks"][0]["depends_on"] == []
    events = colony.load("events.json")["events"]
    assert events[-1]["type"] == "plan_loaded"


def test_load_from_file_and_unicode_round_trip(colony, tmp_path):
    plan = make_plan()
    text = 'Ünïcødé "quotes" $(rm -rf /) `x` \\ 🐜\nsecond line'
    plan["phases"][1]["tasks"][2]["description"] = text
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan, ensure_ascii=False), encoding="utf-8")
    colony.run("plan-load", path).json
    assert colony.load("PROJECT_PLAN.json")["phases"][1]["tasks"][2]["description"] == text


def test_goal_defaults_to_colony_goal(colony):
    plan = make_plan()
    del plan["goal"]
    load(colony, plan).json
    assert colony.load("PROJECT_PLAN.json")["goal"] == "Build a todo API"


def _mutate(path_ops):
    plan = make_plan()
    path_ops(plan)
    return plan


DEFECTS = [
    # (mutation, path, words in the problem)
    (lambda p: p.update(phases=[]), "phases", "empty"),
    (lambda p: p.update(phases={"1": {}}), "phases", "not an array"),
    (lambda p: p.update(goal=""), "$.goal", "empty"),
    (lambda p: p["phases"].append("phase four"), "phases[3]", "must be an object"),
    (lambda p: p["phases"][1].update(id=1), "phases[1].id", "also used by phases[0]"),
    (lambda p: p["phases"][1].update(id="2"), "phases[1].id", "whole number"),
    (lambda p: p["phases"][1].update(id=True), "phases[1].id", "whole number"),
    (lambda p: p["phases"][1].update(id=0), "phases[1].id", "≥ 1"),
    (lambda p: p["phases"][1].pop("id"), "phases[1].id", "missing"),
    (lambda p: p["phases"][0].update(name="   "), "phases[0].name", "empty"),
    (lambda p: p["phases"][0].update(name=7), "phases[0].name", "must be a string"),
    (lambda p: p["phases"][0].pop("description"), "phases[0].description", "missing"),
    (lambda p: p["phases"][0].update(description="x" * 5000), "phases[0].description", "limit"),
    (lambda p: p["phases"][2].pop("success_criteria"), "phases[2].success_criteria", "missing"),
    (lambda p: p["phases"][2].update(success_criteria="works"), "phases[2].success_criteria", "list of strings"),
    (lambda p: p["phases"][2].update(success_criteria=["ok", 3]), "phases[2].success_criteria[1]", "must be a string"),
    (lambda p: p["phases"][2].update(success_criteria=[""]), "phases[2].success_criteria[0]", "empty"),
    (lambda p: p["phases"][0].update(tasks=[]), "phases[0].tasks", "at least one task"),
    (lambda p: p["phases"][0].pop("tasks"), "phases[0].tasks", "not an array"),
    (lambda p: p["phases"][0]["tasks"].append(None), "phases[0].tasks[3]", "must be an object"),
    (lambda p: p["phases"][0]["tasks"][1].update(id="1.1"), "phases[0].tasks[1].id", "also used by phases[0].tasks[0]"),
    (lambda p: p["phases"][1]["tasks"][0].update(id="1.1"), "phases[1].tasks[0].id", "also used by phases[0].tasks[0]"),
    (lambda p: p["phases"][0]["tasks"][1].update(id=2), "phases[0].tasks[1].id", 'string like "1.1"'),
    (lambda p: p["phases"][0]["tasks"][1].update(id=" 1.2"), "phases[0].tasks[1].id", "spaces"),
    (lambda p: p["phases"][0]["tasks"][1].pop("description"), "phases[0].tasks[1].description", "missing"),
    (lambda p: p["phases"][0]["tasks"][1].update(depends_on="1.1"), "phases[0].tasks[1].depends_on", "list of task ids"),
    (lambda p: p["phases"][0]["tasks"][1].update(depends_on=[1.1]), "phases[0].tasks[1].depends_on[0]", "task id string"),
    (lambda p: p["phases"][0]["tasks"][1].update(depends_on=["9.9"]), "phases[0].tasks[1].depends_on[0]", "no task of the plan"),
    (lambda p: p["phases"][0]["tasks"][1].update(depends_on=["1.2"]), "phases[0].tasks[1].depends_on[0]", "itself"),
    (lambda p: p["phases"][0]["tasks"][1].update(depends_on=["1.1", "1.1"]), "phases[0].tasks[1].depends_on[1]", "listed twice"),
    (lambda p: p["phases"][0]["tasks"][0].update(depends_on=["2.1"]), "phases[0].tasks[0].depends_on[0]", "later phase"),
    (lambda p: p["phases"][0]["tasks"][0].update(depends_on=["1.3"]), "phases[0].tasks", "dependency cycle: 1.1 → 1.3 → 1.2 → 1.1"),
    (lambda p: p["phases"][0]["tasks"][2].update(maps_to_criterion="yes"), "phases[0].tasks[2].maps_to_criterion", "true"),
    (lambda p: p["phases"][1]["tasks"][0].update(maps_to_criterion=1), "phases[1].tasks[0].maps_to_criterion", "found integer"),
]


@pytest.mark.parametrize("mutation,path,words", DEFECTS, ids=[d[1] + ":" + d[2] for d in DEFECTS])
def test_each_defect_is_reported_precisely(colony, mutation, path, words):
    before = colony.file("PROJECT_PLAN.json").read_bytes()
    err = load(colony, _mutate(mutation)).error
    assert err["code"] == "invalid_plan"
    assert any(d["path"] == path and words in d["problem"] for d in err["defects"]), err["defects"]
    assert path in err["error"] and "fix them all" in err["error"]
    assert colony.file("PROJECT_PLAN.json").read_bytes() == before  # nothing written
    assert colony.load("COLONY_STATE.json")["state"] == "READY"


def test_all_defects_at_once(colony):
    plan = make_plan()
    plan["phases"][0]["name"] = ""
    plan["phases"][1]["tasks"][0]["depends_on"] = ["7.7"]
    plan["phases"][2]["id"] = 1
    plan["phases"][2]["tasks"][1]["description"] = None
    err = load(colony, plan).error
    paths = {d["path"] for d in err["defects"]}
    assert paths == {"phases[0].name", "phases[1].tasks[0].depends_on[0]", "phases[2].id", "phases[2].tasks[1].description"}
    assert "4 defects" in err["error"] and "+1 more" in err["error"]


def test_dependency_on_a_task_listed_later_in_the_same_phase_is_fine(colony):
    plan = make_plan()
    tasks = plan["phases"][0]["tasks"]
    tasks[0]["depends_on"], tasks[1]["depends_on"], tasks[2]["depends_on"] = ["1.3"], [], []
    assert load(colony, plan).json["phases"] == 3


def test_long_cycle_and_long_chain(colony):
    plan = make_plan(phases=1, tasks=90)
    assert load(colony, plan).json["tasks"] == 90  # a 90-long chain is no cycle
    plan["phases"][0]["tasks"][0]["depends_on"] = ["1.90"]
    problems = [d["problem"] for d in load(colony, plan).error["defects"]]
    assert any(p.startswith("dependency cycle: 1.1 → 1.90 → 1.89") for p in problems)


@pytest.mark.parametrize(
    "payload,code",
    [
        ("{not json", "invalid_json"),
        ("[1, 2]", "invalid_plan"),
        ('"a plan"', "invalid_plan"),
        ("null", "invalid_plan"),
        (b"\xff\xfe", "invalid_utf8"),
    ],
)
def test_garbage_input(colony, payload, code):
    assert colony.run("plan-load", "-", input=payload).error["code"] == code


def test_missing_file(colony, tmp_path):
    assert colony.run("plan-load", tmp_path / "nope.json").error["code"] == "file_unreadable"


def test_limits(colony):
    too_many = make_plan(phases=51, tasks=1)
    err = load(colony, too_many).error
    assert err["defects"][0]["path"] == "phases" and "limit is 50" in err["defects"][0]["problem"]
    wide = make_plan(phases=1, tasks=101)
    assert "limit is 100" in load(colony, wide).error["defects"][0]["problem"]


def test_phase_count_outside_mode_range_warns(project):
    project.run("colony-init", "small thing", "--mode", "LIGHTWEIGHT").json
    out = load(project, make_plan(phases=5)).json
    assert out["warnings"][0] == "5 phases is outside the LIGHTWEIGHT range of 2–3"
    assert load(project, make_plan(phases=3)).json["warnings"] == []


def test_maps_to_criterion_is_kept_and_a_task_that_does_not_say_is_named(colony):
    plan = make_plan(phases=3)
    del plan["phases"][1]["tasks"][2]["maps_to_criterion"]
    plan["phases"][2]["tasks"][1]["maps_to_criterion"] = None  # null says nothing either
    out = load(colony, plan).json
    assert out["warnings"] == [
        "task(s) 2.3, 3.2 do not say `maps_to_criterion`: they count as mapping to a "
        "success criterion (a failure is flagged to the user, never skipped)"
    ]
    stored = [[t.get("maps_to_criterion") for t in p["tasks"]] for p in colony.load("PROJECT_PLAN.json")["phases"]]
    assert stored == [[True, False, False], [True, False, None], [True, None, False]]
    assert "maps_to_criterion" not in colony.load("PROJECT_PLAN.json")["phases"][2]["tasks"][1]
    assert colony.run("validate-state", "plan").json


def test_the_criterion_rule_has_one_default():

    assert plans_rules.maps_to_criterion({"id": "1.1"}) is True  # unsaid: counts as critical
    assert plans_rules.maps_to_criterion(None) is True
    assert plans_rules.maps_to_criterion({"maps_to_criterion": False}) is False
    assert plans_rules.maps_to_criterion({"maps_to_criterion": False}, said=True) is True  # an explicit answer wins
    assert plans_rules.maps_to_criterion({"maps_to_criterion": "no"}) is True  # not a boolean: not said
    assert plans_rules.criterion_said({"id": "1.1"}) is None


def test_task_count_outside_guidance_warns(colony):
    out = load(colony, make_plan(tasks=9)).json
    assert sum("usually have 3–8" in w for w in out["warnings"]) == 3


def test_plan_load_requires_a_colony(project):
    err = load(project, make_plan()).error
    assert err["code"] == "invalid_transition" and "colony-init" in err["error"]
    assert not project.file("PROJECT_PLAN.json").exists()


def test_plan_load_refused_while_building(colony):
    load(colony, make_plan()).json
    colony.run("build-start", 1).json
    err = load(colony, make_plan(phases=4)).error
    assert err["code"] == "invalid_transition" and err["state"] == "EXECUTING"
    assert "build-finish" in err["error"]
    assert len(colony.load("PROJECT_PLAN.json")["phases"]) == 3


def _finish_ok(project, phase, task_ids):
    results = {
        "tasks": [{"id": t, "status": "completed"} for t in task_ids],
        "watcher": {"passed": True, "score": 90, "checks": [], "summary": "fine"},
    }
    return project.run("build-finish", phase, "--results", "-", input=json.dumps(results)).json


def test_replan_without_progress_rewinds(colony):
    load(colony, make_plan()).json
    colony.run("build-start", 1).json
    colony.run("build-abort", 1, "--reason", "wrong approach").json
    assert colony.load("COLONY_STATE.json")["current_phase"] == 1
    out = load(colony, make_plan(phases=4)).json  # no completed phase: no --force needed
    assert out["current_phase"] == 0
    plan = colony.load("PROJECT_PLAN.json")
    assert [p["status"] for p in plan["phases"]] == ["pending"] * 4


def test_replacing_completed_phases_needs_force_and_keeps_them(colony):
    plan = make_plan()
    load(colony, plan).json
    colony.run("build-start", 1).json
    _finish_ok(colony, 1, ["1.1", "1.2", "1.3"])
    new = make_plan(phases=4)
    new["phases"][0]["name"] = "renamed"  # done work is not re-described
    err = load(colony, new).error
    assert err["code"] == "plan_has_progress" and err["completed"] == [1] and "--force" in err["error"]
    assert colony.load("PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    out = load(colony, new, "--force").json
    assert out["kept_completed"] == [1] and out["dropped_completed"] == []
    assert out["current_phase"] == 1 and out["next"]["slash"] == "/ant:continue"  # phase 1 stays done
    stored = colony.load("PROJECT_PLAN.json")
    assert stored["phases"][0]["name"] == "Phase 1 name" and stored["phases"][0]["status"] == "completed"
    assert [p["status"] for p in stored["phases"][1:]] == ["pending"] * 3
    assert colony.run("phase-advance").json["to"] == 2


def test_force_dropping_completed_phase_reports_it(colony):
    load(colony, make_plan()).json
    colony.run("build-start", 1).json
    _finish_ok(colony, 1, ["1.1", "1.2", "1.3"])
    new = make_plan()
    for phase in new["phases"]:
        phase["id"] += 10
        for task in phase["tasks"]:
            task["id"] = "x" + task["id"]
            task["depends_on"] = ["x" + d for d in task["depends_on"]]
    out = load(colony, new, "--force").json
    assert out["dropped_completed"] == [1] and out["current_phase"] == 0
    assert colony.run("build-start", 11).json["phase"]["id"] == 11


def test_plan_start_and_restart(colony):
    out = colony.run("plan-start").json
    assert out["state"] == "PLANNING" and out["resumed"] is False
    assert out["phase_count"] == [3, 6] and out["mode"] == "STANDARD"
    assert out["suggest_signals"] is True and "/ant:focus" in out["text"]
    again = colony.run("plan-start").json  # after /clear mid-planning: not a dead end
    assert again["resumed"] is True
    assert [e["type"] for e in colony.load("events.json")["events"]].count("planning_started") == 1
    colony.run("pheromone-emit", "FOCUS", "keep the API small and well tested").json
    assert colony.run("plan-start").json["suggest_signals"] is False
    assert load(colony, make_plan()).json["state"] == "READY"


def test_plan_start_text_flag(colony):
    text = colony.run("plan-start", "--text").stdout
    assert text.startswith("Planning: Build a todo API") and "3–6 phases" in text


def test_validate_library_does_not_mutate_input():

    plan = make_plan()
    snapshot = copy.deepcopy(plan)
    normalised, defects, _ = plans_rules.validate(plan)
    assert defects == [] and plan == snapshot
    assert normalised["phases"][0]["status"] == "pending"
