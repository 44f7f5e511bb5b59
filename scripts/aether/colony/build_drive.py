"""The build protocol, driven: `aether next --build N` and the answers of a build's spawns
(docs/decisions/the-helper-drives.md, shapes in docs/contracts.md).

`advance` asks rules/drive.py for the build's next step, carries out every step that is the
helper's own (approve, failure-decide, wave-conflicts, review, the code loop's score,
build-finish, build-abort) and answers the first step that is the Queen's: spawn these ants,
ask the user, write the phase's lessons, done or stopped. `apply` records an answer of the
build's spawns as spawn-finish, review-decide or plan-waves would.
"""

from __future__ import annotations

import json

from aether.colony import continue_drive, dispatch
from aether.core import clock
from aether.core.exceptions import EXIT_INPUT, AetherError, input_error, state_error
from aether.core.text import one_line
from aether.core.vocabulary import SPAWN_FINISHED
from aether.rules import contracts, modes, runner_summary, spawn_tree
from aether.rules import drive as drive_rules
from aether.rules import worktrees as worktree_rules
from aether.rules.contracts import parse_requests
from aether.rules.waves import render_tree
from aether.state import checkpoints, pheromones, settings, store
from aether.state import spawns as ledger
from aether.steps import (
    build_finish,
    build_start,
    checks,
    code_loop,
    completion,
    failures,
    isolation,
    loops,
    review,
    spawning,
    verification,
    waves,
    worktrees,
)
from aether.steps import critique as critique_view

MAX_STEPS = 200  # helper steps in one call (a guard against a loop in the rules, never reached)
HELPER_STEPS = ("approve", "decide_failure", "merge", "conflicts", "review", "release", "score", "finish")


# ---------------------------------------------------------------- the view the rules read


def _building(colony: dict, phase: int) -> bool:
    return colony.get("state") == "EXECUTING" and colony.get("current_phase") == phase


def _view(run: dict, approve: bool) -> dict:
    colony = store.read("colony")
    phase = run["phase"]
    building = _building(colony, phase)
    tree = colony.get("spawn_tree") if building else None
    if not isinstance(tree, dict) or tree.get("phase") != phase or not isinstance(tree.get("nodes"), dict):
        tree = None
    loop = _bound_loop(colony, phase) if building else None
    answers = run.get("answers", [])
    latest = _latest_verdict(run)
    unverified = bool(latest and (latest.get("needs_watcher") or latest.get("weakened")))
    accepted = (run.get("accepted") or {}).get("ref")
    refused = _unscored(run)
    view_run = {
        **run,
        "code_loop": {
            "open": bool(loop and loop["status"] != "complete"),
            "awaiting_user": bool(loop and loop["status"] == "awaiting_user"),
        },
        "verification": {
            "spawn": run.get("watcher_spawns", False),
            "answered": bool(answers),
            "scored": run.get("scored", 0) >= len(answers),
            "unverified": unverified and not (latest and accepted == latest.get("ref")),
            "unverified_rounds": run.get("unverified_rounds", 0),
            "weakened": bool(latest and latest.get("weakened")),
            "unscored": 0 if not refused or refused[-1].get("accepted") else len(refused),
        },
    }
    return {"building": building, "tree": tree, "run": view_run, "approve": approve}


def _latest_verdict(run: dict) -> dict | None:
    """The verdicts of the build's latest verification (None: not judged — an older run record)."""
    verdicts, answers = run.get("verdicts") or [], run.get("answers") or []
    return verdicts[-1] if verdicts and answers and verdicts[-1].get("ref") == answers[-1] else None


def _unscored(run: dict) -> list:
    """The answers in a row the code loop could not score, up to the latest ([] when it scored)."""
    refused, answers = run.get("unscored") or [], run.get("answers") or []
    return refused if refused and answers and refused[-1]["ref"] == answers[-1] else []


def _bound_loop(colony: dict, phase: int) -> dict | None:
    return completion.bound_loop(store.read("loops"), phase, colony.get("session_id"))


