"""Files written by Aether v4.4 (no `version`) are read, upgraded on the next write, and keep
every field and record they had."""

import copy

import pytest

CASTES = ["colonizer", "route-setter", "builder", "watcher", "scout", "architect"]

V44 = {
    "COLONY_STATE.json": {
        "goal": "Build a REST API",
        "state": "READY",
        "current_phase": 2,
        "mode": "FULL",
        "mode_set_at": "2026-02-01T09:00:00Z",
        "mode_indicators": {"source_files": 64, "max_depth": 5, "languages": ["python", "sql"]},
        "session_id": "session_1769936400_a1b2c3",
        "initialized_at": "2026-02-01T09:00:00Z",
        "workers": {c: "idle" for c in CASTES},
        "spawn_outcomes": {c: {"alpha": 3, "beta": 1, "total_spawns": 2, "successes": 2, "failures": 0} for c in CASTES},
        "spawn_tree": {},
    },
    "pheromones.json": {
        "signals": [
            {
                "id": "init_1769936400",
                "type": "INIT",
                "content": "Build a REST API",
                "strength": 1.0,
                "half_life_seconds": None,
                "created_at": "2026-02-01T09:00:00Z",
            },
            {
                "id": "focus_1769940000",
                "type": "FOCUS",
                "content": "auth endpoints first",
                "strength": 0.7,
                "half_life_seconds": 3600,
                "created_at": "2026-02-01T10:00:00Z",
                "source": "user",
                "auto": False,
            },
        ]
    },
    "PROJECT_PLAN.json": {
        "goal": "Build a REST API",
        "generated_at": "2026-02-01T09:30:00Z",
        "phases": [
            {
                "id": 1,
                "name": "Setup",
                "description": "skeleton",
                "status": "completed",
                "tasks": [{"id": "1.1", "description": "init repo", "status": "completed", "depends_on": []}],
                "success_criteria": ["server starts"],
            }
        ],
    },
    "errors.json": {
        "errors": [
            {
                "id": f"err_17699400{i}0_ab1{i}",
                "category": "runtime",
                "severity": "HIGH",
                "description": f"crash {i}",
                "root_cause": None,
                "phase": 1,
                "task_id": None,
                "timestamp": f"2026-02-01T10:0{i}:00Z",
            }
            for i in range(3)
        ],
        "flagged_patterns": [
            {
                "category": "runtime",
                "count": 3,
                "first_seen": "2026-02-01T10:00:00Z",
                "last_seen": "2026-02-01T10:02:00Z",
                "flagged_at": "2026-02-01T10:02:00Z",
                "description": "runtime errors recur",
            }
        ],
    },
    "memory.json": {
        "phase_learnings": [
            {
                "id": "learn_1769940000_aaaa",
                "phase": 1,
                "phase_name": "Setup",
                "learnings": ["keep the skeleton small"],
                "errors_encountered": 3,
                "timestamp": "2026-02-01T11:00:00Z",
            }
        ],
        "decisions": [
            {
                "id": "dec_1769940000_bbbb",
                "type": "architecture",
                "content": "Flask over Django",
                "context": "small API",
                "phase": 1,
                "timestamp": "2026-02-01T11:00:00Z",
            }
        ],
        "patterns": [{"name": "free-form pattern kept as is"}],
    },
    "events.json": {
        "events": [
            {
                "id": "evt_1769936400_cccc",
                "type": "colony_initialized",
                "source": "queen",
                "content": "Colony initialized",
                "timestamp": "2026-02-01T09:00:00Z",
            },
        ]
    },
}


@pytest.fixture
def v44(project):
    for name, content in V44.items():
        project.write(name, content)
    return project


def assert_kept(original, upgraded):
    """Every field of the original is in the upgraded file with the same value."""
    if isinstance(original, dict):
        for key, value in original.items():
            assert key in upgraded, key
            assert_kept(value, upgraded[key])
    elif isinstance(original, list):
        assert len(upgraded) >= len(original)
        for a, b in zip(original, upgraded):
            assert_kept(a, b)
    else:
        assert original == upgraded


