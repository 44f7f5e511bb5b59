"""A Queen who strays from the command body inside `/ant:run`, in real Claude Code under the
markdown runtime — each deviation ends in the right state or a clear stop that says what to do
(docs/decisions/the-helper-drives.md, "When the Queen strays").

- she sends the Phase Lead with a prompt and description of her own: the PreToolUse hook runs
  the one route-setter handed out as that spawn (its brief), so its answer is recorded and its
  tokens counted; she sends the wave's two builders rewritten: refused (which is which?) with
  the exact calls, which she then sends — with an `ant:scout` of her own, which runs and whose
  tokens count toward the run;
- she types `aether next --build 1` (the phase the run builds: the run goes on), then
  `aether next --build 2` (refused: phase 1 is being built, `/ant:run` continues it, nothing
  written); the next `/ant:run` finishes the colony, every token counted toward one run.

No --allowedTools and no skip-permissions: the command's `allowed-tools` is the only grant.
"""

from __future__ import annotations

import json
import re

import pytest

from .autopilot_script import BUILD_USE, LEAD_USE, builders, lead_answer, leads, prepare, queen, queen_reply, shown
from .colony_script import Queen, is_ref, spawn_next
from .fake_api import agent, bash, say, subagent, tool_error
from .harness import NOW, aether_ok, state

pytestmark = pytest.mark.e2e

SCOUT_USE = {"input_tokens": 1500, "output_tokens": 100}


def tokens(use: dict) -> int:
    return use["input_tokens"] + use["output_tokens"]


def calls_in_denial(request) -> list:
    """The exact Agent calls a refusal of the PreToolUse hook lists (its JSON, after the reason)."""
    for item in request.tool_results():
        text = item["text"]
        if item["is_error"] and "[{" in text:
            calls, _ = json.JSONDecoder().raw_decode(text[text.index("[{") :])
            return calls
    raise AssertionError(f"no refusal lists the calls: {request.tool_results()}")


def test_a_rewritten_lead_runs_as_its_spawn_and_every_ant_counts(claude):
    project = prepare(claude, 1, "LIGHTWEIGHT", wide_phase=1)  # phase 1: mods/m1.py and mods/m1_2.py
    q = Queen()
    q.step(lambda r: bash("aether run - <<'EOF'\n\nEOF"))
    # she writes the Phase Lead's call herself
    q.step(agent("ant:route-setter", "Plan phase 1 into waves: one builder per module.", "Plan phase 1"))
    # and the wave's builders too: two of them handed out, so which is which cannot be told
    q.step(lambda r: [agent("ant:builder", "Write mods/m1.py.", "module one"), agent("ant:builder", "Write mods/m1_2.py.", "module two")])
    # refused with the exact calls: she sends them, and a scout of her own
    q.step(
        lambda r: (
            [agent(c["subagent_type"], c["prompt"], c["description"]) for c in calls_in_denial(r)]
            + [agent("ant:scout", "Look for a style guide in this project.", "style guide")]
        ),
        tool_error(),
    )
    q.step(queen_reply)  # lessons
    q.step(queen_reply)  # the run's end
    ants = [
        subagent("ant:route-setter", is_ref("lead1")).reply(lead_answer, usage=LEAD_USE),
        *builders(project, "w1", 1),
        *builders(project, "w2", 1),
        subagent("ant:scout").reply(say("No style guide here."), usage=SCOUT_USE),
    ]
    run = claude.run("/ant:run", q.steps + ants, env=NOW, timeout=400)

    calls = run.tool_calls("Agent")
    assert [c["input"]["description"] for c in calls] == [
        "Plan phase 1",
        "module one",
        "module two",
        "w1 builder",
        "w2 builder",
        "style guide",
    ]
    # the lead's call ran its brief: the ant was handed the spawn, not the Queen's words
    (lead_turn,) = run.subagent_turns("ant:route-setter")
    assert re.search(r"^\[aether spawn \.aether/spawns/b1-\w+/lead1\.md\]", lead_turn.first_user_text, re.M)
    assert "one builder per module" not in lead_turn.first_user_text
    # the rewritten builders never ran: refused (the only calls refused), naming both spawns
    assert sorted(d["tool_input"]["description"] for d in run.permission_denials) == ["module one", "module two"]
    builder_prompts = [t.first_user_text for t in run.subagent_turns("ant:builder")]
    assert len(builder_prompts) == 4 and not any("Write mods/" in p for p in builder_prompts)
    assert "DONE: the colony is COMPLETED" in shown(run)

    spawns = state(claude, "spawns.json")
    by_local = {s["local"]: s for s in spawns["spawns"] if s["scope"].startswith("b1-")}
    assert {k: (s["status"], s.get("via")) for k, s in by_local.items()} == {
        "lead1": ("recorded", "hook"),
        "w1": ("recorded", "hook"),
        "w2": ("recorded", "hook"),
    }
    assert by_local["lead1"]["usage"]["total_tokens"] == tokens(LEAD_USE)
    (scout,) = [s for s in spawns["spawns"] if s["kind"] == "unplanned"]
    assert scout["subagent_type"] == "ant:scout" and scout["cost_key"] == "1" and scout["autopilot"] == spawns["runs"][0]["scope"]
    assert scout["usage"]["total_tokens"] == tokens(SCOUT_USE)
    assert [p["status"] for p in state(claude, "PROJECT_PLAN.json")["phases"]] == ["completed"]
    costs = state(claude, "costs.json")
    (pilot,) = costs["runs"]
    spent = pilot["phases"]["1"]
    assert spent["tokens"] == tokens(LEAD_USE) + 2 * tokens(BUILD_USE) + tokens(SCOUT_USE) and spent["spawns"] == 4
    assert spent["castes"]["scout"]["tokens"] == tokens(SCOUT_USE)
    assert aether_ok(claude, "validate-state", "all")["pass"] is True


