"""After a phase, driven: `/ant:continue` (`aether next --continue`) and the autopilot between two
phases run this one sequence (docs/decisions/the-helper-drives.md, shapes in docs/contracts.md).

The phase's lessons when they are due and its build did not ask for them (the Queen writes them:
a `lessons` action, recorded by `aether record lessons` — the build's lessons go the same way);
then the archivist when the mode says it is due (an architect ant: a hygiene report, kept and
shown, never acted on); then phase-advance — or, on a COMPLETED colony, its summary. A phase
that is not completed stops with its recovery options. The autopilot adopts a continue run as
it adopts a build run, so a stop or a spawn of it is the run's.
"""

from __future__ import annotations

from aether.colony import between_phases, dispatch
from aether.core.exceptions import AetherError, input_error, state_error
from aether.core.text import one_line
from aether.rules import contracts
from aether.rules import drive as drive_rules
from aether.state import events, learning, memory, store
from aether.state import spawns as ledger
from aether.steps import completion, phase_advance

MAX_STEPS = 20  # helper steps in one call (a guard against a loop in the rules, never reached)
LESSONS = "aether record lessons - <<'EOF'"
MAX_SHOWN_RECOMMENDATIONS = 10


# ---------------------------------------------------------------- the lessons a phase taught


def lessons_action(run: dict, phase: int, answers_scope: str | None, between: bool | None = False) -> dict:
    """The `lessons` action: the Queen writes 1–5 lessons; `aether record lessons` keeps them."""
    cats = ", ".join(learning.CATEGORIES)
    source = (
        f"from the answers recorded in .aether/spawns/{answers_scope}/"
        if answers_scope
        else f"from what `aether phase {phase}` and `aether activity-log-read` print"
    )
    carry = " Include what carries over to the next phases." if between else ""
    return {
        "action": "lessons",
        "command": LESSONS,
        "run": run["scope"],
        "phase": phase,
        "text": f"Write 1–5 lessons phase {phase} taught ({source}), concrete, one per line.{carry} Start "
        f"a line with `global <category>:` when it helps other projects too (categories: {cats}).",
    }


def _asking(data: dict) -> dict | None:
    """The run that waits for its phase's lessons: the newest build or continue run, if it asks."""
    run = next((r for r in reversed(data["runs"]) if r.get("command") in ("build", "continue")), None)
    if run is None or not run.get("lessons_due") or run.get("lessons_done") or (run["command"] == "build" and not run.get("finished")):
        return None
    return run


def record_lessons(text: str) -> dict:
    """The phase's lessons (under the driver's lock): plain lines go to memory; `global
    <category>: …` lines are promoted too. The caller answers the next action."""
    run = _asking(store.read("spawns"))
    if run is None:  # recorded once, never twice
        raise state_error("no_lessons_due", "no build or continue waits for its phase's lessons")
    lessons, promote = [], []
    for raw in memory.split_lines(text):
        line = raw.strip().lstrip("-* ").strip()
        head, sep, rest = line.partition(":")
        words = head.split()
        if sep and len(words) == 2 and words[0].lower() == "global" and words[1].lower() in learning.CATEGORIES:
            line = rest.strip()
            promote.append((line, words[1].lower()))
        if line:
            lessons.append(line)
    if not lessons:
        raise input_error("invalid_content", "no lessons given: one per line")
    for line, _cat in promote:  # every line checked before the first is written
        learning.check_content(line)
    memory.add_learnings(run["phase"], lessons, run.get("phase_name"), None, "append")
    promoted = [learning.promote(line, source_phase=run["phase"], category=cat) for line, cat in promote]
    run["lessons_done"] = True
    dispatch.save_run(run)
    return {
        "recorded": len(lessons),
        "promoted": sum(1 for p in promoted if p.get("stored")),
        "categories": list(between_phases.promotion()["categories"]),
        "run": run,
    }


def forgo_lessons(why: str) -> dict | None:
    """No lessons for the phase (under the driver's lock): the ant asked for them gave none, twice.
    The run goes on without them, and says so; returns the run (None: none was waiting)."""
    run = _asking(store.read("spawns"))
    if run is None:
        return None
    run.update(lessons_done=True, lessons_forgone=why)
    dispatch.save_run(run)
    return run


# ---------------------------------------------------------------- the run


def continue_run(parent: str | None = None) -> dict:
    """The continue run of the current phase that goes on, or a new one (what closing it needs,
    from continue-start's view; refused while a build runs)."""
    colony = store.read("colony", missing_ok=False)
    run = ledger.current_run(store.read("spawns"), "continue")
    if (
        run is not None
        and not run.get("done")
        and run.get("phase") == colony.get("current_phase")
        and run.get("state") == colony.get("state")
    ):
        if parent and run.get("parent") != parent:
            run["parent"] = parent
            dispatch.save_run(run)
        return run
    view = between_phases.continue_view()
    learn, phase = view["learnings"], view["phase"]
    build = next((r for r in reversed(store.read("spawns")["runs"]) if r.get("command") == "build" and r.get("phase") == phase["id"]), None)
    return dispatch.new_run(
        "continue",
        phase=phase["id"],
        phase_name=phase.get("name"),
        state=view["state"],
        parent=parent,
        done_phase=view["verification"]["completed"],
        # the build's lessons asked for what carries over too (FULL): not asked twice
        lessons_due=bool(learn["extract_now"] or (learn["between_phases"] and not learn["already_extracted"])),
        between=bool(learn["between_phases"]),
        lessons_done=False,
        archivist_due=bool(view["archivist"]["run"]),
        report=None,
        advanced=False,
        answers_scope=build["scope"] if build else None,
        actions=0,
    )


