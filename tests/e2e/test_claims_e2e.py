"""One build of a colony at a time, in real Claude Code (docs/decisions/one-build-at-a-time.md).

- two `claude -p "/ant:build 1"` on one colony, under the mod, started together: one takes the
  build and runs the wave; the other starts nothing and ends with the text that names the first
  (its process, what it runs, since when) and exit status 16 — every spawn runs once, every token
  is counted once;
- the markdown runtime: a second session's `aether next --build 1` while a first one holds the
  build answers `stop` with the same text, and that Queen shows it and stops.
"""

from __future__ import annotations

import json
import re

import pytest

from .colony_script import TWO_ASSIGNMENT as ASSIGNMENT
from .colony_script import TWO_PLAN as PLAN
from .colony_script import Queen, is_ref, json_block, next_action, next_with, worker_result
from .fake_api import say, subagent, tool, turn
from .harness import NOW, ClaudeCode, aether_ok, run_together, state

pytestmark = pytest.mark.e2e

CLAIMED = 16  # rules/drive.py EXIT_STATUS["claimed"]
LESSONS = "two independent modules build well in one wave"
USE = {"input_tokens": 1000, "output_tokens": 10}
BRIEF = re.compile(r"^\[aether spawn \.aether/spawns/([\w-]+/[\w-]+)\.md\]", re.M)


def _colony(claude) -> None:
    aether_ok(claude, "colony-init", "Two small modules", "--mode", "LIGHTWEIGHT")
    aether_ok(claude, "plan-load", "-", input=json.dumps(PLAN))
    (claude.project / "mods").mkdir()
    (claude.project / "mods" / "__init__.py").write_text("", "utf-8")


def _ants(claude, delay: float) -> list:
    """One run of each ant of the build: the Phase Lead, two builders (each answers `delay`
    seconds after its write), the lessons."""
    steps = [subagent("ant:route-setter", is_ref("lead1")).reply(say(json_block(ASSIGNMENT)), usage=USE)]
    for local, path in (("w1", "mods/a.py"), ("w2", "mods/b.py")):
        steps += [
            subagent("ant:builder", is_ref(local), turn(1)).reply(
                tool("Write", file_path=f"{claude.project}/{path}", content="VALUE = 1\n"), usage=USE
            ),
            subagent("ant:builder", is_ref(local), turn(2)).reply(
                say(worker_result(f"{path} written", created=[path])), usage=USE, delay=delay
            ),
        ]
    return steps + [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS), usage=USE)]


def _each_spawn_once(claude, runs) -> dict:
    """Every spawn of the build recorded once, by one ant run, and what it spent counted once."""
    api = runs[0].api
    assert not api.unmatched and not api.unused_steps, runs[0].report()
    data = state(claude, "spawns.json")
    spawns = {s["local"]: s for s in data["spawns"]}
    assert sorted(spawns) == ["lead1", "lessons", "w1", "w2"], spawns
    assert {k: s["status"] for k, s in spawns.items()} == dict.fromkeys(spawns, "recorded")
    assert all(len(s["metered"]) == 1 and s["usage"]["total_tokens"] > 0 for s in spawns.values()), spawns
    starts = [  # each ant's first turn names its brief: no ant was started twice
        BRIEF.search(r.first_user_text).group(1)
        for r in api.turns()
        if r.thread not in ("main", "side") and not any(m.get("role") == "assistant" for m in r.messages)
    ]
    assert sorted(starts) == sorted(f"{spawns[k]['scope']}/{k}" for k in spawns), starts
    spent = state(claude, "costs.json")["colonies"][0]["phases"]["1"]
    assert (spent["tokens"], spent["spawns"]) == (sum(s["usage"]["total_tokens"] for s in spawns.values()), 4)
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    assert aether_ok(claude, "validate-state", "all")["pass"] is True
    return data


def test_two_builds_started_together_under_the_mod_one_runs_the_wave_the_other_is_told(claude_mod):
    claude = claude_mod
    _colony(claude)
    runs = run_together(
        [(claude, "/ant:build 1"), (claude, "/ant:build 1")],
        _ants(claude, delay=2.0),
        env=NOW,
        args=["--output-format", "json"],
        timeout=300,
    )

    assert sorted(r.code for r in runs) == [0, CLAIMED], [(r.code, r.text[-800:], r.stderr[-800:]) for r in runs]
    built, told = (runs[0], runs[1]) if runs[0].code == 0 else (runs[1], runs[0])
    assert "Phase 1" in built.text and told.main_turns == []
    assert f"process {built.pid}" in told.text, told.text  # the other session, named
    for part in ("/ant:build 1", "aether watch", "started nothing"):
        assert part in told.text, told.text
    data = _each_spawn_once(claude, runs)
    assert data.get("claim") is None  # released when the build was done


def test_the_markdown_runtime_is_told_who_holds_the_build(claude_bin, tmp_path, _isolated_home):
    """A build under the mod holds the claim while its builders work; a second session, by the
    markdown command, runs `aether next --build 1`: the helper answers `stop` with the claim's
    text, and that Queen shows it and stops — no spawn, nothing recorded twice."""
    first = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime="mod")
    second = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime="prompts")
    _colony(first)
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(lambda r: say(next_action(r)["text"]))

    def building() -> bool:
        data = state(first, "spawns.json") if (first.project / ".aether/data/spawns.json").exists() else {}
        return bool(data.get("claim")) and any(s["local"] == "w1" and s["status"] == "launched" for s in data.get("spawns", []))

    runs = run_together(
        [(first, "/ant:build 1"), (second, "/ant:build 1")],
        _ants(first, delay=6.0) + q.steps,
        env=NOW,
        timeout=300,
        start_next=building,
    )

    built, told = runs
    assert built.code == 0 and told.code == 0, [(r.code, r.text[-800:]) for r in runs]
    answer = json.loads(told.main_turns[1].tool_results()[-1]["text"])["result"]
    assert (answer["action"], answer["why"]) == ("stop", "claimed"), answer
    assert f"process {built.pid}" in answer["text"] and answer["holder"]["claude_pid"] == built.pid
    assert told.tool_calls("Agent") == [] and answer["text"] in told.text
    _each_spawn_once(first, runs)
