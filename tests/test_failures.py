"""The failure ladder (each rule, its precedence, properties), failure-decide through the CLI,
the retry log, friction records and the abort report."""

import json
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aether.core.exceptions import AetherError
from aether.core.vocabulary import FAILURE_ACTIONS
from aether.rules import failures as failures_rules

from helpers.colony import plan_waves, run_worker, start_build, tree, worker


def report(task="1.1", error="TypeError: x is undefined", confidence=90, scope="contained", files=("src/a.py",), category="type", **extra):
    return failures_rules.normalize_report(
        {"task": task, "error": error, "confidence": confidence, "fix_scope": scope, "files": list(files), "category": category, **extra}
    )


def past(r, action, wave=1):
    return {
        "task": r["task"],
        "wave": wave,
        "files": r["files"],
        "normalized_error": failures_rules.normalize_error(r["error"]),
        "action": action,
    }


def decide(r, history=(), pending=(), wave=1, streak=1, maps=None):
    return failures_rules.decide(r, list(history), list(pending), wave, streak, maps)


# ---------------------------------------------------------------- the ladder, rule by rule


def test_first_failure_confident_and_contained_retries():
    verdict = decide(report())
    assert (verdict["action"], verdict["step"], verdict["attempt"]) == ("retry", 3, 1)


@pytest.mark.parametrize(
    "confidence,scope,why",
    [
        (79, "contained", "below 80%"),
        (95, "requires other files", "outside the task"),
        (95, "who knows", "scope is unknown"),
        (100, None, "scope is unknown"),
    ],
)
def test_first_failure_without_a_safe_fix_goes_to_the_debugger(confidence, scope, why):
    verdict = decide(report(confidence=confidence, scope=scope))
    assert verdict["action"] == "debug" and verdict["step"] == 3 and why in verdict["reason"]


def test_second_failure_debugs_third_flags_or_skips():
    r = report()
    assert decide(r, [past(r, "retry")])["action"] == "debug"
    after_debug = [past(r, "retry"), past(r, "debug")]
    assert decide(r, after_debug, maps=True)["action"] == "flag"
    assert decide(r, after_debug, maps=False)["action"] == "skip"
    unknown = decide(r, after_debug, maps=None)
    assert unknown["action"] == "flag" and unknown["step"] == 5
    undiagnosable = report(error="UNDIAGNOSABLE: cannot reproduce")
    assert "UNDIAGNOSABLE" in decide(undiagnosable, [past(undiagnosable, "debug")], maps=False)["reason"]


@pytest.mark.parametrize(
    "category",
    ["security", "Security Vulnerability", "missing-dependency", "dependency_missing", "circular dependency", "dependency_cycle"],
)
def test_abort_categories(category):
    verdict = decide(report(category=category))
    assert verdict["action"] == "abort_phase" and verdict["step"] == 2


def test_recovery_breaker_more_than_ten_retries_and_debuggers():
    history = [past(report(task=f"1.{i}", error=f"e{chr(97 + i)}", files=[f"f{i}"]), "retry" if i % 2 else "debug") for i in range(10)]
    fresh = report(task="1.99", error="another", files=["g"])
    verdict = decide(fresh, history)
    assert verdict["action"] == "abort_phase" and verdict["step"] == 1 and "number 11" in verdict["reason"]
    # a decision that spawns nothing is not stopped by it
    done = report(task="1.0", error="ea", files=["f0"])
    assert decide(done, history, maps=False)["action"] == "skip"


def test_warning_past_five_retries():
    history = [past(report(task=f"1.{i}", error=f"e{chr(97 + i)}", files=[f"f{i}"]), "retry") for i in range(5)]
    verdict = decide(report(task="1.9", error="new", files=["g"]), history)
    assert verdict["action"] == "retry" and verdict["recovery_spawns"] == 6
    assert verdict["warnings"] and "more than 5" in verdict["warnings"][0]
    assert decide(report(task="1.9", error="new", files=["g"]), history[:4])["warnings"] == []


def test_same_file_in_more_than_two_failing_tasks_aborts_with_redesign():
    history = [
        past(report(task="1.1", error="a", files=["core.py"]), "retry"),
        past(report(task="1.2", error="b", files=["core.py", "x.py"]), "retry", wave=2),
    ]
    verdict = decide(report(task="1.3", error="c", files=["core.py"]), history, wave=3)
    assert verdict["action"] == "abort_phase" and "core.py" in verdict["reason"] and "rethinking" in verdict["reason"]
    assert decide(report(task="1.2", error="c", files=["core.py"]), history, wave=3)["action"] == "debug"  # same task again


