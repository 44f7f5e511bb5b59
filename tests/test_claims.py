"""One build of a colony at a time (state/claim.py, docs/decisions/one-build-at-a-time.md): a
session takes the build before it spawns; another is told who holds it and starts nothing; the
claim goes where the person must act, and a dead holder's claim is taken over; reading and
recording answers stay free."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aether.colony import watch
from aether.rules import drive as drive_rules

from helpers.colony import ok
from helpers.drive import ASSIGNMENT, approved_wave, context, hook, result, scope_of
from helpers.processes import SLEEP_CODE, dead_pid

ONE_TASK = {
    "goal": "One module",
    "phases": [
        {
            "id": 1,
            "name": "Module",
            "description": "one module",
            "tasks": [{"id": "1.1", "description": "mods/a.py", "depends_on": []}],
            "success_criteria": ["it imports"],
        }
    ],
}


@pytest.fixture
def other_process():
    """Another Claude Code session's process: one that runs."""
    proc = subprocess.Popen([sys.executable, "-c", SLEEP_CODE])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def other(other_process) -> int:
    return other_process.pid


def session(monkeypatch, pid: int | None) -> None:
    """The calls that follow come from the Claude Code process `pid` (None: a terminal, by hand)."""
    if pid is None:
        monkeypatch.delenv("CLAUDE_PID", raising=False)
        monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    else:
        monkeypatch.setenv("CLAUDE_PID", str(pid))
        monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", f"session-{pid}")


def claim_of(p) -> dict | None:
    return json.loads((p.data / "spawns.json").read_text("utf-8")).get("claim")


def set_claim(p, **fields) -> None:
    data = json.loads((p.data / "spawns.json").read_text("utf-8"))
    data["claim"].update(fields)
    (p.data / "spawns.json").write_text(json.dumps(data), "utf-8")


