"""The guard that stays up for a session (hooks/guard_serve.py, started by the mod as
`sh hooks/guard.sh --serve`): where it listens and who may reach it, what it answers, what it
refuses, that it ends with Claude Code; and hooks/guard.sh stepping aside only while it runs for
the very Claude Code that runs the hook. (Its decisions are the guard's: tests/test_guard.py and
the others that opt into `guard_path` run every case through it too.)"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUARD_SH = REPO / "hooks" / "guard.sh"
sys.path.insert(0, str(REPO / "hooks"))
import guard_serve  # noqa: E402

WRITE = {"tool_name": "Bash", "agent_id": "a1", "agent_type": "ant:watcher", "tool_input": {"command": "echo x > notes.txt"}}
QUEEN = {"tool_name": "Bash", "tool_input": {"command": "aether status"}}
NONCE = "t0k3n-only-the-mod-knows"


def _env(project: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "AETHER_MOD"))}
    return {**env, "CLAUDE_PROJECT_DIR": str(project), **extra}


@pytest.fixture
def served(project):
    """`guard.sh --serve` as the mod starts it: (its first line, the process)."""
    proc = subprocess.Popen(
        ["sh", str(GUARD_SH), "--serve"], cwd=project.root, env=_env(project.root), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        proc.stdin.write(f"{NONCE}\n")
        proc.stdin.close()
        started = json.loads(proc.stdout.readline())
        yield started, proc
    finally:
        proc.terminate()  # as Claude Code ends it: the folder goes with it
        proc.wait()


def _denied(answer: dict) -> str | None:
    decision = answer["decision"]
    return decision["permissionDecisionReason"] if decision and decision["permissionDecision"] == "deny" else None


def test_it_says_where_it_listens_in_a_folder_only_its_user_enters(served):
    started, proc = served
    assert list(started) == list(guard_serve.SHAPES["GuardStarted"])
    assert started["pid"] == proc.pid  # guard.sh gave its place to it: Claude Code's own child
    folder = Path(started["socket"]).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_ISSOCK(Path(started["socket"]).stat().st_mode)


def test_it_answers_as_the_hook_does(served, project):
    started, _ = served
    status, answer = guard_serve.ask(started["socket"], WRITE)
    assert status == 200 and "read-only" in _denied(answer)
    allow = {"permissionDecision": "allow", "permissionDecisionReason": "Aether's own helper"}
    assert guard_serve.ask(started["socket"], QUEEN) == (200, {"decision": allow, "nonce": NONCE})  # the mod's token in each answer
    assert guard_serve.ask(started["socket"], {"tool_name": "Read", "tool_input": {}}) == (200, {"decision": None, "nonce": NONCE})
    hook = subprocess.run(
        ["sh", str(GUARD_SH)], input=json.dumps(WRITE), env=_env(project.root), capture_output=True, text=True, check=True
    )
    assert json.loads(hook.stdout)["hookSpecificOutput"]["permissionDecisionReason"] == _denied(answer)


@pytest.mark.parametrize(
    "body, status",
    [(b"[1, 2]", 400), (b"not json", 400), (b"\xff\xfe", 400), (b'"a string"', 400)],
)
def test_a_body_that_is_not_a_call_is_refused_and_it_goes_on(served, body, status):
    started, _ = served
    code, answer = guard_serve.ask(started["socket"], body)
    assert code == status and answer["error"]
    assert "read-only" in _denied(guard_serve.ask(started["socket"], WRITE)[1])  # still answering


def test_a_wrong_path_or_an_oversized_body_is_refused(served):
    started, _ = served
    connection = guard_serve._UnixConnection(started["socket"], 10)
    connection.request("POST", "/elsewhere")  # no body: the server may close before a body sent after the headers (EPIPE)
    assert connection.getresponse().status == 404
    connection.close()
    connection = guard_serve._UnixConnection(started["socket"], 10)
    connection.putrequest("POST", "/decide")
    connection.putheader("Content-Length", str(guard_serve.MAX_BODY + 1))
    connection.endheaders()
    assert connection.getresponse().status == 413
    connection.close()


def test_calls_asked_at_once_each_get_their_own_answer(served):
    started, _ = served
    answers: dict = {}

    def ask(i: int) -> None:
        event = WRITE if i % 2 else QUEEN
        answers[i] = guard_serve.ask(started["socket"], event)[1]["decision"]["permissionDecision"]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert answers == {i: ("deny" if i % 2 else "allow") for i in range(64)}


def test_told_to_end_it_ends_and_leaves_no_folder(served):
    started, proc = served
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert not Path(started["socket"]).parent.exists()


def test_it_ends_when_claude_code_is_gone(project):
    """Its parent killed (Claude Code ended without a word): it notices and ends."""
    parent = subprocess.Popen(
        ["sh", "-c", f'sh "{GUARD_SH}" --serve </dev/null & wait'],
        cwd=project.root,
        env=_env(project.root),
        stdout=subprocess.PIPE,
        text=True,
    )
    started = json.loads(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _alive(started["pid"]):
        time.sleep(0.1)
    assert not _alive(started["pid"])
    assert not Path(started["socket"]).parent.exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped by whoever adopted it) has ended
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


# ---------------------------------------------------------------- guard.sh steps aside


def _hook(project, event: dict = WRITE, **env: str) -> str:
    """guard.sh run as Claude Code runs the hook: what it prints."""
    done = subprocess.run(
        ["sh", str(GUARD_SH)], input=json.dumps(event), env=_env(project.root, **env), capture_output=True, text=True, check=True
    )
    return done.stdout


def test_guard_sh_steps_aside_while_the_guard_that_stays_up_runs_for_this_claude_code(project, served):
    started, proc = served
    assert _hook(project, CLAUDE_PID="4242", AETHER_MOD_GUARD=f"4242 {proc.pid} {started['socket']}") == ""


@pytest.mark.parametrize(
    "env",
    [
        {},  # no mod
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": ""},  # the mod's own one-shot ask
        {"CLAUDE_PID": "4243", "AETHER_MOD_GUARD": "4242 {live} {socket}"},  # another Claude Code's guard (a nested session)
        {"AETHER_MOD_GUARD": "4242 {live} {socket}"},  # no Claude Code named
        {"AETHER_MOD_GUARD": "/ {live} {socket}"},
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 {dead} {socket}"},  # the guard has ended
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 {live} {tmp}/none.sock"},  # its socket gone
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 {live} {tmp}"},  # not a socket
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 -1 {socket}"},  # `kill -0 -1` reaches every process
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 {live}x {socket}"},
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 0 {socket}"},
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 {live}"},  # no socket named
        {"CLAUDE_PID": "", "AETHER_MOD_GUARD": " {live} {socket}"},
    ],
)
def test_guard_sh_judges_unless_that_guard_runs_for_this_claude_code(project, served, tmp_path, env):
    started, proc = served
    dead = subprocess.Popen(["true"])
    dead.wait()
    env = {k: v.format(live=proc.pid, dead=dead.pid, socket=started["socket"], tmp=tmp_path) for k, v in env.items()}
    out = _hook(project, **env)
    assert "read-only" in json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"], env


def test_a_refused_body_closes_its_connection(served):
    """What was left unread of a refused request is never read as the next one."""
    started, _ = served
    connection = guard_serve._UnixConnection(started["socket"], 10)
    connection.putrequest("POST", "/decide")
    connection.putheader("Content-Length", str(guard_serve.MAX_BODY + 1))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413 and response.getheader("Connection") == "close"
    connection.close()


def test_the_folders_of_guards_killed_without_a_word_go_when_the_next_starts(project, tmp_path, monkeypatch):
    monkeypatch.setattr(guard_serve.tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    for name, pid in (("aether-guard-old", dead.pid), ("aether-guard-live", os.getpid())):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pid").write_text(str(pid))
    (tmp_path / "aether-guard-nopid").mkdir()
    server, path = guard_serve.open_server()
    server.server_close()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert "aether-guard-old" not in left and {"aether-guard-live", "aether-guard-nopid"} <= set(left)
    assert Path(path).parent.name in left


def test_python_starts_without_site_only_where_the_venvs_packages_are_certain(project, tmp_path):
    """A venv with a second site-packages (a leftover of another Python) or one that also sees the
    system's: Python starts with `site` and the guard still reads the command."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(REPO / ".venv" / "bin" / "python")
    real = next((REPO / ".venv" / "lib").glob("python3*/site-packages"))
    (venv / "lib" / real.parent.name).mkdir(parents=True)
    (venv / "lib" / real.parent.name / "site-packages").symlink_to(real)
    (venv / "lib" / "python3.99" / "site-packages").mkdir(parents=True)  # a leftover, empty, found last
    (venv / "pyvenv.cfg").write_text((REPO / ".venv" / "pyvenv.cfg").read_text())
    ls = {**WRITE, "tool_input": {"command": "ls"}}
    assert _hook(project, ls, AETHER_VENV=str(venv)) == ""  # read and let through (not "the shell parser is not installed")
    assert "read-only" in _hook(project, WRITE, AETHER_VENV=str(venv))
