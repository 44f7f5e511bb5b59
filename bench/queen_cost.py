#!/usr/bin/env python3
"""What the Queen costs per slash command in the scripted colony session: turns (model round
trips in the main thread), tool calls, and the tokens the model wrote (its replies' text and
tool inputs, counted as ceil(UTF-8 bytes / 3.5)), with the largest Agent prompt and heredoc, and
the characters of agent answers that entered the Queen's context: each Agent result once, plus every
copy of an answer the Queen wrote back (a heredoc that pipes an answer to the helper re-enters her
context as her own message).

It runs tests/e2e/test_colony_session.py (real Claude Code against the scripted model server)
and reads each run's recorded requests (`requests.jsonl`); then the unattended three-phase run of
tests/e2e/test_autopilot_e2e.py (one `/ant:run`, one `claude -p`), split per phase: a turn counts
for the phase whose spawns it sends (their briefs live under `.aether/spawns/b<phase>-…/`), a turn
that sends none for the phase before it. A measurement, not a test:

    .venv/bin/python bench/queen_cost.py                 # this checkout
    .venv/bin/python bench/queen_cost.py --against DIR   # and another checkout, side by side
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEST = "tests/e2e/test_colony_session.py::test_a_colony_session_plans_builds_and_continues"
AUTOPILOT_TEST = "tests/e2e/test_autopilot_e2e.py::test_three_phases_built_unattended_in_one_session_to_completed"
# Under the plugin's mod: the same session (the test runs under both runtimes), and the three phases
# of the test that runs /ant:run under both runtimes (its mod run lives under `mod/`).
MOD_AUTOPILOT_TEST = "tests/e2e/test_mod_e2e.py::test_three_phases_under_the_mod_and_by_the_markdown_reach_the_same_state"
SCOPE = re.compile(r"\.aether/spawns/b(\d+)-")


def tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 3.5)


def _written(block: dict) -> str:
    if block.get("type") == "text":
        return block.get("text", "")
    if block.get("type") == "tool_use":
        return json.dumps(block.get("input", {}), ensure_ascii=False)
    return ""


def _answers(req: dict, agent_ids: set, seen: dict) -> None:
    """Agent results in this request's messages (keyed by tool_use_id: each counted once)."""
    for message in (req.get("body") or {}).get("messages", []):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for c in content:
            if isinstance(c, dict) and c.get("type") == "tool_result" and c.get("tool_use_id") in agent_ids:
                inner = c.get("content")
                text = inner if isinstance(inner, str) else "".join(b.get("text", "") for b in inner or [] if isinstance(b, dict))
                report = text.split("The report follows:", 1)[-1].split("\nagentId:", 1)[0]
                seen[c["tool_use_id"]] = len(report.strip())


def cost_of(run_dir: Path) -> dict:
    """Turns, tool calls and written tokens of the main thread in one `claude -p` run."""
    turns = calls = written = agent_max = heredoc_max = 0
    agent_ids: set = set()
    seen: dict = {}
    heredocs: list = []
    for line in _lines(run_dir):
        req = json.loads(line)
        if req.get("thread") == "main":
            _answers(req, agent_ids, seen)
        blocks = req.get("reply")
        if req.get("thread") != "main" or not isinstance(blocks, list):
            continue
        turns += 1
        for block in blocks:
            written += tokens(_written(block))
            if block.get("type") != "tool_use":
                continue
            calls += 1
            data = block.get("input", {})
            if block.get("name") == "Agent":
                agent_ids.add(block.get("id"))
                agent_max = max(agent_max, tokens(str(data.get("prompt", ""))))
            command = str(data.get("command", ""))
            if "<<'" in command:
                heredoc_max = max(heredoc_max, tokens(command.split("\n", 1)[-1]))
                heredocs.append(command.split("\n", 1)[-1].rsplit("\n", 1)[0].strip())
    return {
        "turns": turns,
        "calls": calls,
        "written": written,
        "agent_max": agent_max,
        "heredoc_max": heredoc_max,
        "answers": sum(seen.values()) + _echoed(run_dir, heredocs),
    }


def _echoed(run_dir: Path, heredocs: list) -> int:
    """Characters of the heredocs that copy (part of) an agent's answer back to the helper."""
    answers = []
    for line in _lines(run_dir):
        req = json.loads(line)
        if req.get("thread") not in (None, "main") and isinstance(req.get("reply"), list):
            answers += [b.get("text", "") for b in req["reply"] if b.get("type") == "text"]
    return sum(len(h) for h in heredocs if h and any(h in a or (len(a) > 40 and a.strip() in h) for a in answers))


