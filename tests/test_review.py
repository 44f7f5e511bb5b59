"""review-needed (skip rules) and review-decide (rebuild at most twice, then continue with a
lasting warning)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aether.rules import review as review_rules

from helpers.colony import plan_waves, run_worker, start_build, tree, worker

CRITICAL = {
    "findings": [
        {"severity": "low", "description": "typo in a docstring", "location": "a.py:3", "recommendation": "fix it"},
        {"severity": "CRITICAL", "description": "import fails at start", "location": "b.py:1", "recommendation": "add the module"},
        {"severity": "High", "description": "a test fails", "location": "tests/test_a.py", "recommendation": ""},
    ],
    "summary": "b.py does not import",
    "critical_count": 1,
}
CLEAN = {"findings": [{"severity": "MEDIUM", "description": "edge case", "location": "", "recommendation": "guard"}], "summary": "fine"}


def built_wave(project, mode="STANDARD", workers=2):
    start_build(project, mode=mode)
    plan_waves(project, [worker(f"a{i}", [f"1.{i}"], writes=[f"{i}.py"]) for i in range(1, workers + 1)])
    for i in range(1, workers + 1):
        run_worker(project, f"w{i}", created=[f"{i}.py"])
    return project


def reviewed(project, wave, findings):
    needed = project.run("review-needed", wave).json
    assert needed["needed"]
    project.run("spawn-start", needed["reviewer"]["id"]).json
    return project.run("review-decide", wave, "-", input=json.dumps(findings)).json


def test_lightweight_has_no_reviewer(project):
    built_wave(project, mode="LIGHTWEIGHT")
    result = project.run("review-needed", 1).json
    assert result == {
        "wave": 1,
        "needed": False,
        "skip": "mode_has_no_reviewer",
        "reason": "LIGHTWEIGHT mode has no reviewer",
        "text": "Reviewer skipped (LIGHTWEIGHT mode has no reviewer).",
    }


def test_single_worker_wave_is_not_reviewed(project):
    built_wave(project, workers=1)
    assert project.run("review-needed", 1).json["skip"] == "single_worker_wave"


def test_reviewer_is_planned_once_with_an_advisory_brief(project):
    built_wave(project, mode="FULL")
    first = project.run("review-needed", 1).json
    assert first["needed"] and first["reviewer"]["id"] == "v1" and first["round"] == 1
    assert project.run("review-needed", 1).json["reviewer"]["id"] == "v1"
    brief = project.run("spawn-start", "v1").json
    assert brief["subagent_type"] == "ant:watcher" and brief["role"] == "reviewer"
    for piece in ("ADVISORY", "w1 builder: tasks 1.1 — completed", "CRITICAL: the code does not run", '"findings"'):
        assert piece in brief["text"], piece
    assert "SPAWN REQUEST" not in brief["text"]
    assert project.run("review-needed", 2).error["code"] == "unknown_wave"


def test_a_wave_is_reviewed_only_once_every_spawn_of_it_ran(project):
    start_build(project)
    plan_waves(project, [worker("a1", ["1.1"], writes=["1.py"]), worker("a2", ["1.2"], writes=["2.py"])])
    err = project.run("review-needed", 1).error  # nothing ran yet
    assert err["code"] == "wave_unfinished" and err["unfinished"] == ["w1", "w2"]
    run_worker(project, "w1", created=["1.py"])
    project.run("spawn-start", "w2").json
    assert project.run("review-needed", 1).error["unfinished"] == ["w2"]  # running
    project.run(
        "spawn-finish",
        "w2",
        "-",
        input=json.dumps(
            {"status": "failed", "failure": {"task": "1.2", "error": "boom", "confidence": 95, "fix_scope": "contained", "files": ["2.py"]}}
        ),
    ).json
    assert project.run("failure-decide", "--worker", "w2").json["action"] == "retry"
    assert project.run("review-needed", 1).error["unfinished"] == ["r1"]  # a planned retry
    run_worker(project, "r1", created=["2.py"])
    assert project.run("review-needed", 1).json["reviewer"]["id"] == "v1"
    assert "v1" not in tree(project)["waves"][0]


def test_critical_rebuilds_twice_then_continues_with_a_warning(project):
    built_wave(project)
    first = reviewed(project, 1, CRITICAL)
    assert (first["action"], first["rebuilds"], first["rebuild"]) == ("rebuild", 1, ["b1", "b2"])
    assert first["counts"] == {"CRITICAL": 1, "HIGH": 1, "MEDIUM": 0, "LOW": 1}
    lines = first["text"].splitlines()
    assert lines[0] == "REVIEW — wave 1, round 1 (advisory)"
    assert lines[1].split()[0] == "CRITICAL" and "import fails at start" in lines[1]
    assert lines[-1].startswith("Decision: rebuild — 1 CRITICAL finding(s): rebuild 1 of 2")
    assert tree(project)["nodes"]["v1"]["status"] == "completed"
    assert project.load("COLONY_STATE.json")["workers"]["watcher"] == "idle"
    assert project.run("review-decide", 1, "-", input=json.dumps(CRITICAL)).error["code"] == "rebuild_unfinished"
    assert project.run("review-needed", 1).error["code"] == "wave_unfinished"
    rebuild = project.run("spawn-start", "b1").json
    assert "import fails at start (b.py:1) → add the module" in rebuild["text"]
    project.run("spawn-finish", "b1", "-", input='{"status": "completed"}').json
    run_worker(project, "b2")
    second = reviewed(project, 1, CRITICAL)
    assert (second["action"], second["round"], second["rebuild"]) == ("rebuild", 2, ["b3", "b4"])
    assert tree(project)["nodes"]["b3"]["parent"] == "b1"  # each rebuild follows the latest run of its worker
    run_worker(project, "b3")
    run_worker(project, "b4")
    third = reviewed(project, 1, CRITICAL)
    assert third["action"] == "continue" and third["rebuilds"] == 2 and third["rebuild"] == []
    assert "remain after 2 rebuilds" in third["reason"] and third["text"].endswith(third["warning"])
    t = tree(project)
    assert t["rebuilds"] == {"1": 2} and len(t["warnings"]) == 1 and len(t["reviews"]["1"]) == 3
    assert "(rebuilt 2×)" in project.run("plan-waves", "--approve", "--text").stdout


def test_no_critical_continues(project):
    built_wave(project)
    result = reviewed(project, 1, CLEAN)
    assert result["action"] == "continue" and result["warning"] is None and result["rebuild"] == []


def test_a_wrong_critical_count_is_reported_not_trusted(project):
    built_wave(project)
    result = reviewed(project, 1, {**CLEAN, "critical_count": 2})
    assert result["action"] == "continue" and "critical_count 2" in result["warnings"][0]


@pytest.mark.parametrize(
    "doc,code",
    [
        ('{"findings": [{"severity": "URGENT", "description": "x"}]}', "invalid_finding"),
        ('{"findings": [{"severity": "LOW"}]}', "invalid_report"),
        ('{"findings": "none"}', "invalid_finding"),
        ('"text"', "invalid_finding"),
        ("nope", "invalid_json"),
    ],
)
def test_bad_findings(project, doc, code):
    built_wave(project)
    assert project.run("review-decide", 1, "-", input=doc).error["code"] == code
    assert tree(project)["reviews"] == {}


def test_plain_list_of_findings_is_accepted(project):
    built_wave(project)
    result = project.run("review-decide", 1, "-", input=json.dumps(CRITICAL["findings"])).json
    assert result["action"] == "rebuild"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=12))
def test_rebuilds_never_exceed_the_limit(criticals):
    rebuilds = 0
    for critical in criticals:
        action, reason = review_rules.rule(critical, rebuilds)
        assert action in ("rebuild", "continue") and reason
        if action == "rebuild":
            assert critical > 0
            rebuilds += 1
        assert rebuilds <= review_rules.MAX_WAVE_REBUILDS