def _start_build(phase: int, resume: bool) -> dict:
    """build-start (resumed when the phase's build was interrupted), and a new run for it."""
    try:
        started = build_start.start(phase, resume=resume)
    except AetherError as exc:
        if resume or exc.code not in ("invalid_transition", "resume_required", "build_running"):
            raise
        started = build_start.start(phase, resume=True)
    colony = store.read("colony")
    depth = modes.profile(colony.get("mode"))["watcher"]
    scope = ledger.new_scope("build", phase)
    decided = isolation.decide(colony.get("mode"), started.get("checkpoint"), scope)  # made with the run, in one write
    fixed = _fixed_checks(phase, started)
    tests = (fixed or {}).get("tests")
    said = ""
    if tests and fixed:
        counted = f"; at its start: {runner_summary.short(fixed['baseline'])}" if fixed.get("baseline") else ""
        was = f"; it started with `{fixed['tests_before']}`" if fixed.get("tests_before") else ""
        said = f"\nTests: {tests} (fixed for this build{counted}{was})"
    run = dispatch.new_run(
        "build",
        scope=scope,
        phase=phase,
        watcher_spawns=depth != "syntax",
        lead_refusals=[],
        answers=[],
        scored=0,
        actions=0,
        isolation=decided,
        verify=fixed,
        started_text=started["text"] + f"\nBuilders: isolation {decided['why']}" + said,
    )
    store.when_written(lambda _: checks.prune_logs())  # the evidence of older runs goes (bounded per build)
    store.when_written(lambda _: ledger.prune_folders(store.read("spawns")))  # and the briefs and answers of runs archived
    return run


def _isolation(run: dict) -> tuple:
    """(the run's isolation decision, whether it was made just now): a run that recorded none (an
    older record, a hand edit) gets it now, so builders never share the tree unsaid."""
    iso = run.get("isolation")
    if isinstance(iso, dict) and isinstance(iso.get("on"), bool):
        return iso, False
    iso = isolation.decide(store.read("colony").get("mode"), checkpoints.latest(run["phase"]), run["scope"])
    run["isolation"] = iso
    return iso, True


def _fixed_checks(phase: int, started: dict) -> dict | None:
    """The commands this build is verified by (checks.fix), fixed now. A resumed build keeps the
    first start's checkpoint tree and counts (what its builders changed before the stop is still
    the build's change) and says when its test command is no longer the one it started with."""
    try:
        fixed = checks.fix((started.get("checkpoint") or {}).get("tree"))
    except AetherError:  # `verify:` cannot be read: the verification says so
        return None
    if started.get("resumed"):
        before = next((r for r in reversed(store.read("spawns")["runs"]) if r.get("command") == "build" and r.get("phase") == phase), None)
        first = (before or {}).get("verify")
        if isinstance(first, dict):
            fixed.update(tree=first.get("tree") or fixed["tree"], baseline=first.get("baseline"))
            fixed["started_with"] = first.get("started_with", first.get("tests"))
            if fixed["started_with"] != fixed["tests"]:
                fixed["tests_before"] = fixed["started_with"]
    return fixed


def build_run(phase: int | None, resume: bool = False) -> dict:
    """The run `aether next --build N` continues (a new build when the phase is not building)."""
    data = store.read("spawns")
    run = ledger.current_run(data, "build")
    if phase is None:
        if run is None:
            raise state_error("nothing_running", "no build to go on with: start one with `aether next --build <phase>`")
        return run
    colony = store.read("colony")
    if run and run.get("phase") == phase and not resume and (_building(colony, phase) or not run.get("done")):
        if not run.get("done") and not run.get("finished") and build_finish.aborted(colony, phase):
            return _end_aborted(run)  # an abort killed before its run ended: finished now, and said
        return run
    return _start_build(phase, resume)


def _end_aborted(run: dict) -> dict:
    """The run of a build an abort ended, killed before it ended the run: the abort finished (the
    worktrees dealt with, any work in them kept on branches) and the run ended with a stop action
    that says so; the next `next --build N` starts the phase again."""
    phase = run["phase"]
    tree = store.read("colony").get("spawn_tree") or {}
    out = build_finish.abort(phase, "the abort of this build was interrupted: finished now")
    text = out["text"]
    if any(a.get("phase") == phase and a.get("build") == tree.get("id") for a in store.read("failures")["aborts"]):
        # the failure protocol aborted it (not the person): its report, then what the abort kept
        text = failures.abort_report(phase)["text"] + "\n" + "\n".join(text.splitlines()[1:])
    action = {"action": "stop", "why": "abort_phase", "text": text, "command": f"/ant:build {phase}"}
    run.update(done=True, stopped="abort_phase", ended="aborted", stop_action=action)
    dispatch.save_run(run)
    return run