def test_same_error_in_three_tasks_or_two_of_a_wave_is_a_common_cause():
    e = "ModuleNotFoundError: No module named 'requests' (line 12)"
    h = [
        past(report(task="1.1", error=e, files=["a"]), "retry", wave=1),
        past(report(task="1.2", error=e.replace("12", "40"), files=["b"]), "retry", wave=2),
    ]
    verdict = decide(report(task="1.3", error=e, files=["c"]), h, wave=3)
    assert verdict["action"] == "abort_phase" and "common cause" in verdict["reason"]
    pending = [{"task": "1.5", "wave": 4, "files": ["z"], "normalized_error": failures_rules.normalize_error(e)}]
    in_wave = decide(report(task="1.4", error=e, files=["d"]), [], pending, wave=4)
    assert in_wave["action"] == "abort_phase" and "wave 4" in in_wave["reason"]
    other_wave = decide(report(task="1.4", error=e, files=["d"]), [], pending, wave=5)
    assert other_wave["action"] == "retry"


def test_consecutive_failures_abort_the_wave():
    assert decide(report(), streak=3)["action"] == "abort_wave"
    assert decide(report(), streak=2)["action"] == "retry"


def test_breakers_come_before_categories():
    e = "boom"
    h = [past(report(task="1.1", error=e, files=["a"]), "retry"), past(report(task="1.2", error=e, files=["b"]), "retry")]
    verdict = decide(report(task="1.3", error=e, files=["c"], category="security"), h, wave=2)
    assert verdict["step"] == 1 and "common cause" in verdict["reason"]


def test_error_normalisation():
    assert failures_rules.normalize_error("Error at 0x7ffe12 line 12:4") == failures_rules.normalize_error("error  at 0xdead line 99:1")
    assert failures_rules.normalize_error("no module named 'a'") != failures_rules.normalize_error("no module named 'b'")


@pytest.mark.parametrize(
    "bad,code",
    [
        ({"error": "x"}, "invalid_report"),
        ({"task": "1.1"}, "invalid_report"),
        ({"task": "1.1", "error": "x", "confidence": 101}, "invalid_report"),
        ({"task": "1.1", "error": "x", "confidence": "lots"}, "invalid_report"),
        ({"task": "1.1", "error": "x", "confidence": float("nan")}, "invalid_report"),
        ({"task": "1.1", "error": ["x"]}, "invalid_report"),
        ({"task": "1.1", "error": "x", "files": "a.py\nb.py"}, None),
        ({"task": 1.1, "error": "x", "confidence": "85%"}, None),
        ("just text", "invalid_report"),
    ],
)
def test_report_validation(bad, code):
    if code is None:
        assert failures_rules.normalize_report(bad)["task"] == "1.1"
        return
    with pytest.raises(AetherError) as exc:
        failures_rules.normalize_report(bad)
    assert exc.value.code == code


# ---------------------------------------------------------------- properties


REPORTS = st.builds(
    lambda task, err, conf, scope, files, cat, maps: (
        failures_rules.normalize_report(
            {"task": task, "error": err, "confidence": conf, "fix_scope": scope, "files": files, "category": cat}
        ),
        maps,
    ),
    st.sampled_from([f"1.{i}" for i in range(1, 8)]),
    st.sampled_from(["e1", "e2", "e3", "e4", "e5 UNDIAGNOSABLE"]),
    st.integers(0, 100),
    st.sampled_from(["contained", "other_files", "", "requires other files"]),
    st.lists(st.sampled_from(["a.py", "b.py", "c.py", "d.py"]), max_size=2),
    st.sampled_from(["type", "logic", "security", "missing_dependency", "other"]),
    st.sampled_from([True, False, None]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(REPORTS, st.integers(1, 3), st.integers(1, 4)), min_size=1, max_size=40))
