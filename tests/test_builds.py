"""The colony's lifecycle: every transition, build-start/finish/abort, phase-advance, and a
property test that no sequence of commands skips a phase or runs two at once."""

import json
import shutil

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from helpers.colony import WATCHER_OK, finish, ids, make_plan, results


def state(project):
    return project.load("COLONY_STATE.json")


def snapshot(project):
    """Every state file's bytes."""
    return {p.name: p.read_bytes() for p in sorted(project.data.glob("*.json"))}


def statuses(project):
    return [p["status"] for p in project.load("PROJECT_PLAN.json")["phases"]]


@pytest.fixture
def ready(project):
    """A STANDARD colony with a 3-phase plan, before its first build."""
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    return project


# ---------------------------------------------------------------- the state machine


def to_state(project, name):
    if name == "IDLE":
        return
    project.run("colony-init", "Build a todo API").json
    if name == "PLANNING":
        project.run("plan-start").json
        return
    plan = make_plan(phases=1) if name == "COMPLETED" else make_plan()
    project.run("plan-load", "-", input=json.dumps(plan)).json
    if name in ("EXECUTING", "COMPLETED"):
        project.run("build-start", 1).json
    if name == "COMPLETED":
        finish(project, 1).json
        project.run("phase-advance").json
    assert state(project)["state"] == name


PLAN = json.dumps(make_plan())
COMMANDS = {
    "plan-start": (["plan-start"], None),
    "plan-load": (["plan-load", "-", "--force"], PLAN),
    "build-start": (["build-start", 1], None),
    "build-start --resume": (["build-start", 1, "--resume"], None),
    "build-finish": (["build-finish", 1, "--results", "-"], results(ids(1))),
    "build-abort": (["build-abort", 1, "--reason", "stop"], None),
    "phase-advance": (["phase-advance"], None),
}
# state → {command: state after it}; everything else must be refused naming the way forward.
LEGAL = {
    "IDLE": {},
    "READY": {
        "plan-start": "PLANNING",
        "plan-load": "READY",
        "build-start": "EXECUTING",
        "build-start --resume": "EXECUTING",
        "phase-advance": "READY",
    },
    "PLANNING": {"plan-start": "PLANNING", "plan-load": "READY"},
    "EXECUTING": {"build-finish": "READY", "build-abort": "READY", "build-start --resume": "EXECUTING"},
    "COMPLETED": {"plan-start": "PLANNING", "plan-load": "READY"},
}
HINT = {  # the command an illegal move's message must name
    "IDLE": "colony-init",
    "PLANNING": "plan-load",
    "EXECUTING": "build-finish",
    "COMPLETED": "plan-load",
    "READY": "build-start",
}
CASES = [(s, c) for s in LEGAL for c in COMMANDS]


@pytest.mark.parametrize("start,command", CASES, ids=[f"{s}:{c}" for s, c in CASES])
def test_every_transition(project, start, command):
    to_state(project, start)
    before = snapshot(project)
    args, stdin = COMMANDS[command]
    out = project.run(*args, input=stdin)
    if command in LEGAL[start]:
        out.json
        assert state(project)["state"] == LEGAL[start][command]
        return
    err = out.error
    assert out.code == 2
    if command == "build-start --resume" or (command == "build-start" and start == "EXECUTING"):
        assert err["code"] in ("invalid_transition", "resume_required")
    else:
        assert err["code"] == "invalid_transition", err
        assert err["state"] == start
    hint = "build-abort" if start == "EXECUTING" and command.startswith("build-start") else HINT[start]
    assert start in err["error"] and hint in err["error"], err["error"]
    assert snapshot(project) == before  # a refused command changes nothing


def test_transition_table_matches_cli():
    from aether.rules.lifecycle import TRANSITIONS

    for start, moves in LEGAL.items():
        table = TRANSITIONS[start]
        for command, target in moves.items():
            if command == "build-start --resume" and start == "READY":
                command = "build-start"  # resuming a failed phase from READY is a plain build-start move
            assert target in table[command]


# ---------------------------------------------------------------- build-start


