"""Recovery after a failed or aborted build (docs/decisions/failure-ladder.md), each a path the helper validates:

- resume the phase after a manual fix: `next --build N` (/ant:build N);
- skip a task so the phase can finish: `task-skip TASK --reason …` — refused for a task that
  maps to a success criterion (`plans_rules.maps_to_criterion`: a task the plan says nothing about
  counts as one) or that an open task depends on, unless `--force`;
- skip to the next phase: `phase-skip N --reason …` — only for a phase off every success
  criterion's path (no task of it maps to a criterion, no later task depends on one of its
  tasks); refused with the reasons otherwise (re-plan with /ant:plan instead);
- restore a checkpoint: `checkpoint-restore REF|--phase N [--force]`.

Also the read-backs: the phase's auto-retry log, and friction records (recurring ones first) for
`status` and the planner.
"""

from __future__ import annotations

from aether.core.exceptions import input_error, state_error
from aether.core.text import one_line
from aether.core.vocabulary import DONE_STATUSES
from aether.rules import failures as failures_rules
from aether.rules import lifecycle
from aether.rules import plans as plans_rules
from aether.state import checkpoints, events, store

RECENT_FRICTION = 3  # friction records shown besides the recurring ones
RETRY_LOG_SHOWN = 20


def _dependents(plan: dict, task_ids: set) -> list:
    """Open tasks (not completed or skipped) outside task_ids that depend on one of task_ids."""
    out = []
    for phase in plans_rules.phases(plan):
        for task in phase.get("tasks") or []:
            if (
                isinstance(task, dict)
                and task.get("id") not in task_ids
                and task.get("status") not in DONE_STATUSES
                and set(map(str, task.get("depends_on") or [])) & task_ids
            ):
                out.append(task.get("id"))
    return out


def _criterion_reason(tasks: list) -> str:
    """Why tasks count as mapping to a success criterion (the plan says so, or says nothing)."""
    said = [str(t.get("id")) for t in tasks if plans_rules.criterion_said(t)]
    unsaid = [str(t.get("id")) for t in tasks if plans_rules.criterion_said(t) is None]
    parts = []
    if said:
        parts.append(
            f"task {said[0]} maps to a success criterion of its phase"
            if len(said) == 1
            else f"tasks {', '.join(said)} map to a success criterion of their phase"
        )
    if unsaid:
        parts.append(
            f"the plan does not say whether task(s) {', '.join(unsaid)} map to a success criterion, so "
            f"they count as if they did (`{plans_rules.CRITERION_FIELD}: false` marks a supporting task)"
        )
    return "; ".join(parts)


def task_blockers(plan: dict, task: dict) -> list:
    """Why skipping a task is refused without --force ([] when it may be skipped)."""
    reasons = []
    if plans_rules.maps_to_criterion(task):
        reasons.append(_criterion_reason([task]))
    deps = _dependents(plan, {str(task.get("id"))})
    if deps:
        reasons.append(f"open task(s) {', '.join(map(str, deps))} depend on task {task.get('id')}")
    return reasons


def phase_blockers(plan: dict, phase: dict) -> list:
    """Why a phase is on a success criterion's path ([] when it may be skipped)."""
    ids = {str(t.get("id")) for t in phase.get("tasks") or [] if isinstance(t, dict)}
    reasons = []
    mapped = [
        t
        for t in phase.get("tasks") or []
        if isinstance(t, dict) and plans_rules.maps_to_criterion(t) and t.get("status") not in DONE_STATUSES
    ]
    if mapped:
        reasons.append(_criterion_reason(mapped))
    later = _dependents(plan, ids)
    if later:
        reasons.append(f"later task(s) {', '.join(map(str, later))} depend on this phase's tasks")
    return reasons


# ---------------------------------------------------------------- task-skip


# ---------------------------------------------------------------- phase-skip


# ---------------------------------------------------------------- checkpoints


def _records(data: dict | None = None) -> list:
    data = store.read("checkpoints") if data is None else data
    return [r for r in data["checkpoints"] if isinstance(r, dict)]


def phase_checkpoint(phase: int, data: dict | None = None) -> dict | None:
    """The checkpoint a phase's latest build started from (`build-start phase N`)."""
    found = [r for r in _records(data) if r.get("phase") == phase and str(r.get("label", "")).startswith(f"build-start phase {phase}")]
    return found[-1] if found else None


def checkpoint_list(phase: int | None = None) -> dict:
    """checkpoint-list: the recorded checkpoints, newest first."""
    rows = [r for r in reversed(_records()) if phase is None or r.get("phase") == phase]
    lines = [f"CHECKPOINTS ({len(rows)})" + (f" of phase {phase}" if phase is not None else "")]
    for r in rows:
        lines.append(f"  {r.get('created_at')}  {r.get('ref')}  {str(r.get('commit', ''))[:10]}  {r.get('label')}")
    if not rows:
        lines.append("  (none: checkpoints are made by build-start and code loop iterations, inside git)")
    else:
        lines.append("Restore one: aether checkpoint-restore REF (or --phase N for the start of phase N's build)")
    return {"checkpoints": rows, "count": len(rows), "text": "\n".join(lines)}


