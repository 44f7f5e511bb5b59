"""A whole phase driven through the CLI the way /ant:build drives it, then every state file checked.

colony-init → plan-load → build-start → plan-waves (a merge, approval) → wave 1: spawn-start ×2 →
spawn-finish ×2 (one failure, one SPAWN REQUEST) → spawn-requests → failure-decide → retry →
failure-decide → debugger (recovers: friction) → the scout → wave-conflicts → review-needed →
reviewer with a CRITICAL → rebuild → re-review → wave 2 (single worker: no review) →
build-finish → phase-advance.
"""

import json

from helpers.colony import PHASE_PLAN, ok, worker, write

ASSIGNMENT = {
    "phase": 1,
    "workers": [
        worker("models", ["1.1"], writes=["src/todo.py"]),
        worker("store", ["1.2"], writes=["src/todo.py", "src/store.py"], reads=["src/db.py"]),
        worker("api", ["1.3"], writes=["src/api.py"], reads=["src/todo.py"]),
        worker("cli", ["1.4"], writes=["src/cli.py"]),
    ],
}
SCOUT_REQUEST = """Both tasks done.
**SPAWN REQUEST**
- **caste**: scout
- **reason**: find how other todo apps persist ordering
- **blocking**: false
```json
{"status": "completed", "summary": "todo model and store", "files_created": ["src/todo.py", "src/store.py"]}
```"""


def finish(project, node, payload):
    return ok(project, "spawn-finish", node, "-", input=payload if isinstance(payload, str) else json.dumps(payload))


