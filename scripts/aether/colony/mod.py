"""The helper's side of the mod (hooks/mod.ts): where Claude Code loads plugin code, the mod runs
the driven commands' loop — ask the helper, spawn every ant of an action at once, record each
answer as it arrives, show the end — and this module answers each of its steps. The mod holds no
colony rule, number or text: the actions here carry the full briefs, the lines to print, the
progress line and the exit status (docs/decisions/the-mod-runs-the-loop.md).

Spawns the mod sends are marked `runtime: "mod"`: Claude Code's classic hooks on Agent leave
them alone (colony/handback.py), and their answers arrive here, from the mod's `turn.complete`.
"""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime

from aether.colony import continue_drive, dispatch, drive, handback
from aether.core import clock, containment, inputs, paths
from aether.core.exceptions import EXIT_INPUT, AetherError, input_error
from aether.core.text import one_line
from aether.rules import deadlines as deadline_rules
from aether.rules import drive as drive_rules
from aether.rules import spend
from aether.rules import weather as weather_rules
from aether.state import claim, costs, evidence, settings, store
from aether.state import spawns as ledger
from aether.steps import isolation

RUNTIME = handback.MOD
LESSONS = "lessons"  # the local id of the ant that writes a phase's lessons in the mod
LESSONS_CASTE = "ant:architect"  # read-only (the guard refuses its writes), on the session's model
WAIT_SECONDS = 5.0  # one wait of the mod's, at most: it asks again, and redraws the status line between
MAX_WAIT_SECONDS = 60.0  # a wait asked for longer is cut here (Claude Code ends a helper call after 10 min)
POLL_SECONDS = 0.2
SEEN_ENDED = 2  # waits that find an ant ended without its answer before it is handed out again
ENDED = ("completed", "failed", "killed")  # Claude Code's agent statuses of an ant that no longer runs
REASONS = ("answer", "aborted", "refusal", "error")  # turn.complete's reasons
STOPPED_BY = {"failed": "stalled", "killed": "stopped"}  # Claude Code's status of an aborted ant it stopped (rules/deadlines.py)

# The shapes the mod and the helper pass each other, one field list each, by the name
# hooks/types.ts gives them (tests/test_mod_types.py holds the two together). An action carries
# its driver's fields besides the ones the mod reads.
SERVED_TEXT = ("serve", "text", "exit_code")
SERVED_MODEL = ("serve", "why")
SERVED_LOOP = ("serve", "runtime", "action", "spool")
SPAWN_FIELDS = ("id", "ref", "subagent_type", "description", "prompt", "model")
INTERRUPT_FIELDS = ("text", "exit_code")
SPAWN_ACTION_FIELDS = ("action", "line", "progress", "warning", "run", "spawns", "interrupt", "again")
WAIT_ACTION_FIELDS = ("action", "line", "progress", "warning", "run", "refs", "agents", "stop", "interrupt", "again")
END_ACTION_FIELDS = ("action", "line", "progress", "warning", "text", "exit_code")
LAUNCHED_FIELDS = ("launched", "refused", "lines", "progress")
ANSWERED_FIELDS = ("ref", "line", "already_recorded", "waiting")
SERVE_INPUT_FIELDS = ("command", "args")  # what the mod hands in (cli/mod.py reads them)
LAUNCH_FIELDS = ("ref", "agent_id", "why")
LAUNCHED_INPUT_FIELDS = ("spawns", "call")
CALL_INPUT_FIELDS = ("command", "file_path", "notebook_path", "run_in_background")
CALL_FIELDS = ("id", "tool", "input", "refused", "isError", "text", "ms", "t", "hooks_ms")
ANSWER_INPUT_FIELDS = ("ref", "agent_id", "text", "usage", "duration_ms", "reason", "calls", "error", "rate_limits", "status")
STOPPED_FIELDS = ("agent_id", "ok", "text")
WAIT_INPUT_FIELDS = ("refs", "scope", "seconds", "statuses", "calls", "stopped", "call")
SHAPES = {
    "ServedText": SERVED_TEXT,
    "ServedModel": SERVED_MODEL,
    "ServedLoop": SERVED_LOOP,
    "Spawn": SPAWN_FIELDS,
    "Interrupt": INTERRUPT_FIELDS,
    "SpawnAction": SPAWN_ACTION_FIELDS,
    "WaitAction": WAIT_ACTION_FIELDS,
    "EndAction": END_ACTION_FIELDS,
    "Launched": LAUNCHED_FIELDS,
    "Answered": ANSWERED_FIELDS,
    "ServeInput": SERVE_INPUT_FIELDS,
    "Launch": LAUNCH_FIELDS,
    "LaunchedInput": LAUNCHED_INPUT_FIELDS,
    "CallInput": CALL_INPUT_FIELDS,
    "Call": CALL_FIELDS,
    "AnswerInput": ANSWER_INPUT_FIELDS,
    "Stopped": STOPPED_FIELDS,
    "WaitInput": WAIT_INPUT_FIELDS,
}


