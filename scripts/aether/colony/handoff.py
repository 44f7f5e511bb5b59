"""Pause and resume: a colony-owned handoff that lets a new session pick up where the last stopped.

`colony-pause` snapshots what a fresh session needs — goal, state, mode, the current phase,
the running build, active signals, open errors, the last events, the exact next command and
a note from the Queen — into `.aether/data/handoff.json`, and renders it. `colony-resume`
reads it back beside the live state: what changed since the pause, and the next command
computed from the state as it is now. Nothing here changes COLONY_STATE; a handoff left by an
earlier colony (another session id) is reported as stale and ignored.
"""

from __future__ import annotations

from aether.colony import status
from aether.core import clock, inputs
from aether.core.exceptions import state_error
from aether.core.text import one_line
from aether.core.vocabulary import DONE_STATUSES
from aether.rules import plans as plans_rules
from aether.state import events, store

MAX_NOTE_LENGTH = 4000  # the Queen's note: what the state files do not say
SIGNALS_KEPT = 8  # strongest active signals in a handoff
TASK_IDS_SHOWN = 12  # open task ids listed for a running build


# ---------------------------------------------------------------- the snapshot


def _build(colony: dict, plan: dict, phase: dict | None) -> dict | None:
    """The running build (colony EXECUTING): its phase, open tasks and workers by status."""
    if colony.get("state") != "EXECUTING":
        return None

    current = colony.get("current_phase") or 0
    phase = phase or plans_rules.find_phase(plan, current) or {}
    open_tasks = [
        str(t.get("id")) for t in phase.get("tasks") or [] if isinstance(t, dict) and (t.get("status") or "pending") not in DONE_STATUSES
    ]
    tree = colony.get("spawn_tree")
    workers: dict = {}
    waves = 0
    if isinstance(tree, dict) and tree.get("phase") == current and isinstance(tree.get("nodes"), dict):
        for node in tree["nodes"].values():
            if isinstance(node, dict):
                status = str(node.get("status") or "planned")
                workers[status] = workers.get(status, 0) + 1
        waves = len(tree.get("waves") or [])
    return {"phase": current, "name": phase.get("name"), "open_tasks": open_tasks, "waves": waves, "workers": workers}


def snapshot() -> dict:
    """Where the colony stands now (read-only). Raises when there is no colony."""

    overview = status.overview()
    if not overview["initialized"]:
        raise state_error("no_colony", "there is no colony here; start one with /ant:init (`aether colony-init`)")
    colony = store.read("colony")
    plan = store.read("plan")
    current = overview["current_phase"]
    phase = plans_rules.find_phase(plan, current) if current else None
    row = None
    if phase is not None:
        row = {
            "id": current,
            "name": phase.get("name"),
            "status": phase.get("status") or "pending",
            "tasks": plans_rules.task_counts(phase),
        }
    signals = sorted(overview["signals"], key=lambda s: -(s.get("current_strength") or 0))
    return {
        "goal": overview["goal"],
        "state": overview["state"],
        "mode": overview["mode"],
        "current_phase": current,
        "phase": row,
        "progress": overview["progress"],
        "build": _build(colony, plan, phase),
        "signals": [
            {"type": s.get("type"), "content": s.get("content"), "current_strength": s.get("current_strength")}
            for s in signals[:SIGNALS_KEPT]
        ],
        "open_errors": {"count": overview["errors"]["open_count"], "newest": overview["errors"]["open"]},
        "recent_events": overview["events"],
        "next": overview["next"],
    }


def _stamp(iso: str | None) -> str:
    return (iso or "?").replace("T", " ").replace("Z", " UTC")


def render(snap: dict) -> list:
    """A snapshot as text lines (the same for pause and resume)."""
    lines = [f"Goal: {one_line(snap.get('goal'), 200)}"]
    progress = snap.get("progress") or {}
    where = f"{snap.get('state')} · {snap.get('mode') or 'STANDARD'}"
    phase = snap.get("phase")
    if phase:
        tasks = phase.get("tasks") or {}
        where += (
            f" · phase {phase['id']} of {progress.get('phases_total', '?')}: "
            f"{one_line(phase.get('name'), 60)} — {phase.get('status')}, "
            f"{tasks.get('completed', 0)}/{tasks.get('total', 0)} tasks"
        )
    elif progress.get("phases_total"):
        where += f" · {progress.get('phases_completed', 0)}/{progress['phases_total']} phases completed"
    else:
        where += " · no plan yet"
    lines.append(f"State: {where}")
    build = snap.get("build")
    if build:
        workers = ", ".join(f"{n} {s}" for s, n in sorted(build["workers"].items())) or "none spawned yet"
        shown = build["open_tasks"][:TASK_IDS_SHOWN]
        more = f" (+{len(build['open_tasks']) - len(shown)} more)" if len(build["open_tasks"]) > len(shown) else ""
        lines.append(
            f"Build running: phase {build['phase']} · {build['waves']} waves · workers: {workers}"
            f" · open tasks: {', '.join(shown) or 'none'}{more}"
        )
    signals = snap.get("signals") or []
    lines.append("Signals:" + ("" if signals else " none active"))
    for s in signals:
        strength = s.get("current_strength")
        shown = f"{strength:.2f}" if isinstance(strength, (int, float)) else "?"
        lines.append(f"  {str(s.get('type')):<9} {shown:<5} {one_line(s.get('content'), 120)}")
    errors = snap.get("open_errors") or {}
    if errors.get("count"):
        lines.append(f"Open errors ({errors['count']}):")
        for e in errors.get("newest") or []:
            where = f"phase {e.get('phase')}" + (f" task {e.get('task_id')}" if e.get("task_id") else "")
            lines.append(f"  [{e.get('severity')}] {e.get('category')} · {where}: {one_line(e.get('description'), 100)}")
    recent = snap.get("recent_events") or []
    if recent:
        lines.append("Recent events:")
        for e in reversed(recent):
            lines.append(
                f"  {str(e.get('timestamp') or '')[5:16].replace('T', ' ')}  "
                f"{one_line(e.get('type'), 22):<20} {one_line(e.get('content'), 90)}"
            )
    return lines


