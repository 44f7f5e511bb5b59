"""Nothing leaves the project: the one guard for every path Aether reads or writes.

Roots: the project (its real path), the data folder AETHER_DATA_DIR names and the global
folder (`~/.aether` or AETHER_HOME). Those two are explicit user settings, trusted as named;
a symlink *inside* any root that points out of it is not.

- `check_read`: the path, every component resolved (symlinks followed), stays in a root.
- `check_write`: the same, and the file itself is no symlink (never written through one).
- `make_dirs`: a folder Aether needs is created one level at a time below its root, with no
  symlink anywhere in the chain; an existing one must resolve inside the root.
- `read_bytes`: a file's bytes, from a regular file only (a FIFO, a device or a socket put where
  a file of Aether's goes is refused at once, never waited on).
- `project_path`: a path a caller names (plans, claims, fix changes, brief paths) is text
  that can name a file, relative, free of `..` and `~`, within the filesystem's limits, inside
  the project after symlinks, and (when asked) not under `.git/` or `.aether/`.

A refusal is one AetherError naming the path and the rule (`path`, `rule`); nothing changes.
"""

from __future__ import annotations

import os
from functools import lru_cache

from aether.core import paths
from aether.core.exceptions import EXIT_STATE, AetherError

MAX_PATH = 4096  # bytes, Linux PATH_MAX
MAX_NAME = 255  # bytes of one path component, NAME_MAX
PROTECTED_DIRS = (".git", ".aether")

RULES = {
    "path_outside_project": "every file Aether reads or writes stays inside the project (or the global folder), symbolic links followed",
    "path_is_symlink": "Aether never writes through a symbolic link nor creates a folder below one",
    "invalid_path": "a path must be text that can name a file",
    "path_protected": "files under .git/ and .aether/ are Aether's and git's, not a task's",
}


def refusal(code: str, path: str, why: str, exit_code: int = EXIT_STATE, **details) -> AetherError:
    """The error for a refused path: what is wrong, the rule, nothing changed."""
    shown = path if len(path) <= 200 else path[:200] + "…"
    return AetherError(
        code, f"{shown!r} {why}; refused, nothing was changed ({RULES[code]})", exit_code, path=shown, rule=RULES[code], **details
    )


# ---------------------------------------------------------------- roots


def inside(real: str, base: str) -> bool:
    """True when `real` is `base` or below it (both absolute, compared as text)."""
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def roots() -> list[str]:
    """The absolute roots: the project, AETHER_DATA_DIR when set, the global folder."""
    data = paths.data_dir() if os.environ.get("AETHER_DATA_DIR") else None
    return list(_roots(paths.project_root(), data, paths.home_dir()))


@lru_cache(maxsize=32)
def _roots(project: str, data: str | None, home: str) -> tuple:
    return tuple(os.path.abspath(r) for r in (project, data, home) if r)


@lru_cache(maxsize=32)
def _real(root: str) -> str:
    """A root's real path (roots are the user's settings: resolved once per process)."""
    return os.path.realpath(root)


def _bases(full: str) -> list[str]:
    """The roots a path lies in as written (a root's real path counts as the root)."""
    found = []
    for root in roots():
        for form in (root, _real(root)):
            if inside(full, form) and form not in found:
                found.append(form)
    return found


def _text_problem(path) -> str | None:
    if not isinstance(path, str) or not path:
        return "is empty"
    if "\x00" in path:
        return "holds a NUL character"
    try:
        raw = path.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    if len(raw) >= MAX_PATH:
        return f"is {len(raw)} bytes long; the limit is {MAX_PATH - 1}"
    if any(len(part.encode("utf-8")) > MAX_NAME for part in path.split("/")):
        return f"has a name longer than {MAX_NAME} bytes"
    return None


