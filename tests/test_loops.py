"""Refinement loops: the decision rule (complete > cap > stagnation > refine), loop state that
survives a new process, critic and user feedback, and the code review score."""

import json
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aether.rules import loops as loops_rules

# ---------------------------------------------------------------- the rule


@pytest.mark.parametrize(
    "scores,threshold,decision",
    [
        ([80], 80, "complete"),
        ([79.99], 80, "refine"),
        ([94], 95, "refine"),
        ([95], 95, "complete"),
        ([50, 60], 80, "refine"),  # two iterations: no stagnation window yet
        ([50, 60, 64], 80, "refine"),  # +14 over 2
        ([50, 52, 54], 80, "user_input"),  # +4 over 2: stagnation
        ([60, 50, 64], 80, "user_input"),  # s[n] − s[n−2] = 4
        ([10, 20, 30, 40, 50], 80, "user_input"),  # the 5th iteration: cap
        ([10, 20, 30, 40, 85], 80, "complete"),  # complete beats the cap
        ([50, 52, 54, 56, 85], 80, "complete"),
    ],
)
def test_rule(scores, threshold, decision):
    assert loops_rules.rule(scores, threshold)[0] == decision


def test_cap_beats_stagnation_in_the_reason():
    assert "cap" in loops_rules.rule([50, 60, 70, 71, 72], 80)[1]
    assert "stagnation" in loops_rules.rule([50, 68, 70, 71], 80)[1]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=12), st.sampled_from([80, 95, 50]))
def test_loop_decisions_terminate_within_five_iterations(scores, threshold):
    round_scores = []
    for n, score in enumerate(scores, start=1):
        round_scores.append(score)
        decision, _ = loops_rules.rule(round_scores, threshold)
        assert decision in ("refine", "complete", "user_input")
        if decision != "refine":
            assert n <= loops_rules.MAX_ITERATIONS
            return
        assert n < loops_rules.MAX_ITERATIONS
    assert len(scores) < loops_rules.MAX_ITERATIONS


# ---------------------------------------------------------------- through the CLI


def start(project, kind="plan", *extra):
    return project.run("loop-init", kind, *extra).json


def test_init_defaults_and_custom_thresholds(project):
    assert start(project)["threshold"] == 80
    assert start(project, "code")["threshold"] == 95
    assert start(project, "docs", "--threshold", 70)["threshold"] == 70
    assert project.run("loop-init", "docs").error["code"] == "invalid_loop_type"
    assert project.run("loop-init", "bad type!").error["code"] == "invalid_loop_type"
    for bad in ("0", "101", "nan"):
        assert project.run("loop-init", "plan", "--threshold", bad).error["code"] == "invalid_argument"
    data = project.load("loops.json")
    assert data["version"] == 1 and [l["type"] for l in data["loops"]] == ["plan", "code", "docs"]


def test_stagnation_asks_the_user_and_their_answer_starts_a_new_round(project):
    loop = start(project)["loop_id"]
    project.run("feedback-store", loop, "-", input="### Overall Score\n50\n\nPlan misses the test strategy.\n- add TDD steps").json
    decisions = [project.run("loop-decide", loop, s).json for s in (50, 60, 62, 64)]
    assert [d["decision"] for d in decisions] == ["refine", "refine", "refine", "user_input"]
    assert "stagnation" in decisions[-1]["reason"] and decisions[-1]["status"] == "awaiting_user"
    err = project.run("loop-decide", loop, 70).error
    assert err["code"] == "awaiting_user_feedback" and "/ant:plan <guidance>" in err["error"]
    resumed = project.run("feedback-store", loop, "-", "--kind", "user", input="Go with option B; skip the cache.").json
    assert resumed["resumed"] and resumed["round"] == 2 and resumed["round_iterations"] == 0
    again = project.run("loop-decide", loop, 66).json  # 66 − 62 would stagnate, but the window was reset
    assert again["decision"] == "refine" and again["iteration"] == 5
    done = project.run("loop-decide", loop, 81).json
    assert done["decision"] == "complete" and done["scores"] == [50, 60, 62, 64, 66, 81]
    assert project.run("loop-decide", loop, 90).error["code"] == "loop_complete"
    assert project.run("feedback-store", loop, "late").error["code"] == "loop_complete"


def test_cap_after_five_iterations(project):
    loop = start(project, "code")["loop_id"]
    answers = [project.run("loop-decide", loop, s).json["decision"] for s in (10, 30, 50, 70, 90)]
    assert answers == ["refine"] * 4 + ["user_input"]


