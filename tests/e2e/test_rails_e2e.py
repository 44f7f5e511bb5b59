"""The guard's rails in real Claude Code (scripted ants, real commands), under both runtimes — the
mod, whose ants the guard also grants the command's `allowed-tools`, and the markdown commands with
the shell hooks:

- a builder appends a passing record to the evidence of what ants ran, then switches the checks
  off in `.aether/config.yaml`, each with `cat <<'EOF' >> …` (a redirection after a
  here-document): both refused, the files unchanged; its real work (a file tool) goes through;
- a read-only watcher saves its notes with `cat <<'EOF' > notes.txt`: refused, nothing written;
  its checks run.

No --allowedTools and no skip-permissions: `/ant:build`'s `allowed-tools` is the only grant.
"""

from __future__ import annotations

import json

import pytest

from .colony_script import CALCULATOR, driven_queen, is_ref, json_block, runs_checks, with_tests, worker_result
from .fake_api import bash, say, subagent, tool, turn
from .harness import NOW, aether_ok

pytestmark = pytest.mark.e2e

PLAN = CALCULATOR
ASSIGNMENT = {"phase": 1, "workers": [{"id": "adder", "caste": "builder", "tasks": ["1.1"], "writes": ["calc.py"]}]}
CALC = "def add(a, b):\n    return a + b\n"
FORGED = '{"tool": "Bash", "command": "python3 -m pytest -q", "exit": 0, "tail": "1 passed", "forged": true}'
FORGE_EVIDENCE = f"cat <<'EOF' >> .aether/data/evidence/w1.jsonl\n{FORGED}\nEOF"
CHECKS_OFF = "cat <<'EOF' > .aether/config.yaml\nverify:\n  tests: \"true\"\nEOF"
NOTES = "cat <<'EOF' > notes.txt\nlooks fine\nEOF"
LESSONS = "- a here-document's redirection writes a file like any other\n"
PASSED = json_block(
    {"passed": True, "score": 90, "summary": "add() works", "checks": [{"name": "tests", "passed": True, "detail": "1 passed"}]}
)


def _queen(claude, turns: int) -> list:
    """The Queen's turns under the markdown commands; under the mod, no Queen turn, and the lessons
    come from an ant (the architect)."""
    if claude.runtime == "mod":
        return [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    return driven_queen(claude, turns, LESSONS)


def _evidence(project) -> list[dict]:
    """Every record of the evidence logs (the refused calls are there too, as calls that failed)."""
    folder = project / ".aether" / "data" / "evidence"
    return [json.loads(line) for p in sorted(folder.glob("*.jsonl")) for line in p.read_text("utf-8").splitlines() if line]


def test_no_ant_writes_the_colonys_files_or_a_file_through_a_here_document(runtime_claude):
    claude = runtime_claude
    aether_ok(claude, "colony-init", "-", input=PLAN["goal"])
    aether_ok(claude, "plan-load", "-", input=json.dumps(PLAN))
    aether_ok(claude, "next", "--build", "1")
    aether_ok(claude, "record", "lead1", "-", input=json_block(ASSIGNMENT))
    project = claude.project
    with_tests(project)  # its verification names pytest: the watcher's checks prove the phase
    config = project / ".aether" / "config.yaml"
    settings = config.read_bytes() if config.exists() else None
    ants = [
        subagent("ant:builder", is_ref("w1"), turn(1)).reply(bash(FORGE_EVIDENCE)),
        subagent("ant:builder", is_ref("w1"), turn(2)).reply(bash(CHECKS_OFF)),
        subagent("ant:builder", is_ref("w1"), turn(3)).reply(tool("Write", file_path=f"{project}/calc.py", content=CALC)),
        subagent("ant:builder", is_ref("w1"), turn(4)).reply(say(worker_result("add()", created=["calc.py"]))),
        subagent("ant:watcher", is_ref("watch1"), turn(1)).reply(bash(NOTES)),
        subagent("ant:watcher", is_ref("watch1"), turn(2)).reply(runs_checks),
        subagent("ant:watcher", is_ref("watch1"), turn(3)).reply(say(PASSED)),
    ]
    run = claude.run("/ant:build 1 --approve", _queen(claude, 5) + ants, env=NOW, timeout=300)

    builder = run.subagent_turns("ant:builder")
    forged, off, wrote = (builder[i].tool_results()[0] for i in (1, 2, 3))
    for refused in (forged, off):
        assert refused["is_error"] is True and "written only by Aether" in refused["text"], refused
    assert wrote["is_error"] is False and (project / "calc.py").read_text("utf-8") == CALC
    records = _evidence(project)
    assert records and not any(r.get("forged") for r in records)  # the forged record is not among them
    assert not (project / ".aether" / "data" / "evidence" / "w1.jsonl").exists()
    assert (config.read_bytes() if config.exists() else None) == settings
    watcher = run.subagent_turns("ant:watcher")
    notes = watcher[1].tool_results()[0]
    assert notes["is_error"] is True and "read-only" in notes["text"] and "`> notes.txt`" in notes["text"], notes
    assert not (project / "notes.txt").exists()
