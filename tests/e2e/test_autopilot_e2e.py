"""The autopilot (`/ant:run`) in real Claude Code against the scripted model.

- the Agent result as Claude Code hands it to the PostToolUse hook, against the fixture the unit
  tests read usage from (tests/fixtures/agent_post_tool_use.json);
- a three-phase STANDARD colony built unattended in ONE `claude -p` to COMPLETED: each phase's
  Phase Lead, builder, watcher (on the model `models:` in .aether/config.yaml names) and lessons,
  the colony's cost per phase and caste in the summary;
- a run whose phase 2 hits a common-cause abort stops with the report, the git tag and the run's
  recovery options; after the fix `/ant:run --from 2` completes the colony;
- a run stopped by a low cap, at a wave boundary, with nothing half-recorded; a raised cap goes on;
- a run killed mid-wave and resumed in a new session: the same spawn again, recorded once;
- the SessionStart context after /clear and /compact (a colony mid-run), and none without a colony.

No --allowedTools and no skip-permissions: the command's `allowed-tools` is the only grant.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from .autopilot_script import (
    VERIFIED,
    WATCH_USE,
    builders,
    failing,
    lead_answer,
    leads,
    prepare,
    queen,
    shown,
)
from .colony_script import honest_watcher, is_ref
from .fake_api import Matcher, agent, bash, last_contains, main, say, subagent, tool_results, turn
from .harness import FIXTURES, NOW, REPO, aether_ok, run_and_kill, state
from helpers.git import git
from helpers.processes import SLEEP, alive, argv_of, descendants, is_sleeper

pytestmark = pytest.mark.e2e

PAYLOAD_FIXTURE = REPO / "tests" / "fixtures" / "agent_post_tool_use.json"
HOOKPROBE = FIXTURES / "hookprobe"


def _shape(value):
    """The keys and value types of a payload, not its values (ids and paths differ per run)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value[:1]]
    return type(value).__name__


def test_the_agent_result_the_post_hook_sees_matches_the_fixture(claude):
    run = claude.run(
        "/hookprobe:spawn",
        [
            main().reply(agent("hookprobe:prober", "Say hello.", "probe once", model="haiku")),
            subagent("hookprobe:prober").reply(say("hello"), usage={"input_tokens": 1200, "output_tokens": 30}),
            main(tool_results(1)).reply(say("done")),
        ],
        plugin_dirs=[HOOKPROBE],
    )
    (payload_file,) = sorted(Path(claude.project).glob("PostToolUse-*.json"))
    payload = json.loads(payload_file.read_text("utf-8"))
    response = payload["tool_response"]
    # what the spend cap counts: Claude Code's totalTokens (input + output of the agent's last turn)
    assert (response["totalTokens"], response["usage"]["input_tokens"], response["usage"]["output_tokens"]) == (1230, 1200, 30)
    assert response["resolvedModel"].startswith("claude-haiku")  # the Agent call's `model` took effect
    assert [r.model for r in run.requests if r.thread == "hookprobe:prober"][0] == response["resolvedModel"]
    if os.environ.get("AETHER_E2E_WRITE_FIXTURE"):
        PAYLOAD_FIXTURE.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", "utf-8")
    fixture = json.loads(PAYLOAD_FIXTURE.read_text("utf-8"))
    assert _shape(fixture) == _shape(payload), (
        "Claude Code's PostToolUse payload changed: refresh the fixture with AETHER_E2E_WRITE_FIXTURE=1"
    )


# ---------------------------------------------------------------- (1) three phases, unattended