# ---------------------------------------------------------------- helper steps


def _helper_step(run: dict, step: dict, approved_by: str) -> None:
    do = step["do"]
    if do == "approve":
        waves.approve(approved_by)
    elif do == "decide_failure":
        failures.failure_decide(None, step["node"])
    elif do == "merge":
        worktrees.merge(store.read("colony")["spawn_tree"], step["wave"], run["scope"])
    elif do == "release":
        worktrees.release(store.read("colony")["spawn_tree"])
    elif do == "conflicts":
        waves.conflicts(step["wave"])
    elif do == "review":
        review.needed(step["wave"])
    elif do == "score":
        _score(run)
    elif do == "finish":
        _finish(run)


def _score(run: dict) -> None:
    """The code loop scores the latest verification (as `loop-score - --loop` does)."""
    text = ledger.read_answer(run["answers"][-1]) or ""
    loop = _bound_loop(store.read("colony"), run["phase"])
    assert loop is not None  # `score` comes only while the code loop is open (rules/drive.py)
    try:
        answer = code_loop.readable(text, _latest_verdict(run))
    except AetherError as exc:  # no score in it: never a 0 (a fix-up with nothing to fix); asked again, then the person
        before = run.get("unscored") or []
        chain = before if before and run["answers"][-2:-1] == [before[-1]["ref"]] else []  # the answer before held none either
        run["unscored"] = [*chain, {"ref": run["answers"][-1], "why": one_line(exc.message, 300)}]
    else:
        run["unscored"] = []
        loops.score_answer(loop["id"], answer)
    run["scored"] = len(run["answers"])
    dispatch.save_run(run)


def _finish(run: dict) -> None:
    tree = store.read("colony").get("spawn_tree")
    text = ledger.read_answer(run["answers"][-1]) if run.get("answers") else None
    results = {}
    if text is not None:
        try:
            results = {"watcher": contracts.extract_json(text, "the watcher's answer")}
        except AetherError as exc:
            results = {"watcher": {"passed": False, "summary": f"the watcher's answer was unreadable: {exc.message}", "checks": []}}
    latest = _latest_verdict(run)
    if latest is not None:
        accepted = run.get("accepted") if (run.get("accepted") or {}).get("ref") == latest.get("ref") else None
        results["evidence"] = checks.settle(latest, accepted)
    refused = _unscored(run)
    if refused and refused[-1].get("accepted"):  # no answer held a score: what the checks proved, the person's word
        results["watcher"] = code_loop.accepted_report(results.get("evidence"), refused[-1]["accepted"]["why"])
    out = build_finish.finish(run["phase"], results, lessons_asked=True)  # the lessons action asks for them
    learn = out.get("learnings") or {}
    extra = []
    merges = worktrees.summary(tree)
    if merges:  # the builders worked in their own worktrees: how their work came back
        extra += ["Merged back, in order:", *merges]
    isolation = run.get("isolation") or {}
    nodes = ((tree or {}).get("nodes") or {}).values()
    if isolation.get("on") is False and any(worktree_rules.isolated(n) for n in nodes):  # never shared unsaid
        extra.append(f"Builders shared the project's tree: isolation {isolation.get('why')}")
    shown = {k["branch"] for k in out.get("kept") or []}  # kept as the build finished: in its text already
    kept = [k for k in worktrees.kept(run["scope"]) if k["branch"] not in shown]
    if kept:  # results that could not be merged: nothing lost, and the user told where
        extra += ["Kept on branches, not merged:", *worktrees.render_kept(kept)]
    if extra:  # before the closing `Next:` line
        head, sep, tail = out["text"].rpartition("\nNext: ")
        out["text"] = (head + "\n" + "\n".join(extra) + sep + tail) if sep else out["text"] + "\n" + "\n".join(extra)
    between = not out.get("last_phase") and modes.learning_now(store.read("colony").get("mode"), "between")[0]
    run.update(
        finished=True,
        finish_text=out["text"],
        lessons_due=bool(learn.get("extract_now")),
        between=between,
        lessons_done=False,
        next_slash=(out.get("next") or {}).get("slash"),
        phase_name=out.get("name"),
        phase_status=out.get("phase_status"),
    )
    dispatch.save_run(run)


