"""`aether next`, `aether record` and Claude Code's hooks on Agent: the helper drives, the Queen
spawns and judges (docs/decisions/the-helper-drives.md, shapes in docs/contracts.md).

`next_action` answers the one next thing the Queen does in the current run. `record` takes an
ant's answer — from the PostToolUse hook, or piped by the Queen when the hooks are off — and
hands it to the run's protocol; after the last answer of its spawn action it answers the next
action too. One lock serialises the driver, so hooks of ants that finish together record one
after the other.
"""

from __future__ import annotations

import json
import re

from aether.colony import build_drive, colonize_drive, dispatch, plan_drive, run_drive
from aether.core.exceptions import AetherError, input_error, state_error
from aether.state import spawns as ledger
from aether.state import store

action_line = dispatch.action_line
# Claude Code 2.1.328 keeps hook context longer than this in a file of its own and shows the
# model a 2 KB preview (probed: 10,000 characters inline, 10,010 persisted).
HOOK_CONTEXT_LIMIT = 10_000
HARNESS_NOTE = re.compile(r"\s*<tools-used-before-summary>[^<]*</tools-used-before-summary>\s*")  # Claude Code's, not the ant's


PROTOCOLS = {"build": build_drive, "plan": plan_drive, "colonize": colonize_drive, "run": run_drive}


def advance_after(run: dict) -> dict:
    """The next action after a step of `run`: the autopilot run's, when one drives it."""
    parent = run.get("parent")
    if parent:
        owner = ledger.run_of(store.read("spawns"), parent)
        if owner is not None and (not owner.get("done") or run.get("done")):  # an ended run: how it ended
            return run_drive.advance(owner)
    return PROTOCOLS[run["command"]].advance(run)


def next_action(phase: int | None = None, approve: bool = False, resume: bool = False, plan: bool = False,
                guidance: str | None = None, force: bool = False, colonize: bool = False, accept: bool = False) -> dict:
    """aether next: the one next thing the Queen does — in the build of `phase`, in the plan run
    (`plan`), or, given neither, in the newest run that is not done (else: how the newest ended)."""
    with ledger.lock():
        if phase is not None or plan or colonize:  # the user took a step by hand: the autopilot run ends
            run_drive.end_active("superseded")
        if colonize:
            return colonize_drive.advance(colonize_drive.colonize_run())
        if plan:
            return plan_drive.advance(plan_drive.plan_run(guidance, force, accept))
        if phase is None:  # the newest run: where it stands, or how it ended
            runs = store.read("spawns")["runs"]
            run = next((r for r in reversed(runs) if not r.get("done")), None) or (runs[-1] if runs else None)
            if run is not None and (run["command"] in ("plan", "colonize", "run") or run.get("parent")):
                return advance_after(run)
        run = build_drive.build_run(phase, resume)
        if run.get("parent"):  # /ant:build N takes the build over from the autopilot run
            run_drive.detach(run)
        return build_drive.advance(run, approve)


def answer(phase: int, choice: str, text: str) -> dict:
    with ledger.lock():
        run = build_drive.build_run(phase)
        out = build_drive.answer_loop(run, choice, text)  # checked first: a refused answer ends nothing
        run_drive.end_active("superseded")
        if run.get("parent"):
            run_drive.detach(run)
        return out or build_drive.advance(run)


def _resolve(data: dict, spawn_id: str) -> dict:
    if "/" in spawn_id:
        found = ledger.find(data, spawn_id)
    else:
        found = next((s for s in reversed(data["spawns"]) if s.get("local") == spawn_id), None)
    if found is None:
        raise input_error("unknown_spawn", f"no spawn {spawn_id!r} was handed out: `aether next` lists the spawns to run")
    return found


