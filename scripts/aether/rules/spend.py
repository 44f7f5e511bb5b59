"""What ants cost and when a run must stop spending (docs/decisions/spend-cap.md). Pure.

The unit is Claude Code's own figure for a subagent, `totalTokens` in the Agent result (what its
UI shows as "N tokens" for an agent: the agent's final context plus its last answer). Usage is
kept in buckets — tokens, duration, spawns, per caste and per model — that add up per phase and
per run. A run checks its caps before every spawn action: the action goes out only when what
was spent plus what the action is estimated to cost stays within both the run's and the
phase's cap; otherwise the run stops there, between two actions, with nothing in flight.
"""

from __future__ import annotations

import math
import re

from aether.core.castes import CASTES
from aether.core.exceptions import input_error

# Caps per mode, in tokens: per phase (what one phase may spend in a run) and per run.
LIMITS = {
    "LIGHTWEIGHT": {"phase": 400_000, "run": 1_500_000},
    "STANDARD": {"phase": 1_000_000, "run": 5_000_000},
    "FULL": {"phase": 2_000_000, "run": 12_000_000},
}
# What one spawn of a caste is estimated to cost before the colony has spent anything on it.
PER_SPAWN = {"builder": 45_000, "watcher": 30_000, "route-setter": 25_000, "scout": 20_000, "colonizer": 30_000, "architect": 30_000}
MAX_AMOUNT = 10_000_000_000  # a cap above this is a typo
UNITS = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}
AMOUNT = re.compile(r"([0-9]{1,15}(?:\.[0-9]{1,6})?)\s*([kmg]?)(?:\s*tokens?)?", re.I | re.A)
THOUSANDS = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?=\s*(?:tokens?)?$)", re.I | re.A)  # 1,500,000 (not 1,5M)
UNMETERED = "session"  # the model key of a spawn whose usage named none


def limits(mode: str | None) -> dict:
    return dict(LIMITS.get(mode or "STANDARD", LIMITS["STANDARD"]))


def parse_amount(text, what: str = "the cap") -> int:
    """Tokens from `2M`, `500k`, `1.5m`, `250000`, `250_000` or `1,500,000` (a positive whole number of
    tokens; a comma elsewhere, as in `1,5M`, is refused: a decimal comma or a typo)."""
    if isinstance(text, bool):
        raise input_error("invalid_amount", f"{what} must be a number of tokens such as 2M or 500k, not {text!r}")
    value: float
    if isinstance(text, int):
        value = text if abs(text) <= MAX_AMOUNT else MAX_AMOUNT + 1
    elif isinstance(text, float) and math.isfinite(text):
        value = text
    else:
        raw = str(text)[:80].strip().replace("_", "")
        if THOUSANDS.match(raw):
            raw = raw.replace(",", "")
        found = AMOUNT.fullmatch(raw)
        if not found:
            raise input_error("invalid_amount", f"{what} must be a number of tokens such as 2M or 500k, not {str(text)[:40]!r}")
        value = float(found.group(1)) * UNITS[found.group(2).lower()]
    if not 1 <= value <= MAX_AMOUNT:
        raise input_error("invalid_amount", f"{what} must be between 1 and {fmt(MAX_AMOUNT)} tokens, not {str(text)[:40]}")
    return round(value)


def fmt(n: int | float | None) -> str:
    """1234567 → 1.23M, 45000 → 45k, 950 → 950."""
    n = int(n or 0)
    if n >= 1_000_000_000:
        return f"{n / 1_000_000_000:.3g}G"
    if n >= 1_000_000:
        return f"{n / 1_000_000:.3g}M"
    if n >= 10_000:
        return f"{round(n / 1000)}k"
    if n >= 1_000:
        return f"{n / 1000:.3g}k"
    return str(n)


# ---------------------------------------------------------------- buckets


def bucket() -> dict:
    return {"tokens": 0, "duration_ms": 0, "spawns": 0, "unmetered": 0, "castes": {}}


