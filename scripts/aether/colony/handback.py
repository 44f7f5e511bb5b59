"""An ant's answer, handed back by Claude Code: recorded once, with its usage, wherever it arrives.

Claude Code hands an ant's report back in one of three ways, and the hooks record it from each
(docs/decisions/the-helper-drives.md, "Answers that come back later"):

- **the Agent result** (PostToolUse on Agent): `completed` carries the report and its usage
  (in its `handbackReport` when the ant handed it back through `SubagentHandback` under `-p`);
  `async_launched` says Claude Code sent the ant to the background (auto mode does it to every
  ant) — the answer comes later, so the spawn is marked `background`;
- **the ant's stop** (SubagentStop): its last message, or the report it handed back through
  `SubagentHandback`, read from its transcript with the usage of its last turn. A background
  ant's answer is recorded here; a foreground ant's is kept (`returned`) for its Agent result;
- **the notification** the main thread gets for a background ant (UserPromptSubmit:
  `<task-notification>` under `-p`, `<agent-message>` in an interactive session): recorded if
  nothing recorded it yet, and the Queen is told what was recorded and the next action.

Every path meters the usage Claude Code reports, recorded answer or not (once per ant run) — an
ant of a colony caste that no spawn stands for too, at its stop; a
late answer of an ended run is kept and changes nothing (colony/drive.py); ant text reaches the
Queen's context only on one line.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime

from aether.colony import dispatch, drive, launch
from aether.core import clock, containment
from aether.core.exceptions import AetherError
from aether.core.text import one_line
from aether.rules import deadlines as deadline_rules
from aether.rules import weather as weather_rules
from aether.state import spawns as ledger
from aether.state import store

# Claude Code 2.1.328 keeps hook context longer than this in a file of its own and shows the
# model a 2 KB preview (probed: 10,000 characters inline, 10,010 persisted).
HOOK_CONTEXT_LIMIT = 10_000
HARNESS_NOTE = re.compile(r"\s*<tools-used-before-summary>[^<]*</tools-used-before-summary>\s*")  # Claude Code's, not the ant's
MAX_TRANSCRIPT = 50_000_000  # bytes of an ant's transcript read for its report and usage
MAX_EMPTY = 2  # Agent results without an answer before the spawn is recorded as having none
NO_ANSWER = "(the ant ended without an answer, twice)"
HANDBACK_TOOL = "SubagentHandback"
AGENT_MESSAGE = re.compile(r'<agent-message from="([A-Za-z0-9_-]{1,80})">\n(.*?)\n?</agent-message>', re.S)
REPORT_FOLLOWS = "The report follows:\n"
MOD = "mod"  # spawns the mod sent (colony/mod.py): their answers come through it, not these hooks
TASK = re.compile(r"<task-notification>(.*?)</task-notification>", re.S)


# ---------------------------------------------------------------- reading what Claude Code hands back


def answer_of(response) -> tuple:
    """(the ant's answer text, its usage) from the Agent tool's result (a dict or a JSON string)."""
    if isinstance(response, str):
        try:
            parsed = json.loads(response)
        except (ValueError, RecursionError):
            return response, {}
        if not (isinstance(parsed, dict) and "content" in parsed):  # the ant's own text, which may be JSON
            return response, {}
        response = parsed
    if not isinstance(response, dict):
        return None, {}
    report = response.get("handbackReport")
    if isinstance(report, dict) and isinstance(report.get("text"), str):
        # handed back through SubagentHandback (auto mode under -p): the content only points at
        # a message for the main thread; the report is here
        return report["text"], ledger.usage_of(response)
    content = response.get("content")
    if isinstance(content, list):
        # Claude Code puts its own notes around the ant's report (`<tools-used-before-summary>…`)
        # and counts them: harnessNoteCount blocks before, harnessTailCount after.
        head, tail = response.get("harnessNoteCount"), response.get("harnessTailCount", 0)
        if isinstance(head, int) and isinstance(tail, int) and min(head, tail) >= 0 and head + tail < len(content):
            content = content[head : len(content) - tail]
        blocks = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
        text: str | None = "\n".join(b for b in blocks if not HARNESS_NOTE.fullmatch(b))
    else:
        text = content if isinstance(content, str) else None
    return text, ledger.usage_of(response)


def _entries(path: str) -> list:
    """The JSON lines of a transcript (a regular file; its first MAX_TRANSCRIPT bytes), or []."""
    try:
        raw = containment.read_bytes(path, MAX_TRANSCRIPT)
    except (OSError, ValueError, TypeError):
        return []
    out = []
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def _blocks(entry: dict) -> list:
    content = (entry.get("message") or {}).get("content") if isinstance(entry.get("message"), dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def transcript(path: str | None) -> dict:
    """What an ant's transcript tells: {ref, report, usage} — the spawn its first prompt names, the
    report it handed back (else its last text), and the usage of its last turn as Claude Code
    counts an agent's tokens (input, cache and output of that turn)."""
    entries = _entries(path) if isinstance(path, str) else []
    first = next((e for e in entries if e.get("type") == "user"), None)
    ref = ledger.ref_in(next((b.get("text", "") for b in _blocks(first) if isinstance(b.get("text"), str)), "")) if first else None
    report, last_text, turn, tools = None, None, None, 0
    for e in entries:
        if e.get("type") != "assistant":
            continue
        turn = e
        for b in _blocks(e):
            if b.get("type") == "tool_use" and b.get("name") == HANDBACK_TOOL:
                message = (b.get("input") or {}).get("message") if isinstance(b.get("input"), dict) else None
                report = message if isinstance(message, str) else report
            elif b.get("type") == "tool_use":
                tools += 1
            elif b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                last_text = b["text"]
    usage = {}
    if turn is not None:
        parts = (turn.get("message") or {}).get("usage") or {}
        parts = parts if isinstance(parts, dict) else {}
        counts = [parts.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")]
        total = sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c >= 0)
        usage = ledger.usage(
            total,
            _duration(first, turn),
            tools,
            parts.get("input_tokens"),
            parts.get("output_tokens"),
            (turn.get("message") or {}).get("model"),
        )
    return {"ref": ref, "report": report if report is not None else last_text, "usage": usage}


def _duration(first: dict | None, last: dict) -> int | None:
    if first is None:
        return None
    try:
        return round((clock.parse_iso(last["timestamp"]) - clock.parse_iso(first["timestamp"])) * 1000)
    except (AetherError, KeyError, TypeError, ValueError):
        return None


def _tag(body: str, name: str) -> str | None:
    found = re.search(rf"<{name}>(.*?)</{name}>", body, re.S)
    return found.group(1) if found else None


def _int(text: str | None):
    return int(text) if text and text.strip().isdigit() and len(text.strip()) < 16 else None


def notifications(prompt: str) -> list:
    """The ants' answers a prompt of Claude Code's carries: [{agent_id, tool_use_id, text, usage}]
    from `<task-notification>` blocks (`-p`) and `<agent-message>` blocks (interactive sessions,
    the report's lines indented by two)."""
    found = []
    for body in TASK.findall(prompt):
        result = _tag(body, "result")
        usage_block = _tag(body, "usage") or ""
        found.append(
            {
                "agent_id": (_tag(body, "task-id") or "").strip() or None,
                "tool_use_id": (_tag(body, "tool-use-id") or "").strip() or None,
                "status": (_tag(body, "status") or "").strip() or None,
                "summary": _tag(body, "summary"),
                "text": result,
                "usage": ledger.usage(
                    _int(_tag(usage_block, "subagent_tokens")), _int(_tag(usage_block, "duration_ms")), _int(_tag(usage_block, "tool_uses"))
                ),
            }
        )
    for agent_id, body in AGENT_MESSAGE.findall(prompt):
        _note, sep, report = body.partition(REPORT_FOLLOWS)
        lines = report.split("\n") if sep else []
        text = "\n".join(line[2:] if line.startswith("  ") else line for line in lines)
        found.append(
            {"agent_id": agent_id, "tool_use_id": None, "status": None, "summary": None, "text": text if sep else None, "usage": {}}
        )
    return found


# ---------------------------------------------------------------- what the Queen is told


def _fitted(action: dict, used: int) -> str:
    """The action's line, or — when it would pass Claude Code's limit for hook context — a line
    that names a file holding its text (the project's own, so the Queen reads it as it is)."""
    line = drive.action_line(action)
    if used + len(line) <= HOOK_CONTEXT_LIMIT:
        return line
    name = ledger.write_text(action.get("run") or "texts", f"{action['action']}-{action.get('why') or 'text'}", action.get("text") or "")
    return f"Aether next: {action['action']} — its text is long: read {name} and show it to the user as it is" + (
        f" (it ends with the command that continues: {action['command']})." if action.get("command") else "."
    )


def _lines(out: dict) -> list:
    """What a recording tells the Queen: one line per ant (its text on that one line), then what
    it waits for or the next action."""
    local = out["id"]
    head = f"Aether: {local} was recorded before" if out["already_recorded"] else f"Aether recorded {one_line(out['line'], 600)}"
    lines = [head]
    if out.get("waiting"):
        lines.append(f"(waiting for {', '.join(out['waiting'])})")
    if out.get("next"):
        lines.append(_fitted(out["next"], sum(len(line) + 1 for line in lines)))
    elif out.get("next_error"):
        lines.append(
            f"Aether next: stop — show the user this text:\nThe answer is recorded, but the next step "
            f"failed: {one_line(out['next_error']['error'], 600)} — after fixing that, `aether next` goes on."
        )
    return lines


def _record(ref: str, text: str, usage: dict, via: str, agent: str | None, locked: bool = False) -> list:
    """Record the answer (`locked`: the caller holds the driver's lock) and say so in lines."""
    local = ref.split("/", 1)[1]
    try:
        record = drive.record_locked if locked else drive.record
        return _lines(record(ref, text, usage, via=via, agent=agent, advance=via != MOD))  # the mod's loop asks itself
    except AetherError as exc:
        return [f"Aether could not record {local}: {one_line(exc.message, 400)} — pipe the answer: aether record {local} - <<'EOF'"]


def _context(event: str, lines: list) -> dict | None:
    if not lines:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": "\n".join(lines)}}


# ---------------------------------------------------------------- the hooks


def _spawn(ref: str | None) -> dict | None:
    return ledger.find(store.read("spawns"), ref) if ref else None


def post_hook(payload: dict) -> dict | None:
    """PostToolUse on Agent: a completed ant's answer is recorded (its usage counted, answer or
    not); a backgrounded one is marked so, and the Queen told to wait for it."""
    tool_input = raw if isinstance(raw := payload.get("tool_input"), dict) else {}
    ref = ledger.ref_in(prompt if isinstance(prompt := tool_input.get("prompt"), str) else "")
    if ref is None:
        return None
    rec = _spawn(ref)
    if rec is not None and rec.get("runtime") == MOD:
        return None  # the mod sent it: its answer comes through the mod
    if rec is None:
        return _context(
            "PostToolUse",
            [
                f"Aether: this Agent call names a brief ({ref}) Aether has no record of: "
                f"its answer is not recorded; `aether next` says what to spawn now."
            ],
        )
    response = payload.get("tool_response")
    result = response
    if isinstance(response, str):  # Claude Code's result as JSON text, or the ant's own text
        try:
            result = json.loads(response)
        except (ValueError, RecursionError):
            result = None
    result = result if isinstance(result, dict) and ("status" in result or "content" in result) else {}
    status = result.get("status")
    agent = found if isinstance(found := result.get("agentId"), str) else None
    local = rec["local"]
    if tool_input.get("subagent_type") != rec["subagent_type"]:
        return _context(
            "PostToolUse",
            [
                f"Aether: this Agent call ran as {one_line(tool_input.get('subagent_type'), 60)}"
                f", not as {local}'s {rec['subagent_type']}: its answer is not recorded."
            ],
        )
    if status in ("async_launched", "remote_launched"):
        return _context("PostToolUse", _backgrounded(ref, agent, result))
    text, usage = answer_of(response)
    agent = agent or payload.get("tool_use_id")
    if not text or not text.strip():
        return _context("PostToolUse", no_answer(ref, agent, usage))
    return _context("PostToolUse", _record(ref, text, usage, "hook", agent))


def _backgrounded(ref: str, agent: str | None, response: dict) -> list:
    local = ref.split("/", 1)[1]
    output = response.get("outputFile") if isinstance(response.get("outputFile"), str) else None
    with ledger.lock():
        rec = _spawn(ref)
        if rec is not None and rec["status"] == "returned":  # it stopped before this result came: record it now
            arrived = rec.get("arrived") or {}
            text = ledger.read_answer(ref) or ""
            if text.strip():
                return _record(ref, text, arrived.get("usage") or {}, "stop", arrived.get("agent") or agent, locked=True)
        dispatch.mark(ref, "background", agent_id=agent, output_file=output, background_at=clock.iso())
    return [
        f"Aether: {local} runs in the background — its answer is recorded when it arrives, with the next "
        f"action. End your turn; don't send {local} again."
    ]


def no_answer(ref: str, agent: str | None, usage: dict, via: str = "hook") -> list:
    """An Agent result without an answer: its spend counted; handed out again, and recorded as
    having no answer the second time (so the protocol's ladder takes it, never a loop)."""
    local = ref.split("/", 1)[1]
    with ledger.lock():
        dispatch.meter(ref, agent, usage)
        rec = _spawn(ref)
        if rec is None or rec["status"] == "recorded":
            return [f"Aether: {local} was recorded before"]
        if agent is not None and agent in (rec.get("empty_by") or []):  # the same ant's end, brought twice
            return [f"Aether: {local} returned no answer; `aether next` hands it out again (once)."]
        tries = (rec.get("empty") or 0) + 1
        seen = [*(rec.get("empty_by") or []), agent][-MAX_EMPTY:] if agent else rec.get("empty_by") or []
        if tries < MAX_EMPTY:
            dispatch.mark(ref, "dispatched", empty=tries, empty_by=seen)
            return [f"Aether: {local} returned no answer; `aether next` hands it out again (once)."]
        dispatch.mark(ref, "dispatched", empty=tries, empty_by=seen)
    return _record(ref, NO_ANSWER, {}, via, None)


def _weather(text) -> dict | None:
    return weather_rules.classify(text, datetime.fromtimestamp(clock.now(), UTC))


def weather_lines(ref: str, agent: str | None, usage: dict, found: dict) -> list:
    """An ant the weather stopped (a usage or rate limit, an overload that outlived Claude Code's
    retries): it did not run — its spawn goes out again, the colony is held — and the Queen is
    told, with the next action once no other ant of its action runs (colony/dispatch.py `held`)."""
    local = ref.split("/", 1)[1]
    with ledger.lock():
        if dispatch.weather_hit(ref, agent, usage, found) is None:
            return [f"Aether: {local} was recorded before"]
        when = "the limit lifts" if found.get("clears") else "that is fixed"
        lines = [f"Aether: {local} did not run — {found['label']}: nothing failed, and it goes out again when {when}."]
        return lines + _then(ref, len(lines[0]) + 1, found["label"] + " held the ants")


def stop_lines(ref: str, agent: str | None, usage: dict, how: str, detail: str | None) -> list:
    """An ant stopped before it answered (by Claude Code's watchdog, or by someone: rules/deadlines.py):
    its spend counts, nothing fails, its spawn goes out once more — after MAX_STOPS the run stops —
    and the Queen is told, with the next action once no other ant of its action runs."""
    local = ref.split("/", 1)[1]
    with ledger.lock():
        hit = dispatch.deadline_hit(ref, agent, usage, how, detail)
        if hit is None:
            return [f"Aether: {local} was recorded before"]
        lines = [f"Aether: {hit['line']}."]
        return lines + _then(ref, len(lines[0]) + 1, f"{local} was stopped")


def _then(ref: str, used: int, what: str) -> list:
    """After an ant that did not answer (the caller holds the driver's lock): the ants of its action
    still running, or the next action once none runs."""
    data = store.read("spawns")
    rec = ledger.find(data, ref) or {}
    run = ledger.run_of(data, rec.get("scope") or "")
    others = [s for s in ledger.of_scope(data, rec.get("scope") or "") if s.get("action") == rec.get("action") and ledger.in_flight(s)]
    if run is None or run.get("done"):
        return []
    if others:
        return [f"(waiting for {', '.join(s['local'] for s in others)})"]
    try:
        return [_fitted(drive.advance_after(run), used)]
    except AetherError as exc:
        failed = one_line(exc.message, 400)
        return [f"Aether next: stop — show the user this text:\n{what}; the next step failed: {failed}"]


def failure_hook(payload: dict) -> dict | None:
    """PostToolUseFailure or PermissionDenied on Agent: the call failed (the ant crashed, was
    stopped, an API error outlived Claude Code's retries) or never ran (refused after the
    PreToolUse hook): the spawn is handed out again — the weather holds the colony instead of
    failing anything; other failures are counted, and after dispatch.MAX_FAILED_CALLS the run stops."""
    tool_input = raw if isinstance(raw := payload.get("tool_input"), dict) else {}
    ref = ledger.ref_in(prompt if isinstance(prompt := tool_input.get("prompt"), str) else "")
    rec = _spawn(ref)
    if (
        ref is None
        or rec is None
        or rec["status"] not in ledger.IN_FLIGHT
        or rec.get("tool_use_id") != payload.get("tool_use_id")
        or rec.get("runtime") == MOD
    ):
        return None
    if payload.get("hook_event_name") == "PermissionDenied":
        dispatch.mark(ref, "dispatched")
        return None
    error = raw_error if isinstance(raw_error := payload.get("error"), str) else ""
    found = _weather(error)
    if found is not None:
        return _context("PostToolUseFailure", weather_lines(ref, rec.get("agent_id"), {}, found))
    if payload.get("is_interrupt") is True or error.strip() == deadline_rules.INTERRUPTED:  # cut by Claude Code: stalled
        said = f"its Agent call was cut ({one_line(error, 120) or 'interrupted'}): no progress (its watchdog), or an interrupt"
        return _context("PostToolUseFailure", stop_lines(ref, rec.get("agent_id"), {}, "stalled", said))
    count = dispatch.failed_call(ref, error or "the Agent call failed")
    said = f" ({one_line(error, 200)})" if error.strip() else ""
    if count >= dispatch.MAX_FAILED_CALLS:
        return _context(
            "PostToolUseFailure", [f"Aether: {rec['local']}'s Agent call failed{said}, {count} times: `aether next` says what now."]
        )
    return _context("PostToolUseFailure", [f"Aether: {rec['local']}'s Agent call failed{said}; `aether next` hands it out again."])


def start_hook(payload: dict) -> dict | None:
    """SubagentStart of one of the colony's ants: its spawn (named by the first prompt in its
    transcript) has started — in flight for sure — under this agent id."""
    agent = payload.get("agent_id") if isinstance(payload.get("agent_id"), str) else None
    ref = transcript(_agent_transcript(payload, agent))["ref"] if agent else None
    if ref is not None:
        with ledger.lock():
            dispatch.mark_started(ref, agent)
    return None


def stop_hook(payload: dict) -> dict | None:
    """SubagentStop of one of the colony's ants: a background ant's answer is recorded with its
    usage; a foreground ant's is kept for its Agent result (`returned`); an ant of a colony caste
    that no spawn stands for has its usage counted (dispatch.meter_unplanned)."""
    found = transcript(payload.get("agent_transcript_path"))
    agent = payload.get("agent_id") if isinstance(payload.get("agent_id"), str) else None
    text = payload.get("last_assistant_message")
    text = text if isinstance(text, str) and text.strip() else found["report"]
    with ledger.lock():
        data = store.read("spawns")
        rec = (ledger.find_agent(data, agent_id=agent) if agent else None) or (ledger.find(data, found["ref"]) if found["ref"] else None)
        if rec is None and agent and payload.get("agent_type") in launch.COLONY_TYPES:
            dispatch.meter_unplanned(agent, payload["agent_type"], found["usage"])
            return None
        if rec is None or rec["status"] == "recorded" or rec.get("runtime") == MOD:
            return None
        ref = rec["ref"]
        if not text or not text.strip():
            if rec["status"] in ledger.IN_FLIGHT:
                dispatch.meter(ref, agent, found["usage"])
                dispatch.mark(ref, "dispatched")
            return None
        if rec["status"] == "background":
            _record(ref, text, found["usage"], "stop", agent, locked=True)
            return None
        if rec["status"] == "launched":
            ledger.keep_answer(ref, text)
            dispatch.mark(ref, "returned", arrived={"agent": agent, "usage": found["usage"], "at": clock.iso()})
    return None


def prompt_hook(payload: dict) -> dict | None:
    """UserPromptSubmit: a notification of Claude Code's that carries ants' answers (a background
    ant finished): each recorded if nothing did yet; the Queen is told what and the next action."""
    prompt = raw if isinstance(raw := payload.get("prompt"), str) else ""
    lines = []
    for note in notifications(prompt):
        data = store.read("spawns")
        rec = ledger.find_agent(data, agent_id=note["agent_id"], tool_use_id=note["tool_use_id"])
        if rec is None or rec.get("runtime") == MOD:
            continue
        usage = note["usage"]
        if not usage.get("total_tokens"):
            usage = transcript(_agent_transcript(payload, note["agent_id"]))["usage"] or usage
        found = _weather(note.get("summary")) if note.get("status") == "failed" else None
        if found is not None and rec["status"] != "recorded":  # a background ant the weather stopped
            lines += weather_lines(rec["ref"], note["agent_id"], usage, found)
            continue
        how = _stopped(note)
        if how is not None and rec["status"] != "recorded" and rec.get("agent_id") in (None, note["agent_id"]):
            said = deadline_rules.stall_detail(note.get("summary")) if how == "stalled" else one_line(note.get("summary"), 300)
            lines += stop_lines(rec["ref"], note["agent_id"], usage, how, said)
            continue
        text = note["text"] if note["text"] and note["text"].strip() else ledger.read_answer(rec["ref"])
        if rec["status"] != "recorded" and not (text and text.strip()):
            lines += no_answer(rec["ref"], note["agent_id"], usage)
            continue
        lines += _record(rec["ref"], text or "", usage, "notification", note["agent_id"])
    return _context("UserPromptSubmit", lines)


def _stopped(note: dict) -> str | None:
    """How a background ant's notification says it was stopped before it answered (rules/deadlines.py):
    `stalled` (`<status>failed</status>`, `Agent stalled: no progress for 600s …`) or `stopped`
    (`<status>killed</status>`, `… was stopped by the user`); None: it was not."""
    if note.get("status") == "failed" and deadline_rules.stalled_for(note.get("summary")) is not None:
        return "stalled"
    return "stopped" if note.get("status") == "killed" and not (note.get("text") or "").strip() else None


def _agent_transcript(payload: dict, agent_id: str | None) -> str | None:
    """Where Claude Code keeps a subagent's transcript: beside the session's, under its id."""
    main = payload.get("transcript_path")
    if not (isinstance(main, str) and main.endswith(".jsonl") and agent_id):
        return None
    return os.path.join(main[: -len(".jsonl")], "subagents", f"agent-{agent_id}.jsonl")
