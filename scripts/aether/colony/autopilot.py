"""The autopilot, driven: `aether run` (`/ant:run`) builds phase after phase until the colony is
COMPLETED or a stop point (docs/decisions/autopilot.md, shapes in docs/contracts.md).

A run is a record in spawns.json (`command: "run"`) that drives one build after another: it
adopts each build run (`parent`), and every answer recorded for that build hands its next
action to the run (colony/drive.py), which decides at the run's own points — a phase done:
phase-advance (after the archivist when due); a phase before the range: phase-skip; a stop from
inside the build (approval, the code loop's question, abort_phase, failed tasks): the run
stops with what was done, what it cost and the one command that continues. Before every spawn
action the spend cap (rules/spend.py) is checked against costs.json; a run that would pass it
stops there, between two actions. Everything is read from state, so a run resumes after /clear,
a compaction or a killed session with the same command.
"""

from __future__ import annotations

import math
import re
import shlex

from aether.colony import build_drive, continue_drive, dispatch
from aether.core import clock
from aether.core.exceptions import input_error, state_error
from aether.core.text import one_line
from aether.core.vocabulary import DONE_STATUSES
from aether.rules import autopilot as autopilot_rules
from aether.rules import modes, spawn_tree, spend
from aether.rules import plans as plans_rules
from aether.state import claim, costs, settings, store
from aether.state import spawns as ledger
from aether.steps import completion, recovery, skips

MAX_STEPS = 100  # helper steps in one call (a guard against a loop in the rules, never reached)


# ---------------------------------------------------------------- which run


def active_run() -> dict | None:
    return ledger.active_autopilot(store.read("spawns"))


def phases_of(plan: dict) -> list:
    return [{"id": p.get("id"), "name": p.get("name"), "status": p.get("status") or "pending"} for p in plans_rules.phases(plan)]


def _building(colony: dict) -> int | None:
    return colony.get("current_phase") if colony.get("state") == "EXECUTING" else None


def _caps(colony: dict, budget: str | None, phase_budget: str | None, base: dict | None = None) -> dict:
    caps = dict(base) if base else settings.budget(colony.get("mode"))
    caps["source"] = dict(caps.get("source") or {})
    for key, given in (("run", budget), ("phase", phase_budget)):
        if given is not None:
            caps[key] = spend.parse_amount(given, f"--{'budget' if key == 'run' else 'phase-budget'}")
            caps["source"][key] = "this run's flag"
    return caps


def _check_auto_approve(colony: dict) -> None:
    mode = colony.get("mode") or modes.DEFAULT_MODE
    if not modes.profile(mode)["auto_approve"]:
        raise input_error(
            "auto_approve_not_allowed",
            f"{mode} mode asks the user to approve every wave plan, also in a run: drop --auto-approve (the run stops for each approval)",
        )


def _check_skips(plan: dict, phases: list, start: int) -> list:
    """The open phases before `start` a run would skip; `phase_required` (2) when one may not be."""
    ids = [p["id"] for p in phases]
    skipped = [p for p in phases if p["status"] not in DONE_STATUSES and ids.index(p["id"]) < ids.index(start)]
    for p in skipped:
        blockers = recovery.phase_blockers(plan, plans_rules.find_phase(plan, p["id"]) or {})
        if blockers:
            raise state_error(
                "phase_required",
                f"--from {start} would skip phase {p['id']} ({p['name']}), which may "
                f"not be skipped: {'; '.join(blockers)}. Run /ant:run --from {p['id']}",
                phase=p["id"],
                reasons=blockers,
            )
    return [p["id"] for p in skipped]