def test_build_start_returns_the_work(ready):
    ready.run("pheromone-emit", "FOCUS", "validate every input at the API edge").json
    out = ready.run("build-start", 1).json
    assert out["phase"]["id"] == 1 and out["phase"]["success_criteria"] == ["criterion of phase 1"]
    assert [t["id"] for t in out["tasks"]] == ["1.1", "1.2", "1.3"] and out["todo"] == ["1.1", "1.2", "1.3"]
    assert out["mode"] == "STANDARD" and out["mode_profile"]["workers_per_wave"] == 4
    assert "FOCUS" in out["pheromones"] and "validate every input" in out["pheromones"]
    assert out["pheromones_for_caste"] == "aether pheromone-render --caste <caste>"
    assert out["checkpoint"] is None and out["warnings"] == []  # not a git repository
    colony = state(ready)
    assert (colony["state"], colony["current_phase"], colony["spawn_tree"]) == ("EXECUTING", 1, None)
    assert statuses(ready) == ["in_progress", "pending", "pending"]
    assert ready.load("events.json")["events"][-1]["type"] == "build_started"
    text = ready.run("status", "--json").json["text"]
    assert "EXECUTING" in text


def test_build_start_resets_spawn_tree(ready):
    colony = state(ready)
    colony["spawn_tree"] = {"phase": 0, "status": "finished", "max_depth": 3, "waves": [], "spawn_requests": [], "nodes": {}}
    ready.write("COLONY_STATE.json", colony)
    ready.run("build-start", 1).json
    assert state(ready)["spawn_tree"] is None


@pytest.mark.parametrize(
    "args,code,words",
    [
        (["build-start", 2], "phase_out_of_order", "phase 1 (Phase 1 name) comes first"),
        (["build-start", 9], "unknown_phase", "phases: 1, 2, 3"),
        (["build-start", 0], "invalid_argument", "0"),
        (["build-start", "x"], "invalid_argument", "x"),
        (["build-start", "1.5"], "invalid_argument", "1.5"),
    ],
)
def test_build_start_refusals(ready, args, code, words):
    err = ready.run(*args).error
    assert err["code"] == code and words in err["error"]
    assert state(ready)["state"] == "READY" and statuses(ready) == ["pending"] * 3


def test_build_start_without_plan(project):
    project.run("colony-init", "Build a todo API").json
    err = project.run("build-start", 1).error
    assert err["code"] == "plan_missing" and "/ant:plan" in err["error"]


def test_build_start_uninitialised(project):
    err = project.run("build-start", 1).error
    assert err["code"] == "invalid_transition" and "colony-init" in err["error"]
    assert not project.file("COLONY_STATE.json").exists()


def test_build_start_corrupt_state(ready):
    ready.file("PROJECT_PLAN.json").write_text("{broken", encoding="utf-8")
    assert ready.run("build-start", 1).error["code"] == "state_corrupt"
    assert state(ready)["state"] == "READY"


def test_completed_phase_and_order(ready):
    ready.run("build-start", 1).json
    finish(ready, 1).json
    err = ready.run("build-start", 1).error
    assert err["code"] == "phase_completed" and "/ant:continue" in err["error"]
    err = ready.run("build-start", 2).error  # phase-advance is the only writer of current_phase
    assert err["code"] == "phase_out_of_order" and "/ant:continue" in err["error"]
    err = ready.run("build-start", 3).error
    assert err["code"] == "phase_out_of_order"
    ready.run("phase-advance").json
    assert ready.run("build-start", 2).json["phase"]["id"] == 2


def test_already_running(ready):
    ready.run("build-start", 1).json
    err = ready.run("build-start", 1).error
    assert err["code"] == "invalid_transition"
    assert "/ant:build 1 --resume" in err["error"] and "build-abort 1" in err["error"]
    err = ready.run("build-start", 2, "--resume").error
    assert err["code"] == "phase_mismatch" and err["running"] == 1