def _answered(ref: str, line: str | None, already_recorded: bool | None = None, waiting: list | None = None) -> dict:
    """What `aether mod answer` says: the spawn, its line (None: nothing to show)."""
    return dict(zip(ANSWERED_FIELDS, (ref, line, already_recorded, waiting or []), strict=True))


# ---------------------------------------------------------------- actions as the mod gets them


def _lessons_spawn(action: dict) -> dict:
    """The `lessons` action in the mod: an ant on the session's model writes them (no Queen turn);
    `answer` records its text as `aether record lessons` would."""
    data = store.read("spawns")
    run = ledger.run_of(data, action["run"])
    if run is None:
        raise input_error("unknown_run", f"no run {action['run']!r} asks for lessons")
    ref = f"{run['scope']}/{LESSONS}"
    rec = ledger.find(data, ref)
    if rec is not None and ledger.in_flight(rec):
        return {**dispatch.wait(run, [LESSONS]), "refs": [ref]}
    held = dispatch.held(run, []) or dispatch.tries_stop(run, [LESSONS])
    if held is not None:  # a limit holds the colony, or its ant was stopped twice: the lessons wait with the rest
        return {**held, "run": run["scope"]}
    brief = (
        f"[aether spawn {ledger.brief_rel(run['scope'], LESSONS)}]\n"
        f"You write the lessons of an Aether colony's phase {action.get('phase')}; you change nothing.\n\n"
        f"{action['text']}\n\nAnswer with the lessons alone, one per line, nothing before or after them."
    )
    ledger.write_brief(run["scope"], LESSONS, brief)
    dispatch.add_spawn(
        run["scope"],
        LESSONS,
        LESSONS,
        LESSONS_CASTE,
        f"{LESSONS} {LESSONS_CASTE.split(':', 1)[1]}",
        f"lessons-{run.get('phase')}",
        model=None,  # the session's model: the Queen's judgment, without a Queen turn
        autopilot=run["scope"] if run["command"] == "run" else run.get("parent"),
        cost_key=dispatch.cost_key(run),
        status="dispatched",
        runtime=RUNTIME,
        deadline_s=deadline_rules.for_agent(LESSONS_CASTE, settings.deadlines()),
    )
    return {
        "action": "spawn",
        "spawns": [
            {
                "id": LESSONS,
                "subagent_type": LESSONS_CASTE,
                "description": f"{LESSONS} architect",
                "prompt": ledger.prompt_for(ref, LESSONS),
            }
        ],
        "running": [],
        "text": f"Spawn 1 ant: the lessons of phase {action.get('phase')}.",
        "command": None,
    }


