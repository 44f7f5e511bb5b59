"""The plan protocol, driven: `aether next --plan` and the answers of the plan's spawns
(docs/decisions/the-helper-drives.md, shapes in docs/contracts.md).

Scouts research first (a research list from the user's guidance, else derived from the goal);
then a planner (`ant:route-setter`) drafts and a critic (`ant:watcher`) scores, in a plan loop
the helper decides (loops.py); a complete loop's latest draft becomes the colony's plan. The
planner's brief carries the research briefs' paths (never their contents) and, from the second
round, its last draft and the critic's feedback. Answers reach plan-draft-store,
feedback-store and research-collect as the ants gave them.
"""

from __future__ import annotations

from aether.colony import dispatch, requirements, research
from aether.core.exceptions import EXIT_INPUT, AetherError, state_error
from aether.core.text import one_line
from aether.rules import drive as drive_rules
from aether.rules import plans as plans_rules
from aether.state import spawns as ledger
from aether.state import store
from aether.steps import critique as critique_view
from aether.steps import drafts, loops, plans

MAX_STEPS = 100
HELPER_STEPS = ("plan_start", "research_plan", "research_collect", "loop_init", "decide", "load")


# ---------------------------------------------------------------- runs and the view


def plan_run(guidance: str | None, force: bool = False, accept: bool = False) -> dict:
    """The plan run `aether next --plan` continues (a new one unless one is under way);
    guidance given while its loop waits for the user is stored as the user's feedback, and
    `accept` takes the latest draft as it is."""
    data = store.read("spawns")
    run = ledger.current_run(data, "plan")
    loop = _loop(run) if run and not run.get("done") else None
    if accept and (loop is None or loop["status"] != "awaiting_user"):
        raise state_error("nothing_to_accept", "no plan loop waits for your answer: run /ant:plan to plan")
    if run is None or run.get("done"):
        return dispatch.new_run("plan", guidance=guidance, force=force, refusals=0, scouts=[], research=None, loop_id=None, loaded=None)
    if accept:
        loops.feedback_store(run["loop_id"], guidance or "Accepted as it is.", "user")
        run["accepted"] = True
    elif guidance and loop and loop["status"] == "awaiting_user":
        loops.feedback_store(run["loop_id"], guidance, "user")
        run["refusals"] = 0
    elif guidance:  # given mid-run: the next planner brief carries it
        run["guidance"] = "\n".join(g for g in (run.get("guidance"), guidance) if g)
    if force:
        run["force"] = True
        run.pop("blocked", None)  # the plan that has progress is replaced now
    dispatch.save_run(run)
    return run


def _loop(run: dict) -> dict | None:
    if not run.get("loop_id"):
        return None
    return next((l for l in store.read("loops")["loops"] if l.get("id") == run["loop_id"]), None)


def _view(run: dict) -> dict:
    loop = _loop(run)
    view_loop = None
    if loop is not None:
        number = len(loop["iterations"]) + 1
        entry = next((e for e in store.read("drafts")["loops"] if e.get("loop_id") == loop["id"]), None)
        view_loop = {
            "status": loop["status"],
            "draft": any(d.get("iteration") == number for d in (entry or {}).get("drafts", [])),
            "critic": any(f["kind"] == "critic" and f.get("iteration") == number for f in loop["feedback"]),
        }
    spawned = ledger.of_scope(store.read("spawns"), run["scope"])
    scouts = [s for s in spawned if s["kind"] == "scout"]
    research_view = None
    if run.get("research") is not None:
        research_view = {
            "tasks": run["research"].get("tasks", []),
            "collected": run["research"].get("collected"),
            "recorded": bool(scouts) and all(s["status"] == "recorded" for s in scouts),
        }
    return {
        "started": bool(run.get("started_text")),
        "research": research_view,
        "loop": view_loop,
        "refusals": run.get("refusals", 0),
        "accepted": bool(run.get("accepted")),
        "loaded": bool(run.get("loaded")),
    }


# ---------------------------------------------------------------- helper steps