def test_interrupted_build_is_resumable(ready):
    ready.run("build-start", 1).json
    # a crash or /clear leaves EXECUTING: resume takes the build over
    out = ready.run("build-start", 1, "--resume").json
    assert out["resumed"] is True and out["previous_status"] == "in_progress"
    assert state(ready)["state"] == "EXECUTING" and statuses(ready)[0] == "in_progress"
    assert ready.load("events.json")["events"][-1]["type"] == "build_resumed"
    finish(ready, 1).json
    assert statuses(ready)[0] == "completed"


def test_abort_then_resume(ready):
    ready.run("build-start", 1).json
    out = ready.run("build-abort", 1, "--reason", "-", input="the db schema is wrong\nline two").json
    assert out["phase_status"] == "failed" and out["next"]["command"] == "aether next --build 1"
    assert out["next"]["report"] == "aether abort-report 1"
    colony = state(ready)
    assert colony["state"] == "READY" and colony["current_phase"] == 1
    assert statuses(ready) == ["failed", "pending", "pending"]
    event = ready.load("events.json")["events"][-1]
    assert event["type"] == "build_aborted" and "db schema is wrong" in event["content"]
    err = ready.run("build-start", 1).error
    assert err["code"] == "resume_required" and "--resume" in err["error"]
    assert ready.run("phase-advance").error["code"] == "phase_not_completed"
    assert ready.run("build-start", 1, "--resume").json["previous_status"] == "failed"


@pytest.mark.parametrize(
    "args,code",
    [
        (["build-abort", 1, "--reason", "  "], "invalid_reason"),
        (["build-abort", 2, "--reason", "x"], "phase_mismatch"),
        (["build-abort", 1], "invalid_argument"),
    ],
)
def test_abort_refusals(ready, args, code):
    ready.run("build-start", 1).json
    assert ready.run(*args).error["code"] == code
    assert state(ready)["state"] == "EXECUTING"


def test_abort_reason_limit(ready):
    ready.run("build-start", 1).json
    assert ready.run("build-abort", 1, "--reason", "-", input="x" * 5000).error["code"] == "content_too_long"


# ---------------------------------------------------------------- build-finish


def test_finish_success_effects_on_every_file(ready):
    ready.run("build-start", 1).json
    out = finish(ready, 1, skipped=("1.3",)).json
    assert out["phase_status"] == "completed"
    assert out["tasks"]["completed"] == 2 and out["tasks"]["skipped"] == 1
    assert out["files_created"] == ["src/1.1.py", "src/1.2.py", "src/1.3.py"]
    assert out["files_modified"] == ["README.md"]
    assert out["next"]["command"] == "aether next --continue"
    assert "COMPLETED" in out["text"] and "/ant:continue" in out["text"] and "Watcher: passed (score 92)" in out["text"]
    # COLONY_STATE: READY, spawn outcomes from the task results' castes (no spawn tree)
    colony = state(ready)
    assert colony["state"] == "READY" and colony["current_phase"] == 1
    assert colony["spawn_outcomes"]["builder"] == {"alpha": 3, "beta": 1, "total_spawns": 2, "successes": 2, "failures": 0}
    assert colony["spawn_outcomes"]["scout"]["total_spawns"] == 0
    # PROJECT_PLAN: task and phase status
    plan = ready.load("PROJECT_PLAN.json")
    assert [t["status"] for t in plan["phases"][0]["tasks"]] == ["completed", "completed", "skipped"]
    assert statuses(ready) == ["completed", "pending", "pending"]
    # errors.json: nothing failed
    assert ready.load("errors.json")["errors"] == []
    # events.json
    event = ready.load("events.json")["events"][-1]
    assert event["type"] == "build_finished" and "2/3 tasks completed" in event["content"]
    # pheromones.json: one automatic FEEDBACK
    auto = [s for s in ready.load("pheromones.json")["signals"] if s.get("auto") and s["type"] != "INIT"]
    assert len(auto) == 1 and auto[0]["type"] == "FEEDBACK" and auto[0]["source"] == "auto:build"
    assert auto[0]["strength"] == 0.5 and auto[0]["half_life_seconds"] == 21600
    assert out["signals_emitted"][0]["id"] == auto[0]["id"]


