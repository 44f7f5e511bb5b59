"""Git checkpoints: snapshots of the working tree kept as refs, and abort tags.

A checkpoint is a commit made through a temporary index: the user's index is copied (for its
stat cache) to a temp file, `git add -A` runs against the copy (so .gitignore is respected and
untracked files are captured), then `write-tree`, `commit-tree` (parent HEAD when there is
one) and `update-ref refs/aether/checkpoints/phase-<N>-<unix>`. HEAD, the user's index, the
working tree and every branch stay untouched. The colony's folder (`.aether/`: state, briefs, the
builders' worktrees) is never part of a snapshot, whatever .gitignore and info/exclude say of it
(files of it the user tracks aside; never the state, which the store owns); nothing is force-added.

Records `{ref, commit, tree, parent, phase, created_at, label}` go to checkpoints.json (newest
last, the last MAX_CHECKPOINTS kept; the refs of dropped records are deleted).
"""

from __future__ import annotations

import os
import re

from aether.core import clock, containment, paths
from aether.core.exceptions import AetherError, input_error, state_error
from aether.state import store

REF_PREFIX = "refs/aether/checkpoints/"
WORKTREES = ".aether/worktrees"  # the builders' worktrees, relative to the project
ABORT_TAG = "aether/phase-{phase}-aborted"  # repeats get -2, -3, …
MAX_CHECKPOINTS = 50  # records (and refs) kept
GIT_TIMEOUT_SECONDS = 60  # `git add -A` on a large tree can take a while
MAX_LABEL_LENGTH = 200
# Checkpoint commits and abort tags are Aether's, not the user's.
IDENTITY = {"name": "Aether", "email": "aether@localhost"}


# ---------------------------------------------------------------- running git


# Git variables the helper's git keeps: where git's own programs are, the user's settings files
# (safe.directory …: they name no repository — core.worktree and core.bare count only in the
# repository's own config) and tracing. Every other GIT_* variable goes: each one locates the
# repository, its objects, refs, index or config (`git rev-parse --local-env-vars`, GIT_NAMESPACE,
# GIT_CEILING_DIRECTORIES …) or changes what a command does, and the project's repository is the
# one its folder is in.
KEPT_GIT_VARS = ("GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM")
KEPT_GIT_PREFIXES = ("GIT_TRACE",)


def git_env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT_GIT_VARS or k.startswith(KEPT_GIT_PREFIXES)}
    stamp = f"@{int(clock.now())} +0000"
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",  # read-only commands never refresh the user's index
        GIT_AUTHOR_NAME=IDENTITY["name"],
        GIT_AUTHOR_EMAIL=IDENTITY["email"],
        GIT_COMMITTER_NAME=IDENTITY["name"],
        GIT_COMMITTER_EMAIL=IDENTITY["email"],
        GIT_AUTHOR_DATE=stamp,
        GIT_COMMITTER_DATE=stamp,
        LC_ALL="C",
    )
    env.update(extra or {})
    return env


# git commands that change nothing a kill could leave unaccounted for: they read, or only add
# objects (kept by no ref, they are garbage git collects). With a temporary index (GIT_INDEX_FILE)
# the index commands write only that index.
GIT_READS = frozenset(
    (
        "rev-parse",
        "status",
        "diff",
        "diff-tree",
        "diff-index",
        "diff-files",
        "show",
        "ls-files",
        "ls-tree",
        "cat-file",
        "for-each-ref",
        "log",
        "rev-list",
        "merge-base",
        "config",
        "symbolic-ref",
        "hash-object",
        "write-tree",
        "commit-tree",
        "mktree",
        "merge-tree",
        "check-ignore",
        "check-attr",
        "show-ref",
        "version",
        "var",
    )
)
GIT_TEMP_INDEX = frozenset(("read-tree", "add", "update-index"))


def _changes_repository(args: list, env: dict | None) -> bool:
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] in GIT_READS or words[:2] in (["worktree", "list"], ["reflog", "show"]):
        return False
    if words[0] == "update-ref" and "-d" not in args:  # a new checkpoint's ref: recorded after it is made
        return False
    index_only = words[0] in GIT_TEMP_INDEX or (words[0] == "rm" and "--cached" in args)
    return not (index_only and env and env.get("GIT_INDEX_FILE"))


