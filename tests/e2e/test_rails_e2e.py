"""The guard's rails in real Claude Code (scripted ants, real commands), under both runtimes — the
mod, whose ants the guard also grants the command's `allowed-tools`, and the markdown commands with
the shell hooks:

- a builder appends a passing record to the evidence of what ants ran, then switches the checks
  off in `.aether/config.yaml`, each with `cat <<'EOF' >> …` (a redirection after a
  here-document): both refused, the files unchanged; its real work (a file tool) goes through;
- a read-only watcher saves its notes with `cat <<'EOF' > notes.txt`: refused, nothing written;
  its checks run.

Under the mod the guard is one process for the whole session, asked in Claude Code's own process
(hooks/mod_guard.ts), and hooks/guard.sh steps aside: no Python starts per call. Under the markdown
runtime guard.sh judges each call with a Python of its own, as it does where no mod loads; and
under the mod, when the guard that stays up cannot start, guard.sh judges each call the same way.

No --allowedTools and no skip-permissions: `/ant:build`'s `allowed-tools` is the only grant.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .colony_script import CALCULATOR, driven_queen, is_ref, json_block, runs_checks, with_tests, worker_result
from .fake_api import bash, say, subagent, tool, turn
from .harness import NOW, REPO, aether_ok

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


def _counting_python(folder: Path, refuse: str = "") -> tuple[dict, Path]:
    """An AETHER_VENV whose python notes each start (its arguments) and runs the repository's venv;
    one whose arguments name `refuse` exits 1 instead."""
    (folder / "bin").mkdir(parents=True)
    log = folder / "starts.log"
    python = folder / "bin" / "python"
    refusal = f'case "$*" in *{refuse}*) exit 1 ;; esac\n' if refuse else ""
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\n{refusal}exec "{REPO}/.venv/bin/python" "$@"\n', "utf-8")
    python.chmod(0o755)
    return {"AETHER_VENV": str(folder)}, log


def _starts(log: Path, module: str) -> int:
    """How many Pythons started to run `module` (`guard`: one call judged; `guard_serve`: the guard that stays up)."""
    return sum(f"import {module};" in line for line in log.read_text("utf-8").splitlines()) if log.exists() else 0


def test_no_ant_writes_the_colonys_files_or_a_file_through_a_here_document(runtime_claude, tmp_path):
    python, starts = _counting_python(tmp_path / "venv")
    _rails_hold(runtime_claude, python)
    if runtime_claude.runtime == "mod":  # one guard for the session; no Python per call
        assert (_starts(starts, "guard_serve"), _starts(starts, "guard")) == (1, 0), starts.read_text("utf-8")
        # the time each call spent in its PreToolUse hooks, measured by the mod, kept and drawn
        timed = [r for r in _evidence(runtime_claude.project) if r.get("tool")]
        assert timed and all(isinstance(r.get("hooks_ms"), int) and r["hooks_ms"] >= 0 for r in timed), timed
        drawn = aether_ok(runtime_claude, "status", "--timeline", "--json")
        assert any(a["hooks_ms"] is not None for a in drawn["ants"]), drawn
    else:  # each of the ants' calls judged by a Python of its own
        assert (_starts(starts, "guard_serve"), _starts(starts, "guard") >= 6) == (0, True), starts.read_text("utf-8")
        drawn = aether_ok(runtime_claude, "status", "--timeline", "--json")
    # the helper's steps for the run (next, the answers, the Agent hooks), counted in their writes
    assert drawn["helper"] and drawn["helper"]["steps"] >= 3 and drawn["helper"]["ms"] > 0, drawn
    assert f"in {drawn['helper']['steps']} step(s)" in drawn["text"].splitlines()[0]
    print(drawn["text"])  # the timeline as the person sees it (pytest -s shows it)


def test_under_the_mod_a_guard_that_cannot_stay_up_is_run_per_call_and_holds_the_same(claude_mod, tmp_path):
    python, starts = _counting_python(tmp_path / "venv", refuse="guard_serve")
    _rails_hold(claude_mod, python)
    # tried once (again only 30 s later), then every call judged by guard.sh run once
    assert (_starts(starts, "guard_serve"), _starts(starts, "guard") >= 6) == (1, True), starts.read_text("utf-8")


def _rails_hold(claude, python: dict) -> None:
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
    run = claude.run("/ant:build 1 --approve", _queen(claude, 5) + ants, env={**NOW, **python}, timeout=300)

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