def test_finish_failure_records_errors_and_flags_patterns(ready):
    ready.run("build-start", 1).json
    extra = {
        t: {"error": {"category": "Import", "severity": "high", "description": f"no module in {t}", "root_cause": "missing dependency"}}
        for t in ("1.1", "1.2", "1.3")
    }
    out = ready.run("build-finish", 1, "--results", "-", input=results(ids(1), failed=("1.1", "1.2", "1.3"), **extra)).json
    assert out["phase_status"] == "failed" and out["tasks"]["failed"] == 3
    assert [f["id"] for f in out["failed_tasks"]] == ["1.1", "1.2", "1.3"]
    assert out["flagged_patterns"] == ["import"]
    assert out["next"]["command"] == "aether next --build 1"
    errors = ready.load("errors.json")
    assert [(e["category"], e["task_id"], e["phase"], e["root_cause"]) for e in errors["errors"]] == [
        ("import", t, 1, "missing dependency") for t in ("1.1", "1.2", "1.3")
    ]
    assert errors["flagged_patterns"][0]["category"] == "import"
    signals = [s for s in ready.load("pheromones.json")["signals"] if s.get("auto") and s["type"] != "INIT"]
    assert [s["type"] for s in signals] == ["FEEDBACK", "REDIRECT"]
    assert "import" in signals[1]["content"] and signals[1]["source"] == "auto:errors"
    assert ready.load("events.json")["events"][-1]["type"] == "build_failed"
    colony = state(ready)
    assert colony["spawn_outcomes"]["builder"]["beta"] == 4 and colony["spawn_outcomes"]["builder"]["failures"] == 3
    assert statuses(ready) == ["failed", "pending", "pending"]
    # the pattern is flagged once: a later failure of the same category adds no REDIRECT
    ready.run("build-start", 1, "--resume").json
    again = ready.run("build-finish", 1, "--results", "-", input=results(ids(1), failed=("1.1",), **extra)).json
    assert again["flagged_patterns"] == [] and [s["type"] for s in again["signals_emitted"]] == ["FEEDBACK"]


def test_failed_task_without_error_object_and_watcher_failure(ready):
    ready.run("build-start", 1).json
    watcher = {
        "passed": False,
        "score": 41.5,
        "checks": [{"name": "pytest", "passed": False, "detail": "2 failed"}, {"name": "imports", "passed": True}],
        "summary": "tests fail",
    }
    out = ready.run("build-finish", 1, "--results", "-", input=results(ids(1), failed=("1.2",), watcher=watcher)).json
    assert out["phase_status"] == "failed" and "score 41.5" in out["text"] and "1/2 checks" in out["text"]
    errors = ready.load("errors.json")["errors"]
    assert [(e["category"], e["severity"], e["task_id"]) for e in errors] == [
        ("task_failure", "high", "1.2"),
        ("verification", "high", None),
    ]
    assert errors[0]["description"] == "1.2 failed" and "pytest" in errors[1]["description"]


def test_watcher_rejection_alone_fails_the_phase(ready):
    ready.run("build-start", 1).json
    out = finish(ready, 1, watcher={"passed": False, "summary": "does not start"}).json
    assert out["phase_status"] == "failed" and out["tasks"]["failed"] == 0
    assert "what the watcher rejected" in out["next"]["reason"]


def test_spawn_outcomes_from_spawn_tree(ready):
    ready.run("build-start", 1).json
    colony = state(ready)
    colony["spawn_tree"] = {
        "phase": 1,
        "status": "running",
        "max_depth": 3,
        "waves": [["b1", "s1"]],
        "spawn_requests": [],
        "nodes": {
            "b1": {
                "id": "b1",
                "caste": "builder",
                "tasks": ["1.1"],
                "depth": 1,
                "parent": None,
                "children": ["s1"],
                "status": "completed",
                "wave": 1,
                "role": "worker",
            },
            "s1": {
                "id": "s1",
                "caste": "scout",
                "tasks": [],
                "depth": 2,
                "parent": "b1",
                "children": [],
                "status": "failed",
                "wave": 1,
                "role": "sub_spawn",
            },
            "w1": {
                "id": "w1",
                "caste": "watcher",
                "tasks": [],
                "depth": 1,
                "parent": None,
                "children": [],
                "status": "running",
                "wave": 1,
                "role": "reviewer",
            },
        },
    }
    ready.write("COLONY_STATE.json", colony)
    out = finish(ready, 1).json
    assert out["spawn_outcomes"] == {"builder": {"successes": 1, "failures": 0}, "scout": {"successes": 0, "failures": 1}}
    colony = state(ready)
    assert colony["spawn_tree"]["status"] == "finished" and colony["spawn_tree"]["nodes"]["b1"]["caste"] == "builder"
    assert colony["spawn_outcomes"]["builder"]["total_spawns"] == 1  # tree wins over task castes
    assert colony["spawn_outcomes"]["scout"] == {"alpha": 1, "beta": 2, "total_spawns": 1, "successes": 0, "failures": 1}
    assert colony["spawn_outcomes"]["watcher"]["total_spawns"] == 0