def for_mod(action: dict) -> dict:
    """`action` as the mod runs it: spawns with their full briefs and refs, a wait with the refs
    it waits for, an end with its exit status; every action with the line a `-p` run prints."""
    out = dict(action)
    if out["action"] == "lessons":
        out = _lessons_spawn(out)
    if out["action"] == "spawn":
        out["spawns"], data = _briefed(out)  # the ledger as taking the spawns wrote it
    else:
        data = store.read("spawns")  # once: everything below reads this copy
    if out["action"] == "wait" and out.get("why") == "limit":  # waiting out a limit: no ant to wait for, said once
        out.update(refs=[], agents={}, line=out["text"] if out.get("started") else None)
        out["interrupt"] = interrupted([], data)
    elif out["action"] == "spawn":
        spawns = out["spawns"]
        run = ledger.run_of(data, spawns[0]["ref"].split("/", 1)[0]) if spawns else None
        phase = f"phase {run['phase']} · " if run is not None and isinstance(run.get("phase"), int) else ""
        again = [s["id"] for s in spawns if (ledger.find(data, s["ref"]) or {}).get("deadline_stops")]  # rules/deadlines.py
        out["line"] = f"{phase}spawn {', '.join(s['description'] for s in spawns)}" + (
            f" ({', '.join(again)} once more: stopped before it answered)" if again else ""
        )
        out["interrupt"] = interrupted([s["ref"] for s in spawns], data)
    elif out["action"] == "wait":
        out["refs"] = out.get("refs") or _refs_running(data, out.get("waiting") or [])
        out["line"] = f"waiting for {', '.join(out.get('waiting') or []) or 'answers'}"
        out["interrupt"] = interrupted(out["refs"], data)
    else:
        out["exit_code"] = drive_rules.exit_status(out["action"], out.get("why"), out.get("outcome"))
        out["line"] = f"{out['action']}" + (f" ({out['why']})" if out.get("why") else "")
    if out["action"] in ("spawn", "wait"):  # the command that goes on, should the loop have to stop here
        run = ledger.run_of(data, out.get("run") or "")
        out["again"] = claim.slash_of(run) if run else None
    out["progress"] = progress(data)
    out["warning"] = isolation.warning(ledger.current_run(data, "build"))
    return out


def _briefed(action: dict) -> tuple:
    """The spawns of a spawn action with their full briefs and refs, taken for the mod to send;
    and the spawns ledger as taking them wrote it."""
    scope = action.get("run") or _scope_of(action)
    spawns = []
    for s in action["spawns"]:
        ref = ledger.ref_in(s["prompt"]) or f"{scope}/{s['id']}"
        brief = ledger.read_brief(ref)
        if brief is None:
            raise input_error("brief_missing", f"the brief of {ref} is missing: run the command again to write it")
        spawns.append({**s, "ref": ref, "prompt": brief})
    return spawns, _take([s["ref"] for s in spawns])


@store.writes("spawns")
def _take(data, refs: list) -> dict:
    """The mod sends these spawns: the Queen's hooks on Agent leave them to it. The ledger as
    written (the caller reads it, not the file again)."""
    for ref in refs:
        rec = ledger.find(data, ref)
        if rec is not None and rec["status"] != "recorded":
            rec["runtime"] = RUNTIME
    return data


def _scope_of(action: dict) -> str:
    """The run whose spawns an action hands out: its first spawn's prompt names it."""
    ref = ledger.ref_in(action["spawns"][0]["prompt"]) if action.get("spawns") else None
    if ref is None:
        raise input_error("unknown_run", "the spawn action names no brief")
    return ref.split("/", 1)[0]


def _refs_running(data: dict, locals_: list) -> list:
    """The refs of the in-flight spawns with these local ids (a wait lists locals)."""
    found = []
    for local in locals_:
        rec = next((s for s in reversed(data["spawns"]) if s.get("local") == local and ledger.live(data, s["scope"])), None)
        if rec is not None:
            found.append(rec["ref"])
    return found


# ---------------------------------------------------------------- the loop's steps


@store.writes("spawns")
def _mark_launched(data, ref: str, agent_id: str, launcher: dict) -> bool:
    rec = ledger.find(data, ref)
    if rec is None or rec["status"] == "recorded":
        return False
    now = clock.iso()
    rec.update(status="launched", runtime=RUNTIME, launched_at=now, started_at=now, agent_id=agent_id, refused=0, **launcher)
    rec["stop_asked"] = None  # a new run of the ant: its own deadline, not yet asked to stop
    return True


@store.writes("spawns")
def _mark_refused(data, ref: str, why: str, call: str | None = None) -> None:
    rec = ledger.find(data, ref)
    if rec is None or rec["status"] == "recorded" or (call is not None and rec.get("refused_call") == call):
        return  # the same call of the mod's, asked again after a helper failure: counted once
    rec.update(status="dispatched", refused=(rec.get("refused") or 0) + 1, refused_why=one_line(why, 300), refused_call=call)


