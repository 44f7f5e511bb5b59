"""The lifecycle answers around a phase (docs/decisions/modes.md): the pheromone-first flow (suggest FOCUS /
REDIRECT before planning), `/ant:continue`'s start (verification, learnings, the archivist,
completion), and the archivist's hygiene check (an architect ant; report only, the user decides).
"""

from __future__ import annotations

import os

from aether.core import paths
from aether.core.exceptions import state_error
from aether.core.vocabulary import DONE_STATUSES
from aether.rules import lifecycle, modes
from aether.rules import plans as plans_rules
from aether.state import learning, memory, pheromones, schemas, store
from aether.steps import completion, recovery

STEERING = ("FOCUS", "REDIRECT")  # the signals the pheromone-first flow asks for
STATE_FILE_LIMIT_BYTES = 256_000  # a JSON state file bigger than this is reported as oversized
LOG_FILE_LIMIT_BYTES = 1_000_000  # an activity log bigger than this is reported as oversized
FILES_IN_BRIEF = 50


# ---------------------------------------------------------------- learnings


def promotion() -> dict:
    """What a `learnings` answer (build-finish, continue-start) adds so the Queen can promote a
    lesson across projects: the categories learning-promote takes and the command to run."""

    return {"categories": list(learning.CATEGORIES), "promote_command": "aether learning-promote - --category <category>"}


# ---------------------------------------------------------------- pheromone-first


def suggest_signals(colony: dict | None = None) -> dict:
    """signals-suggest: should the Queen suggest /ant:focus or /ant:redirect before planning?
    Yes when the colony is PLANNING, or READY without a plan (colonized, not yet planned), and
    no FOCUS or REDIRECT signal is active."""

    colony = store.read("colony") if colony is None else colony
    state = colony.get("state") or "IDLE"
    rows = pheromones.render(None)["signals"] if state != "IDLE" else []
    active = {t: sum(1 for r in rows if r.get("type") == t) for t in STEERING}
    planned = bool(plans_rules.phases(store.read("plan"))) if state == "READY" else False
    before_planning = state == "PLANNING" or (state == "READY" and not planned)
    suggest = before_planning and not any(active.values())
    if state == "IDLE":
        reason = "no colony yet"
    elif not before_planning:
        reason = f"the colony is {state}" + (" with a plan" if planned else "") + ": signals steer builds from here"
    elif suggest:
        reason = "no FOCUS or REDIRECT is active: steering the colony before it plans shapes the plan"
    else:
        reason = "the colony is steered already (" + ", ".join(f"{n} {t}" for t, n in active.items() if n) + ")"
    commands = ['/ant:focus "<area to prioritise>"', '/ant:redirect "<pattern to avoid>"']
    text = (
        "Before planning, steer the colony: " + " · ".join(commands) + " — then /ant:plan."
        if suggest
        else f"No signal suggestion: {reason}."
    )
    return {"suggest": suggest, "reason": reason, "state": state, "active": active, "commands": commands if suggest else [], "text": text}


# ---------------------------------------------------------------- hygiene (the archivist)


def oversized_state_files() -> list:
    """State files past their size limit, with what to do about each."""

    folder = paths.data_dir()
    out = []
    for name in schemas.PROJECT_FILES:
        spec = schemas.FILES[name]
        path = os.path.join(folder, spec.filename)
        try:
            size = os.path.getsize(path)
        except OSError:
            continue
        if size > STATE_FILE_LIMIT_BYTES:
            out.append(
                {
                    "file": spec.filename,
                    "bytes": size,
                    "limit": STATE_FILE_LIMIT_BYTES,
                    "suggestion": "aether memory-compress"
                    if name == "memory"
                    else "aether pheromone-cleanup"
                    if name == "pheromones"
                    else f"review what {spec.filename} keeps (aether validate-state {name})",
                }
            )
    try:
        mem = store.read("memory")
        tokens = memory.estimate_tokens(mem)
        if tokens > memory.DEFAULT_TOKEN_THRESHOLD and not any(o["file"] == "memory.json" for o in out):
            out.append(
                {
                    "file": "memory.json",
                    "tokens": tokens,
                    "limit_tokens": memory.DEFAULT_TOKEN_THRESHOLD,
                    "suggestion": "aether memory-compress",
                }
            )
    except Exception:  # a damaged memory.json is validate-state's business, not the archivist's
        pass
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        entries = []
    for entry in entries:
        if entry.startswith("activity") and entry.endswith(".log"):
            size = os.path.getsize(os.path.join(folder, entry))
            if size > LOG_FILE_LIMIT_BYTES:
                out.append(
                    {"file": entry, "bytes": size, "limit": LOG_FILE_LIMIT_BYTES, "suggestion": "archive or delete old activity logs"}
                )
    return out