def test_finish_only_needs_tasks_not_yet_completed(ready):
    ready.run("build-start", 1).json
    finish(ready, 1, failed=("1.3",)).json
    ready.run("build-start", 1, "--resume").json
    out = ready.run("build-finish", 1, "--results", "-", input=results(["1.3"])).json
    assert out["phase_status"] == "completed" and out["tasks"]["completed"] == 3


@pytest.mark.parametrize(
    "doc,path,words",
    [
        ({"tasks": "all"}, "tasks", "not an array"),
        ([], "$", "JSON object"),
        ({"tasks": [], "watcher": WATCHER_OK}, "tasks", "no outcome for tasks 1.1, 1.2, 1.3"),
        ({"tasks": [{"id": "1.1", "status": "done"}]}, "tasks[0].status", "'done'"),
        ({"tasks": [{"id": "2.1", "status": "completed"}]}, "tasks[0].id", "phase 1 has no task '2.1'"),
        ({"tasks": [{"id": 1.1, "status": "completed"}]}, "tasks[0].id", "string"),
        ({"tasks": [{"id": "1.1", "status": "completed"}] * 2}, "tasks[1].id", "also reported by tasks[0]"),
        ({"tasks": [{"id": "1.1", "status": "completed", "caste": "queen"}]}, "tasks[0].caste", "unknown caste"),
        ({"tasks": [{"id": "1.1", "status": "completed", "files_created": "a.py"}]}, "tasks[0].files_created", "list"),
        ({"tasks": [{"id": "1.1", "status": "completed", "files_created": [""]}]}, "tasks[0].files_created[0]", "path"),
        ({"tasks": [{"id": "1.1", "status": "completed", "summary": 5}]}, "tasks[0].summary", "string"),
        (
            {"tasks": [{"id": "1.1", "status": "failed", "error": {"severity": "apocalyptic"}}]},
            "tasks[0].error.severity",
            "unknown severity",
        ),
        ({"tasks": [{"id": "1.1", "status": "failed", "error": {"category": "x" * 100}}]}, "tasks[0].error.category", "limit"),
        ({"tasks": [{"id": "1.1", "status": "failed", "error": "boom"}]}, "tasks[0].error", "must be an object"),
        ({"tasks": []}, "watcher", "is missing"),
        ({"tasks": [], "watcher": "passed"}, "watcher", "must be an object"),
        ({"tasks": [], "watcher": {"passed": 1}}, "watcher.passed", "true or false"),
        ({"tasks": [], "watcher": {"passed": True, "score": 101}}, "watcher.score", "0 to 100"),
        ({"tasks": [], "watcher": {"passed": True, "checks": [{"passed": True}]}}, "watcher.checks[0].name", "non-empty"),
        ({"tasks": [], "watcher": {"passed": True, "checks": {}}}, "watcher.checks", "must be a list"),
    ],
)
def test_invalid_results_report_each_defect(ready, doc, path, words):
    ready.run("build-start", 1).json
    before = snapshot(ready)
    err = ready.run("build-finish", 1, "--results", "-", input=json.dumps(doc)).error
    assert err["code"] == "invalid_results"
    assert any(d["path"] == path and words in d["problem"] for d in err["defects"]), err["defects"]
    assert snapshot(ready) == before  # nothing written


