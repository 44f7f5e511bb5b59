"""Atomic writes, appends and locks on any file: the machinery under the store (`store.py`, which
adds schemas, backups and one write per call), and what plain files outside the state registry
use — reports, logs of one JSON record per line (`read_jsonl` / `append_jsonl`), the activity
log, project files a merge or a fix writes (`write_text_atomic` / `write_bytes_atomic`).

A lock is a `filelock.FileLock` on a sidecar `<file>.lock`: an `flock` the kernel releases if
the process dies. A replace is a complete, fsynced temp file in the same folder, `os.replace`,
then an fsync of the folder: readers see the old file or the new one, whole.
"""

from __future__ import annotations

import json
import os
import time

from aether.core import containment, inputs
from aether.core.exceptions import input_error, state_error

DEFAULT_LOCK_TIMEOUT = 10.0  # seconds; AETHER_LOCK_TIMEOUT overrides
LOCK_POLL = 0.005  # seconds between tries for a held lock (filelock's default, 0.05, idles writers)


def lock_timeout() -> float:
    raw = os.environ.get("AETHER_LOCK_TIMEOUT")
    if raw:
        try:
            value = float(raw)
            if value >= 0:
                return value
        except ValueError:
            pass
    return DEFAULT_LOCK_TIMEOUT


def take(path: str, deadline: float, timeout: float, *, wait: bool = True):
    """The lock of one file, waited for until `deadline` (or not at all: `wait=False` answers
    None when another process holds it)."""
    from filelock import FileLock, Timeout  # noqa: PLC0415 — start-up: filelock (~25 ms) only for writers

    try:
        containment.make_dirs(os.path.dirname(path))
        containment.check_write(path + ".lock")
        lock = FileLock(path + ".lock", poll_interval=LOCK_POLL, fallback_to_soft=False)
        lock.acquire(timeout=max(0.0, deadline - time.monotonic()) if wait else 0)
        return lock
    except Timeout:
        if not wait:
            return None
        raise state_error(
            "lock_timeout",
            f"timed out after {timeout:g}s waiting for the lock on {path}; another aether "
            f"process is writing it (raise AETHER_LOCK_TIMEOUT to wait longer)",
            file=path,
        ) from None
    except OSError as exc:
        raise state_error("state_unwritable", f"cannot lock {path}: {exc.strerror or exc}", file=path) from None


class Locked:
    """Exclusive locks on several files, taken in a fixed order (no deadlocks).

    Each lock is a `filelock.FileLock` on a sidecar `<file>.lock`: an `flock` the kernel drops
    when the holder dies, even by SIGKILL. `fallback_to_soft=False` keeps it a kernel lock on
    filesystems without `flock` (an error, never a silent soft lock). The lock file is never
    deleted, so every writer contends on the same inode. One deadline covers all the files.
    """

    def __init__(self, file_paths: list[str]):
        self.paths = sorted(set(file_paths))
        self.locks: list = []

    def __enter__(self):
        timeout = lock_timeout()
        deadline = time.monotonic() + timeout
        try:
            for path in self.paths:
                self.locks.append(take(path, deadline, timeout))
        except BaseException:  # e.g. Ctrl-C while waiting: let go of the locks already taken
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        while self.locks:
            self.locks.pop().release()  # unlocks and closes the descriptor
        return False


def fsync_dir(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def unencodable(what: str, exc: Exception):
    """The input error for content JSON in UTF-8 cannot hold (nothing has been written)."""
    if isinstance(exc, UnicodeEncodeError):
        why = (
            f"a text holds a lone UTF-16 surrogate (\\u{ord(exc.object[exc.start]):04x}), which "
            f"UTF-8 cannot store; send the characters themselves"
        )
    else:
        why = "a number is NaN or infinite, which JSON cannot store; give a finite number"
    return input_error("invalid_state_change", f"refusing to write {what}: {why}")


def temp_path(path: str) -> str:
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.tmp.{os.getpid()}.{os.urandom(3).hex()}")


def write_temp(path: str, payload: bytes, mode: int | None = None) -> str:
    """A complete, fsynced temp file beside `path` (removed again if writing it fails)."""
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)  # the mode asked for, whatever the umask
    except BaseException:
        unlink_quietly(tmp)
        raise
    return tmp


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def text_lock(path: str) -> Locked:
    """The lock of a plain-text state file (`with atomic_files.text_lock(path): …`)."""
    return Locked([path])


def append_text(path: str, text: str, *, locked: bool = False) -> None:
    """Append text to a plain-text state file in one write, under its lock (pass
    `locked=True` when already inside `text_lock(path)`). Creates the file if missing."""

    containment.check_write(path)

    def write() -> None:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        try:
            data = text.encode("utf-8")
            while data:
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)

    try:
        if locked:
            write()
        else:
            with Locked([path]):
                write()
    except OSError as exc:
        raise state_error("state_unwritable", f"cannot write {path}: {exc.strerror or exc}", file=path) from None


def create_text(path: str, data: bytes) -> bool:
    """Write a new file whole (temp file, then a hard link): False if `path` already exists,
    which is never overwritten."""
    checked = containment.check_write(path)
    folder, tmp = os.path.dirname(checked), temp_path(checked)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # no hard links here: create it exclusively instead
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        fsync_dir(folder)
        return True
    except OSError as exc:
        raise state_error("state_unwritable", f"cannot write {path}: {exc.strerror or exc}", file=path) from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def append_jsonl(path: str, records: list) -> None:
    """Append records to a JSON Lines log under its lock (one line each, fsynced)."""
    if not records:
        return
    try:
        payload = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n" for r in records).encode("utf-8")
    except (ValueError, UnicodeEncodeError) as exc:
        raise unencodable(os.path.basename(path), exc) from None
    try:
        containment.check_write(path)
        with Locked([path]):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            try:
                while payload:
                    payload = payload[os.write(fd, payload) :]
                os.fsync(fd)
            finally:
                os.close(fd)
    except OSError as exc:
        raise state_error("state_unwritable", f"cannot append to {path}: {exc.strerror or exc}", file=path) from None


def read_jsonl(path: str) -> list:
    """The records of a JSON Lines log, oldest first ([] when it does not exist). Lines are
    split on `\\n` only (a record may hold U+2028 and other separators); a line that does not
    parse, such as a last line torn by a crash, is skipped."""
    containment.check_read(path)
    try:
        raw = containment.read_bytes(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise state_error("state_unreadable", f"cannot read {path}: {exc.strerror or exc}", file=path) from None
    out = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(inputs.loads(line.decode("utf-8")))
        except ValueError:  # UnicodeDecodeError included
            continue
    return out


def write_text_atomic(path: str, text: str, mode: int | None = None) -> None:
    """Replace a plain file (a report, a project file a fix changes) with `text` in one step:
    a complete, fsynced temp file in the same folder, then `os.replace`. Readers see the old
    file or the new one, whole. `mode` sets the file's permission bits (default 0o644 less
    the umask). A text UTF-8 cannot hold is an input error before anything is written; an
    OSError is left to the caller (nothing is replaced, no temp file is left)."""
    try:
        payload = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise unencodable(path, exc) from None
    write_bytes_atomic(path, payload, mode)


def write_bytes_atomic(path: str, payload: bytes, mode: int | None = None) -> None:
    """`write_text_atomic` for bytes (a file merged back from a builder's worktree)."""
    containment.check_write(path)
    tmp = write_temp(path, payload, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise
    fsync_dir(os.path.dirname(path) or ".")


def locked(file_paths: list[str]):
    """Hold the locks of these paths (sidecar `<path>.lock`) for a longer operation."""
    return Locked(list(file_paths))