def git(args: list, cwd: str, *, env: dict | None = None, check: bool = True, input: bytes | None = None, raw: bool = False):
    """Run git; returns the CompletedProcess (stdout/stderr as text; stdout as bytes with `raw`).
    Raises AetherError on a missing git, a timeout, or (with check) a non-zero exit. A command
    that changes the repository finds what the call changed so far written (`store.flush`): what
    the step recorded before it is on disk if the process dies during it."""
    import subprocess  # noqa: PLC0415 — start-up: subprocess only where a program runs

    if _changes_repository(args, env):
        store.flush()
    cmd = ["git", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "core.quotepath=false", *args]
    try:
        proc: subprocess.CompletedProcess = subprocess.run(
            cmd, cwd=cwd, env=env or git_env(), input=input, capture_output=True, timeout=GIT_TIMEOUT_SECONDS
        )
    except FileNotFoundError:
        raise state_error(
            "git_missing", "git is not installed (or not on PATH); install git to get checkpoints, or work outside a git repository"
        ) from None
    except subprocess.TimeoutExpired:
        raise state_error(
            "git_timeout",
            f"`git {args[0]}` took longer than {GIT_TIMEOUT_SECONDS}s in "
            f"{cwd}; check the repository (a huge untracked folder "
            f"missing from .gitignore?)",
        ) from None
    proc.stdout = proc.stdout if raw else proc.stdout.decode("utf-8", "replace")
    proc.stderr = proc.stderr.decode("utf-8", "replace")
    if check and proc.returncode != 0:
        raise _failure(args, cwd, proc)
    return proc


_LOCKED = re.compile(r"Unable to create '([^'\n]+\.lock)': File exists")


def _failure(args: list, cwd: str, proc) -> AetherError:
    """The error of a git command that failed: a lock it could not take is named, with the
    command that removes it; otherwise git's first `fatal:`/`error:` line (else its last)."""
    command = " ".join([a for a in args if not a.startswith("--git-dir=") and not a.startswith("--work-tree=")][:2])
    locked = _LOCKED.search(proc.stderr)
    if locked:
        path = locked.group(1)
        return state_error(
            "git_locked",
            f"`git {command}` could not lock {path}: another git process is using it, "
            f"or one that stopped left it behind; when no git runs there, remove it "
            f"(rm '{path}') and run the command again",
            path=path,
        )
    return state_error("git_failed", f"`git {command}` failed in {cwd}: {said(proc.stderr)}", git_exit=proc.returncode)


SAID_LINES = 4  # lines of git's message kept: its `fatal:` line and the advice that follows it


def said(stderr: str) -> str:
    """What git said about a failure: its first `fatal:`/`error:` line with the lines that go on
    from it (git's advice: "use 'add -f -f' to override, or 'unlock' and 'prune' …", `hint:`
    lines), up to SAID_LINES; else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    first = next((i for i, line in enumerate(lines) if line.startswith(("fatal:", "error:"))), None)
    if first is None:
        return lines[-1] if lines else "no message"
    kept = [lines[first]]
    for line in lines[first + 1 : first + SAID_LINES]:
        if line.startswith(("fatal:", "error:", "warning:")):
            break
        kept.append(line)
    return " ".join(kept)


_VERSION = re.compile(r"git version (\d+)\.(\d+)")


def git_version(cwd: str) -> tuple | None:
    """(major, minor) of the git on PATH (`git version 2.39.5`, `… (Apple Git-…)`, `….windows.1`),
    None when its answer does not say. Raises AetherError when git is missing."""
    found = _VERSION.match(git(["version"], cwd, check=False).stdout.strip())
    return (int(found.group(1)), int(found.group(2))) if found else None


class Repo:
    """The git work tree holding the project, with what a snapshot needs to know."""

    def __init__(self, top: str, index: str, head: str | None, data_rel: str | None, prefix: str = ""):
        self.top = top
        self.index = index  # the user's index file (read, never written)
        self.head = head  # HEAD's commit, None in a repository without commits
        self.data_rel = data_rel  # the state folder relative to top, when it lies inside
        self.prefix = prefix  # the project's folder relative to top ("" at the top)
        self.worktrees_rel = f"{prefix}{WORKTREES}"  # the builders' worktrees (never part of a snapshot)
        self.colony_rel = f"{prefix}.aether"  # the colony's folder: no file of it the user does not track is snapshotted

    def excluded(self, path: str) -> bool:
        """Whether `path` is the colony's (its state, its folder): never removed by a restore."""
        return any(rel and (path == rel or path.startswith(rel + "/")) for rel in (self.data_rel, self.worktrees_rel, self.colony_rel))

    def pathspec(self) -> list:
        """`-- .` without the colony's state and the builders' worktrees."""
        return ["--", "."] + [exclude_spec(rel) for rel in (self.data_rel, self.worktrees_rel) if rel]


