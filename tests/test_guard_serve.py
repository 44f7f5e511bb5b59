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


def _env(project: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "AETHER_MOD"))}
    return {**env, "CLAUDE_PROJECT_DIR": str(project), **extra}


@pytest.fixture
def served(project):
    """`guard.sh --serve` as the mod starts it: (its first line, the process)."""
    proc = subprocess.Popen(["sh", str(GUARD_SH), "--serve"], cwd=project.root, env=_env(project.root), stdout=subprocess.PIPE, text=True)
    try:
        started = json.loads(proc.stdout.readline())
        yield started, proc
    finally:
        proc.kill()
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
    assert guard_serve.ask(started["socket"], QUEEN) == (
        200,
        {"decision": {"permissionDecision": "allow", "permissionDecisionReason": "Aether's own helper"}},
    )
    assert guard_serve.ask(started["socket"], {"tool_name": "Read", "tool_input": {}}) == (200, {"decision": None})
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
    connection.request("POST", "/elsewhere", body=b"{}")
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
        ["sh", "-c", f'sh "{GUARD_SH}" --serve & wait'], cwd=project.root, env=_env(project.root), stdout=subprocess.PIPE, text=True
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


def _hook(project, **env: str) -> str:
    done = subprocess.run(
        ["sh", str(GUARD_SH)], input=json.dumps(WRITE), env=_env(project.root, **env), capture_output=True, text=True, check=True
    )
    return done.stdout


def test_guard_sh_steps_aside_while_the_guard_that_stays_up_runs_for_this_claude_code(project):
    live = subprocess.Popen(["sleep", "30"])  # stands for the guard that stays up
    try:
        assert _hook(project, CLAUDE_PID="4242", AETHER_MOD_GUARD=f"4242 {live.pid}") == ""
    finally:
        live.kill()
        live.wait()


@pytest.mark.parametrize(
    "env",
    [
        {},  # no mod
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": ""},  # the mod's own one-shot ask
        {"CLAUDE_PID": "4243", "AETHER_MOD_GUARD": "4242 {live}"},  # another Claude Code's guard (a nested session)
        {"AETHER_MOD_GUARD": "4242 {live}"},  # no Claude Code named
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 {dead}"},  # the guard has ended
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 -1"},  # `kill -0 -1` reaches every process
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 {live}x"},
        {"CLAUDE_PID": "4242", "AETHER_MOD_GUARD": "4242 0"},
        {"CLAUDE_PID": "", "AETHER_MOD_GUARD": " {live}"},
    ],
)
def test_guard_sh_judges_unless_that_guard_runs_for_this_claude_code(project, env):
    live = subprocess.Popen(["sleep", "30"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        env = {k: v.format(live=live.pid, dead=dead.pid) for k, v in env.items()}
        out = _hook(project, **env)
        assert "read-only" in json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"], env
    finally:
        live.kill()
        live.wait()


def test_a_subagent_of_no_known_type_is_never_judged_as_the_queen(served, project, tmp_path):
    """The mod could not name the caller's type: it is read from Claude Code's record of the agent,
    and with none, the call is not given the Queen's allowances (her own `aether` calls)."""
    started, _ = served
    transcript = tmp_path / "session.jsonl"
    (tmp_path / "session" / "subagents").mkdir(parents=True)
    (tmp_path / "session" / "subagents" / "agent-a7.meta.json").write_text('{"agentType": "ant:watcher"}', "utf-8")
    write = {**WRITE, "agent_id": "a7", "transcript_path": str(transcript)}
    del write["agent_type"]
    assert "read-only" in _denied(guard_serve.ask(started["socket"], write)[1])
    unknown = {**QUEEN, "agent_id": "a8", "transcript_path": str(transcript)}
    assert guard_serve.ask(started["socket"], unknown)[1]["decision"] is None  # not the Queen's allow