def _research_plan(run: dict) -> None:
    guidance = run.get("guidance") or ""
    try:
        listed = requirements.parse_list(guidance) if guidance.strip() else []
        out = research.plan(guidance, "list") if listed else research.plan(None, "goal")
        run["research"] = {
            "tasks": [t["id"] for t in out["tasks"]],
            "briefs": {t["id"]: t["text"] for t in out["tasks"]},
            "collected": False,
        }
    except AetherError as exc:
        if exc.code != "no_research_items":
            raise
        run["research"] = {"tasks": [], "collected": True, "text": ""}


def _research_collect(run: dict) -> None:
    answers = [ledger.read_answer(s["ref"]) or "" for s in ledger.of_scope(store.read("spawns"), run["scope"]) if s["kind"] == "scout"]
    out = research.collect("\n\n".join(answers))
    run["research"].update(collected=True, text=out["text"])


def _decide(run: dict) -> None:
    loops.decide(run["loop_id"])


def _load(run: dict) -> None:
    try:
        draft, number = drafts.plan_of(run["loop_id"])
        out = plans.load(draft, bool(run.get("force")))
    except AetherError as exc:
        if exc.code != "plan_has_progress":
            raise
        run["blocked"] = exc.message
        return
    run["loaded"] = {"text": out["text"], "next": (out.get("next") or {}).get("slash")}


def _helper_step(run: dict, step: dict) -> None:
    do = step["do"]
    if do == "plan_start":
        try:
            run["started_text"] = plans.start()["text"]
        except AetherError:  # refused before it began (a build is running …): no run left to capture `next`
            run["done"] = True
            dispatch.save_run(run)
            raise
    elif do == "research_plan":
        _research_plan(run)
    elif do == "research_collect":
        _research_collect(run)
    elif do == "loop_init":
        run["loop_id"] = loops.init("plan")["loop_id"]
    elif do == "decide":
        _decide(run)
    elif do == "load":
        _load(run)
    dispatch.save_run(run)


# ---------------------------------------------------------------- the Queen's actions


def _planner_brief(run: dict) -> str:
    loop = _loop(run)
    parts = ["--- PLANNER ---", run["started_text"], (run.get("research") or {}).get("text") or ""]
    if run.get("guidance"):
        parts.append(f"Guidance from the user: {run['guidance']}")
    if loop and loop["iterations"]:
        parts += [drafts.get(run["loop_id"])["text"], loops.feedback_get(run["loop_id"])["text"]]
    if run.get("refused"):
        parts.append(f"Your last draft was refused — fix this and answer again: {run['refused']}")
    return "\n".join(p.strip("\n") for p in parts if p)


def _critic_brief(run: dict) -> str:
    parts = ["--- PLAN CRITIC ---", run["started_text"], drafts.get(run["loop_id"])["text"]]
    if run.get("refused"):
        parts.append(f"Your last answer was refused — {run['refused']}")
    return "\n".join(p.strip("\n") for p in parts if p)


def _local(run: dict, kind: str) -> str:
    loop = _loop(run)
    assert loop is not None  # the planner and critic are spawned only once the run's loop exists
    return f"{kind}{len(loop['iterations']) + 1}" + ("" if not run.get("refusals") else f"-{run['refusals'] + 1}")


def _queen_action(run: dict, step: dict) -> dict:
    do = step["do"]
    if do == "spawn_scouts":
        briefs = run["research"]["briefs"]
        done = {sp["local"] for sp in ledger.of_scope(store.read("spawns"), run["scope"]) if sp["status"] == "recorded"}
        return dispatch.dispatch(
            run, [(f"scout-{tid}", "scout", "ant:scout", briefs[tid]) for tid in run["research"]["tasks"] if f"scout-{tid}" not in done]
        )
    if do == "spawn_planner":
        return dispatch.dispatch(run, [(_local(run, "planner"), "planner", "ant:route-setter", _planner_brief(run))])
    if do == "spawn_critic":
        return dispatch.dispatch(run, [(_local(run, "critic"), "critic", "ant:watcher", _critic_brief(run))])
    if do == "ask":
        answer = "Answer with /ant:plan <your guidance> for another round, or take the latest draft as it is with /ant:plan --accept."
        return {
            "action": "ask",
            "command": "/ant:plan <your guidance>",
            "text": critique_view.present(run["loop_id"], answer=answer)["text"],
        }
    if do == "stop":
        return {**_stop(run, _refused_text(run), "/ant:plan"), "why": step.get("why")}
    return _done(run)