def launched(items: list, call: str | None = None) -> dict:
    """The mod sent these spawns: [{ref, agent_id}] run now, in this Claude Code; [{ref, why}]
    Claude Code refused to start (counted: refused twice, the command stops). `call`: the mod's
    name for this call, the same when it asks again: a refusal is counted once."""
    launcher = ledger.launcher()
    if launcher["claude_pid"] is None:
        raise input_error("no_claude_process", "CLAUDE_PID names no Claude Code process: the mod passes the hook's environment")
    marked, refused = [], []
    with ledger.lock():
        data = store.read("spawns")
        for item in items:
            if ledger.find(data, item["ref"]) is None:
                drive.state_vanished(item["ref"])  # the colony's state gone (a `git stash -u`): said so
                raise input_error("unknown_spawn", f"no spawn {item['ref']!r} was handed out")
        for item in items:
            if isinstance(item.get("agent_id"), str) and item["agent_id"]:
                if _mark_launched(item["ref"], item["agent_id"], launcher):
                    marked.append(item["ref"])
                    evidence.open_log(item["agent_id"], item["ref"], RUNTIME)  # the mod hands in its calls
            else:
                _mark_refused(item["ref"], str(item.get("why") or "refused"), call)
                refused.append(item["ref"])
    lines = [
        f"{ref.split('/', 1)[1]} was not started: {one_line(item.get('why') or 'refused', 200)}"
        for item in items
        if (ref := item["ref"]) in refused
    ]
    return dict(zip(LAUNCHED_FIELDS, (marked, refused, lines, progress()), strict=True))


def usage_of(raw, duration_ms=None) -> dict:
    """Claude Code's `turn.complete` usage (the four token counts as the API spells them) as a spawn's usage."""
    parts = raw if isinstance(raw, dict) else {}
    counts = [parts.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")]
    total = sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c >= 0)
    model = parts.get("model") if isinstance(parts.get("model"), str) else None
    return ledger.usage(total, duration_ms, None, parts.get("input_tokens"), parts.get("output_tokens"), model)


def _spawn_of(ref: str | None, agent_id: str | None) -> dict:
    """The spawn an answer is for: its ref, else the agent that ran it (an answer that came before
    the mod knew its agent's spawn)."""
    data = store.read("spawns")
    rec = ledger.find(data, ref) if ref else ledger.find_agent(data, agent_id=agent_id) if agent_id else None
    if ref and "/" not in ref:
        raise input_error("invalid_ref", f"{ref!r} is no spawn ref (scope/id)")
    if rec is None:
        drive.state_vanished(ref or str(agent_id))  # the colony's state gone: kept for when it is back, not set aside
        raise input_error("unknown_spawn", f"no spawn {ref or agent_id!r} was handed out")
    return rec


MAX_CALLS = 500  # calls one mod call hands in (the rest are dropped: the log's caps are lower)


def keep_calls(calls: dict) -> int:
    """The calls the mod saw its ants make ({agent id: [call]}), kept as evidence; the number kept."""
    kept = 0
    for agent_id, items in list(calls.items())[:MAX_CALLS]:
        records = [r for c in items[:MAX_CALLS] if isinstance(c, dict) and (r := evidence.from_mod(c)) is not None]
        kept += evidence.append(agent_id, records)
    return kept


def _weather(reason: str, error: str | None, rate_limits) -> dict | None:
    """The weather an ant that ended on an API error met (its last message is Claude Code's error line)."""
    if reason != "error":
        return None
    return weather_rules.classify(error, datetime.fromtimestamp(clock.now(), UTC), rate_limits)


def _weather_line(ref: str, agent_id: str | None, usage: dict, found: dict) -> dict:
    local = ref.split("/", 1)[1]
    with ledger.lock():
        held = dispatch.weather_hit(ref, agent_id, usage, found)
    if held is None:
        return _answered(ref, None)
    why = "the limit lifts" if found.get("clears") else "that is fixed"
    return _answered(ref, f"{local} did not run: {found['label']} — nothing failed; it goes out again when {why}")