def _spawn_nodes(run: dict, ids: list) -> dict:
    colony = store.read("colony")
    table = settings.model_table(colony.get("mode"))  # a bad `models:` fails before a node starts
    flying = dispatch.running(run, ids)
    ids = [i for i in ids if i not in flying]
    isolation, decided = _isolation(run)
    copies = worktrees.prepare(colony["spawn_tree"], ids, isolation)
    nodes = colony["spawn_tree"]["nodes"]
    sharing = not isolation["on"] and not run.get("sharing_said") and any(worktree_rules.isolated(nodes[i]) for i in ids)
    said = f"Builders: isolation {isolation['why']}" + (" (decided now: the build's run held no decision)" if decided else "")
    if sharing:  # the builders of this build share the project's tree: said once, with why
        run["sharing_said"] = True
    tree = store.read("colony")["spawn_tree"]
    items = []
    data = store.read("spawns")
    for node_id in ids:
        node = tree["nodes"][node_id]
        text = None
        if node["status"] == "planned":
            text = spawning.start(node_id)["text"]
        elif (
            ledger.find(data, f"{run['scope']}/{node_id}") is None or ledger.read_brief(f"{run['scope']}/{node_id}") is None
        ):  # started by hand, or its brief is gone
            text = spawning.brief(tree, node, store.read("plan"), pheromones.render(node["caste"])["text"])
        if text is not None and node_id in copies:
            text += "\n" + worktrees.brief_section(copies[node_id]["workdir"], copies[node_id]["note"])
        items.append((node_id, "node", f"ant:{node['caste']}", text))
    action = dispatch.dispatch(run, items, table=table)  # saves the run: its decision, and that it was said
    if decided or sharing:
        action["text"] += f"\n{said}"
    return action


def _lead_brief(run: dict) -> str:
    colony = store.read("colony")
    plan = store.read("plan")
    phase = next(p for p in plan.get("phases", []) if p.get("id") == run["phase"])
    todo = [str(t.get("id")) for t in phase.get("tasks") or [] if t.get("status") not in ("completed", "skipped")]
    lines = [
        "--- PHASE LEAD ---",
        f"Phase {phase['id']}: {phase.get('name')} — {phase.get('description') or ''}",
        f"Tasks to assign: {', '.join(todo)}",
        "Task details: .aether/data/PROJECT_PLAN.json",
        f"Mode: {colony.get('mode') or modes.DEFAULT_MODE}",
        pheromones.render("route-setter")["text"],
    ]
    for i, refusal in enumerate(run.get("lead_refusals", []), start=1):
        lines.append(f"Your plan {i} was refused — fix this and answer again: {refusal}")
    return "\n".join(lines)


def _locals(run: dict, step: dict) -> dict:
    """{local id: caste} of the spawns a step would send ({}: the step spawns nothing)."""
    if step["do"] == "spawn":
        nodes = (store.read("colony").get("spawn_tree") or {}).get("nodes") or {}
        return {i: nodes.get(i, {}).get("caste", "builder") for i in step["nodes"]}
    if step["do"] == "spawn_lead":
        return {f"lead{step['attempt']}": "route-setter"}
    if step["do"] == "spawn_watcher":
        return {f"watch{len(run.get('answers', [])) + 1}": "watcher"}
    return {}


def _queen_action(run: dict, step: dict) -> dict:
    do = step["do"]
    if do == "spawn":
        return _spawn_nodes(run, step["nodes"])
    if do == "spawn_lead":
        return dispatch.dispatch(run, [(f"lead{step['attempt']}", "lead", "ant:route-setter", _lead_brief(run))])
    if do == "spawn_watcher":
        latest = _latest_verdict(run)
        missing = latest if latest and latest["needs_watcher"] else None  # told what the last one left unproven
        refused = _unscored(run)  # its answer held no score: asked again, told why
        note = run.get("watcher_note") if missing else (refused[-1].get("note") if refused else None)
        brief = verification.brief(run["phase"], missing=missing, note=note)
        text = brief["text"] + ("\n" + code_loop.refused_line(refused[-1]["why"]) if refused else "")
        local = next(iter(_locals(run, step)))
        return dispatch.dispatch(run, [(local, "watcher", brief["subagent_type"], text)])
    if do == "ask":
        return _ask(run, step)
    if do == "abort":
        return _abort(run)
    if do == "lessons":
        return continue_drive.lessons_action(run, run["phase"], run["scope"], run.get("between"))
    if do == "stop":
        return _stop(run, step)
    return _done(run)


