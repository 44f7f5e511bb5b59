"""A merged result written into the project, all or nothing (docs/decisions/worktrees.md,
"Merging back"): `plan` turns the difference between the project as it was and as git merged it
into the files to write or remove — every target checked first (a path out of the project, through
a symbolic link, a link or submodule in the result, a folder where the result has a file or a file
where it needs a folder) — and `apply` writes them, each file replaced in one step, removals
first; when the disk refuses a write, what was written is put back before `WriteFailed` is raised.
"""

from __future__ import annotations

import os

from aether.core import containment, paths
from aether.core.exceptions import AetherError
from aether.state import atomic_files, checkpoints, store
from aether.state import worktrees as wt


def _safe_target(root: str, rel: str) -> str:
    """The project file a merge writes or removes: the path exactly as git names it, refused when
    it leaves the project, passes a symbolic link, or names `.git`."""
    parts = rel.split("/")
    if not rel or os.path.isabs(rel) or any(p in ("", ".", "..", ".git") for p in parts):
        raise _Refused(f"{rel!r} is no path inside the project")
    path = root
    for part in parts[:-1]:
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise _Refused(f"{rel} goes through a symbolic link")
    target = os.path.join(root, *parts)
    if os.path.islink(target):
        raise _Refused(f"{rel} is a symbolic link in the project")
    return target


class _Refused(Exception):
    """A change the merge will not write (its reason is the message)."""


def plan(r: checkpoints.Repo, before: str, after: str) -> tuple:
    """([(path, target, bytes | None, executable)] to write (None: remove), [conflict]) between the
    project as it was (`before`) and as merged (`after`): contents as the working tree holds them.
    Every target is checked before anything is written."""
    root = paths.project_root()
    writes, conflicts = [], []
    for status, mode, blob, rel in wt.changes(r, before, after):
        try:
            target = _safe_target(root, rel)
            if mode in ("120000", "160000"):
                raise _Refused(f"{rel} would be a symbolic link or a submodule: apply it by hand")
        except _Refused as exc:
            conflicts.append({"path": rel, "why": str(exc), "hunks": []})
            continue
        data = None if status == "D" else wt.content(r, blob, rel)
        writes.append((rel, target, data, mode == "100755"))
    return writes, conflicts or _in_the_way(root, writes)


def _in_the_way(root: str, writes: list) -> list:
    """What the project holds besides what git sees (files it ignores, empty folders) where the
    result writes: a folder where it has a file, a file where it needs a folder. [conflict]"""
    removed = {target for _rel, target, data, _x in writes if data is None}
    out = []
    for rel, target, data, _x in writes:
        if data is None:
            continue
        parts = rel.split("/")
        files = [
            p
            for p in ("/".join(parts[:i]) for i in range(1, len(parts)))
            if os.path.lexists(os.path.join(root, p)) and not os.path.isdir(os.path.join(root, p)) and os.path.join(root, p) not in removed
        ]
        if files:
            out.append(
                {
                    "path": rel,
                    "hunks": [],
                    "why": f"{files[0]} is a file in the project (one git does not track or ignores): the result needs a folder there",
                }
            )
        elif os.path.isdir(target) and not os.path.islink(target):
            left = _left_in(target, removed)
            if left is not None:
                out.append(
                    {
                        "path": rel,
                        "hunks": [],
                        "why": f"{rel} is a folder in the project (it holds "
                        f"{os.path.relpath(left, root)}, which git does not "
                        f"track or ignores): the result has a file there",
                    }
                )
    return out


def _left_in(folder: str, removed: set) -> str | None:
    """A file (or link) in `folder` the merge does not remove, else None (links are not followed)."""
    for top, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            if path not in removed:
                return path
    return None


class WriteFailed(Exception):
    """A write the disk refused after the checks: everything written before it was put back."""

    def __init__(self, rel: str | None, why: str):
        super().__init__(why)
        self.rel, self.why = rel, why


def apply(writes: list) -> None:
    """Removals first (and the folders they empty), then every file, each replaced in one step;
    a file keeps its other permission bits, only the executable ones follow git. On a failure the
    previous bytes and modes, and the folders, are put back before `WriteFailed` is raised."""
    store.flush()  # the merge's record is on disk before the project changes
    root = os.path.realpath(paths.project_root())
    undo: list = []
    doing = None  # the path being written or removed
    try:
        for rel, target, data, _x in writes:
            if data is None and os.path.isfile(target) and not os.path.islink(target):
                doing = rel
                undo.append(_saved(target))
                os.unlink(target)
                _prune(root, os.path.dirname(target), undo)
        for rel, target, data, executable in writes:
            if data is None:
                continue
            doing = rel
            if os.path.isdir(target) and not os.path.islink(target):  # emptied, or empty (the checks said so)
                os.rmdir(target)
                undo.append(("folder", target, None, None))
            _make_folders(os.path.dirname(target), undo)
            saved = _saved(target)
            mode = saved[3] if saved[2] is not None else 0o666 & ~_umask()
            mode = (mode | (mode & 0o444) >> 2) if executable else mode & ~0o111
            undo.append(saved)
            atomic_files.write_bytes_atomic(target, data, mode)
    except (OSError, AetherError) as exc:
        why = exc.message if isinstance(exc, AetherError) else (exc.strerror or str(exc))
        stuck = _undo(undo)
        raise WriteFailed(
            doing,
            f"could not be written: {why}; nothing of the result was written"
            + (f" (could not put back as it was: {', '.join(os.path.relpath(p, root) for p in stuck)})" if stuck else ""),
        ) from None


def _saved(target: str) -> tuple:
    """("file", target, its bytes, its mode) — bytes and mode None when there is no file."""
    if os.path.isfile(target) and not os.path.islink(target):
        with open(target, "rb") as fh:
            return "file", target, fh.read(), os.stat(target).st_mode & 0o7777
    return "file", target, None, None


def _prune(root: str, folder: str, undo: list) -> None:
    """Remove the folders a removal emptied, up to the project's (bounded by the path's depth)."""
    for _ in range(folder.count(os.sep)):
        if os.path.realpath(folder) == root or not os.path.isdir(folder) or os.listdir(folder):
            return
        os.rmdir(folder)
        undo.append(("folder", folder, None, None))
        folder = os.path.dirname(folder)


def _make_folders(folder: str, undo: list) -> None:
    missing, here = [], folder
    for _ in range(folder.count(os.sep)):
        if os.path.lexists(here):
            break
        missing.append(here)
        here = os.path.dirname(here)
    containment.make_dirs(folder)
    undo += [("made", path, None, None) for path in reversed(missing)]


def _undo(undo: list) -> list:
    """Put back what `apply` changed, last change first; the paths it could not put back."""
    stuck = []
    for kind, path, data, mode in reversed(undo):
        try:
            if kind == "made":
                os.rmdir(path)
            elif kind == "folder":
                os.makedirs(path, exist_ok=True)
            elif data is not None:
                atomic_files.write_bytes_atomic(path, data, mode)
            elif os.path.lexists(path) and not os.path.isdir(path):
                os.unlink(path)
        except (OSError, AetherError):
            stuck.append(path)
    return stuck


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
