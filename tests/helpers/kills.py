"""Kills at named points: a step of the helper run in a child process (a small driver that imports
aether, patches one of its functions and runs the command) that SIGKILLs its whole process group
— itself and the git it runs, as a killed session would — at the named point; and what the tests
check afterwards: the user's HEAD, index and branches, and where a builder's work is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from .git import git_output

PY = sys.executable

# argv: the point as JSON (or "null"), then the command's words. The point: {"at": "module:function",
# "when": "before" | "after" | "inside", "git": [first words of a git call] (only those calls count),
# "nth": which matching call (1), "once": [globs that all exist while the call runs] (inside),
# "returns": {"module:function": value} functions that answer value instead (an older git …)}.
DRIVER = r"""
import glob, importlib, json, os, signal, sys, threading, time

point = json.loads(sys.argv[1])


def die():
    os.killpg(os.getpgrp(), signal.SIGKILL)


for at, value in (point or {}).get("returns", {}).items():
    module_name, name = at.split(":")
    setattr(importlib.import_module(module_name), name, lambda *args, value=value, **kwargs: value)

if point and point.get("at"):
    module_name, name = point["at"].split(":")
    module = importlib.import_module(module_name)
    real = getattr(module, name)
    seen = [0]

    def watch(globs):
        while not all(glob.glob(g) for g in globs):
            time.sleep(0.0005)
        die()

    def patched(*args, **kwargs):
        want = point.get("git")
        hit = want is None or list(args[0][: len(want)]) == want
        if hit:
            seen[0] += 1
            hit = seen[0] == point.get("nth", 1)
        if hit and point["when"] == "before":
            die()
        if hit and point["when"] == "inside":
            threading.Thread(target=watch, args=(point["once"],), daemon=True).start()
        out = real(*args, **kwargs)
        if hit:
            die()
        return out

    setattr(module, name, patched)

from aether.cli import main

print("ready", flush=True)
main(sys.argv[2:])
"""


def start(root, point: dict | None, *args, input: str | None = None, env: dict | None = None) -> subprocess.Popen:
    """The driver running `aether ARGS` in `root`, in a process group of its own, once it said ready."""
    proc = subprocess.Popen(
        [PY, "-c", DRIVER, json.dumps(point), *map(str, args)],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((input or "").encode("utf-8"))
    proc.stdin.close()
    proc.stdin = None  # all of it sent: communicate() has nothing more to write
    assert proc.stdout.readline().strip() == b"ready"
    return proc


def killed_at(root, point: dict, *args, input: str | None = None, env: dict | None = None) -> None:
    """`aether ARGS`, killed at `point`: fails the test unless the kill happened there."""
    proc = start(root, point, *args, input=input, env=env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, out, err)


def kill_after(proc: subprocess.Popen, seconds: float | None) -> bool:
    """SIGKILL the driver's process group `seconds` after it said ready (None: let it finish); True
    when the kill landed, False when it had finished first — and then it must have succeeded."""
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, -signal.SIGKILL), (proc.returncode, out, err)
    return proc.returncode == -signal.SIGKILL


# ---------------------------------------------------------------- what the tests check


def users_view(root) -> dict:
    """What the colony must never change: HEAD, the index's entries, the user's branches."""
    branches = git_output(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/").splitlines()
    return {
        "head": git_output(root, "symbolic-ref", "-q", "HEAD", check=False) + git_output(root, "rev-parse", "HEAD"),
        "index": git_output(root, "ls-files", "-s"),  # git.run never refreshes the index it reads
        "branches": [line for line in branches if not line.startswith("refs/heads/aether/")],
    }


def kept_refs(root) -> list:
    """The refs the colony keeps results on: `aether/…` branches and `refs/aether/kept/…`."""
    out = git_output(root, "for-each-ref", "--format=%(refname)", "refs/heads/aether/", "refs/aether/kept/")
    return [ref.removeprefix("refs/heads/") for ref in out.split()]


def where(root, path: str, text: str) -> list:
    """Where `text` is in `path`: "project" when the project's file holds it, and each kept ref whose
    version of the file does."""
    found = []
    full = root / path
    if full.is_file() and text in full.read_text("utf-8"):
        found.append("project")
    for ref in kept_refs(root):
        shown = subprocess.run(["git", "show", f"{ref}:{path}"], cwd=root, capture_output=True, text=True)
        if shown.returncode == 0 and text in shown.stdout:
            found.append(ref)
    return found


def worktrees_listed(root) -> list:
    """The worktrees git lists besides the project's own, with `locked` when git left one locked."""
    out = git_output(root, "worktree", "list", "--porcelain").split("\n\n")
    return [block.strip() for block in out[1:] if block.strip()]
