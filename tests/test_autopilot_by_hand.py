"""Steps by hand while an autopilot run goes on: `/ant:build N` (or the Queen typing its command)
for the phase the run builds goes on with the run, for another phase is refused and writes
nothing; a build by hand takes a stopped run's build over; an ant the Queen sent on her own
still counts toward the run's cap (docs/decisions/autopilot.md, the-helper-drives.md)."""

from __future__ import annotations

import json

import pytest

from helpers.autopilot import WIDE, answer, brief_of, colony_maker, drive, post, ref_of, snapshot
from helpers.colony import ok
from helpers.drive import ran_checks


@pytest.fixture
def colony(project, monkeypatch):
    return colony_maker(project, monkeypatch)


def test_an_explicit_build_takes_the_build_over_and_ends_the_run(colony):
    p = colony("STANDARD", phases=2, wide=3)
    stop, _ = drive(p, ok(p, "run"), {"lead1": WIDE})
    assert stop["why"] == "approval"
    taken = ok(p, "next", "--build", "1", "--approve")
    assert taken["action"] == "spawn" and "autopilot" not in taken
    runs = p.load("spawns.json")["runs"]
    assert runs[0]["command"] == "run" and runs[0]["done"] is True and runs[0]["ended"] == "superseded"
    assert runs[1]["parent"] is None


def test_the_builds_own_command_inside_a_running_run_goes_on_with_the_run(colony):
    """The Queen types `aether next --build 1` inside `/ant:run`: the run goes on, phase 2 too."""
    p = colony(phases=2)
    lead = ok(p, "run")["spawns"][0]
    post(p, lead, answer(p, lead))
    wave = ok(p, "next", "--build", "1")
    assert wave["action"] == "spawn" and wave["autopilot"]
    final, _ = drive(p, wave)
    assert final["action"] == "done" and final["why"] == "completed"
    (run,) = [r for r in p.load("spawns.json")["runs"] if r["command"] == "run"]
    assert run["ended"] == "completed" and sorted(run["builds"]) == ["1", "2"]


def test_a_build_of_another_phase_typed_inside_a_running_run_is_refused_and_writes_nothing(colony):
    """The Queen types `aether next --build 2` while the run builds phase 1 (its lead handed out,
    then its wave): refused, naming the phase being built and the command that continues; the run
    goes on, nothing is in progress that was not, and every spawn counts toward the run."""
    p = colony(phases=2)
    lead = ok(p, "run")["spawns"][0]
    for spawn in (lead, None):
        before = snapshot(p)
        err = p.run("next", "--build", "2").error
        assert err["code"] == "build_running" and err["running"] == 1
        assert "phase 2 may not start now" in err["error"] and "building phase 1" in err["error"]
        assert "/ant:run continues it" in err["error"]
        assert snapshot(p) == before  # the run goes on, nothing ended, nothing started
        if spawn is not None:
            post(p, spawn, answer(p, spawn))
    assert [ph["status"] for ph in p.load("PROJECT_PLAN.json")["phases"]] == ["in_progress", "pending"]
    wave = ok(p, "next")
    assert wave["autopilot"] and [s["id"] for s in wave["spawns"]] == ["w1"]
    final, spawned = drive(p, wave)
    assert final["why"] == "completed" and spawned == ["w1", "lead1", "w1"]
    (run,) = p.load("costs.json")["runs"]
    assert {k: b["spawns"] for k, b in run["phases"].items()} == {"1": 2, "2": 2}


