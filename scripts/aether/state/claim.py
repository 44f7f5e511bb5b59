"""One build of a colony at a time: the claim (docs/decisions/one-build-at-a-time.md).

A session takes the colony's build before it spawns anything: the driving calls of both runtimes
(`aether next --build/--plan/--colonize/--continue`, `aether next`, `aether run`, the mod's
`serve` of a loop command) take it under the driver's lock (state/spawns.py `lock()`), and the
PreToolUse hook on Agent launches an ant only for the session that holds it. The claim lives in
spawns.json (`claim`), which only the helper writes. It names its holder — the Claude Code
process (CLAUDE_PID, in the Bash tool's, the hooks' and the mod's environment alike) and that
process's start, the session, the command and run it drives, since when. A call with no Claude
Code process (a person's terminal, a script) drives by hand: its claim binds no one.

Another session is told who holds the build and what to do, and starts nothing. The claim is
released when its run reaches an end the person must act on (done, ask, stop), and taken over
when its holder's process has ended or its pid now names another process. Reading is free:
status, watch, and recording the answers of a run's ants, whoever's hook brings them.
"""

from __future__ import annotations

import contextlib
import os

from aether.core import clock
from aether.core.text import one_line
from aether.rules import drive as drive_rules
from aether.state import spawns as ledger
from aether.state import store

WHY = drive_rules.CLAIMED  # the `why` of the stop a session that does not hold the build is answered with
ENDS = ("done", "ask", "stop")  # actions that end a driving call where the person must act: the claim goes
MAX_SESSION_ID = 200


# ---------------------------------------------------------------- who asks


def _started_at(ticks: str | None) -> str | None:
    """When a process started, as a time (its start in clock ticks after boot, from /proc)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        return clock.iso(boot + int(ticks or "") / os.sysconf("SC_CLK_TCK"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def caller() -> dict:
    """The session that calls: its Claude Code process (pid and start, none in a terminal) and
    Claude Code's session id."""
    who = ledger.launcher()
    session = os.environ.get("CLAUDE_CODE_SESSION_ID") or ""
    ok = 0 < len(session) <= MAX_SESSION_ID and session.isprintable() and who["claude_pid"] is not None
    return {**who, "session_id": session if ok else None}


def holds(claim: dict | None, who: dict) -> bool:
    """Does `who` hold `claim`: the same Claude Code process (the same pid, started at the same
    moment), or both by hand?"""
    if claim is None:
        return False
    if claim.get("claude_pid") != who.get("claude_pid"):
        return False
    return None in (claim.get("claude_started"), who.get("claude_started")) or claim.get("claude_started") == who.get("claude_started")


def alive(claim: dict | None) -> bool:
    """Does the claim bind: its holder is a Claude Code process that still runs (not one that
    ended, not another process under its pid)? A claim taken by hand binds no one."""
    return claim is not None and claim.get("claude_pid") is not None and ledger.alive(claim["claude_pid"], claim.get("claude_started"))


def holder(data: dict | None = None) -> dict | None:
    """The claim that binds now, or None (none taken, released, or its holder gone)."""
    claim = (data if data is not None else store.read("spawns")).get("claim")
    return claim if isinstance(claim, dict) and alive(claim) else None


def slash_of(run: dict | None) -> str | None:
    """The slash command that drives `run` (the autopilot's, for a build it drives)."""
    if not run:
        return None
    if run.get("parent") or run.get("command") == "run":
        return "/ant:run"
    if run.get("command") == "build":
        return f"/ant:build {run.get('phase')}"
    return f"/ant:{run.get('command')}"


# ---------------------------------------------------------------- take, settle, release

KEEP = object()  # a decision that changes nothing: nothing is written


def _current(data: dict) -> dict | None:
    return data.get("claim") if isinstance(data.get("claim"), dict) else None


def _gone(claim: dict) -> str:
    if claim.get("claude_pid") is None:
        return "it was taken by hand"
    if ledger.alive(claim["claude_pid"], None):
        return f"process {claim['claude_pid']} is another process now"
    return f"process {claim['claude_pid']} has ended"


# Each decision reads spawns.json as loaded and answers (its result, the claim to write or KEEP).


def _taking(data: dict, who: dict, asked: str | None) -> tuple:
    """(the live claim of another session, which refuses `who` — or None; the new claim, or KEEP)."""
    current = _current(data)
    if current is not None and holds(current, who):
        return None, KEEP  # what it runs now is noted when the step is done (settle)
    if current is not None and alive(current):
        return dict(current), KEEP
    claim = {
        "claude_pid": who.get("claude_pid"),
        "claude_started": who.get("claude_started"),
        "process_started_at": _started_at(who.get("claude_started")),
        "session_id": who.get("session_id"),
        "since": clock.iso(),
        "command": asked,
        "run": None,
        "phase": None,
    }
    if current is not None:  # its holder is gone: the claim is taken over
        claim["took_over"] = {"claude_pid": current.get("claude_pid"), "since": current.get("since"), "why": _gone(current)}
    return None, claim


