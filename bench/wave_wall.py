#!/usr/bin/env python3
"""The wall-clock of one wave of four builders whose scripted ants each take T seconds to answer,
in real Claude Code against the scripted model: under the plugin's mod (every ant spawned by
code, at once), and by the markdown commands with a Queen that sends ONE Agent call per message
(what real controllers mostly do) — and, for reference, one that batches all four in one message.

The wave's time runs from the first builder's first request to the last builder's answer. A
measurement, not a test:

    .venv/bin/python bench/wave_wall.py [--seconds T]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from tests.e2e.colony_script import honest_watcher, is_ref, json_block, next_action, next_with, with_tests, worker_result  # noqa: E402
from tests.e2e.fake_api import agent, bash, main, say, subagent, tool, turn  # noqa: E402
from tests.e2e.harness import NOW, ClaudeCode, aether_ok, claude_binary  # noqa: E402
from tests.e2e.test_mod_e2e import ASSIGNMENT, PLAN  # noqa: E402  (the same four modules as the e2e wave)

REVIEW = json_block({"findings": [], "summary": "fine", "critical_count": 0})
VERIFIED = json_block({"passed": True, "score": 95, "checks": [{"name": "imports", "passed": True, "detail": "ok"}], "issues": []})
LESSONS = "- four modules build in one wave\n"


def _queen(batched: bool):
    """A Queen that sends the spawns of each action in one message, or one Agent call per message."""
    pending: list = []

    def reply(request):
        if not pending:
            action = next_action(request)
            if action["action"] == "spawn":
                pending.extend(action["spawns"])
            elif action["action"] == "lessons":
                return bash(f"aether record lessons - <<'EOF'\n{LESSONS}EOF")
            elif action["action"] == "wait":
                return say("waiting")
            else:
                return say(action.get("text") or "done")
        sent = pending[:] if batched else pending[:1]
        del pending[: len(sent)]
        return [agent(s["subagent_type"], s["prompt"], s["description"]) for s in sent]

    return reply


def wave(claude: ClaudeCode, seconds: float, queen: str | None) -> float:
    aether_ok(claude, "colony-init", "-", input=PLAN["goal"])
    aether_ok(claude, "plan-load", "-", input=json.dumps(PLAN))
    aether_ok(claude, "next", "--build", "1")
    aether_ok(claude, "record", "lead1", "-", input=json_block(ASSIGNMENT))
    (claude.project / "mods").mkdir()
    (claude.project / "mods" / "__init__.py").write_text("", "utf-8")
    with_tests(claude.project)
    script = []
    for i in range(1, 5):
        script += [
            subagent("ant:builder", is_ref(f"w{i}"), turn(1)).reply(
                tool("Write", file_path=f"{claude.project}/mods/m{i}.py", content=f"VALUE = {i}\n")
            ),
            subagent("ant:builder", is_ref(f"w{i}"), turn(2)).reply(
                say(worker_result(f"mods/m{i}.py", created=[f"mods/m{i}.py"])), delay=seconds
            ),
        ]
    script += [subagent("ant:watcher", is_ref("v1")).reply(say(REVIEW)), *honest_watcher(is_ref("watch1"), VERIFIED)]
    if queen is None:
        script.append(subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS)))
    else:
        first = main(turn(1)).reply(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
        reply = _queen(queen == "batched")  # one Queen: she remembers the spawns she has yet to send
        script = [first, *[main().reply(reply) for _ in range(12)], *script]
    run = claude.run("/ant:build 1 --approve", script, env=NOW, timeout=600, check=False)
    builders = [r for r in run.requests if r.thread == "ant:builder"]
    if len(builders) < 8:
        sys.exit(f"wave_wall: the builders did not all run ({len(builders)} requests)\n{run.report()}")
    return max(r.answered_at for r in builders) - min(r.received_at for r in builders)


def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each builder takes to answer (T)")
    args = parser.parse_args(argv)
    binary = claude_binary()
    rows = []
    for label, runtime, queen in (
        ("mod (spawned by code)", "mod", None),
        ("markdown, one Agent call per message", "prompts", "serial"),
        ("markdown, all four in one message", "prompts", "batched"),
    ):
        base = Path(tempfile.mkdtemp(prefix="aether-wave-"))
        (base / "home").mkdir()
        claude = ClaudeCode(binary, base, base / "home", runtime=runtime)
        wall = wave(claude, args.seconds, queen)
        rows.append((label, wall))
    print(f"A wave of 4 builders, each answering after T = {args.seconds:g} s (wall-clock of the wave)\n")
    for label, wall in rows:
        print(f"{label:<40} {wall:6.1f} s  = {wall / args.seconds:.2f} T")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