def _run_test(repo: Path, test: str) -> list | None:
    """Run one scripted e2e test in `repo`; its runs' folders in order (None: no such test there)."""
    if not (repo / test.split("::")[0]).exists():
        return None
    if "[" in test:  # a runtime's case: only where the test is parametrized by runtime
        probe = subprocess.run(
            [str(repo / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", test],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            return None
    base = Path(tempfile.mkdtemp(prefix="aether-queen-cost-"))
    proc = subprocess.run(
        [str(repo / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={base}", test],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"queen_cost: {test} failed in {repo}:\n{proc.stdout[-2000:]}")
    runs = sorted(base.rglob("report.txt"), key=lambda p: (len(p.parts), int(p.parent.name.split("-")[-1])))
    return [p.parent for p in runs]


def measure(repo: Path, runtime: str | None) -> list:
    """Run the scripted colony session in `repo` (under `runtime`, where the test takes one) and
    cost each `claude -p` run, in order."""
    runs = _run_test(repo, f"{TEST}[{runtime}]") if runtime else None
    if runs is None:
        runs = _run_test(repo, TEST) if runtime != "mod" else []
    return [(_command_of(d), cost_of(d)) for d in runs or []]


def per_phase(run_dir: Path) -> list:
    """(label, {turns, written}) of one autopilot run, split per phase (see the module's doc)."""
    rows: dict = {}
    label = "start"
    for line in _lines(run_dir):
        req = json.loads(line)
        blocks = req.get("reply")
        if req.get("thread") != "main" or not isinstance(blocks, list):
            continue
        phases = {int(m) for b in blocks if b.get("type") == "tool_use" for m in SCOPE.findall(json.dumps(b.get("input", {})))}
        if phases:
            label = f"phase {min(phases)}"
        elif label != "start" and all(b.get("type") == "text" for b in blocks):
            label = "the last text"
        row = rows.setdefault(label, {"turns": 0, "written": 0})
        row["turns"] += 1
        row["written"] += sum(tokens(_written(b)) for b in blocks)
    return list(rows.items())


def measure_autopilot(repo: Path, runtime: str | None) -> list | None:
    if runtime == "mod":
        runs = _run_test(repo, MOD_AUTOPILOT_TEST)
        mine = [d for d in runs or [] if "mod" in d.parts]
        return per_phase(mine[0]) + [("(no Queen turn)", {"turns": 0, "written": 0})] if mine else None
    runs = _run_test(repo, AUTOPILOT_TEST)
    return None if runs is None else per_phase(runs[0])


def _lines(run_dir: Path) -> list:
    """The run's recorded requests (none: a command served with no model request)."""
    path = run_dir / "requests.jsonl"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _command_of(run_dir: Path) -> str:
    found = re.search(r" -p (/ant:[a-z-]+(?: [^ …\n]*)?)", (run_dir / "report.txt").read_text(encoding="utf-8"))
    if found:
        return found.group(1)[:22]
    for line in _lines(run_dir):
        req = json.loads(line)
        if req.get("thread") == "main":
            for message in (req.get("body") or {}).get("messages", [])[:1]:
                content = message.get("content")
                text = content if isinstance(content, str) else " ".join(c.get("text", "") for c in content if isinstance(c, dict))
                found = re.search(r"/ant:[a-z-]+(?: [^<\n]*)?", text)
                if found:
                    return found.group(0)[:22]
    return run_dir.name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="DIR", help="another checkout (with .venv and tests/e2e deps)")
    args = parser.parse_args(argv)
    sides = [("mod", REPO, "mod"), ("prompts", REPO, "prompts")]
    if args.against:  # the other checkout under both runtimes too
        other = Path(os.path.abspath(args.against))
        sides += [("before mod", other, "mod"), ("before prompts", other, "prompts")]
    results = {name: measure(repo, runtime) for name, repo, runtime in sides}
    print("Queen cost per slash command (main thread; tokens = ceil(bytes / 3.5))\n")
    head = f"{'command':<22}" + "".join(f" {name + ': turns/calls/written/agent/heredoc/answers':>52}" for name, _, _ in sides)
    print(head)
    rows = max(len(r) for r in results.values())
    for i in range(rows):
        cells, label = [], ""
        for name, _, _ in sides:
            if i < len(results[name]):
                label, c = results[name][i]
                cells.append(f"{c['turns']}/{c['calls']}/{c['written']}/{c['agent_max']}/{c['heredoc_max']}/{c['answers']}")
            else:
                cells.append("-")
        print(f"{label:<22}" + "".join(f" {cell:>52}" for cell in cells))
    autopilot = {name: measure_autopilot(repo, runtime) for name, repo, runtime in sides}
    print("\nThe Queen in one unattended /ant:run of three STANDARD phases (turns / written tokens)\n")
    print(f"{'part of the run':<22}" + "".join(f" {name + ': turns/written':>52}" for name, _, _ in sides))
    labels = list(dict.fromkeys(label for rows in autopilot.values() if rows for label, _ in rows))
    for label in labels + ["total"]:
        cells = []
        for name, _, _ in sides:
            rows = dict(autopilot[name] or [])
            if not autopilot[name]:
                cells.append("- (no /ant:run)")
            elif label == "total":
                cells.append(f"{sum(r['turns'] for r in rows.values())}/{sum(r['written'] for r in rows.values())}")
            else:
                cells.append(f"{rows[label]['turns']}/{rows[label]['written']}" if label in rows else "-")
        print(f"{label:<22}" + "".join(f" {cell:>52}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
