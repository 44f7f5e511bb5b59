"""Claude Code's PreToolUse hook on Agent: the Agent call the helper handed out becomes the ant's
brief, and nothing else does. Its own module, below the protocols and the spend bookkeeping, so
the hook that runs before every ant loads as little as it can.

The call must name a spawn of a run that goes on, not recorded and not running already, with
the subagent type it was handed out with; then its prompt becomes the brief, its model and
description the ones handed out, and it runs in the foreground (the wave's barrier where Claude
Code honours it). Any other call that names a brief, or that sends one of the colony's castes
under a handed-out spawn's id without its brief, is refused with a reason the Queen can act on —
as is any spawn's call from a session that does not hold the colony's build (state/claim.py).
"""

from __future__ import annotations

from aether.core import clock
from aether.core.text import one_line
from aether.state import claim, store
from aether.state import spawns as ledger


def _refusal(rec: dict | None, ref: str, tool_input: dict, tool_use_id: str | None, data: dict) -> str | None:
    """Why this Agent call may not run the spawn `ref` (None: it may)."""
    local = ref.split("/", 1)[1]
    if rec is None:
        return f"Aether handed out no spawn {ref} (its record is gone): don't send it; `aether next` says what to spawn now."
    run = ledger.run_of(data, rec["scope"])
    if run is None or run.get("done"):
        why = (run or {}).get("ended") or "ended"
        return f"{local} belongs to run {rec['scope']}, which has ended ({why}): don't send it; `aether next` says what comes now."
    if rec["status"] in ("recorded", "returned"):
        return (
            f"{local} has answered already ({one_line(rec.get('outcome') or 'its answer is kept', 160)}): "
            f"don't send it again; the next action came with its result (`aether next` repeats it)."
        )
    if ledger.in_flight(rec) and rec.get("tool_use_id") != tool_use_id:
        return f"{local} is running already: wait for its answer; don't send it twice."
    if tool_input.get("subagent_type") != rec["subagent_type"]:
        return (
            f"{local} runs as {rec['subagent_type']}: send it again with subagent_type "
            f'"{rec["subagent_type"]}" and the prompt as Aether gave it.'
        )
    return None


@store.writes("spawns")
def launch(data, ref: str, tool_input: dict, tool_use_id: str | None, session_id: str | None) -> tuple:
    """(None, the spawn record) when the call may run the spawn — marked launched — else (the
    reason to refuse it, None)."""
    rec = ledger.find(data, ref)
    why = _refusal(rec, ref, tool_input, tool_use_id, data)
    if why:
        return why, None
    assert rec is not None  # _refusal refuses a spawn without a record
    rec.update(
        status="launched",
        launched_at=clock.iso(),
        tool_use_id=tool_use_id,
        agent_id=None,
        session_id=session_id if isinstance(session_id, str) else None,
        **ledger.launcher(),
    )
    return None, dict(rec)


@store.writes("spawns")
def _mod_call(data, ref: str, tool_use_id) -> None:
    """The mod's spawn starts under this Agent call: it runs now, in this Claude Code (so it is not
    handed out again even if the mod is interrupted before it says so), and the guard finds the
    ant's spawn by the call's id."""
    rec = ledger.find(data, ref)
    if rec is not None and rec["status"] == "dispatched" and isinstance(tool_use_id, str):
        rec.update(status="launched", launched_at=clock.iso(), tool_use_id=tool_use_id, agent_id=None, **ledger.launcher())


def _stray(tool_input: dict) -> str | None:
    """A call of one of the colony's castes that names no brief but a handed-out spawn's id as
    its description's first word: the Queen rewrote the prompt. Refused with the prompt to send."""
    kind = tool_input.get("subagent_type")
    words = str(tool_input.get("description") or "").split()
    if not isinstance(kind, str) or not kind.startswith("ant:") or not words:
        return None
    data = store.read("spawns")
    for rec in reversed(data["spawns"]):
        if rec.get("local") == words[0] and rec["status"] == "dispatched" and ledger.live(data, rec["scope"]):
            return (
                f"{rec['local']} is a spawn Aether handed out: send it with exactly the prompt Aether gave — "
                f'{ledger.prompt_for(rec["ref"], rec["local"])!r} — and subagent_type "{rec["subagent_type"]}"; '
                f"the prompt must name its brief."
            )
    return None


def _not_holder(ref: str) -> str | None:
    """Why this session may not launch spawn `ref`: another live session holds the colony's build
    (a free claim, or one whose holder is gone, is this session's now)."""
    data = store.read("spawns")
    rec = ledger.find(data, ref)
    if rec is None or rec["status"] != "dispatched" or not ledger.live(data, rec["scope"]):
        return None  # nothing this call could start: the launch's own refusal says why
    held = claim.take(claim.caller(), claim.slash_of(ledger.run_of(data, rec["scope"])))
    if held is None:
        return None
    return (
        f"{rec['local']} is not this session's to send: another session is building this colony — "
        f"{claim.describe(held)}. Don't send it; this session started nothing. Wait for that build to end "
        f"(`aether watch` shows it), then run the command again."
    )


def _deny(reason: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}}


def pre_hook(payload: dict) -> dict | None:
    """PreToolUse on Agent: the handed-out call becomes the brief; any other use of a spawn is refused."""
    tool_input = raw if isinstance(raw := payload.get("tool_input"), dict) else {}
    prompt = text if isinstance(text := tool_input.get("prompt"), str) else ""
    ref = ledger.ref_in(prompt)
    if ref is None:
        why = _stray(tool_input)
        return _deny(why) if why else None
    kind = tool_input.get("subagent_type")
    if not (isinstance(kind, str) and kind.startswith("ant:")):
        rec = ledger.find(store.read("spawns"), ref)
        if rec is None or rec["status"] != "dispatched" or not ledger.live(store.read("spawns"), rec["scope"]):
            return None  # another agent reading a brief: not a spawn of ours
    why = _not_holder(ref)
    if why:
        return _deny(why)
    if (ledger.find(store.read("spawns"), ref) or {}).get("runtime") == "mod":
        _mod_call(ref, payload.get("tool_use_id"))
        return None  # the mod sends it, with its brief, and records its answer itself
    brief = ledger.read_brief(ref)
    if brief is None:
        return _deny(f"the brief of {ref} is missing: don't send it; `aether next` writes it again and hands the spawn out.")
    why, rec = launch(ref, tool_input, payload.get("tool_use_id"), payload.get("session_id"))
    if why:
        return _deny(why)
    assert rec is not None  # launch returns its record when it gives no reason
    updated = {
        **tool_input,
        "prompt": brief,
        "subagent_type": rec["subagent_type"],
        "description": rec["description"],
        "run_in_background": False,
    }
    updated.pop("model", None)
    if rec.get("model"):
        updated["model"] = rec["model"]
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": updated}}
