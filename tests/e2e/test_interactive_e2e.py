"""Where users are: an interactive Claude Code session in auto mode (its default), driven in tmux.

There Claude Code sends every ant to the background — even an Agent call with
`run_in_background: false` — so the Agent result carries no answer (`async_launched`); the ant
hands its report back through `SubagentHandback`, and it reaches the Queen later as a message
(`<agent-message …>`). The build must still record every answer exactly once, with its usage,
and tell the Queen the next action when the last answer of an action arrives.

Also under `claude -p`: a Queen that sends her ants to the background herself (the tool's
default when `run_in_background` is left out) gets them run in the foreground by the hook.
"""

from __future__ import annotations

import json

import pytest

from .colony_script import TWO_ASSIGNMENT as ASSIGNMENT
from .colony_script import TWO_PLAN as PLAN
from .colony_script import hook_lines, is_ref, json_block, next_action, next_with, queen_turn, spawn_next, worker_result
from .fake_api import Matcher, bash, main, say, subagent, tool, turn
from .harness import NOW, aether_ok, state
from .interactive import interactive

pytestmark = pytest.mark.e2e

LESSONS = "- two small modules build in one wave\n"
WAITING = "Waiting for the ants' answers."


def _has_next(request) -> bool:
    """A next action came: a hook's `Aether next:` line, or the helper's answer to a Bash call."""
    if any(line.startswith("Aether next:") for line in hook_lines(request)):
        return True
    results = request.tool_results()
    return bool(results) and all(r["text"].lstrip().startswith('{"ok":') for r in results)


def queen(request):
    """The Queen as build.md says: act on the next action when one came, else end the turn."""
    if not _has_next(request):
        return say(WAITING)
    action = next_action(request)
    if action["action"] == "spawn":
        return spawn_next(request)
    if action["action"] == "lessons":
        return bash(f"aether record lessons - <<'EOF'\n{LESSONS}EOF")
    if action["action"] == "wait":
        return say(WAITING)
    return say(action["text"])


def handback(text: str):
    return tool("SubagentHandback", message=text)


def builder(local: str, path: str, root) -> list:
    """An ant that writes its module, then hands its result back (the way interactive sessions deliver)."""
    return [
        subagent("ant:builder", is_ref(local), turn(1)).reply(tool("Write", file_path=f"{root}/{path}", content="VALUE = 1\n")),
        subagent("ant:builder", is_ref(local), turn(2)).reply(handback(worker_result(f"{path} written", created=[path]))),
    ]


def test_an_interactive_build_in_auto_mode_records_every_backgrounded_answer_once(claude):
    aether_ok(claude, "colony-init", "Two small modules", "--mode", "LIGHTWEIGHT")
    aether_ok(claude, "plan-load", "-", input=json.dumps(PLAN))
    script = [
        queen_turn(1).reply(lambda r: next_with(r, "aether next --build <N>", N=1)),
        subagent("ant:route-setter", is_ref("lead1")).reply(handback(json_block(ASSIGNMENT))),
        *builder("w1", "mods/a.py", claude.project),
        *builder("w2", "mods/b.py", claude.project),
        *[main().reply(queen) for _ in range(14)],
    ]
    session = interactive(claude, ["/ant:build 1"], script, env=NOW, check=False)
    session.check(all_steps_used=False)
    used = [s for s in script if s.used_by is not None]
    assert len(used) >= 9, session.report()

    # Claude Code sent the ants to the background: their Agent results carried no answer
    spawns = {s["local"]: s for s in state(claude, "spawns.json")["spawns"]}
    assert sorted(spawns) == ["lead1", "w1", "w2"], session.report()
    for local, rec in spawns.items():
        assert rec["status"] == "recorded", (local, rec)
        assert rec.get("background_at"), (local, rec)  # the async path, not the Agent result
        assert rec["via"] in ("stop", "notification"), (local, rec)
        assert rec["usage"]["total_tokens"] > 0, (local, rec)
    # each spawn sent once, no answer piped by hand
    sent = [
        c["input"]["description"].split()[0]
        for r in session.main_turns
        for c in (r.reply or [])
        if c.get("type") == "tool_use" and c["name"] == "Agent"
    ]
    assert sorted(sent) == ["lead1", "w1", "w2"], sent
    assert not any("aether record w" in json.dumps(r.reply) or "aether record lead" in json.dumps(r.reply) for r in session.main_turns)
    # the build finished, its spend counted once per ant
    plan = state(claude, "PROJECT_PLAN.json")
    assert plan["phases"][0]["status"] == "completed", session.report()
    assert (claude.project / "mods" / "a.py").exists() and (claude.project / "mods" / "b.py").exists()
    costs = state(claude, "costs.json")["colonies"][0]["phases"]["1"]
    assert costs["spawns"] == 3 and costs["unmetered"] == 0
    assert any("Aether next:" in line for r in session.main_turns for line in hook_lines(r) if "UserPromptSubmit" not in line)


def test_a_queen_that_sends_her_ants_to_the_background_gets_them_in_the_foreground(claude):
    """-p: the Agent call leaves out run_in_background (the tool's default is the background);
    the hook runs it in the foreground, so its answer and the next action come with its result."""
    aether_ok(claude, "colony-init", "Two small modules", "--mode", "LIGHTWEIGHT")
    aether_ok(claude, "plan-load", "-", input=json.dumps(PLAN))

    def lead_in_background(request):
        call = spawn_next(request)[0]
        call["input"].pop("run_in_background")
        return call

    run = claude.run(
        "/ant:build 1",
        [
            queen_turn(1).reply(lambda r: next_with(r, "aether next --build <N>", N=1)),
            queen_turn(2).reply(lead_in_background),
            subagent("ant:route-setter", is_ref("lead1")).reply(say(json_block(ASSIGNMENT))),
            queen_turn(
                3, Matcher("lead recorded", lambda r: any(line.startswith("Aether recorded lead1") for line in hook_lines(r)))
            ).reply(say("The plan is in.")),
        ],
        env=NOW,
        check=False,
    )
    run.check(exit_code=0)
    (result,) = [run.tool_result(c) for c in run.tool_calls("Agent")]
    assert result["details"]["status"] == "completed"
    lead = [s for s in state(claude, "spawns.json")["spawns"] if s["local"] == "lead1"][0]
    assert lead["status"] == "recorded" and lead["via"] == "hook"
