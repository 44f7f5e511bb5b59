"""The only code that reads and writes state files.

A write: take the file's lock (`filelock.FileLock` on a sidecar `<file>.lock`: an `flock`
the kernel releases if the process dies) → read → apply the change → upgrade/validate against
the schema → write a temp file in the same folder → fsync → `os.replace` → fsync the folder →
keep the last 3 versions as backups (hard links in `.backups/`, so no copying).

Readers take no lock: `os.replace` guarantees they see the old file or the new one, whole.
A file that does not parse (strictly: no NaN, no lone surrogate, see `aether.core.inputs`) or fails
its schema is never overwritten: every command touching it fails with `state_corrupt`, naming
the newest valid backup that `aether state-restore` brings back.

Several files in one write (`update_many`): every file is loaded, changed, validated and
encoded, every temp file written and fsynced, and every backup rotated before the first
`os.replace`. A failure up to there changes no state file (at most a backup slot has rotated).
What is not atomic across files: a crash (power loss, SIGKILL) or an I/O error between two
`os.replace` calls leaves the files replaced so far new and the others old (in the order of
`names`). Each file is still whole and valid on its own; no lock or journal spans the set.

One write per call (`batch`): inside a batch (the driver's lock opens one for every step of a
run), an update keeps its files locked and their new content in memory, and each changed file is
written once when the batch ends; `flush` writes earlier, before an effect outside the state
files that must find its record on disk.

The locks, temp files and fsyncs are `atomic_files`', which plain files outside the state
registry use too (reports, logs of one JSON record per line, project files a merge writes).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time

from aether.core import clock, containment, inputs, paths
from aether.core.exceptions import AetherError, input_error, state_error
from aether.state import atomic_files, schemas

BACKUPS_KEPT = 3
BACKUP_DIR = ".backups"
NEWER_SCHEMA = "written by a newer Aether"  # start of the problem text for a too-new file


# ---------------------------------------------------------------- locations


def spec_for(name: str) -> schemas.FileSpec:
    """The spec of a state file, by short name (`colony`), file name or path."""
    spec = schemas.lookup(name)
    if spec is None:
        known = ", ".join(sorted(schemas.FILES))
        raise input_error("unknown_file", f"unknown state file {name!r} (known: {known})")
    return spec


def path_of(spec: schemas.FileSpec) -> str:
    base = paths.home_dir() if spec.scope == "global" else paths.data_dir()
    return os.path.join(base, spec.filename)


def backup_paths(path: str) -> list[str]:
    """Backup slots of a file, newest first."""
    folder = os.path.join(os.path.dirname(path), BACKUP_DIR)
    name = os.path.basename(path)
    return [os.path.join(folder, f"{name}.{n}") for n in range(1, BACKUPS_KEPT + 1)]


# ---------------------------------------------------------------- reading


def _decode(raw: bytes, spec: schemas.FileSpec, path: str):
    """Parse, upgrade and validate file content; returns (data, problem or None)."""
    try:
        data = inputs.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(data, dict):
        return None, f"expected a JSON object, found {type(data).__name__}"
    version = data.get("version", 0)
    if isinstance(version, int) and not isinstance(version, bool) and version > spec.version:
        return None, (f"{NEWER_SCHEMA} (schema version {version}, this one reads up to {spec.version}); upgrade Aether")
    try:
        data = spec.upgrade(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return None, f"cannot upgrade from schema version {version!r} ({exc})"
    problems = spec.validate(data)
    if problems:
        return None, "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")
    return data, None


def newest_valid_backup(spec: schemas.FileSpec, path: str) -> str | None:
    for candidate in backup_paths(path):
        if not containment.is_safe_read(candidate):
            continue  # a slot that is a symbolic link (or leads out) is no backup of ours
        try:
            raw = containment.read_bytes(candidate)
        except OSError:
            continue
        if _decode(raw, spec, candidate)[1] is None:
            return candidate
    return None


def _corrupt(spec: schemas.FileSpec, path: str, problem: str):
    backup = newest_valid_backup(spec, path)
    restore_cmd = getattr(spec, "restore_command", None) or f"aether state-restore {spec.name}"
    hint = (
        f"; restore the newest valid backup with `{restore_cmd}` ({backup})"
        if backup
        else "; no valid backup exists: repair or remove the file by hand"
    )
    return state_error(
        "state_corrupt",
        f"{path} is corrupt: {problem}{hint}",
        file=path,
        backup=backup,
    )


def _load(spec: schemas.FileSpec, path: str, missing_ok: bool):
    if _BATCH is not None and path in _BATCH.pending:  # changed in this call, not yet written
        return json.loads(_BATCH.pending[path])
    containment.check_read(path)
    try:
        raw = containment.read_bytes(path)
    except FileNotFoundError:
        if not missing_ok:
            raise state_error("state_missing", f"{path} does not exist{spec.missing_hint}", file=path) from None
        return spec.default()
    except (IsADirectoryError, containment.NotRegularFile) as exc:
        if os.path.isdir(path):
            raise _corrupt(spec, path, "is a directory") from None
        raise state_error("state_unreadable", f"cannot read {path}: {exc.strerror} — move it out of the way", file=path) from None
    except OSError as exc:
        raise state_error("state_unreadable", f"cannot read {path}: {exc.strerror}", file=path) from None
    data, problem = _decode(raw, spec, path)
    if problem is not None:
        if problem.startswith(NEWER_SCHEMA):  # not damage: a backup would only lose data
            raise state_error("state_too_new", f"{path} was {problem}", file=path)
        raise _corrupt(spec, path, problem)
    return data


def exists(name: str) -> bool:
    path = path_of(spec_for(name))
    return os.path.exists(path) or (_BATCH is not None and path in _BATCH.pending)


def read(name: str, *, missing_ok: bool = True) -> dict:
    """The file's current content (upgraded in memory to the current schema; no lock)."""
    spec = spec_for(name)
    return _load(spec, path_of(spec), missing_ok)