def _stopped_how(rec: dict, agent_id: str | None, reason: str, status: str | None) -> str | None:
    """How the running ant of a spawn that ended without answering was stopped, if it was
    (rules/deadlines.py): at its deadline (the helper asked), by Claude Code's watchdog (listed
    `failed`) or by someone (listed `killed`). None: an interrupt, or an earlier run of it."""
    if reason != "aborted" or not agent_id or rec.get("agent_id") != agent_id or rec["status"] not in ledger.IN_FLIGHT:
        return None  # not its running ant (an answer taken twice — the spool and the call — counts once)
    if (rec.get("stop_asked") or {}).get("agent") == agent_id:
        return "deadline"
    return STOPPED_BY.get(status or "")


def _stop_answer(ref: str, agent_id: str | None, usage: dict, how: str) -> dict:
    detail = {"stalled": deadline_rules.WATCHDOG, "stopped": "its agent is listed killed"}.get(how)
    with ledger.lock():
        hit = dispatch.deadline_hit(ref, agent_id, usage, how, detail)
    return _answered(ref, hit["line"] if hit else None)


def answer(
    ref: str | None,
    agent_id: str | None,
    text: str | None,
    usage: dict,
    reason: str,
    error: str | None = None,
    rate_limits=None,
    status: str | None = None,
) -> dict:
    """An ant's answer from the mod's `turn.complete`: recorded once, as the classic hooks would;
    an ant a usage or rate limit (or an overload) stopped did not run: its spawn is handed out
    again and the colony is held (colony/dispatch.py `held`), nothing fails; any other lack of an
    answer (empty, refused, an error) is handed out again once, then recorded as none; an
    interrupted ant (`aborted`) counts what it spent and is handed out again — one stopped (past its
    deadline, or by Claude Code: `status`, its agent's in Claude Code's list) counts a stop too
    (rules/deadlines.py). An answer of an earlier run of the spawn (another agent than the one
    running it now) only counts its spend."""
    if reason not in REASONS:
        raise input_error("invalid_input", f"reason must be one of {', '.join(REASONS)}, not {reason!r}")
    rec = _spawn_of(ref, agent_id)
    ref = rec["ref"]
    found = _weather(reason, error, rate_limits)
    if found is not None and rec.get("agent_id") in (None, agent_id):
        return _weather_line(ref, agent_id, usage, found)
    how = _stopped_how(rec, agent_id, reason, status)
    if how is not None:
        return _stop_answer(ref, agent_id, usage, how)
    if ref.endswith("/" + LESSONS):
        return _lessons_answer(ref, agent_id, text, usage, reason)
    no_text = reason in ("refusal", "error") or not text or not text.strip()
    if reason == "aborted" or no_text:
        with ledger.lock():
            current = ledger.find(store.read("spawns"), ref) or {}
            if current.get("status") == "recorded" or current.get("agent_id") not in (None, agent_id):
                dispatch.meter(ref, agent_id, usage)  # a stale run of it: its spend counts, nothing else
                return _answered(ref, None)
            if reason == "aborted":
                dispatch.meter(ref, agent_id, usage)
                dispatch.mark(ref, "dispatched")
                return _answered(ref, f"{ref.split('/', 1)[1]} was interrupted: it is handed out again")
        lines = handback.no_answer(ref, agent_id, usage, via=RUNTIME)
        return _answered(ref, one_line(" ".join(lines), 600))
    assert text is not None
    out = drive.record(ref, text, usage, via=RUNTIME, agent=agent_id, advance=False)  # the loop's `wait` asks for the next action
    return _answered(ref, out.get("line"), out.get("already_recorded"), out.get("waiting"))


