"""Decisions are made under the lock from the state as it is then.

A command may look at the state first (to refuse bad input early, or to do slow work such as a
syntax check or a claims check outside the lock), but every value it writes is read again inside
its locked update. Two ways to test it: real processes racing through the launcher, and a
deterministic interleaving — another command lands between a command's first look and its lock.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
from conftest import LAUNCHER

from helpers.colony import flat_plan, ok, plan_waves, run_worker, worker
from helpers.git import git, init_repo

CRITIC = "### Overall Score\n40\n\n### Key Issues\n- the plan has no tests\n"


def interleave(monkeypatch, action):
    """Run `action` once, just before the next locked update takes its locks: another process's
    write between a command's first look at the state and its update."""
    from aether.state import store

    original = store.update_many

    def patched(names, change, **kw):
        monkeypatch.setattr(store, "update_many", original)
        action()
        return original(names, change, **kw)

    monkeypatch.setattr(store, "update_many", patched)


def parallel(project, args, n, input=b""):
    """Start n `aether ARGS` processes at once (each given `input` on stdin); [(exit code, envelope)]."""
    procs = [
        subprocess.Popen(
            [str(LAUNCHER), *map(str, args)],
            cwd=project.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )
        for _ in range(n)
    ]
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(input, timeout=120)
        out.append((proc.returncode, json.loads((stdout or stderr).decode("utf-8").strip().splitlines()[-1])))
    return out


# ---------------------------------------------------------------- loop-decide


def test_parallel_loop_decides_record_the_critic_score_once(project):
    loop = ok(project, "loop-init", "plan")["loop_id"]
    ok(project, "feedback-store", loop, "-", input=CRITIC)
    results = parallel(project, ["loop-decide", loop], 6)
    assert sorted(code for code, _ in results) == [0] + [1] * 5, results
    assert {env["code"] for code, env in results if code} == {"score_missing"}
    iterations = project.load("loops.json")["loops"][0]["iterations"]
    assert [(it["iteration"], it["score"]) for it in iterations] == [(1, 40)]
    assert [e["type"] for e in project.load("events.json")["events"]].count("loop_decided") == 1


def test_parallel_code_loop_decides_make_one_checkpoint(project):
    git(project.root, "init", "-q")
    (project.root / "app.py").write_text("print('v1')\n")
    loop = ok(project, "loop-init", "code")["loop_id"]
    ok(project, "feedback-store", loop, "-", input=CRITIC)
    results = parallel(project, ["loop-decide", loop], 6)
    assert sorted(code for code, _ in results) == [0] + [1] * 5, results
    decided = next(env["result"] for code, env in results if code == 0)
    iterations = project.load("loops.json")["loops"][0]["iterations"]
    assert len(iterations) == 1 and iterations[0]["checkpoint"] == decided["checkpoint"]["ref"]
    records = project.load("checkpoints.json")["checkpoints"]
    assert [r["ref"] for r in records] == [decided["checkpoint"]["ref"]]
    assert records[0]["label"] == "code loop iteration 1 (score 40)"
    assert git(project.root, "for-each-ref", "--format=%(refname)", "refs/aether/") == decided["checkpoint"]["ref"]


def test_a_decision_landing_first_takes_the_critic_score(project, monkeypatch):
    loop = ok(project, "loop-init", "plan")["loop_id"]
    ok(project, "feedback-store", loop, "-", input=CRITIC)
    interleave(monkeypatch, lambda: ok(project, "loop-decide", loop))
    err = project.run("loop-decide", loop).error
    assert err["code"] == "score_missing" and "iteration 2" in err["error"]
    assert [it["score"] for it in project.load("loops.json")["loops"][0]["iterations"]] == [40]


# ---------------------------------------------------------------- spawn-finish