def below(rel: str) -> str:
    """A pathspec of everything under `rel`. Not the literal `rel`: when `rel` or a folder above it
    is ignored (`.aether/` in info/exclude, or in the user's .gitignore as `.aether`, `/.aether/`,
    `*` …), `git add` counts a literal pathspec (an exclude too) as naming an ignored path and fails
    ("The following paths are ignored …"); a pattern whose first character is escaped has no
    literal prefix for that check, and its `*` (which crosses `/` in a pathspec) reaches every path
    below `rel`."""
    escaped = re.sub(r"([\\*?\[])", r"\\\1", rel)
    return f"{escaped if escaped.startswith(chr(92)) else chr(92) + escaped}/*"


def exclude_spec(rel: str) -> str:
    """A pathspec that leaves out `rel` and everything under it, whatever ignores it (`below`)."""
    return f":(exclude){below(rel)}"


def repo() -> Repo | None:
    """The repository of the project, or None outside git (no git call when no .git exists)."""
    if not paths.in_git_repo():
        return None
    root = paths.project_root()
    ask = ["rev-parse", "--is-inside-work-tree", "--show-toplevel", "--git-path", "index"]
    proc = git(ask + ["HEAD^{commit}"], root, check=False)  # one call in the usual case
    lines = proc.stdout.splitlines()
    head = lines[3] if proc.returncode == 0 and len(lines) == 4 else None
    if head is None:  # no commit yet (or not a work tree): ask without HEAD
        proc = git(ask, root, check=False)
        lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) < 3 or lines[0] != "true":
        return None
    top = lines[1]
    index = lines[2] if os.path.isabs(lines[2]) else os.path.join(root, lines[2])
    data = os.path.realpath(paths.data_dir())
    rel = os.path.relpath(data, os.path.realpath(top)).replace(os.sep, "/")
    data_rel = None if rel == ".." or rel.startswith("../") else rel
    prefix = os.path.relpath(os.path.realpath(root), os.path.realpath(top)).replace(os.sep, "/")
    return Repo(top, index, head, data_rel, "" if prefix == "." else prefix + "/")


class TempIndex:
    """A private index file for one operation, seeded (for its stat cache) from the index file
    `seed` when one is given: the index it copies is never written, nor locked."""

    def __init__(self, seed: str | None = None):
        self.seed = seed

    def __enter__(self):
        import shutil  # noqa: PLC0415 — start-up: shutil only where files are copied
        import tempfile  # noqa: PLC0415 — start-up: tempfile (~5 ms) only where a temp file is made

        self.dir = tempfile.mkdtemp(prefix="aether-index-")
        self.path = os.path.join(self.dir, "index")
        if self.seed and os.path.isfile(self.seed):
            try:
                # copy2 keeps the index's mtime: git's "racy" check compares file mtimes with
                # it, so a newer copy would make git trust stale stat data and miss edits.
                shutil.copy2(self.seed, self.path)
            except OSError:
                pass  # an empty index only costs speed
        self.env = git_env({"GIT_INDEX_FILE": self.path})
        return self

    def mentions(self, rel: str) -> bool:
        """Whether the seeded index may hold paths under `rel`: a byte search of the file,
        cheaper than asking git (index v4 compresses paths, so there the answer is always yes)."""
        try:
            with open(self.path, "rb") as fh:
                raw = fh.read()
        except OSError:
            return False
        return raw[4:8] == b"\x00\x00\x00\x04" or (rel + "/").encode("utf-8") in raw

    def __exit__(self, *exc):
        import shutil  # noqa: PLC0415 — start-up: shutil only where files are copied

        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def snapshot_commit(r: Repo, message: str) -> tuple[str, str]:
    """(commit, tree): a commit of the working tree as it is (untracked files included),
    HEAD its parent; no ref points at it yet."""
    tree = snapshot_tree(r)
    args = ["commit-tree", tree, "-m", message]
    if r.head:
        args += ["-p", r.head]
    return git(args, r.top).stdout.strip(), tree


