"""Claude Code's PreToolUse hook on Agent: the Agent call the helper handed out becomes the ant's
brief, and nothing else does. Its own module, below the protocols and the spend bookkeeping, so
the hook that runs before every ant loads as little as it can.

The call must name a spawn of a run that goes on, not recorded and not running already, with
the subagent type it was handed out with; then its prompt becomes the brief, its model and
description the ones handed out, and it runs in the foreground (the wave's barrier where Claude
Code honours it). Any other call that names a brief is refused with a reason the Queen can act
on. A call of one of the colony's castes whose prompt names no brief (the Queen wrote her own)
runs the spawn its description names, or the one spawn of its caste handed out and not running;
with several it is refused with the exact calls to send; with none it runs as it is, and its
tokens are counted at its stop (docs/decisions/the-helper-drives.md, "When the Queen strays"). A spawn's call from a session
that does not hold the colony's build is refused (state/claim.py).
"""

from __future__ import annotations

import json

from aether.core import castes, clock
from aether.core.text import one_line
from aether.state import claim, store
from aether.state import spawns as ledger

COLONY_TYPES = tuple(f"ant:{caste}" for caste in castes.CASTES)  # the castes' agents (not Bug Bash's)
MOD = "mod"  # spawns the mod sends itself (colony/mod.py)


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


def _unnamed(tool_input: dict, tool_use_id: str | None) -> tuple:
    """A call of one of the colony's castes whose prompt names no brief: (the reason to refuse it,
    None), (None, the ref of the spawn it runs), or (None, None) to let it run as it is — nothing
    of its caste is handed out and waiting, so nothing goes unrecorded (its tokens still count,
    at its stop)."""
    kind = tool_input.get("subagent_type")
    if kind not in COLONY_TYPES:
        return None, None
    data = store.read("spawns")
    live = [r for r in reversed(data["spawns"]) if r.get("runtime") != MOD and ledger.live(data, r["scope"])]
    words = str(tool_input.get("description") or "").split()
    named = next((r for r in live if words and r.get("local") == words[0]), None)
    if named is not None:  # its description names the spawn: that one, or why not
        why = _refusal(named, named["ref"], tool_input, tool_use_id, data)
        return (why, None) if why else (None, named["ref"])
    free = [r for r in live if r["subagent_type"] == kind and _refusal(r, r["ref"], tool_input, tool_use_id, data) is None][::-1]
    if len(free) == 1:
        return None, free[0]["ref"]
    if not free:
        return None, None
    calls = [
        {"subagent_type": r["subagent_type"], "description": r["description"], "prompt": ledger.prompt_for(r["ref"], r["local"])}
        | ({"model": r["model"]} if r.get("model") else {})
        for r in free
    ]
    return (
        f"{len(free)} spawns of {kind} are handed out and not running ({', '.join(r['local'] for r in free)}) and this call "
        f"names no brief, so it cannot say which it is: send each with exactly the call Aether gave, "
        f"run_in_background false — {json.dumps(calls, ensure_ascii=False)}",
        None,
    )


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
    if ref is None:  # the Queen wrote the call herself: the spawn it runs, or why not
        why, ref = _unnamed(tool_input, payload.get("tool_use_id"))
        if why:
            return _deny(why)
        if ref is None:
            return None
    kind = tool_input.get("subagent_type")
    if not (isinstance(kind, str) and kind.startswith("ant:")):
        rec = ledger.find(store.read("spawns"), ref)
        if rec is None or rec["status"] != "dispatched" or not ledger.live(store.read("spawns"), rec["scope"]):
            return None  # another agent reading a brief: not a spawn of ours
    why = _not_holder(ref)
    if why:
        return _deny(why)
    if (ledger.find(store.read("spawns"), ref) or {}).get("runtime") == MOD:
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
