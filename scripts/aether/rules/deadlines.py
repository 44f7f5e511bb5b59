"""Deadlines: how long an ant may run before it is stopped (pure; docs/decisions/deadlines.md).

Running ants are never abandoned, but an ant that never returns — its model request hung, or it
goes round in circles — would hold its run for ever. Each spawn is handed out with a deadline:
its caste's (DEFAULTS, or `deadlines:` in .aether/config.yaml). Past it, where the mod runs, the
helper asks the mod to stop the ant (Claude Code's TaskStop) and hands the spawn out once more.
An ant stopped before it answered — at its deadline, or by Claude Code itself (its watchdog
stops an ant whose model request made no progress; a person stops one) — counts one stop; at
MAX_STOPS the run stops (why `deadline`, exit 14) instead of sending it again. Nothing fails: no
task is marked failed and no ladder rung is spent — what ran out is the ant's time, not a
verdict on its work — and what it spent counts.

A stop's `how`:
- `deadline`: the helper asked for it, the ant being past its deadline (the mod's TaskStop);
- `stalled`: Claude Code's watchdog stopped it (`Agent stalled: no progress for 600s …`, a
  background ant's notification; a foreground Agent call is cut with `[Request interrupted by
  user for tool use]`);
- `stopped`: someone stopped it in Claude Code (`/tasks`, Ctrl+X Ctrl+K, TaskStop).
"""

from __future__ import annotations

import re

from aether.core import clock
from aether.core.castes import CASTES
from aether.core.exceptions import input_error
from aether.core.text import one_line

# Seconds an ant of each caste may run: what its ants really take (minutes, a few tens for a
# builder that runs a test suite more than once), with room to spare — a deadline is for an ant
# that never returns, not for a slow one.
DEFAULTS = {
    "builder": 30 * 60,  # writes the code and runs the tests, often more than once
    "colonizer": 30 * 60,  # reads a whole codebase
    "watcher": 20 * 60,  # runs the checks (the test suite) and reads the work
    "scout": 15 * 60,  # reads and searches
    "route-setter": 15 * 60,  # the Phase Lead's waves, a plan's draft
    "architect": 15 * 60,  # a review, a critique, a phase's lessons, the hygiene report
}
MAX_STOPS = 2  # stops before an answer, in a row, after which the run stops instead of sending the ant again
MIN_SECONDS = 1
MAX_SECONDS = 24 * 3600
STOP_AGAIN_SECONDS = 60  # a stop Claude Code could not carry out is asked for again after this long
HOWS = ("deadline", "stalled", "stopped")
STOP_HINT = (
    "stop it in Claude Code (`/tasks`, or Ctrl+X Ctrl+K twice for every background agent; under `claude -p`, "
    "end the process), then run the same command: it is handed out once more"
)
WATCHDOG = "its model request made no progress (Claude Code's watchdog)"

_DURATION = re.compile(r"(?:(\d{1,3})h)?(?:(\d{1,4})m)?(?:(\d{1,6})s)?", re.A)
_STALL = re.compile(r"Agent stalled: no progress for (\d{1,7})s")
INTERRUPTED = "[Request interrupted by user for tool use]"  # Claude Code's error of an Agent call it cut