def snapshot_tree(r: Repo) -> str:
    """The tree of the working tree as it is now: its tracked files, and the untracked ones git
    does not ignore — never an untracked file of the colony's folder, however .gitignore and
    info/exclude treat it (nothing is force-added), nor colony state or the builders' worktrees."""
    with TempIndex(r.index) as idx:
        git(["add", "-A", *r.pathspec(), exclude_spec(r.colony_rel)], r.top, env=idx.env)
        if idx.mentions(r.colony_rel):  # files of .aether/ the user tracks (config.yaml …): as they are now
            tracked = [below(r.colony_rel), *r.pathspec()[2:]]
            if git(["ls-files", "-z", "--", *tracked], r.top, env=idx.env).stdout:  # `add -u` fails on a pathspec matching nothing
                git(["add", "-u", "--", *tracked], r.top, env=idx.env)
        if r.data_rel and idx.mentions(r.data_rel):  # state files the user committed stay out too
            git(["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", r.data_rel], r.top, env=idx.env)
        return git(["write-tree"], r.top, env=idx.env).stdout.strip()


# ---------------------------------------------------------------- the colony's files, out of the user's git commands

# The comment above the line `exclude_colony` adds to the repository's own `info/exclude`.
EXCLUDE_COMMENT = "# Aether: the colony's files (state, briefs, builders' worktrees), left alone by git stash -u, clean -fd, add -A"


def exclude_line(r: Repo) -> str:
    """The `info/exclude` pattern of the project's `.aether/`, anchored at the repository's top."""
    return "/" + re.sub(r"([\\*?\[])", r"\\\1", f"{r.prefix}.aether") + "/"


def exclude_colony(r: Repo | None = None) -> str | None:
    """List the project's `.aether/` in the repository's `info/exclude` (in its common git folder,
    which its worktrees share), so the user's `git stash -u`, `git clean -fd` and `git add -A` leave
    the colony's files alone; the user's `.gitignore` is never touched, and files of `.aether/` they
    track stay tracked. Appended once (the line is looked for first). None when it is listed (or
    outside git); else why it could not be, for a warning: the colony works on without it."""
    r = r or repo()
    if r is None:
        return None
    proc = git(["rev-parse", "--git-common-dir"], r.top, check=False)
    common = proc.stdout.strip()
    if proc.returncode != 0 or not common:
        return f"the repository's git folder could not be found ({said(proc.stderr)})"
    path = os.path.join(r.top, common, "info", "exclude")  # git answers relative to r.top, or absolute
    line = exclude_line(r)
    try:
        if os.path.islink(path) or os.path.islink(os.path.dirname(path)):
            return f"{path} is a symbolic link: list {line} there yourself"
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except FileNotFoundError:
            text = ""
        if line in text.splitlines():
            return None
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:  # one appending write: the user's lines stay as they are
            fh.write(("\n" if text and not text.endswith("\n") else "") + f"{EXCLUDE_COMMENT}\n{line}\n")
    except OSError as exc:
        return f"{line} could not be listed in {path}: {exc.strerror or exc}"
    return None


# ---------------------------------------------------------------- checkpoints


def _clean_label(label: str) -> str:
    if not isinstance(label, str) or not label.strip():
        raise input_error("invalid_label", "a checkpoint needs a label (what it is for)")
    label = " ".join(label.split())
    return label if len(label) <= MAX_LABEL_LENGTH else label[: MAX_LABEL_LENGTH - 1] + "…"


