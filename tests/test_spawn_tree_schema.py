"""A hand-damaged spawn tree (or a non-finite number anywhere) is `state_corrupt` naming the newest
valid backup — for validate-state and for every command that reads it — never a crash.

Each damage below once passed the schema and then crashed a command (an internal error)."""

from __future__ import annotations

import copy
import json
import time

import pytest

from aether.state import schemas

from helpers.colony import flat_plan, plan_waves, worker

# (path into COLONY_STATE.spawn_tree, damaged value, words the problem names)
DAMAGE = [
    (("max_workers",), None, "max_workers"),
    (("workers_per_wave",), "x", "workers_per_wave"),
    (("workers_per_wave",), 2.5, "workers_per_wave"),
    (("seq",), "x", "seq"),
    (("seq",), -1, "seq"),
    (("waves", 0), None, "waves[0]"),
    (("waves", 0), "x", "waves[0]"),
    (("waves", 0, 0), None, "waves[0]"),
    (("waves", 0, 0), [], "waves[0]"),
    (("waves", 0, 0), "w9", "names a node the tree does not have"),
    (("nodes", "w1", "id"), None, "nodes.w1.id"),
    (("nodes", "w1", "id"), "w2", "nodes.w1.id"),
    (("nodes", "w1", "tasks"), [1.1], "nodes.w1.tasks"),
    (("nodes", "w1", "writes"), None, "nodes.w1.writes"),
    (("nodes", "w1", "writes"), [None], "nodes.w1.writes"),
    (("nodes", "w1", "reads"), "src/db.py", "nodes.w1.reads"),
    (("nodes", "w1", "depends_on"), {}, "nodes.w1.depends_on"),
    (("nodes", "w1", "children"), [7], "nodes.w1.children"),
    (("nodes", "w1", "started_epoch"), "yesterday", "nodes.w1.started_epoch"),
    (("nodes", "w1", "failure"), {"task": "1.1"}, "nodes.w1.failure"),
    (("nodes", "w1", "request"), "help", "nodes.w1.request"),
    (("reviews",), [], "reviews"),
    (("reviews",), {"1": "x"}, "reviews.1"),
    (("rebuilds",), {"1": "x"}, "rebuilds.1"),
    (("counters",), {"w": "x"}, "counters.w"),
    (("conflicts",), [], "conflicts"),
    (("approval",), "x", "approval"),
    (("approval", "revision"), "x", "approval.revision"),
    (("merges",), "x", "merges"),
    (("merges",), [{"into": 1, "merged": [], "files": [], "tasks": []}], "merges[0].into"),
    (("spawn_requests",), [{"parent": "w1", "status": "queued"}], "spawn_requests[0]"),
    (("failed_tasks",), [], "failed_tasks"),
    (("aborted_waves",), ["x"], "aborted_waves"),
    (("status",), "paused", "status"),
    (("mode",), [], "mode"),
]
COMMANDS = [
    ["spawn-check"],
    ["status", "--json"],
    ["review-needed", 1],
    ["wave-conflicts", 1],
    ["plan-waves", "--approve"],
    ["spawn-start", "w2"],
    ["continue-start"],
]


@pytest.fixture
def building(project):
    """A build of phase 1 with its waves planned and w1 running (two good writes: two backups)."""
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(flat_plan(3, phases=2))).json
    project.run("build-start", 1).json
    plan_waves(project, [worker("a", ["1.1", "1.2"], writes=["pkg/a.py"]), worker("b", ["1.3"], writes=["README.md"])])
    project.run("spawn-start", "w1").json
    return project


