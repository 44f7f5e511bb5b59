"""The approval gate: only a person at a terminal approves a fix plan. The helper's own signals
(terminals, Claude Code's variables here and in every parent, a claude parent) and the guard
hook's refusals of the known ways around it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LAUNCHER

from aether.bugs import approval
from aether.core.exceptions import AetherError

from helpers.bugs import LOW, set_config
from helpers.terminal import at_a_terminal

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hooks"))
import guard  # noqa: E402

UNDER_CLAUDE_CODE = bool(approval.observe()["claude_code_parents"] or approval.observe()["claude_code_env_in_parents"])
needs_a_clean_runner = pytest.mark.skipif(UNDER_CLAUDE_CODE, reason="these tests run under Claude Code here: the gate refuses them too")


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in approval.CLAUDE_CODE_VARS}
    return {**env, **extra}


# ---------------------------------------------------------------- the helper's signals


def fake_proc(tmp_path, chain: list) -> str:
    """A /proc with a parent chain: [(pid, name, argv, environ dict)], nearest first."""
    root = tmp_path / "proc"
    for i, (pid, name, argv, env) in enumerate(chain):
        ppid = chain[i + 1][0] if i + 1 < len(chain) else 1
        d = root / str(pid)
        d.mkdir(parents=True)
        (d / "stat").write_text(f"{pid} ({name}) S {ppid} 1 1 0 -1\n")
        (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (d / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in env.items()))
    return str(root)


def test_parents_are_read_from_proc(tmp_path, monkeypatch):
    proc = fake_proc(
        tmp_path,
        [
            (50, "bash", ["/bin/bash", "-c", "x"], {"CLAUDECODE": "1", "PATH": "/bin"}),
            (40, "claude", ["claude", "-p", "hi"], {}),
            (30, "sshd: ana (pri)", ["sshd"], {"CLAUDE_CODE_ENTRYPOINT": "0"}),
        ],
    )
    monkeypatch.setattr(os, "getppid", lambda: 50)
    parents = approval._parents(proc)
    assert [p["pid"] for p in parents] == [50, 40, 30]
    assert parents[0]["env"] == ["CLAUDECODE"] and parents[2]["env"] == []  # "0" is off
    assert [approval._is_claude(p) for p in parents] == [False, True, False]
    node = {"pid": 9, "name": "node", "argv": ["node", "/x/@anthropic-ai/claude-code/cli.js"], "env": []}
    assert approval._is_claude(node)


def test_a_loop_or_a_vanished_parent_ends_the_walk(tmp_path, monkeypatch):
    proc = fake_proc(tmp_path, [(7, "sh", ["sh"], {})])
    (Path(proc) / "7" / "stat").write_text("7 (sh) S 7 1 1\n")  # its own parent
    monkeypatch.setattr(os, "getppid", lambda: 7)
    assert len(approval._parents(proc)) == 1
    monkeypatch.setattr(os, "getppid", lambda: 999)
    assert approval._parents(proc) == []


@pytest.mark.parametrize(
    "signals, says",
    [
        ({"env": {"CLAUDECODE": "1"}}, "Claude Code's variables are set (CLAUDECODE)"),
        ({"env": {"CLAUDE_CODE_ENTRYPOINT": "cli"}}, "CLAUDE_CODE_ENTRYPOINT"),
        ({"parent_env": ["CLAUDECODE"]}, "a parent process runs with Claude Code's variables"),
        ({"claude_parent": True}, "it runs under Claude Code"),
        ({"tty": (False, True)}, "not both a terminal"),
        ({"tty": (True, False)}, "not both a terminal"),
    ],
)
def test_each_signal_alone_refuses(monkeypatch, signals, says):
    for var in approval.CLAUDE_CODE_VARS:
        monkeypatch.delenv(var, raising=False)
    for k, v in signals.get("env", {}).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(approval, "_terminals", lambda: signals.get("tty", (True, True)))
    parent = {
        "pid": 5,
        "name": "claude" if signals.get("claude_parent") else "bash",
        "argv": ["bash"],
        "env": signals.get("parent_env", []),
    }
    monkeypatch.setattr(approval, "_parents", lambda proc="/proc": [parent])
    with pytest.raises(AetherError) as caught:
        approval.require_human("b")
    assert caught.value.code == "approval_requires_human" and says in caught.value.message
    assert caught.value.details["signals"]["parents_checked"] == 1


def test_a_person_at_a_terminal_is_recorded_with_the_signals(monkeypatch):
    for var in approval.CLAUDE_CODE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(approval, "_terminals", lambda: (True, True))
    monkeypatch.setattr(approval, "_parents", lambda proc="/proc": [{"pid": 5, "name": "bash", "argv": ["-bash"], "env": []}])
    how = approval.require_human("b")
    assert how == {
        "given_via": "terminal",
        "signals": {
            "stdin_tty": True,
            "stderr_tty": True,
            "claude_code_env": [],
            "claude_code_env_in_parents": [],
            "claude_code_parents": [],
            "parents_checked": 1,
        },
    }
    rec = approval.record("b", {"summary": "s"}, "ana", "2026-03-01T10:00:00Z", None, how)
    assert rec["given_via"] == "terminal" and rec["signals"]["stdin_tty"] is True


# ---------------------------------------------------------------- real processes


@needs_a_clean_runner
def test_a_person_at_a_terminal_approves_and_status_shows_how(bugs):
    bugs.drive("a", "planned")
    code, out, err = at_a_terminal([str(LAUNCHER), "bug", "approve", "a", "--by", "ana"], bugs.p.root, clean_env())
    assert code == 0, err
    rec = json.loads(out)["result"]["approval"]
    assert rec["given_via"] == "terminal" and rec["signals"]["stdin_tty"] and rec["signals"]["stderr_tty"]
    assert rec["signals"]["parents_checked"] >= 1 and rec["signals"]["claude_code_parents"] == []
    assert bugs.audit()[0]["given_via"] == "terminal"
    status = bugs.p.sh("bug", "status", "a")
    assert "Approved by ana" in status.stdout and "(given via terminal)" in status.stdout
    assert bugs.p.sh("bug", "status", "a", "--json").json["approval"]["given_via"] == "terminal"


def test_piped_stdin_without_claude_code_is_refused(bugs):
    bugs.drive("a", "planned")
    proc = bugs.p.sh("bug", "approve", "a", env={"CLAUDECODE": ""})
    assert proc.code == 2 and proc.error["code"] == "approval_requires_human"
    assert "not both a terminal" in proc.error["error"] and bugs.phase("a") == "planned"


@needs_a_clean_runner
def test_hole_6_unsetting_the_variable_does_not_approve(bugs):
    # What a model's Bash call does: CLAUDECODE=1 in its shell, `env -u CLAUDECODE` for aether.
    bugs.drive("a", "planned")
    proc = subprocess.run(
        ["sh", "-c", f"env -u CLAUDECODE {LAUNCHER} bug approve a; exit $?"],
        cwd=bugs.p.root,
        env=clean_env(CLAUDECODE="1"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    env = json.loads(proc.stderr)
    assert env["code"] == "approval_requires_human" and env["signals"]["claude_code_env_in_parents"] == ["CLAUDECODE"]
    assert bugs.phase("a") == "planned" and bugs.audit() == []


@needs_a_clean_runner
def test_a_pseudo_terminal_and_no_variables_under_a_claude_process_is_refused(bugs, tmp_path):
    bugs.drive("a", "planned")
    claude = tmp_path / "bin" / "claude"  # a process named claude, as Claude Code's is
    claude.parent.mkdir()
    claude.symlink_to("/bin/sh")
    code, out, err = at_a_terminal([str(claude), "-c", f"env -u CLAUDECODE {LAUNCHER} bug approve a; exit $?"], bugs.p.root, clean_env())
    assert code == 2 and out == ""
    env = json.loads(err.strip().splitlines()[-1])
    assert env["code"] == "approval_requires_human" and env["signals"]["claude_code_parents"]
    assert env["signals"]["stdin_tty"] and env["signals"]["stderr_tty"]
    assert bugs.phase("a") == "planned" and bugs.audit() == []


@needs_a_clean_runner
def test_script_gives_a_terminal_but_not_an_approval(bugs):
    bugs.drive("a", "planned")
    proc = subprocess.run(
        ["sh", "-c", f"script -qec '{LAUNCHER} bug approve a' /dev/null; exit $?"],
        cwd=bugs.p.root,
        env=clean_env(CLAUDECODE="1"),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0 and "approval_requires_human" in proc.stdout + proc.stderr
    assert bugs.phase("a") == "planned" and bugs.audit() == []


def test_auto_approve_low_risk_still_works_and_says_so(bugs):
    set_config(bugs.p, auto_approve_low_risk=True)
    bugs.drive("a", "planning")
    assert bugs.record("a", "fix-plan", LOW).json["phase"] == "APPROVED"
    state = bugs.state("a")
    assert state["phase"] == "approved"
    assert state["approval_record"]["approved_by"] == "auto:low_risk"
    assert state["approval_record"]["given_via"] == "auto_approve_low_risk"
    assert bugs.ok("fix", "a", "--dry-run")["dry_run"] is True


# ---------------------------------------------------------------- the guard hook

BYPASSES = [
    "env -u CLAUDECODE aether bug approve b1",
    "env -u CLAUDECODE -u CLAUDE_CODE_ENTRYPOINT aether bug approve b1",
    "env --unset=CLAUDECODE aether bug approve b1",
    "env -i PATH=/usr/bin:/bin aether bug approve b1",
    "unset CLAUDECODE; aether bug approve b1",
    "CLAUDECODE= aether bug approve b1",
    "CLAUDECODE=0 aether bug approve b1",
    "export CLAUDECODE=; aether bug approve b1",
    "export CLAUDECODE=0 && aether bug status b1",
    "script -qec 'aether bug approve b1' /dev/null",
    "script -qc \"aether bug app''rove b1\" /dev/null",
    "expect -c 'spawn aether bug approve b1; interact'",
    "unbuffer aether bug approve b1",
    "socat - EXEC:'aether bug approve b1',pty",
    "python3 -c \"import pty; pty.spawn(['aether', 'bug', 'approve', 'b1'])\"",
    "ssh -t localhost aether bug approve b1",
    'aether bug app""rove b1',
    "aether bug a\\pprove b1",
    "aether bug $'\\x61pprove' b1",
    "aether bug $'\\141\\160\\160rove' b1",
    "W=approve; aether bug $W b1",
    'W=approve; aether bug "${W}" b1',
    "a=appr; b=ove; aether bug $a$b b1",
    'aether bug "$(echo approve)" b1',
    'eval "aether bug approve b1"',
    "A=aether; $A bug approve b1",
    "A=ae;B=ther;C=appr;D=ove; $A$B bug $C$D b1",
    'ae\'\'ther bug a"p"p"r"o"v"e b1',
    "echo approve | xargs aether bug",
    "setsid -f aether bug approve b1",
    "bash -c 'unset CLAUDECODE; exec aether bug approve b1'",
]
ALLOWED = [
    "aether bug status b1",
    "aether bug approve --help",
    "aether plan-waves --approve",
    "echo 'run aether bug approve b1 yourself'",
    "echo $CLAUDECODE",
    "aether status",
    "grep -rn approve src/",
    "aether bug fix b1 --dry-run",
]


def denial(event: dict) -> str | None:
    """The guard's reason to deny the call (None: not denied; the Queen's own `aether` calls are allowed)."""
    decision = guard.decide(event)
    return decision["permissionDecisionReason"] if decision and decision["permissionDecision"] == "deny" else None


def entry(command: str) -> str | None:
    event = {"tool_name": "Bash", "tool_input": {"command": command, "description": "a step"}}
    proc = subprocess.run(["sh", str(REPO / "hooks" / "guard.sh")], input=json.dumps(event), capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout)["hookSpecificOutput"] if proc.stdout else {}
    return out["permissionDecisionReason"] if out.get("permissionDecision") == "deny" else None


@pytest.mark.parametrize("command", BYPASSES)
def test_the_guard_refuses_each_way_around_the_gate(command):
    for agent in (None, "ant:builder"):
        event = {"tool_name": "Bash", "tool_input": {"command": command}}
        if agent:
            event["agent_type"] = agent
        assert "the user's decision" in (denial(event) or ""), (command, agent)
    assert "the user's decision" in (entry(command) or "")  # the sh entry hands it to Python


@pytest.mark.parametrize("command", ALLOWED)
def test_the_guard_lets_the_queen_show_and_build(command):
    assert denial({"tool_name": "Bash", "tool_input": {"command": command}}) is None
    assert entry(command) is None
