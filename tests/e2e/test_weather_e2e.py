"""A limit is weather, not a failure — in real Claude Code, against a model server that answers
with the faults users meet (tests/e2e/fake_api.py): a usage limit with its
`anthropic-ratelimit-unified-*` headers on one builder while its wave mate answers; short faults
Claude Code retries by itself. `CLAUDE_CODE_MAX_RETRIES=1` keeps a persistent fault short (each
attempt of an ant is then 2 requests instead of 11).

- under the mod, `/ant:run` meets the limit: the run stops with exit 15 and says so, no failure, no
  debugger, no retry spent; `/ant:run` again runs only the ant that is missing and completes;
- under the mod, `/ant:run --wait` waits out a limit whose reset is known and goes on by itself;
- under the markdown runtime, the Queen is told to stop (not to send the ant again), and the same
  command later runs only the missing ant;
- two 429s, a 529, a 500 and a dropped stream on an ant's requests are retried by Claude Code and
  the build comes out right, under both runtimes.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest

from .autopilot_script import builders, leads, prepare
from .colony_script import (
    Queen,
    hook_lines,
    is_ref,
    next_action,
    next_with,
    queen_reply,
    spawn_next,
    two_modules_wave,
    worker_result,
)
from .fake_api import main, say, subagent, tool, turn
from .faults import dropped_stream, overloaded, rate_limit, server_error, usage_limit
from .harness import NOW, aether_ok, state

pytestmark = pytest.mark.e2e

ONE_RETRY = {"CLAUDE_CODE_MAX_RETRIES": "1"}
LESSONS = "- one module per phase keeps each build short\n"


def _builder(claude, local: str, path: str) -> list:
    return [
        subagent("ant:builder", is_ref(local), turn(1)).reply(tool("Write", file_path=f"{claude.project}/{path}", content="VALUE = 1\n")),
        subagent("ant:builder", is_ref(local), turn(2)).reply(say(worker_result(f"{path} written", created=[path]))),
    ]


def _spawns(claude) -> dict:
    return {s["local"]: s for s in state(claude, "spawns.json")["spawns"]}


def _no_failure(claude) -> None:
    failures = claude.project / ".aether" / "data" / "failures.json"
    assert not failures.exists() or json.loads(failures.read_text("utf-8"))["history"] == []


def test_under_the_mod_a_usage_limit_stops_the_run_with_its_own_status_and_the_run_goes_on_after(claude_mod):
    claude = claude_mod
    project = prepare(claude, 2, "LIGHTWEIGHT")
    limited = [subagent("ant:builder", is_ref("w1")).fail(usage_limit(reset=int(time.time()) + 3 * 3600))]
    first = claude.run(
        "/ant:run --auto-approve", leads(1) + limited, env={**NOW, **ONE_RETRY}, args=["--output-format", "json"], check=False
    )
    first.check(exit_code=15)
    assert first.main_turns == []
    text = first.text
    assert "STOPPED: a usage or rate limit held the ants (nothing failed)" in text, text
    assert "Stopped by Claude Code's usage limit (HTTP 429): w1 (builder) did not run" in text and "To continue: /ant:run" in text
    assert len(first.subagent_turns("ant:builder")) == 2  # one attempt (a request and its one retry): no second ant sent
    spawns = _spawns(claude)
    assert (spawns["w1"]["status"], spawns["w1"]["limited"], spawns["lead1"]["status"]) == ("dispatched", 1, "recorded")
    _no_failure(claude)  # no failure report: no retry, no debugger
    assert state(claude, "spawns.json")["weather"]["kind"] == "usage_limit"
    status = aether_ok(claude, "status", "--json")
    assert status["weather"]["who"] == "w1 (builder)"

    # the limit lifted: the same command runs only the ant that is missing, then the rest
    script = builders(project, "w1", 2) + leads(1) + [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    second = claude.run("/ant:run", script, env=NOW, args=["--output-format", "json"], timeout=300)
    assert second.code == 0 and "DONE: the colony is COMPLETED" in second.text
    assert len(second.subagent_turns("ant:route-setter")) == 1  # phase 2's Phase Lead only: phase 1's is not asked again
    assert state(claude, "spawns.json").get("weather") is None
    assert state(claude, "COLONY_STATE.json")["state"] == "COMPLETED"
    assert aether_ok(claude, "validate-state", "all")["pass"] is True


def test_under_the_mod_a_run_asked_to_wait_waits_out_the_limit_and_goes_on_by_itself(claude_mod):
    """No AETHER_NOW here: the wait is on the real clock, a few seconds."""
    claude = claude_mod
    project = prepare(claude, 1, "LIGHTWEIGHT")
    reset = datetime.fromtimestamp(time.time() + 4, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    fault = usage_limit(message=f"You have reached your usage limit. It resets at {reset}.")
    script = leads(1) + [subagent("ant:builder", is_ref("w1")).fail(fault, times=2)] + builders(project, "w1", 1)
    script += [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    run = claude.run("/ant:run --wait --auto-approve", script, env=ONE_RETRY, timeout=300)
    assert "Waiting out Claude Code's usage limit: w1 (builder) goes out again at" in run.stderr, run.stderr[-3000:]
    assert "DONE: the colony is COMPLETED" in run.text
    pilot = [r for r in state(claude, "spawns.json")["runs"] if r["command"] == "run"][-1]
    assert pilot["limit_waits"] == 1 and 1 <= pilot["limit_waited"] <= 30
    _no_failure(claude)


def test_under_the_markdown_runtime_the_queen_is_told_to_stop_and_the_missing_ant_runs_after(claude):
    two_modules_wave(claude)
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
    q.step(spawn_next)
    q.step(lambda r: say(next_action(r)["text"]))
    script = q.steps + [subagent("ant:builder", is_ref("w1")).fail(usage_limit())] + _builder(claude, "w2", "mods/b.py")
    first = claude.run("/ant:build 1 --approve", script, env={**NOW, **ONE_RETRY})
    shown = first.main_turns[-1].reply[-1]["text"]
    assert "Stopped by Claude Code's usage limit" in shown and "w1 (builder) did not run" in shown, shown
    assert len(first.tool_calls("Agent")) == 2  # the Queen sent the wave once; nobody re-sent w1
    spawns = _spawns(claude)
    assert (spawns["w1"]["status"], spawns["w1"]["limited"], spawns["w2"]["status"]) == ("dispatched", 1, "recorded")
    _no_failure(claude)

    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)
    q.step(lambda r: say(next_action(r).get("text") or "done"))
    second = claude.run("/ant:build 1", q.steps + _builder(claude, "w1", "mods/a.py"), env=NOW, check=False)
    second.check(all_steps_used=False)
    assert [c["input"]["description"] for c in second.tool_calls("Agent")][:1] == ["w1 builder"]
    assert len(second.subagent_turns("ant:builder")) == 2  # w1 alone, once
    assert _spawns(claude)["w1"]["status"] == "recorded"


@pytest.mark.parametrize("runtime", ["mod", "prompts"])
def test_short_faults_are_retried_by_claude_code_and_the_build_comes_out_right(claude_bin, tmp_path, _isolated_home, runtime):
    from .harness import ClaudeCode

    claude = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime=runtime)
    two_modules_wave(claude)
    weather = [
        subagent("ant:builder", is_ref("w1"), turn(1)).fail(rate_limit(), times=2),
        subagent("ant:builder", is_ref("w1"), turn(2)).fail(overloaded(), times=1),
        subagent("ant:builder", is_ref("w2"), turn(1)).fail(server_error(), times=1),
        subagent("ant:builder", is_ref("w2"), turn(2)).fail(dropped_stream(), times=1),
    ]
    ants = weather + _builder(claude, "w1", "mods/a.py") + _builder(claude, "w2", "mods/b.py")
    ants += [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    if runtime == "prompts":
        q = Queen()
        q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
        for _ in range(3):  # the wave, the lessons, the end
            q.step(queen_reply(LESSONS))
        ants = q.steps + ants[:-1]  # the Queen writes the lessons herself: no lessons ant
    run = claude.run("/ant:build 1 --approve", ants, env=NOW, timeout=300)
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed", run.report()
    assert sum(1 for r in run.requests if r.fault) == 5  # every fault was met, and outlived
    spawns = _spawns(claude)
    assert (spawns["w1"]["status"], spawns["w2"]["status"]) == ("recorded", "recorded"), run.report()
    assert not spawns["w1"].get("limited") and not spawns["w2"].get("limited")
    assert state(claude, "spawns.json").get("weather") is None
    _no_failure(claude)


# ---------------------------------------------------------------- where users are: interactive sessions (auto mode)


def _handed_back(step):
    """The step's reply, handed back through SubagentHandback (what an interactive session delivers)."""
    original = step.blocks
    build = original[0] if len(original) == 1 and callable(original[0]) else (lambda r: original[0])

    def reply(request):
        block = build(request)
        return tool("SubagentHandback", message=block["text"]) if block["type"] == "text" else block

    step.blocks = (reply,)
    return step