def test_every_history_maps_to_one_action_and_limits_hold(sequence):
    history = []
    for (r, maps), wave, streak in sequence:
        verdict = decide(r, history, [], wave, streak, maps)
        assert verdict["action"] in FAILURE_ACTIONS and isinstance(verdict["reason"], str) and verdict["reason"]
        assert verdict == decide(r, history, [], wave, streak, maps)  # deterministic: one answer per history
        history.append({**past(r, verdict["action"], wave)})
        spawned = [h for h in history if h["action"] in ("retry", "debug")]
        assert len(spawned) <= failures_rules.MAX_RETRIES_AND_DEBUGGERS
        per_task = {}
        for h in spawned:
            per_task.setdefault((h["task"], h["action"]), 0)
            per_task[(h["task"], h["action"])] += 1
        assert all(n == 1 for n in per_task.values())  # at most one retry and one debugger per task


# ---------------------------------------------------------------- through the CLI


@pytest.fixture
def wave(project):
    start_build(project)
    plan_waves(
        project, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"]), worker("c", ["1.3"], writes=["c.py"])]
    )
    return project


def fail(project, node, task, error="TypeError: cannot read x", confidence=90, scope="contained", files=("a.py",), **extra):
    return run_worker(
        project,
        node,
        "failed",
        failure={"task": task, "error": error, "confidence": confidence, "fix_scope": scope, "files": list(files), **extra},
    )


def test_retry_then_debugger_then_flag_through_the_cli(wave):
    fail(wave, "w1", "1.1", hypotheses=[{"hypothesis": "null input", "result": "confirmed"}])
    first = wave.run("failure-decide", "--worker", "w1").json
    assert first["action"] == "retry" and first["next"]["spawn"] == "r1" and "--- RETRY CONTEXT ---" in first["context"]
    assert "Next: aether spawn-start r1" in wave.run("failure-decide", "--worker", "w1", "--text").stdout
    repeat = wave.run("failure-decide", "--worker", "w1").json
    assert repeat["already_decided"] and repeat["next"]["spawn"] == "r1"
    brief = wave.run("spawn-start", "r1").json["text"]
    assert "Previous error (the worker's account): TypeError: cannot read x" in brief
    wave.run(
        "spawn-finish",
        "r1",
        "-",
        input=json.dumps(
            {
                "status": "failed",
                "failure": {"task": "1.1", "error": "TypeError: still", "confidence": 50, "fix_scope": "contained", "files": ["a.py"]},
            }
        ),
    ).json
    second = wave.run("failure-decide", "--worker", "r1").json
    assert second["action"] == "debug" and second["next"]["caste"] == "builder"
    debugger = tree(wave)["nodes"]["d1"]
    assert debugger["parent"] == "r1" and debugger["origin"] == "w1" and debugger["role"] == "debugger"
    assert "First attempt error: TypeError: cannot read x" in debugger["context"]
    assert "Second attempt error: TypeError: still" in debugger["context"]
    run_worker(wave, "d1", "failed", diagnosis="UNDIAGNOSABLE: no clue", fix_applied=False)
    third = wave.run("failure-decide", "--worker", "d1", "--maps-to-criterion").json
    assert third["action"] == "flag" and third["next"]["show_user"] and third["next"]["task_status"] == "failed"
    data = wave.load("failures.json")
    assert [h["action"] for h in data["history"]] == ["retry", "debug", "flag"]
    assert [(r["kind"], r["attempt"], r["result"]) for r in data["retry_log"]] == [("retry", 2, "failed"), ("debugger", 3, "failed")]
    assert data["version"] == 1 and tree(wave)["failed_tasks"] == {"1.1": "flag"}
    events = [e["type"] for e in wave.load("events.json")["events"]]
    assert events.count("failure_decided") == 3


def test_a_recovery_records_friction(wave):
    fail(wave, "w1", "1.1")
    wave.run("failure-decide", "--worker", "w1").json
    (wave.root / "a.py").write_text("fixed")
    done = run_worker(wave, "r1", modified=["a.py"], summary="added a null check")
    assert done["friction"]["id"] == "FR-001" and done["friction"]["attempts"] == 2
    assert done["friction"]["resolution"] == "added a null check"
    data = wave.load("failures.json")
    assert data["retry_log"][0]["result"] == "recovered" and data["next_friction"] == 2
    updated = wave.run("friction-add", "1.1", "-", "--pattern", "inputs are never validated", input="null check").json
    assert updated["created"] is False and updated["id"] == "FR-001" and updated["pattern"] == "inputs are never validated"
    assert "FR-001: auto-recovery needed for task 1.1" in updated["text"]
    assert wave.run("friction-add", "1.2", "x").error["code"] == "no_failure_recorded"


