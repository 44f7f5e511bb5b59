"""Spawns by reference (spawns.json and `.aether/spawns/`): every ant the helper hands the Queen.

A spawn has a ref `<scope>/<local>` (scope: one build or plan run; local: `w1`, `lead1`,
`watch1` …). Its brief is a file, `.aether/spawns/<scope>/<local>.md`; the Queen's Agent call
carries only a short prompt naming that file. A spawn's status:

- `dispatched`: handed to the Queen, not sent yet (or sent, and back without an answer);
- `launched`: Claude Code's PreToolUse hook on Agent swapped the prompt for the brief and the
  ant runs, its Agent call waiting for it;
- `background`: the ant runs and Claude Code sent it to the background (its answer comes back
  after the call: colony/handback.py);
- `returned`: the ant stopped and its answer is kept, not recorded yet (the Agent result that
  records it is still to come);
- `recorded`: its answer is kept next to the brief (`<local>.answer.md`) and applied by its run's
  protocol, exactly once.

A spawn is *in flight* while launched or in the background and the Claude Code process that
launched it lives: it is neither handed out nor sent again then. Without the hooks the ant reads
its brief itself and the Queen pipes the answer to `aether record`. A run record holds what a
build or plan run needs between steps (the Phase Lead's refusals, the watcher, the finish, the
lessons) so the run resumes from state; a run that is `done` (finished, aborted, or superseded
by a newer run) takes no answer and hands out nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time

from aether.core import clock, containment, paths
from aether.core.exceptions import AetherError, state_error
from aether.state import atomic_files, schemas, store

MAX_SPAWNS = 400  # spawn records kept (oldest dropped): a bound the archive keeps from being reached
MAX_RUNS = 40  # run records kept (likewise)
HOT_RUNS = 6  # finished runs kept in spawns.json with their spawns; older ones go to the archive
ARCHIVE = "spawns-archive.jsonl"  # <data>/: one line per run moved out, {"run", "spawns"}
MAX_ARCHIVE_BYTES = 2 * 1024 * 1024  # past it the archive starts again, the old one kept as `.1`
MAX_REPORTED = 200  # archived runs whose archivist's report keeps its folder (spawns.json `reported`): the newest
SPAWN_STATUSES = schemas.SPAWN_RECORD_STATUSES
IN_FLIGHT = ("launched", "background")
LAUNCH_GRACE_SECONDS = 120  # a launched ant that has not started by then never will (its call was refused)
MAX_USAGE = 10**12  # tokens (or ms, or tool uses) one ant may report; above it the figure is no figure
MAX_MODEL_NAME = 200
REF = re.compile(r"\.aether/spawns/([A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,64})\.md")
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a scope or a local id: never `..`, `/` or a path


def _name(part) -> str:
    """A scope or local id fit to be a file name (spawns.json is a file a model can edit)."""
    if not isinstance(part, str) or not NAME.fullmatch(part):
        raise state_error(
            "state_corrupt",
            f"spawns.json names a spawn {str(part)[:80]!r} that is no plain name; repair or remove .aether/data/spawns.json",
        )
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


def find_agent(data: dict, agent_id: str | None = None, tool_use_id: str | None = None) -> dict | None:
    """The spawn Claude Code ran as agent `agent_id`, or launched by Agent call `tool_use_id`."""
    for s in reversed(data["spawns"]):
        if (agent_id and s.get("agent_id") == agent_id) or (tool_use_id and s.get("tool_use_id") == tool_use_id):
            return s
    return None


def of_scope(data: dict, scope: str) -> list:
    return [s for s in data["spawns"] if s.get("scope") == scope]


def add(data: dict, scope: str, local: str, kind: str, subagent_type: str, description: str, action: str, **extra) -> dict:
    """A new dispatched spawn (an existing ref is returned as it is: dispatching twice is once)."""
    ref = f"{scope}/{local}"
    found = find(data, ref)
    if found:
        return found
    record = {
        "ref": ref,
        "scope": scope,
        "local": local,
        "kind": kind,
        "subagent_type": subagent_type,
        "description": description,
        "action": action,
        "status": "dispatched",
        "dispatched_at": clock.iso(),
        "launched_at": None,
        "recorded_at": None,
        "usage": None,
        "outcome": None,
        **extra,
    }
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


def new_scope(command: str, phase: int | None = None) -> str:
    """A run's scope (`b1-ab12cd`): the command's letter, its phase, random bits."""
    return f"{command[:1]}{phase or ''}-{clock.new_id('run').rsplit('_', 1)[-1][-6:]}"


def new_run(data: dict, command: str, scope: str | None = None, **fields) -> dict:
    """A new run record (`scope` made beforehand when a field must name it: a build's isolation)."""
    scope = scope or new_scope(command, fields.get("phase"))
    run = {"scope": scope, "command": command, "started_at": clock.iso(), "done": False, **fields}
    data["runs"].append(run)
    cool(data)
    del data["runs"][:-MAX_RUNS]
    return run


def cool(data: dict) -> list:
    """Keep in spawns.json what the runs under way need (every run not done, the newest HOT_RUNS
    done ones, and every run with an ant whose answer may still come: launched, in the background,
    or returned and not recorded), so it stays the same size however long the colony grows: older
    runs and their spawns are appended to the archive and removed. The scopes moved.
    (Written before the hot file is: a crash between the two leaves a run in both, which the
    archive's readers take once.)"""
    done = [r for r in data["runs"] if r.get("done")]
    waiting = {s.get("scope") for s in data["spawns"] if s.get("status") in (*IN_FLIGHT, "returned")}  # an answer may still come
    old = {r["scope"] for r in done[: max(0, len(done) - HOT_RUNS)]} - waiting
    if not old:
        return []
    moving = [s for s in data["spawns"] if s.get("scope") in old]
    lines = [{"run": r, "spawns": [s for s in moving if s.get("scope") == r["scope"]]} for r in data["runs"] if r["scope"] in old]
    try:
        _archive(lines)
    except (OSError, AetherError):
        return []  # the archive cannot take them now: they stay in the hot file (MAX_RUNS still bounds it)
    reported = data["reported"] if isinstance(data.get("reported"), list) else _reported_in_archive()
    reported += [line["run"]["scope"] for line in lines if line["run"].get("report") and line["run"]["scope"] not in reported]
    data["reported"] = reported[-MAX_REPORTED:]
    data["runs"][:] = [r for r in data["runs"] if r["scope"] not in old]
    data["spawns"][:] = [s for s in data["spawns"] if s.get("scope") not in old]
    return sorted(old)


def archive_path() -> str:
    return os.path.join(paths.data_dir(), ARCHIVE)


def _archive(lines: list) -> None:
    path = archive_path()
    try:
        if os.path.getsize(path) > MAX_ARCHIVE_BYTES:
            os.replace(path, path + ".1")
    except OSError:
        pass  # none yet
    atomic_files.append_jsonl(path, lines)


def archived() -> list:
    """The runs moved out of spawns.json, oldest first: [{"run", "spawns"}] (a run a crash left in
    both files counts once: its newest line)."""
    path = archive_path()
    lines = [
        line
        for p in (path + ".1", path)
        for line in atomic_files.read_jsonl(p)
        if isinstance(line, dict) and isinstance(line.get("run"), dict)
    ]
    newest = {line["run"].get("scope"): line for line in lines}
    return [line for line in lines if newest.get(line["run"].get("scope")) is line]


def _reported_in_archive() -> list:
    """The scopes of archived runs whose archivist's report is pointed to, read from the archive
    (once, for a spawns.json that does not list them yet)."""
    return [line["run"]["scope"] for line in archived() if line["run"].get("report") and isinstance(line["run"].get("scope"), str)]


def prune_folders(data: dict) -> int:
    """Remove the brief folders (`.aether/spawns/<scope>/`: briefs, answers, builders' reports) of
    every run no longer in spawns.json — like the evidence logs, only the newest runs keep theirs;
    the archive keeps each spawn's record and outcome. A run whose archivist's report the person is
    pointed to (`report`: events, the autopilot's summary) keeps its folder: spawns.json lists the
    newest MAX_REPORTED such runs as they are archived (`reported`), so the archive is not read.
    The number removed."""
    import shutil  # noqa: PLC0415 — start-up: shutil only where folders are removed

    keep = {r.get("scope") for r in data["runs"]} | {s.get("scope") for s in data["spawns"]} | {"texts"}
    # an archivist's report is pointed to: spawns.json lists those runs as they are archived
    keep |= set(data["reported"] if isinstance(data.get("reported"), list) else _reported_in_archive())
    root = os.path.join(paths.aether_dir(), "spawns")
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    removed = 0
    for name in names:
        path = os.path.join(root, name)
        if name in keep or not NAME.fullmatch(name) or os.path.islink(path) or not os.path.isdir(path):
            continue
        try:
            shutil.rmtree(containment.check_write(path))
            removed += 1
        except (OSError, AetherError):
            pass
    return removed


def _amount(value) -> int | None:
    """A count from Claude Code's payload: a whole number from 0 to MAX_USAGE, else none."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE:
        return value
    return None


def usage(total_tokens=None, duration_ms=None, tool_uses=None, input_tokens=None, output_tokens=None, model=None) -> dict:
    """A usage record with only the figures that are figures (bounded whole numbers, a model name)."""
    out = {
        "total_tokens": _amount(total_tokens),
        "duration_ms": _amount(duration_ms),
        "tool_uses": _amount(tool_uses),
        "input_tokens": _amount(input_tokens),
        "output_tokens": _amount(output_tokens),
        "model": model if isinstance(model, str) and 0 < len(model) <= MAX_MODEL_NAME and model.isprintable() else None,
    }
    return {k: v for k, v in out.items() if v is not None}


def usage_of(response: dict) -> dict:
    """Tokens, duration and tool uses from Claude Code's Agent result (the fields it has)."""
    parts = raw if isinstance(raw := response.get("usage"), dict) else {}
    return usage(
        response.get("totalTokens"),
        response.get("totalDurationMs"),
        response.get("totalToolUseCount"),
        parts.get("input_tokens"),
        parts.get("output_tokens"),
        response.get("resolvedModel"),
    )


# ---------------------------------------------------------------- in flight


def _process_start(pid: int) -> str | None:
    """When process `pid` started (Linux: /proc), so a pid reused by another process is told apart."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError, ValueError):
        return None


def launcher() -> dict:
    """The Claude Code process that runs this hook or command (its pid and start), when there is one."""
    raw = os.environ.get("CLAUDE_PID") or ""
    pid = int(raw) if raw.isdigit() and 0 < int(raw) < 2**31 else None
    return {"claude_pid": pid, "claude_started": _process_start(pid) if pid else None}


def alive(pid, started) -> bool:
    """Does process `pid` run, the one that started at `started` (clock ticks; None: any)?"""
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < 2**31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: there
        pass
    return started is None or _process_start(pid) in (None, started)


def _started(rec: dict) -> bool:
    """Did the ant start (Claude Code's SubagentStart, or a sign of it), or may it still?"""
    if rec.get("started_at") or rec.get("agent_id") or rec.get("status") == "background":
        return True
    try:
        return clock.now() - clock.parse_iso(rec.get("launched_at") or "") < LAUNCH_GRACE_SECONDS
    except (AetherError, TypeError, ValueError):
        return False


def in_flight(rec: dict) -> bool:
    """Does the spawn's ant run now: launched or in the background, in a Claude Code process that
    lives, and started (or launched moments ago: a call refused after the PreToolUse hook never starts)?"""
    return rec.get("status") in IN_FLIGHT and alive(rec.get("claude_pid"), rec.get("claude_started")) and _started(rec)


def live(data: dict, scope: str) -> bool:
    """Does the run go on (not finished, aborted or superseded)?"""
    run = run_of(data, scope)
    return run is not None and not run.get("done")


# ---------------------------------------------------------------- files


def _write(path: str, text: str) -> None:
    try:
        containment.make_dirs(os.path.dirname(path))
        atomic_files.write_text_atomic(path, text)
    except OSError as exc:  # e.g. a directory where the file goes
        raise state_error("state_unwritable", f"cannot write {path}: {exc.strerror or exc}", file=path) from None


def _read(path: str) -> str | None:
    """A brief or answer of ours: never through a symbolic link, never from outside the project."""
    if not containment.is_safe_read(path):
        return None
    try:
        return containment.read_bytes(path).decode("utf-8", "replace")
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


@contextlib.contextmanager
def lock():
    """The driver's lock: one step of a run at a time (hooks of parallel ants queue on it). The
    step writes each state file once, before the lock goes (`store.batch`), and its time is added
    to the run it worked on (`_count_time`)."""
    asked = time.perf_counter()
    with atomic_files.locked([os.path.join(paths.data_dir(), "drive")]), store.batch():
        started = time.perf_counter()
        before = _snapshot()
        try:
            yield
        finally:
            _count_time(before, started, asked)


_start_counted = False  # this process's start-up is counted once, with its first step that counts


def _start_up(asked: float) -> float:
    """Seconds from the start of a process started as the helper (`aether.startup.STARTED`) to its
    first counted step's asking for the lock, less what it slept (`clock.idle`); 0 after that."""
    global _start_counted  # noqa: PLW0603 — one start-up per process
    begun = getattr(sys.modules.get("aether.startup"), "STARTED", None)
    if _start_counted or not isinstance(begun, float):
        return 0.0
    _start_counted = True
    return max(0.0, asked - begun - clock.idled())


def _snapshot() -> dict | None:
    """The runs and spawns as a step found them (None when spawns.json cannot be read: the step says why)."""
    try:
        data = store.read("spawns")
    except AetherError:
        return None
    return {"runs": {r.get("scope"): r for r in data["runs"]}, "spawns": {s.get("ref"): s for s in data["spawns"]}}


def _count_time(before: dict | None, started: float, asked: float) -> None:
    """Add the step's time — from the driver's lock taken to its last change, and for a process's
    first counted step its start-up too — to the run it worked on (`helper_ms`, `helper_steps`): the newest
    run whose record, or a spawn of it, the step changed. Only a step that changed spawns.json
    counts (its write carries the time); counting never fails the step."""
    if before is None or not store.changed("spawns"):
        return
    ms = round((time.perf_counter() - started + _start_up(asked)) * 1000)

    def add(data: dict) -> None:
        touched = {s.get("scope") for s in data["spawns"] if before["spawns"].get(s.get("ref")) != s}
        worked = [r for r in data["runs"] if r.get("scope") in touched or before["runs"].get(r.get("scope")) != r]
        if worked:
            run = worked[-1]
            run["helper_ms"] = min(run.get("helper_ms", 0) + ms, schemas.MAX_COUNT)
            run["helper_steps"] = min(run.get("helper_steps", 0) + 1, schemas.MAX_COUNT)

    try:
        store.update("spawns", add)
    except AetherError:
        pass
