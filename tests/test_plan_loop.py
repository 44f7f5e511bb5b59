"""The plan loop's helper side (seed 004, phase 4): the critic's feedback parsed (score, key issues,
recommendations) whatever the formatting, drafts stored per iteration and loaded with
`plan-load --from-loop`, and `loop-present` when the loop asks the user."""

import json

import pytest

from aether.rules import critique as critique_rules

from helpers.colony import make_plan

SEED_SHAPE = """## Planning Assessment

### Overall Score
72

### Assessment Summary
Solid phases; the test strategy is thin.

### Detailed Feedback
Phase 2 mixes storage and API work.

### Key Issues
- No TDD steps in phase 1
- Phase 2 is too large:
  split storage from the API
* Missing error-handling criteria

### Recommendations
1. Add a failing-test task before each feature
2) Split phase 2
"""


@pytest.mark.parametrize(
    "text,score",
    [
        (SEED_SHAPE, 72),
        ("### Overall Score\n\n**85**\n", 85),
        ("Overall Score: 85/100\n", 85),
        ("**Score:** 85%", 85),
        ("- **Overall score**: 91.5", 91.5),
        ("Score 62.\nother text", 62),
        ("## Overall Score — 8.5/10", 85),
        ("Overall score: 3 out of 5", 60),
        ("Score: 40 (draft)\n### Overall Score\n77", 77),  # Overall beats a bare Score
        ("OVERALL SCORE:\r\n\r\n90\r\n", 90),
        ("Score breakdown: tests 30 points\n### Overall Score\n81", 81),  # a number later in a line is no score
    ],
)
def test_scores_in_the_shapes_models_write(text, score):
    assert critique_rules.parse(text)["score"] == score


@pytest.mark.parametrize(
    "text",
    [
        "No score here.",
        "### Overall Score\nvery good",
        "Score: 150",
        "### Overall Score\n### Key Issues\n- x",
        "Score breakdown: tests 30 points",
    ],
)
def test_no_readable_score_is_an_error_naming_the_heading(text):
    with pytest.raises(Exception) as info:
        critique_rules.parse(text)
    assert info.value.code == "critic_score_missing" and "### Overall Score" in info.value.message


def test_sections_are_parsed():
    parsed = critique_rules.parse(SEED_SHAPE)
    assert parsed["summary"] == "Solid phases; the test strategy is thin."
    assert parsed["key_issues"] == [
        "No TDD steps in phase 1",
        "Phase 2 is too large: split storage from the API",
        "Missing error-handling criteria",
    ]
    assert parsed["recommendations"] == ["Add a failing-test task before each feature", "Split phase 2"]
    loose = critique_rules.parse(
        "**Overall Score:** 60\n**Key Issues**\nthe plan has no phases for deployment\nRecommendations:\n- add a deploy phase\n"
    )
    assert loose["key_issues"] == ["the plan has no phases for deployment"]
    assert loose["recommendations"] == ["add a deploy phase"]


# ---------------------------------------------------------------- drafts


