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


# ---------------------------------------------------------------- Bug Bash agents and approval


REPRO = ".venv/bin/python - <<'EOF'\nfrom calc import last_n\nprint(last_n([1, 2, 3], 2) > [1])\nEOF"


@pytest.mark.parametrize("command", [
    ".venv/bin/python -m pytest tests/test_calc.py -v --tb=long 2>&1", REPRO,
    "python3 -c 'print(1 > 0)'", "grep -rn last_n .", "git log --oneline -10",
])
def test_the_bug_researcher_runs_reproductions(command):
    assert bash(command, "ant:bug-researcher") is None


@pytest.mark.parametrize("command", [
    "cat > repro.py <<'EOF'\nprint(1)\nEOF", "echo x >> calc.py", "sed -i s/-n - 1/-n/ calc.py",
    "git checkout -- calc.py", "rm -f tests/test_calc.py", REPRO + "\nrm calc.py",
    "python - <<EOF\nx > 1\nEOF",  # an unquoted delimiter: the body is judged as shell
])
def test_the_bug_researcher_changes_no_file(command):
    reason = bash(command, "ant:bug-researcher")
    assert "read-only" in reason and "from stdin" in reason


@pytest.mark.parametrize("agent", ["ant:bug-researcher", "ant:root-cause-analyzer", "ant:fix-planner"])
def test_bug_agents_may_not_run_aether_or_write(agent):
    assert "Only the Queen" in bash("aether bug record b reproduction -", agent)
    assert "read-only" in guard.decide({"tool_name": "Write", "agent_type": agent,
                                        "tool_input": {"file_path": "calc.py"}})


@pytest.mark.parametrize("command", [
    "grep -rn 'def last_n' .", "find . -name '*.py' | xargs grep -l last_n", "ls -la src",
    "cat calc.py", "head -n 20 calc.py", "sed -n '1,20p' calc.py", "git log --oneline -5",
    "git blame -L 1,3 calc.py", "git show HEAD:calc.py | head", "wc -l calc.py", "cd src && ls",
])
@pytest.mark.parametrize("agent", ["ant:root-cause-analyzer", "ant:fix-planner"])
def test_the_analyzer_and_planner_search_and_read(agent, command):
    assert bash(command, agent) is None


@pytest.mark.parametrize("command, word", [
    (".venv/bin/python -m pytest tests/", "python"), ("python3 -c 'import calc'", "python3"),
    ("pytest -q", "pytest"), ("sh -c 'grep x .'", "sh"), ("grep x . && node a.js", "node"),
    ("sed 's/a/b/' calc.py", "sed without -n"), ("find . -exec cat {} +", "find -exec"),
    ("git checkout -- calc.py", "git checkout"), ("ls\nmake test", "make"),
    ("echo $(python3 -c 1)", "python3"), ("awk '{print}' calc.py", "awk"),
])
def test_the_analyzer_and_planner_run_nothing_else(command, word):
    for agent in ("ant:root-cause-analyzer", "ant:fix-planner"):
        reason = bash(command, agent)
        assert reason and f"`{word}` is refused" in reason and "only reads and searches" in reason


@pytest.mark.parametrize("command", [
    "aether bug approve b1", "aether bug approve b1 --by ana", "aether --pretty bug approve b1",
    "cd . && aether bug approve b1", "/opt/ant/bin/aether bug approve b1",
    "aether bug status b1; aether bug approve b1", "bash -c 'aether bug approve b1'",
])
def test_nobody_in_claude_code_approves_a_fix_plan(command):
    for agent in (None, "ant:builder", "other:agent"):
        assert "the user's decision" in bash(command, agent)


@pytest.mark.parametrize("command", [
    "aether bug status b1", "aether bug approve --help", "echo 'run aether bug approve b1 yourself'",
    "aether bug fix b1 --dry-run",
])
def test_the_queen_may_show_what_approval_would_need(command):
    assert bash(command) is None


def test_a_newline_separates_commands():
    assert "read-only" in bash("ls\nrm -rf src", "ant:watcher")
    assert "Only the Queen" in bash("ls\naether status", "ant:builder")


@pytest.mark.parametrize("command, kept", [
    (REPRO, ".venv/bin/python - <<'EOF'"),
    ("python - <<-'EOF'\n\tx > 1\n\tEOF", "python - <<-'EOF'"),
    ('cat <<"END"\na > b\nEND\n', 'cat <<"END"'),
])
def test_a_quoted_heredoc_body_is_data(command, kept):
    assert guard.shell_code(command) == kept


@pytest.mark.parametrize("command", [
    "python - <<EOF\nx\nEOF",                       # unquoted: the body expands $(…)
    "python - <<'EOF'\nx\nEOF\nrm -rf src",           # more commands after the body
    "python - <<'EOF'\nEOF\nrm x\nEOF",               # the body ends early
    "echo \"<<'X'\"\nrm -rf src\nX",                 # the operator is inside quotes
    "cat <<'A' <<'B'\nx\nA\ny\nB",                   # two here-documents
    "python - <<'EOF' $(\nx\nEOF",                    # an open substitution
    "single line <<'EOF'",
])
def test_anything_else_is_judged_whole(command):
    assert guard.shell_code(command) == command


@pytest.mark.parametrize("tool_input", [None, "aether bug approve b1", ["x"], 7])
def test_odd_tool_input_is_not_judged(tool_input):
    event = {"tool_name": "Bash", "agent_type": "ant:fix-planner", "tool_input": tool_input}
    assert guard.decide(event) is None


# ---------------------------------------------------------------- the shell entry (hooks.json runs it)

ENTRY = GUARD.with_name("guard.sh")


def hook(event: dict, path: str | None = None):
    env = {"PATH": path} if path is not None else None
    proc = subprocess.run(["sh", str(ENTRY)], input=json.dumps(event), capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    return json.loads(proc.stdout)["hookSpecificOutput"] if proc.stdout else None


@pytest.mark.parametrize("event", [
    {"tool_name": "Bash", "tool_input": {"command": "rm -rf build && aether status"}},
    {"tool_name": "Write", "tool_input": {"file_path": "x.py", "content": "print(1)\n"}},
    {"tool_name": "Bash", "agent_type": "other:agent", "tool_input": {"command": "aether status"}},
])
def test_calls_no_rule_concerns_pass_without_python(event, tmp_path):
    (tmp_path / "python3").write_text("#!/bin/sh\necho started >&2\nexit 9\n")
    (tmp_path / "python3").chmod(0o755)
    assert hook(event, f"{tmp_path}:/usr/bin:/bin") is None  # a started python3 would fail it
    assert guard.decide(event) is None  # and guard.py agrees


@pytest.mark.parametrize("event, says", [
    ({"tool_name": "Bash", "tool_input": {"command": "aether bug approve b1"}}, "the user's decision"),
    ({"tool_name": "Bash", "agent_id": "a1", "agent_type": "ant:builder",
      "tool_input": {"command": "aether status"}}, "Only the Queen"),
    ({"tool_name": "Edit", "agent_id": "a1", "agent_type": "ant:watcher",
      "tool_input": {"file_path": "x.py"}}, "read-only"),
])
def test_the_shell_entry_hands_ours_to_the_guard(event, says):
    out = hook(event)
    assert out["permissionDecision"] == "deny" and says in out["permissionDecisionReason"]
