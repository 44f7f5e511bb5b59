"""costs.json: what the colony's ants spent, per phase, caste and model, and per autopilot run.

Every recorded answer that carries Claude Code's usage adds to two buckets (rules/spend.py):
its colony's phase (`"1"`, `"2"`, …, or `"plan"` and `"colonize"` for those runs) and, when
an autopilot run drove it, that run's phase. Buckets are running totals, so nothing is lost
when old spawn records are trimmed, and a colony's oldest phases add up in one bucket
(`earlier`) past the newest 50. Written only inside `dispatch.mark_recorded`'s change,
together with the spawn record it belongs to.
"""

from __future__ import annotations

from aether.rules import spend
from aether.state import store

MAX_COLONIES = 10  # colonies (session ids) kept
MAX_RUNS = 40  # autopilot runs kept
MAX_PHASES = 50  # numbered phases with a bucket of their own; older ones add up in EARLIER
EARLIER = "earlier"  # the bucket of the phases before the newest MAX_PHASES (totals never shrink)


def _holder(items: list, key: str, value, cap: int, create: bool) -> dict | None:
    found = next((h for h in items if h.get(key) == value), None)
    if found is None and create:
        found = {key: value, "phases": {}}
        items.append(found)
        del items[:-cap]
    return found


def colony_of(data: dict, session: str | None, create: bool = False) -> dict | None:
    return _holder(data["colonies"], "session_id", session, MAX_COLONIES, create)


def run_of(data: dict, scope: str, create: bool = False) -> dict | None:
    return _holder(data["runs"], "scope", scope, MAX_RUNS, create)


def add(data: dict, session: str | None, run: str | None, phase: str, caste: str, usage: dict | None, model: str | None) -> None:
    """One spawn's usage, added to its colony's phase and to its run's (on loaded costs.json)."""
    targets = [colony_of(data, session, create=True)] + ([run_of(data, run, create=True)] if run else [])
    for holder in targets:
        assert holder is not None  # create=True: a missing holder is made
        spend.add(holder["phases"].setdefault(phase, spend.bucket()), caste, usage, model)
        _fold(holder["phases"], phase)


def _fold(phases: dict, current: str) -> None:
    """Keep the newest MAX_PHASES numbered phases apart (by when their bucket was made; never the
    phase being spent on, whose bucket a per-phase cap reads); the older ones join EARLIER (first
    in the order shown), so costs.json stays one size however many phases the colony builds."""
    numbered = [k for k in phases if k.isdigit() and k != current]
    old = numbered[: max(0, len(numbered) + (current in phases) - MAX_PHASES)]
    if not old:
        return
    earlier = spend.merge([phases.pop(EARLIER, spend.bucket())] + [phases.pop(k) for k in old])
    rest = dict(phases)
    phases.clear()
    phases[EARLIER] = earlier
    phases.update(rest)


# ---------------------------------------------------------------- reading


def _spend(holder: dict | None) -> dict:
    phases = (holder or {}).get("phases") or {}
    return {"phases": phases, "total": spend.merge(phases.values())}


def colony_spend(session: str | None, data: dict | None = None) -> dict:
    """{phases: {key: bucket}, total: bucket} of one colony."""
    return _spend(colony_of(store.read("costs") if data is None else data, session))


def run_spend(scope: str, data: dict | None = None) -> dict:
    """{phases: {key: bucket}, total: bucket} of one autopilot run."""
    return _spend(run_of(store.read("costs") if data is None else data, scope))