def test_a_build_of_another_phase_typed_inside_the_run_is_a_clear_stop(claude):
    project = prepare(claude, 2, "LIGHTWEIGHT")
    q = Queen()
    q.step(lambda r: bash("aether run - <<'EOF'\n\nEOF"))
    q.step(bash("aether next --build 1"))  # the phase the run builds: the same action again
    q.step(spawn_next)  # lead1, recorded by the hook, which hands out w1
    q.step(bash("aether next --build 2"))  # another phase, while phase 1 is built
    q.step(lambda r: say(r.tool_results()[0]["text"]), tool_error())  # she shows the error and stops
    first = claude.run("/ant:run", q.steps + leads(1), env=NOW, timeout=300)

    assert first.permission_denials == []
    assert first.bash_commands()[1:] == ["aether next --build 1", "aether next --build 2"]
    refused = first.main_turns[-1].tool_results()[0]["text"]
    assert "build_running" in refused and "phase 2 may not start now" in refused
    assert "building phase 1" in refused and "/ant:run continues it" in refused
    # the run goes on where it was: phase 1 in progress, its wave handed out, nothing of phase 2
    spawns = state(claude, "spawns.json")
    pilot = spawns["runs"][0]
    assert pilot["command"] == "run" and pilot["done"] is False and pilot["stopped"] is None
    assert [(s["local"], s["status"]) for s in spawns["spawns"]] == [("lead1", "recorded"), ("w1", "dispatched")]
    assert [p["status"] for p in state(claude, "PROJECT_PLAN.json")["phases"]] == ["in_progress", "pending"]
    assert state(claude, "costs.json")["runs"][0]["phases"]["1"]["tokens"] == tokens(LEAD_USE)
    handed = next(c for c in first.tool_calls("Agent"))["input"]["prompt"]
    assert handed.startswith("You are lead1.")

    # what the stop says continues it: the same w1, then phase 2, every ant in one run's spend
    second = claude.run("/ant:run", queen("", 6) + builders(project, "w1", 2) + leads(1), env=NOW, timeout=300)
    assert second.permission_denials == []
    assert [c["input"]["description"] for c in second.tool_calls("Agent")] == ["w1 builder", "lead1 route-setter", "w1 builder"]
    assert "DONE: the colony is COMPLETED" in shown(second)
    assert [p["status"] for p in state(claude, "PROJECT_PLAN.json")["phases"]] == ["completed", "completed"]
    spawns = state(claude, "spawns.json")
    assert [r["command"] for r in spawns["runs"]] == ["run", "build", "continue", "build", "continue"]
    assert all(s["status"] == "recorded" for s in spawns["spawns"])
    (pilot,) = state(claude, "costs.json")["runs"]
    assert {k: (b["tokens"], b["spawns"]) for k, b in pilot["phases"].items()} == {
        "1": (tokens(LEAD_USE) + tokens(BUILD_USE), 2),
        "2": (tokens(LEAD_USE) + tokens(BUILD_USE), 2),
    }
    assert aether_ok(claude, "validate-state", "all")["pass"] is True
