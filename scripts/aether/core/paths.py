"""Where state lives: the project's `.aether/` and the user's global `~/.aether/`.

The project root is, in this order: the project of `AETHER_DATA_DIR` (`<project>/.aether/data`);
`CLAUDE_PROJECT_DIR`, which Claude Code sets for its hooks (the session's project, wherever the
hook's working folder is); else the nearest folder, walking up from the working directory, that
holds `.aether/`, else the git top level, else the working directory. `AETHER_DATA_DIR`
overrides the data folder, `AETHER_HOME` the global folder.
"""

from __future__ import annotations

import os
from functools import cache


@cache
def home_dir() -> str:
    """The global folder (`~/.aether`, or `AETHER_HOME`)."""
    env = os.environ.get("AETHER_HOME")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    return os.path.join(os.path.expanduser("~"), ".aether")


def plugin_file(*parts: str) -> str:
    """A file of the plugin (its commands, its agents): under `CLAUDE_PLUGIN_ROOT`, which Claude
    Code sets for the plugin's hooks and its mod's calls (a marketplace install keeps the helper in
    a venv of its own, away from the plugin's files), else the checkout this package lives in."""
    root = os.environ.get("CLAUDE_PLUGIN_ROOT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    return os.path.join(root, *parts)


@cache
def project_root() -> str:
    """The project this invocation works on (see the module docstring)."""
    env = os.environ.get("AETHER_DATA_DIR")
    if env:
        data = os.path.abspath(os.path.expanduser(env))
        parent = os.path.dirname(data)
        if os.path.basename(data) == "data" and os.path.basename(parent) == ".aether":
            return os.path.dirname(parent)
    claude = os.environ.get("CLAUDE_PROJECT_DIR")
    if claude and os.path.isabs(claude) and os.path.isdir(claude):
        return os.path.normpath(claude)
    cwd = os.getcwd()
    global_home = os.path.realpath(home_dir())
    git_top = None
    here = cwd
    while True:
        candidate = os.path.join(here, ".aether")
        if os.path.isdir(candidate) and os.path.realpath(candidate) != global_home:
            return here
        if git_top is None and os.path.exists(os.path.join(here, ".git")):
            git_top = here
        parent = os.path.dirname(here)
        if parent == here:
            return git_top or cwd
        here = parent


def aether_dir() -> str:
    """The project's `.aether/` folder."""
    return os.path.join(project_root(), ".aether")


@cache
def data_dir() -> str:
    """The project's state folder (`.aether/data`, or `AETHER_DATA_DIR`)."""
    env = os.environ.get("AETHER_DATA_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    return os.path.join(aether_dir(), "data")


def in_git_repo() -> bool:
    """True when the project root is inside a git work tree (a `.git` above or at it)."""
    here = project_root()
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return True
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent


@cache
def project_id() -> str:
    """A stable id for this project across sessions: a hash of its git remote URL (origin,
    else the first remote), else of its real path. Used to count learnings per project."""
    import hashlib  # noqa: PLC0415 — start-up: hashlib (OpenSSL) only where something is hashed

    root = project_root()
    remote = _git_remote_url(root)
    basis = f"remote:{remote}" if remote else f"path:{os.path.realpath(root)}"
    return "proj_" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:12]


def _git_remote_url(root: str) -> str | None:
    """Read the remote URL from .git/config without running git (start-up cost)."""
    git = os.path.join(root, ".git")
    if os.path.isfile(git):  # worktree or submodule: "gitdir: <path>"
        try:
            with open(git, encoding="utf-8") as fh:
                line = fh.readline().strip()
        except OSError:
            return None
        if not line.startswith("gitdir:"):
            return None
        git = os.path.join(root, line.split(":", 1)[1].strip())
        common = os.path.join(git, "commondir")
        if os.path.isfile(common):
            with open(common, encoding="utf-8") as fh:
                git = os.path.join(git, fh.read().strip())
    try:
        with open(os.path.join(git, "config"), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    section = None
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            section = line
        elif section and section.startswith('[remote "') and line.replace(" ", "").startswith("url="):
            name = section[len('[remote "') :].rstrip('"]')
            urls.setdefault(name, line.split("=", 1)[1].strip())
    return urls.get("origin") or next(iter(urls.values()), None)