def parse(value, key: str, where: str = "") -> int:
    """Seconds from a duration such as `45m`, `1h30m`, `90s` or `2h` (`invalid_config` naming
    `key` otherwise: a bare number is refused, minutes and seconds being easy to mix up)."""
    text = value.strip().lower().replace(" ", "") if isinstance(value, str) else ""
    found = _DURATION.fullmatch(text) if text else None
    place = f"{key}{f' in {where}' if where else ''}"
    if found is None or not any(found.groups()):
        raise input_error("invalid_config", f"{place}: a duration such as 45m, 1h30m or 90s, not {str(value)[:40]!r}", key=key)
    hours, minutes, seconds = (int(g or 0) for g in found.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if not MIN_SECONDS <= total <= MAX_SECONDS:
        raise input_error("invalid_config", f"{place}: between {fmt(MIN_SECONDS)} and {fmt(MAX_SECONDS)}, not {value!r}", key=key)
    return total


def fmt(seconds) -> str:
    """A deadline as a person writes it: `30m`, `1h30m`, `45s`, `2m30s`."""
    seconds = max(0, int(seconds or 0))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return out or "0s"


def table(configured: dict | None = None) -> dict:
    """{caste: seconds} for every caste: the configured deadline, else its default."""
    return {c: (configured or {}).get(c) or DEFAULTS[c] for c in CASTES}


def for_agent(subagent_type: str, deadlines: dict | None = None) -> int | None:
    """The deadline of an ant of `ant:<caste>` (None: no caste of ours)."""
    caste = subagent_type.split(":", 1)[-1]
    return (deadlines or table()).get(caste) if caste in CASTES else None


# ---------------------------------------------------------------- a running ant against its deadline


def elapsed(rec: dict, now: float) -> float | None:
    """Seconds the spawn's ant has run (since it was launched), None when that is not known."""
    try:
        return max(0.0, now - clock.parse_iso(rec.get("launched_at") or ""))
    except (ValueError, TypeError):
        return None


def deadline_of(rec: dict) -> int | None:
    value = rec.get("deadline_s")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def overdue(rec: dict, now: float) -> bool:
    """Has the spawn's ant run past its deadline?"""
    limit, ran = deadline_of(rec), elapsed(rec, now)
    return limit is not None and ran is not None and ran >= limit


def ant_line(rec: dict, now: float) -> str:
    """`w1 builder 3m05s/30m` — the ant, how long it has run and its deadline (`past its deadline`
    once over it)."""
    caste = str(rec.get("subagent_type") or "").split(":", 1)[-1]
    ran = elapsed(rec, now)
    limit = deadline_of(rec)
    shown = "?" if ran is None else clock.elapsed(ran)
    line = f"{rec.get('local')} {caste} {shown}" + (f"/{fmt(limit)}" if limit else "")
    return line + (" past its deadline" if overdue(rec, now) else "")


# ---------------------------------------------------------------- what Claude Code says of a stopped ant


def stall_detail(text) -> str:
    """A stall as Claude Code reported it, in the words of a stop's line."""
    seconds = stalled_for(text)
    return WATCHDOG if seconds is None else f"its model request made no progress for {fmt(seconds)} (Claude Code's watchdog)"


def stalled_for(text) -> int | None:
    """Seconds of no progress after which Claude Code's watchdog stopped an ant, from its words
    (`Agent stalled: no progress for 600s (stream watchdog did not recover)`), else None."""
    found = _STALL.search(text) if isinstance(text, str) else None
    return int(found.group(1)) if found else None


def doing(call: dict | None) -> str:
    """What an ant was doing, from its last call that was kept (state/evidence.py), in words."""
    if not isinstance(call, dict):
        return "it had made no tool call"
    tool = call.get("tool") or "a tool"
    what = call.get("command") or call.get("path")
    ran = f" {tool} `{one_line(what, 120)}`" if what else f" {tool}"
    exit_code = call.get("exit")
    after = f" (exit {exit_code})" if isinstance(exit_code, int) and not isinstance(exit_code, bool) else ""
    return f"its last call was{ran}{after}"


def _how(hit: dict) -> str:
    limit = fmt(hit.get("deadline_s")) if hit.get("deadline_s") else None
    if hit.get("how") == "deadline":
        return f"it ran past its deadline ({limit}) and was stopped"
    if hit.get("how") == "stalled":
        return f"Claude Code stopped it: {one_line(hit.get('detail') or WATCHDOG, 200)}"
    return f"it was stopped in Claude Code ({one_line(hit.get('detail') or 'no reason given', 160)})"


def stop_line(local: str, count: int, hit: dict) -> str:
    """The line a stop adds (the mod's output, the Queen's hook line): what happened and what comes next."""
    then = "it is handed out once more" if count < MAX_STOPS else f"stopped {count} times without an answer: the run stops"
    return f"{local} did not answer — {_how(hit)}; nothing failed, {then}"


def stop_text(who: str, count: int, hit: dict, command: str | None, caste: str) -> str:
    """What a run stopped at an ant's deadline tells the person: which ant, its deadline, what it
    was doing when last seen, that nothing failed, and the command that goes on."""
    limit = fmt(hit.get("deadline_s")) if hit.get("deadline_s") else "none"
    lines = [
        f"Stopped: {who} was stopped {count} times before it answered — the last time, {_how(hit)}.",
        f"  Its deadline: {limit} (deadlines: {caste}: … in .aether/config.yaml). When last seen, {hit.get('doing') or doing(None)}.",
        "Nothing failed: no task is marked failed and no retry was spent; what it spent counts toward the cap, and "
        "the answers that came are recorded.",
        "It is not sent again by itself; if it only needs more time, give its caste a longer deadline first.",
    ]
    if command:
        lines.append(f"To go on: {command} — it goes out again, its count of stops started afresh.")
    else:
        lines.append("The same command sends it out again, its count of stops started afresh.")
    return "\n".join(lines)