def test_claims_are_checked_against_the_start_the_lock_finds(project, monkeypatch):
    init_repo(project.root, {"old.py": "x = 1\n"}, "old")
    hour_ago = time.time() - 3600
    os.utime(project.root / "old.py", (hour_ago, hour_ago))
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-load", "-", input=flat_plan(3, phases=2))
    ok(project, "build-start", 1)
    plan_waves(project, [worker("a", ["1.1"], writes=["old.py"]), worker("b", ["1.2"], writes=["b.py"])])
    # w1 starts between spawn-finish's first look (w1 planned, no start time) and its lock
    interleave(monkeypatch, lambda: ok(project, "spawn-start", "w1"))
    out = ok(project, "spawn-finish", "w1", "-", input={"status": "completed", "files_modified": ["old.py"]})
    assert out["status"] == "failed" and out["unverified"] == [{"path": "old.py", "problem": "unchanged"}]


def test_a_finish_racing_a_finish_records_once(project):
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-load", "-", input=flat_plan(3, phases=2))
    ok(project, "build-start", 1)
    plan_waves(project, [worker("a", ["1.1"]), worker("b", ["1.2"])])
    ok(project, "spawn-start", "w1")
    results = parallel(project, ["spawn-finish", "w1", "-"], 4, b'{"status": "completed", "summary": "done"}')
    assert sorted(code for code, _ in results) == [0, 2, 2, 2], results
    assert {env["code"] for code, env in results if code} == {"spawn_not_running"}
    tree = project.load("COLONY_STATE.json")["spawn_tree"]
    assert tree["seq"] == 1 and tree["nodes"]["w1"]["seq"] == 1


# ---------------------------------------------------------------- build-finish


def test_the_build_record_holds_the_loop_as_the_lock_finds_it(project, monkeypatch):
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-load", "-", input=flat_plan(2, phases=2))
    loop = ok(project, "build-start", 1, "--loop")["code_loop"]["loop_id"]
    interleave(monkeypatch, lambda: ok(project, "loop-decide", loop, 97))
    out = ok(
        project,
        "build-finish",
        1,
        "--results",
        "-",
        input={
            "tasks": [{"id": "1.1", "status": "completed"}, {"id": "1.2", "status": "completed"}],
            "watcher": {"passed": True, "score": 97, "checks": []},
        },
    )
    assert out["code_loop"]["iterations"] == 1 and out["code_loop"]["final_score"] == 97
    record = project.load("phase_records.json")["records"][-1]["code_loop"]
    assert record["status"] == "complete" and record["scores"] == [97]


def test_the_syntax_check_covers_the_files_the_lock_finds(project, monkeypatch):
    ok(project, "colony-init", "Build a todo API", "--mode", "LIGHTWEIGHT")
    ok(project, "plan-load", "-", input=flat_plan(2, phases=2))
    ok(project, "build-start", 1)
    plan_waves(project, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"])])
    run_worker(project, "w1", created=["a.py"])
    (project.root / "a.py").write_text("x = 1\n")
    ok(project, "spawn-start", "w2")
    (project.root / "b.py").write_text("def broken(:\n")

    def finish_w2():  # w2's result is recorded between build-finish's first look and its lock
        ok(project, "spawn-finish", "w2", "-", input={"status": "completed", "files_created": ["b.py"]})

    interleave(monkeypatch, finish_w2)
    out = ok(project, "build-finish", 1)
    assert out["phase_status"] == "failed" and not out["syntax_check"]["passed"]
    assert [f["path"] for f in out["syntax_check"]["failures"]] == ["b.py"]


# ---------------------------------------------------------------- colony-pause


def test_the_handoff_describes_the_colony_the_lock_finds(project, monkeypatch):
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-load", "-", input=flat_plan(2, phases=2))
    interleave(monkeypatch, lambda: ok(project, "build-start", 1))
    out = ok(project, "colony-pause", "--note", "mid-build")
    handoff = project.load("handoff.json")
    assert handoff["snapshot"]["state"] == "EXECUTING" and handoff["snapshot"]["build"]["phase"] == 1
    assert out["snapshot"]["state"] == "EXECUTING"
    assert handoff["session_id"] == project.load("COLONY_STATE.json")["session_id"]


@pytest.mark.parametrize("name", ["events", "loops"])
def test_nothing_is_written_when_the_locked_decision_refuses(project, name):
    loop = ok(project, "loop-init", "plan")["loop_id"]
    before = project.file(f"{name}.json").read_bytes()
    assert project.run("loop-decide", loop).error["code"] == "score_missing"
    assert project.file(f"{name}.json").read_bytes() == before