def resolve(colony: dict, plan: dict, options: dict) -> tuple:
    """(range, the phases it skips, caps) of a new run, every option checked: raises before
    anything is written."""
    phases = phases_of(plan)
    if colony.get("state") not in ("READY", "EXECUTING") or not phases:
        raise state_error(
            "no_plan",
            f"a run builds a planned colony (this one is {colony.get('state')}): plan it with /ant:plan first",
            state=colony.get("state"),
        )
    rng = autopilot_rules.check_range(phases, options.get("from"), options.get("to"), options.get("only"), options.get("max_phases"))
    building = _building(colony)
    chosen = options.get("from") is not None or options.get("only") is not None
    if building is not None and building != rng["from"] and chosen:
        raise state_error(
            "build_running",
            f"phase {building} is being built: go on with /ant:run --from {building} "
            f"(or /ant:run), or finish it with /ant:build {building}",
            running=building,
        )
    if building is not None:
        rng["from"] = building
    skipped = _check_skips(plan, phases, rng["from"])
    if rng["only"] and skipped:
        raise state_error(
            "phase_out_of_order",
            f"--only {rng['from']}: phase {skipped[0]} comes first; /ant:run --from {rng['from']} skips it",
            expected=skipped[0],
        )
    if options.get("auto_approve"):
        _check_auto_approve(colony)
    caps = _caps(colony, options.get("budget"), options.get("phase_budget"))
    settings.model_table(colony.get("mode"))  # a bad `models:` fails now, not in the middle of the run
    settings.on_limit()  # and so does a bad `run:`
    return rng, skipped, caps


def new_run(options: dict) -> dict:
    """A new run from the options (checked against the colony before anything is written)."""
    colony = store.read("colony", missing_ok=False)
    rng, _skipped, caps = resolve(colony, store.read("plan"), options)
    previous = active_run()
    if previous is not None:
        _end_quietly(previous, "superseded")
    return dispatch.new_run(
        "run",
        range=rng,
        auto_approve=bool(options.get("auto_approve")),
        budget=caps,
        builds={},
        continues={},
        skipped=[],
        stopped=None,
        stop_requested=False,
        restart=options.get("from"),
        restarted_build=False,
        ended=None,
        mode=colony.get("mode"),
        wait_limits=_wait_limits(options),
        driver=options.get("driver") or "prompts",
    )


def _wait_limits(options: dict) -> bool:
    """Does the run wait out a usage or rate limit by itself? `--wait`, else `run: on_limit:`."""
    return bool(options.get("wait_limits")) or settings.on_limit() == "wait"


def _end_quietly(run: dict, why: str) -> None:
    run.update(done=True, ended=why, stopped=None, ended_at=clock.iso())
    dispatch.save_run(run)


def at_work(run: dict) -> tuple | None:
    """(`building` or `closing`, the phase) the run works on next — None when its next step is
    its end, a stop or a skip: nothing of it is under way."""
    step = autopilot_rules.next_run_step(_view(run))
    if step["do"] == "build":
        return "building", step["phase"]
    if step["do"] == "continue":
        return "closing", step["phase"]
    return None


def end_active(why: str) -> None:
    """End the autopilot run going or stopped (a step the user took by hand supersedes it)."""
    run = active_run()
    if run is not None:
        _end_quietly(run, why)


def detach(build: dict) -> None:
    """An explicit /ant:build takes a build over from the run that drove it: the run ends."""
    parent = build.get("parent") and ledger.run_of(store.read("spawns"), build["parent"])
    build["parent"] = None
    dispatch.save_run(build)
    if parent and not parent.get("done"):
        _end_quietly(parent, "superseded")


# ---------------------------------------------------------------- the view the rules read


def _latest_build(run: dict, phase: int) -> dict | None:
    scope = run.get("builds", {}).get(str(phase))
    return ledger.run_of(store.read("spawns"), scope) if scope else None


def _view(run: dict) -> dict:
    colony = store.read("colony")
    phases = phases_of(store.read("plan"))
    current = colony.get("current_phase") or 0
    failed_here = []
    for p in phases:
        build = _latest_build(run, p["id"])
        if p["status"] == "failed" and build is not None and build.get("done"):
            failed_here.append(p["id"])
    latest = _latest_build(run, current) if current else None
    return {
        "unfinished": current if latest is not None and not latest.get("done") else None,
        "state": colony.get("state"),
        "current": current,
        "phases": phases,
        "range": run["range"],
        "built": _built(run, phases),
        "failed_here": failed_here,
        "building": _building(colony),
    }