def _ask(run: dict, step: dict) -> dict:
    phase = run["phase"]
    if step["why"] == "approval":
        tree = store.read("colony")["spawn_tree"]
        return {
            "action": "ask",
            "why": "approval",
            "command": f"/ant:build {phase} --approve",
            "text": render_tree(tree) + f"\n\nThis wave plan needs your approval: run /ant:build {phase} "
            f"--approve — or steer with /ant:focus or /ant:redirect and re-plan with "
            f"/ant:build {phase} --resume.",
        }
    if step["why"] == "unverified":
        verdict = _latest_verdict(run)
        assert verdict is not None  # asked only on the latest verification's unverified checks (rules/drive.py)
        return {
            "action": "ask",
            "why": "unverified",
            "command": f"/ant:build {phase} --answer accept <why>",
            "text": checks.unverified_text(phase, verdict, run.get("unverified_rounds", 0)),
        }
    if step["why"] == "unscored":
        refused = _unscored(run)
        watchers = [r["ref"].rsplit("/", 1)[-1] for r in refused]
        text = code_loop.unscored_text(phase, watchers, refused[-1]["why"], _latest_verdict(run))
        return {"action": "ask", "why": "unscored", "command": f"/ant:build {phase} --answer <your choice, and guidance>", "text": text}
    loop = _bound_loop(store.read("colony"), phase)
    assert loop is not None  # asked only while the code loop waits for the user (rules/drive.py)
    command = f"/ant:build {phase} --answer <your choice, and guidance>"
    return {
        "action": "ask",
        "why": "code_loop",
        "command": command,
        "text": critique_view.present(loop["id"], answer=f"Answer with {command}.")["text"],
    }


def _abort(run: dict) -> dict:
    phase = run["phase"]
    report = failures.abort_report(phase)
    out = build_finish.abort(phase, report["reason"])
    text = "\n".join([report["text"], *build_finish.abort_lines({"kept": out["kept"], "notes": out["worktree_notes"]})])
    action = {"action": "stop", "why": "abort_phase", "text": text, "command": None}
    run.update(done=True, stopped="abort_phase", ended="aborted", stop_action=action)  # asked again: the same stop
    dispatch.save_run(run)
    return action


def abort(phase: int, reason: str) -> dict:
    """build-abort by hand: the build is given up and its run ends, so a late answer of one of its
    ants is kept and changes nothing."""
    with ledger.lock():
        out = build_finish.abort(phase, reason)
        for run in store.read("spawns")["runs"]:
            if run.get("command") == "build" and run.get("phase") == phase and not run.get("done"):
                dispatch.end_run(run["scope"], "aborted")
        return out


def _stop(run: dict, step: dict) -> dict:
    phase = run["phase"]
    if step["why"] == "lead_refused":
        text = (
            f"The Phase Lead's plan was refused {len(step['refusals'])} times: "
            f"{one_line(step['refusals'][-1], 300)}\nRe-plan with /ant:build {phase} --resume."
        )
    else:
        text = f"Spawns {', '.join(step['nodes'])} wait for spawns that will not run; re-plan with /ant:build {phase} --resume."
    return {"action": "stop", "why": step["why"], "text": text, "command": f"/ant:build {phase} --resume"}


def _done(run: dict) -> dict:
    if not run.get("done"):
        run["done"] = True
        dispatch.save_run(run)
    if run.get("finished"):
        text = run.get("finish_text", "")
        return {"action": "done", "text": text, "command": run.get("next_slash"), "outcome": run.get("phase_status")}
    if isinstance(run.get("stop_action"), dict):  # the failure protocol aborted it: how it ended
        return dict(run["stop_action"])
    return {"action": "done", "text": f"Phase {run['phase']} is not being built.", "command": None}


# ---------------------------------------------------------------- next and record