def damage(project, path, value) -> None:
    colony = project.load("COLONY_STATE.json")
    target = colony["spawn_tree"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    project.write("COLONY_STATE.json", colony)


@pytest.mark.parametrize("path,value,words", DAMAGE, ids=[".".join(map(str, d[0])) + "=" + repr(d[1]) for d in DAMAGE])
def test_a_damaged_spawn_tree_is_corrupt_state_never_a_crash(building, path, value, words):
    damage(building, path, value)
    before = building.file("COLONY_STATE.json").read_bytes()
    report = building.run("validate-state", "colony").json
    assert report["pass"] is False and report["backup"].endswith("COLONY_STATE.json.1")
    assert any(words in c.get("detail", c.get("message", json.dumps(c))) for c in report["checks"] if not c["pass"]), report["checks"]
    for args in COMMANDS:
        err = building.run(*args).error
        assert err["code"] == "state_corrupt" and "aether state-restore colony" in err["error"], (args, err)
        assert err["backup"].endswith("COLONY_STATE.json.1")
    assert building.file("COLONY_STATE.json").read_bytes() == before  # never overwritten
    building.run("state-restore", "colony").json  # the version before w1 started
    assert building.run("validate-state", "colony").json["pass"] is True
    assert building.run("spawn-check").json["pass"] is True


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_corrupt_state(building, value):
    raw = building.file("pheromones.json").read_text()
    data = json.loads(raw)
    assert data["signals"], "build-start emitted no signal to damage"
    data["signals"][0]["strength"] = 0.5
    text = json.dumps(data).replace("0.5", value, 1)
    building.file("pheromones.json").write_text(text)
    for args in (["status", "--json"], ["spawn-start", "w2"], ["pheromone-render", "--json"]):
        assert building.run(*args).error["code"] == "state_corrupt", args
    tree = copy.deepcopy(building.load("COLONY_STATE.json"))
    tree["spawn_outcomes"]["builder"]["alpha"] = float("inf")
    problems = schemas.FILES["colony"].validate(tree)
    assert problems == ["COLONY_STATE.spawn_outcomes.builder.alpha must be integer or number, found inf"]


def test_every_node_field_the_code_writes_passes_the_check(building):
    """A tree grown by the real commands (retry, sub-spawn, rerun, reviewer, rebuild) stays valid."""
    run = building.run
    (building.root / "pkg").mkdir()
    (building.root / "pkg" / "a.py").write_text("x = 1\n")
    answer = (
        '```json\n{"status": "completed", "files_created": ["pkg/a.py"]}\n```\n--- SPAWN REQUEST ---\n'
        "caste: scout\nreason: need the API docs\nblocking: true\n--- END SPAWN REQUEST ---\n"
    )
    run("spawn-finish", "w1", "-", input=answer).json
    run("spawn-requests", "w1", "-", input=answer).json
    run("spawn-start", "w2").json
    run(
        "spawn-finish",
        "w2",
        "-",
        input=json.dumps(
            {
                "status": "failed",
                "failure": {"task": "1.3", "error": "boom", "confidence": 95, "fix_scope": "contained", "files": ["README.md"]},
            }
        ),
    ).json
    run("failure-decide", "--worker", "w2").json
    for node in ("s1", "x1", "r1"):
        run("spawn-start", node).json
        run("spawn-finish", node, "-", input='{"status": "completed"}').json
    run("review-needed", 1).json
    run("spawn-start", "v1").json
    run("review-decide", 1, "-", input=json.dumps({"findings": [{"severity": "CRITICAL", "description": "x"}]})).json
    tree = building.load("COLONY_STATE.json")["spawn_tree"]
    assert {n["role"] for n in tree["nodes"].values()} == {"worker", "sub_spawn", "rerun", "retry", "reviewer", "rebuild"}
    assert building.run("validate-state", "colony").json["pass"] is True


def test_validation_of_a_large_tree_stays_cheap():
    """Validation runs on every read of COLONY_STATE: 500 nodes (the plan's worker cap) in a few ms."""
    nodes = {}
    for i in range(500):
        nodes[f"w{i}"] = {
            "id": f"w{i}",
            "caste": "builder",
            "tasks": [f"1.{i}"],
            "depth": 1,
            "parent": None,
            "children": [],
            "status": "completed",
            "wave": 1 + i // 5,
            "role": "worker",
            "writes": [f"src/m{i}.py"],
            "reads": [],
            "depends_on": [],
            "merged_from": [],
            "started_at": "2026-02-04T10:00:00Z",
            "started_epoch": 1770199200.5,
            "finished_at": "2026-02-04T10:00:00Z",
            "seq": i,
            "summary": "done",
            "files_created": [f"src/m{i}.py"],
            "files_modified": [],
        }
    colony = schemas.FILES["colony"].default()
    colony["spawn_tree"] = {
        "id": "b",
        "phase": 1,
        "status": "running",
        "max_depth": 3,
        "max_workers": 5,
        "workers_per_wave": 5,
        "waves": [[f"w{j}" for j in range(i, i + 5)] for i in range(0, 500, 5)],
        "nodes": nodes,
        "spawn_requests": [],
        "seq": 500,
        "counters": {"w": 500},
    }
    assert schemas.FILES["colony"].validate(colony) == []
    best = min(_timed(lambda: schemas.FILES["colony"].validate(colony)) for _ in range(5))
    assert best < 0.025, f"{best * 1000:.1f} ms"


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
