"""Spawns by reference, the writing side: run records, dispatched spawns and their marks, and
the spawn action the Queen gets (short prompts naming brief files). See state/spawns.py."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

from aether.core import clock
from aether.core.text import one_line
from aether.rules import deadlines as deadline_rules
from aether.rules import models
from aether.rules import weather as weather_rules
from aether.state import claim, costs, evidence, settings, store
from aether.state import spawns as ledger

WRITERS = ("ant:builder",)  # castes that write files get a report file for their narrative
UNPLANNED = "unplanned"  # the kind and scope of an ant no spawn stands for (meter_unplanned)


@store.writes("spawns")
def save_run(data, run: dict) -> None:
    """Keep the run record as the driver left it."""
    found = ledger.run_of(data, run["scope"])
    if found is None:
        data["runs"].append(run)
    else:
        found.clear()
        found.update(run)


@store.writes("spawns")
def new_run(data, command: str, **fields) -> dict:
    """A new run of `command`; the runs of it still going end (`superseded`): their late answers
    are kept and change nothing, and they hand out nothing again."""
    for old in data["runs"]:
        if old.get("command") == command and not old.get("done"):
            old.update(done=True, ended=old.get("ended") or "superseded", ended_at=clock.iso())
    return dict(ledger.new_run(data, command, **fields))


@store.writes("spawns")
def end_run(data, scope: str, why: str) -> None:
    """The run ends (aborted, finished): a late answer of it is kept and changes nothing."""
    run = ledger.run_of(data, scope)
    if run is not None and not run.get("done"):
        run.update(done=True, ended=why, ended_at=clock.iso())


@store.writes("spawns")
def add_spawn(data, scope: str, local: str, kind: str, subagent_type: str, description: str, action: str, **extra) -> dict:
    """A dispatched spawn's record (a spawn handed out again joins the new action, and the run
    that hands it out)."""
    record = ledger.add(data, scope, local, kind, subagent_type, description, action)
    if record["status"] == "recorded":  # its answer stands: never sent again
        extra.pop("status", None)
    record.update(action=action, **extra)
    return dict(record)


def _count(files: dict, rec: dict, usage: dict) -> None:
    costs.add(
        files["costs"],
        store.read("colony").get("session_id"),
        rec.get("autopilot"),
        rec.get("cost_key") or "unknown",
        rec["subagent_type"].split(":", 1)[-1],
        usage,
        usage.get("model") or rec.get("model"),
    )


def _meter(files: dict, rec: dict, agent: str | None, usage: dict | None) -> bool:
    """Count what one run of the spawn's ant spent, once per run (`agent`: Claude Code's agent id,
    or the Agent call's id); usage without tokens counts nothing here."""
    if not usage or "total_tokens" not in usage:
        return False
    key = agent or f"run{len(rec.get('metered') or []) + 1}"
    if key in (rec.get("metered") or []):
        return False
    rec["metered"] = [*(rec.get("metered") or []), key][-20:]
    rec["usage"] = usage
    _count(files, rec, usage)
    return True


@store.writes("spawns", "costs")
def meter(files, ref: str, agent: str | None, usage: dict | None) -> bool:
    """What an ant spent, counted whether or not its answer is recorded (an empty answer, a late
    one, one of an ended run): the cap sees every token Claude Code reports."""
    rec = ledger.find(files["spawns"], ref)
    return rec is not None and _meter(files, rec, agent, usage)


def _unplanned_target(data: dict) -> tuple:
    """(the run, the autopilot run, the costs.json phase) an ant no spawn stands for counts
    toward: the newest run that goes on — its phase, and the autopilot run driving it — else the
    colony's current phase (`unplanned` before it has one)."""
    live = next((r for r in reversed(data["runs"]) if not r.get("done")), None)
    if live is None or live["command"] == "run":
        phase = store.read("colony").get("current_phase")
        key = str(phase) if isinstance(phase, int) and not isinstance(phase, bool) and phase > 0 else UNPLANNED
    else:
        key = cost_key(live)
    pilot = live and (live["scope"] if live["command"] == "run" else live.get("parent"))
    return live and live["scope"], pilot if pilot and ledger.live(data, pilot) else None, key