# ---------------------------------------------------------------- the spend cap


def spent(run: dict, data: dict | None = None) -> dict:
    return costs.run_spend(run["scope"], data)


def _guard(run: dict, phase: int):
    """What a build asks before each spawn action of this run (None: go on): has the user asked
    the run to stop, and would the action pass a cap?"""

    def check(castes: list) -> dict | None:
        if run.get("stop_requested"):
            run["stop_requested"] = False
            return _stop(run, "user", "Stopped at a wave boundary, as asked: nothing is running.", "/ant:run", phase)
        data = store.read("costs")
        mine = spent(run, data)
        history = costs.colony_spend(store.read("colony").get("session_id"), data)["total"]
        cost = spend.estimate(castes, history)
        phase_spent = mine["phases"].get(str(phase), {}).get("tokens", 0)
        verdict = spend.check(mine["total"]["tokens"], phase_spent, cost, run["budget"])
        if verdict is None:
            return None
        return _stop(run, "budget", _budget_text(verdict, castes, phase), _budget_command(verdict), phase)

    return check


def _budget_text(v: dict, castes: list, phase: int) -> str:
    counts: dict = {}
    for c in castes:
        counts[c] = counts.get(c, 0) + 1
    what = ", ".join(f"{n} {c}{'s' if n > 1 else ''}" for c, n in counts.items())
    where = "this run" if v["cap"] == "run" else f"phase {phase}"
    if v["reached"]:
        return f"{where} has spent {spend.fmt(v['spent'])} of its {spend.fmt(v['limit'])}-token cap."
    return (
        f"the next action ({what}, ≈{spend.fmt(v['next'])} tokens) would bring {where} to "
        f"≈{spend.fmt(v['spent'] + v['next'])} of its {spend.fmt(v['limit'])}-token cap "
        f"(spent so far: {spend.fmt(v['spent'])})."
    )


def _budget_command(v: dict) -> str:
    need = max(v["limit"] * 2, v["spent"] + 2 * v["next"])
    step = 10 ** max(3, int(math.log10(need)) - 1)
    raised = spend.fmt(math.ceil(need / step) * step)
    return f"/ant:run --budget {raised}" if v["cap"] == "run" else f"/ant:run --phase-budget {raised}"


# ---------------------------------------------------------------- steps the helper takes


def _built(run: dict, phases: list | None = None) -> list:
    """The phases this run built to the end (its builds whose phase is completed), in plan order."""
    done = {p["id"] for p in phases or phases_of(store.read("plan")) if p["status"] == "completed"}
    return sorted(int(k) for k in run.get("builds", {}) if k.isdigit() and int(k) in done)


def _skip(run: dict, phase: int) -> None:
    skips.phase_skip(phase, f"skipped by /ant:run --from {run['range']['from']}")
    run["skipped"].append(phase)
    dispatch.save_run(run)


def _continue_step(run: dict, phase: int) -> dict | None:
    """After a phase: what /ant:continue does (continue_drive: the lessons when due, the archivist,
    phase-advance), adopted by the run. None: the phase is closed and the run goes on."""
    closing = continue_drive.continue_run(parent=run["scope"])
    run.setdefault("continues", {})[str(phase)] = closing["scope"]
    dispatch.save_run(run)
    action = continue_drive.advance(closing, guard=_guard(run, phase))
    if action["action"] in ("spawn", "lessons", "wait") or action.get("autopilot"):
        action["autopilot"] = run["scope"]
        return action
    if action["action"] == "done":
        return None
    return _stop(run, action.get("why") or "phase_failed", action["text"], action.get("command") or "/ant:run", phase)


def apply(run: dict, record: dict, text: str) -> str:
    """An answer of a spawn the run handed out itself (an archivist of an older run): kept as a report."""
    return continue_drive.apply(run, record, text)


