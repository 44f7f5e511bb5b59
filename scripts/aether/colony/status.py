"""What `status` and `phase` show: the colony at a glance, one phase, the phase list, the
spawn tree of the last build, and the next step. Read-only: nothing here writes state."""

from __future__ import annotations

from aether.core import output
from aether.core.exceptions import input_error
from aether.core.text import one_line
from aether.rules import autopilot as autopilot_rules
from aether.rules import plans as plans_rules
from aether.rules import spend
from aether.rules import waves as waves_rules
from aether.rules.lifecycle import next_step
from aether.state import costs, pheromones, store
from aether.state import spawns as ledger
from aether.steps import recovery, worktrees

BAR_WIDTH = 20
RECENT_EVENTS = 5
OPEN_ERRORS_SHOWN = 3
ICONS = {"pending": "○", "in_progress": "◐", "completed": "●", "failed": "✗", "skipped": "–"}
COLORS = {"in_progress": "33", "completed": "32", "failed": "31", "skipped": "2"}  # ANSI SGR codes


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
        rows.append({"id": phase.get("id"), "name": phase.get("name"),
                     "status": phase.get("status") or "pending", "tasks": counts})
    return rows


def _open_errors(errors: dict, plan: dict) -> list:
    """Errors of phases not completed (and errors of no phase); newest first."""
    done = {p.get("id") for p in plans_rules.phases(plan) if p.get("status") == "completed"}
    rows = [e for e in errors.get("errors") or [] if isinstance(e, dict) and e.get("phase") not in done]
    return list(reversed(rows))


def overview() -> dict:
    """status: goal, state, mode, progress, signals, events, errors, spawn tree, next step."""

    color = output.use_color()
    colony = store.read("colony")
    initialized = store.exists("colony") and colony.get("state") != "IDLE"
    plan = store.read("plan") if initialized else {"phases": []}
    nxt = next_step(colony if initialized else {"state": "IDLE"}, plan)
    if not initialized:
        return {"initialized": False, "state": "IDLE", "next": nxt,
                "text": f"No colony here yet.\nNext: {nxt['slash']} — {nxt['reason']}"}

    rows = _phase_rows(plan)
    done = sum(1 for r in rows if r["status"] == "completed")
    tasks_total = sum(r["tasks"]["total"] for r in rows)
    tasks_done = sum(r["tasks"]["completed"] for r in rows)
    block = pheromones.render(None)
    recent = (store.read("events").get("events") or [])[-RECENT_EVENTS:]
    errors = store.read("errors")
    open_errors = _open_errors(errors, plan)
    flagged = [p for p in errors.get("flagged_patterns") or [] if isinstance(p, dict)]
    tree = colony.get("spawn_tree")
    state = colony.get("state")
    mode = colony.get("mode")
    current = colony.get("current_phase") or 0

    result = {
        "initialized": True,
        "goal": colony.get("goal"),
        "state": state,
        "mode": mode,
        "current_phase": current,
        "progress": {"phases_total": len(rows), "phases_completed": done,
                     "tasks_total": tasks_total, "tasks_completed": tasks_done},
        "phases": rows,
        "signals": block["signals"],
        "events": recent,
        "errors": {"open_count": len(open_errors), "open": open_errors[:OPEN_ERRORS_SHOWN],
                   "flagged_patterns": flagged},
        "spawn_tree": tree,
        "next": nxt,
    }

    phase_now = plans_rules.find_phase(plan, current) if current else None
    retries = recovery.retry_log(current) if current else []
    result["retry_log"] = retries
    aborted = bool(current) and any(a.get("phase") == current for a in store.read("failures")["aborts"]
                                    if isinstance(a, dict))
    stuck = state == "READY" and phase_now is not None and phase_now.get("status") in ("failed", "in_progress")
    result["recovery"] = recovery.options(current, plan) if stuck else None
    result["kept_results"] = worktrees.kept() if store.exists("worktrees") else []
    autopilot = _autopilot_view(colony)
    result["autopilot"], result["spend"] = autopilot["run"], autopilot["spend"]
    if autopilot["run"] is not None:
        result["next"] = nxt = {"slash": autopilot["run"]["command"], "command": "aether run",
                                "reason": "the autopilot run " + (f"stopped ({autopilot['run']['stopped']})"
                                                                  if autopilot["run"]["stopped"] else "is under way")}
    frictions = recovery.friction_summary()
    result["frictions"] = {"total": frictions["total"], "recurring": frictions["recurring"], "recent": frictions["recent"]}

    lines = [f"AETHER COLONY · {state} · {mode or 'STANDARD'}", f"Goal: {one_line(colony.get('goal'), 200)}"]
    if rows:
        where = f"Phase {current}" if current else f"{len(rows)} phases planned"
        lines.append(f"{where}  {bar(done, len(rows))} {done}/{len(rows)} phases · "
                     f"{tasks_done}/{tasks_total} tasks")
        width = max(len(one_line(r["name"], 40)) for r in rows)
        for r in rows:
            mark = "▸" if r["id"] == current and state != "COMPLETED" else " "
            counts = r["tasks"]
            lines.append(f" {mark}{_icon(r['status'], color)} {str(r['id']):>2} {one_line(r['name'], 40):<{width}}  "
                         f"{r['status']:<11} {counts['completed']}/{counts['total']} tasks")
    else:
        lines.append("No plan yet.")
    lines += ["", block["text"]]
    if autopilot["lines"]:
        lines += [""] + autopilot["lines"]
    if result["kept_results"]:
        lines += ["", "KEPT RESULTS (builders' work that could not be merged)"] + worktrees.render_kept(result["kept_results"])
    if isinstance(tree, dict):
        lines += ["", "SPAWN TREE"] + _tree_text(tree)
    if recent:
        lines += ["", "RECENT EVENTS"]
        for e in reversed(recent):
            stamp = str(e.get("timestamp") or "")[5:16].replace("T", " ")
            lines.append(f"  {stamp}  {one_line(e.get('type'), 22):<18} {one_line(e.get('content'), 90)}")
    if open_errors or flagged:
        lines += ["", f"OPEN ERRORS ({len(open_errors)})"]
        for e in open_errors[:OPEN_ERRORS_SHOWN]:
            where = f"phase {e.get('phase')}" + (f" task {e.get('task_id')}" if e.get("task_id") else "")
            lines.append(f"  [{e.get('severity')}] {e.get('category')} · {where}: {one_line(e.get('description'), 90)}")
        if flagged:
            lines.append("  recurring: " + ", ".join(f"{p.get('category')} ×{p.get('count')}" for p in flagged))
    if retries:
        lines += ["", f"AUTO-RETRY LOG (phase {current})"] + ["  " + line for line in recovery.render_retry_log(retries)]
    if result["recovery"]:
        lines += ["", f"RECOVERY (phase {current} {'aborted' if aborted else phase_now.get('status')})"]
        lines += recovery.render_options(result["recovery"])
    if frictions["recurring"]:
        lines += ["", "RECURRING FRICTION"]
        lines += [f"  ×{g['count']} {one_line(g['root_cause'], 90) or '(no root cause)'} — tasks {', '.join(g['tasks'][:5])}"
                  for g in frictions["recurring"][:5]]
    elif frictions["recent"]:
        lines += ["", "RECENT FRICTION"]
        lines += [f"  {r['id']} task {r['task']}: {one_line(r['root_cause'], 80) or '-'} → {one_line(r['resolution'], 60) or '-'}"
                  for r in frictions["recent"]]
    lines += ["", f"Next: {nxt['slash']} — {nxt['reason']}"]
    result["text"] = "\n".join(lines)
    return result


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
            lines.append(f" {mark}{_icon(r['status'], color)} {str(r['id']):>2} {one_line(r['name'], 50)} — "
                         f"{r['status']}, {r['tasks']['completed']}/{r['tasks']['total']} tasks")
        return {"phases": rows, "current_phase": current, "text": "\n".join(lines)}
    try:
        phase_id = int(which)
    except ValueError:
        raise input_error("invalid_argument", f"expected a phase number or `list`, got {which!r}") from None
    phase = plans_rules.require_phase(plan, phase_id)
    status = phase.get("status") or "pending"
    counts = plans_rules.task_counts(phase)
    lines = [f"Phase {phase_id}: {phase.get('name')} — {status}" + (" (current)" if phase_id == current else ""),
             f"  {one_line(phase.get('description') or '', 300)}", "",
             f"Tasks ({counts['completed']}/{counts['total']} completed)"]
    for task in phase.get("tasks") or []:
        if not isinstance(task, dict):
            continue
        tstatus = task.get("status") or "pending"
        deps = task.get("depends_on") or []
        lines.append(f"  {_icon(tstatus, color)} {task.get('id')}  {one_line(task.get('description'), 100)}"
                     + (f"  (after {', '.join(map(str, deps))})" if deps else ""))
    criteria = phase.get("success_criteria") or []
    if criteria:
        lines += ["", "Success criteria"] + [f"  • {one_line(c, 150)}" for c in criteria]
    return {"phase": phase, "current_phase": current, "tasks": counts, "text": "\n".join(lines)}