def record(spawn_id: str, text: str, usage: dict | None = None, via: str = "queen") -> dict:
    """aether record: an ant's answer (or the phase's lessons), recorded as its step requires."""
    if spawn_id == "lessons":
        with ledger.lock():
            out = build_drive.record_lessons(text)
            out["next"] = advance_after(out.pop("run"))
            return out
    if not text.strip():  # no answer: the spawn stays pending (`aether next` hands it out again)
        raise input_error("empty_answer", f"the answer of {spawn_id} is empty: pipe the ant's whole answer, or run "
                                          f"`aether next` to hand the spawn out again")
    with ledger.lock():
        data = store.read("spawns")
        found = _resolve(data, spawn_id)
        run = ledger.run_of(data, found["scope"])
        if found["status"] == "recorded":
            return {"id": found["local"], "already_recorded": True, "line": found.get("outcome"), "next": None}
        if run is None or run.get("command") not in PROTOCOLS:  # trimmed, or edited by hand
            raise state_error("state_corrupt", f"spawns.json holds no run {found['scope']!r} for {found['ref']!r}; "
                                               f"`aether next --build <phase>` (or --plan, --colonize) starts again")
        ledger.keep_answer(found["ref"], text)
        protocol = PROTOCOLS[run["command"]]
        line = protocol.apply(run, found, text)
        if not line.startswith(found["local"] + " "):  # every line names its spawn (the fallback's id)
            line = f"{found['local']} {line}"
        waiting = dispatch.mark_recorded(found["ref"], line, via, usage)
        result = {"id": found["local"], "already_recorded": False, "line": line, "waiting": waiting}
        if not waiting:
            run = ledger.run_of(store.read("spawns"), found["scope"])
            try:
                result["next"] = advance_after(run)
            except AetherError as exc:  # recorded all the same: what comes next waits for the fix
                result["next"] = None
                result["next_error"] = {"code": exc.code, "error": exc.message}
        return result


# ---------------------------------------------------------------- Claude Code's hooks on Agent


def _answer_of(response) -> tuple:
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
    content = response.get("content")
    if isinstance(content, list):
        # Claude Code puts its own notes around the ant's report (`<tools-used-before-summary>…`)
        # and counts them: harnessNoteCount blocks before, harnessTailCount after.
        head, tail = response.get("harnessNoteCount"), response.get("harnessTailCount", 0)
        if isinstance(head, int) and isinstance(tail, int) and min(head, tail) >= 0 and head + tail < len(content):
            content = content[head:len(content) - tail]
        blocks = [b["text"] for b in content
                  if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
        text = "\n".join(b for b in blocks if not HARNESS_NOTE.fullmatch(b))
    else:
        text = content if isinstance(content, str) else None
    return text, ledger.usage_of(response)


def _fitted(action: dict, used: int) -> str:
    """The action's line, or — when it would pass Claude Code's limit for hook context — a line
    that names a file holding its text (the project's own, so the Queen reads it as it is)."""
    line = action_line(action)
    if used + len(line) <= HOOK_CONTEXT_LIMIT:
        return line
    name = ledger.write_text(action.get("run") or "texts", f"{action['action']}-{action.get('why') or 'text'}",
                             action.get("text") or "")
    return (f"Aether next: {action['action']} — its text is long: read {name} and show it to the user as it is"
            + (f" (it ends with the command that continues: {action['command']})." if action.get("command") else "."))


def post_hook(payload: dict) -> dict | None:
    """PostToolUse on Agent: the answer as Claude Code returned it is recorded; the Queen gets one
    line per spawn and, after the last one of its action, the next action."""
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    ref = ledger.ref_in(tool_input.get("prompt") if isinstance(tool_input.get("prompt"), str) else "")
    if ref is None:
        return None
    text, usage = _answer_of(payload.get("tool_response"))
    local = ref.split("/", 1)[1]
    if not text:
        lines = [f"Aether: {local} returned no answer; it stays pending — `aether next` hands it out again."]
    else:
        try:
            out = record(ref, text, usage, via="hook")
            lines = [f"Aether: {local} was recorded before" if out["already_recorded"] else f"Aether recorded {out['line']}"]
            if out.get("waiting"):
                lines.append(f"(waiting for {', '.join(out['waiting'])})")
            if out.get("next"):
                lines.append(_fitted(out["next"], sum(len(line) + 1 for line in lines)))
            elif out.get("next_error"):
                lines.append(f"Aether next: stop — show the user this text:\nThe answer is recorded, but the "
                             f"next step failed: {out['next_error']['error']} — after fixing that, "
                             f"`aether next` goes on.")
        except AetherError as exc:
            lines = [f"Aether could not record {local}: {exc.message} — pipe the answer: "
                     f"aether record {local} - <<'EOF'"]
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "\n".join(lines)}}

