"""`aether run --dry-run`: what `/ant:run` would build and spend — the phases in its range, their
tasks and castes, an estimate of agents and tokens per phase against the caps. Changes nothing."""

from __future__ import annotations

import math

from aether.colony import autopilot
from aether.core.text import one_line
from aether.core.vocabulary import DONE_STATUSES
from aether.rules import modes, spend
from aether.rules import plans as plans_rules
from aether.state import costs, settings, store


def _phase_estimate(phase: dict, mode: str | None, history: dict, table: dict) -> dict:
    info = modes.profile(mode)
    todo = [t for t in phase.get("tasks") or [] if isinstance(t, dict) and t.get("status") not in DONE_STATUSES]
    waves = max(1, math.ceil(len(todo) / info["workers_per_wave"])) if todo else 0
    agents = {"route-setter": 1, "builder": len(todo)}
    reviewers = sum(1 for w in range(waves) if min(info["workers_per_wave"], len(todo) - w * info["workers_per_wave"]) > 1)
    if info["reviewer"] and reviewers:
        agents["watcher"] = reviewers
    if info["watcher"] != "syntax":
        agents["watcher"] = agents.get("watcher", 0) + 1
    if modes.archivist_due(mode, phase.get("id"))[0]:
        agents["architect"] = 1
    tokens = sum(n * spend.per_spawn(c, history) for c, n in agents.items())
    return {
        "id": phase.get("id"),
        "name": phase.get("name"),
        "status": phase.get("status") or "pending",
        "tasks": [{"id": t.get("id"), "description": t.get("description")} for t in todo],
        "agents": agents,
        "models": {c: table[c] for c in agents},
        "tokens": tokens,
    }


def dry_run(options: dict) -> dict:
    """aether run --dry-run: the phases the run would build, their tasks and castes, and an estimate
    of agents and tokens. Changes nothing."""
    colony = store.read("colony", missing_ok=False)
    plan = store.read("plan")
    phases = autopilot.phases_of(plan)
    rng, skipped, caps = autopilot.resolve(colony, plan, options)
    mode = colony.get("mode")
    table = settings.model_table(mode)
    history = costs.colony_spend(colony.get("session_id"))["total"]
    ids = [p["id"] for p in phases]
    chosen = [
        p for p in phases if p["status"] not in DONE_STATUSES and ids.index(rng["from"]) <= ids.index(p["id"]) <= ids.index(rng["to"])
    ]
    if rng["max_phases"]:
        chosen = chosen[: rng["max_phases"]]
    rows = [_phase_estimate(plans_rules.require_phase(plan, p["id"]), mode, history, table) for p in chosen]
    total = {"agents": sum(sum(r["agents"].values()) for r in rows), "tokens": sum(r["tokens"] for r in rows)}
    lines = [f"AUTOPILOT DRY RUN · {mode or modes.DEFAULT_MODE} · phases {rng['from']}–{rng['to']} (nothing is changed)"]
    if skipped:
        lines.append(f"  Skips phase{'s' if len(skipped) > 1 else ''} {', '.join(map(str, skipped))} first")
    for r in rows:
        lines.append(f"  {r['id']:>2} {one_line(r['name'], 50)} — {len(r['tasks'])} task{'s' if len(r['tasks']) != 1 else ''}")
        for t in r["tasks"]:
            lines.append(f"       {t['id']} {one_line(t['description'], 70)}")
        agents = ", ".join(f"{c} ×{n} ({r['models'][c]})" for c, n in r["agents"].items())
        over = " — over the phase cap" if r["tokens"] > caps["phase"] else ""
        lines.append(f"       ≈ {sum(r['agents'].values())} agents: {agents} · ≈ {spend.fmt(r['tokens'])} tokens{over}")
    if not rows:
        lines.append("  Nothing to build in this range.")
    lines.append(
        f"Estimate: ≈ {total['agents']} agents, ≈ {spend.fmt(total['tokens'])} tokens (before retries and "
        f"rebuilds) · caps {spend.fmt(caps['phase'])} per phase, {spend.fmt(caps['run'])} per run"
    )
    if options.get("auto_approve"):
        lines.append("Approval: wave plans are approved by the run")
    else:
        hint = " (--auto-approve lets it approve them)" if modes.profile(mode)["auto_approve"] else ""
        lines.append(f"Approval: the run stops when a wave plan needs your approval{hint}")
    return {
        "dry_run": True,
        "mode": mode or modes.DEFAULT_MODE,
        "range": rng,
        "skips": skipped,
        "phases": rows,
        "total": total,
        "caps": {k: caps[k] for k in ("run", "phase")},
        "models": table,
        "text": "\n".join(lines),
    }