def test_feedback_round_trip_and_persistence(project):
    loop = start(project)["loop_id"]
    critic = 'Score 62.\n"Quotes", $(not run), `ticks`, ünïcødé 🐜\n'
    project.run("feedback-store", loop, "-", input=critic).json
    project.run("loop-decide", loop, 62).json
    second = "Overall Score: 70/100\nsecond critique"  # critic feedback carries its score
    project.run("feedback-store", loop, "-", input=second).json
    got = project.sh("feedback-get", loop).json  # a fresh process: the loop lives in loops.json
    assert [(f["kind"], f["iteration"], f["text"]) for f in got["feedback"]] == [("critic", 1, critic), ("critic", 2, second)]
    assert got["latest_critic"]["text"] == second and got["latest_user"] is None
    text = project.run("feedback-get", loop, "--text").stdout
    assert "Latest critic feedback (iteration 2):\n" + second in text
    assert project.run("feedback-get", loop, "--kind", "user").json["feedback"] == []
    assert project.run("feedback-get", "loop_0_0000").error["code"] == "unknown_loop"
    assert project.run("feedback-store", loop, "   ").error["code"] == "invalid_content"
    assert project.run("feedback-store", loop, "-", input="x" * 20001).error["code"] == "content_too_long"
    assert project.run("feedback-store", loop, "x", "--kind", "boss").error["code"] == "invalid_argument"


@pytest.mark.parametrize("score", ["-1", "100.5", "nan", "inf", "high"])
def test_scores_out_of_range(project, score):
    loop = start(project)["loop_id"]
    assert project.run("loop-decide", loop, score).error["code"] == "invalid_argument"
    assert project.load("loops.json")["loops"][0]["iterations"] == []


# ---------------------------------------------------------------- loop-score


def score(project, parts, *extra):
    return project.run("loop-score", "-", *extra, input=json.dumps(parts))


def test_full_marks_and_weights(project):
    result = score(
        project,
        {
            "tests": {"passed": 10, "failed": 0},
            "types": {"errors": 0},
            "lint": True,
            "coverage": 80,
            "plan_alignment": True,
            "spec_alignment": 1,
        },
    ).json
    assert result["score"] == 100 and result["possible"] == 100
    assert {k: v["weight"] for k, v in result["parts"].items()} == {
        "tests": 30,
        "types": 15,
        "lint": 10,
        "coverage": 15,
        "plan_alignment": 15,
        "spec_alignment": 15,
    }


def test_failing_parts_and_fractions(project):
    result = score(
        project,
        {
            "tests": {"passed": 9, "failed": 1},
            "types": 2,
            "lint": {"errors": 0},
            "coverage": 79.9,
            "plan_alignment": 0.5,
            "spec_alignment": False,
        },
    ).json
    assert result["earned"] == 10 + 7.5 and result["score"] == 17.5
    assert result["parts"]["tests"]["reason"] == "9 passed, 1 failed"
    assert result["parts"]["coverage"]["reason"] == "79.9% < 80%"


def test_parts_that_do_not_apply_leave_the_denominator(project):
    result = score(
        project, {"tests": True, "types": None, "lint": "n/a", "plan_alignment": True, "spec_alignment": {"applies": False}}
    ).json
    assert result["possible"] == 45 and result["score"] == 100
    assert result["parts"]["coverage"] == {"weight": 15, "applies": False, "earned": 0, "reason": "does not apply"}
    assert (
        "coverage            - / 15  does not apply" in project.run("loop-score", "-", "--text", input=json.dumps({"tests": True})).stdout
    )


def test_no_tests_run_earns_nothing(project):
    assert score(project, {"tests": {"passed": 0, "failed": 0}, "lint": True}).json["score"] == 25


@pytest.mark.parametrize(
    "parts",
    [
        {},
        {"tests": None},
        {"tests": "yes"},
        {"coverage": 120},
        {"types": -1},
        {"tests": {"passed": -1, "failed": 0}},
        {"plan_alignment": 1.5},
        {"speed": 1},
        [],
    ],
)
def test_bad_score_parts(project, parts):
    assert score(project, parts).error["code"] == "invalid_score"


def test_score_feeds_the_loop(project):
    loop = start(project, "code")["loop_id"]
    result = score(
        project, {"tests": True, "types": True, "lint": True, "coverage": 90, "plan_alignment": 0.9, "spec_alignment": True}, "--loop", loop
    ).json
    assert result["score"] == 98.5 and result["loop"]["decision"] == "complete"
    assert project.load("loops.json")["loops"][0]["iterations"][0]["score"] == 98.5


def test_code_loop_iterations_are_checkpoints_inside_git(project):
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    (project.root / "app.py").write_text("print('v1')\n")
    code = start(project, "code")["loop_id"]
    first = project.run("loop-decide", code, 70).json
    assert first["checkpoint"]["ref"].startswith("refs/aether/checkpoints/colony-")
    assert project.load("loops.json")["loops"][0]["iterations"][0]["checkpoint"] == first["checkpoint"]["ref"]
    listed = subprocess.run(["git", "for-each-ref", "refs/aether/"], cwd=project.root, capture_output=True, text=True).stdout
    assert first["checkpoint"]["ref"] in listed
    plan = start(project, "plan")["loop_id"]
    assert project.run("loop-decide", plan, 70).json["checkpoint"] is None  # plan loops change no code


def test_no_checkpoint_outside_git(project):
    code = start(project, "code")["loop_id"]
    result = project.run("loop-decide", code, 70).json
    assert result["checkpoint"] is None and result["warnings"] == []