def archivist_brief(phase: int | None, oversized: list, created: list) -> str:
    lines = [
        "--- ARCHIVIST (hygiene report) ---",
        "You are the archivist: an architect ant checking the colony's hygiene"
        + (f" after phase {phase}" if phase else "")
        + ". REPORT ONLY — change, move or delete nothing; "
        "the user decides what to act on.",
        "Look for:",
        "  - stale files: created in earlier phases and no longer referenced",
        "  - dead code: functions, modules or branches nothing calls (abandoned approaches)",
        "  - orphaned config: settings, environment variables or dependencies nothing uses",
        "  - oversized state files (measured by the helper):",
    ]
    lines += [
        f"      {o['file']}: "
        + (f"{o['bytes']} bytes (limit {o['limit']})" if "bytes" in o else f"~{o['tokens']} tokens (limit {o['limit_tokens']})")
        + f" → {o['suggestion']}"
        for o in oversized
    ] or ["      (none)"]
    if created:
        shown = created[:FILES_IN_BRIEF]
        lines.append(
            "Files the colony created so far: "
            + ", ".join(shown)
            + (f" (+{len(created) - len(shown)} more)" if len(created) > len(shown) else "")
        )
    lines += [
        'End with a ```json block: {"recommendations": [{"file": "…", "issue": "stale|dead_code|'
        'orphaned_config|oversized", "recommendation": "…", "risk": "low|medium|high"}]}',
        "--- END ARCHIVIST ---",
    ]
    return "\n".join(lines)


def hygiene(phase: int | None = None) -> dict:
    """hygiene-check: whether the archivist runs after PHASE (FULL mode, every 3rd phase), the
    oversized state files the helper found, and the archivist's brief (for /ant:organize too)."""

    colony = store.read("colony", missing_ok=False)
    phase = phase if phase is not None else (colony.get("current_phase") or None)
    run, reason = modes.archivist_due(colony.get("mode"), phase)
    oversized = oversized_state_files()
    created = []
    for rec in completion.records_of(colony.get("session_id")):
        created += [f for f in rec.get("files_created", []) if f not in created]
    brief = archivist_brief(phase, oversized, created)
    text = f"Archivist {'due' if run else 'not due'}: {reason}. Oversized state files: {', '.join(o['file'] for o in oversized) or 'none'}."
    return {
        "phase": phase,
        "run_archivist": run,
        "reason": reason,
        "every": modes.profile(colony.get("mode")).get("archivist_every"),
        "oversized_state_files": oversized,
        "caste": "architect",
        "subagent_type": "ant:architect",
        "brief": brief,
        "text": text,
    }


# ---------------------------------------------------------------- continue-start


def _flagged(phase: int) -> list:
    """Tasks the failure ladder flagged (or skipped) in the phase's latest build."""
    history = [h for h in store.read("failures")["history"] if isinstance(h, dict) and h.get("phase") == phase]
    if not history:
        return []
    build = history[-1].get("build")
    out = {}
    for h in history:
        if h.get("build") == build and h.get("action") in ("flag", "skip"):
            out[h.get("task")] = {"task": h.get("task"), "action": h.get("action"), "reason": h.get("reason")}
    return list(out.values())


def continue_start() -> dict:
    """continue-start: what /ant:continue does now — the phase's verification, whether to extract
    learnings, whether the archivist runs, whether advancing completes the colony, and `next`."""
    result = continue_view()
    result["text"] = render_continue(result)
    return result