def _lessons_answer(ref: str, agent_id: str | None, text: str | None, usage: dict, reason: str) -> dict:
    with ledger.lock():
        dispatch.meter(ref, agent_id, usage)
        rec = ledger.find(store.read("spawns"), ref)
        if rec is None or rec["status"] == "recorded":
            return _answered(ref, "lessons were recorded before")
        if reason == "aborted":
            dispatch.mark(ref, "dispatched")
            return _answered(ref, "the lessons ant was interrupted: it is handed out again")
        if reason in ("refusal", "error") or not (text and text.strip()):
            tries = (rec.get("empty") or 0) + 1
            if tries < handback.MAX_EMPTY:
                dispatch.mark(ref, "dispatched", empty=tries)
                return _answered(ref, "the lessons ant gave no lessons: it is handed out again (once)")
            continue_drive.forgo_lessons("the lessons ant gave none, twice")
            line = "no lessons: the lessons ant gave none, twice; the run goes on without them"
            dispatch.mark_recorded(ref, line, RUNTIME, usage, agent_id)
            return _answered(ref, line)
        out = continue_drive.record_lessons(text)
        out.pop("run", None)
        line = f"lessons recorded ({out.get('recorded')})"
        dispatch.mark_recorded(ref, line, RUNTIME, usage, agent_id)
    return _answered(ref, line)


def _settled(refs: list) -> bool:
    """Is none of `refs` still an ant of this Claude Code that runs without a recorded answer?"""
    data = store.read("spawns")
    for ref in refs:
        rec = ledger.find(data, ref)
        if rec is not None and rec["status"] != "recorded" and ledger.in_flight(rec):
            return False
    return True


@store.writes("spawns")
def _seen(data, statuses: dict, call: str | None = None) -> list:
    """Claude Code's status of the agents the mod waits for ({agent id: status}): an ant listed as
    ended (or gone from the list) SEEN_ENDED waits running without its answer is handed out again.
    The same wait of the mod's asked again (`call`) is one look, not two."""
    handed = []
    for rec in data["spawns"]:
        agent = rec.get("agent_id")
        if rec.get("runtime") != RUNTIME or rec["status"] not in ledger.IN_FLIGHT or agent not in statuses:
            continue
        if call is not None and rec.get("seen_call") == call:
            continue
        rec["seen_call"] = call
        if statuses[agent] in ENDED or statuses[agent] is None:
            rec["ended_seen"] = (rec.get("ended_seen") or 0) + 1
            if rec["ended_seen"] >= SEEN_ENDED:
                rec.update(status="dispatched", ended_seen=0)
                if (rec.get("stop_asked") or {}).get("agent") == agent:  # stopped at its deadline, its end unheard
                    dispatch.note_stop(rec, agent, "deadline")
                handed.append(rec["local"])
        else:
            rec["ended_seen"] = 0
    return handed


def _due(refs: list) -> bool:
    """Must an ant of `refs` that this Claude Code runs for the mod be stopped now (its deadline)?"""
    data, now, pid = store.read("spawns"), clock.now(), ledger.launcher()["claude_pid"]
    return any(dispatch.to_stop(data, ref, pid, now) for ref in refs)


def wait(
    refs: list,
    seconds: float = WAIT_SECONDS,
    scope: str | None = None,
    statuses: dict | None = None,
    stopped: list | None = None,
    call: str | None = None,
) -> dict:
    """Blocks until every ant of `refs` has answered (or stopped running), at most `seconds`;
    then the run's next action. Still running: a `wait` naming the ants that run — and, in `stop`,
    the agents past their deadline the mod is to stop (rules/deadlines.py). `statuses`: Claude
    Code's word on the agents of an earlier wait ({agent id: status, or None: not listed});
    `stopped`: what the mod's stops did ([{agent_id, ok, text}])."""
    if statuses:
        with ledger.lock():
            _seen(statuses, call)
    said = []
    if stopped:
        with ledger.lock():
            said = dispatch.stops_reported(stopped)
    deadline = time.monotonic() + max(0.0, min(seconds, MAX_WAIT_SECONDS))
    while not _settled(refs) and time.monotonic() < deadline and not _due(refs):
        clock.idle(POLL_SECONDS)
    asked = []
    if _due(refs):
        with ledger.lock():
            asked = dispatch.ask_stops(refs, ledger.launcher()["claude_pid"])
    data = store.read("spawns")
    running = [r for r in refs if (rec := ledger.find(data, r)) is not None and rec["status"] != "recorded" and ledger.in_flight(rec)]
    if running:
        agents = {r: ledger.find(data, r).get("agent_id") for r in running}  # type: ignore[union-attr]
        out = {**dispatch.wait({}, [r.split("/", 1)[1] for r in running]), "refs": running, "agents": agents}
        out["stop"] = [a["agent"] for a in asked]
        out["line"] = "; ".join(said + [a["line"] for a in asked]) or None
        out["interrupt"] = interrupted(running, data)
        run = ledger.run_of(data, scope or running[0].split("/", 1)[0])
        out["again"] = claim.slash_of(run) if run else None  # as for_mod's wait says it
        out["progress"] = progress(data)
        out["warning"] = isolation.warning(ledger.current_run(data, "build"))
        return out
    scope = scope or (refs[0].split("/", 1)[0] if refs else None)
    out = for_mod(next_of(scope))
    if out["action"] == "wait" and out.get("why") == "limit" and not out.get("started"):  # this call waits its share
        left = min(deadline - time.monotonic(), clock.parse_iso(out["until"]) - clock.now())
        if left > 0:
            clock.idle(left)
            out = for_mod(next_of(scope))
    return out


