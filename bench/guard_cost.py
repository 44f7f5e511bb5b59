#!/usr/bin/env python3
"""What Aether's hooks cost per tool call of a colony ant (median and p90, milliseconds), and what
the guard decides for the write forms models use most — for this checkout and, with `--against
DIR`, another one, side by side in one run.

Each call is one ant's: a typical short command, a long one (a 60-line script on a quoted
here-document), and the write forms (a redirection after a here-document, a subshell, a cd chain,
the colony's own files). Two runtimes:

- the markdown runtime's shell hooks, as Claude Code runs them (the payload on stdin, the project's
  folder in CLAUDE_PROJECT_DIR, in a project with a colony): `hooks/guard.sh` before the call, and
  `hooks/evidence.sh` after it keeping the call;
- under the mod, everything Aether adds to one call: the guard's decision (a checkout with the
  guard that stays up: asked over its socket, as the mod asks it; one without: guard.sh's Python),
  then Claude Code's command hooks, which still run — guard.sh (stepping aside while that guard
  runs) and evidence.sh (the mod keeps its ants' calls itself). The three are timed one after the
  other for each call, and the sum is the call's figure.

A measurement, not a test:

    .venv/bin/python bench/guard_cost.py [--runs N] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LONG = "python3 - <<'EOF'\n" + "".join(f"print(sum(range({n})))  # line {n}\n" for n in range(60)) + "EOF"
TIMED = [  # (what, caste, command)
    ("typical: a watcher runs the tests", "watcher", "cd {root} && python3 -m pytest -q"),
    ("typical: a builder greps", "builder", "grep -rn 'def add' src tests"),
    ("long: a 60-line script on a here-document", "watcher", LONG),
]
DECIDED = TIMED + [  # the write forms a model uses
    ("heredoc, redirect after (watcher)", "watcher", "cat <<'EOF' > notes.txt\nlooks fine\nEOF"),
    ("heredoc, redirect before (watcher)", "watcher", "cat > notes.txt <<'EOF'\nlooks fine\nEOF"),
    ("python heredoc into a file (watcher)", "watcher", "python3 - <<'EOF' > out.txt\nprint(1)\nEOF"),
    ("subshell write (watcher)", "watcher", "(cd src && echo x > f.py)"),
    ("cd chain then write (watcher)", "watcher", "cd src && cd .. && printf 'x' >> calc.py"),
    ("heredoc into the evidence log (builder)", "builder", "cat <<'EOF' >> .aether/data/evidence/w1.jsonl\n{}\nEOF"),
    ("config.yaml by heredoc (builder)", "builder", "cat <<'EOF' > .aether/config.yaml\nverify:\n  tests: \"true\"\nEOF"),
    ("cd into .aether then write (builder)", "builder", "cd .aether && echo x > config.yaml"),
    ("a builder's own file (builder)", "builder", "cat <<'EOF' > src/calc.py\ndef add(a, b):\n    return a + b\nEOF"),
]


def _project(checkout: Path) -> Path:
    root = Path(tempfile.mkdtemp(prefix="aether-guard-bench-"))
    (root / "src").mkdir()
    (root / ".aether").mkdir()
    env = {**os.environ, "AETHER_NOW": "2026-02-04T10:00:00Z"}
    subprocess.run(
        [str(checkout / "bin" / "aether"), "colony-init", "-"], cwd=root, input="bench", text=True, env=env, check=True, capture_output=True
    )
    spawns = root / ".aether" / "data" / "spawns.json"
    if not spawns.exists():  # evidence.sh keeps an ant's calls only where a colony has spawned
        spawns.write_text('{"version": 1, "spawns": [], "runs": []}', "utf-8")
    return root


def _payload(caste: str, command: str, root: Path) -> str:
    return json.dumps(
        {
            "session_id": "bench",
            "hook_event_name": "PreToolUse",
            "cwd": str(root),
            "agent_id": "a0bench",
            "agent_type": f"ant:{caste}",
            "tool_name": "Bash",
            "tool_input": {"command": command.replace("{root}", str(root))},
        }
    )


def _call(checkout: Path, payload: str, root: Path) -> tuple[float, str]:
    env = {"PATH": os.environ["PATH"], "CLAUDE_PROJECT_DIR": str(root), "HOME": os.environ.get("HOME", "/tmp")}
    start = time.perf_counter()
    done = subprocess.run(["sh", str(checkout / "hooks" / "guard.sh")], input=payload, text=True, env=env, capture_output=True)
    took = (time.perf_counter() - start) * 1000
    decided = "allow (no decision)"
    if done.stdout.strip():
        try:
            decided = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"]
        except (ValueError, KeyError, TypeError):
            decided = "unreadable"
    return took, decided


def _shell(checkout: Path, hook: str, payload: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(["sh", str(checkout / "hooks" / hook)], input=payload, text=True, env=env, capture_output=True)
    return (time.perf_counter() - start) * 1000


def _evidence_payload(caste: str, command: str, root: Path, agent: str, n: int) -> str:
    call = json.loads(_payload(caste, command, root))
    call.update(
        hook_event_name="PostToolUse", agent_id=agent, tool_use_id=f"toolu_bench_{n}", tool_response={"stdout": "4 passed", "stderr": ""}
    )
    return json.dumps(call)


@contextmanager
def _guard_up(checkout: Path, root: Path):
    """The guard that stays up, as the mod starts it (None for a checkout that has none)."""
    if not (checkout / "hooks" / "guard_serve.py").exists():
        yield None
        return
    env = {"PATH": os.environ["PATH"], "CLAUDE_PROJECT_DIR": str(root), "HOME": os.environ.get("HOME", "/tmp")}
    proc = subprocess.Popen(
        ["sh", str(checkout / "hooks" / "guard.sh"), "--serve"], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    proc.stdin.write("bench-token\n")  # as the mod hands it its token
    proc.stdin.close()
    try:
        yield json.loads(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait()


def _under_the_mod(checkout: Path, caste: str, command: str, root: Path, runs: int) -> list:
    """Per call: the guard's decision, then guard.sh and evidence.sh as Claude Code still runs them."""
    sys.path.insert(0, str(checkout / "hooks"))
    try:
        import guard_serve
    except ImportError:
        guard_serve = None
    finally:
        sys.path.pop(0)
    payload = _payload(caste, command, root)
    env = {
        "PATH": os.environ["PATH"],
        "CLAUDE_PROJECT_DIR": str(root),
        "HOME": os.environ.get("HOME", "/tmp"),
        "CLAUDE_PID": str(os.getpid()),
    }
    (root / ".aether" / "data" / "evidence").mkdir(parents=True, exist_ok=True)
    (root / ".aether" / "data" / "evidence" / "modant.jsonl").write_text(
        json.dumps({"spawn": "b1/w1", "agent_id": "modant", "by": "mod"}) + "\n"
    )
    times = []
    with _guard_up(checkout, root) as up:
        if up is not None and guard_serve is not None:
            env["AETHER_MOD_GUARD"] = f"{os.getpid()} {up['pid']} {up['socket']}"
        for n in range(runs + 1):
            start = time.perf_counter()
            if up is not None and guard_serve is not None:
                guard_serve.ask(up["socket"], json.loads(payload))
            took = (time.perf_counter() - start) * 1000
            took += _shell(checkout, "guard.sh", payload, env)
            took += _shell(checkout, "evidence.sh", _evidence_payload(caste, command, root, "modant", n), env)
            if n:  # the first warms the file cache
                times.append(took)
    return times