def _next_lines(nxt: dict) -> list:
    return [f"Next: {nxt.get('slash')} — {nxt.get('reason')}", f"  (helper: {nxt.get('command')})"]


# ---------------------------------------------------------------- colony-pause


@store.writes("colony", "handoff", "events")
def _save_handoff(files, note):
    """Snapshot the colony (locked, so the snapshot holds together) into the handoff, with NOTE."""
    snap = snapshot()
    session = files["colony"].get("session_id")
    now = clock.iso()
    handoff = files["handoff"]
    handoff.update(paused_at=now, resumed_at=None, session_id=session, note=note, snapshot=snap)
    where = f"phase {snap['current_phase']}" if snap["current_phase"] else "before the first build"
    events.append(files["events"], "colony_paused", "queen", f"Colony paused {where} ({snap['state']})")
    return now, session, snap


def pause(note: str | None = None) -> dict:
    """colony-pause: write the handoff (replacing an earlier one) and record the event.
    The snapshot is taken inside the locked update, with the colony locked (so are the plan's
    writers), so the handoff's session, state and phase belong together."""
    if note is not None:
        note = note.strip() or None
    if note is not None:
        inputs.check_size(note, MAX_NOTE_LENGTH, "the note", "the next session reads it whole: say it shorter")
    if not store.exists("colony"):
        snapshot()  # the clear no_colony error, before a lock or a file is made

    paused_at, session, snap = _save_handoff(note)
    path = store.path_of(store.spec_for("handoff"))
    text = [f"COLONY PAUSED · {_stamp(paused_at)}", *render(snap)]
    if note:
        text += ["Note for the next session:", *("  " + line for line in note.splitlines())]
    text += _next_lines(snap["next"])
    text += ["", f"Handoff saved: {path}", "In a new session (also after /clear or compaction): /ant:resume-colony"]
    return {"paused_at": paused_at, "session_id": session, "note": note, "snapshot": snap, "file": path, "text": "\n".join(text)}


# ---------------------------------------------------------------- colony-resume


def _changes(before: dict, now: dict) -> list:
    """What moved between the handoff and now, as {field, before, now}."""

    def pick(snap):  # the saved snapshot is the past's record: read it without trusting its shape
        snap = snap if isinstance(snap, dict) else {}
        phase = snap.get("phase") if isinstance(snap.get("phase"), dict) else {}
        progress = snap.get("progress") if isinstance(snap.get("progress"), dict) else {}
        return {
            "state": snap.get("state"),
            "mode": snap.get("mode"),
            "current_phase": snap.get("current_phase"),
            "phase_status": phase.get("status"),
            "phases_completed": progress.get("phases_completed"),
            "tasks_completed": progress.get("tasks_completed"),
        }

    old, new = pick(before), pick(now)
    return [{"field": key, "before": old[key], "now": new[key]} for key in old if old[key] != new[key]]


@store.writes("handoff", "events")
def _mark_resumed(files, paused_at):
    """Stamp the handoff (paused at PAUSED_AT) resumed and record the event."""
    stamp = clock.iso()
    files["handoff"]["resumed_at"] = stamp
    events.append(files["events"], "colony_resumed", "queen", f"Colony resumed (paused {paused_at})")
    return stamp


def resume() -> dict:
    """colony-resume: the handoff (if this colony left one), the live state, what changed and
    the next command. Marks the handoff resumed and records the event."""
    handoff = store.read("handoff")
    now_snap = snapshot()
    colony = store.read("colony")
    paused_at = handoff.get("paused_at")
    usable = bool(paused_at) and isinstance(handoff.get("snapshot"), dict)
    stale = usable and handoff.get("session_id") != colony.get("session_id")
    paused = usable and not stale
    changes = _changes(handoff["snapshot"], now_snap) if paused else []
    previous_resume = handoff.get("resumed_at") if paused else None
    resumed_at = None
    if paused:
        resumed_at = _mark_resumed(paused_at)

    if paused:
        head = f"COLONY RESUMED · paused {_stamp(paused_at)}"
        if previous_resume:
            head += f" (resumed once already, {_stamp(previous_resume)})"
    elif stale:
        head = "COLONY · the saved handoff belongs to an earlier colony and was ignored; current state:"
    else:
        head = "COLONY · no handoff was saved (not paused); current state:"
    text = [head, *render(now_snap)]
    if paused and handoff.get("note"):
        text += ["Note left at the pause:", *("  " + line for line in handoff["note"].splitlines())]
    if changes:
        text.append("Since the pause: " + "; ".join(f"{c['field'].replace('_', ' ')} {c['before']} → {c['now']}" for c in changes))
    elif paused:
        text.append("Since the pause: nothing changed.")
    text += _next_lines(now_snap["next"])
    return {
        "paused": paused,
        "stale": stale,
        "paused_at": paused_at if paused else None,
        "resumed_at": resumed_at,
        "note": handoff.get("note") if paused else None,
        "handoff": handoff["snapshot"] if paused else None,
        "now": now_snap,
        "changes": changes,
        "next": now_snap["next"],
        "text": "\n".join(text),
    }