def continue_view() -> dict:
    """What closing the current phase needs (continue-start's answer without its text)."""

    colony = store.read("colony", missing_ok=False)
    state = colony.get("state")
    lifecycle.refuse_while_executing(colony, "continue-start")
    if state not in ("READY", "COMPLETED"):
        raise state_error(
            "invalid_transition",
            f"/ant:continue runs on a READY or COMPLETED colony (it is {state}); "
            + ("finish planning with /ant:plan" if state == "PLANNING" else 'start one with /ant:init "<goal>"'),
            state=state,
            legal=[],
        )
    plan = store.read("plan")
    items = plans_rules.require_plan(plan)
    current = colony.get("current_phase") or 0
    if not current:
        first = items[0]
        raise state_error(
            "nothing_built",
            f"no phase has been built yet; start with /ant:build {first.get('id')} (`aether next --build {first.get('id')}`)",
        )
    phase = plans_rules.require_phase(plan, current)
    status = phase.get("status") or "pending"
    last = items[-1].get("id") == current
    complete = state == "COMPLETED"
    mode = colony.get("mode")
    tasks = [t for t in phase.get("tasks") or [] if isinstance(t, dict)]
    record = completion.latest_record(current, colony.get("session_id"))
    verification = {
        "completed": status in DONE_STATUSES,
        "status": status,
        "tasks": plans_rules.task_counts(phase),
        "failed_tasks": [{"id": t.get("id"), "description": t.get("description")} for t in tasks if t.get("status") == "failed"],
        "skipped_tasks": [t.get("id") for t in tasks if t.get("status") == "skipped"],
        "flagged_tasks": _flagged(current),
        "watcher": (record or {}).get("watcher"),
        "syntax_check": (record or {}).get("syntax_check"),
        "code_loop": (record or {}).get("code_loop"),
    }
    done = status in DONE_STATUSES
    mem = store.read("memory")
    due, why = modes.learning_now(mode, "continue", last)
    extracted = memory.has_learnings(mem, current)
    between = (not last) and modes.learning_now(mode, "between")[0]
    if not done:
        why = "the phase is not completed: learnings wait for a completed build"
    elif extracted:
        why = "the build extracted them already (learning-add refuses a second entry per phase)"
    learnings = {
        "extract_now": bool(due and done and not extracted and status == "completed"),
        "already_extracted": extracted,
        "cadence": modes.profile(mode)["learning"],
        "reason": why,
        "command": f"aether learning-add {current} - --each-line",
        "between_phases": bool(between and done),
        "between_command": f"aether learning-add {current} - --each-line --append" if between and done else None,
        **promotion(),
    }
    hyg = hygiene(current) if done and not complete else None
    archivist = {
        "run": bool(hyg and hyg["run_archivist"]),
        "reason": hyg["reason"] if hyg else modes.archivist_due(mode, current)[1],
        "every": modes.profile(mode).get("archivist_every"),
        "oversized_state_files": hyg["oversized_state_files"] if hyg else [],
        "subagent_type": "ant:architect",
        "brief": hyg["brief"] if hyg and hyg["run_archivist"] else None,
    }
    nxt = []
    if complete:
        if learnings["extract_now"]:
            nxt.append({"slash": None, "command": learnings["command"], "reason": "extract the project's learnings"})
        nxt.append(
            {"slash": "/ant:continue", "command": "aether completion-summary", "reason": "the colony is COMPLETED: show the summary"}
        )  # noqa: E501
    elif not done:
        opts = recovery.options(current, plan)
        nxt.append(
            {
                "slash": f"/ant:build {current}",
                "command": opts[0]["command"] if status in ("failed", "in_progress") else f"aether next --build {current}",
                "reason": f"phase {current} is {status}: build it first",
            }
        )
    else:
        if learnings["extract_now"]:
            nxt.append({"slash": None, "command": learnings["command"], "reason": "extract the phase's learnings (one per line on stdin)"})
        if learnings["between_phases"]:
            nxt.append(
                {
                    "slash": None,
                    "command": learnings["between_command"],
                    "reason": "add what carries over to the next phases (FULL: inter-phase learnings)",
                }
            )
        if archivist["run"]:
            nxt.append(
                {
                    "slash": None,
                    "command": "spawn ant:architect with `archivist.brief`",
                    "reason": "the archivist's report is shown to the user, never acted on without them",
                }
            )
        nxt.append(
            {
                "slash": "/ant:continue",
                "command": "aether next --continue",
                "reason": "the last phase: advancing completes the colony" if last else "move on to the next phase",
            }
        )
    result = {
        "phase": {k: phase.get(k) for k in ("id", "name", "status", "success_criteria")},
        "state": state,
        "verification": verification,
        "can_advance": done and not complete,
        "last_phase": last,
        "completion": last and done,
        "learnings": learnings,
        "archivist": archivist,
        "mode": mode or modes.DEFAULT_MODE,
        "mode_profile": modes.describe(mode, when="continue", phase=current, last_phase=last),
        "next": nxt,
    }
    if not done and not complete:
        result["recovery"] = recovery.options(current, plan)
    return result


def render_continue(result: dict) -> str:
    """continue-start's text: the phase's verification, learnings, archivist and what comes next."""
    phase, verification, learnings, archivist = (result["phase"], result["verification"], result["learnings"], result["archivist"])
    lines = [
        f"Continue · phase {phase['id']}: {phase.get('name')} — {phase.get('status') or 'pending'}"
        + (" (last phase)" if result["last_phase"] else "")
        + f" · mode {result['mode']}"
    ]
    c = verification["tasks"]
    lines.append(f"  Tasks: {c['completed']} completed, {c['failed']} failed, {c['skipped']} skipped of {c['total']}")
    for f in verification["flagged_tasks"]:
        lines.append(f"  ⚑ task {f['task']} {f['action']}: {f['reason']}")
    if verification["watcher"]:
        w = verification["watcher"]
        lines.append(
            f"  Watcher: {'passed' if w.get('passed') else 'failed'}"
            + (f" (score {w['score']:g})" if isinstance(w.get("score"), (int, float)) else "")
        )
    elif verification["syntax_check"]:
        lines.append(f"  Syntax check: {verification['syntax_check'].get('summary')}")
    lines.append(f"  Learnings: {'extract now' if learnings['extract_now'] else 'no'} — {learnings['reason']}")
    lines.append(f"  Archivist: {'runs now' if archivist['run'] else 'no'} — {archivist['reason']}")
    if result.get("recovery"):
        lines.append("  Recovery options:")
        lines += ["  " + line for line in recovery.render_options(result["recovery"])]
    for step in result["next"]:
        lines.append(f"Next: {step['slash'] + ' — ' if step['slash'] else ''}{step['command']} ({step['reason']})")
    return "\n".join(lines)