@store.writes("plan", "checkpoints", "events")
def _restore_checkpoint(files, ref: str | None, phase: int | None, force: bool) -> dict:
    """Restore the checkpoint's files, last, after every check; reset the tasks its phase lost."""
    # build-start locks the plan too, so with it held the colony cannot start EXECUTING
    colony, plan = store.read("colony"), files["plan"]
    lifecycle.refuse_while_executing(colony, "checkpoint-restore", "restore")
    if phase is not None:
        record = phase_checkpoint(phase, files["checkpoints"])
        if record is None:
            raise state_error(
                "no_checkpoint", f"no checkpoint of the start of phase {phase}'s build is recorded (`aether checkpoint-list` shows them)"
            )
        name = record["ref"]
    else:
        assert ref is not None  # checkpoint_restore takes exactly one of REF and --phase
        name = ref.strip()
        record = next(
            (
                r
                for r in reversed(_records(files["checkpoints"]))
                if name in (r.get("ref"), r.get("commit")) or (len(name) >= 7 and str(r.get("commit", "")).startswith(name))
            ),
            None,
        )
    label = str((record or {}).get("label", ""))
    start_of = (record or {}).get("phase") if label.startswith("build-start phase") else None
    reset, warnings = [], []
    if start_of is not None:
        target = plans_rules.find_phase(plan, start_of)
        if target is not None and target.get("status") != "completed":
            for task in target.get("tasks") or []:
                if isinstance(task, dict) and task.get("status") == "completed":
                    task["status"] = "pending"
                    reset.append(task.get("id"))
        ids = [p.get("id") for p in plans_rules.phases(plan)]
        later = [
            p.get("id")
            for p in plans_rules.phases(plan)
            if p.get("status") == "completed" and start_of in ids and ids.index(p.get("id")) >= ids.index(start_of)
        ]
        if later:
            warnings.append(f"phase(s) {', '.join(map(str, later))} are marked completed but their work is not in this checkpoint")
    events.append(
        files["events"],
        "checkpoint_restored",
        "queen",
        f"restored {name}" + (f" (start of phase {start_of}; tasks back to pending: {', '.join(map(str, reset))})" if reset else ""),
    )
    # last: every refusal above (and in checkpoints.restore, before it removes a file) changed nothing
    restored = checkpoints.restore(name, force, files["checkpoints"])
    return {
        "name": name,
        "record": record,
        "label": label,
        "start_of": start_of,
        "reset": reset,
        "warnings": warnings,
        "restored": restored,
    }


def checkpoint_restore(ref: str | None, phase: int | None, force: bool = False) -> dict:
    """checkpoint-restore: put a checkpoint's files back (checkpoints.restore). Restoring the
    start of a phase's build also sets that phase's completed tasks back to pending (their work
    is gone), unless the phase is completed.

    Everything is checked before a file is touched, with the plan locked: the colony is not
    EXECUTING, the plan and checkpoints.json are readable, the checkpoint exists, nothing unsaved
    would be lost. The working tree is restored last, inside the same locked update."""

    if (ref is None) == (phase is None):
        raise input_error("usage_error", "name the checkpoint (REF) or give --phase N, not both")

    out = _restore_checkpoint(ref, phase, force)
    restored = out["restored"]
    checkpoints.forget(restored.pop("dropped"))
    ref, record, label, start_of = out["name"], out["record"], out["label"], out["start_of"]
    reset, warnings = out["reset"], out["warnings"]
    nxt = (
        {
            "slash": f"/ant:build {start_of}",
            "command": f"aether next --build {start_of}",
            "reason": f"rebuild phase {start_of} from its starting point",
        }
        if start_of is not None
        else {"slash": "/ant:status", "command": "aether status", "reason": "see where the colony stands"}
    )
    lines = [
        f"Restored {ref} ({restored['commit'][:10]})" + (f": {label}" if label else ""),
        f"Removed {len(restored['removed'])} file(s) created since." if restored["removed"] else "No file had to be removed.",
    ]
    if restored.get("saved_first"):
        lines.append(f"Your unsaved changes were kept first as {restored['saved_first']['ref']}.")
    if reset:
        lines.append(f"Tasks back to pending: {', '.join(map(str, reset))}")
    lines += [f"warning: {w}" for w in warnings]
    lines.append(f"Next: {nxt['slash']} — {nxt['reason']}")
    return {
        **restored,
        "checkpoint": record,
        "phase": start_of,
        "tasks_reset": reset,
        "warnings": warnings,
        "next": nxt,
        "text": "\n".join(lines),
    }


# ---------------------------------------------------------------- read-backs


def retry_log(phase: int, build: str | None = None) -> list:
    """The auto-retry log of a phase's latest build (or of BUILD): [{task, attempt, kind, error,
    fix_applied, result}]."""
    logs = [r for r in store.read("failures")["retry_log"] if isinstance(r, dict) and r.get("phase") == phase]
    if build is None and logs:
        build = logs[-1].get("build")
    return [
        {k: r.get(k) for k in ("task", "attempt", "kind", "error", "fix_applied", "result", "node")}
        for r in logs
        if r.get("build") == build
    ][-RETRY_LOG_SHOWN:]