# ---------------------------------------------------------------- writing


def _rotate_backups(path: str) -> None:
    """Keep the file's current version as backup 1 (a hard link; older ones shift down)."""
    if not os.path.exists(path):
        return
    slots = backup_paths(path)
    containment.make_dirs(os.path.dirname(slots[0]))
    for older, newer in zip(reversed(slots[1:]), reversed(slots[:-1])):
        if os.path.lexists(newer):
            os.replace(newer, older)
    if os.path.lexists(slots[0]):  # a dangling link left in slot 1: never copy through it
        os.unlink(slots[0])
    try:
        os.link(path, slots[0])
    except OSError:  # filesystems without hard links: copy instead
        import shutil  # noqa: PLC0415 — start-up: shutil only where files are copied

        shutil.copy2(path, slots[0])


def _clear_stale_temps(path: str) -> None:
    """Remove temp files of writers that died mid-write (we hold the lock, so none is live)."""
    folder, name = os.path.split(path)
    prefix = f".{name}.tmp."
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            if entry.name.startswith(prefix):
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass


def serialize(data: dict, compact: bool = False) -> bytes:
    """UTF-8 JSON of a state file's content. Raises ValueError for a NaN or infinite number
    and UnicodeEncodeError for a lone surrogate (see `_encode`)."""
    if compact:  # the C encoder: indentation would fall back to the pure-Python one
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    else:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, indent=2)
    return (text + "\n").encode("utf-8")


def _encode(spec: schemas.FileSpec, data: dict) -> bytes:
    try:
        return serialize(data, getattr(spec, "compact", False))
    except (ValueError, UnicodeEncodeError) as exc:
        raise atomic_files.unencodable(spec.filename, exc) from None


def _replace_all(items: list) -> None:
    """Write each (path, payload) atomically: first every temp file (written, fsynced) and
    every backup rotation, then the `os.replace` calls, then an fsync of each folder. A
    failure before the first replace leaves every file as it was and no temp file behind."""
    pending: list = []
    for path, _payload in items:
        containment.check_write(path)
    try:
        for path, payload in items:
            _clear_stale_temps(path)
            pending.append((atomic_files.write_temp(path, payload), path))
        for _tmp, path in pending:
            _rotate_backups(path)
        while pending:
            tmp, path = pending[0]
            os.replace(tmp, path)
            pending.pop(0)
    finally:
        for tmp, _path in pending:
            atomic_files.unlink_quietly(tmp)
    for folder in dict.fromkeys(os.path.dirname(path) for path, _ in items):
        atomic_files.fsync_dir(folder)