def _reports(run: dict) -> list:
    """The archivists' reports of the phases this run closed."""
    data = store.read("spawns")
    scopes = list((run.get("continues") or {}).values())
    closed = {scope: ledger.run_of(data, scope) for scope in scopes}
    if None in closed.values():  # a long run: its first phases' continue runs are archived
        archived = {line["run"].get("scope"): line["run"] for line in ledger.archived()}
        closed = {scope: found or archived.get(scope) for scope, found in closed.items()}
    return [c["report"] for c in closed.values() if c and c.get("report")] + list(run.get("reports") or [])


# ---------------------------------------------------------------- the build of one phase


def _build_for(run: dict, phase: int) -> dict | None:
    """The build run to go on with for `phase` (None: a new build must start)."""
    build = ledger.current_run(store.read("spawns"), "build")
    colony = store.read("colony")
    if build is not None and build.get("phase") == phase and (_building(colony) == phase or not build.get("done")):
        return build
    return None


def _adopt(run: dict, build: dict) -> dict:
    if build.get("parent") != run["scope"]:
        build["parent"] = run["scope"]
        dispatch.save_run(build)
    run["builds"][str(build["phase"])] = build["scope"]
    dispatch.save_run(run)
    return build


def _build_step(run: dict, phase: int, approve: bool) -> dict | None:
    build = _build_for(run, phase)
    if build is None:
        held = _guard(run, phase)(["route-setter"])  # before build-start: a held run starts nothing
        if held is not None:
            return held
        build = build_drive.build_run(phase)
    _adopt(run, build)
    auto = run.get("auto_approve") and modes.profile(store.read("colony").get("mode"))["auto_approve"]
    action = build_drive.advance(
        build, approve=approve or bool(auto), guard=_guard(run, phase), approved_by="user" if approve else "auto:run"
    )
    if (
        action["action"] == "stop"
        and action.get("why") in ("lead_refused", "blocked")
        and run.get("restart") == phase
        and not run.get("restarted_build")
    ):
        run["restarted_build"] = True  # `--from N` starts a stuck build of N over, once
        dispatch.save_run(run)
        build = _adopt(run, build_drive.build_run(phase, resume=True))
        action = build_drive.advance(build, guard=_guard(run, phase))
    return _from_build(run, phase, action)


def _from_build(run: dict, phase: int, action: dict) -> dict | None:
    """The run's answer to the build's action (None: the build is done and the run goes on)."""
    kind = action["action"]
    if kind in ("spawn", "lessons", "wait") or action.get("autopilot"):
        action["autopilot"] = run["scope"]
        return action
    if kind == "ask" and action.get("why") == "approval":
        return _stop(run, "approval", action["text"].rsplit("\n\nThis wave plan", 1)[0], "/ant:run --approve", phase, ask=True)
    if kind == "ask" and action.get("why") == "unverified":
        text = action["text"].replace(f"/ant:build {phase} --answer", "/ant:run --answer")
        return _stop(run, "unverified", text, "/ant:run --answer accept <why>", phase, ask=True)
    if kind == "ask":
        command = "/ant:run --answer <your choice, and guidance>"
        text = action["text"].replace(action["command"], command)
        return _stop(run, "code_loop", text, command, phase, ask=True)
    if kind == "stop" and action.get("why") == "abort_phase":
        return _stop(run, "abort_phase", action["text"], f"/ant:run --from {phase}", phase)
    if kind == "stop" and action.get("why") == "user":
        return _stop(run, "user", action["text"], f"/ant:run --from {phase}", phase)
    if kind == "stop" and action.get("why") in ("limit", "api_refused", "failed_calls", "deadline"):  # the same run goes on where it stood
        return _stop(run, action["why"], action["text"], "/ant:run", phase)
    if kind == "stop":
        return _stop(run, action.get("why") or "blocked", action["text"], f"/ant:run --from {phase}", phase)
    status = (plans_rules.find_phase(store.read("plan"), phase) or {}).get("status")
    if status in DONE_STATUSES:
        return None
    return _stop(run, "phase_failed", action.get("text") or "", f"/ant:run --from {phase}", phase)