def render_retry_log(rows: list) -> list:
    marks = {"recovered": "✓ recovered", "failed": "✗ still failing", "pending": "… running"}
    lines = ["| Task | Attempt | Error | Fix applied | Result |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['attempt']} ({r['kind']}) | {one_line(r['error'], 60)} | "
            f"{one_line(r['fix_applied'], 60) or '-'} | {marks.get(r['result'], r['result'])} |"
        )
    return lines


def options(phase_id: int, plan: dict | None = None) -> list:
    """The recovery options of a failed or aborted phase, each with its exact command and whether
    the helper would accept it now."""
    plan = store.read("plan") if plan is None else plan
    phase = plans_rules.find_phase(plan, phase_id) or {}
    failed = [t for t in phase.get("tasks") or [] if isinstance(t, dict) and t.get("status") == "failed"]
    if not failed:
        failed = [t for t in phase.get("tasks") or [] if isinstance(t, dict) and t.get("status") not in DONE_STATUSES]
    skippable = [t.get("id") for t in failed if not task_blockers(plan, t)]
    blockers = phase_blockers(plan, phase) if phase else ["the phase is not in the plan"]
    record = None
    try:
        record = phase_checkpoint(phase_id)
    except Exception:  # a damaged checkpoints.json only hides this option
        record = None
    first = skippable[0] if skippable else (failed[0].get("id") if failed else "TASK")
    return [
        {
            "id": "resume",
            "label": "Fix it by hand, then resume the phase",
            "slash": f"/ant:build {phase_id}",
            "command": f"aether next --build {phase_id}",
            "available": True,
        },
        {
            "id": "skip_task",
            "label": "Skip a task so the phase can finish",
            "command": f"aether task-skip {first} --reason -",
            "tasks": skippable,
            "available": bool(skippable),
            "why": None if skippable else "every open task maps to a success criterion or has dependents (--force overrides)",
        },
        {
            "id": "skip_phase",
            "label": "Skip to the next phase",
            "command": f"aether phase-skip {phase_id} --reason -",
            "available": not blockers,
            "why": "; ".join(blockers) or None,
        },
        {
            "id": "restore",
            "label": "Restore the checkpoint from before the phase's build",
            "command": f"aether checkpoint-restore --phase {phase_id}",
            "checkpoint": record.get("ref") if record else None,
            "available": record is not None,
            "why": None if record else "no checkpoint recorded (outside git?)",
        },
        {"id": "replan", "label": "Reshape the plan", "slash": "/ant:plan", "command": "aether next --plan", "available": True},
    ]


def render_options(rows: list) -> list:
    lines = []
    for n, opt in enumerate(rows, start=1):
        how = opt.get("slash") and f"{opt['slash']} (`{opt['command']}`)" or f"`{opt['command']}`"
        tail = "" if opt["available"] else f" — not available: {opt.get('why')}"
        lines.append(f"  {n}. {opt['label']}: {how}{tail}")
    return lines


def friction_summary() -> dict:
    """friction-summary: friction records read back — recurring root causes first, then the latest few."""

    records = [f for f in store.read("failures")["friction"] if isinstance(f, dict)]
    groups: dict = {}
    for f in records:
        key = failures_rules.normalize_error(f.get("root_cause") or "") or f"(no root cause) {f.get('id')}"
        groups.setdefault(key, []).append(f)
    recurring: list[dict] = []
    for key, items in groups.items():  # noqa: B007
        if len(items) > 1 or any(i.get("pattern") for i in items):
            recurring.append(
                {
                    "root_cause": items[-1].get("root_cause") or "",
                    "count": len(items),
                    "ids": [i.get("id") for i in items],
                    "tasks": [f"{i.get('phase')}/{i.get('task')}" for i in items],
                    "resolution": items[-1].get("resolution") or "",
                    "pattern": next((i.get("pattern") for i in reversed(items) if i.get("pattern")), None),
                }
            )
    recurring.sort(key=lambda g: -g["count"])
    recent = [
        {k: f.get(k) for k in ("id", "phase", "task", "attempts", "root_cause", "resolution", "pattern")}
        for f in records[-RECENT_FRICTION:]
    ][::-1]
    lines = []
    if records:
        lines.append("--- FRICTION (recoveries in earlier builds: plan around them) ---")
        if recurring:
            lines.append("Recurring:")
            lines += [
                f"  - {one_line(g['root_cause'], 160) or '(no root cause)'} (×{g['count']}: tasks "
                f"{', '.join(g['tasks'][:6])}) — fixed by: {one_line(g['resolution'], 120) or '-'}"
                for g in recurring[:10]
            ]
        lines.append("Latest:")
        lines += [
            f"  - {r['id']} phase {r['phase']} task {r['task']} ({r['attempts']} attempts): "
            f"{one_line(r['root_cause'], 120) or '-'} → {one_line(r['resolution'], 100) or '-'}"
            for r in recent
        ]
        lines.append("--- END FRICTION ---")
    return {"total": len(records), "recurring": recurring, "recent": recent, "text": "\n".join(lines)}
