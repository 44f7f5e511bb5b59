"""What a session is told when it starts over — `/clear`, a compaction, `--resume` — while a
colony is mid-build or mid-run: a few lines on where it stands and the one command that
continues (Claude Code's SessionStart hook, hooks/session.sh). Nothing when no colony is active.
"""

from __future__ import annotations

from aether.core.text import one_line
from aether.rules import autopilot, spawn_tree, spend
from aether.rules import plans as plans_rules
from aether.state import costs, store
from aether.state import spawns as ledger

SOURCES = ("clear", "compact", "resume")  # SessionStart sources that get the context


def _build_line(colony: dict) -> tuple:
    phase = colony.get("current_phase")
    tree = raw if isinstance(raw := colony.get("spawn_tree"), dict) else {}
    done, waves = spawn_tree.waves_done(tree)
    where = f"phase {phase} is being built" + (f" ({done} of {waves} waves done)" if waves else "")
    if tree.get("status") == "awaiting_approval":
        return where + ", its wave plan waits for your approval", f"/ant:build {phase} --approve"
    return where, f"/ant:build {phase}"


def context() -> str | None:
    """The lines to add, or None (no colony, or nothing under way)."""
    if not store.exists("colony"):
        return None
    colony = store.read("colony")
    if colony.get("state") in (None, "IDLE"):
        return None
    goal = one_line(colony.get("goal"), 80)
    data = store.read("spawns")
    run = ledger.active_autopilot(data)
    if run is not None:
        rng = run["range"]
        if colony.get("state") == "EXECUTING":
            where = _build_line(colony)[0]
        else:
            nxt = next(iter(autopilot.open_phases(plans_rules.phases(store.read("plan")))), None)
            where = f"phase {nxt} is next" if nxt is not None else "every phase is done"
        command = "/ant:run"
        stopped = run.get("stopped")
        if stopped:
            where += f"; the run is stopped: {autopilot.STOP_REASONS.get(stopped['why'], stopped['why'])}"
            command = stopped["command"]
        total = costs.run_spend(run["scope"])["total"]["tokens"]
        return "\n".join(
            [
                f'Aether: the colony "{goal}" is mid-run — autopilot {run["scope"]}, phases {rng["from"]}–{rng["to"]}; '
                f"{where}. Spent {spend.fmt(total)} of its {spend.fmt(run['budget']['run'])}-token cap.",
                f"To continue, run {command} — it goes on from the colony's state; answers already recorded are kept.",
            ]
        )
    if colony.get("state") == "EXECUTING":
        where, command = _build_line(colony)
        return (
            f'Aether: the colony "{goal}" is mid-build — {where}.\n'
            f"To continue, run {command} — it goes on from the colony's state; answers already recorded are kept."
        )
    pending = next((r for r in reversed(data["runs"]) if not r.get("done")), None)
    if pending is not None and pending.get("command") in ("plan", "colonize"):
        return f'Aether: the colony "{goal}" is mid-{pending["command"]}.\nTo continue, run /ant:{pending["command"]}.'
    return None


def hook(payload: dict) -> dict | None:
    """SessionStart: the context for a colony under way, after the sources that lose context."""
    if payload.get("source") not in SOURCES:
        return None
    text = context()
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