def test_three_phases_built_unattended_in_one_session_to_completed(claude):
    project = prepare(claude, 3, "STANDARD", config="models:\n  watcher: haiku\n")
    # per phase: lead, builder, watcher, lessons → 4 actions; + the first call and the last text
    script = (
        queen("", 14)
        + leads(3)
        + builders(project, "w1", 3)
        + [step for _ in range(3) for step in honest_watcher(is_ref("watch1"), VERIFIED, usage=WATCH_USE)]
    )
    run = claude.run("/ant:run", script, env=NOW, timeout=600)

    assert run.permission_denials == []
    assert run.bash_commands()[0] == "aether run - <<'EOF'\n\nEOF"
    calls = run.tool_calls("Agent")
    assert [c["input"]["description"] for c in calls] == ["lead1 route-setter", "w1 builder", "watch1 watcher"] * 3
    assert all(len(c["input"]["prompt"]) < 150 and c["input"]["run_in_background"] is False for c in calls)
    # the watcher ran on the model config.yaml names; the others on the session's
    assert {c["input"].get("model") for c in calls if "watcher" in c["input"]["description"]} == {"haiku"}
    assert all("model" not in c["input"] for c in calls if "watcher" not in c["input"]["description"])
    assert {r.model for r in run.requests if r.thread == "ant:watcher"} == {"claude-haiku-5-5"}
    # one session, COMPLETED, every phase and task done
    colony = state(claude, "COLONY_STATE.json")
    assert colony["state"] == "COMPLETED"
    phases = state(claude, "PROJECT_PLAN.json")["phases"]
    assert [p["status"] for p in phases] == ["completed"] * 3
    assert sorted(p.name for p in (project / "mods").glob("m*.py")) == ["m1.py", "m2.py", "m3.py"]
    # what the user saw last: the run's summary with its cost per phase and caste, then the colony's
    text = shown(run)
    assert "DONE: the colony is COMPLETED" in text and "COLONY COMPLETE · STANDARD" in text
    assert "Spent: 37k tokens in 9 spawns" in text and "by phase: 1 12k · 2 12k · 3 12k" in text
    cost = text.split("\nCost: ", 1)[1]  # the colony's summary: cost per phase and per caste, with the models
    assert cost.startswith("37k tokens in 9 spawns")
    assert re.search(r"builder\s+19k tokens · 3 spawns · \d+ s · claude-opus-5-5 19k", cost)
    assert re.search(r"watcher\s+7.8k tokens · 3 spawns · \d+ s · claude-haiku-5-5 7.8k", cost)
    costs = state(claude, "costs.json")
    assert {k: b["tokens"] for k, b in costs["runs"][0]["phases"].items()} == {"1": 12_200, "2": 12_200, "3": 12_200}
    lessons = [e for e in state(claude, "memory.json")["phase_learnings"]]
    assert [e["phase"] for e in lessons] == [1, 2, 3]
    assert aether_ok(claude, "validate-state", "all")["pass"] is True


# ---------------------------------------------------------------- (2) a common-cause abort, then --from


def test_a_common_cause_abort_stops_the_run_and_from_2_completes_it(claude):
    project = prepare(claude, 3, "LIGHTWEIGHT", wide_phase=2)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "the colony's start")
    # run, lead(1), w1(1), lead(2), w1+w2(2) → abort: the stop's text
    script = (
        queen("", 6)
        + leads(2)
        + builders(project, "w1", 1)
        + [subagent("ant:builder", is_ref("w1")).reply(failing), subagent("ant:builder", is_ref("w2")).reply(failing)]
    )
    first = claude.run("/ant:run", script, env=NOW, timeout=400)
    assert first.permission_denials == []
    text = shown(first)
    assert "STOPPED: the failure protocol aborted the phase" in text
    assert "AETHER BUILD ABORTED — phase 2" in text and "a common cause" in text
    assert "Abort tag: aether/phase-2-aborted" in text
    assert "Apply the fix by hand, then go on with the autopilot: `/ant:run --from 2`" in text
    assert "Skip phase 2 and go on: `/ant:run --from 3`" in text and "`/ant:build 2`" in text
    assert "\nTo continue: /ant:run --from 2" in text
    assert aether_ok(claude, "next")["command"] == "/ant:run --from 2"  # asked again: the same stop
    assert "aether/phase-2-aborted" in git(project, "tag").split()
    assert [p["status"] for p in state(claude, "PROJECT_PLAN.json")["phases"]] == ["completed", "failed", "pending"]

    # the user's fix by hand, then /ant:run --from 2: phase 2 rebuilt, phase 3, lessons, done
    (project / "mods" / "config.py").write_text("SEPARATOR = '-'\n", "utf-8")
    script = queen("--from 2", 7) + leads(2) + builders(project, "w1", 2) + builders(project, "w2", 1)
    second = claude.run("/ant:run --from 2", script, env=NOW, timeout=400)
    assert second.permission_denials == []
    assert second.bash_commands()[0] == "aether run - <<'EOF'\n--from 2\nEOF"
    assert "DONE: the colony is COMPLETED" in shown(second)
    assert state(claude, "COLONY_STATE.json")["state"] == "COMPLETED"
    assert [p["status"] for p in state(claude, "PROJECT_PLAN.json")["phases"]] == ["completed"] * 3