def _autopilot_view(colony: dict) -> dict:
    """The autopilot run under way (or None) and the colony's spend (read here, without the
    protocols: `status` stays quick)."""
    data = store.read("costs")
    mine = costs.colony_spend(colony.get("session_id"), data)
    total = mine["total"]
    run = ledger.active_autopilot(store.read("spawns"))
    out = {"run": None, "spend": {"tokens": total["tokens"], "spawns": total["spawns"],
                                  "duration_ms": total["duration_ms"], "unmetered": total["unmetered"],
                                  "phases": {k: b["tokens"] for k, b in mine["phases"].items()},
                                  "castes": {c: line["tokens"] for c, line in total["castes"].items()}}}
    lines = []
    if run is not None:
        run_tokens = costs.run_spend(run["scope"], data)["total"]["tokens"]
        stopped = run.get("stopped")
        out["run"] = {"scope": run["scope"], "range": run["range"], "spent": run_tokens,
                      "caps": {k: run["budget"][k] for k in ("run", "phase")},
                      "stopped": stopped["why"] if stopped else None,
                      "command": stopped["command"] if stopped else "/ant:run"}
        state = f"stopped: {autopilot_rules.STOP_REASONS.get(stopped['why'], stopped['why'])}" if stopped else "running"
        lines.append(f"AUTOPILOT  run {run['scope']} · phases {run['range']['from']}–{run['range']['to']} · {state} · "
                     f"spent {spend.fmt(run_tokens)} of {spend.fmt(run['budget']['run'])}")
        lines.append(f"  continue: {out['run']['command']} · stop it from any terminal: aether run --stop")
    if total["spawns"]:
        per_caste = ", ".join(f"{c} {spend.fmt(line['tokens'])}" for c, line in
                              sorted(total["castes"].items(), key=lambda kv: -kv[1]["tokens"]))
        lines.append(f"SPEND  {spend.fmt(total['tokens'])} tokens in {total['spawns']} spawns "
                     f"({spend.render_phases(out['spend']['phases'])}) · {per_caste}")
    out["lines"] = lines
    return out