def test_a_report_without_worker_finds_the_task_and_unknown_tasks_are_refused(wave):
    fail(wave, "w2", "1.2", files=["b.py"])
    by_task = wave.run(
        "failure-decide", "-", input=json.dumps({"task": "1.2", "error": "x", "confidence": 20, "fix_scope": "contained"})
    ).json
    assert by_task["worker"] == "w2" and by_task["action"] == "debug"
    err = wave.run("failure-decide", "-", input=json.dumps({"task": "9.9", "error": "x"})).error
    assert err["code"] == "unknown_task"
    assert wave.run("failure-decide").error["code"] == "usage_error"
    assert wave.run("failure-decide", "--worker", "w3").error["code"] == "no_failure_report"
    assert wave.run("failure-decide", "-", input="{").error["code"] == "invalid_json"


def test_three_failed_workers_in_a_row_abort_the_wave(wave):
    for node, task, err in (("w1", "1.1", "a"), ("w2", "1.2", "b"), ("w3", "1.3", "c")):
        fail(wave, node, task, error=f"error {err}", files=[f"{node}.py"])
    verdict = wave.run("failure-decide", "--worker", "w1").json
    assert verdict["action"] == "abort_wave" and verdict["consecutive_failures"] == 3
    assert tree(wave)["aborted_waves"] == [1]


def test_common_cause_aborts_the_phase_and_stops_the_build(wave):
    fail(wave, "w1", "1.1", error="ImportError: no module named zed", files=["a.py"])
    fail(wave, "w2", "1.2", error="ImportError: no module named zed", files=["b.py"])
    verdict = wave.run("failure-decide", "--worker", "w1").json
    assert verdict["action"] == "abort_phase" and verdict["next"]["command"] == "aether abort-report 1"
    t = tree(wave)
    assert t["status"] == "aborted" and t["nodes"]["w3"]["status"] == "skipped"
    assert wave.run("spawn-start", "w3").error["code"] == "build_aborted"
    assert wave.run("failure-decide", "--worker", "w1").json["already_decided"]  # a repeat still answers
    assert wave.run("failure-decide", "--worker", "w2").error["code"] == "build_aborted"
    abort = wave.load("failures.json")["aborts"][0]
    assert abort["files_touched"] == ["a.py", "b.py"] and abort["failures"] == 2


def test_abort_report_outside_git(wave):
    assert wave.run("abort-report", 1).error["code"] == "no_abort"
    fail(
        wave,
        "w1",
        "1.1",
        category="security",
        files=["a.py"],
        hypotheses=[{"hypothesis": "token leaks to logs", "result": "confirmed"}],
        suggested_fix="redact it",
        root_cause="logger prints headers",
    )
    assert wave.run("failure-decide", "--worker", "w1").json["action"] == "abort_phase"
    text = wave.run("abort-report", 1).stdout
    for piece in (
        "AETHER BUILD ABORTED — phase 1",
        "Task:   1.1 (task 1.1)",
        "category security",
        "token leaks to logs: confirmed",
        "Root cause: logger prints headers",
        "Suggested fix (90% confident): redact it",
        "Recovery options:",
        "/ant:build 1",
        "  - a.py",
        "Last good checkpoint: none recorded",
        "Abort tag: none (not a git repository)",
    ):
        assert piece in text, piece
    assert wave.run("abort-report", 1, "--json").json["tag"] is None


def test_abort_report_tags_once_inside_git(project):
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    start_build(project)
    plan_waves(project, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"])])
    fail(project, "w1", "1.1", category="missing dependency")
    project.run("failure-decide", "--worker", "w1").json
    first = project.run("abort-report", 1, "--json").json
    again = project.run("abort-report", 1, "--json").json
    assert first["tag"] == again["tag"] == "aether/phase-1-aborted"
    assert first["checkpoint"]["ref"].startswith("refs/aether/checkpoints/phase-1-")
    tags = subprocess.run(["git", "tag", "-l"], cwd=project.root, capture_output=True, text=True).stdout.split()
    assert tags == ["aether/phase-1-aborted"]
    message = subprocess.run(["git", "tag", "-l", "-n1", "aether/phase-1-aborted"], cwd=project.root, capture_output=True, text=True).stdout
    assert "Aborted: category missing_dependency" in message
    assert [e["type"] for e in project.load("events.json")["events"]].count("phase_aborted") == 1
