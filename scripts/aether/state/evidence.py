"""What each ant ran and wrote, as Claude Code reported it (`.aether/data/evidence/`).

One log per ant, `<agent_id>.jsonl`: a header line naming its spawn (null when the hook that
opened it could not know it yet: the spawn is then the one Claude Code ran as that agent) and
who writes the log (`hooks`: the PostToolUse/PostToolUseFailure hook, `hooks/evidence.sh`; `mod`:
the plugin's mod, which hands its ants' calls in with its waits and their answers — a call both
report is kept once, by its id), then one line per tool call:

    {"at", "t", "tool": "Bash", "command", "cwd", "exit": 0 | N | null, "ms", "tail", "id"}
    {"at", "t", "tool": "Write" | "Edit" | …, "path", "ok", "ms", "id"}

(a call the mod kept also carries `hooks_ms`: the time its PreToolUse hooks took, the guard's
included.)
`exit` null: Claude Code did not say (refused, interrupted, sent to the background). The header
is written by the mod's launch, or by the hook at the ant's first call. Bounded: a tail of the
output, and a cap per ant — past it the oldest calls go (the newest decide a verdict), the log is
rewritten with half of it, and its header counts what went (`dropped`), which `aether evidence`
says; past the folder's cap (a build's ants together) each ant's log keeps a quarter as much. The
logs of older builds are pruned when a build starts. Writers of one log take turns (`flock`).
Lower layers only (core): the hook imports this module without the rest of the helper.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
import time

from aether.core import clock, containment, paths
from aether.core.exceptions import AetherError

FOLDER = "evidence"
SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
TAIL_CHARS = 1500  # of a call's output, its end (where a test run's summary and a traceback's error are)
MAX_COMMAND = 2000  # characters of a command kept
MAX_ANT_BYTES = 256 * 1024  # one ant's log; past it, its oldest calls go (rewritten with half of it)
MAX_TOTAL_BYTES = 24 * 1024 * 1024  # the folder (a build's ants together); past it, each log keeps a quarter
MAX_HOOKS_MS = 20 * 60 * 1000  # a PreToolUse hook's own budget: a longer time is not believed
FUTURE_SLACK = 5  # seconds: a call said to end later than now (clocks aside) is not believed
KEEP_SCOPES = 3  # builds and runs whose logs survive a new build's start
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
EXIT_LINE = re.compile(r"^Exit code (-?\d+)")


def folder() -> str:
    return os.path.join(paths.data_dir(), FOLDER)


def log_path(agent_id: str) -> str | None:
    """The ant's log, None for an id that could not name a file of ours."""
    if not isinstance(agent_id, str) or not SAFE_ID.match(agent_id):
        return None
    return os.path.join(folder(), f"{agent_id}.jsonl")


def _line(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "replace")


def open_log(agent_id: str, ref: str | None, by: str) -> None:
    """The ant of spawn `ref` (None: not known yet) runs as `agent_id`: its calls are kept from
    now (never raises: a log that cannot be opened leaves the checks unverified, not the ant
    stopped; an open log is kept as it is)."""
    path = log_path(agent_id)
    if path is None:
        return
    try:
        containment.make_dirs(folder())
        containment.check_write(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except (OSError, AetherError):
        return
    try:
        os.write(fd, _line({"spawn": ref, "agent_id": agent_id, "by": by, "at": clock.iso()}))
    finally:
        os.close(fd)


def _total_bytes() -> int:
    try:
        return sum(e.stat().st_size for e in os.scandir(folder()) if e.is_file(follow_symlinks=False))
    except OSError:
        return 0


KEPT_ID = re.compile(rb'"id":"([^"\\]{1,200})"')


def append(agent_id: str, records: list) -> int:
    """Keep these calls in the ant's log (opened before); the number kept. A call already kept
    (the same id: the mod and the hook both saw it) is not kept twice. Past the log's cap its
    oldest calls go, and its header counts them."""
    path = log_path(agent_id)
    if path is None or not records:
        return 0
    for _ in range(100):  # the log may be rewritten (a new file) between the open and the lock: again
        try:
            containment.check_write(path)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW)
        except (OSError, AetherError):
            return 0  # no log: not an ant of the colony's spawns
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return 0
            if os.stat(path, follow_symlinks=False).st_ino != info.st_ino:
                continue  # rewritten meanwhile: this one is gone
            return _append_locked(fd, path, info.st_size, records)
        except OSError:
            return 0
        finally:
            os.close(fd)
    return 0


