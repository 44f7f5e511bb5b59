"""A hung ant has a deadline — in real Claude Code, against a model server that never answers the
ant (a `delay` longer than the test):

- under the mod, with a deadline of a few seconds in `.aether/config.yaml`, the ant is stopped
  (Claude Code's TaskStop), handed out once more, stopped again, and the build stops with the
  message and exit 14 — nothing failed; the same command then goes on and completes;
- under the markdown runtime, Claude Code's own watchdog (`CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS`)
  cuts the hung ant's Agent call: the spawn is handed out once more, then the Queen is told to stop
  with the same message.

No AETHER_NOW: deadlines run on the real clock.
"""

from __future__ import annotations

import json

import pytest

from .autopilot_script import builders, leads, prepare
from .colony_script import Queen, is_ref, next_action, next_with, spawn_next
from .fake_api import say, subagent
from .harness import aether_ok, state

pytestmark = pytest.mark.e2e

HUNG = 60.0  # seconds the model server holds the hung ant's answer back: longer than the test waits
LESSONS = "- a phase of one module builds in one wave\n"


def _hung_lead(times: int) -> list:
    return [subagent("ant:route-setter", is_ref("lead1")).reply(say("too late"), delay=HUNG) for _ in range(times)]


def _lead(claude) -> dict:
    return next(s for s in state(claude, "spawns.json")["spawns"] if s["local"] == "lead1")


def _no_failure(claude) -> None:
    failures = claude.project / ".aether" / "data" / "failures.json"
    assert not failures.exists() or json.loads(failures.read_text("utf-8"))["history"] == []


def test_under_the_mod_an_ant_past_its_deadline_is_stopped_sent_once_more_then_the_build_stops_with_14(claude_mod):
    claude = claude_mod
    project = prepare(claude, 1, "LIGHTWEIGHT", config="deadlines:\n  route-setter: 3s\n")
    run = claude.run("/ant:build 1", _hung_lead(2), args=["--output-format", "json"], check=False, timeout=120)
    run.check(exit_code=14)
    assert run.main_turns == []  # the mod ran it: no Queen turn
    text = run.text
    assert "Stopped: lead1 (route-setter) was stopped 2 times before it answered" in text, text
    assert "it ran past its deadline (3s) and was stopped" in text and "Its deadline: 3s" in text
    assert "it had made no tool call" in text and "Nothing failed" in text and "To go on: /ant:build 1" in text
    assert run.stderr.count("lead1 (route-setter) is past its deadline (3s): stopping it") == 2, run.stderr[-3000:]
    assert run.stderr.count("spawn lead1 route-setter") == 2  # handed out once more, then not again
    assert "spawn lead1 route-setter (lead1 once more: stopped before it answered)" in run.stderr
    assert len(run.subagent_turns("ant:route-setter")) == 2
    lead = _lead(claude)
    assert (lead["status"], lead["deadline_stops"], lead["deadline_hit"]["how"], lead["deadline_s"]) == ("dispatched", 2, "deadline", 3)
    _no_failure(claude)
    status = aether_ok(claude, "status", "--json")
    assert status["running"] == [] and status["state"] == "EXECUTING"

    # the person's command goes on: lead1 goes out again, answers in time, and the build completes
    script = leads(1) + builders(project, "w1", 1) + [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    again = claude.run("/ant:build 1", script, args=["--output-format", "json"], timeout=180)
    assert again.code == 0, again.report()
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    assert _lead(claude)["status"] == "recorded"


def test_under_the_markdown_runtime_claude_codes_watchdog_stops_a_hung_ant_twice_and_the_queen_stops(claude):
    prepare(claude, 1, "LIGHTWEIGHT")
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)  # lead1: its model request hangs; Claude Code cuts the Agent call
    q.step(spawn_next)  # handed out once more: the hook's `Aether next: spawn …`
    q.step(lambda r: say(next_action(r)["text"]))  # `Aether next: stop — show the user this text:`
    env = {"CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS": "3000"}
    run = claude.run("/ant:build 1", q.steps + _hung_lead(2), env=env, timeout=120)
    shown = run.main_turns[-1].reply[-1]["text"]
    assert "Stopped: lead1 (route-setter) was stopped 2 times before it answered" in shown, shown
    assert "Claude Code stopped it: its Agent call was cut ([Request interrupted by user for tool use])" in shown
    assert "To go on: /ant:build 1" in shown
    assert len(run.tool_calls("Agent")) == 2 and len(run.subagent_turns("ant:route-setter")) == 2
    lead = _lead(claude)
    assert (lead["deadline_stops"], lead["deadline_hit"]["how"], lead.get("failed_calls")) == (2, "stalled", None)
    _no_failure(claude)
    assert aether_ok(claude, "next")["why"] == "deadline"  # the Queen's `aether next` says the same: nothing is sent