def _check(spec: schemas.FileSpec, data: dict) -> None:
    problems = spec.validate(data)
    if problems:
        raise input_error(
            "invalid_state_change",
            f"refusing to write {spec.filename}: " + "; ".join(problems[:5]),
            problems=problems,
        )


def update(name: str, change, *, missing_ok: bool = True):
    """Apply `change(data)` to one file under its lock and write it atomically.

    `change` mutates `data` in place and returns the command's result. Nothing is written
    when it raises.
    """
    return update_many([name], lambda files: change(files[name]), missing_ok=missing_ok)


def update_many(names: list[str], change, *, missing_ok: bool = True):
    """Like `update` for several files at once. `change` receives {name: data}.

    All are locked (in a fixed order), changed, validated and encoded; then every temp file is
    written and every backup rotated; only then is each file replaced, in the order given. A
    failure before the replaces writes nothing; a crash between two replaces is the one case
    that leaves some files new and others old (see the module docstring)."""
    specs = {name: spec_for(name) for name in names}
    return _update({name: (path_of(spec), spec) for name, spec in specs.items()}, change, missing_ok)


def writes(*names: str, missing_ok: bool = True):
    """Decorator for a named change: `@store.writes("colony", "plan")` on `def start(files, …)`
    makes `start(…)` run under the locks of those files, with {name: data} as `files` (one
    file: its data alone), writing them atomically when it returns."""

    def decorate(change):
        @functools.wraps(change)
        def run(*args, **kwargs):
            if len(names) == 1:
                return update(names[0], lambda data: change(data, *args, **kwargs), missing_ok=missing_ok)
            return update_many(list(names), lambda files: change(files, *args, **kwargs), missing_ok=missing_ok)

        return run

    return decorate


def _update(targets: dict, change, missing_ok: bool, after=None):
    """The write itself: `targets` maps a key to (path, spec), in replace order; `change`
    receives {key: data}; `after(result)` runs with the new files in place, still locked."""
    if _BATCH is not None:
        if _BATCH.takes(targets):
            return _BATCH.update(targets, change, missing_ok, after)
        flush()  # a file outside the colony's data: what the call changed is written first, unlocked
    try:
        with atomic_files.Locked([path for path, _spec in targets.values()]):
            files = {key: _load(spec, path, missing_ok) for key, (path, spec) in targets.items()}
            result = change(files)
            payloads = []
            for key, (path, spec) in targets.items():
                files[key]["version"] = spec.version
                _check(spec, files[key])
                payloads.append((path, _encode(spec, files[key])))
            _replace_all(payloads)
            if after is not None:
                after(result)
    except OSError as exc:
        raise state_error("state_unwritable", f"cannot write state: {exc.strerror or exc} ({exc.filename or ''})") from None
    return result


# ---------------------------------------------------------------- one write per call

_BATCH = None  # the open `batch()`, if any
LONG_HOLD = 2.0  # seconds a batch keeps its locks through long work before `let_others_in` writes


