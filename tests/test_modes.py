"""Modes that change behaviour: every row of seed 001's "What Changes Per Mode" table answered by
`mode-profile` for each mode, the derived booleans, and the helper's own behaviour following the
profile where it acts (spawn limits, workers per wave, reviewer, watcher, auto signals, activity
log, learning cadence, archivist, code loop)."""

import json

import pytest

from helpers.colony import make_plan, plan_waves, results, start_build, worker

MODES = ("LIGHTWEIGHT", "STANDARD", "FULL")
# seed 001's table, as the helper must answer it
TABLE = {
    "LIGHTWEIGHT": {
        "phase_count": [2, 3],
        "workers_per_wave_range": [1, 2],
        "workers_per_wave": 2,
        "spawn_limits": {"max_depth": 2, "max_workers": 3},
        "reviewer": False,
        "watcher": "syntax",
        "watcher_checks": ["syntax"],
        "learning": "project_end",
        "auto_signals": ["FEEDBACK"],
        "activity_log": "off",
    },
    "STANDARD": {
        "phase_count": [3, 6],
        "workers_per_wave_range": [2, 4],
        "workers_per_wave": 4,
        "spawn_limits": {"max_depth": 3, "max_workers": 5},
        "reviewer": True,
        "watcher": "full",
        "watcher_checks": ["syntax", "imports", "tests"],
        "learning": "per_phase",
        "auto_signals": ["FEEDBACK", "REDIRECT"],
        "activity_log": "on",
    },
    "FULL": {
        "phase_count": [4, 8],
        "workers_per_wave_range": [3, 5],
        "workers_per_wave": 5,
        "spawn_limits": {"max_depth": 3, "max_workers": 5},
        "reviewer": True,
        "watcher": "full+execution",
        "watcher_checks": ["syntax", "imports", "tests", "execution"],
        "learning": "per_phase+inter_phase",
        "auto_signals": ["INIT", "FOCUS", "REDIRECT", "FEEDBACK"],
        "activity_log": "detailed",
    },
}
DERIVED = {  # spawn_watcher, helper_syntax_check, spawn_reviewer, activity_log_enabled, detailed_activity, execution_check
    "LIGHTWEIGHT": (False, True, False, False, False, False),
    "STANDARD": (True, False, True, True, False, False),
    "FULL": (True, False, True, True, True, True),
}


@pytest.mark.parametrize("mode", MODES)
def test_every_row_for_every_mode(project, mode):
    info = project.run("mode-profile", "--mode", mode).json
    for key, value in TABLE[mode].items():
        assert info[key] == value, key
    derived = tuple(
        info[k]
        for k in ("spawn_watcher", "helper_syntax_check", "spawn_reviewer", "activity_log_enabled", "detailed_activity", "execution_check")
    )
    assert derived == DERIVED[mode]
    assert info["auto_emit"] == {t: t in TABLE[mode]["auto_signals"] for t in ("INIT", "FOCUS", "REDIRECT", "FEEDBACK")}
    assert info["mode"] == mode and info["source"] == "argument"
    assert info["archivist_every"] == (3 if mode == "FULL" else None)
    assert info["code_loop"] is (mode == "FULL")
    text = project.run("mode-profile", "--mode", mode.lower(), "--text").stdout
    assert text.startswith(f"MODE {mode}") and f"{info['phase_count'][0]}–{info['phase_count'][1]}" in text


@pytest.mark.parametrize(
    "mode,when,last,expected",
    [
        ("LIGHTWEIGHT", "build", False, False),
        ("LIGHTWEIGHT", "continue", False, False),
        ("LIGHTWEIGHT", "build", True, True),
        ("LIGHTWEIGHT", "end", False, True),
        ("LIGHTWEIGHT", "between", False, False),
        ("STANDARD", "build", False, True),
        ("STANDARD", "continue", False, True),
        ("STANDARD", "between", False, False),
        ("FULL", "build", False, True),
        ("FULL", "between", False, True),
        ("FULL", "end", False, True),
    ],
)
def test_learning_cadence_answers(project, mode, when, last, expected):
    project.run("colony-init", "goal", "--mode", mode).json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=2))).json
    phase = 2 if last else 1
    info = project.run("mode-profile", "--when", when, "--phase", phase).json
    assert info["source"] == "colony" and info["last_phase"] is last
    assert info["extract_learnings_now"] is expected, info["learning_reason"]