def interrupted(refs: list, data: dict | None = None) -> dict:
    """What the mod shows if the person interrupts it (Esc) at this action — said in advance: once
    interrupted, Claude Code runs no more of its calls. Nothing is half-recorded; the ants of
    `refs` finish and their answers are recorded; the same command goes on where the run stands.
    `data`: the spawns ledger, if the caller has read it."""
    data = data if data is not None else store.read("spawns")
    live = [r for r in data["runs"] if not r.get("done")]
    again = claim.slash_of(live[-1]) if live else None
    names = [r.split("/", 1)[1] for r in refs]
    text = "Aether: interrupted." + (
        f" {', '.join(names)} may still be running: their answers are recorded as they arrive." if names else " Nothing is running."
    )
    if again:
        text += f" {again} goes on where the run stands."
    return dict(zip(INTERRUPT_FIELDS, (text, drive_rules.EXIT_STATUS["stopped"]), strict=True))


def next_of(scope: str | None) -> dict:
    """The next action of the run `scope` (or of the newest run, as `aether next` answers)."""
    run = ledger.run_of(store.read("spawns"), scope) if scope else None
    if scope is None or run is None:
        return drive.next_action()  # takes the driver's lock itself
    with ledger.lock():
        run = ledger.run_of(store.read("spawns"), scope) or run
        return drive.advance_after(run)


# ---------------------------------------------------------------- what the session shows


def progress(data: dict | None = None) -> str:
    """One line for the session's status band: the run, each running ant and how long it has run
    against its deadline (`w1 builder 3m05s/30m`), and the spend against the cap — from the state
    files, as `aether watch` reads them (`data`: the spawns ledger, if the caller has read it)."""
    data = data if data is not None else store.read("spawns")
    live = [r for r in data["runs"] if not r.get("done")]
    if not live:
        return ""
    run = live[-1]
    head = f"Aether {run['command']}" + (f" · phase {run['phase']}" if isinstance(run.get("phase"), int) else "")
    now = clock.now()
    ants = [deadline_rules.ant_line(s, now) for s in data["spawns"] if ledger.in_flight(s)]
    parts = [head, ("running " + ", ".join(ants)) if ants else "no ant running"]
    warned = isolation.warning(ledger.current_run(data, "build"))  # a safety net off: where the person looks
    if warned:
        parts.append(warned)
    held = dispatch.weather_now(data)
    if held is not None:
        parts.append(weather_rules.line(held, datetime.fromtimestamp(clock.now(), UTC)))
    pilot = ledger.active_autopilot(data)
    if pilot is not None:
        parts.append(f"spent {spend.fmt(costs.run_spend(pilot['scope'])['total']['tokens'])} of {spend.fmt(pilot['budget']['run'])}")
    return " · ".join(parts)


# ---------------------------------------------------------------- answers kept until the helper takes them


