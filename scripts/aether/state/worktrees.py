"""The builders' git worktrees: worktrees.json, and the git work on them.

Each isolated builder works in `.aether/worktrees/<build>/<node>`, a detached worktree of the
project's repository made from a snapshot of the working tree when the builder was handed out
(the build's checkpoint, or the merged state of its wave so far). A record per worktree tells
what became of it: `active` (a builder works in it), `merged` (its result is in the project),
`passed` (handed on to the retry, debugger or rerun that continues its task), `kept` (a result
that could not be merged, on the branch `aether/<build>/<node>`), `discarded`
(handed out again, or its build abandoned: nothing of it was recorded), `dropped` (a kept branch
the user let go). Only worktrees and branches recorded here are ever removed: never the user's.
"""

from __future__ import annotations

import os

from aether.core import clock, containment
from aether.core.exceptions import state_error
from aether.state import checkpoints, store

MAX_RECORDS = 300  # records kept (active and kept ones are never dropped)
BRANCH_PREFIX = "aether/"  # a kept result's branch: aether/<build>/<node>
STATUSES = ("active", "passed", "merged", "kept", "discarded", "dropped")
OPEN = ("active", "kept")  # records that still hold a worktree or a branch


def rel_path(scope: str, node: str) -> str:
    return f"{checkpoints.WORKTREES}/{scope}/{node}"


def find(data: dict, scope: str, node: str, statuses=OPEN) -> dict | None:
    return next((w for w in reversed(data["worktrees"]) if w.get("scope") == scope and w.get("node") == node
                 and w.get("status") in statuses), None)


def add_record(data: dict, record: dict) -> dict:
    data["worktrees"].append(record)
    ended = [w for w in data["worktrees"] if w.get("status") not in OPEN]
    for w in ended[:max(0, len(data["worktrees"]) - MAX_RECORDS)]:
        data["worktrees"].remove(w)
    return record


def end(record: dict, status: str, **fields) -> None:
    record.update(status=status, ended_at=clock.iso(), **fields)


# ---------------------------------------------------------------- git


def _full(r: checkpoints.Repo, rel: str) -> str:
    return os.path.join(r.top, r.prefix + rel)


def create(r: checkpoints.Repo, rel: str, base: str) -> str:
    """A detached worktree at the project's `rel` from commit `base` (an old one there goes first)."""
    full = _full(r, rel)
    remove(r, rel)
    containment.make_dirs(os.path.dirname(full))
    checkpoints.git(["worktree", "add", "--detach", "--quiet", full, base], r.top)
    return full


def remove(r: checkpoints.Repo, rel: str) -> bool:
    """Remove the worktree at `rel` (files and git's record of it); True when one was there."""
    full = _full(r, rel)
    root = os.path.realpath(os.path.join(r.top, r.worktrees_rel))
    if not containment.inside(os.path.realpath(full), root):
        raise state_error("path_outside_project", f"{rel} is not one of the builders' worktrees", path=rel)
    there = os.path.lexists(full)
    if there:
        checkpoints.git(["worktree", "remove", "--force", "--force", full], r.top, check=False)
    if os.path.lexists(full):
        import shutil  # noqa: PLC0415 — start-up: shutil only where a folder is removed

        shutil.rmtree(full, ignore_errors=True)
    checkpoints.git(["worktree", "prune"], r.top, check=False)
    return there


def result(r: checkpoints.Repo, rel: str, base: str, node: str) -> str | None:
    """The builder's work as a commit on `base` (everything it changed, created or removed in
    its worktree, ignored files and `.aether/` left out), or None when it changed nothing."""
    full = _full(r, rel)
    env = checkpoints.git_env()
    checkpoints.git(["add", "-A", "--", ".", ":(exclude).aether"], full, env=env)
    tree = checkpoints.git(["write-tree"], full, env=env).stdout.strip()
    if tree == checkpoints.git(["rev-parse", f"{base}^{{tree}}"], full).stdout.strip():
        return None
    return checkpoints.git(["commit-tree", tree, "-p", base, "-m", f"aether: {node}'s work"], full, env=env).stdout.strip()