def _view(run: dict) -> dict:
    return {
        "state": run.get("state"),
        "done": run.get("done_phase"),
        "advanced": run.get("advanced"),
        "lessons": {"due": run.get("lessons_due"), "done": run.get("lessons_done")},
        "archivist": {"due": run.get("archivist_due"), "answered": run.get("report") is not None},
    }


# ---------------------------------------------------------------- the archivist's report


def _spawn_archivist(run: dict) -> dict:
    phase = run["phase"]
    brief = between_phases.hygiene(phase)["brief"]
    return dispatch.dispatch(run, [(f"arch{phase}", "archivist", "ant:architect", brief)], phase_key=str(phase))


def apply(run: dict, record: dict, text: str) -> str:
    """The archivist's hygiene report: kept as its answer file, its summary as an event, its
    recommendations shown to the user."""
    recommendations = []
    try:
        doc = contracts.extract_json(text, "the hygiene report")
        doc = doc if isinstance(doc, dict) else {}
        recommendations = [r for r in doc.get("recommendations") or [] if isinstance(r, dict)]
        summary = doc.get("summary")
    except AetherError:
        summary = None
    summary = one_line(summary or next((line for line in text.splitlines() if line.strip()), "(empty report)"), 300)
    _hygiene_event(summary, record["ref"])
    run["report"] = {
        "phase": run.get("phase"),
        "summary": summary,
        "file": ledger.answer_rel(record["ref"]),
        "recommendations": [
            {k: one_line(r.get(k), 200) for k in ("file", "issue", "recommendation", "risk")}
            for r in recommendations[:MAX_SHOWN_RECOMMENDATIONS]
        ],
    }
    dispatch.save_run(run)
    return f"{record['local']} architect: hygiene report kept ({summary[:80]})"


@store.writes("events")
def _hygiene_event(data, summary: str, ref: str) -> None:
    events.append(data, "hygiene_report", "architect", f"{summary} (report: {ledger.answer_rel(ref)})")


def report_lines(report: dict | None) -> list:
    """The archivist's report as the user sees it (report only: the user decides)."""
    if not report:
        return []
    lines = [f"Archivist after phase {report['phase']}: {report['summary']} ({report['file']})"]
    for r in report.get("recommendations") or []:
        lines.append(
            f"  - {r['file'] or '(project)'}: {r['issue']} — {r['recommendation']}" + (f" (risk {r['risk']})" if r.get("risk") else "")
        )
    if report.get("recommendations"):
        lines.append("  (Report only: nothing was changed. You decide what to act on.)")
    return lines


# ---------------------------------------------------------------- steps


def _advance(run: dict) -> None:
    out = phase_advance.phase_advance()
    run.update(advanced=True, advance_text=out["text"], next_slash=(out.get("next") or {}).get("slash"))
    dispatch.save_run(run)


def _done(run: dict) -> dict:
    run["done"] = True
    dispatch.save_run(run)
    if run.get("advanced"):
        lines = [f"Phase {run['phase']} ({run.get('phase_name')}) is closed."]
        lines += report_lines(run.get("report"))
        text = "\n".join(lines) + "\n\n" + run.get("advance_text", "")
        return {"action": "done", "text": text, "command": run.get("next_slash"), "run": run["scope"], "phase": run["phase"]}
    return {"action": "done", "text": completion.summary()["text"], "command": None, "run": run["scope"], "phase": run["phase"]}


def _stop(run: dict) -> dict:
    view = between_phases.continue_view()
    run["done"] = True
    dispatch.save_run(run)
    command = next((n["slash"] for n in view["next"] if n.get("slash")), None)
    return {
        "action": "stop",
        "why": "not_built",
        "text": between_phases.render_continue(view),
        "command": command,
        "run": run["scope"],
        "phase": run["phase"],
    }


def advance(run: dict, guard=None) -> dict:
    """The next action of closing the phase, after every helper step on the way. `guard(castes)`
    (an autopilot run's spend cap) sees the archivist's spawn before it is dispatched."""
    for _ in range(MAX_STEPS):
        run = ledger.run_of(store.read("spawns"), run["scope"]) or run
        step = drive_rules.next_continue_step(_view(run))
        do = step["do"]
        if do == "advance":
            _advance(run)
            continue
        if do == "lessons":
            return lessons_action(run, run["phase"], run.get("answers_scope"), run.get("between"))
        if do == "spawn_archivist":
            flying = dispatch.running(run, [f"arch{run['phase']}"])
            held = guard(["architect"]) if guard is not None and not flying else None
            if held is not None:
                return held
            action = _spawn_archivist(run)
            action.update(run=run["scope"], phase=run["phase"])
            return action
        if do == "stop":
            return _stop(run)
        return _done(run)
    raise state_error("drive_loop", f"closing the phase made no progress in {MAX_STEPS} steps; see `aether status`")
