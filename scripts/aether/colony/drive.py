"""`aether next`, `aether record` and Claude Code's hooks on Agent: the helper drives, the Queen
spawns and judges (docs/decisions/the-helper-drives.md, shapes in docs/contracts.md).

`next_action` answers the one next thing the Queen does in the current run. `record` takes an
ant's answer — from Claude Code's hooks (colony/handback.py), or piped by the Queen when the
hooks are off — and hands it to the run it was handed out for, exactly once; after the last
answer of its spawn action it answers the next action too. An answer of a run that has ended
(finished, aborted, superseded) is kept on disk and changes nothing. One lock serialises the
driver, so hooks of ants that finish together record one after the other. Every driving call
takes the colony's build for its session first (state/claim.py): another session's gets a stop
naming the holder; recording an answer takes nothing and is never refused.
"""

from __future__ import annotations

from aether.colony import autopilot, build_drive, colonize_drive, continue_drive, dispatch, plan_drive
from aether.core.exceptions import AetherError, input_error, state_error
from aether.core.text import one_line
from aether.state import claim, store
from aether.state import spawns as ledger

action_line = dispatch.action_line


# The protocols `aether next` drives, by a run record's `command`. Each module provides
#   advance(run, …) -> action   the run's next action for the Queen (spawn, wait, ask, lessons, done,
#                               stop), after carrying out every step that is the helper's own; a loop
#                               bounded by its MAX_STEPS, asking its pure rule (rules/drive.py,
#                               rules/autopilot.py) for the next step from state each time;
#   apply(run, record, text) -> line   one answer of a spawn it handed out, recorded as its step
#                               requires; the line (one line, starting with the spawn's id) tells the Queen.
PROTOCOLS = {"build": build_drive, "plan": plan_drive, "colonize": colonize_drive, "continue": continue_drive, "run": autopilot}


def advance_after(run: dict) -> dict:
    """The next action after a step of `run`: the autopilot run's, when one drives it."""
    parent = run.get("parent")
    if parent:
        owner = ledger.run_of(store.read("spawns"), parent)
        if owner is not None and (not owner.get("done") or run.get("done")):  # an ended run: how it ended
            return claim.settled(owner, autopilot.advance(owner))
    return claim.settled(run, PROTOCOLS[run["command"]].advance(run))


def _asked(phase: int | None, plan: bool, colonize: bool, closing: bool) -> str | None:
    """The slash command a driving call runs (None: `aether next`, the newest run's)."""
    if phase is not None:
        return f"/ant:build {phase}"
    return "/ant:plan" if plan else "/ant:colonize" if colonize else "/ant:continue" if closing else None


def _run_at(phase: int) -> dict | None:
    """The autopilot run `aether next --build N` goes on with: the run under way (not stopped)
    when it builds or closes phase N — the Queen typed the build's command inside `/ant:run`.
    None: no run is at work, and the build is one by hand. A run at work on another phase refuses
    it (`build_running`) before anything is written: that phase may not start now, and the run
    goes on (docs/decisions/the-helper-drives.md, "When the Queen strays")."""
    run = autopilot.active_run()
    if run is None or run.get("stopped"):
        return None
    work = autopilot.at_work(run)
    if work is None:
        return None
    doing, working = work
    if working != phase:
        by_hand = f"/ant:build {working}" if doing == "building" else "/ant:continue"
        raise state_error(
            "build_running",
            f"phase {phase} may not start now: the autopilot run {run['scope']} is {doing} phase {working}. "
            f"/ant:run continues it; to go on by hand instead, stop it first (`aether run --stop`), then {by_hand}.",
            running=working,
            run=run["scope"],
            command="/ant:run",
        )
    return run


def _stopped_hint(exc: AetherError) -> AetherError:
    """A build by hand refused while an autopilot run is stopped: the error also names the
    command that continues the run (which goes on, stopped)."""
    run = autopilot.active_run()
    stopped = run.get("stopped") if run is not None else None
    if run is None or not isinstance(stopped, dict):
        return exc
    exc.message += f" — or go on with the stopped autopilot run {run['scope']}: {stopped['command']}"
    return exc


