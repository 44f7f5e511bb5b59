#!/usr/bin/env python3
"""What the guard costs per tool call of a colony ant (median and p90, milliseconds), and what it
decides for the write forms models use most — for this checkout and, with `--against DIR`,
another one, side by side in one run.

`hooks/guard.sh` runs as Claude Code runs a PreToolUse hook: the payload on stdin, the project's
folder in CLAUDE_PROJECT_DIR, in a project with a colony. Each call is one ant's: a typical short
command, a long one (a 60-line script on a quoted here-document), and the write forms (a
redirection after a here-document, a subshell, a cd chain, the colony's own files). A
measurement, not a test:

    .venv/bin/python bench/guard_cost.py [--runs N] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
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
    print(f"hooks/guard.sh per call, {args.runs} runs each" + (f" (against: {args.against})" if args.against else ""))
    for what, caste, command in TIMED:
        cells = []
        for name, path in checkouts:
            payload = _payload(caste, command, projects[name])
            _call(path, payload, projects[name])  # warm the file cache
            cells.append(f"{name}: {_figures([_call(path, payload, projects[name])[0] for _ in range(args.runs)])}")
        print(f"  {what:<45} " + "   ".join(cells))
    print("What it decides:")
    for what, caste, command in DECIDED:
        cells = [f"{name}: {_call(path, _payload(caste, command, projects[name]), projects[name])[1]:<20}" for name, path in checkouts]
        print(f"  {what:<45} " + "   ".join(cells))


if __name__ == "__main__":
    main()