# ---------------------------------------------------------------- stops and ends


def _recovery(phase: int) -> list:
    """The run's own recovery options after an abort or a failed phase, each with its command."""
    plan = store.read("plan")
    phases = phases_of(plan)
    ids = [p["id"] for p in phases]
    later = ids[ids.index(phase) + 1] if phase in ids and ids.index(phase) + 1 < len(ids) else None
    blockers = recovery.phase_blockers(plan, plans_rules.find_phase(plan, phase) or {})
    skip = {
        "id": "run_skip",
        "label": f"Skip phase {phase} and go on",
        "command": f"/ant:run --from {later}",
        "available": later is not None and not blockers,
        "why": "; ".join(blockers) or (None if later else f"phase {phase} is the last phase"),
    }
    return [
        {
            "id": "run_from",
            "label": "Apply the fix by hand, then go on with the autopilot",
            "command": f"/ant:run --from {phase}",
            "available": True,
            "why": None,
        },
        {
            "id": "build",
            "label": "Build the phase once, supervised, step by step",
            "command": f"/ant:build {phase}",
            "available": True,
            "why": None,
        },
        skip,
    ]


def _progress(run: dict) -> list:
    plan_phases = {p["id"]: p for p in phases_of(store.read("plan"))}
    lines = []
    for pid in _built(run):
        lines.append(f"  ✓ phase {pid} {one_line(plan_phases.get(pid, {}).get('name'), 40)}")
    for pid in run.get("skipped", []):
        lines.append(f"  ↷ phase {pid} {one_line(plan_phases.get(pid, {}).get('name'), 40)} (skipped)")
    colony = store.read("colony")
    building = _building(colony)
    if building is not None:
        done, waves = spawn_tree.waves_done(colony.get("spawn_tree") or {})
        lines.append(
            f"  ▸ phase {building} {one_line(plan_phases.get(building, {}).get('name'), 40)} (building"
            + (f": {done} of {waves} waves done)" if waves else ")")
        )
    return lines or ["  (no phase finished yet)"]


def summary_lines(run: dict, per_caste: bool = True) -> list:
    """What the run did and what it cost (every stop and end shows them; per caste unless the
    colony's completion summary follows, which shows that for the whole colony)."""
    mine = spent(run)
    total = mine["total"]
    lines = ["Done in this run:", *_progress(run)]
    caps = run["budget"]
    lines.append(
        f"Spent: {spend.fmt(total['tokens'])} tokens in {total['spawns']} spawn"
        f"{'s' if total['spawns'] != 1 else ''}, {round(total['duration_ms'] / 1000)} s of agent time "
        f"(caps: {spend.fmt(caps['run'])} per run, {spend.fmt(caps['phase'])} per phase)"
    )
    if mine["phases"]:
        lines.append("  by phase: " + spend.render_phases({k: b["tokens"] for k, b in mine["phases"].items()}))
        lines += spend.render_bucket(total) if per_caste else []
    if total["unmetered"]:
        lines.append(f"  ({total['unmetered']} spawn(s) came back without Claude Code's usage: not counted)")
    for report in _reports(run):
        lines.append(f"Archivist after phase {report['phase']}: {report['summary']} ({report['file']})")
    return lines


def _head(run: dict, outcome: str) -> str:
    rng = run["range"]
    return f"AETHER RUN {run['scope']} · {run.get('mode') or modes.DEFAULT_MODE} · phases {rng['from']}–{rng['to']} — {outcome}"


def _stop(run: dict, why: str, detail: str, command: str, phase: int | None, ask: bool = False) -> dict:
    lines = [_head(run, f"STOPPED: {autopilot_rules.STOP_REASONS.get(why, why)}"), ""]
    if detail:
        lines += [detail.rstrip(), ""]
    if why in ("abort_phase", "phase_failed") and phase is not None:
        lines.append("To go on with the autopilot:")
        lines += recovery.render_options(_recovery(phase))
        lines.append("")
    lines += summary_lines(run)
    lines += ["", f"To continue: {command}"]
    text = "\n".join(lines)
    run["stopped"] = {"why": why, "at": clock.iso(), "phase": phase, "command": command, "text": text, "action": "ask" if ask else "stop"}
    dispatch.save_run(run)
    return {
        "action": "ask" if ask else "stop",
        "why": why,
        "text": text,
        "command": command,
        "run": run["scope"],
        "phase": phase,
        "autopilot": run["scope"],
    }