def _line() -> dict:
    """A caste's line in a bucket: `metered` counts its spawns whose answer carried usage."""
    return {"tokens": 0, "duration_ms": 0, "spawns": 0, "metered": 0, "models": {}}


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def add(into: dict, caste: str, usage: dict | None, model: str | None) -> dict:
    """Add one spawn's usage to a bucket (and to its caste's and model's lines)."""
    usage = usage or {}
    tokens, ms = _count(usage.get("total_tokens")), _count(usage.get("duration_ms"))
    metered = "total_tokens" in usage
    line = into["castes"].setdefault(caste, _line())
    model = model or UNMETERED
    per_model = line["models"].setdefault(model, {"tokens": 0, "spawns": 0})
    for part in (into, line):
        part["tokens"] += tokens
        part["duration_ms"] += ms
        part["spawns"] += 1
    into["unmetered"] += 0 if metered else 1
    line["metered"] += 1 if metered else 0
    per_model["tokens"] += tokens
    per_model["spawns"] += 1
    return into


def merge(buckets) -> dict:
    """One bucket that adds up several."""
    total = bucket()
    for b in buckets:
        for key in ("tokens", "duration_ms", "spawns", "unmetered"):
            total[key] += _count(b.get(key))
        for caste, line in (b.get("castes") or {}).items():
            mine = total["castes"].setdefault(caste, _line())
            for key in ("tokens", "duration_ms", "spawns", "metered"):
                mine[key] += _count(line.get(key))
            for model, m in (line.get("models") or {}).items():
                mm = mine["models"].setdefault(model, {"tokens": 0, "spawns": 0})
                mm["tokens"] += _count(m.get("tokens"))
                mm["spawns"] += _count(m.get("spawns"))
    return total


# ---------------------------------------------------------------- estimates and the cap


def per_spawn(caste: str, history: dict | None = None) -> int:
    """What one spawn of `caste` is expected to cost: the colony's own average for that caste
    once it has spent on one, else PER_SPAWN."""
    line = ((history or {}).get("castes") or {}).get(caste) or {}
    metered = _count(line.get("metered"))
    if metered and _count(line.get("tokens")):
        return math.ceil(line["tokens"] / metered)
    return PER_SPAWN.get(caste, max(PER_SPAWN.values()))


def estimate(castes: list, history: dict | None = None) -> int:
    return sum(per_spawn(c if c in CASTES else "builder", history) for c in castes)


def check(spent_run: int, spent_phase: int, next_cost: int, caps: dict) -> dict | None:
    """None when the next action may go out; else why not: the cap (`run` or `phase`) it would
    pass, with the figures. A cap already reached stops even an action estimated at 0."""
    for name, spent in (("run", spent_run), ("phase", spent_phase)):
        cap = caps.get(name)
        if cap is None:
            continue
        if spent >= cap or spent + next_cost > cap:
            return {"cap": name, "limit": cap, "spent": spent, "next": next_cost, "reached": spent >= cap}
    return None


def render_phases(tokens_by_phase: dict) -> str:
    """`1 12k · 2 9.6k · plan 3k` from {phase key: tokens}."""
    return " · ".join(f"{k} {fmt(v)}" for k, v in tokens_by_phase.items())


def render_bucket(b: dict, indent: str = "  ") -> list:
    """Lines: per caste, tokens · spawns · time, and the models it ran on."""
    lines = []
    for caste, line in sorted((b.get("castes") or {}).items(), key=lambda kv: -kv[1].get("tokens", 0)):
        models = ", ".join(
            f"{m} {fmt(v['tokens'])}" for m, v in sorted(line.get("models", {}).items(), key=lambda kv: -kv[1].get("tokens", 0))
        )
        lines.append(
            f"{indent}{caste:<12} {fmt(line['tokens']):>7} tokens · {line['spawns']} spawn"
            f"{'s' if line['spawns'] != 1 else ''} · {round(line['duration_ms'] / 1000)} s" + (f" · {models}" if models else "")
        )
    return lines
