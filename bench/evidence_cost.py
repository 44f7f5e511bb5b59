#!/usr/bin/env python3
"""What keeping the evidence costs per tool call (median and p90, milliseconds).

The classic path runs `hooks/evidence.sh` once per Bash/Write/Edit call of the session, as
Claude Code runs a PostToolUse hook (the payload on stdin, the real fixtures Claude Code sent):

- a call of the Queen or of another plugin's agent: the shell alone, no Python;
- an ant's call in a project with no colony: the shell alone;
- a call of a colony ant: the shell, then Python appends one line (the first opens its log).

The mod's path keeps calls in its own memory and hands them to the helper with the next
`aether mod wait`: the helper's cost per call is measured as (a wait with N calls − a wait with
none) / N. A measurement, not a test:

    .venv/bin/python bench/evidence_cost.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "evidence.sh"
FIXTURE = json.loads((REPO / "tests" / "fixtures" / "evidence" / "bash.json").read_text("utf-8"))
AETHER = REPO / "bin" / "aether"


def _payload(agent_type: str | None, agent_id: str) -> str:
    data = dict(FIXTURE)
    data.pop("agent_type", None)
    data.pop("agent_id", None)
    if agent_type:
        data.update(agent_id=agent_id, agent_type=agent_type)
    return json.dumps(data)


def _hook_ms(payload: str, project: Path, runs: int) -> list:
    env = {"PATH": os.environ["PATH"], "CLAUDE_PROJECT_DIR": str(project)}
    times = []
    for n in range(runs):
        call = payload.replace("toolu_e2e_0004", f"toolu_bench_{n}")  # each call its own id (kept once each)
        start = time.perf_counter()
        subprocess.run(["sh", str(HOOK)], input=call, text=True, env=env, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return times


def _figures(times: list) -> str:
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) >= 10 else max(times)
    return f"median {statistics.median(times):6.1f} ms · p90 {p90:6.1f} ms"


def _mod_ms(project: Path, runs: int, per_wait: int) -> list:
    env = {**os.environ, "AETHER_DATA_DIR": str(project / ".aether" / "data"), "CLAUDE_PID": str(os.getpid())}
    env.pop("AETHER_RUNTIME", None)
    call = {"tool": "Bash", "input": {"command": "python3 -m pytest -q"}, "isError": False, "text": "4 passed", "ms": 800}

    def wait(calls: list) -> float:
        body = json.dumps({"refs": [], "seconds": 0, "calls": {"modant": calls}})
        start = time.perf_counter()
        subprocess.run([str(AETHER), "mod", "wait"], input=body, text=True, env=env, capture_output=True, check=False)
        return (time.perf_counter() - start) * 1000

    out = []
    for _ in range(runs):
        empty = wait([])
        full = wait([{**call, "t": time.time()}] * per_wait)
        out.append(max(0.0, full - empty) / per_wait)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="calls timed per case (default 40)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project, elsewhere = Path(tmp) / "colony", Path(tmp) / "plain"
        folder = project / ".aether" / "data" / "evidence"
        folder.mkdir(parents=True)
        elsewhere.mkdir()
        (project / ".aether" / "data" / "spawns.json").write_text('{"version": 1, "spawns": [], "runs": []}')
        (folder / "modant.jsonl").write_text(json.dumps({"spawn": "b1/w2", "agent_id": "modant", "by": "mod", "at": "x"}) + "\n")
        cases = [
            ("hook: a call of the Queen (no agent)", _payload(None, ""), project),
            ("hook: another plugin's agent", _payload("other:agent", "x1"), project),
            ("hook: an ant, no colony here", _payload("ant:builder", "ant0"), elsewhere),
            ("hook: a mod ant's call (the mod keeps it)", _payload("ant:builder", "modant"), project),
            ("hook: a colony ant's call, kept", _payload("ant:builder", "ant1"), project),
        ]
        print(f"Evidence capture, cost per tool call ({args.runs} calls each)")
        for name, payload, where in cases:
            print(f"  {name:<42} {_figures(_hook_ms(payload, where, args.runs))}")
        kept = len((folder / "ant1.jsonl").read_text("utf-8").splitlines()) - 1
        print(f"  (the ant's log kept {kept} calls)")
        mod = _mod_ms(project, max(5, args.runs // 4), 20)
        print(f"  {'mod: helper side, per call (20 a wait)':<42} {_figures(mod)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