def _check_phase(phase) -> None:
    if phase is not None and (isinstance(phase, bool) or not isinstance(phase, int) or phase < 0):
        raise input_error("invalid_argument", f"phase must be a whole number ≥ 0, got {phase!r}")


def snapshot(label: str, phase: int | None) -> dict | None:
    """Make a checkpoint commit and its ref; returns the record (not yet stored), or None
    outside git. Raises AetherError when git is missing or fails."""
    label = _clean_label(label)
    _check_phase(phase)
    r = repo()
    if r is None:
        return None
    commit, tree = snapshot_commit(r, f"aether checkpoint: {label}")
    stamp = int(clock.now())
    base = REF_PREFIX + (f"phase-{phase}-{stamp}" if phase is not None else f"colony-{stamp}")
    for ref in free_names(r, base):
        # An empty old value makes update-ref refuse to overwrite an existing ref.
        proc = git(["update-ref", ref, commit, ""], r.top, check=False)
        if proc.returncode == 0:
            break
        if git(["rev-parse", "-q", "--verify", ref], r.top, check=False).returncode != 0:
            raise _failure(["update-ref", ref], r.top, proc)  # not taken, blocked: a ref named like a folder on its way
    else:
        raise state_error("git_failed", f"cannot create {base}: every name was taken while it was made; try again")
    return {"ref": ref, "commit": commit, "tree": tree, "parent": r.head, "phase": phase, "created_at": clock.iso(stamp), "label": label}


def remember(data: dict, record: dict) -> list:
    """Add a record to loaded checkpoints.json data (inside a store update); returns the
    records dropped by the cap (call `forget` on them after the write)."""
    items = data["checkpoints"]
    items.append(record)
    dropped = items[:-MAX_CHECKPOINTS]
    del items[:-MAX_CHECKPOINTS]
    return dropped


def forget(dropped: list) -> None:
    """Delete the refs of records that fell off the list (best effort)."""
    r = repo() if dropped else None
    if r is None:
        return
    for record in dropped:
        ref = record.get("ref") if isinstance(record, dict) else None
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            git(["update-ref", "-d", ref], r.top, check=False)


def create(label: str, phase: int | None = None) -> dict | None:
    """Snapshot the working tree and record it; None outside a git repository."""
    record = snapshot(label, phase)
    if record is None:
        return None
    dropped = store.update("checkpoints", lambda data: remember(data, record))
    forget(dropped)
    return record


def latest(phase: int | None = None) -> dict | None:
    """The newest recorded checkpoint (of `phase` when given), or None."""
    for record in reversed(store.read("checkpoints")["checkpoints"]):
        if phase is None or record.get("phase") == phase:
            return record
    return None


# ---------------------------------------------------------------- abort tags


def tag_abort(phase: int, reason: str) -> str | None:
    """Tag a snapshot of the working tree as `aether/phase-N-aborted` (then -2, -3, …) with an
    annotated message `Aborted: <reason>`; returns the tag name, None outside git.

    The tagged commit holds the files as the aborted build left them (parent: HEAD), so the
    failed attempt can be inspected later without the user committing anything."""
    _check_phase(phase)
    if not isinstance(reason, str) or not reason.strip():
        raise input_error("invalid_reason", "an abort tag needs a reason")
    r = repo()
    if r is None:
        return None
    commit, _tree = snapshot_commit(r, f"aether: phase {phase} aborted")
    base = ABORT_TAG.format(phase=phase)
    message = f"Aborted: {reason.strip()}"
    for ref in free_names(r, f"refs/tags/{base}"):
        name = ref.removeprefix("refs/tags/")
        proc = git(["tag", "-a", name, "-F", "-", commit], r.top, check=False, input=message.encode("utf-8"))
        if proc.returncode == 0:
            return name
        if git(["rev-parse", "-q", "--verify", ref], r.top, check=False).returncode != 0:
            raise state_error("git_failed", f"cannot create tag {name}: {said(proc.stderr)}")
    raise state_error("git_failed", f"cannot create tag {base}: every name was taken while it was made; try again")