@store.writes("spawns", "costs")
def meter_unplanned(files, agent: str, subagent_type: str, usage: dict | None) -> dict:
    """An ant of a colony caste that no spawn stands for (an Agent call the Queen wrote herself,
    Aether handing out none of its caste): its answer is no one's, but what it spent counts, once
    per ant run. Kept as a recorded spawn of kind `unplanned` in the scope of that name — never a
    run's, so its calls are no run's evidence (steps/checks.py)."""
    data = files["spawns"]
    local = "x-" + "".join(c for c in agent if c.isascii() and (c.isalnum() or c in "_-"))[:62]
    run, pilot, key = _unplanned_target(data)
    rec = ledger.find(data, f"{UNPLANNED}/{local}")
    if rec is None:
        caste = subagent_type.split(":", 1)[-1]
        rec = ledger.add(data, UNPLANNED, local, UNPLANNED, subagent_type, f"{local} {caste}", UNPLANNED)
        rec.update(
            status="recorded",
            recorded_at=clock.iso(),
            via="stop",
            agent_id=agent,
            counted_for=run,
            autopilot=pilot,
            cost_key=key,
            runtime=None,
            outcome=f"{local} {caste}: ran outside Aether's spawns — its answer is not recorded, its tokens count",
        )
    if not _meter(files, rec, agent, usage) and not rec.get("metered") and not rec.get("unmetered"):
        rec["unmetered"] = True  # no usage came with it: counted once, as unmetered
        _count(files, rec, {})
    return dict(rec)


@store.writes("spawns", "costs")
def mark_recorded(files, ref: str, line: str, via: str, usage: dict | None, agent: str | None = None) -> list:
    """The spawn's answer is recorded, and what it spent added to costs.json in the same change
    (a spawn whose ant reported no usage counts once, as unmetered); returns the spawns of its
    action whose answer may still come (`awaited`)."""
    data = files["spawns"]
    rec = ledger.find(data, ref)
    assert rec is not None  # the caller found it under the driver's lock, still held
    rec.update(status="recorded", recorded_at=clock.iso(), outcome=line, via=via)
    if not _meter(files, rec, agent, usage) and not rec.get("metered") and not rec.get("unmetered"):
        rec["unmetered"] = True
        _count(files, rec, usage or {})
    return awaited(data, rec)


def awaited(data: dict, rec: dict) -> list:
    """The other spawns of `rec`'s action whose answer may still come: not recorded, and not sent
    back by the weather that holds the colony (those go out again when it lifts — waiting for them
    would leave the Queen waiting with no next action)."""
    held = weather_now(data) is not None
    return [
        s["local"]
        for s in ledger.of_scope(data, rec["scope"])
        if s.get("action") == rec.get("action")
        and s["status"] != "recorded"
        and not (held and s["status"] == "dispatched" and s.get("limited_by"))
    ]


@store.writes("spawns")
def mark_started(data, ref: str, agent: str) -> None:
    """The launched spawn's ant has started, as Claude Code's agent `agent`."""
    rec = ledger.find(data, ref)
    if rec is not None and rec["status"] == "launched":
        rec.update(started_at=clock.iso(), agent_id=agent)


@store.writes("spawns")
def note_agent(data, ref: str, agent: str) -> None:
    """Claude Code ran the spawn as agent `agent` (kept for its evidence)."""
    rec = ledger.find(data, ref)
    if rec is not None and rec.get("agent_id") != agent:
        rec["agent_id"] = agent


@store.writes("spawns")
def mark(data, ref: str, status: str, **fields) -> dict | None:
    """A spawn's new status (never a recorded one's) with what Claude Code told of it."""
    rec = ledger.find(data, ref)
    if rec is None or rec["status"] == "recorded":
        return None
    rec.update(status=status, **fields)
    return dict(rec)


def cost_key(run: dict) -> str:
    """The costs.json phase a run's spawns count for: its phase, else its command (plan, colonize)."""
    phase = run.get("phase")
    return str(phase) if isinstance(phase, int) and not isinstance(phase, bool) else run["command"]


def running(run: dict, locals_: list) -> list:
    """Those of `locals_` whose ant runs now (in flight): they are not handed out again."""
    data = store.read("spawns")
    return [local for local in locals_ if (rec := ledger.find(data, f"{run['scope']}/{local}")) is not None and ledger.in_flight(rec)]


def wait(run: dict, locals_: list) -> dict:
    """The action while ants run in the background: nothing to send; their answers are recorded as
    they arrive, and the next action comes with the last."""
    names = ", ".join(locals_)
    return {
        "action": "wait",
        "waiting": list(locals_),
        "command": None,
        "text": f"{names} {'runs' if len(locals_) == 1 else 'run'} in the background: "
        f"{'its answer is' if len(locals_) == 1 else 'their answers are'} recorded as "
        f"{'it arrives' if len(locals_) == 1 else 'they arrive'}, and the next action comes "
        f"with the last. Send nothing now.",
    }


