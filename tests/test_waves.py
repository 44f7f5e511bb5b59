"""plan-waves (merging, ordering, mode limits, approval), the delegation tree, wave-conflicts."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aether.rules import modes
from aether.rules import waves as waves_rules

from helpers.colony import flat_plan, plan_waves, run_worker, start_build, tree, worker


@pytest.fixture
def building(project):
    return start_build(project)


# ---------------------------------------------------------------- merging


def test_same_file_writers_merge_into_the_worker_with_most_references(building):
    result = plan_waves(
        building,
        [
            worker("a", ["1.1"], writes=["src/models.py"]),
            worker("b", ["1.2"], writes=["src/models.py", "src/api.py"], reads=["README.md"], caste="scout"),
            worker("c", ["1.3"], writes=["src/cli.py"]),
        ],
    )
    assert [[w["plan_id"] for w in wave["workers"]] for wave in result["waves"]] == [["b", "c"]]
    merged = result["waves"][0]["workers"][0]
    assert merged["tasks"] == ["1.2", "1.1"]
    assert merged["caste"] == "builder"  # castes differed: the merged worker builds
    assert merged["writes"] == ["src/models.py", "src/api.py"]
    assert result["merges"] == [
        {"into": merged["id"], "merged": ["a"], "files": ["src/models.py"], "tasks": ["1.2", "1.1"], "caste": "builder"}
    ]
    assert "Merged a into w1 (same file: src/models.py)" in result["text"]


def test_merges_are_transitive_and_reads_do_not_merge(building):
    result = plan_waves(
        building,
        [
            worker("a", ["1.1"], writes=["x.py"]),
            worker("b", ["1.2"], writes=["x.py", "y.py"]),
            worker("c", ["1.3"], writes=["y.py"]),
            worker("d", ["1.4"], writes=["z.py"], reads=["x.py"]),
        ],
    )
    ids = [[w["plan_id"] for w in wave["workers"]] for wave in result["waves"]]
    assert ids == [["b", "d"]]
    assert sorted(result["waves"][0]["workers"][0]["tasks"]) == ["1.1", "1.2", "1.3"]
    assert result["shared_files"] == ["x.py"]  # d reads what b writes: shared, not merged


def test_same_caste_merge_keeps_its_caste_and_paths_are_normalised(building):
    result = plan_waves(
        building,
        [
            worker("a", ["1.1"], writes=["./src//a.py"], caste="architect"),
            worker("b", ["1.2"], writes=["src/a.py"], caste="architect"),
        ],
    )
    only = result["waves"][0]["workers"]
    assert len(only) == 1 and only[0]["caste"] == "architect" and only[0]["writes"] == ["src/a.py"]


def test_writers_of_one_file_in_different_waves_stay_apart(building):
    result = plan_waves(
        building,
        [
            worker("a", ["1.1"], writes=["x.py"]),
            worker("b", ["1.2"], writes=["x.py"], depends_on=["a"]),
        ],
    )
    assert [[w["plan_id"] for w in wave["workers"]] for wave in result["waves"]] == [["a"], ["b"]]
    assert result["merges"] == []


# ---------------------------------------------------------------- ordering


def test_dependencies_from_the_plan_and_explicit_ones_become_wave_order(project):
    start_build(project, plan=flat_plan(4, deps={"1.3": ["1.1"]}))
    result = plan_waves(
        project,
        [
            worker("a", ["1.1"], writes=["a.py"]),
            worker("b", ["1.2"], writes=["b.py"], depends_on=["c"]),
            worker("c", ["1.3"], writes=["c.py"]),
            worker("d", ["1.4"], writes=["d.py"]),
        ],
    )
    order = [[w["plan_id"] for w in wave["workers"]] for wave in result["waves"]]
    assert order == [["a", "d"], ["c"], ["b"]]
    by_plan = {w["plan_id"]: w for wave in result["waves"] for w in wave["workers"]}
    assert by_plan["c"]["depends_on"] == [by_plan["a"]["id"]]


def test_a_dependency_cycle_is_an_error_and_writes_nothing(building):
    before = building.load("COLONY_STATE.json")
    err = building.run(
        "plan-waves",
        "-",
        input=json.dumps(
            {
                "workers": [
                    worker("a", ["1.1"], depends_on=["c"]),
                    worker("b", ["1.2"], depends_on=["a"]),
                    worker("c", ["1.3"], depends_on=["b"]),
                ]
            }
        ),
    ).error
    assert err["code"] == "dependency_cycle"
    assert "a → c → b → a" in err["error"]  # a needs c, c needs b, b needs a
    assert building.load("COLONY_STATE.json") == before


@pytest.mark.parametrize("mode", ["LIGHTWEIGHT", "STANDARD", "FULL"])
def test_workers_per_wave_follow_the_mode(project, mode):
    start_build(project, mode=mode, tasks=11)
    result = plan_waves(project, [worker(f"w{i}", [f"1.{i}"], writes=[f"f{i}.py"]) for i in range(1, 12)])
    cap = min(modes.profile(mode)["workers_per_wave"], modes.profile(mode)["spawn_limits"]["max_workers"])
    sizes = [len(w["workers"]) for w in result["waves"]]
    assert max(sizes) == cap and sum(sizes) == 11
    assert result["limits"]["workers_per_wave"] == cap


# ---------------------------------------------------------------- approval


def test_lightweight_auto_approves(project):
    start_build(project, mode="LIGHTWEIGHT", tasks=8)
    result = plan_waves(
        project, [worker(f"w{i}", [f"1.{i}"], writes=["same.py" if i < 3 else f"{i}.py"]) for i in range(1, 9)], approve=False
    )
    assert result["approval"]["required"] is False and result["status"] == "approved"
    assert result["approval"]["approved_by"] == "auto:LIGHTWEIGHT"


@pytest.mark.parametrize(
    "workers,required",
    [
        ([worker("a", ["1.1", "1.2"], writes=["a.py"]), worker("b", ["1.3", "1.4"], writes=["b.py"])], False),
        ([worker("a", ["1.1", "1.2", "1.3"], writes=["a.py"]), worker("b", ["1.4", "1.5"], writes=["b.py"])], True),  # 5 tasks
        ([worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"]), worker("c", ["1.3"])], True),  # 3 workers
        ([worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], reads=["a.py"])], True),  # a shared file
        (
            [worker("a", ["1.1"]), worker("b", ["1.2"], depends_on=["a"]), worker("c", ["1.3"], writes=["c.py"], depends_on=["b"])],
            True,
        ),  # 3 waves
        (
            [worker("a", ["1.1"], writes=["x.py"]), worker("b", ["1.2"], writes=["x.py"]), worker("c", ["1.3"])],
            False,
        ),  # merged first: 2 workers
    ],
)
def test_standard_approval_is_judged_after_merging(building, workers, required):
    result = plan_waves(building, workers, approve=False)
    assert result["approval"]["required"] is required, result["approval"]
    assert result["status"] == ("awaiting_approval" if required else "approved")


def test_full_always_asks_and_tracks_revisions(project):
    start_build(project, mode="FULL")
    small = [worker("a", ["1.1"], writes=["a.py"])]
    first = plan_waves(project, small, approve=False)
    assert first["approval"]["required"] and first["approval"]["revision"] == 0
    assert project.run("spawn-start", "w1").error["code"] == "plan_not_approved"
    for n in (1, 2, 3):
        assert plan_waves(project, small, approve=False)["approval"]["revision"] == n
    assert first["build"] == tree(project)["id"]  # a revision keeps the build
    err = project.run("plan-waves", "-", input=json.dumps({"workers": small})).error
    assert err["code"] == "revision_limit"
    approved = project.run("plan-waves", "--approve").json
    assert approved["status"] == "approved" and approved["approval"]["approved_by"] == "user"
    assert project.run("spawn-start", "w1").json["id"] == "w1"
    err = project.run("plan-waves", "-", input=json.dumps({"workers": small})).error
    assert err["code"] == "build_running"


def test_replacing_an_approved_unstarted_plan_is_no_revision(project):
    start_build(project, mode="LIGHTWEIGHT")
    plans = [plan_waves(project, [worker("a", ["1.1"], writes=["a.py"])], approve=False) for _ in range(5)]
    assert [p["approval"]["revision"] for p in plans] == [0] * 5
    assert len({p["build"] for p in plans}) == 1


def test_approve_needs_a_plan_awaiting_approval(building):
    assert building.run("plan-waves", "--approve").error["code"] == "no_spawn_tree"
    assert building.run("plan-waves").error["code"] == "usage_error"


# ---------------------------------------------------------------- bad plans


@pytest.mark.parametrize(
    "doc,code",
    [
        ("not json", "invalid_json"),
        ("[]", "invalid_plan"),
        ('{"workers": []}', "invalid_plan"),
        ('{"workers": "a"}', "invalid_plan"),
        ('{"workers": [{"caste": "queen", "tasks": ["1.1"]}]}', "invalid_plan"),
        ('{"workers": [{"caste": "builder", "tasks": []}]}', "invalid_plan"),
        ('{"workers": [{"caste": "builder", "tasks": [{"id": 1}]}]}', "invalid_plan"),
        ('{"workers": [{"caste": "builder", "tasks": ["1.1"], "writes": [1.5, {"x": 1}]}]}', "invalid_report"),
        ('{"workers": [{"caste": "builder", "tasks": ["1.1"]}, {"caste": "scout", "tasks": ["1.1"]}]}', "task_assigned_twice"),
        ('{"workers": [{"caste": "builder", "tasks": ["9.9"]}]}', "unknown_task"),
        ('{"workers": [{"caste": "builder", "tasks": ["1.1"], "depends_on": ["ghost"]}]}', "unknown_dependency"),
        (
            '{"workers": [{"id": "a", "caste": "builder", "tasks": ["1.1"]}, {"id": "a", "caste": "builder", "tasks": ["1.2"]}]}',
            "invalid_plan",
        ),
        ('{"phase": 2, "workers": [{"caste": "builder", "tasks": ["2.1"]}]}', "wrong_phase"),
        ('{"phase": true, "workers": [{"caste": "builder", "tasks": ["1.1"]}]}', "invalid_plan"),
    ],
)
def test_bad_plans_are_refused_with_a_precise_code(building, doc, code):
    err = building.run("plan-waves", "-", input=doc).error
    assert err["code"] == code, err
    assert tree(building) is None


def test_plan_waves_runs_only_during_a_build(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(flat_plan())).json
    err = project.run("plan-waves", "-", input=json.dumps({"workers": [worker("a", ["1.1"])]})).error
    assert err["code"] == "not_building"


def test_model_output_with_a_fenced_plan_and_unicode_paths(building):
    text = 'Here is the plan:\n```json\n{"workers": [{"caste": "Builder", "tasks": ["1.1"], "writes": ["src/ünï côde.py"]}]}\n```\n'
    result = building.run("plan-waves", "-", input=text).json
    assert result["waves"][0]["workers"][0]["writes"] == ["src/ünï côde.py"]


def test_delegation_tree_text(building):
    text = building.run(
        "plan-waves",
        "--text",
        "-",
        input=json.dumps({"workers": [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], depends_on=["a"])]}),
    ).stdout
    assert text.splitlines()[0].startswith("Phase 1 spawn tree — STANDARD, 2 workers in 2 waves")
    assert "├─ Wave 1" in text and "└─ Wave 2" in text
    assert "w1 builder [planned] · tasks 1.1 · writes a.py" in text
    assert "w2 builder [planned] · tasks 1.2 · after w1" in text


# ---------------------------------------------------------------- wave-conflicts


def test_wave_conflicts_reports_files_two_workers_touched(building):
    plan_waves(
        building, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"]), worker("c", ["1.3"], writes=["c.py"])]
    )
    run_worker(building, "w1", created=["a.py"], modified=["shared.py"])
    run_worker(building, "w2", created=["b.py"], modified=["shared.py"])
    run_worker(building, "w3", created=["c.py"])
    result = building.run("wave-conflicts", 1).json
    assert result["conflicts"] == [{"file": "shared.py", "workers": ["w1", "w2"]}] and not result["clean"]
    assert tree(building)["conflicts"]["1"] == result["conflicts"]
    assert building.run("wave-conflicts", 2).error["code"] == "unknown_wave"


def test_a_retry_touching_its_own_file_is_no_conflict(building):
    plan_waves(building, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"])])
    run_worker(
        building, "w1", "failed", failure={"task": "1.1", "error": "boom", "confidence": 95, "fix_scope": "contained", "files": ["a.py"]}
    )
    run_worker(building, "w2", created=["b.py"])
    assert building.run("failure-decide", "--worker", "w1").json["action"] == "retry"
    run_worker(building, "r1", modified=["a.py"])
    (building.root / "a.py").write_text("again")
    assert building.run("wave-conflicts", 1).json["clean"] is True


# ---------------------------------------------------------------- properties


@st.composite
def assignment_plans(draw):
    n = draw(st.integers(1, 14))
    files = [f"f{i}.py" for i in range(draw(st.integers(1, 8)))]
    workers = []
    for i in range(n):
        deps = draw(st.lists(st.sampled_from([f"w{j}" for j in range(i)]), max_size=2)) if i else []
        workers.append(
            {
                "id": f"w{i}",
                "caste": draw(st.sampled_from(["builder", "scout", "architect"])),
                "tasks": [f"1.{i}"],
                "writes": draw(st.lists(st.sampled_from(files), max_size=3)),
                "reads": draw(st.lists(st.sampled_from(files), max_size=2)),
                "depends_on": deps,
            }
        )
    order = draw(st.permutations(workers))
    return list(order), draw(st.sampled_from(list(modes.PROFILES)))


@settings(max_examples=300, deadline=None)
@given(assignment_plans())
def test_wave_plans_never_put_two_writers_of_a_file_in_one_wave(case):
    raw, mode = case
    workers, _, _ = waves_rules.read_plan({"workers": raw}, None)
    prof = modes.profile(mode)
    cap = min(prof["workers_per_wave"], prof["spawn_limits"]["max_workers"])
    planned, _ = waves_rules.schedule(workers, cap)
    wave_of = {}
    seen_tasks = []
    for number, wave in enumerate(planned):
        assert 1 <= len(wave) <= cap
        writes = [p for w in wave for p in w["writes"]]
        assert len(writes) == len(set(writes)), wave  # no file written by two workers of a wave
        for w in wave:
            seen_tasks += w["tasks"]
            for label in [w["label"]] + w.get("merged_from", []):
                wave_of[label] = number
    assert sorted(seen_tasks) == sorted(t for w in raw for t in w["tasks"])  # every task exactly once
    for w in raw:
        for dep in w["depends_on"]:
            assert wave_of[dep] < wave_of[w["id"]]  # a dependency always runs in an earlier wave