@pytest.mark.parametrize("number", ["NaN", "Infinity"])
def test_a_non_finite_watcher_score_is_refused(ready, number):
    ready.run("build-start", 1).json
    before = snapshot(ready)
    err = ready.run("build-finish", 1, "--results", "-", input='{"tasks": [], "watcher": {"passed": true, "score": %s}}' % number).error
    assert err["code"] == "invalid_json"
    assert snapshot(ready) == before  # nothing written


def test_results_garbage_and_mismatch(ready):
    ready.run("build-start", 1).json
    assert ready.run("build-finish", 1, "--results", "-", input="{oops").error["code"] == "invalid_json"
    assert ready.run("build-finish", 2, "--results", "-", input=results(ids(2))).error["code"] == "phase_mismatch"
    # without --results the tasks come from the spawn tree, and this build has none yet
    assert ready.run("build-finish", 1).error["code"] == "results_need_tasks"


def test_lightweight_needs_no_watcher_and_emits_feedback_only(project):
    project.run("colony-init", "small tool", "--mode", "LIGHTWEIGHT").json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=2))).json
    project.run("build-start", 1).json
    extra = {t: {"error": {"category": "syntax"}} for t in ids(1)}
    out = project.run("build-finish", 1, "--results", "-", input=results(ids(1), failed=tuple(ids(1)), watcher=None, **extra)).json
    assert out["flagged_patterns"] == ["syntax"]
    assert [s["type"] for s in out["signals_emitted"]] == ["FEEDBACK"]  # no REDIRECT in LIGHTWEIGHT
    assert out["watcher"] is None and "not run" in out["text"]


def test_full_mode_focuses_each_phase_entered(project):
    project.run("colony-init", "big system", "--mode", "FULL").json
    project.run("plan-load", "-", input=json.dumps(make_plan(phases=4))).json
    out = project.run("build-start", 1).json
    assert [s["type"] for s in out["signals_emitted"]] == ["FOCUS"]
    assert out["signals_emitted"][0]["content"].startswith("Phase 1: Phase 1 name")
    finish(project, 1).json
    adv = project.run("phase-advance").json
    assert adv["signals_emitted"][0]["type"] == "FOCUS" and "Phase 2" in adv["signals_emitted"][0]["content"]
    types = [s["type"] for s in project.load("pheromones.json")["signals"] if s.get("auto")]
    assert types == ["INIT", "FOCUS", "FEEDBACK", "FOCUS"]


# ---------------------------------------------------------------- phase-advance


def test_advance_through_to_completed(ready):
    for phase in (1, 2, 3):
        ready.run("build-start", phase).json
        finish(ready, phase).json
        out = ready.run("phase-advance").json
        if phase < 3:
            assert (out["from"], out["to"], out["state"]) == (phase, phase + 1, "READY")
            assert out["next"]["command"] == f"aether next --build {phase + 1}"
        else:
            assert out["to"] is None and out["state"] == "COMPLETED"
    colony = state(ready)
    assert colony["state"] == "COMPLETED" and colony["current_phase"] == 3
    assert ready.load("events.json")["events"][-1]["type"] == "colony_completed"
    assert ready.run("phase-advance").error["code"] == "invalid_transition"


def test_advance_from_zero_enters_first_phase(ready):
    out = ready.run("phase-advance").json
    assert (out["from"], out["to"]) == (0, 1)
    assert ready.run("phase-advance").error["code"] == "phase_not_completed"
    assert ready.run("build-start", 1).json["phase"]["id"] == 1


def test_advance_library_is_the_only_forward_move():
    from aether.core.exceptions import AetherError
    from aether.steps import phase_advance

    plan = make_plan()
    colony = {"state": "READY", "current_phase": 0}
    assert phase_advance.advance(colony, plan)["id"] == 1 and colony["current_phase"] == 1
    with pytest.raises(AetherError) as exc:
        phase_advance.advance(colony, plan)
    assert exc.value.code == "phase_not_completed" and colony["current_phase"] == 1
    plan["phases"][0]["status"] = "completed"
    plan["phases"][1]["status"] = "completed"  # e.g. kept by a forced re-plan
    assert phase_advance.advance(colony, plan)["id"] == 3
    plan["phases"][2]["status"] = "completed"
    assert phase_advance.advance(colony, plan) is None and colony["state"] == "COMPLETED"


