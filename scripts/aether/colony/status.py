"""What `status` and `phase` show: the colony at a glance, one phase, the phase list, the
spawn tree of the last build, and the next step. Read-only: nothing here writes state."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime

from aether.core import clock, output
from aether.core.exceptions import input_error
from aether.core.text import one_line
from aether.rules import autopilot as autopilot_rules
from aether.rules import deadlines as deadline_rules
from aether.rules import plans as plans_rules
from aether.rules import spend
from aether.rules import waves as waves_rules
from aether.rules import weather as weather_rules
from aether.rules.lifecycle import next_step
from aether.state import claim, costs, pheromones, store
from aether.state import spawns as ledger
from aether.steps import checks, isolation, recovery, worktrees

BAR_WIDTH = 20
RECENT_EVENTS = 5
OPEN_ERRORS_SHOWN = 3
HINT_WIDTH = 96  # a running ant's hint is wrapped to fit `aether watch` in a 100-column terminal
ICONS = {"pending": "○", "in_progress": "◐", "completed": "●", "failed": "✗", "skipped": "–"}
COLORS = {"in_progress": "33", "completed": "32", "failed": "31", "skipped": "2", "warning": "33"}  # ANSI SGR codes


def _color(text: str, status: str, enabled: bool) -> str:
    code = COLORS.get(status)
    return f"\033[{code}m{text}\033[0m" if enabled and code else text


def _icon(status: str, enabled: bool) -> str:
    return _color(ICONS.get(status, "?"), status, enabled)


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    filled = 0 if total <= 0 else max(0, min(width, round(width * done / total)))
    return "█" * filled + "░" * (width - filled)


# ---------------------------------------------------------------- next step


# ---------------------------------------------------------------- spawn tree


def _tree_text(tree: dict) -> list:
    return ["  " + line for line in waves_rules.render_tree(tree).splitlines()]


# ---------------------------------------------------------------- status


def _phase_rows(plan: dict) -> list:
    rows = []
    for phase in plans_rules.phases(plan):
        counts = plans_rules.task_counts(phase)
        rows.append({"id": phase.get("id"), "name": phase.get("name"), "status": phase.get("status") or "pending", "tasks": counts})
    return rows


def _open_errors(errors: dict, plan: dict) -> list:
    """Errors of phases not completed (and errors of no phase); newest first."""
    done = {p.get("id") for p in plans_rules.phases(plan) if p.get("status") == "completed"}
    rows = [e for e in errors.get("errors") or [] if isinstance(e, dict) and e.get("phase") not in done]
    return list(reversed(rows))


def overview() -> dict:
    """status: goal, state, mode, progress, signals, events, errors, spawn tree, next step."""
    view = status_view()
    view["text"] = render_status(view, output.use_color())
    return view


def status_view() -> dict:
    """What `aether status` knows, as data (its text is render_status's)."""
    colony = store.read("colony")
    initialized = store.exists("colony") and colony.get("state") != "IDLE"
    plan = store.read("plan") if initialized else {"phases": []}
    nxt = next_step(colony if initialized else {"state": "IDLE"}, plan)
    if not initialized:
        return {"initialized": False, "state": "IDLE", "next": nxt}
    rows = _phase_rows(plan)
    errors = store.read("errors")
    open_errors = _open_errors(errors, plan)
    state, current = colony.get("state"), colony.get("current_phase") or 0
    block = pheromones.render(None)
    result = {
        "initialized": True,
        "goal": colony.get("goal"),
        "state": state,
        "mode": colony.get("mode"),
        "current_phase": current,
        "progress": {
            "phases_total": len(rows),
            "phases_completed": sum(1 for r in rows if r["status"] == "completed"),
            "tasks_total": sum(r["tasks"]["total"] for r in rows),
            "tasks_completed": sum(r["tasks"]["completed"] for r in rows),
        },
        "phases": rows,
        "signals": block["signals"],
        "signals_text": block["text"],
        "events": (store.read("events").get("events") or [])[-RECENT_EVENTS:],
        "errors": {
            "open_count": len(open_errors),
            "open": open_errors[:OPEN_ERRORS_SHOWN],
            "flagged_patterns": [p for p in errors.get("flagged_patterns") or [] if isinstance(p, dict)],
        },
        "spawn_tree": colony.get("spawn_tree"),
        "next": nxt,
    }
    phase_now = plans_rules.find_phase(plan, current) if current else None
    result["retry_log"] = recovery.retry_log(current) if current else []
    result["aborted"] = bool(current) and any(a.get("phase") == current for a in store.read("failures")["aborts"] if isinstance(a, dict))
    result["phase_status"] = (phase_now or {}).get("status")
    stuck = state == "READY" and phase_now is not None and phase_now.get("status") in ("failed", "in_progress")
    result["recovery"] = recovery.options(current, plan) if stuck else None
    result["kept_results"] = worktrees.kept() if store.exists("worktrees") else []
    result["safety"] = isolation.warning(ledger.current_run(store.read("spawns"), "build"))  # a safety net the build goes without
    result["running"] = running(clock.now())
    result.update(_autopilot_view(colony))
    if result["autopilot"] is not None:
        run = result["autopilot"]
        result["next"] = {
            "slash": run["command"],
            "command": "aether run",
            "reason": "the autopilot run " + (f"stopped ({run['stopped']})" if run["stopped"] else "is under way"),
        }
    latest: dict = {}
    for record in store.read("phase_records")["records"]:
        if isinstance(record, dict) and record.get("verification"):
            latest[record.get("phase")] = record["verification"]
    result["verification"] = {str(k): v for k, v in latest.items()}
    frictions = recovery.friction_summary()
    result["frictions"] = {"total": frictions["total"], "recurring": frictions["recurring"], "recent": frictions["recent"]}
    return result


def render_status(view: dict, color: bool = False) -> str:
    """`aether status` as the user reads it."""
    nxt = view["next"]
    if not view["initialized"]:
        return f"No colony here yet.\nNext: {nxt['slash']} — {nxt['reason']}"
    state, current, rows = view["state"], view["current_phase"], view["phases"]
    lines = [f"AETHER COLONY · {state} · {view['mode'] or 'STANDARD'}", f"Goal: {one_line(view['goal'], 200)}"]
    if view.get("safety"):  # where the person looks first: no checkpoint, builders sharing one tree
        lines.append(_color(view["safety"], "warning", color))
    if rows:
        progress = view["progress"]
        done = progress["phases_completed"]
        where = f"Phase {current}" if current else f"{len(rows)} phases planned"
        lines.append(
            f"{where}  {bar(done, len(rows))} {done}/{len(rows)} phases · {progress['tasks_completed']}/{progress['tasks_total']} tasks"
        )
        width = max(len(one_line(r["name"], 40)) for r in rows)
        for r in rows:
            mark = "▸" if r["id"] == current and state != "COMPLETED" else " "
            counts = r["tasks"]
            lines.append(
                f" {mark}{_icon(r['status'], color)} {str(r['id']):>2} {one_line(r['name'], 40):<{width}}  "
                f"{r['status']:<11} {counts['completed']}/{counts['total']} tasks"
            )
    else:
        lines.append("No plan yet.")
    lines += ["", view["signals_text"]]
    autopilot = _autopilot_lines(view)
    if autopilot:
        lines += [""] + autopilot
    if view.get("verification"):
        lines += ["", "VERIFIED BY WHAT RAN (per phase, its latest build)"]
        for phase, proof in view["verification"].items():
            lines.append(f"  Phase {phase}: " + ("every check proven" if proof["passed"] else "not proven"))
            lines += ["  " + checks.line(v) for v in proof["checks"]]
    if view["kept_results"]:
        lines += ["", "KEPT RESULTS (builders' work that could not be merged)"] + worktrees.render_kept(view["kept_results"])
    if isinstance(view["spawn_tree"], dict):
        lines += ["", "SPAWN TREE"] + _tree_text(view["spawn_tree"])
    ants = running_lines(view.get("running") or [], view["spawn_tree"])
    if ants:
        lines += ["", "RUNNING (each ant: how long it has run / its deadline)"] + ants
    lines += _event_lines(view["events"]) + _error_lines(view["errors"])
    if view["retry_log"]:
        lines += ["", f"AUTO-RETRY LOG (phase {current})"] + ["  " + line for line in recovery.render_retry_log(view["retry_log"])]
    if view["recovery"]:
        lines += ["", f"RECOVERY (phase {current} {'aborted' if view['aborted'] else view['phase_status']})"]
        lines += recovery.render_options(view["recovery"])
    lines += _friction_lines(view["frictions"])
    lines += ["", f"Next: {nxt['slash']} — {nxt['reason']}"]
    return "\n".join(lines)


# ---------------------------------------------------------------- the ants that run now, against their deadlines


def _stop_hint(rec: dict) -> str:
    """What becomes of an ant past its deadline, and how to stop it where nothing does (rules/deadlines.py)."""
    asked = rec.get("stop_asked") or {}
    if rec.get("runtime") == "mod" and asked.get("agent") == rec.get("agent_id"):
        if asked.get("failed"):
            why = one_line(asked["failed"], 120)
            return f"could not be stopped ({why}): it is not handed out again while it may still run — {deadline_rules.STOP_HINT}"
        return "being stopped by the mod: it is handed out once more"
    return f"past its deadline: {deadline_rules.STOP_HINT}"


def running(now: float) -> list:
    """The ants that run now (in flight), each against its deadline: [{ref, local, caste, runtime,
    line, elapsed_s, deadline_s, past_deadline, hint}] (hint: only past its deadline)."""
    out = []
    for rec in store.read("spawns")["spawns"]:
        if not ledger.in_flight(rec):
            continue
        ran = deadline_rules.elapsed(rec, now)
        late = deadline_rules.overdue(rec, now)
        out.append(
            {
                "ref": rec["ref"],
                "local": rec["local"],
                "caste": rec["subagent_type"].split(":", 1)[-1],
                "runtime": "mod" if rec.get("runtime") == "mod" else "prompts",
                "line": deadline_rules.ant_line(rec, now),
                "elapsed_s": None if ran is None else round(ran),
                "deadline_s": deadline_rules.deadline_of(rec),
                "past_deadline": late,
                "hint": _stop_hint(rec) if late else None,
            }
        )
    return out


def running_lines(ants: list, tree=None, now: float | None = None) -> list:
    """`  w1 builder 3m05s/30m · wave 1 · tasks 1.1`, and under an ant past its deadline what
    becomes of it and how to stop it; then the spawn tree's running nodes no ant runs for (a
    node started by hand, or not launched yet), with their time since they started."""
    nodes = raw if isinstance(tree, dict) and isinstance(raw := tree.get("nodes"), dict) else {}
    lines = []
    for ant in ants:
        found = nodes.get(ant["local"])
        node = found if isinstance(found, dict) else {}
        tasks = ", ".join(map(str, node.get("tasks") or []))
        where = (f" · wave {node.get('wave')}" if node.get("wave") else "") + (f" · tasks {tasks}" if tasks else "")
        lines.append(f"  {ant['line']}{where}")
        if ant.get("hint"):
            lines += textwrap.wrap(ant["hint"], HINT_WIDTH, initial_indent="    ", subsequent_indent="    ")
    shown = {a["local"] for a in ants}
    now = clock.now() if now is None else now
    for node_id, node in nodes.items():
        if isinstance(node, dict) and node.get("status") == "running" and node_id not in shown:
            started = node.get("started_epoch")
            since = clock.elapsed(now - started) if isinstance(started, (int, float)) else "?"
            tasks = ", ".join(map(str, node.get("tasks") or []))
            lines.append(f"  {node_id} {node.get('caste')} · wave {node.get('wave')} · {since}" + (f" · tasks {tasks}" if tasks else ""))
    return lines


def _event_lines(recent: list) -> list:
    if not recent:
        return []
    lines = ["", "RECENT EVENTS"]
    for e in reversed(recent):
        stamp = str(e.get("timestamp") or "")[5:16].replace("T", " ")
        lines.append(f"  {stamp}  {one_line(e.get('type'), 22):<18} {one_line(e.get('content'), 90)}")
    return lines


def _error_lines(errors: dict) -> list:
    if not errors["open_count"] and not errors["flagged_patterns"]:
        return []
    lines = ["", f"OPEN ERRORS ({errors['open_count']})"]
    for e in errors["open"]:
        where = f"phase {e.get('phase')}" + (f" task {e.get('task_id')}" if e.get("task_id") else "")
        lines.append(f"  [{e.get('severity')}] {e.get('category')} · {where}: {one_line(e.get('description'), 90)}")
    if errors["flagged_patterns"]:
        lines.append("  recurring: " + ", ".join(f"{p.get('category')} ×{p.get('count')}" for p in errors["flagged_patterns"]))
    return lines


def _friction_lines(frictions: dict) -> list:
    if frictions["recurring"]:
        return ["", "RECURRING FRICTION"] + [
            f"  ×{g['count']} {one_line(g['root_cause'], 90) or '(no root cause)'} — tasks {', '.join(g['tasks'][:5])}"
            for g in frictions["recurring"][:5]
        ]
    if frictions["recent"]:
        return ["", "RECENT FRICTION"] + [
            f"  {r['id']} task {r['task']}: {one_line(r['root_cause'], 80) or '-'} → {one_line(r['resolution'], 60) or '-'}"
            for r in frictions["recent"]
        ]
    return []


# ---------------------------------------------------------------- phase [N|list]


def phase_view(which: str | None = None) -> dict:
    """phase: one phase (its tasks and success criteria) or, with `list`, every phase."""

    color = output.use_color()
    colony = store.read("colony")
    plan = store.read("plan")
    plans_rules.require_plan(plan)  # no plan: the clear error
    current = colony.get("current_phase") or 0
    if which is None:
        which = str(current) if current else "list"
    which = which.strip()
    if which.lower() == "list":
        rows = _phase_rows(plan)
        lines = [f"PHASES ({sum(1 for r in rows if r['status'] == 'completed')}/{len(rows)} completed)"]
        for r in rows:
            mark = "▸" if r["id"] == current else " "
            lines.append(
                f" {mark}{_icon(r['status'], color)} {str(r['id']):>2} {one_line(r['name'], 50)} — "
                f"{r['status']}, {r['tasks']['completed']}/{r['tasks']['total']} tasks"
            )
        return {"phases": rows, "current_phase": current, "text": "\n".join(lines)}
    try:
        phase_id = int(which)
    except ValueError:
        raise input_error("invalid_argument", f"expected a phase number or `list`, got {which!r}") from None
    phase = plans_rules.require_phase(plan, phase_id)
    status = phase.get("status") or "pending"
    counts = plans_rules.task_counts(phase)
    lines = [
        f"Phase {phase_id}: {phase.get('name')} — {status}" + (" (current)" if phase_id == current else ""),
        f"  {one_line(phase.get('description') or '', 300)}",
        "",
        f"Tasks ({counts['completed']}/{counts['total']} completed)",
    ]
    for task in phase.get("tasks") or []:
        if not isinstance(task, dict):
            continue
        tstatus = task.get("status") or "pending"
        deps = task.get("depends_on") or []
        lines.append(
            f"  {_icon(tstatus, color)} {task.get('id')}  {one_line(task.get('description'), 100)}"
            + (f"  (after {', '.join(map(str, deps))})" if deps else "")
        )
    criteria = phase.get("success_criteria") or []
    if criteria:
        lines += ["", "Success criteria"] + [f"  • {one_line(c, 150)}" for c in criteria]
    return {"phase": phase, "current_phase": current, "tasks": counts, "text": "\n".join(lines)}


def _autopilot_view(colony: dict) -> dict:
    """{autopilot, build_holder, spend}: the autopilot run under way (or None), the session that
    holds the colony's build (or None) and the colony's spend (read here, without the protocols:
    `status` stays quick)."""
    data = store.read("costs")
    mine = costs.colony_spend(colony.get("session_id"), data)
    total = mine["total"]
    spawns = store.read("spawns")
    run = ledger.active_autopilot(spawns)
    newest = spawns["spawns"][-1] if spawns["spawns"] else None
    weather = spawns.get("weather")
    out = {
        "autopilot": None,
        "weather": weather if isinstance(weather, dict) else None,  # a limit that holds the colony's ants
        # who sent the newest spawn: the plugin's mod, or the Queen's Agent calls (the markdown commands)
        "runtime": None if newest is None else ("mod" if newest.get("runtime") == "mod" else "prompts"),
        "spend": {
            "tokens": total["tokens"],
            "spawns": total["spawns"],
            "duration_ms": total["duration_ms"],
            "unmetered": total["unmetered"],
            "phases": {k: b["tokens"] for k, b in mine["phases"].items()},
            "castes": {c: line["tokens"] for c, line in total["castes"].items()},
        },
    }
    held = claim.holder(spawns)
    out["build_holder"] = None if held is None else {**held, "text": claim.describe(held)}
    if run is not None:
        stopped = run.get("stopped")
        out["autopilot"] = {
            "scope": run["scope"],
            "range": run["range"],
            "spent": costs.run_spend(run["scope"], data)["total"]["tokens"],
            "caps": {k: run["budget"][k] for k in ("run", "phase")},
            "stopped": stopped["why"] if stopped else None,
            "command": stopped["command"] if stopped else "/ant:run",
        }
    return out


def _autopilot_lines(view: dict) -> list:
    lines = []
    run, spent = view["autopilot"], view["spend"]
    if view.get("build_holder"):  # one build of a colony at a time: who drives it now
        lines.append(f"BUILD HELD BY  {view['build_holder']['text']}")
    if run is not None:
        state = f"stopped: {autopilot_rules.STOP_REASONS.get(run['stopped'], run['stopped'])}" if run["stopped"] else "running"
        lines.append(
            f"AUTOPILOT  run {run['scope']} · phases {run['range']['from']}–{run['range']['to']} · {state} · "
            f"spent {spend.fmt(run['spent'])} of {spend.fmt(run['caps']['run'])}"
        )
        lines.append(f"  continue: {run['command']} · stop it from any terminal: aether run --stop")
    weather = view.get("weather")
    if weather:  # a usage or rate limit: its own word, apart from who holds the build
        now = datetime.fromtimestamp(clock.now(), UTC)
        lines.append(f"LIMIT  {weather_rules.line(weather, now)}: {weather.get('who') or 'an ant'} did not run")
        lines.append(f"  Claude Code said: {one_line(weather.get('detail'), 160)}")
    if view.get("runtime"):
        how = "the plugin's mod (no Queen turns)" if view["runtime"] == "mod" else "the markdown commands (the Queen's turns)"
        lines.append(f"RUNTIME  {view['runtime']}: the newest ants were run by {how}")
    if spent["spawns"]:
        per_caste = ", ".join(f"{c} {spend.fmt(tokens)}" for c, tokens in sorted(spent["castes"].items(), key=lambda kv: -kv[1]))
        lines.append(
            f"SPEND  {spend.fmt(spent['tokens'])} tokens in {spent['spawns']} spawns ({spend.render_phases(spent['phases'])}) · {per_caste}"
        )
    return lines