def held(r: Repo, base: str) -> dict:
    """{ref: commit} of the refs named `base` or `base-…`."""
    out = git(["for-each-ref", "--format=%(refname) %(objectname)", base, f"{base}-*"], r.top, check=False).stdout
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def free_names(r: Repo, base: str) -> list:
    """`base`, `base-2`, `base-3` … that no ref holds yet, as many as there are taken ones plus one:
    a loop over them ends, and finds a free name unless another process takes them meanwhile."""
    taken = held(r, base)
    names = [base if n == 1 else f"{base}-{n}" for n in range(1, len(taken) + 2)]
    return [name for name in names if name not in taken]


# ---------------------------------------------------------------- restore


def _is_saved(r: Repo, tree: str, records: list) -> bool:
    """True when the working tree (as `tree`) equals a recorded checkpoint or HEAD."""
    if any(isinstance(rec, dict) and rec.get("tree") == tree for rec in records):
        return True
    if r.head is None:
        return False
    diff = git(["diff-tree", "-r", "--name-only", f"{r.head}^{{tree}}", tree, *r.pathspec()], r.top)
    return diff.stdout.strip() == ""


def restore(ref: str, force: bool = False, checkpoints_data: dict | None = None) -> dict:
    """Put a checkpoint's files back in the working tree (HEAD, the index and colony state are
    untouched); files created since the checkpoint are removed.

    Refuses (`unsaved_changes`) when the working tree holds changes that no checkpoint and no
    commit has; with force, those changes are first saved as a new checkpoint, so nothing is lost.
    Every refusal comes before a file is touched. `checkpoints_data`: checkpoints.json as loaded
    inside the caller's store update (which holds its lock); the safety checkpoint is recorded
    there and the answer's `dropped` lists the records to `forget` after the write. Without it,
    checkpoints.json is read and the safety checkpoint recorded on its own.
    """
    r = repo()
    if r is None:
        raise state_error("not_a_git_repo", "checkpoints need a git repository; this project is not in one")
    if not isinstance(ref, str) or not ref.strip() or ref.startswith("-"):
        raise input_error("invalid_argument", "name the checkpoint to restore (its ref or commit)")
    proc = git(["rev-parse", "-q", "--verify", f"{ref.strip()}^{{commit}}"], r.top, check=False)
    if proc.returncode != 0:
        raise input_error("unknown_checkpoint", f"no checkpoint {ref!r} in this repository; checkpoints.json lists them")
    commit = proc.stdout.strip()
    target_tree = git(["rev-parse", f"{commit}^{{tree}}"], r.top).stdout.strip()
    current_tree = snapshot_tree(r)
    records = (checkpoints_data or store.read("checkpoints"))["checkpoints"]
    safety, dropped = None, []
    if current_tree != target_tree and not _is_saved(r, current_tree, records):
        if not force:
            raise state_error(
                "unsaved_changes",
                "the working tree has changes that no checkpoint or commit holds; commit them, "
                "or pass force to save them as a checkpoint first and restore anyway",
            )
        if checkpoints_data is None:
            safety = create("before restore", None)
        else:
            safety = snapshot("before restore", None)
            dropped = remember(checkpoints_data, safety) if safety else []
    added = git(["diff-tree", "-r", "-z", "--name-only", "--diff-filter=A", target_tree, current_tree], r.top).stdout
    removed = []
    for rel in filter(None, added.split("\0")):
        if r.excluded(rel):
            continue
        folder = os.path.realpath(os.path.dirname(os.path.join(r.top, rel)))
        if not containment.inside(folder, os.path.realpath(r.top)):
            continue  # a folder on the way is now a link leading out: not ours to delete in
        try:
            os.unlink(os.path.join(r.top, rel))
            removed.append(rel)
        except FileNotFoundError:
            pass
    with TempIndex() as idx:
        git(["read-tree", target_tree], r.top, env=idx.env)
        if r.data_rel:
            git(["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", r.data_rel], r.top, env=idx.env)
        git(["checkout-index", "-a", "-f"], r.top, env=idx.env)
    return {"ref": ref, "commit": commit, "removed": sorted(removed), "saved_first": safety, "dropped": dropped}