def test_without_a_colony_the_default_is_standard_and_when_is_optional(project):
    info = project.run("mode-profile").json
    assert info["mode"] == "STANDARD" and info["source"] == "default"
    assert info["extract_learnings_now"] is None and info["run_archivist"] is False
    assert project.run("mode-profile", "--mode", "TURBO").error["code"] == "invalid_argument"
    assert project.run("mode-profile", "--when", "lunch").error["code"] == "invalid_argument"
    assert project.run("mode-profile", "--phase", "0").error["code"] == "invalid_argument"


@pytest.mark.parametrize(
    "mode,phase,due", [("FULL", 3, True), ("FULL", 6, True), ("FULL", 4, False), ("STANDARD", 3, False), ("LIGHTWEIGHT", 3, False)]
)
def test_archivist_every_third_phase_in_full(project, mode, phase, due):
    assert project.run("mode-profile", "--mode", mode, "--phase", phase).json["run_archivist"] is due


# ---------------------------------------------------------------- the helper follows the profile


@pytest.mark.parametrize("mode", MODES)
def test_spawn_check_limits_follow_the_mode(project, mode):
    project.run("colony-init", "goal", "--mode", mode).json
    limits = TABLE[mode]["spawn_limits"]
    ok = project.run("spawn-check", limits["max_depth"] - 1).json
    assert ok["pass"] is True and ok["max_depth"] == limits["max_depth"] and ok["max_workers"] == limits["max_workers"]
    assert project.run("spawn-check", limits["max_depth"]).json["pass"] is False


@pytest.mark.parametrize("mode", MODES)
def test_build_start_answers_the_profile_and_plan_waves_uses_it(project, mode):
    start_build(project, mode=mode, tasks=11)
    started = project.load("COLONY_STATE.json")
    assert started["state"] == "EXECUTING"
    result = plan_waves(project, [worker(f"w{i}", [f"1.{i}"], writes=[f"f{i}.py"]) for i in range(1, 12)])
    cap = min(TABLE[mode]["workers_per_wave"], TABLE[mode]["spawn_limits"]["max_workers"])
    assert max(len(w["workers"]) for w in result["waves"]) == cap
    assert result["limits"]["max_depth"] == TABLE[mode]["spawn_limits"]["max_depth"]


@pytest.mark.parametrize("mode", MODES)
def test_build_start_carries_the_full_profile(project, mode):
    project.run("colony-init", "goal", "--mode", mode).json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=2))).json
    out = project.run("build-start", 1).json
    profile = out["mode_profile"]
    assert {k: profile[k] for k in TABLE[mode]} == TABLE[mode]
    assert profile["when"] == "build" and profile["spawn_reviewer"] is TABLE[mode]["reviewer"]
    assert (out["code_loop"] is not None) is (mode == "FULL")


@pytest.mark.parametrize("mode", MODES)
def test_reviewer_follows_the_mode(project, mode):
    start_build(project, mode=mode)
    plan_waves(project, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"])])
    for node in ("w1", "w2"):
        project.run("spawn-start", node).json
        (project.root / f"{'a' if node == 'w1' else 'b'}.py").write_text("x = 1\n")
        project.run(
            "spawn-finish", node, "-", input=json.dumps({"status": "completed", "files_created": [f"{'a' if node == 'w1' else 'b'}.py"]})
        ).json
    review = project.run("review-needed", 1).json
    assert review["needed"] is TABLE[mode]["reviewer"]
    if not TABLE[mode]["reviewer"]:
        assert review["skip"] == "mode_has_no_reviewer"


@pytest.mark.parametrize(
    "mode,signals", [("LIGHTWEIGHT", ["FEEDBACK"]), ("STANDARD", ["FEEDBACK", "REDIRECT"]), ("FULL", ["FEEDBACK", "REDIRECT"])]
)
def test_auto_signals_of_build_finish_follow_the_mode(project, mode, signals):
    project.run("colony-init", "goal", "--mode", mode).json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=2))).json
    project.run("build-start", 1).json
    extra = {t: {"error": {"category": "import"}} for t in ("1.1", "1.2", "1.3")}
    watcher = None if mode == "LIGHTWEIGHT" else {"passed": False, "score": 10, "checks": []}
    out = project.run(
        "build-finish", 1, "--results", "-", input=results(["1.1", "1.2", "1.3"], failed=("1.1", "1.2", "1.3"), watcher=watcher, **extra)
    ).json
    assert sorted({s["type"] for s in out["signals_emitted"]}) == sorted(signals)