def _markdown_runtime(checkout: Path, caste: str, command: str, root: Path, runs: int) -> tuple[list, list]:
    """Per call: guard.sh (its Python judges an ant's call) and evidence.sh (its Python keeps it)."""
    payload = _payload(caste, command, root)
    env = {"PATH": os.environ["PATH"], "CLAUDE_PROJECT_DIR": str(root), "HOME": os.environ.get("HOME", "/tmp")}
    guard, evidence = [], []
    for n in range(runs + 1):
        g = _shell(checkout, "guard.sh", payload, env)
        e = _shell(checkout, "evidence.sh", _evidence_payload(caste, command, root, "mdant", n), env)
        if n:
            guard.append(g)
            evidence.append(e)
    return guard, evidence


def _figures(times: list) -> str:
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) >= 10 else max(times)
    return f"median {statistics.median(times):5.1f} ms · p90 {p90:5.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--against", type=Path, help="another checkout (its own `make install` done), measured in the same run")
    args = parser.parse_args()
    checkouts = [("this", REPO)] + ([("against", args.against.resolve())] if args.against else [])
    projects = {name: _project(path) for name, path in checkouts}
    try:
        _measure(args, checkouts, projects)
    finally:  # the temp projects go, however the run ends
        for root in projects.values():
            shutil.rmtree(root, ignore_errors=True)


def _measure(args, checkouts: list, projects: dict) -> None:
    print(f"Per tool call of a colony ant, {args.runs} calls each" + (f" (against: {args.against})" if args.against else ""))
    for what, caste, command in TIMED:
        print(f"  {what}")
        rows: dict = {
            "the markdown runtime: guard.sh": [],
            "the markdown runtime: evidence.sh": [],
            "under the mod: all of Aether's hooks": [],
        }
        for name, path in checkouts:
            guard, evidence = _markdown_runtime(path, caste, command, projects[name], args.runs)
            rows["the markdown runtime: guard.sh"].append(f"{name}: {_figures(guard)}")
            rows["the markdown runtime: evidence.sh"].append(f"{name}: {_figures(evidence)}")
            rows["under the mod: all of Aether's hooks"].append(
                f"{name}: {_figures(_under_the_mod(path, caste, command, projects[name], args.runs))}"
            )
        for row, cells in rows.items():
            print(f"    {row:<40} " + "   ".join(cells))
    print("What it decides:")
    for what, caste, command in DECIDED:
        cells = [f"{name}: {_call(path, _payload(caste, command, projects[name]), projects[name])[1]:<20}" for name, path in checkouts]
        print(f"  {what:<45} " + "   ".join(cells))


if __name__ == "__main__":
    main()