def advance(run: dict, approve: bool = False, guard=None, approved_by: str = "user") -> dict:
    """The build's next action for the Queen, after every helper step on the way. `guard(castes)`
    (an autopilot run's spend cap) sees each spawn action before it is dispatched and may answer
    a stop action instead."""
    for _ in range(MAX_STEPS):
        run = ledger.run_of(store.read("spawns"), run["scope"]) or run
        step = drive_rules.next_build_step(_view(run, approve))
        if step["do"] in HELPER_STEPS:
            _helper_step(run, step, approved_by)
            continue
        sends = _locals(run, step)
        flying = dispatch.running(run, list(sends))
        castes = [caste for local, caste in sends.items() if local not in flying]
        if sends and not castes:  # every ant of the step runs now: wait for their answers
            action = dispatch.wait(run, flying)
            action.update(run=run["scope"], phase=run["phase"])
            return action
        held = guard(castes) if guard is not None and castes else None
        if held is not None:
            return held
        held = dispatch.held(run, flying) if castes else None  # a limit holds the colony: nothing is started
        if held is not None:
            held.update(run=run["scope"], phase=run["phase"])
            return held
        action = _queen_action(run, step)
        action.update(run=run["scope"], phase=run["phase"])
        return action
    raise state_error("drive_loop", f"the build made no progress in {MAX_STEPS} steps; see `aether status`")


def _synthetic_failure(node: dict, why: str) -> str:
    return json.dumps(
        {
            "status": "failed",
            "summary": why,
            "files_created": [],
            "files_modified": [],
            "failure": {
                "task": str(node["tasks"][0]) if node["tasks"] else node["id"],
                "error": why,
                "root_cause": "the answer held no readable result block",
                "suggested_fix": "end the answer with the result block the brief asks for",
                "confidence": 50,
                "fix_scope": "contained",
                "files": [],
                "category": "invalid_report",
            },
        }
    )


def _record_node(run: dict, local: str, text: str) -> str:
    tree = store.read("colony").get("spawn_tree") or {}
    node = spawn_tree.node_of(spawn_tree.tree_of({"spawn_tree": tree}), local)
    label = f"{local} {node['caste']}"
    if node["status"] in SPAWN_FINISHED:  # recorded in the tree, then killed before the ledger's mark
        return f"{label}: {node['status']} (recorded before)"
    if node["role"] == "reviewer":
        try:
            out = review.decide(node["wave"], text)
        except AetherError as exc:
            out = review.decide(
                node["wave"], '{"findings": [], "summary": "unreadable review: %s"}' % one_line(exc.message, 200).replace('"', "'")
            )
        return f"{label}: review round {out['round']} → {out['action']}"
    ref = f"{run['scope']}/{local}"
    calls = checks.calls_of(ref)  # what the ant really ran and wrote
    tests = ((run.get("verify") or {}).get("tests") or checks.test_command()) if calls else None  # the build's fixed one
    try:
        out = spawning.finish(local, text, calls, tests)
    except AetherError as exc:
        if exc.exit_code != EXIT_INPUT:  # the state, not the answer: raised
            raise
        out = spawning.finish(local, _synthetic_failure(node, exc.message), calls)  # an unreadable answer fails the spawn
    line = f"{label}: {out['status']}" + (" (claimed files do not hold)" if out.get("unverified") else "")
    if out["status"] == "completed" and parse_requests(text):
        asked = spawning.requests(local, text)
        if asked["queue"]:
            line += "; sub-spawns queued: " + ", ".join(f"{q['id']} {q['caste']}" for q in asked["queue"])
    if node["role"] == "verify":  # a code loop's re-verification: judged as the watcher's
        line += " — " + checks.short(_add_verdict(run, f"{run['scope']}/{local}", text))
    return line


def _record_lead(run: dict, text: str) -> str:
    try:
        out = waves.plan(text)
    except AetherError as exc:
        if exc.exit_code != EXIT_INPUT:  # the state, not the plan: raised
            raise
        run.setdefault("lead_refusals", []).append(exc.message)
        dispatch.save_run(run)
        return f"Phase Lead: plan refused — {one_line(exc.message, 200)}"
    count = sum(len(w["workers"]) for w in out["waves"])
    waves_n = len(out["waves"])
    return f"Phase Lead: {count} worker{'s' if count != 1 else ''} in {waves_n} wave{'s' if waves_n != 1 else ''} ({out['status']})"


MAX_VERDICTS = 6  # verifications of a build kept in its run


def _judge(run: dict, text: str) -> dict:
    """The verification's verdicts from what the build's ants ran (the watcher's answer gives its claims)."""
    try:
        watcher = contracts.extract_json(text, "the watcher's answer")
    except AetherError:
        watcher = None
    colony = store.read("colony")
    tree = colony.get("spawn_tree") or {}
    merged = worktrees.last_merge_t(tree)
    try:
        files = checks.changed_files(tree, run["scope"])
        return checks.judge(run["scope"], colony.get("mode"), files, watcher, merged, run.get("verify"))
    except AetherError as exc:  # `verify:` cannot be read: nothing is proven, and the person is told why
        check = {"name": "config", "command": None, "claimed": None, "run": None, "status": "unverified", "why": exc.message}
        return {"checks": [check], "passed": False, "unverified": ["config"], "needs_watcher": True, "calls": 0}