def check_read(path: str, *, exit_code: int = EXIT_STATE) -> str:
    """The absolute path, if its real path stays inside the root it is written under; raises
    otherwise. (Paths outside every root come from a caller and are judged by
    `project_path` where they enter.)"""
    problem = _text_problem(path)
    if problem:
        raise refusal("invalid_path", str(path), problem, exit_code)
    full = os.path.abspath(path)
    bases = _bases(full)
    if bases:
        real = os.path.realpath(full)
        if not any(inside(real, _real(base)) for base in bases):
            raise refusal("path_outside_project", full, f"leads outside the project (to {real})", exit_code)
    return full


def check_write(path: str, *, exit_code: int = EXIT_STATE) -> str:
    """`check_read`, and the file is not a symbolic link."""
    full = check_read(path, exit_code=exit_code)
    if os.path.islink(full):
        raise refusal("path_is_symlink", full, "is a symbolic link", exit_code)
    return full


def is_safe_read(path: str) -> bool:
    """True when `check_read` accepts the path and it is no symbolic link (backup slots)."""
    try:
        check_read(path)
    except AetherError:
        return False
    return not os.path.islink(path)


class NotRegularFile(OSError):
    """A path that names a FIFO, a device, a socket or a folder where a file is expected."""


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (at most `limit`). Raises FileNotFoundError, or
    NotRegularFile (an OSError, `strerror` "not a regular file") without blocking on a FIFO."""
    import stat  # noqa: PLC0415 — start-up: stat only where a file is read

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise NotRegularFile(0, f"not a regular file ({kind})", path)
        chunks, left = [], limit if limit is not None else -1
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left = left - len(chunk) if left > 0 else left
        return b"".join(chunks)
    finally:
        os.close(fd)


def make_dirs(folder: str, *, exit_code: int = EXIT_STATE) -> str:
    """The folder, created if missing with no symbolic link below its root; an existing one
    must resolve inside the root. Raises OSError when a component is a file."""
    full = check_read(folder, exit_code=exit_code)
    if os.path.isdir(full):
        return full
    bases = _bases(full)
    if not bases:  # not under a root: nothing to contain it in
        os.makedirs(full, exist_ok=True)
        return full
    base = max(bases, key=len)
    if not os.path.isdir(base):
        os.makedirs(base, exist_ok=True)  # the root itself is the user's (trusted) setting
    here = base
    for part in os.path.relpath(full, base).split(os.sep):
        if part in ("", "."):
            continue
        here = os.path.join(here, part)
        if os.path.islink(here):
            raise refusal("path_is_symlink", full, f"would be created below the symbolic link {here}", exit_code)
        try:
            os.mkdir(here)
        except FileExistsError:
            if not os.path.isdir(here):
                raise
    return full


# ---------------------------------------------------------------- paths callers name


def project_path(
    path,
    *,
    root: str | None = None,
    protected: tuple = PROTECTED_DIRS,
    allowed: tuple = (),
    allow_absolute: bool = False,
    protected_why: str = "which no task may name",
) -> tuple:
    """(project-relative path with `/`, None) or (None, why it is refused). `\\` counts as
    `/`; `allowed` lists prefixes (`.aether/research/`) exempt from `protected`."""
    if not isinstance(path, str) or not path.strip():
        return None, "is empty"
    problem = _text_problem(path)
    if problem:
        return None, problem
    text = path.strip().replace("\\", "/")
    base = os.path.abspath(root or paths.project_root())
    real_root = os.path.realpath(base)
    if os.path.isabs(text) or text.startswith("~"):
        if not allow_absolute:
            return None, "is an absolute path; give it relative to the project root"
        absolute = os.path.normpath(os.path.expanduser(text))
        if not (inside(absolute, base) or inside(absolute, real_root)):
            return None, "is outside the project"
        text = os.path.relpath(absolute, base if inside(absolute, base) else real_root)
        text = text.replace(os.sep, "/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts:
        return None, "names the project root, not a file"
    if ".." in parts:
        return None, "contains `..`; paths must stay inside the project"
    rel = "/".join(parts)
    if parts[0] in protected and not any((rel + "/").startswith(a) for a in allowed):
        return None, f"is inside {parts[0]}/, {protected_why}"
    if not inside(os.path.realpath(os.path.join(base, *parts)), real_root):
        return None, "leads outside the project through a symbolic link"
    return rel, None