def changes(r: checkpoints.Repo, base: str, commit: str) -> list:
    """[(status A|M|D|T, new mode, path from the project)] between two commits, the project's
    folder only, `.aether/` left out."""
    raw = checkpoints.git(["diff-tree", "-r", "-z", "--no-renames", "--raw", base, commit, "--", r.prefix or "."],
                          r.top).stdout.split("\0")
    out = []
    for i in range(0, len(raw) - 1, 2):
        meta, path = raw[i].split(), raw[i + 1]
        if len(meta) < 5 or not path.startswith(r.prefix):
            continue
        rel = path[len(r.prefix):]
        if rel == ".aether" or rel.startswith(".aether/"):
            continue
        out.append((meta[4][:1], meta[1], rel))
    return out


def blobs(r: checkpoints.Repo, specs: list) -> dict:
    """{"<commit>:<path>": bytes or None (absent)} read in one `git cat-file --batch`."""
    if not specs:
        return {}
    wanted = [f"{commit}:{r.prefix}{path}" for commit, path in specs]
    proc = checkpoints.git(["cat-file", "--batch"], r.top, input=("\n".join(wanted) + "\n").encode("utf-8"),
                           raw=True)
    out, data, pos = {}, proc.stdout, 0
    for (commit, path) in specs:
        end_of_header = data.index(b"\n", pos)
        header = data[pos:end_of_header].split()
        pos = end_of_header + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            out[f"{commit}:{path}"] = data[pos:pos + size]
            pos += size + 1
        else:
            out[f"{commit}:{path}"] = None
    return out


def keep(r: checkpoints.Repo, scope: str, node: str, commit: str) -> str:
    """A branch `aether/<build>/<node>` (then -2, -3 …) on a result that could not be merged."""
    base = f"{BRANCH_PREFIX}{scope}/{node}"
    name, n = base, 1
    while checkpoints.git(["update-ref", f"refs/heads/{name}", commit, ""], r.top, check=False).returncode != 0:
        n += 1
        name = f"{base}-{n}"
    return name


def drop_branch(r: checkpoints.Repo, name: str) -> bool:
    if not name.startswith(BRANCH_PREFIX):
        raise state_error("not_a_colony_branch", f"{name} is not a branch the colony made (they start {BRANCH_PREFIX})")
    return checkpoints.git(["update-ref", "-d", f"refs/heads/{name}"], r.top, check=False).returncode == 0


def on_disk(r: checkpoints.Repo) -> list:
    """The worktrees git knows under the builders' folder, as paths from the project."""
    out = checkpoints.git(["worktree", "list", "--porcelain"], r.top, check=False).stdout
    root = os.path.realpath(os.path.join(r.top, r.worktrees_rel))
    found = []
    for line in out.splitlines():
        if line.startswith("worktree "):
            path = os.path.realpath(line[len("worktree "):])
            if containment.inside(path, root) and path != root:
                found.append(os.path.relpath(path, os.path.join(r.top, r.prefix)).replace(os.sep, "/"))
    if os.path.isdir(root):  # folders left without git's record (a crash between the two)
        for scope in os.listdir(root):
            for node in os.listdir(os.path.join(root, scope)) if os.path.isdir(os.path.join(root, scope)) else ():
                rel = f"{checkpoints.WORKTREES}/{scope}/{node}"
                if rel not in found:
                    found.append(rel)
    return found


def branches(r: checkpoints.Repo) -> dict:
    """{branch: commit} of every `aether/…` branch."""
    out = checkpoints.git(["for-each-ref", "--format=%(refname:short) %(objectname)", f"refs/heads/{BRANCH_PREFIX}"],
                          r.top, check=False).stdout
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def records() -> list:
    return store.read("worktrees")["worktrees"]