def _append_locked(fd: int, path: str, size: int, records: list) -> int:
    cap = MAX_ANT_BYTES if _total_bytes() <= MAX_TOTAL_BYTES else MAX_ANT_BYTES // 4
    raw = os.pread(fd, size, 0)
    seen = {m.decode("utf-8", "replace") for m in KEPT_ID.findall(raw)}
    gone_before = _dropped_t(raw)  # a call that ended before the newest one dropped went with it
    lines = []
    for record in records:
        if record.get("id") in seen or _t(record) <= gone_before:
            continue
        if record.get("id") is not None:
            seen.add(record["id"])
        lines.append(_line(record))
    added = sum(len(line) for line in lines)
    if not lines:
        return 0
    if size + added <= cap:
        os.write(fd, b"".join(lines))
        return len(lines)
    return len(lines) if _rewrite(path, raw, lines, cap // 2) else 0


def _t(record: dict) -> float:
    t = record.get("t")
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else float("inf")


def _dropped_t(raw: bytes) -> float:
    """When the newest call the log dropped ended (-inf: none dropped). The same calls handed in
    again (a retried `mod wait`, an answer taken twice) are not taken for new ones."""
    try:
        header = json.loads(raw.split(b"\n", 1)[0])
    except (ValueError, RecursionError):
        return float("-inf")
    t = header.get("dropped_t") if isinstance(header, dict) else None
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else float("-inf")


def _rewrite(path: str, raw: bytes, added: list, budget: int) -> bool:
    """The log past its cap: its header, counting the calls that go and when the newest of them
    ended, then the newest calls that fit in `budget` (the newest one always), written beside it
    and renamed over it. False: no header of ours to keep (nothing written)."""
    old = raw.split(b"\n")
    try:
        header = json.loads(old[0])
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or "agent_id" not in header:
        return False
    calls = [line + b"\n" for line in old[1:] if line.strip()] + added
    kept: list = []
    size = 0
    for line in reversed(calls):
        if kept and size + len(line) > budget:
            break
        kept.append(line)
        size += len(line)
    gone = calls[: len(calls) - len(kept)]
    header["dropped"] = (_int(header.get("dropped")) or 0) + len(gone)
    ends = [t for line in gone if (t := _line_t(line)) is not None]
    if ends:
        header["dropped_t"] = max([*ends, *([header["dropped_t"]] if isinstance(header.get("dropped_t"), (int, float)) else [])])
    import tempfile  # noqa: PLC0415 - only a rewrite needs it (~4 ms every hook call would pay at start-up)

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=os.path.basename(path) + ".", suffix=".tmp")  # O_EXCL: never a FIFO
    try:
        os.write(fd, _line(header) + b"".join(reversed(kept)))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return True


def _line_t(line: bytes) -> float | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    t = value.get("t") if isinstance(value, dict) else None
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def dropped(refs, owners: dict) -> dict:
    """{ref: the number of its ants' oldest calls that went past the cap}, for those with any."""
    wanted = set(refs)
    out: dict = {}
    for head in headers():
        ref = _spawn_of(head, owners)
        count = _int(head.get("dropped")) or 0
        if ref in wanted and count:
            out[ref] = out.get(ref, 0) + count
    return out


def _text(value, limit: int) -> str:
    text = value if isinstance(value, str) else "" if value is None else str(value)
    return text if len(text) <= limit else "…" + text[-limit:]


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def call_record(tool: str, tool_input: dict, *, exit_code, output: str, ms, cwd, call_id) -> dict | None:
    """One call's essentials, or None for a tool whose calls are not evidence."""
    # `t`: when the call ended, by the real clock (order against file changes and merges: an
    # AETHER_NOW pinned for a replay does not pin it); `at`: the colony's clock, for people
    record: dict = {"at": clock.iso(), "t": round(time.time(), 3), "tool": tool}
    if tool == "Bash":
        record.update(
            command=_text(tool_input.get("command"), MAX_COMMAND),
            cwd=cwd if isinstance(cwd, str) else None,
            exit=_int(exit_code),
            tail=_text(output, TAIL_CHARS),
        )
    elif tool in FILE_TOOLS:
        where = tool_input.get("file_path") or tool_input.get("notebook_path")
        record.update(path=_text(where, MAX_COMMAND), ok=exit_code == 0)
    else:
        return None
    record.update(ms=_int(ms), id=call_id if isinstance(call_id, str) else None)
    return record


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def from_hook(payload: dict) -> dict | None:
    """A PostToolUse or PostToolUseFailure payload of an ant's call as its record."""
    tool = payload.get("tool_name")
    tool_input = _dict(payload.get("tool_input"))
    if payload.get("hook_event_name") == "PostToolUseFailure":
        error = _str(payload.get("error"))
        found = EXIT_LINE.match(error)
        exit_code = None if payload.get("is_interrupt") else int(found.group(1)) if found else 1
        output = error.split("\n", 1)[1] if found and "\n" in error else error
    else:
        response = _dict(payload.get("tool_response"))
        backgrounded = tool_input.get("run_in_background") or any(k.startswith("background") for k in response)
        exit_code = None if response.get("interrupted") or backgrounded else 0
        output = "\n".join(p for p in (response.get("stdout"), response.get("stderr")) if isinstance(p, str) and p)
    return call_record(
        str(tool),
        tool_input,
        exit_code=exit_code,
        output=output,
        ms=payload.get("duration_ms"),
        cwd=payload.get("cwd"),
        call_id=payload.get("tool_use_id"),
    )