# ---------------------------------------------------------------- property: no skipped phase


# "cur"/"next" aim at the current phase (or the one after) so that runs get far into the plan;
# the kinds are weighted towards building.
OPS = st.tuples(
    st.sampled_from(["step"] * 6 + ["start"] * 2 + ["finish"] * 2 + ["advance"] * 2 + ["abort", "plan-start", "plan-load"]),
    st.sampled_from(["cur", "cur", "cur", "next", 0, 1, 2, 3, 4]),
    st.booleans(),  # --resume / --force
    st.sampled_from(["ok", "ok", "ok", "task_failed", "watcher_failed"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(OPS, min_size=8, max_size=30))
def test_no_sequence_skips_a_phase(project, ops):
    shutil.rmtree(project.data, ignore_errors=True)
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    completed_by_finish = set()
    for kind, pick, flag, outcome in ops:
        current = state(project)["current_phase"] or 1
        phase = {"cur": current, "next": current + 1}.get(pick, pick)
        if kind == "step":  # what a Queen would do: the next step status names, or finish the build
            if state(project)["state"] == "EXECUTING":
                kind = "finish"
            else:
                words = project.run("status", "--json").json["next"]["command"].split()[1:]
                kind = {"build-start": "start", "phase-advance": "advance"}.get(words[0], "plan-load")
                if kind == "start":
                    phase, flag = int(words[1]), "--resume" in words
        if kind == "start":
            out = project.run("build-start", phase, *(["--resume"] if flag else []))
        elif kind == "finish":
            failed = tuple(ids(phase)[:1]) if outcome == "task_failed" else ()
            watcher = dict(WATCHER_OK, passed=outcome != "watcher_failed")
            tasks = ids(phase) if 1 <= phase <= 3 else ["9.9"]
            out = project.run("build-finish", phase, "--results", "-", input=results(tasks, failed=failed, watcher=watcher))
        elif kind == "abort":
            out = project.run("build-abort", phase, "--reason", "property test")
        elif kind == "advance":
            out = project.run("phase-advance")
        elif kind == "plan-start":
            out = project.run("plan-start")
        else:
            out = project.run("plan-load", "-", *(["--force"] if flag else []), input=json.dumps(make_plan()))
        assert out.code in (0, 1, 2), out.stderr  # never an internal error
        if out.code == 0 and kind == "finish" and outcome == "ok":
            completed_by_finish.add(phase)
        colony = state(project)
        plan = project.load("PROJECT_PLAN.json")
        phase_status = {p["id"]: p["status"] for p in plan["phases"]}
        running = [pid for pid, s in phase_status.items() if s == "in_progress"]
        assert len(running) <= 1
        assert (colony["state"] == "EXECUTING") == bool(running)
        if running:
            assert running == [colony["current_phase"]]
        for pid, s in phase_status.items():
            if s != "pending":  # started at some point: every earlier phase is completed
                assert all(phase_status[e] == "completed" for e in phase_status if e < pid), phase_status
            if s == "completed":
                assert pid in completed_by_finish
        assert colony["current_phase"] in (0, *phase_status)
        if colony["current_phase"]:
            assert all(phase_status[e] == "completed" for e in phase_status if e < colony["current_phase"])
        if colony["state"] == "COMPLETED":
            assert set(phase_status.values()) == {"completed"}
    event(f"phases completed: {sum(s == 'completed' for s in phase_status.values())}")


def test_only_the_phase_pointer_writes_current_phase():
    """The design's rule: one place moves current_phase (phase_advance.advance, phase_advance.rewind)."""
    import pathlib
    import re

    package = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "aether"
    writers = {p.name for p in package.rglob("*.py") if re.search(r"\[\s*[\"']current_phase[\"']\s*\]\s*=[^=]", p.read_text())}
    assert writers == {"phase_advance.py"}
