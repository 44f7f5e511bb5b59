"""How the guard reads files: the colony's state (`spawns.json`, `worktrees.json`) through
`_state` alone, Claude Code's record of the ant that calls (its subagent files: the Agent call
that started it, its brief), a plugin file through `_read`; and where the project is.

Not the helper's own reader (aether.state.store): importing it costs ~6 ms per call, and the
guard must run where the helper is not installed (docs/decisions/the-guard.md). This one takes
no lock (the helper replaces files whole), never waits on a FIFO, and names what it could not
read."""

from __future__ import annotations

import json
import os
import re


class Unreadable(Exception):
    """A state file the guard needs is there but cannot be read."""


def _read(path: str, limit: int) -> str:
    """A regular file's text (a FIFO or device is never waited on: OSError)."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, limit).decode("utf-8")
    finally:
        os.close(fd)


def _state(project: str, name: str):
    """A state file of the colony whose project is `project` (None when there is none): the one way
    the guard reads the colony's state."""
    data_dir = os.environ.get("AETHER_DATA_DIR") or os.path.join(project, ".aether", "data")
    path = os.path.join(data_dir, name)
    try:
        data = json.loads(_read(path, 64 << 20))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise Unreadable(f".aether/data/{name} ({type(exc).__name__})") from exc
    if not isinstance(data, dict):
        raise Unreadable(f".aether/data/{name} (not a JSON object)")
    return data


def _list(data: dict, key: str, name: str) -> list:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise Unreadable(f".aether/data/{name} (`{key}` is not a list)")
    return [v for v in value if isinstance(v, dict)]


def _project() -> str:
    return os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()


def _inside(path: str, roots: list) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
WORKING_COPY = r"Start EVERY Bash command with `cd (\S+) && `"  # compiled on first use: a builder without its spawn's record
SPAWN_BRIEF = re.compile(r"\[aether spawn \.aether/spawns/([A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,64})\.md\]")  # a brief's first line


def _subagent_file(event: dict, suffix: str) -> str | None:
    """Claude Code's file for this subagent beside the session's transcript
    (`<session>/subagents/agent-<id>.meta.json` holds the `toolUseId` of the Agent call)."""
    transcript, agent = event.get("transcript_path"), event.get("agent_id")
    if not isinstance(transcript, str) or not transcript.endswith(".jsonl") or not isinstance(agent, str) or not AGENT_ID.fullmatch(agent):
        return None
    return os.path.join(transcript[: -len(".jsonl")], "subagents", f"agent-{agent}{suffix}")


def _meta(event: dict, key: str) -> str | None:
    """A string of Claude Code's record of this subagent (`agent-<id>.meta.json`), or None."""
    path = _subagent_file(event, ".meta.json")
    try:
        meta = json.loads(_read(path or "", 65536))
    except (OSError, ValueError):
        return None
    value = meta.get(key) if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value else None


def _spawned_by(event: dict) -> str | None:
    """The tool_use_id of the Agent call that started this ant."""
    return _meta(event, "toolUseId")


def _agent_type(event: dict) -> str | None:
    """The subagent's type as Claude Code recorded it at its spawn."""
    return _meta(event, "agentType")


def _first_message(event: dict) -> str:
    """The ant's first message (its brief), from its transcript; "" when it cannot be read."""
    path = _subagent_file(event, ".jsonl")
    try:
        first = json.loads(_read(path or "", 4 << 20).split("\n", 1)[0])
    except (OSError, ValueError):
        return ""
    content = (first.get("message") or {}).get("content") if isinstance(first, dict) else None
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return content if isinstance(content, str) else ""


def _brief_copy(event: dict) -> str | None:
    """The working copy the ant's brief names (the first message of its transcript)."""
    found = re.search(WORKING_COPY, _first_message(event))
    return found.group(1) if found else None