@pytest.fixture
def planning(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-start").json
    loop = project.run("loop-init", "plan").json["loop_id"]
    return project, loop


def test_drafts_per_iteration_and_plan_load_from_the_loop(planning):
    project, loop = planning
    first = make_plan(phases=3)
    stored = project.run("plan-draft-store", loop, "-", input=json.dumps(first)).json
    assert (stored["iteration"], stored["phases"], stored["tasks"], stored["replaced"]) == (1, 3, 9, False)
    again = project.run("plan-draft-store", loop, "-", input="Here it is:\n```json\n" + json.dumps(first) + "\n```").json
    assert again["replaced"] is True and again["drafts"] == [1]
    project.run("feedback-store", loop, "-", input=SEED_SHAPE).json
    assert project.run("loop-decide", loop).json["decision"] == "refine"
    second = make_plan(phases=4)
    assert project.run("plan-draft-store", loop, "-", input=json.dumps(second)).json["iteration"] == 2
    got = project.sh("plan-draft-get", loop).json  # another process, as a resumed session
    assert got["iteration"] == 2 and len(got["plan"]["phases"]) == 4 and got["drafts"] == [1, 2]
    assert "PLAN DRAFT — loop" in got["text"] and "Phase 4: Phase 4 name" in got["text"]
    assert len(project.run("plan-draft-get", loop, "--iteration", 1).json["plan"]["phases"]) == 3
    assert project.run("plan-draft-get", loop, "--iteration", 7).error["code"] == "unknown_iteration"
    project.run("feedback-store", loop, "-", input="Overall Score: 88").json
    done = project.run("loop-decide", loop).json
    assert done["decision"] == "complete" and done["next"]["command"] == f"aether plan-load --from-loop {loop}"
    loaded = project.run("plan-load", "--from-loop", loop).json
    assert loaded["phases"] == 4 and loaded["from_loop"] == {"loop_id": loop, "iteration": 2}
    assert project.load("COLONY_STATE.json")["state"] == "READY"
    assert [p["status"] for p in project.load("PROJECT_PLAN.json")["phases"]] == ["pending"] * 4
    assert project.run("plan-draft-store", loop, "-", input=json.dumps(second)).error["code"] == "loop_complete"


def test_draft_errors(planning):
    project, loop = planning
    bad = make_plan()
    bad["phases"][0]["tasks"][0]["depends_on"] = ["9.9"]
    err = project.run("plan-draft-store", loop, "-", input=json.dumps(bad)).error
    assert err["code"] == "invalid_plan" and err["defects"][0]["path"] == "phases[0].tasks[0].depends_on[0]"
    assert project.run("plan-draft-store", loop, "-", input="{oops").error["code"] == "invalid_json"
    assert project.run("plan-draft-get", loop).error["code"] == "no_draft"
    code = project.run("loop-init", "code").json["loop_id"]
    assert project.run("plan-draft-store", code, "-", input=json.dumps(make_plan())).error["code"] == "wrong_loop_type"
    assert project.run("plan-draft-get", "loop_0_0000").error["code"] == "unknown_loop"
    assert project.run("plan-load").error["code"] == "usage_error"
    assert project.run("plan-load", "-", "--from-loop", loop, input="{}").error["code"] == "usage_error"
    assert project.run("plan-load", "--from-loop", loop).error["code"] == "no_draft"
    assert not project.file("drafts.json").exists()


def test_drafts_are_capped(planning):
    project, _ = planning
    loops = [project.run("loop-init", "plan").json["loop_id"] for _ in range(7)]
    for lid in loops:
        project.run("plan-draft-store", lid, "-", input=json.dumps(make_plan(phases=1))).json
    kept = [e["loop_id"] for e in project.load("drafts.json")["loops"]]
    assert kept == loops[-5:]


# ---------------------------------------------------------------- loop-present


def scored(project, loop, *scores):
    for s in scores:
        out = project.run("loop-decide", loop, s).json
    return out


def test_present_after_the_cap_recommends_narrowing(planning):
    project, loop = planning
    project.run("feedback-store", loop, "-", input=SEED_SHAPE).json
    assert scored(project, loop, 30, 40, 50, 58, 64)["decision"] == "user_input"
    out = project.run("loop-present", loop, "--json").json
    assert (out["stop_reason"], out["score"], out["previous_score"], out["threshold"]) == ("cap", 64, 58, 80)
    assert out["recommendation"]["option"] == "narrow"
    assert out["challenges"] == critique_rules.parse(SEED_SHAPE)["key_issues"]
    accept = next(o for o in out["options"] if o["id"] == "accept")
    assert accept["pros"] and accept["cons"] and accept["next"][-1] == f"aether plan-load --from-loop {loop}"
    text = project.run("loop-present", loop).stdout
    assert "Planning loop" in text and "score 64, previous 58, threshold 80" in text
    assert "Stopped: the iteration cap was reached" in text and "3. Narrow the scope  ← recommended" in text


@pytest.mark.parametrize(
    "scores,round_two,option",
    [
        ([72, 74, 76], False, "accept"),  # stagnation 4 points short of 80
        ([40, 42, 44], False, "guide"),  # stagnation, first round
        ([40, 42, 44], True, "narrow"),  # the user already guided a round, still far
    ],
)
def test_recommendation_rule(planning, scores, round_two, option):
    project, loop = planning
    if round_two:
        scored(project, loop, 10, 11, 12)
        project.run("feedback-store", loop, "-", "--kind", "user", input="try harder").json
    scored(project, loop, *scores)
    assert project.run("loop-present", loop, "--json").json["recommendation"]["option"] == option


def test_present_only_when_the_loop_waits(planning):
    project, loop = planning
    assert project.run("loop-present", loop).error["code"] == "not_awaiting_user"
    assert project.run("loop-present", "loop_0_0000").error["code"] == "unknown_loop"