def test_a_whole_phase(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = project
    ok(p, "colony-init", "Build a todo API")
    ok(p, "plan-load", "-", input=json.dumps(PHASE_PLAN))
    started = ok(p, "build-start", 1)
    assert started["phase"]["id"] == 1 and started["mode"] == "STANDARD"

    # The Phase Lead's plan: models and store write one file → merged; cli waits for api.
    planned = ok(p, "plan-waves", "-", input=json.dumps(ASSIGNMENT))
    assert [[w["plan_id"] for w in wave["workers"]] for wave in planned["waves"]] == [["store", "api"], ["cli"]]
    assert planned["merges"][0]["merged"] == ["models"] and planned["approval"]["required"]
    assert ok(p, "plan-waves", "--approve")["approval"]["approved_by"] == "user"

    # Wave 1: start both, one message of Agent calls, then record both results.
    briefs = [ok(p, "spawn-start", node) for node in ("w1", "w2")]
    assert [b["subagent_type"] for b in briefs] == ["ant:builder", "ant:builder"]
    assert ok(p, "spawn-check")["active_workers"] == 2
    write(p, "src/todo.py", "src/store.py")
    assert finish(p, "w1", SCOUT_REQUEST)["verified"]
    failed = finish(
        p,
        "w2",
        {
            "status": "failed",
            "summary": "api tests fail",
            "failure": {
                "task": "1.3",
                "error": "AssertionError: expected 201, got 500",
                "root_cause": "missing validation",
                "suggested_fix": "validate the payload before saving",
                "confidence": 85,
                "fix_scope": "contained",
                "files": ["src/api.py"],
                "category": "logic",
                "hypotheses": [{"hypothesis": "store rejects empty titles", "result": "confirmed"}],
            },
        },
    )
    assert failed["next"] == "aether failure-decide --worker w2"
    queue = ok(p, "spawn-requests", "w1", "-", input=SCOUT_REQUEST)["queue"]
    assert [(q["id"], q["caste"], q["blocking"]) for q in queue] == [("s1", "scout", False)]

    # The failure: a retry, which fails, then a debugger, which fixes it.
    retry = ok(p, "failure-decide", "--worker", "w2")
    assert retry["action"] == "retry" and retry["next"]["spawn"] == "r1"
    assert "validate the payload before saving" in ok(p, "spawn-start", "r1")["text"]
    finish(
        p,
        "r1",
        {
            "status": "failed",
            "failure": {
                "task": "1.3",
                "error": "AssertionError: expected 201, got 422",
                "confidence": 60,
                "fix_scope": "contained",
                "files": ["src/api.py"],
            },
        },
    )
    debug = ok(p, "failure-decide", "--worker", "r1")
    assert debug["action"] == "debug" and debug["next"]["spawn"] == "d1"
    assert "Second attempt error: AssertionError: expected 201, got 422" in ok(p, "spawn-start", "d1")["text"]
    write(p, "src/api.py")
    fixed = finish(
        p,
        "d1",
        {
            "diagnosis": "status code mapped wrong",
            "fix_applied": True,
            "files_modified": ["src/api.py"],
            "verification": {"status": "pass", "details": "3 passed"},
        },
    )
    assert fixed["status"] == "completed" and fixed["friction"]["id"] == "FR-001"

    # The non-blocking scout runs after the wave's workers.
    ok(p, "spawn-start", "s1")
    finish(p, "s1", {"status": "completed", "summary": "ordering: a position column"})

    # Post-wave: conflicts, then the advisory review finds a CRITICAL → one rebuild → clean review.
    assert ok(p, "wave-conflicts", 1)["clean"]
    review = ok(p, "review-needed", 1)
    assert review["needed"] and review["reviewer"]["id"] == "v1"
    ok(p, "spawn-start", "v1")
    critical = {
        "findings": [
            {
                "severity": "CRITICAL",
                "description": "src/store.py does not import",
                "location": "src/store.py:1",
                "recommendation": "fix the import",
            }
        ],
        "summary": "import error",
    }
    decided = ok(p, "review-decide", 1, "-", input=json.dumps(critical))
    assert decided["action"] == "rebuild" and decided["rebuild"] == ["b1", "b2"]
    for node in decided["rebuild"]:
        brief = ok(p, "spawn-start", node)
        assert "src/store.py does not import" in brief["text"]
    finish(p, "b1", {"status": "completed", "files_modified": ["src/store.py"]})
    finish(p, "b2", {"status": "completed", "files_modified": ["src/api.py"]})
    again = ok(p, "review-needed", 1)
    assert again["round"] == 2 and again["reviewer"]["id"] == "v2"
    ok(p, "spawn-start", "v2")
    assert ok(p, "review-decide", 1, "-", input='{"findings": [], "summary": "clean"}')["action"] == "continue"

    # Wave 2: one worker, so no review.
    assert "1.4" in ok(p, "spawn-start", "w3")["text"]
    write(p, "src/cli.py")
    finish(p, "w3", {"status": "completed", "files_created": ["src/cli.py"]})
    assert ok(p, "wave-conflicts", 2)["clean"]
    assert ok(p, "review-needed", 2)["skip"] == "single_worker_wave"

    results = {
        "tasks": [
            {"id": t, "status": "completed", "caste": "builder", "worker_id": w, "summary": f"{t} done"}
            for t, w in (("1.1", "w1"), ("1.2", "w1"), ("1.3", "d1"), ("1.4", "w3"))
        ],
        "watcher": {"passed": True, "score": 96, "checks": [{"name": "tests", "passed": True}], "summary": "green"},
    }
    summary = ok(p, "build-finish", 1, "--results", "-", input=json.dumps(results))
    assert summary["phase_status"] == "completed"
    assert ok(p, "phase-advance")["to"] == 2

    # ---- every state file afterwards
    colony = p.load("COLONY_STATE.json")
    assert (colony["state"], colony["current_phase"], colony["version"]) == ("READY", 2, 1)
    assert set(colony["workers"].values()) == {"idle"}
    tree = colony["spawn_tree"]
    assert tree["status"] == "finished" and tree["phase"] == 1 and tree["waves"] == [["w1", "w2"], ["w3"]]
    statuses = {nid: (n["role"], n["status"]) for nid, n in tree["nodes"].items()}
    assert statuses == {
        "w1": ("worker", "completed"),
        "w2": ("worker", "failed"),
        "w3": ("worker", "completed"),
        "r1": ("retry", "failed"),
        "d1": ("debugger", "completed"),
        "s1": ("sub_spawn", "completed"),
        "v1": ("reviewer", "completed"),
        "v2": ("reviewer", "completed"),
        "b1": ("rebuild", "completed"),
        "b2": ("rebuild", "completed"),
    }
    assert tree["nodes"]["s1"]["depth"] == 2 and tree["nodes"]["w1"]["children"] == ["s1", "b1"]
    assert tree["nodes"]["d1"]["parent"] == "r1" and tree["nodes"]["b2"]["parent"] == "d1"
    assert tree["rebuilds"] == {"1": 1} and [r["action"] for r in tree["reviews"]["1"]] == ["rebuild", "continue"]
    assert tree["merges"][0]["into"] == "w1" and tree["spawn_requests"][0]["status"] == "queued"
    assert tree.get("failed_tasks", {}) == {}
    assert colony["spawn_outcomes"]["builder"]["successes"] >= 5 and colony["spawn_outcomes"]["builder"]["failures"] == 2
    assert colony["spawn_outcomes"]["scout"]["successes"] == 1 and colony["spawn_outcomes"]["watcher"]["successes"] == 2

    plan = p.load("PROJECT_PLAN.json")
    assert [ph["status"] for ph in plan["phases"]] == ["completed", "pending"]
    assert {t["status"] for t in plan["phases"][0]["tasks"]} == {"completed"}

    failures = p.load("failures.json")
    assert [(h["task"], h["worker"], h["action"]) for h in failures["history"]] == [("1.3", "w2", "retry"), ("1.3", "r1", "debug")]
    assert [(r["kind"], r["result"]) for r in failures["retry_log"]] == [("retry", "failed"), ("debugger", "recovered")]
    assert failures["retry_log"][1]["fix_applied"] == "status code mapped wrong"
    assert [(f["id"], f["task"], f["attempts"]) for f in failures["friction"]] == [("FR-001", "1.3", 3)]
    assert failures["aborts"] == []

    events = [e["type"] for e in p.load("events.json")["events"]]
    order = [
        "build_started",
        "waves_planned",
        "plan_approved",
        "spawn_started",
        "spawn_finished",
        "spawn_requests",
        "failure_decided",
        "failure_decided",
        "wave_conflicts",
        "review_planned",
        "review_decided",
        "review_decided",
        "review_skipped",
        "build_finished",
        "phase_advanced",
    ]
    position = 0
    for kind in order:
        position = events.index(kind, position) + 1  # each appears, in this order
    assert all(e["timestamp"] == "2026-02-04T10:00:00Z" for e in p.load("events.json")["events"])

    assert p.load("errors.json")["errors"] == []
    feedback = [s for s in p.load("pheromones.json")["signals"] if s["type"] == "FEEDBACK"]
    assert feedback and feedback[-1]["source"] == "auto:build"
    assert not p.file("loops.json").exists()  # STANDARD builds run no code loop unless asked
    assert ok(p, "validate-state", "all")["pass"] is True