class _Batch:
    """The colony files a driving call changed, held locked and written once (see `batch`)."""

    def __init__(self):
        self.locks: dict = {}  # path -> its FileLock, held until the batch is written
        self.pending: dict = {}  # path -> the encoded new content, in the order first changed
        self.afters: list = []  # (step, result) to run once the pending content is written
        self.changing = 0  # updates whose change runs now: their files stay locked, whatever is written
        self.since: float | None = None  # when the locks held now began to be held

    @staticmethod
    def takes(targets: dict) -> bool:
        """Only the colony's own data folder: files shared by every colony (the global learnings)
        or kept elsewhere are written at once, as outside a batch."""
        folder = os.path.join(paths.data_dir(), "")
        return all(path.startswith(folder) for path, _spec in targets.values())

    def _lock(self, wanted: list) -> None:
        """Hold the lock of every file of an update. A lock is waited for only while every lock
        held sorts before it (the order `atomic_files.Locked` keeps, so no two writers wait on
        each other): when one that sorts earlier is busy, the batch writes what it has, lets go of
        every lock, and takes this update's locks in order."""
        needed = sorted(set(wanted))
        missing = [path for path in needed if path not in self.locks]
        timeout = atomic_files.lock_timeout()
        deadline = time.monotonic() + timeout
        top = max(self.locks, default="")
        for path in [path for path in missing if path < top]:
            lock = atomic_files.take(path, deadline, timeout, wait=False)
            if lock is None and not self.changing:  # busy: write, let go, take them all in order
                self.let_go()
                missing = needed
                break
            self.locks[path] = lock or atomic_files.take(path, deadline, timeout)
        for path in missing:
            if path not in self.locks:
                self.locks[path] = atomic_files.take(path, deadline, timeout)
        if self.since is None and self.locks:
            self.since = time.monotonic()

    def update(self, targets: dict, change, missing_ok: bool, after):
        """`_update` inside the batch: the change applied, validated and encoded now, written later."""
        self._lock([path for path, _spec in targets.values()])
        files = {key: _load(spec, path, missing_ok) for key, (path, spec) in targets.items()}
        self.changing += 1
        try:
            result = change(files)
        finally:
            self.changing -= 1
        encoded = {}
        for key, (path, spec) in targets.items():
            files[key]["version"] = spec.version
            _check(spec, files[key])
            encoded[path] = _encode(spec, files[key])
        self.pending.update(encoded)
        if after is not None:
            self.afters.append((after, result))
        return result

    def write(self) -> list:
        """Write every changed file at once (as `update_many` does); returns the steps that
        waited for it."""
        items, afters = list(self.pending.items()), self.afters
        self.pending, self.afters = {}, []
        if items:
            try:
                _replace_all(items)
            except OSError as exc:
                raise state_error("state_unwritable", f"cannot write state: {exc.strerror or exc} ({exc.filename or ''})") from None
        return afters

    def release(self) -> None:
        """Let go of every lock — not while an update's change runs (its files stay locked)."""
        if self.changing:
            return
        while self.locks:
            self.locks.popitem()[1].release()
        self.since = None

    def let_go(self) -> None:
        """Write, let go of the locks, then run the steps that waited for the write (inside an
        update's change they wait on, for the batch's end)."""
        afters = self.write()
        self.release()
        if self.changing:
            self.afters[:0] = afters
            return
        for step, result in afters:
            step(result)


def _finish(current: _Batch) -> None:
    try:
        afters = current.write()
    finally:
        current.release()
    for step, result in afters:
        step(result)


@contextlib.contextmanager
def batch():
    """One write per state file for a whole call: inside, every `update` of a colony file keeps
    the file locked and its new content in memory (readers in this process see it), and each
    changed file is written once, when the batch ends, whatever ended it. Nested batches are one.
    A step with an effect outside the state files that must find its record written first (a git
    command that changes the repository, a file a merge writes) calls `flush()` before it; long
    work calls `let_others_in()` between its parts."""
    global _BATCH  # noqa: PLW0603 — one batch per process, like its locks
    if _BATCH is not None:
        yield
        return
    _BATCH = current = _Batch()
    try:
        yield
    except BaseException:
        _BATCH = None
        with contextlib.suppress(AetherError):  # the step's own error says more (a full disk fails both)
            _finish(current)
        raise
    _BATCH = None
    _finish(current)


def changed(name: str) -> bool:
    """Does the open batch hold a change of this file, not written yet?"""
    return _BATCH is not None and path_of(spec_for(name)) in _BATCH.pending


def when_written(step) -> None:
    """Run `step(None)` once what the call changed is on disk (at once outside a batch): a step
    that must not run before its record is written (removing what the record no longer names)."""
    if _BATCH is None:
        step(None)
    else:
        _BATCH.afters.append((step, None))