# ---------------------------------------------------------------- (3) the cap


def test_a_low_cap_stops_the_run_with_nothing_half_recorded(claude):
    project = prepare(claude, 2, "LIGHTWEIGHT")
    big = {"input_tokens": 19_000, "output_tokens": 1000}
    # lead1 20k; w1 is estimated at 45k (no builder spent yet): 65k > the 60k cap → stop
    script = queen("--budget 60k", 3) + [subagent("ant:route-setter", is_ref("lead1")).reply(lead_answer, usage=big)]
    first = claude.run("/ant:run --budget 60k", script, env=NOW, timeout=300)
    assert first.permission_denials == []
    text = shown(first)
    assert "STOPPED: the spend cap" in text
    assert "the next action (1 builder, ≈45k tokens) would bring this run to ≈65k of its 60k-token cap" in text
    assert "\nTo continue: /ant:run --budget 120k" in text
    assert [c["input"]["description"] for c in first.tool_calls("Agent")] == ["lead1 route-setter"]
    # nothing half-recorded: every spawn handed out was recorded; the wave is planned, not started
    ledger = state(claude, "spawns.json")
    assert [(s["local"], s["status"]) for s in ledger["spawns"]] == [("lead1", "recorded")]
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert {n: v["status"] for n, v in tree["nodes"].items()} == {"w1": "planned"}
    assert state(claude, "costs.json")["runs"][0]["phases"]["1"]["tokens"] == 20_000
    assert aether_ok(claude, "validate-state", "all")["pass"] is True
    status = aether_ok(claude, "status", "--json")
    assert status["autopilot"]["stopped"] == "budget" and status["spend"]["tokens"] == 20_000

    # the raised cap goes on where it stopped
    script = queen("--budget 200k", 6) + leads(1) + builders(project, "w1", 2)
    second = claude.run("/ant:run --budget 200k", script, env=NOW, timeout=300)
    assert [c["input"]["description"] for c in second.tool_calls("Agent")] == ["w1 builder", "lead1 route-setter", "w1 builder"]
    assert "DONE: the colony is COMPLETED" in shown(second)


# ---------------------------------------------------------------- (4) killed, resumed in a new session