def _end(run: dict, why: str) -> dict:
    lines = [_head(run, f"DONE: {autopilot_rules.END_REASONS[why]}"), "", *summary_lines(run, per_caste=why != "completed")]
    if why == "completed":
        lines += ["", completion.summary()["text"]]
        command = None
    else:
        nxt = next(iter(autopilot_rules.open_phases(phases_of(store.read("plan")))), None)
        command = "/ant:run" if nxt is not None else "/ant:continue"
        lines += ["", f"Next: {command}" + (f" (phase {nxt} onward)" if nxt is not None else "")]
    text = "\n".join(lines)
    run.update(done=True, ended=why, stopped=None, ended_at=clock.iso(), final={"text": text, "command": command})
    dispatch.save_run(run)
    return {"action": "done", "why": why, "text": text, "command": command, "run": run["scope"], "autopilot": run["scope"]}


def _stopped_action(run: dict) -> dict:
    s = run["stopped"]
    return {
        "action": s.get("action", "stop"),
        "why": s["why"],
        "text": s["text"],
        "command": s["command"],
        "run": run["scope"],
        "phase": s.get("phase"),
        "autopilot": run["scope"],
    }


# ---------------------------------------------------------------- next


def _end_reason(ended: str | None) -> str | None:
    """How a run's `ended` reads (as recorded when it is not one of the known reasons)."""
    return autopilot_rules.END_REASONS.get(ended, ended) if ended is not None else None


def advance(run: dict, approve: bool = False) -> dict:
    """The run's next action for the Queen, after every helper step on the way."""
    for _ in range(MAX_STEPS):
        run = ledger.run_of(store.read("spawns"), run["scope"]) or run
        if run.get("done"):
            final = run.get("final") or {"text": f"Run {run['scope']} has ended ({_end_reason(run.get('ended'))}).", "command": "/ant:run"}
            return {
                "action": "done",
                "why": run.get("ended"),
                "text": final["text"],
                "command": final["command"],
                "run": run["scope"],
                "autopilot": run["scope"],
            }
        if run.get("stopped"):
            return _stopped_action(run)
        step = autopilot_rules.next_run_step(_view(run))
        do = step["do"]
        if do == "continue":  # the phase is done: what /ant:continue does, as one of its runs
            action = _continue_step(run, step["phase"])
            if action is not None:
                return action
        elif do == "skip":
            _skip(run, step["phase"])
        elif do == "build":
            action = _build_step(run, step["phase"], approve)
            approve = False
            if action is not None:
                return action
        elif do == "done":
            return _end(run, step["why"])
        else:
            command = {"no_plan": "/ant:plan", "phase_failed": f"/ant:run --from {step.get('phase')}"}.get(step["why"], "/ant:run")
            return _stop(run, step["why"], "", command, step.get("phase"))
    raise state_error("drive_loop", f"the run made no progress in {MAX_STEPS} steps; see `aether status`")


def resume(run: dict, options: dict) -> dict:
    """`/ant:run` again on a stopped (or running) run: new caps or approval flags, then go on."""
    colony = store.read("colony", missing_ok=False)
    if options.get("auto_approve"):
        _check_auto_approve(colony)
    caps = _caps(colony, options.get("budget"), options.get("phase_budget"), run["budget"])
    run["auto_approve"] = run.get("auto_approve") or bool(options.get("auto_approve"))
    run["wait_limits"] = run.get("wait_limits") or _wait_limits(options)
    run["driver"] = options.get("driver") or "prompts"  # who drives it now: the mod, or the Queen
    run["budget"] = caps
    run["stopped"] = None
    run["stop_requested"] = False
    dispatch.save_run(run)
    return run


