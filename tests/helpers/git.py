"""git in a test repository: the test's own calls (never the helper's), with a fixed identity."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# A fixed identity and plain output, whatever the machine's git configuration.
CONFIG = ("-c", "user.name=Dev", "-c", "user.email=dev@example.com", "-c", "commit.gpgsign=false", "-c", "core.quotepath=false")


def run(root, *args) -> subprocess.CompletedProcess:
    """`git ARGS` in `root`. GIT_OPTIONAL_LOCKS=0: a test's own `git status` never refreshes the
    index it is checking."""
    return subprocess.run(["git", *CONFIG, *args], cwd=root, capture_output=True, text=True, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})


def git_output(root, *args, check=True) -> str:
    """What `git ARGS` printed, as printed (trailing newline kept)."""
    proc = run(root, *args)
    if check:
        assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


def git(root, *args, check=True) -> str:
    """What `git ARGS` printed, stripped (a hash, a name, or "" when nothing)."""
    return git_output(root, *args, check=check).strip()


def init_repo(root: Path, files: dict[str, str], message: str = "initial") -> None:
    """`root` a git repository whose one commit holds `files` ({path: text})."""
    git(root, "init", "-q")
    for path, text in files.items():
        full = Path(root) / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, encoding="utf-8")
    git(root, "add", *files)
    git(root, "commit", "-q", "-m", message)
