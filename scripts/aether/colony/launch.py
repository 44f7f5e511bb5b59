"""Claude Code's PreToolUse hook on Agent: a short prompt naming a dispatched brief becomes the
brief, and the spawn is marked launched. Its own module, below the protocols and the spend
bookkeeping, so the hook that runs before every ant loads as little as it can."""

from __future__ import annotations

from aether.core import clock
from aether.state import spawns as ledger
from aether.state import store


@store.writes("spawns")
def mark_launched(data, ref: str, tool_use_id: str | None) -> dict | None:
    """The PreToolUse hook handed the brief to Claude Code (the ant is about to run)."""
    rec = ledger.find(data, ref)
    if rec is None or rec["status"] == "recorded":
        return None
    rec.update(status="launched", launched_at=clock.iso(), tool_use_id=tool_use_id)
    return dict(rec)


def pre_hook(payload: dict) -> dict | None:
    """PreToolUse on Agent: a short prompt naming a dispatched brief becomes the brief."""
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    ref = ledger.ref_in(tool_input.get("prompt") if isinstance(tool_input.get("prompt"), str) else "")
    if ref is None or len(tool_input.get("prompt", "")) > 1000:  # a brief already, or not ours
        return None
    brief = ledger.read_brief(ref)
    if brief is None or mark_launched(ref, payload.get("tool_use_id")) is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                   "updatedInput": {**tool_input, "prompt": brief}}}