def start(options: dict) -> dict:
    """aether run: a new run (range options given, or none going), or the stopped one resumed."""
    ranged = any(options.get(k) is not None for k in ("from", "to", "only", "max_phases"))
    answer = options.get("answer")
    if answer is not None:
        if ranged:
            raise input_error(
                "usage_error", "--answer goes on with the run that asked: give it without --from, --to, --only or --max-phases"
            )
        if answer not in build_drive.ANSWERS:
            raise input_error("invalid_argument", f"--answer takes {', '.join(build_drive.ANSWERS)}, not {answer!r}")
        if not (options.get("words") or "").strip():
            raise input_error("invalid_content", "--answer needs the user's words after the choice")
    with ledger.lock(), claim.driving("/ant:run") as refused:
        if refused is not None:  # another session builds: nothing is started, nothing changes
            return refused
        run, action = _start(options, answer)
        return claim.settled(run, action)


def _start(options: dict, answer: str | None) -> tuple:
    """(the run, its next action) for `start`, under the driver's lock."""
    colony = store.read("colony", missing_ok=False)
    dispatch.clear_weather("person")  # the person's command: what a limit held goes out again
    if colony.get("state") == "COMPLETED":
        done = {
            "action": "done",
            "why": "completed",
            "command": None,
            "run": None,
            "autopilot": None,
            "text": "The colony is COMPLETED: there is nothing left to build (extend its plan with /ant:plan, "
            "or start a new goal with /ant:init).\n\n" + completion.summary()["text"],
        }
        return None, done
    ranged = any(options.get(k) is not None for k in ("from", "to", "only", "max_phases"))
    current = active_run()
    build = None
    if answer is not None:  # checked before anything is written
        build = _build_for(current, _building(colony) or -1) if current else None
        if build is None or not build_drive.awaits_answer(build):
            raise state_error("nothing_to_answer", "no build of a run waits for an answer")
    run = resume(current, options) if current is not None and not ranged else new_run(options)
    if build is not None:
        assert answer is not None  # a build is looked up only for an answer
        stopped = build_drive.answer_loop(build, answer, options["words"])
        if stopped is not None:
            return run, _stop(run, "user", stopped["text"], f"/ant:run --from {build['phase']}", build["phase"])
    return run, advance(run, approve=bool(options.get("approve")))


def request_stop() -> dict:
    """aether run --stop: the run stops at its next action boundary (from any terminal)."""
    with ledger.lock():
        run = active_run()
        if run is None:
            raise state_error("nothing_running", "no autopilot run is going: nothing to stop")
        if run.get("stopped"):
            return {
                "run": run["scope"],
                "stopping": False,
                "already_stopped": True,
                "text": f"Run {run['scope']} is already stopped ({run['stopped']['why']}); {run['stopped']['command']} continues it.",
            }
        run["stop_requested"] = True
        dispatch.save_run(run)
    return {
        "run": run["scope"],
        "stopping": True,
        "already_stopped": False,
        "text": f"Run {run['scope']} stops at its next wave boundary (ants already working finish and are "
        f"recorded); /ant:run continues it.",
    }


# ---------------------------------------------------------------- `/ant:run` arguments (the dry run: colony/dry_run.py)


ANSWER = re.compile(r"(?:^|\s)--answer\s+(\S+)(?:\s+(.*\S))?\s*$", re.S)


def split_arguments(text: str) -> list:
    """The slash command's arguments as words: a shell's split (unbalanced quotes: on spaces),
    except the user's words after `--answer <choice>`, kept exactly as typed (quotes, a
    leading `-`) as one word after `--`."""
    found = ANSWER.search(text)
    head, tail = (text[: found.start()], ["--answer", found.group(1)]) if found else (text, [])
    if found and found.group(2):
        tail += ["--", found.group(2)]
    try:
        return shlex.split(head) + tail
    except ValueError:
        return head.split() + tail
