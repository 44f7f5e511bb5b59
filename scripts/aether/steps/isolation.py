"""Whether a build gives each builder its own git worktree (docs/decisions/worktrees.md), and the
one `⚠` line of a safety net the build goes without — for `aether status`, the status line and a
`-p` run's stderr.

- `decide`: on by the mode or `build: isolation:`; only in git, with the build's checkpoint,
  without submodules, on a git new enough — else off, saying why.
- `warning`: the line a running build's decision carries, None once the build is done.
"""

from __future__ import annotations

import os

from aether.core.exceptions import AetherError
from aether.core.text import one_line
from aether.state import checkpoints, settings
from aether.state import worktrees as wt

GIT_OFF = {"git_missing": "git is not installed", "git_timeout": "git took too long to answer"}  # short, for one line


def decide(mode: str | None, checkpoint: dict | None, scope: str, missing: str | None = None) -> dict:
    """{on, why, scope, warning}: does this build give each builder its own worktree? `warning`:
    the one line that says which safety net the build goes without, and why — no checkpoint, or
    builders sharing the tree the mode or config wanted apart — for the status line, `aether status`
    and a `-p` run's stderr; None when both are there (or isolation is off by choice). `missing`:
    why the build has no checkpoint, when its start said (git's failure)."""
    on, source = settings.isolation(mode)
    r, git_off = None, None
    if on or checkpoint is None:
        try:
            r = checkpoints.repo()
            if r is None:
                git_off = "not a git repository"
        except AetherError as exc:  # git missing, or too slow to answer: a build goes on without it
            git_off = GIT_OFF.get(exc.code) or one_line(exc.message, 120)
    lost = None if checkpoint is not None else (git_off or one_line(missing or "the checkpoint could not be made", 120))
    shared = None  # why builders share the tree the mode or config wanted apart
    if not on:
        why = f"off ({source})"
    elif r is None:
        shared = git_off
        why = "off: the project is not in a git repository" if git_off == "not a git repository" else f"off: {git_off}"
    elif checkpoint is None:
        shared = lost
        why = "off: the build has no checkpoint to start the worktrees from"
    elif os.path.exists(os.path.join(r.top, ".gitmodules")):
        shared = "the repository has submodules"
        why = "off: the repository has submodules, whose commits a merge-back could lose"
    elif old := _git_too_old(r):
        shared = old
        why = f"off: {old} (the worktrees need git {'.'.join(map(str, wt.MIN_GIT))} or newer)"
    else:
        return {"on": True, "why": f"on ({source}): each builder works in its own git worktree", "scope": scope, "warning": None}
    return {"on": False, "why": why, "scope": scope, "warning": warning_line(lost, shared)}


def _git_too_old(r: checkpoints.Repo) -> str | None:
    """`git 2.16 is too old` when the git on PATH is older than the worktrees need, else None."""
    try:
        version = checkpoints.git_version(r.top)
    except AetherError:
        return None  # the repository answered a moment ago: the worktrees' own calls will say what fails
    if version is None or version >= wt.MIN_GIT:
        return None
    return f"git {version[0]}.{version[1]} is too old"


def warning_line(lost: str | None, shared: str | None) -> str | None:
    """`⚠ no checkpoint · builders share one tree (not a git repository)`: the safety nets a build
    goes without, and why (each reason once); None when it goes without neither."""
    nets = (["no checkpoint"] if lost else []) + (["builders share one tree"] if shared else [])
    if not nets:
        return None
    reasons = list(dict.fromkeys(r for r in (lost, shared) if r))
    return f"⚠ {' · '.join(nets)} ({'; '.join(reasons)})"


def warning(run: dict | None) -> str | None:
    """The safety-net warning of a build's run (its isolation decision's), while the run goes on."""
    if not isinstance(run, dict) or run.get("done"):
        return None
    iso = run.get("isolation")
    said = iso.get("warning") if isinstance(iso, dict) else None
    return said if isinstance(said, str) and said else None