def _add_verdict(run: dict, ref: str, text: str) -> dict:
    """A verification answered: kept, with its checks' verdicts (saved in the run)."""
    run.setdefault("answers", []).append(ref)
    verdict = {**_judge(run, text), "ref": ref}
    run["verdicts"] = (run.get("verdicts", []) + [verdict])[-MAX_VERDICTS:]
    run["unverified_rounds"] = run.get("unverified_rounds", 0) + 1 if verdict["needs_watcher"] else 0
    dispatch.save_run(run)
    return verdict


def apply(run: dict, record: dict, text: str) -> str:
    if record["kind"] == "lead":
        return _record_lead(run, text)
    if record["kind"] == "watcher":
        verdict = _add_verdict(run, record["ref"], text)
        return f"{record['local']} watcher: verification recorded — " + checks.short(verdict)
    return _record_node(run, record["local"], text)


# ---------------------------------------------------------------- the user's answer to a waiting code loop


ANSWERS = ("refine", "accept", "stop")


def awaits_answer(run: dict) -> bool:
    """Does a code loop of the build, its unverified checks, or a verification no answer scored,
    wait for the user's answer?"""
    if _asked(run, "unverified") or _asked(run, "unscored"):
        return True
    loop = _bound_loop(store.read("colony"), run["phase"])
    return loop is not None and loop["status"] == "awaiting_user"


def _asked(run: dict, why: str) -> bool:
    view = _view(run, False)
    return view["building"] and view["tree"] is not None and drive_rules.next_build_step(view) == {"do": "ask", "why": why}


def answer_loop(run: dict, choice: str, text: str) -> dict | None:
    """The user's answer to the code loop waiting in the build (under the driver's lock) —
    refine: another round with their guidance (unverified or unscored: one more watcher); accept:
    finish as it is; stop: abort the build, answered as a stop action. None: the caller answers the
    next action."""
    if choice not in ANSWERS:
        raise input_error("invalid_argument", f"--answer takes {', '.join(ANSWERS)}, not {choice!r}")
    phase = run["phase"]
    if not awaits_answer(run):
        raise state_error("nothing_to_answer", f"no code loop of phase {phase} waits for an answer")
    if _asked(run, "unverified"):
        if choice == "accept":  # the person's word, recorded with the phase: accepted, not verified
            verdict = run["verdicts"][-1]  # the latest: the ask is on it
            run["accepted"] = {
                "by": "user",
                "why": one_line(text, 500) or "(no reason given)",
                "at": clock.iso(),
                "checks": verdict["unverified"] + verdict.get("weakened", []),
                "ref": verdict.get("ref"),  # this verification's checks only: a later one is judged afresh
            }
        elif choice == "refine":  # one more watcher, told exactly what to run, then asked again
            run["unverified_rounds"] = drive_rules.MAX_WATCHERS - 1
            run["watcher_note"] = one_line(text, 500)
        if choice != "stop":
            dispatch.save_run(run)
            return None
    if choice != "stop" and _asked(run, "unscored"):
        refused = _unscored(run)
        if choice == "accept":  # finished on what the checks proved, the person's word kept
            refused[-1]["accepted"] = {"by": "user", "why": one_line(text, 500) or "(no reason given)", "at": clock.iso()}
        else:  # one more watcher, told the person's words
            refused[-1]["note"] = one_line(text, 500)
            run["unscored"] = refused[len(refused) - drive_rules.MAX_SCORE_ATTEMPTS + 1 :]
        dispatch.save_run(run)
        return None
    loop = _bound_loop(store.read("colony"), phase)
    if choice == "stop":
        build_finish.abort(phase, text)
        run["done"] = True
        dispatch.save_run(run)
        return {
            "action": "stop",
            "why": "user",
            "text": f"Build of phase {phase} stopped: {one_line(text, 200)}",
            "command": f"/ant:build {phase} --resume",
            "run": run["scope"],
            "phase": phase,
        }
    assert loop is not None  # awaits_answer found it
    loops.feedback_store(loop["id"], text, "user", refine=choice == "refine")
    return None
