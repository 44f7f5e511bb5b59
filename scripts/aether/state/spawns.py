"""Spawns by reference (spawns.json and `.aether/spawns/`): every ant the helper hands the Queen.

A spawn has a ref `<scope>/<local>` (scope: one build or plan run; local: `w1`, `lead1`,
`watch1` …). Its brief is a file, `.aether/spawns/<scope>/<local>.md`; the Queen's Agent call
carries only a short prompt naming that file. Claude Code's PreToolUse hook on Agent swaps the
prompt for the brief (`launched`); its PostToolUse hook hands the answer, exactly as returned,
to the driver, which keeps it next to the brief (`<local>.answer.md`) with its usage, and records
it (`recorded`). Without the hooks the ant reads its brief itself and the Queen pipes the answer
to `aether record`. A run record holds what a build or plan run needs between steps (the Phase
Lead's refusals, the watcher, the finish, the lessons) so the run resumes from state.
"""

from __future__ import annotations

import os
import re

from aether.core import clock, containment, paths
from aether.core.exceptions import state_error
from aether.state import store

MAX_SPAWNS = 400  # spawn records kept (oldest dropped)
MAX_RUNS = 40  # run records kept
SPAWN_STATUSES = ("dispatched", "launched", "recorded")
REF = re.compile(r"\.aether/spawns/([A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,64})\.md")
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a scope or a local id: never `..`, `/` or a path


def _name(part) -> str:
    """A scope or local id fit to be a file name (spawns.json is a file a model can edit)."""
    if not isinstance(part, str) or not NAME.fullmatch(part):
        raise state_error("state_corrupt", f"spawns.json names a spawn {str(part)[:80]!r} that is no plain "
                                           f"name; repair or remove .aether/data/spawns.json")
    return part


def folder(scope: str) -> str:
    return os.path.join(paths.aether_dir(), "spawns", _name(scope))


def _file(ref: str, suffix: str) -> str:
    scope, _, local = ref.partition("/")
    return os.path.join(folder(scope), f"{_name(local)}{suffix}")


def brief_rel(scope: str, local: str) -> str:
    return f".aether/spawns/{scope}/{local}.md"


def answer_path(ref: str) -> str:
    return _file(ref, ".answer.md")


def answer_rel(ref: str) -> str:
    scope, local = ref.split("/", 1)
    return f".aether/spawns/{scope}/{local}.answer.md"


def report_rel(ref: str) -> str:
    scope, local = ref.split("/", 1)
    return f".aether/spawns/{scope}/{local}.report.md"


def ref_in(prompt: str) -> str | None:
    """The spawn a short prompt names (its brief's path), or None."""
    found = REF.search(prompt or "")
    return found.group(1) if found else None


def prompt_for(ref: str, local: str) -> str:
    """The short prompt the Queen sends: it names the brief, so an ant without the hook reads it."""
    scope, _ = ref.split("/", 1)
    return f"You are {local}. Your brief is {brief_rel(scope, local)} - read it first and follow it."


# ---------------------------------------------------------------- records (pure, on loaded data)


def find(data: dict, ref: str) -> dict | None:
    return next((s for s in data["spawns"] if s.get("ref") == ref), None)


def of_scope(data: dict, scope: str) -> list:
    return [s for s in data["spawns"] if s.get("scope") == scope]


def add(data: dict, scope: str, local: str, kind: str, subagent_type: str, description: str,
        action: str, **extra) -> dict:
    """A new dispatched spawn (an existing ref is returned as it is: dispatching twice is once)."""
    ref = f"{scope}/{local}"
    found = find(data, ref)
    if found:
        return found
    record = {"ref": ref, "scope": scope, "local": local, "kind": kind, "subagent_type": subagent_type,
              "description": description, "action": action, "status": "dispatched",
              "dispatched_at": clock.iso(), "launched_at": None, "recorded_at": None, "usage": None,
              "outcome": None, **extra}
    data["spawns"].append(record)
    del data["spawns"][:-MAX_SPAWNS]
    return record


def run_of(data: dict, scope: str) -> dict | None:
    return next((r for r in data["runs"] if r.get("scope") == scope), None)


def current_run(data: dict, command: str | None = None) -> dict | None:
    """The newest run (of a command), finished or not."""
    runs = [r for r in data["runs"] if command is None or r.get("command") == command]
    return runs[-1] if runs else None


def active_autopilot(data: dict) -> dict | None:
    """The newest autopilot run (`command: run`) that has not ended — running or stopped — or None."""
    run = current_run(data, "run")
    return run if run is not None and not run.get("done") else None


def new_run(data: dict, command: str, **fields) -> dict:
    scope = f"{command[:1]}{fields.get('phase') or ''}-{clock.new_id('run').rsplit('_', 1)[-1][-6:]}"
    run = {"scope": scope, "command": command, "started_at": clock.iso(), "done": False, **fields}
    data["runs"].append(run)
    del data["runs"][:-MAX_RUNS]
    return run


def usage_of(response: dict) -> dict:
    """Tokens, duration and tool uses from Claude Code's Agent result (the fields it has)."""
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    out = {"total_tokens": response.get("totalTokens"), "duration_ms": response.get("totalDurationMs"),
           "tool_uses": response.get("totalToolUseCount"),
           "input_tokens": usage.get("input_tokens"), "output_tokens": usage.get("output_tokens"),
           "model": response.get("resolvedModel")}
    return {k: v for k, v in out.items() if v is not None and not isinstance(v, bool)}


# ---------------------------------------------------------------- files


def _write(path: str, text: str) -> None:
    try:
        containment.make_dirs(os.path.dirname(path))
        store.write_text_atomic(path, text)
    except OSError as exc:  # e.g. a directory where the file goes
        raise state_error("state_unwritable", f"cannot write {path}: {exc.strerror or exc}", file=path) from None


def _read(path: str) -> str | None:
    """A brief or answer of ours: never through a symbolic link, never from outside the project."""
    if not containment.is_safe_read(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def write_text(scope: str, name: str, text: str) -> str:
    """A text the Queen reads as it is (one too long for a hook's context): its relative path."""
    _write(os.path.join(folder(scope), f"{_name(name)}.md"), text)
    return f".aether/spawns/{scope}/{name}.md"


def write_brief(scope: str, local: str, text: str) -> str:
    _write(_file(f"{scope}/{local}", ".md"), text)
    return brief_rel(scope, local)


def read_brief(ref: str) -> str | None:
    return _read(_file(ref, ".md"))


def keep_answer(ref: str, text: str) -> None:
    _write(answer_path(ref), text)


def read_answer(ref: str) -> str | None:
    return _read(answer_path(ref))


def lock():
    """The driver's lock: one step of a run at a time (hooks of parallel ants queue on it)."""
    return store.locked([os.path.join(paths.data_dir(), "drive")])
