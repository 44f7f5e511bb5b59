"""What a mod ant is granted: an ant the mod sent (outside any command's turn) gets what the
command's `allowed-tools` give the Queen's ants, after the other rules."""

from __future__ import annotations

import os
import re

from .state import SPAWN_BRIEF, Unreadable, _first_message, _inside, _list, _project, _read, _spawned_by, _state
from .tables import GRANT_READ_ONLY

HOOKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# patterns, compiled on first use (re's cache): only a mod ant's call needs them
ALLOWED_TOOLS = r"(?m)^allowed-tools:(.*)$"
NAME = r"[a-z][a-z-]{0,40}"  # a command's name


def _command_grant(command: str) -> list:
    """The `allowed-tools` of the plugin's /ant:<command> (what the Queen's ants get in its turn)."""
    path = os.path.join(HOOKS, "..", ".claude", "commands", "ant", f"{command}.md")
    try:
        head = _read(path, 8192)
    except OSError:
        return []
    found = re.search(ALLOWED_TOOLS, head)
    return [t.strip() for t in found.group(1).split(",") if t.strip()] if found else []


def mod_grant(tool: str, event: dict, script=None) -> dict | None:
    """An ant the mod sent (not an Agent call in the Queen's turn) gets what the command's
    `allowed-tools` give the Queen's ants: the tools it names, and Bash whose every command
    starts with one of its `Bash(<prefix>:*)` (never `aether`). Anything else: no decision."""
    try:
        spawns = _state(_project(), "spawns.json") or {}
        records = _list(spawns, "spawns", "spawns.json")
        runs = _list(spawns, "runs", "spawns.json")
    except Unreadable:
        return None
    # the ant's spawn: by its agent id (the mod's record), the Agent call that started it, or its brief
    agent, call = event.get("agent_id"), _spawned_by(event)
    rec = next((s for s in records if s.get("runtime") == "mod" and agent and s.get("agent_id") == agent), None)
    rec = rec or next((s for s in records if s.get("runtime") == "mod" and call and s.get("tool_use_id") == call), None)
    if rec is None and (found := SPAWN_BRIEF.search(_first_message(event))):
        rec = next((s for s in records if s.get("ref") == found.group(1)), None)
    run = next((r for r in runs if rec is not None and r.get("scope") == rec.get("scope")), None)
    if rec is None or run is None or rec.get("runtime") != "mod" or not re.fullmatch(NAME, str(run.get("command"))):
        return None
    grant = _command_grant(str(run["command"]))
    why = f"Aether: the grant of /ant:{run['command']} to its ants"
    project = os.path.realpath(_project())
    if tool != "Bash":  # a file tool, on a file inside the project only (Claude Code asks about the rest)
        raw = event.get("tool_input")
        tool_input = raw if isinstance(raw, dict) else {}
        path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
        within = bool(path) and _inside(os.path.realpath(os.path.join(project, os.path.expanduser(path))), [project])
        return {"permissionDecision": "allow", "permissionDecisionReason": why} if tool in grant and within else None
    prefixes = [g[len("Bash(") : -len(":*)")].split() for g in grant if g.startswith("Bash(") and g.endswith(":*)")]
    prefixes = [p for p in prefixes if p and p[0] != "aether"]
    commands = script.commands if script is not None else []
    if not commands or script.errors or script.background or script.out_subst:
        return None

    def inside(word: str) -> bool:
        return _inside(os.path.realpath(os.path.join(project, os.path.expanduser(word))), [project])

    for cmd in commands:
        words = cmd.texts()
        if cmd.assigns or not words or not all(w.static for w in cmd.words):
            return None
        reads = [r for r in cmd.redirects if r.op in ("<", "<&", "<>")]  # from a file (not a here-document)
        if any(r.writes for r in cmd.redirects) or any(r.target is None or not r.target.static or not inside(r.target.text) for r in reads):
            return None  # a write, or a read of a file outside the project
        if words[0] == "cd" and len(words) == 2 and inside(words[1]):
            continue  # as Claude Code lets a command's grant `cd` inside the project
        if any(words[: len(p)] == p for p in prefixes):
            continue  # the command's own grant (`Bash(python3:*)`): any arguments, as in its turn
        if words[0] not in GRANT_READ_ONLY:
            return None
        paths = [w for w in words[1:] if not w.startswith("-")][1 if words[0] == "grep" else 0 :]  # grep's first is its pattern
        if not all(inside(w) for w in paths):
            return None  # reading outside the project: Claude Code asks
    return {"permissionDecision": "allow", "permissionDecisionReason": why}