def next_action(
    phase: int | None = None,
    approve: bool = False,
    resume: bool = False,
    plan: bool = False,
    guidance: str | None = None,
    force: bool = False,
    colonize: bool = False,
    accept: bool = False,
    closing: bool = False,
) -> dict:
    """aether next: the one next thing the Queen does — in the build of `phase`, in the plan run
    (`plan`), or, given neither, in the newest run that is not done (else: how the newest ended)."""
    with ledger.lock(), claim.driving(_asked(phase, plan, colonize, closing)) as refused:
        if refused is not None:  # another session builds: nothing is started, nothing changes
            return refused
        _record_returned()
        if phase is not None:
            pilot = _run_at(phase)  # another phase while a run goes on: refused, nothing written
            if pilot is not None and not (approve or resume):
                return claim.settled(pilot, autopilot.advance(pilot))  # the autopilot's own build: the run goes on
        if phase is not None or plan or colonize or closing:  # the person's command: what a limit held goes out again
            dispatch.clear_weather("person")
        if plan or colonize or closing:  # a step by hand: the autopilot run ends
            autopilot.end_active("superseded")
        if closing:
            run = continue_drive.continue_run()
            return claim.settled(run, continue_drive.advance(run))
        if colonize:
            run = colonize_drive.colonize_run()
            return claim.settled(run, colonize_drive.advance(run))
        if plan:
            run = plan_drive.plan_run(guidance, force, accept)
            return claim.settled(run, plan_drive.advance(run))
        if phase is None:  # the newest run: where it stands, or how it ended
            runs = store.read("spawns")["runs"]
            newest = next((r for r in reversed(runs) if not r.get("done")), None) or (runs[-1] if runs else None)
            if newest is not None and (newest["command"] in ("plan", "colonize", "continue", "run") or newest.get("parent")):
                return advance_after(newest)
        try:
            run = build_drive.build_run(phase, resume)
        except AetherError as exc:  # refused: the run it would take over goes on as it was
            raise _stopped_hint(exc) from None
        if phase is not None:  # /ant:build N: a build by hand, the autopilot run ends
            autopilot.end_active("superseded")
            if run.get("parent"):  # it takes the build over from the run
                autopilot.detach(run)
        return claim.settled(run, build_drive.advance(run, approve))


def _record_returned() -> None:
    """Answers that came back but were never recorded (the ant stopped, then Claude Code was killed
    before its Agent result came): recorded now, before the next step is asked."""
    for rec in [s for s in store.read("spawns")["spawns"] if s["status"] == "returned"]:
        text = ledger.read_answer(rec["ref"])
        if text and text.strip():
            arrived = rec.get("arrived") or {}
            record_locked(rec["ref"], text, arrived.get("usage"), via="stop", agent=arrived.get("agent"))
        else:
            dispatch.mark(rec["ref"], "dispatched")


def answer(phase: int, choice: str, text: str) -> dict:
    with ledger.lock(), claim.driving(f"/ant:build {phase}") as refused:
        if refused is not None:
            return refused
        _run_at(phase)  # a run at work on another phase refuses it
        dispatch.clear_weather("person")
        run = build_drive.build_run(phase)
        out = build_drive.answer_loop(run, choice, text)  # checked first: a refused answer ends nothing
        autopilot.end_active("superseded")
        if run.get("parent"):
            autopilot.detach(run)
        return claim.settled(run, out or build_drive.advance(run))


def _resolve(data: dict, spawn_id: str) -> dict:
    """The spawn a ref (`scope/local`) names, or a local id's newest spawn — of a run that goes on
    when there is one (the fallback's ids repeat across runs: `w1` of the build under way)."""
    if "/" in spawn_id:
        found = ledger.find(data, spawn_id)
    else:
        named = [s for s in reversed(data["spawns"]) if s.get("local") == spawn_id]
        found = next((s for s in named if ledger.live(data, s["scope"])), None) or next(iter(named), None)
    if found is None:
        state_vanished(spawn_id)
        raise input_error("unknown_spawn", f"no spawn {spawn_id!r} was handed out: `aether next` lists the spawns to run")
    return found