@pytest.mark.parametrize("mode,logged", [("LIGHTWEIGHT", "skipped"), ("STANDARD", "logged"), ("FULL", "logged")])
def test_activity_log_is_off_in_lightweight(project, mode, logged):
    project.run("colony-init", "goal", "--mode", mode).json
    assert project.run("activity-log", "SPAWN", "builder", "wave 1").json == logged
    assert (project.run("activity-log-read").json != "") is (logged == "logged")


def test_lightweight_watcher_is_the_helpers_syntax_check(project):
    """LIGHTWEIGHT: no watcher report; build-finish checks the syntax of the build's files itself."""
    project.run("colony-init", "small tool", "--mode", "LIGHTWEIGHT").json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=2))).json
    project.run("build-start", 1).json
    (project.root / "src").mkdir()
    (project.root / "src" / "1.1.py").write_text("def ok():\n    return 1\n")
    (project.root / "src" / "1.2.py").write_text("def broken(:\n")
    (project.root / "src" / "1.3.py").write_text("x = 3\n")
    out = project.run("build-finish", 1, "--results", "-", input=results(["1.1", "1.2", "1.3"], watcher=None)).json
    assert out["watcher"] is None and out["syntax_check"]["kind"] == "syntax"
    assert out["syntax_check"]["passed"] is False and out["syntax_check"]["checked"] == 3
    assert out["syntax_check"]["failures"][0]["path"] == "src/1.2.py"
    assert out["phase_status"] == "failed" and "syntax check failed" in out["text"]
    assert any(e["category"] == "syntax" for e in project.load("errors.json")["errors"])
    # fixed: the resumed build passes its syntax check and the phase completes
    (project.root / "src" / "1.2.py").write_text("def fixed():\n    return 2\n")
    project.run("build-start", 1, "--resume").json
    out = project.run("build-finish", 1, "--results", "-", input=results(["1.1", "1.2", "1.3"], watcher=None)).json
    assert out["syntax_check"]["passed"] is True and out["phase_status"] == "completed"
    assert "syntax check passed" in out["text"]


def test_standard_still_requires_a_watcher_report(project):
    project.run("colony-init", "goal").json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=3))).json
    project.run("build-start", 1).json
    err = project.run("build-finish", 1, "--results", "-", input=results(["1.1", "1.2", "1.3"], watcher=None)).error
    assert err["code"] == "invalid_results"


@pytest.mark.parametrize(
    "mode,last,expected", [("LIGHTWEIGHT", False, False), ("LIGHTWEIGHT", True, True), ("STANDARD", False, True), ("FULL", False, True)]
)
def test_build_finish_says_when_to_extract_learnings(project, mode, last, expected):
    project.run("colony-init", "goal", "--mode", mode).json
    plan = make_plan(phases=1 if last else 2)
    project.run("plan-load", "-", input=json.dumps(plan)).json
    project.run("build-start", 1).json
    watcher = None if mode == "LIGHTWEIGHT" else {"passed": True, "score": 90, "checks": []}
    out = project.run("build-finish", 1, "--results", "-", input=results(["1.1", "1.2", "1.3"], watcher=watcher)).json
    assert out["learnings"]["extract_now"] is expected
    if expected:
        assert out["learnings"]["command"] == "aether learning-add 1 - --each-line"
        project.run("learning-add", 1, "-", "--each-line", input="bcrypt is slow\n").json
    # continue never extracts a second time: the helper refuses it and continue-start says so
    cont = project.run("continue-start").json
    assert cont["learnings"]["extract_now"] is False
    if expected:
        assert cont["learnings"]["already_extracted"] is True
        assert project.run("learning-add", 1, "again").error["code"] == "learnings_exist"