def from_mod(call: dict) -> dict | None:
    """A call the mod saw (`tool.call`: {tool, input, isError, text, ms}) as its record."""
    tool_input = _dict(call.get("input"))
    text = _str(call.get("text"))
    exit_code: int | None = 0
    if call.get("refused") is True or tool_input.get("run_in_background"):  # never ran, or ran on past it
        exit_code = None
    elif call.get("isError") is True:
        found = EXIT_LINE.match(text)
        exit_code = int(found.group(1)) if found else 1
        text = text.split("\n", 1)[1] if found and "\n" in text else text
    record = call_record(
        str(call.get("tool")), tool_input, exit_code=exit_code, output=text, ms=call.get("ms"), cwd=None, call_id=call.get("id")
    )
    t = call.get("t")
    if record is not None and isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t < 1e11:
        record["t"] = round(float(t), 3)
    hooks = _int(call.get("hooks_ms"))
    if record is not None and hooks is not None and 0 <= hooks < MAX_HOOKS_MS:
        record["hooks_ms"] = hooks  # its PreToolUse hooks, as the mod measured them (the timeline adds them up)
    return record


def read(agent_id: str) -> tuple[dict | None, list]:
    """(header, calls) of one ant's log; torn or foreign lines are skipped."""
    path = log_path(agent_id)
    if path is None:
        return None, []
    try:
        raw = containment.read_bytes(containment.check_read(path), MAX_ANT_BYTES + 64 * 1024)
    except (OSError, AetherError):
        return None, []
    lines = []
    for line in raw.split(b"\n"):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            lines.append(value)
    if not lines or "agent_id" not in lines[0]:
        return None, []
    return lines[0], lines[1:]


def headers() -> list:
    """Every log's header, oldest first."""
    try:
        names = sorted(os.listdir(folder()))
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith(".jsonl"):
            continue
        path = os.path.join(folder(), name)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):  # a FIFO or a link is none of ours
                continue
            with open(path, "rb") as fh:  # the first line only
                head = json.loads(fh.readline(4096))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(head, dict) and isinstance(head.get("spawn"), (str, type(None))) and isinstance(head.get("agent_id"), str):
            found.append(head)
    return sorted(found, key=lambda h: str(h.get("at")))


def _spawn_of(head: dict, owners: dict) -> str | None:
    """The spawn a log is of: the one Claude Code ran as its agent (a log that names another
    spawn, or an agent no spawn ran as, is nobody's — an ant cannot write its own evidence)."""
    ref = owners.get(head["agent_id"])
    return ref if head["spawn"] in (None, ref) else None


def _calls_by_spawn(owners: dict, wanted) -> dict:
    """{ref: [calls of every ant that ran it, in order]} for the spawns `wanted(ref)` picks."""
    out: dict = {}
    now = time.time() + FUTURE_SLACK
    for head in headers():
        ref = _spawn_of(head, owners)
        if ref is not None and wanted(ref):
            calls = read(head["agent_id"])[1]
            out.setdefault(ref, []).extend(c for c in calls if not (isinstance(c.get("t"), (int, float)) and c["t"] > now))
    return out


def of_spawns(refs, owners: dict) -> dict:
    """{ref: [calls]} for these spawns. owners: {agent id: ref} of the agents Claude Code ran the
    spawns as (a log is found by its agent)."""
    wanted = set(refs)
    return _calls_by_spawn(owners, wanted.__contains__)


def of_scope(scope: str, owners: dict) -> dict:
    """{ref: [calls]} of every ant of one build or run."""
    return _calls_by_spawn(owners, lambda ref: ref.startswith(scope + "/"))


def prune(keep: list, owners: dict) -> int:
    """Remove the logs of every scope but these (a new build starts), and any file there that is
    no log of ours; the number removed."""
    mine = {f"{h['agent_id']}.jsonl": h for h in headers()}
    try:
        names = os.listdir(folder())
    except OSError:
        return 0
    removed = 0
    for name in names:
        head = mine.get(name)
        if head is not None and (_spawn_of(head, owners) or "").split("/", 1)[0] in keep:
            continue
        try:
            path = os.path.join(folder(), name)
            if not os.path.isdir(path) or os.path.islink(path):
                os.unlink(containment.check_write(path))
                removed += 1
        except (OSError, AetherError):
            pass
    return removed


def keep_hook_call(payload: dict) -> int:
    """The hook's one call of an ant (`ant:*`): its log opened if it is the ant's first, then kept."""
    agent = _str(payload.get("agent_id"))
    record = from_hook(payload)
    path = log_path(agent)
    if record is None or path is None:
        return 0
    if not os.path.exists(path):
        open_log(agent, None, "hooks")
    return append(agent, [record])