SPOOL = "spool"  # <data>/spool/<agent id>.json: an ant's answer the mod keeps until the helper has recorded it
SPOOL_NAME = re.compile(r"([A-Za-z0-9_-]{1,80})\.json")
MAX_SPOOLED = 8 * 1024 * 1024  # bytes of one kept answer (its calls included)


def spool_dir() -> str:
    """Where the mod keeps an ant's answer before the helper takes it (made when missing)."""
    return containment.make_dirs(os.path.join(paths.data_dir(), SPOOL))


def _str(data: dict, key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise input_error("invalid_input", f"{key} must be a string")
    return value


def calls_of(value, where: str) -> list:
    if not isinstance(value, list) or not all(isinstance(c, dict) for c in value):
        raise input_error("invalid_input", f"{where} must be a list of the mod's calls {{tool, input, isError, text, ms, t}}")
    return value


def take(data: dict, kept: str | None = None) -> dict:
    """`aether mod answer`'s payload (what `turn.complete` brought, kept in the spool meanwhile):
    its calls kept as evidence, then the answer recorded; its spool file goes once it is taken.
    `kept`: the spool file it was read from — then it must be its agent's file, for a spawn the mod
    ran (an ant could write a file there: nothing else is taken from the spool)."""
    ref, agent = _str(data, "ref"), _str(data, "agent_id")
    if not ref and not agent:
        raise input_error("invalid_input", "ref or agent_id is required")
    if kept is not None:
        if not agent or f"{agent}.json" != os.path.basename(kept):
            raise input_error("invalid_input", f"the kept answer {os.path.basename(kept)} is not its agent's ({agent!r})")
        rec = _spawn_of(ref, agent)
        if rec.get("runtime") != RUNTIME or rec.get("agent_id") not in (None, agent):
            raise input_error("invalid_input", f"the kept answer of {agent} is for no spawn the mod ran as that agent")
    duration = data.get("duration_ms")
    duration = duration if isinstance(duration, int) and not isinstance(duration, bool) else None
    if agent:  # its last calls first: a watcher's answer is judged on what it ran
        keep_calls({agent: calls_of(data.get("calls") or [], "calls")})
    limits = data.get("rate_limits")
    text, reason = _str(data, "text"), _str(data, "reason") or "answer"
    if reason not in REASONS:  # a reason Claude Code added since: an answer if it brought one, else none
        reason = "answer" if text and text.strip() else "error"
    out = answer(
        ref or None,
        agent,
        text,
        usage_of(data.get("usage"), duration),
        reason,
        error=_str(data, "error"),
        rate_limits=limits if isinstance(limits, list) else None,
        status=_str(data, "status"),
    )
    done = kept or (os.path.join(paths.data_dir(), SPOOL, f"{agent}.json") if agent and SPOOL_NAME.fullmatch(f"{agent}.json") else None)
    if done:
        try:
            os.unlink(done)
        except OSError:
            pass
    return out


def ingest_spool() -> list:
    """Answers the mod kept because the helper could not take them then (it failed, or Claude Code
    ended first): recorded now, before anything else, so no finished ant runs again. A kept file
    that is no answer of the mod's is set aside (`.bad`), one that cannot be recorded now stays for
    a later call (a state problem: named by the command that meets it) — never lost, and never
    in the way of the rest. The refs taken."""
    folder = os.path.join(paths.data_dir(), SPOOL)
    if not os.path.isdir(folder):
        return []
    taken = []
    for name in sorted(os.listdir(folder)):
        if not SPOOL_NAME.fullmatch(name):
            continue
        path = os.path.join(folder, name)
        try:
            data = inputs.parse_json(containment.read_bytes(path, MAX_SPOOLED).decode("utf-8", "replace"), f"the kept answer {name}")
            if not isinstance(data, dict):
                raise input_error("invalid_input", f"the kept answer {name} is no JSON object")
            taken.append(take(data, kept=path).get("ref"))
        except FileNotFoundError:
            continue  # taken meanwhile by the mod's own call
        except AetherError as exc:
            if exc.exit_code == EXIT_INPUT:
                os.replace(path, path + ".bad")
            # else the state, not the answer: it stays for a later call, and the others are taken
        except OSError:
            continue
    return [r for r in taken if r]