def test_a_run_killed_mid_wave_resumes_in_a_new_session(claude):
    project = prepare(claude, 2, "LIGHTWEIGHT")
    hanging = [subagent("ant:builder", is_ref("w1"), turn(1)).reply(bash(SLEEP, "wait for the build server"))]
    script = queen("", 3) + leads(1) + hanging
    sleepers: set = set()

    def working(pid: int) -> bool:
        spawns = state(claude, "spawns.json")["spawns"] if (project / ".aether/data/spawns.json").exists() else []
        launched = {s["local"] for s in spawns if s["status"] == "launched"}
        sleepers.update(p for p in descendants(pid) if is_sleeper(argv_of(p)))
        return "w1" in launched and sleepers

    killed = run_and_kill(claude, "/ant:run", script, working, env=NOW)
    assert killed.code != 0 and not any(alive(p) for p in sleepers)
    first_call = [c for c in killed.tool_calls("Agent") if c["input"]["description"] == "w1 builder"][0]
    run_record = state(claude, "spawns.json")["runs"][0]
    assert run_record["command"] == "run" and not run_record["done"] and not run_record["stopped"]

    # a NEW session: /ant:run hands the same w1 out again, then phase 2, lessons, done
    script = queen("", 6) + builders(project, "w1", 2) + leads(1)
    resumed = claude.run("/ant:run", script, env=NOW, timeout=300)
    assert resumed.permission_denials == []
    calls = resumed.tool_calls("Agent")
    assert [c["input"]["description"] for c in calls] == ["w1 builder", "lead1 route-setter", "w1 builder"]
    assert calls[0]["input"]["prompt"] == first_call["input"]["prompt"]  # the same spawn, the same brief
    ledger = state(claude, "spawns.json")
    phase1 = [s for s in ledger["spawns"] if s["scope"].startswith("b1-")]
    assert [(s["local"], s["status"], s["via"]) for s in phase1] == [("lead1", "recorded", "hook"), ("w1", "recorded", "hook")]
    # one run, resumed: each phase built, then closed as /ant:continue closes it
    assert [r["command"] for r in ledger["runs"]] == ["run", "build", "continue", "build", "continue"]
    assert "DONE: the colony is COMPLETED" in shown(resumed)
    assert aether_ok(claude, "validate-state", "all")["pass"] is True


# ---------------------------------------------------------------- (5) context after /clear and /compact


def context_seen(request) -> str:
    """Aether's SessionStart context in a request (a system note), or ""."""
    marker = "SessionStart hook additional context: "
    for m in request.messages:
        content = m.get("content")
        blocks = [content] if isinstance(content, str) else [b.get("text", "") for b in content or [] if isinstance(b, dict)]
        for text in blocks:
            if marker + "Aether:" in text:
                found = text.split(marker, 1)[1]
                return "\n".join(found.split("\n")[:2])  # the hook's two lines
    return ""


def test_the_context_is_put_back_after_clear_and_compact_and_absent_without_a_colony(claude):
    question = "Where do we stand?"
    # no colony: nothing is added after /clear
    bare = claude.run(["/clear", question], [main(last_contains(question)).reply(say("No colony."))], env=NOW)
    assert "Aether:" not in json.dumps([r.messages for r in bare.requests])

    prepare(claude, 2, "LIGHTWEIGHT")
    stopped = aether_ok(claude, "run", "--budget", "1k")  # a colony mid-run, stopped by its cap
    assert stopped["why"] == "budget"
    cleared = claude.run(["/clear", question], [main(last_contains(question)).reply(say("Mid-run."))], env=NOW)
    (asked,) = [r for r in cleared.requests if r.thread == "main"]
    seen = context_seen(asked)
    assert seen.startswith('Aether: the colony "Small modules" is mid-run — autopilot r-')
    assert "phases 1–2; phase 1 is next; the run is stopped: the spend cap" in seen
    assert "To continue, run /ant:run --budget 50k" in seen

    session = [e for e in cleared.events if e.get("type") == "system" and e.get("subtype") == "init"][0]["session_id"]
    summary = Matcher("compaction", lambda r: "Respond with TEXT ONLY" in r.last_text)
    compacted = claude.run(
        ["/compact", question],
        [
            summary.reply(say("We talked about the colony.")),
            summary.reply(say("We talked about the colony.")),
            main(last_contains(question)).reply(say("Mid-run.")),
        ],
        args=["--resume", session],
        env=NOW,
        check=False,
    )
    compacted.check(all_steps_used=False)
    asked = [r for r in compacted.requests if r.thread == "main" and question in r.last_text][-1]
    assert "the run is stopped: the spend cap" in context_seen(asked)