def process_start(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return fh.read().rsplit(b")", 1)[1].split()[19].decode()


def files(p) -> dict:
    """Every file of the colony's state and spawns, with its bytes."""
    root = p.root / ".aether"
    return {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*")) if f.is_file() and ".lock" not in f.name}


# ---------------------------------------------------------------- take


def test_a_session_takes_the_build_before_it_spawns(drive_colony, monkeypatch):
    p = drive_colony
    session(monkeypatch, os.getpid())
    lead = ok(p, "next", "--build", "1")
    assert lead["action"] == "spawn"
    claim = claim_of(p)
    assert {k: claim[k] for k in ("claude_pid", "claude_started", "session_id", "since", "command", "run", "phase")} == {
        "claude_pid": os.getpid(),
        "claude_started": process_start(os.getpid()),
        "session_id": f"session-{os.getpid()}",
        "since": "2026-02-04T10:00:00Z",
        "command": "/ant:build 1",
        "run": scope_of(p),
        "phase": 1,
    }
    assert claim["process_started_at"].endswith("Z") and "took_over" not in claim
    assert ok(p, "next")["action"] == "spawn"  # the holder goes on
    assert ok(p, "validate-state", "spawns")["pass"] is True
    set_claim(p, claude_pid="4242")  # spawns.json edited by hand: the claim is checked like the rest
    assert ok(p, "validate-state", "spawns")["pass"] is False


# ---------------------------------------------------------------- refuse


def test_another_session_is_told_who_holds_the_build_and_starts_nothing(drive_colony, other, monkeypatch):
    p = drive_colony
    session(monkeypatch, other)
    ok(p, "next", "--build", "1")
    before = files(p)

    session(monkeypatch, os.getpid())
    told = ok(p, "next", "--build", "1")
    assert (told["action"], told["why"], told["command"]) == ("stop", "claimed", "/ant:build 1")
    assert told["holder"]["claude_pid"] == other and told["holder"]["run"] == scope_of(p)
    text = told["text"]
    for part in (
        f"process {other}",
        f"session session-{other}",
        f"running /ant:build 1 (run {scope_of(p)}) since 2026-02-04 10:00:00 UTC",
        "this session started nothing",
        "`aether watch`",
        "then run /ant:build 1 again",
        f"end that Claude Code session (process {other})",
    ):
        assert part in text, text
    # every driving call is refused the same way, and changes nothing
    assert ok(p, "next")["why"] == "claimed"
    assert ok(p, "next", "--plan")["why"] == "claimed"
    assert ok(p, "next", "--colonize")["why"] == "claimed"
    assert ok(p, "next", "--continue")["why"] == "claimed"
    assert ok(p, "next", "--build", "1", "--answer", "accept", "fine")["why"] == "claimed"
    run = ok(p, "run")
    assert run["why"] == "claimed" and "then run /ant:run again" in run["text"]
    assert files(p) == before
    assert p.run("next", "--build", "1", "--text").stdout.startswith("Aether: another session is building this colony")


def test_under_the_mod_the_other_session_ends_with_the_text_and_its_exit_status(drive_colony, other, monkeypatch):
    p = drive_colony
    monkeypatch.delenv("AETHER_RUNTIME", raising=False)
    session(monkeypatch, other)
    ok(p, "mod", "serve", input={"command": "build", "args": "1"})
    session(monkeypatch, os.getpid())
    for command, args in (("build", "1"), ("run", ""), ("plan", ""), ("colonize", ""), ("continue", "")):
        served = ok(p, "mod", "serve", input={"command": command, "args": args})
        action = served["action"]
        assert (served["serve"], action["action"], action["exit_code"]) == ("loop", "stop", drive_rules.EXIT_STATUS["claimed"]), served
        assert f"process {other}" in action["text"] and action["line"].endswith("stop (claimed)")
    assert drive_rules.EXIT_STATUS["claimed"] == 16


def test_an_autopilot_holder_is_named_with_how_to_stop_it(drive_colony, other, monkeypatch):
    p = drive_colony
    session(monkeypatch, other)
    ok(p, "run")
    session(monkeypatch, os.getpid())
    told = ok(p, "next", "--build", "1")
    assert "running /ant:run (run r-" in told["text"] and "`aether run --stop`" in told["text"]
    assert ok(p, "run", "--stop")["stopping"] is True  # stopping it is free


# ---------------------------------------------------------------- release


def test_the_claim_goes_where_the_person_must_act_and_comes_back_with_the_next_command(drive_colony, other, monkeypatch):
    p = drive_colony
    session(monkeypatch, other)
    ok(p, "next", "--build", "1")
    asked = ok(p, "record", "lead1", "-", input="```json\n" + json.dumps(ASSIGNMENT) + "\n```")
    assert asked["next"]["action"] == "ask" and claim_of(p) is None  # the approval is the person's
    session(monkeypatch, os.getpid())  # so another session may approve and go on
    wave = ok(p, "next", "--build", "1", "--approve")
    assert wave["action"] == "spawn" and claim_of(p)["claude_pid"] == os.getpid()


def test_a_build_done_releases_the_claim(project, monkeypatch):
    p = project
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    session(monkeypatch, os.getpid())
    ok(p, "colony-init", "One module", "--mode", "LIGHTWEIGHT")
    ok(p, "plan-load", "-", input=ONE_TASK)
    ok(p, "next", "--build", "1")
    assignment = {"phase": 1, "workers": [{"id": "a", "caste": "builder", "tasks": ["1.1"], "writes": ["mods/a.py"]}]}
    wave = ok(p, "record", "lead1", "-", input="```json\n" + json.dumps(assignment) + "\n```")["next"]
    assert wave["action"] == "spawn" and claim_of(p) is not None
    (p.root / "mods").mkdir()
    (p.root / "mods" / "a.py").write_text("VALUE = 1\n", "utf-8")
    lessons = ok(p, "record", "w1", "-", input=result(files_created=["mods/a.py"]))["next"]
    assert lessons["action"] == "lessons" and claim_of(p) is not None  # a judgment of the holder's
    done = ok(p, "record", "lessons", "-", input="- one module at a time\n")["next"]
    assert done["action"] == "done" and claim_of(p) is None
    session(monkeypatch, os.getppid())  # another session, once it is done: the same end, no second lessons
    spawned = json.loads((p.data / "spawns.json").read_text("utf-8"))["spawns"]
    again = p.run("next", "--build", "1")
    assert again.code == 2 and json.loads(again.stderr)["code"] == "phase_completed", again.stderr
    assert json.loads((p.data / "spawns.json").read_text("utf-8"))["spawns"] == spawned and claim_of(p) is None


def test_an_autopilot_stop_releases_the_claim(drive_colony, monkeypatch):
    p = drive_colony
    session(monkeypatch, os.getpid())
    ok(p, "run")
    assert claim_of(p)["command"] == "/ant:run"
    ok(p, "run", "--stop")
    stopped = ok(p, "record", "lead1", "-", input="```json\n" + json.dumps(ASSIGNMENT) + "\n```")["next"]
    assert stopped["action"] in ("stop", "ask") and claim_of(p) is None


def test_a_call_that_fails_gives_back_the_claim_it_took(drive_colony, monkeypatch):
    p = drive_colony
    session(monkeypatch, os.getpid())
    failed = p.run("next", "--build", "2")
    assert failed.code == 2 and claim_of(p) is None  # nothing was started: nobody holds the build


# ---------------------------------------------------------------- take over


def test_a_dead_holders_claim_is_taken_over(drive_colony, monkeypatch):
    p = drive_colony
    session(monkeypatch, os.getpid())
    ok(p, "next", "--build", "1")
    gone = dead_pid()
    set_claim(p, claude_pid=gone, session_id="the-killed-one")
    session(monkeypatch, os.getpid())
    again = ok(p, "next", "--build", "1")
    assert again["action"] == "spawn" and [s["id"] for s in again["spawns"]] == ["lead1"]  # handed out again
    claim = claim_of(p)
    assert claim["claude_pid"] == os.getpid() and claim["took_over"] == {
        "claude_pid": gone,
        "since": "2026-02-04T10:00:00Z",
        "why": f"process {gone} has ended",
    }


def test_a_claim_whose_pid_now_names_another_process_is_taken_over(drive_colony, other, monkeypatch):
    p = drive_colony
    session(monkeypatch, other)
    ok(p, "next", "--build", "1")
    set_claim(p, claude_started="1")  # the pid lives, but it is not the process that took the build
    session(monkeypatch, os.getpid())
    assert ok(p, "next", "--build", "1")["action"] == "spawn"
    assert claim_of(p)["took_over"]["why"] == f"process {other} is another process now"


def test_a_claim_taken_by_hand_binds_no_one_and_a_terminal_is_told_while_a_session_holds(drive_colony, other, monkeypatch):
    p = drive_colony
    session(monkeypatch, None)  # a person's terminal: no Claude Code process
    ok(p, "next", "--build", "1")
    assert claim_of(p)["claude_pid"] is None
    session(monkeypatch, other)
    assert ok(p, "next", "--build", "1")["action"] == "spawn"
    assert claim_of(p)["took_over"]["why"] == "it was taken by hand"
    session(monkeypatch, None)
    assert ok(p, "next", "--build", "1")["why"] == "claimed"


# ---------------------------------------------------------------- the Agent hook, answers, reading


def test_the_agent_hook_launches_only_for_the_session_that_holds_the_build(drive_colony, other, monkeypatch):
    p = drive_colony
    session(monkeypatch, other)
    call = ok(p, "next", "--build", "1")["spawns"][0]
    tool_input = {k: call[k] for k in ("subagent_type", "description", "prompt")}
    session(monkeypatch, os.getpid())
    out = hook(p, "pre", {"tool_input": tool_input, "tool_use_id": "t1", "session_id": "s2"})
    decision = out["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", out
    assert decision["permissionDecisionReason"].startswith("lead1 is not this session's to send")
    assert f"process {other}" in decision["permissionDecisionReason"]
    assert [s["status"] for s in json.loads((p.data / "spawns.json").read_text("utf-8"))["spawns"]] == ["dispatched"]
    session(monkeypatch, other)
    allowed = hook(p, "pre", {"tool_input": tool_input, "tool_use_id": "t1", "session_id": "s1"})
    assert allowed["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_the_agent_hook_takes_a_free_build_for_the_session_that_launches(drive_colony, monkeypatch):
    p = drive_colony
    session(monkeypatch, None)
    call = ok(p, "next", "--build", "1")["spawns"][0]
    session(monkeypatch, os.getpid())
    out = hook(p, "pre", {"tool_input": {k: call[k] for k in ("subagent_type", "description", "prompt")}, "tool_use_id": "t1"})
    assert out["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert claim_of(p)["claude_pid"] == os.getpid()


def test_answers_land_whoever_brings_them(drive_colony, other, monkeypatch):
    p = drive_colony
    session(monkeypatch, other)
    wave = approved_wave(p)
    session(monkeypatch, os.getpid())  # another session's hook, or a person piping it
    (p.root / "src").mkdir(exist_ok=True)
    (p.root / "src" / "todo.py").write_text("# src/todo.py\n", "utf-8")
    recorded = ok(p, "record", wave["spawns"][0]["id"], "-", input=result(files_created=["src/todo.py"]))
    assert recorded["already_recorded"] is False and recorded["waiting"] == ["w2"]
    ref = f"{scope_of(p)}/w2"
    tool_input = {"subagent_type": "ant:builder", "description": "w2 builder", "prompt": f"Your brief is .aether/spawns/{ref}.md"}
    (p.root / "src" / "api.py").write_text("# src/api.py\n", "utf-8")
    response = {"status": "completed", "agentId": "a2", "content": [{"type": "text", "text": result(files_created=["src/api.py"])}]}
    out = hook(p, "post", {"tool_input": tool_input, "tool_response": response, "tool_use_id": "t2"})
    assert context(out).startswith("Aether recorded w2")
    assert claim_of(p)["claude_pid"] == other  # recording takes nothing


def test_status_and_watch_show_who_holds_the_build(drive_colony, other_process, monkeypatch):
    other = other_process.pid
    p = drive_colony
    session(monkeypatch, other)
    ok(p, "next", "--build", "1")
    session(monkeypatch, None)
    status = ok(p, "status", "--json")
    assert status["build_holder"]["claude_pid"] == other
    line = f"BUILD HELD BY  Claude Code process {other}"
    assert line in p.run("status").stdout
    p.run("status")  # reading changes nothing, and takes nothing
    assert claim_of(p)["claude_pid"] == other
    assert line in watch_frame(p)
    other_process.kill()
    other_process.wait()
    assert "BUILD HELD BY" not in p.run("status").stdout  # a dead holder holds nothing


def watch_frame(p) -> str:
    cwd = os.getcwd()
    os.chdir(p.root)
    try:
        return watch.frame(200)
    finally:
        os.chdir(cwd)