def test_an_ant_the_queen_sent_on_her_own_counts_toward_the_run_s_cap(colony, tmp_path):
    """An ant:builder no spawn stands for, sent while the run builds phase 1: its tokens (read at
    its stop) count toward the run, and the cap stops the run at the next action."""
    p = colony(phases=2)
    lead = ok(p, "run", "--budget", "100k")["spawns"][0]
    turn = {
        "model": "claude-opus-5-5",
        "content": [{"type": "text", "text": "done"}],
        "usage": {"input_tokens": 90_000, "output_tokens": 1000},
    }
    transcript = tmp_path / "agent-x1.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "timestamp": "2026-02-04T10:00:00Z", "message": turn}) + "\n", "utf-8")
    stop_payload = {"agent_id": "x1", "agent_type": "ant:builder", "agent_transcript_path": str(transcript)}
    assert p.run("agent-hook", "stop", input=json.dumps(stop_payload)).code == 0
    post(p, lead, answer(p, lead))
    stop = ok(p, "next")
    assert stop["why"] == "budget" and "this run has spent 101k of its 100k-token cap" in stop["text"]
    (run,) = p.load("costs.json")["runs"]
    assert run["phases"]["1"]["castes"]["builder"]["tokens"] == 91_000


def test_a_build_typed_while_the_run_asks_for_a_phases_lessons_goes_on_with_it_or_is_refused(colony):
    """STANDARD asks for phase 1's lessons at the end of its build: `--build 1` goes on with the
    run (the lessons), `--build 2` may not start before the run has finished phase 1."""
    p = colony("STANDARD", phases=2)
    action = ok(p, "run")
    while action["action"] == "spawn":
        for s in action["spawns"]:
            if s["subagent_type"] == "ant:watcher":
                ran_checks(p, ref_of(s), brief_of(p, s))
            post(p, s, answer(p, s))
        action = ok(p, "next")
    assert action["action"] == "lessons"
    before = snapshot(p)
    err = p.run("next", "--build", "2").error
    assert err["code"] == "build_running" and "building phase 1" in err["error"] and snapshot(p) == before
    same = ok(p, "next", "--build", "1")
    assert same["action"] == "lessons" and same["autopilot"]
    final, _ = drive(p, same)
    assert final["why"] == "completed"


def test_a_refused_build_by_hand_leaves_a_stopped_run_stopped(colony):
    p = colony(phases=2)
    stop, _ = drive(p, ok(p, "run", "--budget", "30k"))
    assert stop["why"] == "budget"  # phase 1 is being built: its lead spent, its wave held
    before = snapshot(p)
    err = p.run("next", "--build", "2").error
    assert err["code"] == "phase_mismatch" and "/ant:run --budget" in err["error"]
    assert snapshot(p) == before
    assert ok(p, "next")["why"] == "budget"  # asked again: the same stop


def test_only_another_phase_while_one_is_built_is_refused(colony):
    p = colony(phases=2)
    ok(p, "next", "--build", "1")
    before = snapshot(p)
    assert p.run("run", "--only", "2").error["code"] == "build_running"
    assert p.run("run", "--dry-run", "--from", "2").error["code"] == "build_running"
    assert snapshot(p) == before


def test_a_build_by_hand_ends_a_run_stopped_between_phases(colony):
    p = colony(phases=2)
    lead = ok(p, "run")["spawns"][0]
    post(p, lead, answer(p, lead))
    wave = ok(p, "next")
    ok(p, "run", "--stop")  # asked while w1 works: phase 1 finishes, the run stops before phase 2's lead
    post(p, wave["spawns"][0], answer(p, wave["spawns"][0]))
    stop = ok(p, "next")
    assert stop["why"] == "user" and "Stopped at a wave boundary, as asked" in stop["text"]
    colony_state = p.load("COLONY_STATE.json")
    assert (colony_state["state"], colony_state["current_phase"]) == ("READY", 2)
    final, _ = drive(p, ok(p, "next", "--build", "2"))
    assert final["action"] == "done" and "AETHER RUN" not in final["text"]  # the build's own end
    (run,) = [r for r in p.load("spawns.json")["runs"] if r["command"] == "run"]
    assert run["done"] is True and run["ended"] == "superseded"
    assert ok(p, "status", "--json")["autopilot"] is None