def state_vanished(spawn_id: str) -> None:
    """Refuse an answer when the colony's state is gone (a `git stash -u`, a `git clean -fdx`, a
    move took `.aether/` away): said as that, before anything is written or a lock file made."""
    if store.exists("colony"):
        return
    raise state_error(
        "state_missing",
        f"{spawn_id!r} cannot be recorded: the colony's state is gone — {store.path_of(store.spec_for('colony'))} "
        f"does not exist. If a colony ran here, its state folder vanished: `git stash -u` and `git clean -fdx` take "
        f"`.aether/` with them (bring it back with `git stash pop`), or it was moved or removed. Nothing was written; "
        f"record the answer again once the folder is back.",
    )


def _waiting(data: dict, rec: dict) -> list:
    return dispatch.awaited(data, rec)


def _next(run: dict) -> dict:
    """The next action after an answer; a failure of the next step is said, the answer stays recorded."""
    try:
        return {"next": advance_after(run)}
    except AetherError as exc:
        return {"next": None, "next_error": {"code": exc.code, "error": exc.message}}


def record(spawn_id: str, text: str, usage: dict | None = None, via: str = "queen", agent: str | None = None, advance: bool = True) -> dict:
    """aether record: an ant's answer (or the phase's lessons), recorded as its step requires.
    `advance=False`: no next action (the mod's loop asks for it itself, with its wait:
    working out the next step here too would hand its spawns out a second time, to the Queen)."""
    if spawn_id == "lessons":
        with ledger.lock():
            out = continue_drive.record_lessons(text)
            out["next"] = advance_after(out.pop("run"))
            return out
    if not text.strip():  # no answer: the spawn stays pending (`aether next` hands it out again)
        raise input_error(
            "empty_answer",
            f"the answer of {spawn_id} is empty: pipe the ant's whole answer, or run `aether next` to hand the spawn out again",
        )
    state_vanished(spawn_id)  # before the lock: no lock file made in a folder that vanished
    with ledger.lock():
        return record_locked(spawn_id, text, usage, via, agent, advance)


def record_locked(
    spawn_id: str, text: str, usage: dict | None = None, via: str = "queen", agent: str | None = None, advance: bool = True
) -> dict:
    """`record` for a caller that holds the driver's lock (Claude Code's hooks)."""
    data = store.read("spawns")
    found = _resolve(data, spawn_id)
    run = ledger.run_of(data, found["scope"])
    if found["status"] == "recorded":  # once only; what this run of the ant spent still counts
        dispatch.meter(found["ref"], agent, usage)
        out = {"id": found["local"], "already_recorded": True, "line": found.get("outcome"), "next": None, "waiting": _waiting(data, found)}
        if advance and run is not None and not run.get("done") and not out["waiting"]:
            out.update(_next(run))
        return out
    if run is None or run.get("command") not in PROTOCOLS:  # trimmed, or edited by hand
        raise state_error(
            "state_corrupt",
            f"spawns.json holds no run {found['scope']!r} for {found['ref']!r}; "
            f"`aether next --build <phase>` (or --plan, --colonize) starts again",
        )
    ledger.keep_answer(found["ref"], text)
    if run.get("done"):  # late: kept on disk, counted, and nothing else changes
        line = f"{found['local']} recorded for an ended run ({found['scope']}, {run.get('ended') or 'done'}): it changes nothing"
        dispatch.mark_recorded(found["ref"], line, via, usage, agent)
        return {"id": found["local"], "already_recorded": False, "line": line, "waiting": [], "next": None, "ended": True}
    if agent:  # its calls are found by the agent it ran as (steps/checks.py), this answer's judge included
        dispatch.note_agent(found["ref"], agent)
    line = one_line(PROTOCOLS[run["command"]].apply(run, found, text), 600)
    if not line.startswith(found["local"] + " "):  # every line names its spawn (the fallback's id)
        line = f"{found['local']} {line}"
    waiting = dispatch.mark_recorded(found["ref"], line, via, usage, agent)
    result = {"id": found["local"], "already_recorded": False, "line": line, "waiting": waiting}
    if advance and not waiting:
        after = ledger.run_of(store.read("spawns"), found["scope"])
        assert after is not None  # recording an answer keeps its run, and the driver's lock is held
        result.update(_next(after))
    return result