def flush() -> None:
    """Write what the open batch changed so far (and let go of its locks): before a step whose
    effect outside the state files must find its record on disk if the process dies after it."""
    if _BATCH is not None:
        _BATCH.let_go()


def let_others_in() -> None:
    """Between the parts of long work inside a step (a syntax check, file by file): once the batch
    has held its locks LONG_HOLD seconds, it writes and lets go, so that other writers (the Agent
    hooks, the person's commands) do not wait through the rest."""
    if _BATCH is not None and _BATCH.since is not None and time.monotonic() - _BATCH.since > LONG_HOLD:
        _BATCH.let_go()


def replace(name: str, data: dict) -> None:
    """Write a whole new content for a file (still locked, validated, atomic)."""

    def change(current):
        current.clear()
        current.update(data)

    update(name, change)


def restore(name: str, *, force: bool = False) -> dict:
    """Bring back the newest valid backup of a file; the replaced content is kept aside."""
    spec = spec_for(name)
    return restore_file(path_of(spec), spec, force=force)


def restore_file(path: str, spec: schemas.FileSpec, *, force: bool = False) -> dict:
    """`restore` for a file given by path and spec (files outside the registry)."""
    try:
        with atomic_files.Locked([path]):
            return _restore_locked(path, spec, force)
    except OSError as exc:
        raise state_error("state_unwritable", f"cannot restore {path}: {exc.strerror or exc} ({exc.filename or ''})", file=path) from None


def _restore_locked(path: str, spec: schemas.FileSpec, force: bool) -> dict:
    containment.check_write(path)
    if os.path.isdir(path):
        raise state_error(
            "state_unwritable",
            f"{path} is a directory, not a state file: move it out of the way "
            f"(e.g. `mv {path} {path}.damaged`), then run the restore again",
            file=path,
        )
    current_ok = False
    try:
        problem = _decode(containment.read_bytes(path), spec, path)[1]
        current_ok = problem is None
        if problem and problem.startswith(NEWER_SCHEMA) and not force:
            raise state_error(
                "state_too_new",
                f"{path} was {problem}; restoring a backup would drop its newer content (pass --force to do it anyway)",
                file=path,
            )
    except FileNotFoundError:
        pass
    except OSError:  # a FIFO, a device: not a valid file, a backup replaces it
        pass
    if current_ok and not force:
        raise input_error(
            "restore_refused",
            f"{path} is valid; restoring its backup would undo the last write (pass --force to do it anyway)",
            file=path,
        )
    backup = newest_valid_backup(spec, path)
    if backup is None:
        raise state_error("no_backup", f"no valid backup of {path} to restore", file=path)
    raw = containment.read_bytes(backup)
    tmp = atomic_files.write_temp(path, raw)
    try:
        kept = None
        if os.path.lexists(path):
            kept = os.path.join(
                os.path.dirname(backup),
                f"{spec.filename}.replaced-{int(clock.now())}-{os.urandom(2).hex()}",
            )
            os.link(path, kept)
        os.replace(tmp, path)
    except BaseException:
        atomic_files.unlink_quietly(tmp)
        raise
    atomic_files.fsync_dir(os.path.dirname(path))
    return {"file": path, "restored_from": backup, "replaced_content_saved_as": kept}


# ---------------------------------------------------------------- plain-text files (activity log)


# ---------------------------------------------------------------- files outside the registry
# Per-item state (e.g. one file per bug under .aether/bugs/) has no fixed path: these take the
# path and its FileSpec, with the same lock → read → change → validate → atomic replace.


def read_file(path: str, spec: schemas.FileSpec, *, missing_ok: bool = True) -> dict:
    """Like `read` for a file given by path and spec."""
    return _load(spec, path, missing_ok)


def update_file(path: str, spec: schemas.FileSpec, change, *, missing_ok: bool = True, after=None):
    """Like `update` for a file given by path and spec. `after(result)`, if given, runs once
    the new content is in place and while the lock is still held (e.g. to append to a log in
    the same order as the writes)."""
    return _update({path: (path, spec)}, lambda files: change(files[path]), missing_ok, after)