def test_reads_do_not_rewrite_v44_files(v44):
    before = {name: v44.file(name).read_bytes() for name in V44}
    assert v44.run("error-summary").json == {"total": 3, "by_category": {"runtime": 3}, "by_severity": {"high": 3}}
    assert v44.run("error-pattern-check").json[0]["count"] == 3
    assert v44.run("query", "mode").json == "FULL"
    assert v44.run("validate-state", "all").json["pass"] is True
    assert {name: v44.file(name).read_bytes() for name in V44} == before


def test_error_add_upgrades_errors_json(v44, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-02T08:00:00Z")
    new_id = v44.run("error-add", "runtime", "low", "crash 3").json
    data = v44.load("errors.json")
    assert data["version"] == 1
    assert data["errors"][:3] == V44["errors.json"]["errors"] and data["errors"][3]["id"] == new_id
    (pattern,) = data["flagged_patterns"]
    original = V44["errors.json"]["flagged_patterns"][0]
    assert pattern.pop("count") == 4 and original["count"] == 3
    assert pattern.pop("last_seen") == "2026-02-02T08:00:00Z"
    assert pattern == {k: v for k, v in original.items() if k not in ("count", "last_seen")}


def test_memory_writes_upgrade_memory_json(v44):
    v44.run("decision-add", "Use pytest", "--type", "tooling").json
    v44.run("learning-add", 1, "another lesson", "--append").json
    v44.run("learning-add", 2, "phase two lesson").json
    data = v44.load("memory.json")
    assert data["version"] == 1
    assert data["decisions"][0] == V44["memory.json"]["decisions"][0]
    assert data["decisions"][1]["phase"] == 2  # the v4.4 colony's current phase
    assert data["patterns"] == V44["memory.json"]["patterns"]
    entry = data["phase_learnings"][0]
    original = V44["memory.json"]["phase_learnings"][0]
    assert {k: entry[k] for k in original if k != "learnings"} == {k: v for k, v in original.items() if k != "learnings"}
    assert entry["learnings"] == ["keep the skeleton small", "another lesson"]
    assert [e["phase"] for e in data["phase_learnings"]] == [1, 2]


def test_memory_compress_keeps_a_v44_file_under_its_caps_untouched(v44):
    before = v44.file("memory.json").read_bytes()
    assert v44.run("memory-compress").json["compressed"] is False
    assert v44.file("memory.json").read_bytes() == before


def test_event_add_upgrades_events_json(v44):
    event = v44.run("event-add", "phase_started", "queen", "Phase 2").json
    data = v44.load("events.json")
    assert data == {"events": V44["events.json"]["events"] + [event], "version": 1}


def test_activity_log_reads_a_v44_colony(v44):
    assert v44.run("activity-log", "SPAWN", "queen", "builder").json == "logged"


def test_pheromone_write_upgrades_pheromones_json(v44):
    v44.run("pheromone-emit", "REDIRECT", "never store plain-text passwords").json
    data = v44.load("pheromones.json")
    assert data["version"] == 1
    assert data["signals"][:2] == V44["pheromones.json"]["signals"]


@pytest.mark.parametrize("name,short", [("COLONY_STATE.json", "colony"), ("PROJECT_PLAN.json", "plan")])
def test_store_write_upgrades_colony_and_plan(v44, monkeypatch, name, short):
    from aether.core import paths
    from aether.state import store

    monkeypatch.chdir(v44.root)
    paths.project_root.cache_clear()
    paths.data_dir.cache_clear()
    store.update(short, lambda data: None)
    data = v44.load(name)
    assert data["version"] == 1
    original = copy.deepcopy(V44[name])
    if short == "colony":
        original.pop("spawn_tree")  # v4.4's empty {} is "no tree": null now
        assert data["spawn_tree"] is None
    assert_kept(original, data)