def dispatch(run: dict, items: list, phase_key: str | None = None, table: dict | None = None) -> dict:
    """Spawn action: brief files written, one record per spawn; items: (local, kind, type, text|None).
    Each spawn gets its caste's model (settings.model_table) and counts its cost for `phase_key`
    (default: the run's phase) and for the autopilot run driving it. A spawn whose ant runs now
    is not handed out again: with nothing else to send, the action is `wait`. While the weather
    holds the colony (a limit), or a spawn's runs ended without an answer as often as TRIES
    bounds (its Agent call failed, was refused, or its ant was stopped before it answered), nothing
    is handed out: the action says so. Each spawn carries its caste's deadline (settings.deadlines)."""
    flying = running(run, [item[0] for item in items])
    items = [item for item in items if item[0] not in flying]
    if not items:
        return wait(run, flying)
    locals_ = [item[0] for item in items]
    stop = held(run, flying) or tries_stop(run, locals_)
    if stop is not None:
        return stop
    table = table or settings.model_table(store.read("colony").get("mode"))
    deadlines = settings.deadlines()
    autopilot = run["scope"] if run["command"] == "run" else run.get("parent")
    run["actions"] = run.get("actions", 0) + 1
    action = f"a{run['actions']}"
    save_run(run)
    out = []
    for local, kind, subagent_type, text in items:
        ref = f"{run['scope']}/{local}"
        if text is not None:
            report = ledger.report_rel(ref)
            tail = f"Your report file (narrative, evidence, logs): {report}\n" if subagent_type in WRITERS else ""
            ledger.write_brief(run["scope"], local, f"[aether spawn {ledger.brief_rel(run['scope'], local)}]\n{text}\n{tail}")
        description = f"{local} {subagent_type.split(':', 1)[-1]}"
        model = models.for_agent(subagent_type, None, table)
        add_spawn(
            run["scope"],
            local,
            kind,
            subagent_type,
            description,
            action,
            model=model,
            autopilot=autopilot,
            cost_key=phase_key or cost_key(run),
            status="dispatched",
            runtime=None,  # who sends it: the Queen's Agent call, unless the mod takes it (colony/mod.py)
            deadline_s=deadline_rules.for_agent(subagent_type, deadlines),
        )
        call = {"id": local, "subagent_type": subagent_type, "description": description, "prompt": ledger.prompt_for(ref, local)}
        if model:
            call["model"] = model
        out.append(call)
    names = ", ".join(s["description"] for s in out)
    return {
        "action": "spawn",
        "spawns": out,
        "running": flying,
        "text": f"Spawn {len(out)} ant(s) in ONE message: {names}." + (f" ({', '.join(flying)} still running.)" if flying else ""),
        "command": "aether record <id> - <<'EOF'",
    }  # only when no hook recorded the answers


def _quoted(text: str) -> str:
    """A text for the Queen to show, with no line of it starting like one of Aether's own lines
    (text that quotes an ant could forge an `Aether next:` line): such lines are indented."""
    return "\n".join("  " + line if line.lstrip().startswith("Aether") else line for line in (text or "").split("\n"))


def action_line(action: dict) -> str:
    """The next action in one line for the Queen (the hook's context, `aether next --text`)."""
    if action["action"] == "spawn":
        calls = [{k: s[k] for k in ("subagent_type", "description", "prompt", "model") if k in s} for s in action["spawns"]]
        return "Aether next: spawn in ONE message, each with run_in_background false: " + json.dumps(calls, ensure_ascii=False)
    if action["action"] == "lessons":
        return f"Aether next: lessons — {one_line(action['text'], 2000)} Record them with: {action['command']}"
    if action["action"] == "wait":
        return f"Aether next: wait — {one_line(action['text'], 2000)}"
    return f"Aether next: {action['action']} — show the user this text:\n{_quoted(action['text'])}"


# ---------------------------------------------------------------- the weather holds the colony (rules/weather.py)

MAX_FAILED_CALLS = 3  # a spawn's Agent calls that failed (crashed, stopped) before the run stops sending it
MAX_REFUSED = 2  # a spawn Claude Code refused to start (the mod's Agent call) before the run stops sending it


def _now() -> datetime:
    return datetime.fromtimestamp(clock.now(), UTC)


