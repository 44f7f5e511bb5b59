"""costs.json: what the colony's ants spent, per phase, caste and model, and per autopilot run.

Every recorded answer that carries Claude Code's usage adds to two buckets (rules/spend.py):
its colony's phase (`"1"`, `"2"`, …, or `"plan"` and `"colonize"` for those runs) and, when
an autopilot run drove it, that run's phase. Buckets are running totals, so nothing is lost
when old spawn records are trimmed. Written only inside `dispatch.mark_recorded`'s change,
together with the spawn record it belongs to.
"""

from __future__ import annotations

from aether.rules import spend
from aether.state import store

MAX_COLONIES = 10  # colonies (session ids) kept
MAX_RUNS = 40  # autopilot runs kept


def colony_of(data: dict, session: str | None, create: bool = False) -> dict | None:
    found = next((c for c in data["colonies"] if c.get("session_id") == session), None)
    if found is None and create:
        found = {"session_id": session, "phases": {}}
        data["colonies"].append(found)
        del data["colonies"][:-MAX_COLONIES]
    return found


def run_of(data: dict, scope: str, create: bool = False) -> dict | None:
    found = next((r for r in data["runs"] if r.get("scope") == scope), None)
    if found is None and create:
        found = {"scope": scope, "phases": {}}
        data["runs"].append(found)
        del data["runs"][:-MAX_RUNS]
    return found


def add(data: dict, session: str | None, run: str | None, phase: str, caste: str, usage: dict | None,
        model: str | None) -> None:
    """One spawn's usage, added to its colony's phase and to its run's (on loaded costs.json)."""
    targets = [colony_of(data, session, create=True)] + ([run_of(data, run, create=True)] if run else [])
    for holder in targets:
        spend.add(holder["phases"].setdefault(phase, spend.bucket()), caste, usage, model)


# ---------------------------------------------------------------- reading


def colony_spend(session: str | None, data: dict | None = None) -> dict:
    """{phases: {key: bucket}, total: bucket} of one colony."""
    data = store.read("costs") if data is None else data
    found = colony_of(data, session) or {"phases": {}}
    return {"phases": found["phases"], "total": spend.merge(found["phases"].values())}


def run_spend(scope: str, data: dict | None = None) -> dict:
    """{phases: {key: bucket}, total: bucket} of one autopilot run."""
    data = store.read("costs") if data is None else data
    found = run_of(data, scope) or {"phases": {}}
    return {"phases": found["phases"], "total": spend.merge(found["phases"].values())}
