"""The plugin's PreToolUse guard: only the Queen runs aether; read-only castes don't write."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[1] / "hooks" / "guard.py"
sys.path.insert(0, str(GUARD.parent))
import guard  # noqa: E402


def bash(command, agent=None):
    event = {"tool_name": "Bash", "tool_input": {"command": command}}
    if agent:
        event.update(agent_id="a1", agent_type=agent)
    return guard.decide(event)


@pytest.mark.parametrize("command", [
    "aether status",
    "cd src && aether event-add x y z",
    "echo hi | aether pheromone-emit FOCUS -",
    "FOO=1 aether status",
    "env -i aether status",
    "/opt/plugin/bin/aether status",
    "bash -c 'aether status'",
    "echo $(aether status)",
    "echo `aether version`",
    "ls; aether version",
    "xargs aether event-add < list",
])
def test_subagents_may_not_run_aether(command):
    assert "Only the Queen" in bash(command, "ant:builder")


@pytest.mark.parametrize("command", [
    "grep -r aether src/",
    "cat docs/aether.md",
    "echo 'aether is a word'",
    "ls .aether/data",
])
def test_mentioning_aether_is_not_running_it(command):
    assert bash(command, "ant:builder") is None


def test_the_queen_runs_anything():
    assert bash("aether status") is None
    assert bash("rm -rf build") is None


def test_other_plugins_agents_are_not_judged():
    assert bash("aether status", "other:agent") is None


@pytest.mark.parametrize("command", [
    "echo x > file.txt", "cat a >> b", "rm -f x", "mv a b", "sed -i s/a/b/ f",
    "git commit -m x", "git -C . add .", "find . -name '*.pyc' -delete", "touch x",
    "python -c 1 && tee out.log",
])
def test_read_only_castes_cannot_write_with_bash(command):
    assert "read-only" in bash(command, "ant:watcher")


@pytest.mark.parametrize("command", [
    "pytest -q 2>&1", "ls -la", "git diff HEAD~1", "git log --oneline", "grep -rn TODO . 2>/dev/null",
    "find . -name '*.py'", "python -m pytest > /dev/null",
])
def test_read_only_castes_can_inspect_and_run_tests(command):
    assert bash(command, "ant:watcher") is None


def test_builders_write(tmp_path):
    assert bash("echo x > f && git add f", "ant:builder") is None
    assert guard.decide({"tool_name": "Write", "agent_type": "ant:builder",
                         "tool_input": {"file_path": "src/x.py"}}) is None


def test_file_tools(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    write = lambda agent, path: guard.decide(  # noqa: E731
        {"tool_name": "Write", "agent_type": agent, "tool_input": {"file_path": path}})
    assert "read-only" in write("ant:watcher", "src/x.py")
    assert write("ant:scout", ".aether/research/auth.md") is None
    assert write("ant:scout", str(tmp_path / ".aether/research/db.md")) is None
    assert "only under" in write("ant:scout", "src/x.py")
    assert "only under" in write("ant:scout", ".aether/research/../../etc/passwd")


def test_hook_protocol_end_to_end():
    event = {"tool_name": "Bash", "agent_type": "ant:scout", "agent_id": "x",
             "tool_input": {"command": "aether status"}}
    proc = subprocess.run([sys.executable, str(GUARD)], input=json.dumps(event),
                          capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and out["hookEventName"] == "PreToolUse"
    allowed = subprocess.run([sys.executable, str(GUARD)], input="{}", capture_output=True, text=True)
    assert allowed.returncode == 0 and allowed.stdout == ""
    garbage = subprocess.run([sys.executable, str(GUARD)], input="not json", capture_output=True, text=True)
    assert garbage.returncode == 0 and garbage.stdout == ""