def weather_now(data: dict | None = None) -> dict | None:
    """The weather that holds the colony now (a limit an ant met), or None."""
    found = (data if data is not None else store.read("spawns")).get("weather")
    return found if isinstance(found, dict) else None


@store.writes("spawns", "costs")
def weather_hit(files, ref: str, agent: str | None, usage: dict | None, weather: dict) -> dict | None:
    """An ant the weather stopped did not run: what it spent counts, its spawn is handed out again
    (not failed, no empty answer counted) and the colony is held. None: it was recorded before."""
    data = files["spawns"]
    rec = ledger.find(data, ref)
    if rec is None:
        return None
    _meter(files, rec, agent, usage)
    if rec["status"] == "recorded":
        return None
    if agent is None or agent not in (rec.get("limited_agents") or []):  # the same ant's end, brought twice: once
        rec["limited"] = (rec.get("limited") or 0) + 1
        rec["limited_agents"] = [*(rec.get("limited_agents") or []), *([agent] if agent else [])][-5:]
    rec.update(status="dispatched", limited_by=weather["kind"])
    before = weather_now(data) or {}
    data["weather"] = {
        **weather,
        "at": clock.iso(),
        "ref": ref,
        "who": f"{rec['local']} ({rec['subagent_type'].split(':', 1)[-1]})",
        "until": before.get("until"),
        "waiting_since": before.get("waiting_since"),
    }
    return dict(data["weather"])


@store.writes("spawns")
def clear_weather(data, by: str) -> None:
    """The weather no longer holds the colony: a run waited it out, or the person ran a command
    again (`by: "person"`: then the failed Agent calls and the stops before an answer of spawns
    waiting to go out count afresh)."""
    found = weather_now(data)
    if found is not None:
        data["weather"] = None
        data["weather_cleared"] = {"kind": found.get("kind"), "at": clock.iso(), "by": by}
        for rec in data["spawns"]:  # sent back by that weather: ordinary spawns again (`awaited`)
            rec.pop("limited_by", None)
    if by == "person":
        for rec in data["spawns"]:
            for field, *_ in TRIES if rec["status"] == "dispatched" else ():
                if rec.get(field):
                    rec[field] = 0


@store.writes("spawns")
def _wait_for(data, until: str) -> None:
    found = weather_now(data)
    if found is not None and not found.get("until"):
        found.update(until=until, waiting_since=clock.iso())


def _pilot(run: dict) -> dict | None:
    """The autopilot run driving `run` (itself, when it is one)."""
    if run.get("command") == "run":
        return run
    return ledger.run_of(store.read("spawns"), run["parent"]) if run.get("parent") else None


def _waits(pilot: dict | None) -> bool:
    """Does this run wait out a limit by itself? Asked for (`--wait`, `run: on_limit: wait`), and
    driven by the mod: the markdown runtime's Queen has no clock to wait on."""
    return bool(pilot and pilot.get("wait_limits") and pilot.get("driver") == "mod")


def held(run: dict, flying: list) -> dict | None:
    """What the weather makes of a spawn action of `run`: None (go on), a wait (its other ants
    still run; or an autopilot run that waits out the limit, as asked), or a stop saying what held
    it, that nothing failed and which command goes on."""
    found = weather_now()
    if found is None:
        return None
    if flying:
        return wait(run, flying)
    now = _now()
    pilot = _pilot(run)
    if _waits(pilot) and pilot is not None and pilot.get("stop_requested"):  # `aether run --stop` while it waits
        pilot["stop_requested"] = False
        save_run(pilot)
        text = f"Stopped while waiting out {found.get('label')}, as asked: nothing is running; "
        text += f"{found.get('who')} goes out again when the run goes on."
        return {"action": "stop", "why": "user", "text": text, "command": "/ant:run"}
    if _waits(pilot):
        assert pilot is not None  # _waits says there is one
        until = found.get("until")
        if until is None:
            found["waits"] = pilot.get("limit_waits") or 0
            if not pilot.get("limit_since"):  # the run's first wait: its bound counts from here, on the wall clock
                pilot["limit_since"] = clock.iso()
                save_run(pilot)
            waited = max(0.0, now.timestamp() - clock.parse_iso(pilot["limit_since"]))
            at = weather_rules.next_wait(found, now, waited)
            until = clock.iso(math.ceil(at.timestamp())) if at else None
            if until is not None:
                _wait_for(until)
                found.update(until=until, started=True)
        if until is not None:
            if clock.parse_iso(until) > now.timestamp():
                text = f"Waiting out {found.get('label')}: {found.get('who')} goes out again at {weather_rules.when(until, now)}."
                action: dict = {"action": "wait", "why": "limit", "until": until, "waiting": [], "command": None, "text": text}
                return {**action, "weather": found, "started": bool(found.pop("started", False))}
            started = clock.parse_iso(found.get("waiting_since") or until)
            pilot["limit_waited"] = (pilot.get("limit_waited") or 0) + max(0.0, clock.parse_iso(until) - started)
            pilot["limit_waits"] = (pilot.get("limit_waits") or 0) + 1
            save_run(pilot)
            clear_weather("waited")
            return None
    shown = None if pilot is not None else claim.slash_of(run)  # an autopilot run adds its own "To continue"
    hint = "needs_mod" if pilot is not None and pilot.get("wait_limits") else None if _waits(pilot) else "offer"
    text = weather_rules.stop_text(found, found.get("who") or "an ant", shown, now, hint)
    why = "limit" if found.get("clears") else "api_refused"  # a refused account does not lift by itself: exit 14
    return {"action": "stop", "why": why, "text": text, "command": claim.slash_of(run), "weather": found}