def _settling(data: dict, run: dict | None, action: dict, who: dict) -> tuple:
    """(None; the claim after a driving step computed `action` for `run` — None: released — or KEEP)."""
    claim = _current(data)
    if claim is None:
        return None, KEEP
    if action.get("action") in ENDS and action.get("why") != WHY:
        scopes = {s for s in ((run or {}).get("scope"), (run or {}).get("parent")) if s}
        return None, (None if holds(claim, who) or claim.get("run") in scopes else KEEP)
    if not run or not holds(claim, who):
        return None, KEEP
    top, slash = run.get("parent") or run.get("scope"), slash_of(run)
    if (claim.get("run"), claim.get("command")) == (top, slash):
        return None, KEEP
    return None, {**claim, "run": top, "command": slash, "phase": run.get("phase") if isinstance(run.get("phase"), int) else None}


def _releasing(data: dict, who: dict) -> tuple:
    return None, (None if holds(_current(data), who) else KEEP)


@store.writes("spawns")
def _write(data, decide, *args):
    """Decide again on spawns.json as it is under its lock, and write the claim decided."""
    result, claim = decide(data, *args)
    if claim is not KEEP:
        data["claim"] = claim
    return result


def _decide(decide, *args):
    """A decision, written only when it changes the claim: most calls change nothing."""
    result, claim = decide(store.read("spawns"), *args)
    return result if claim is KEEP else _write(decide, *args)


def take(who: dict, asked: str | None) -> dict | None:
    """`who` takes the build to run `asked` (a slash command): None when it holds it now, else the
    claim of the live session that holds it (nothing is written then)."""
    return _decide(_taking, who, asked)


def settle(run: dict | None, action: dict, who: dict) -> None:
    """After a driving step computed `action` for `run`: an end the person must act on releases
    the claim (when `who` holds it, or it was taken for that run or the autopilot driving it);
    anything else keeps it, noting the run its holder drives."""
    _decide(_settling, run, action, who)


def settled(run: dict | None, action: dict) -> dict:
    """`action`, computed for `run` by whoever calls, with the claim settled (settle)."""
    settle(run, action, caller())
    return action


def release(who: dict) -> None:
    """`who`'s claim goes."""
    _decide(_releasing, who)


@contextlib.contextmanager
def driving(asked: str | None):
    """A driving call (under the driver's lock): the build taken for this session first — else
    the stop that says who holds it, and the call does nothing else. A claim the call took goes
    again if the call fails (an error is the person's to act on, and nothing was started)."""
    who = caller()
    fresh = not holds(_current(store.read("spawns")), who)
    held = take(who, asked)
    try:
        yield refused(held, asked) if held is not None else None
    except BaseException:  # an error, a bug, an interrupt: the call ends here
        if fresh and held is None:
            release(who)
        raise


# ---------------------------------------------------------------- what the other session is told


def _when(stamp: str | None) -> str:
    return stamp.replace("T", " ").replace("Z", " UTC") if isinstance(stamp, str) else "?"


def _ago(stamp: str | None) -> str:
    try:
        return clock.elapsed(clock.now() - clock.parse_iso(stamp or "")) + " ago"
    except ValueError:
        return "a while ago"


def describe(claim: dict) -> str:
    """Who holds the build, in one line: its process, what it runs, since when."""
    pid = claim.get("claude_pid")
    process = f"process {pid}" + (f" (started {_when(claim['process_started_at'])})" if claim.get("process_started_at") else "")
    runs = claim.get("command") or "a command"
    if claim.get("run"):
        runs += f" (run {claim['run']})"
    session = f", session {claim['session_id']}" if claim.get("session_id") else ""
    return f"Claude Code {process}{session}, running {runs} since {_when(claim.get('since'))} ({_ago(claim.get('since'))})"


def refused(claim: dict, asked: str | None) -> dict:
    """The `stop` a session that does not hold the build gets: who does, and what to do."""
    again = asked or "the same command"
    pid = claim.get("claude_pid")
    stop = (
        f"`aether run --stop` (it stops at its next wave boundary; ants already working finish), then run {again}"
        if claim.get("command") == "/ant:run"
        else f"end that Claude Code session (process {pid}); the next command takes over a build whose session has ended"
    )
    text = "\n".join(
        [
            f"Aether: another session is building this colony — {one_line(describe(claim), 400)}.",
            "One build of a colony at a time: this session started nothing.",
            "What you can do:",
            f"  - wait for it to end, then run {again} again;",
            "  - watch it meanwhile: `aether watch` in a terminal, or /ant:status;",
            f"  - or stop it: {stop}.",
        ]
    )
    keys = ("claude_pid", "process_started_at", "session_id", "since", "command", "run", "phase")
    return {"action": "stop", "why": WHY, "text": text, "command": asked, "holder": {k: claim.get(k) for k in keys}}