def test_interactively_under_the_mod_the_status_line_shows_the_wait_and_the_run_goes_on(claude_mod):
    """The TUI in tmux: `/ant:run --wait` meets a usage limit whose reset is a few seconds away;
    while it waits, the status line says what holds the run and until when; then it goes on."""
    from .interactive import Key, interactive

    claude = claude_mod
    project = prepare(claude, 1, "LIGHTWEIGHT")
    reset = datetime.fromtimestamp(time.time() + 25, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    fault = usage_limit(message=f"You have reached your usage limit. It resets at {reset}.")
    ants = leads(1) + builders(project, "w1", 1) + [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    script = [subagent("ant:builder", is_ref("w1")).fail(fault, times=2)] + [_handed_back(step) for step in ants]
    look = Key("Right", then_wait=1)  # a key that does nothing: the screen while the run waits
    session = interactive(claude, ["/ant:run --wait --auto-approve", look], script, env=ONE_RETRY, timeout=240)
    assert "held by Claude Code's usage limit · waiting until" in look.screen, look.screen
    assert session.main_turns == []
    assert state(claude, "COLONY_STATE.json")["state"] == "COMPLETED", session.report()


def test_interactively_under_the_markdown_runtime_a_backgrounded_ants_limit_stops_the_queen(claude):
    """Auto mode sends every ant to the background: the limit reaches the Queen in the failed
    ant's notification, and she is told to stop — not to send it again."""
    from .interactive import interactive

    two_modules_wave(claude)

    def queen(request):
        """The Queen as build.md says: act on the next action when one came, else end the turn."""
        came = any(line.startswith("Aether next:") for line in hook_lines(request))
        results = request.tool_results()
        came = came or (bool(results) and all(r["text"].lstrip().startswith('{"ok":') for r in results))
        if not came:
            return say("Waiting for the ants' answers.")
        action = next_action(request)
        if action["action"] == "spawn":
            return spawn_next(request)
        return say(action.get("text") or "Waiting for the ants' answers.")

    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
    script = q.steps + [main().reply(queen) for _ in range(6)]
    script += [subagent("ant:builder", is_ref("w1")).fail(usage_limit())]
    written = worker_result("mods/b.py written", created=["mods/b.py"])
    script += [
        subagent("ant:builder", is_ref("w2"), turn(1)).reply(tool("Write", file_path=f"{claude.project}/mods/b.py", content="VALUE = 1\n")),
        subagent("ant:builder", is_ref("w2"), turn(2)).reply(tool("SubagentHandback", message=written)),
    ]
    session = interactive(claude, ["/ant:build 1 --approve"], script, env={**NOW, **ONE_RETRY}, check=False)
    session.check(all_steps_used=False)
    spawns = _spawns(claude)
    assert (spawns["w1"]["status"], spawns["w1"]["limited"], spawns["w2"]["status"]) == ("dispatched", 1, "recorded"), session.report()
    assert "Stopped by Claude Code's usage limit" in session.screen or any(
        "Stopped by Claude Code's usage limit" in json.dumps(r.reply) for r in session.main_turns
    ), session.report()
    sent = [
        c["input"]["description"]
        for r in session.main_turns
        for c in (r.reply or [])
        if c.get("type") == "tool_use" and c["name"] == "Agent"
    ]
    assert sorted(sent) == ["w1 builder", "w2 builder"], sent  # the wave once; w1 not sent again
    _no_failure(claude)