@store.writes("spawns")
def failed_call(data, ref: str, why: str) -> int:
    """A spawn's Agent call failed (crashed, stopped, refused after the hook): it is handed out
    again, and counted; the count."""
    rec = ledger.find(data, ref)
    if rec is None or rec["status"] == "recorded":
        return 0
    rec.update(status="dispatched", failed_calls=(rec.get("failed_calls") or 0) + 1, failed_why=one_line(why, 300))
    return rec["failed_calls"]


# ---------------------------------------------------------------- an ant that never returns (rules/deadlines.py)


def _doing(agent: str | None) -> str:
    """What the ant last did, from the calls kept of it (state/evidence.py)."""
    calls = [c for c in evidence.read(agent)[1] if c.get("tool")] if agent else []  # not an older log's `capped` line
    return deadline_rules.doing(calls[-1] if calls else None)


def note_stop(rec: dict, agent: str | None, how: str, detail: str | None = None) -> int:
    """A spawn's ant stopped before it answered (`how`: deadline_rules.HOWS): counted on its loaded
    record, which goes back to `dispatched` — handed out once more, or, at MAX_STOPS, held by
    `deadline_stop`. Nothing fails. The count."""
    now = clock.now()
    count = (rec.get("deadline_stops") or 0) + 1
    rec.update(
        status="dispatched",
        deadline_stops=count,
        stop_asked=None,
        deadline_hit={
            "how": how,
            "detail": one_line(detail, 300) if detail else None,
            "agent": agent,
            "at": clock.iso(now),
            "ran_s": round(deadline_rules.elapsed(rec, now) or 0),
            "deadline_s": deadline_rules.deadline_of(rec),
            "doing": _doing(agent or rec.get("agent_id")),
        },
    )
    return count


@store.writes("spawns", "costs")
def deadline_hit(files, ref: str, agent: str | None, usage: dict | None, how: str, detail: str | None = None) -> dict | None:
    """An ant stopped before it answered — at its deadline, or by Claude Code: what it spent
    counts, nothing fails, its spawn goes back to be handed out (once more; MAX_STOPS: the run
    stops instead). {count, line}; None when its answer was recorded before, or this agent's stop
    was counted already."""
    rec = ledger.find(files["spawns"], ref)
    if rec is None:
        return None
    _meter(files, rec, agent, usage)
    if rec["status"] == "recorded" or (agent and (rec.get("deadline_hit") or {}).get("agent") == agent):
        return None  # recorded, or this run's stop counted already (a notification may come twice)
    count = note_stop(rec, agent, how, detail)
    return {"count": count, "line": deadline_rules.stop_line(rec["local"], count, rec["deadline_hit"])}


def _failed_calls_text(run: dict, rec: dict) -> str:
    again = claim.slash_of(run)
    return (
        f"{rec['local']} ({rec['subagent_type']}) was sent {rec['failed_calls']} times and its Agent call failed each "
        f"time, the last with: {rec.get('failed_why') or 'no reason given'}. It is not sent again; nothing else "
        f"was sent. After fixing that, {again or 'the same command'} goes on (its count starts again)."
    )


def _refused_text(run: dict, rec: dict) -> str:
    again = claim.slash_of(run)
    return (
        f"Claude Code refused to start {rec['local']} ({rec['subagent_type']}) {rec['refused']} times: "
        f"{rec.get('refused_why') or 'no reason given'}. Nothing else was sent; after fixing that, "
        f"{again or 'the same command'} goes on."
    )