def _refused_text(run: dict) -> str:
    """The person's text when the plan loop stops on answers refused again and again: what was
    wrong and how to go on (the ant's own instruction stays in its brief)."""
    said = run.get("refused_said") or {}
    who = "critic's answer" if said.get("by") == "critic" else "planner's draft"
    times = "twice" if drive_rules.MAX_ANSWER_ATTEMPTS == 2 else f"{drive_rules.MAX_ANSWER_ATTEMPTS} times"
    lines = [f"The plan loop stopped: Aether refused the {who} {times}. No plan was loaded."]
    if said.get("what"):
        lines.append(f"What was wrong: {said['what']}.")
    if said.get("by") == "critic":
        lines.append("To go on: run /ant:plan again (a new plan run: research, planner, critic).")
    else:
        lines.append(
            "To go on: run /ant:plan again, or tell the planner what to do differently with "
            "/ant:plan <your guidance> (/ant:focus and /ant:redirect steer it too)."
        )
    return "\n".join(lines)


def _what_was_wrong(kind: str, exc: AetherError) -> str:
    """A refused answer's fault in the person's words (no instruction to the ant)."""
    defects = exc.details.get("defects")
    if kind == "planner" and isinstance(defects, list) and defects:
        shown = "; ".join(f"{d['path']}: {d['problem']}" for d in defects[: plans_rules.MAX_DEFECTS_IN_MESSAGE])
        more = len(defects) - plans_rules.MAX_DEFECTS_IN_MESSAGE
        noun = "defect" if len(defects) == 1 else "defects"
        return f"its last draft has {len(defects)} {noun}: {shown}" + (f" (and {more} more)" if more > 0 else "")
    if exc.code == "critic_score_missing":
        return "it gave no score Aether can read (an Overall Score from 0 to 100)"
    return exc.message.rstrip(".")


def _stop(run: dict, text: str, command: str | None) -> dict:
    run["done"] = True
    dispatch.save_run(run)
    return {"action": "stop", "text": text, "command": command}


def _done(run: dict) -> dict:
    if run.get("blocked"):
        return {
            "action": "ask",
            "command": "/ant:plan --force",
            "text": f"{run['blocked']}\nReplace it with /ant:plan --force (completed phases are kept by id).",
        }
    run["done"] = True
    dispatch.save_run(run)
    loaded = run.get("loaded") or {}
    return {"action": "done", "text": loaded.get("text", "The plan is loaded."), "command": loaded.get("next")}


def advance(run: dict) -> dict:
    for _ in range(MAX_STEPS):
        run = ledger.run_of(store.read("spawns"), run["scope"]) or run
        if run.get("blocked"):
            return {**_done(run), "run": run["scope"]}
        step = drive_rules.next_plan_step(_view(run))
        if step["do"] in HELPER_STEPS:
            _helper_step(run, step)
            continue
        return {**_queen_action(run, step), "run": run["scope"]}
    raise state_error("drive_loop", f"the plan made no progress in {MAX_STEPS} steps; see `aether status`")


# ---------------------------------------------------------------- answers


def apply(run: dict, record: dict, text: str) -> str:
    """Record a plan spawn's answer: a scout's is kept for research-collect, a planner's is the
    round's draft, a critic's is its scored feedback."""
    kind = record["kind"]
    if kind == "scout":
        return f"{record['local']}: research answer kept"
    try:
        if kind == "planner":
            out = drafts.store_draft(run["loop_id"], text)
            line = f"planner: draft {out.get('iteration', '')} stored".replace("  ", " ")
        else:
            loops.feedback_store(run["loop_id"], text, "critic")
            line = "critic: feedback stored"
    except AetherError as exc:
        if exc.exit_code != EXIT_INPUT:  # the state, not the answer: raised
            raise
        run["refusals"] = run.get("refusals", 0) + 1
        run["refused"] = one_line(exc.message, 600)  # the ant's brief: what to fix
        run["refused_said"] = {"by": kind, "what": one_line(_what_was_wrong(kind, exc), 600)}  # the person's stop text
        dispatch.save_run(run)
        return f"{kind}: answer refused — {one_line(exc.message, 200)}"
    run["refusals"] = 0
    run["refused"] = None
    run.pop("refused_said", None)
    dispatch.save_run(run)
    return line