def _deadline_text(run: dict, rec: dict) -> str:
    caste = rec["subagent_type"].split(":", 1)[-1]
    shown = None if _pilot(run) is not None else claim.slash_of(run)  # an autopilot run adds its own "To continue"
    return deadline_rules.stop_text(f"{rec['local']} ({caste})", rec["deadline_stops"], rec.get("deadline_hit") or {}, shown, caste)


# A spawn's runs that ended without an answer, each kind counted on its record with its bound: at
# the bound it is not sent again and the run stops (why, text); the person's next command counts
# afresh (clear_weather).
TRIES = (
    ("failed_calls", MAX_FAILED_CALLS, "failed_calls", _failed_calls_text),  # its Agent call failed
    ("refused", MAX_REFUSED, "refused", _refused_text),  # Claude Code refused to start it (colony/mod.py)
    ("deadline_stops", deadline_rules.MAX_STOPS, "deadline", _deadline_text),  # stopped before it answered
)


def tries_stop(run: dict, locals_: list) -> dict | None:
    """The stop for the first of `locals_` a count of TRIES has reached its bound on, or None."""
    data = store.read("spawns")
    for local in locals_:
        rec = ledger.find(data, f"{run['scope']}/{local}") or {}
        for field, bound, why, text in TRIES:
            if (rec.get(field) or 0) >= bound:
                return {"action": "stop", "why": why, "text": text(run, rec), "command": claim.slash_of(run)}
    return None


def to_stop(data: dict, ref: str, claude_pid: int | None, now: float) -> bool:
    """Is the ant of `ref` one this Claude Code runs for the mod, past its deadline, whose stop is
    not asked yet (or failed STOP_AGAIN_SECONDS ago)?"""
    rec = ledger.find(data, ref)
    agent = (rec or {}).get("agent_id")
    if rec is None or rec.get("runtime") != "mod" or rec.get("claude_pid") != claude_pid or not agent:
        return False
    if not (ledger.in_flight(rec) and deadline_rules.overdue(rec, now)):
        return False
    before = rec.get("stop_asked") or {}
    if before.get("agent") != agent:
        return True
    try:
        return bool(before.get("failed")) and now - clock.parse_iso(before.get("at") or "") >= deadline_rules.STOP_AGAIN_SECONDS
    except ValueError:
        return True


@store.writes("spawns")
def _ask(data, refs: list, now: float) -> list:
    asked = []
    for ref in refs:
        rec = ledger.find(data, ref)
        assert rec is not None  # found by to_stop under the driver's lock
        rec["stop_asked"] = {"agent": rec["agent_id"], "at": clock.iso(now)}
        limit = deadline_rules.fmt(deadline_rules.deadline_of(rec))
        line = f"{rec['local']} ({rec['subagent_type'].split(':', 1)[-1]}) is past its deadline ({limit}): stopping it"
        asked.append({"ref": ref, "agent": rec["agent_id"], "line": line})
    return asked


def ask_stops(refs: list, claude_pid: int | None) -> list:
    """The ants of `refs` that this Claude Code (`claude_pid`) runs for the mod past their
    deadline, not asked to stop yet (or asked again, the stop having failed a while ago): marked
    asked, their [{ref, agent, line}] returned — the mod stops them (TaskStop). The caller holds
    the driver's lock; nothing is written when there is none."""
    now = clock.now()
    data = store.read("spawns")
    due = [ref for ref in refs if to_stop(data, ref, claude_pid, now)]
    return _ask(due, now) if due else []


@store.writes("spawns")
def stops_reported(data, items: list) -> list:
    """What the mod's stops did ([{agent_id, ok, text}]): a stop that failed leaves the ant in
    flight — never handed out while it may still run — and is said (and asked again later). The
    lines to say."""
    lines = []
    for item in items:
        rec = ledger.find_agent(data, agent_id=item.get("agent_id"))
        asked = (rec or {}).get("stop_asked") or {}
        if rec is None or asked.get("agent") != item.get("agent_id") or not ledger.in_flight(rec):
            continue  # answered or handed out meanwhile: its stop is done with
        if item.get("ok"):
            asked["stopped_at"] = clock.iso()
            continue
        why = one_line(item.get("text") or "no reason given", 200)
        asked.update(failed=why, at=clock.iso())
        lines.append(
            f"{rec['local']} could not be stopped ({why}): it is not handed out again while it may still run — {deadline_rules.STOP_HINT}"
        )
    return lines
