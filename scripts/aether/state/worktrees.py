"""The builders' git worktrees: worktrees.json, and the git work on them.

Each isolated builder works in `.aether/worktrees/<build>/<node>`, a detached worktree of the
project's repository made from a snapshot of the working tree when the builder was handed out
(the build's checkpoint, or the merged state of its wave so far). A record per worktree tells
what became of it: `active` (a builder works in it), `passed` (handed on to the retry or
debugger that continues its task), `merged` (its result is in the project), `kept` (work not
merged — a conflict, a moved HEAD, or a worktree removed with work in it — on the branch
`aether/<build>/<node>`), `discarded` (handed out again, or removed holding no change),
`dropped` (a kept branch let go).

Git runs on a worktree with its own git folder named (`--git-dir`, `--work-tree`): whatever a
builder does to the `.git` file of its copy, the user's index and repository stay untouched.
Only worktrees under `.aether/worktrees/` (reached through no symbolic link), git's entries for
them, and branches this file records are ever removed. git's entries are read from its own files
(`entries`): one a killed `git worktree add` left half-written makes every `git worktree` command fail.
"""

from __future__ import annotations

import os
from functools import lru_cache

from aether.core import clock
from aether.core.exceptions import state_error
from aether.rules import worktrees as worktree_rules
from aether.state import checkpoints, store

MAX_RECORDS = 300  # records kept (active and kept ones are never dropped)
BRANCH_PREFIX = "aether/"  # a kept result's branch: aether/<build>/<node>
# Where a result is kept when git cannot make its branch (a branch `aether`, or `aether/<build>`,
# holds the name's folder): a ref in the colony's own namespace, which no branch or tag can block.
KEPT_REF_PREFIX = "refs/aether/kept/"
STATUSES = ("active", "passed", "merged", "kept", "discarded", "dropped")
OPEN = ("active", "kept")  # records that still hold a worktree or a branch
SCRATCH = "merge"  # the worktree a merge runs in under a git older than 2.38: .aether/worktrees/<build>/merge
RESULT_DATE = "@0 +0000"  # a result commit's dates: the same work gives the same commit, every time
INITIALIZING = "initializing"  # the lock reason git's `worktree add` holds while it works (git runs in the C locale)
MIN_GIT = (2, 17)  # the oldest git the worktrees run on: `git worktree remove` and `worktree add --quiet` came in 2.17
MERGE_TREE_GIT = (2, 38)  # `git merge-tree --write-tree`: a merge with nothing checked out


class Gone(Exception):
    """The worktree (its folder or its git folder) is not there any more."""


def rel_path(scope: str, node: str) -> str:
    return f"{checkpoints.WORKTREES}/{scope}/{node}"


def find(data: dict, scope: str, node: str, statuses=OPEN) -> dict | None:
    return next(
        (w for w in reversed(data["worktrees"]) if w.get("scope") == scope and w.get("node") == node and w.get("status") in statuses), None
    )


def add_record(data: dict, record: dict) -> dict:
    data["worktrees"].append(record)
    ended = [w for w in data["worktrees"] if w.get("status") not in OPEN]
    for w in ended[: max(0, len(data["worktrees"]) - MAX_RECORDS)]:
        data["worktrees"].remove(w)
    return record


def end(record: dict, status: str, **fields) -> None:
    record.update(status=status, ended_at=clock.iso(), **fields)


def records() -> list:
    return store.read("worktrees")["worktrees"]


# ---------------------------------------------------------------- paths


def root(r: checkpoints.Repo) -> str:
    """The builders' folder, refused when it (or a folder on the way) is a symbolic link."""
    project = os.path.join(r.top, r.prefix) if r.prefix else r.top
    path = project
    for part in checkpoints.WORKTREES.split("/"):
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise state_error(
                "path_is_symlink", f"{path} is a symbolic link: the builders' worktrees stay inside the project; remove the link", path=path
            )
    return path


def full(r: checkpoints.Repo, rel: str) -> str:
    """The absolute path of a worktree from its path in the project (only under the builders' folder;
    whether it is still a worktree, and no symbolic link, is `intact`'s to say)."""
    parts = rel.split("/")
    base = checkpoints.WORKTREES.split("/")
    if parts[: len(base)] != base or len(parts) != len(base) + 2 or any(p in ("", ".", "..") for p in parts):
        raise state_error("path_outside_project", f"{rel} is not one of the builders' worktrees", path=rel)
    return os.path.join(root(r), *parts[len(base) :])


def intact(path: str, gitdir: str) -> bool:
    """The worktree's folder and its git folder are there, and the folder is no symbolic link (nor
    reached through one): a folder replaced by a link counts as gone."""
    return (
        os.path.isdir(path)
        and not os.path.islink(path)
        and not os.path.islink(os.path.dirname(path))
        and bool(gitdir)
        and os.path.isdir(gitdir)
    )


def _git(wt_full: str, gitdir: str, args: list, **kw):
    """git on one worktree, its git folder named: never the repository a stray `.git` points to."""
    if not intact(wt_full, gitdir):
        raise Gone(wt_full)
    return checkpoints.git([f"--git-dir={gitdir}", f"--work-tree={wt_full}", *args], wt_full, **kw)


# ---------------------------------------------------------------- making and removing


def create(r: checkpoints.Repo, rel: str, base: str) -> str:
    """A detached worktree at the project's `rel` from commit `base` (one already there goes
    first, and the entries killed `worktree add`s left: under the driver's lock no other is being
    made); returns its git folder."""
    path = full(r, rel)
    remove(r, rel)
    for admin, where in entries(r):
        if unfinished(admin):
            _drop_entry(r, admin, where)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    checkpoints.git(["worktree", "add", "--detach", "--quiet", path, base], r.top)
    return gitdir_of(path)


def gitdir_of(path: str) -> str:
    with open(os.path.join(path, ".git"), encoding="utf-8") as fh:
        line = fh.read().strip()
    gitdir = line[len("gitdir:") :].strip() if line.startswith("gitdir:") else ""
    return gitdir if os.path.isabs(gitdir) else os.path.normpath(os.path.join(path, gitdir))


@lru_cache(maxsize=32)
def _admin_root_of(top: str) -> str | None:
    proc = checkpoints.git(["rev-parse", "--git-common-dir"], top, check=False)
    common = proc.stdout.strip()
    return os.path.realpath(os.path.join(top, common, "worktrees")) if proc.returncode == 0 and common else None


def _admin_root(r: checkpoints.Repo) -> str | None:
    """The repository's folder of worktree entries (`<common git folder>/worktrees`), real path."""
    return _admin_root_of(r.top)


def entries(r: checkpoints.Repo) -> list:
    """[(entry folder, worktree path from the project)] of git's worktree entries whose worktree lies
    in the builders' folder, read from git's own files: an entry a killed `worktree add` left
    half-written makes `git worktree list` (and every `worktree` command) fail."""
    admin_root, real_root = _admin_root(r), os.path.realpath(root(r))
    if admin_root is None or not os.path.isdir(admin_root):
        return []
    out = []
    for name in sorted(os.listdir(admin_root)):
        admin = os.path.join(admin_root, name)
        try:
            with open(os.path.join(admin, "gitdir"), encoding="utf-8", errors="replace") as fh:
                line = fh.read(4096).strip()
        except OSError:
            continue  # not tied to a folder yet: git passes it by
        where = os.path.dirname(line) if line.endswith("/.git") else line
        parts = os.path.relpath(os.path.realpath(where), real_root).split(os.sep) if where else []
        if len(parts) == 2 and ".." not in parts and "." not in parts:
            out.append((admin, f"{checkpoints.WORKTREES}/{parts[0]}/{parts[1]}"))
    return out


def unfinished(admin: str) -> bool:
    """git never finished making this entry (killed inside `worktree add`): no `commondir` yet, or
    still the lock it holds while it works (`initializing`)."""
    try:
        with open(os.path.join(admin, "commondir"), encoding="utf-8", errors="replace") as fh:
            if not fh.read(4096).strip():
                return True
    except OSError:
        return True
    try:
        with open(os.path.join(admin, "locked"), encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip() == INITIALIZING
    except OSError:
        return False


def _drop_entry(r: checkpoints.Repo, admin: str, rel: str) -> None:
    """An entry of the builders' folder git cannot prune (locked, half-written) goes, with what its
    `worktree add` had made of the folder (no builder ever had it: the add never returned)."""
    import shutil  # noqa: PLC0415 — start-up: shutil only where a folder is removed

    store.flush()
    path = full(r, rel)
    if os.path.isdir(path) and not os.path.islink(path) and not os.path.islink(os.path.dirname(path)):
        shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(admin, ignore_errors=True)


def found_as_is(r: checkpoints.Repo, rel: str) -> tuple:
    """(git folder, HEAD commit) of a worktree folder no record describes (a crash between git
    and the record, or worktrees.json lost) — only when its `.git` names one of this repository's
    worktree entries; (None, None) when no work can be read from it."""
    path = full(r, rel)
    try:
        gitdir = gitdir_of(path)
    except (OSError, UnicodeDecodeError):
        return None, None
    admin_root = _admin_root(r)
    if not admin_root or not gitdir or os.path.dirname(os.path.realpath(gitdir)) != admin_root or not intact(path, gitdir):
        return None, None
    head = _git(path, gitdir, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], check=False).stdout.strip()
    return (gitdir, head) if head else (None, None)


def remove(r: checkpoints.Repo, rel: str) -> bool:
    """Remove the worktree at `rel` (files and git's entry for it); True when one was there. A
    symbolic link found in its place (or in its build's) is removed itself, never followed. An entry
    left for it that git does not prune (locked by a `worktree add` that was killed: "a missing but
    locked worktree", or half-written) goes too, so the next `worktree add` there works."""
    store.flush()  # what the call recorded of it is on disk before the folder goes
    path = full(r, rel)
    folder = os.path.dirname(path)
    there = os.path.lexists(path)
    try:
        if os.path.islink(folder):
            os.unlink(folder)
        elif os.path.islink(path):
            os.unlink(path)
        elif there:
            checkpoints.git(["worktree", "remove", "--force", "--force", path], r.top, check=False)
            if os.path.lexists(path):
                import shutil  # noqa: PLC0415 — start-up: shutil only where a folder is removed

                shutil.rmtree(path, ignore_errors=True)
    except OSError as exc:
        raise state_error(
            "worktree_not_removed",
            f"cannot remove {path}: {exc.strerror or exc}; remove it by hand, then run `aether worktrees --clean`",
            path=path,
        ) from None
    if not os.path.lexists(path):
        for admin, where in entries(r):
            if where == rel:  # its folder is gone: the entry is stale, whatever lock it holds
                _drop_entry(r, admin, where)
    checkpoints.git(["worktree", "prune"], r.top, check=False)
    return there


# ---------------------------------------------------------------- a builder's result, merged back


def _result_env() -> dict:
    return checkpoints.git_env({"GIT_AUTHOR_DATE": RESULT_DATE, "GIT_COMMITTER_DATE": RESULT_DATE})


def result(r: checkpoints.Repo, rel: str, gitdir: str, base: str, node: str) -> str | None:
    """The builder's work as a commit on `base` (everything it changed, created or removed in its
    worktree; ignored files, `.aether/` and `.git` left out), or None when it changed nothing.
    Raises Gone when the worktree is not there."""
    path = full(r, rel)
    if not intact(path, gitdir):
        raise Gone(path)
    with checkpoints.TempIndex(os.path.join(gitdir, "index")) as idx:  # the builder's index (and its lock) untouched
        env = {**_result_env(), "GIT_INDEX_FILE": idx.path}
        _git(path, gitdir, ["add", "-A", "--", ".", checkpoints.exclude_spec(".aether"), ":(exclude).git"], env=env)
        tree = _git(path, gitdir, ["write-tree"], env=env).stdout.strip()
    if tree == checkpoints.git(["rev-parse", f"{base}^{{tree}}"], r.top).stdout.strip():
        return None
    return checkpoints.git(["commit-tree", tree, "-p", base, "-m", f"aether: {node}'s work"], r.top, env=env).stdout.strip()


def merge_onto(r: checkpoints.Repo, scope: str, project: str, commit: str) -> tuple:
    """Git's 3-way merge (a cherry-pick: base = the result's parent) of `commit` onto the commit
    `project` (the project as it is now). Returns (merged tree, []) or (None, [{path, why, hunks}]).
    Git 2.38 or newer merges the trees alone (`merge-tree --write-tree`: nothing checked out);
    an older git merges in a scratch worktree."""
    if _merges_trees(r.top):
        rel = rel_path(scope, SCRATCH)
        if os.path.lexists(full(r, rel)) or any(where == rel for _, where in entries(r)):
            remove(r, rel)  # a scratch worktree a killed merge left (a git older than 2.38)
        return _merge_trees(r, project, commit)
    return _merge_in_scratch(r, scope, project, commit)


@lru_cache(maxsize=8)
def _merges_trees(top: str) -> bool:
    version = checkpoints.git_version(top)
    return version is not None and version >= MERGE_TREE_GIT


def _merge_trees(r: checkpoints.Repo, project: str, commit: str) -> tuple:
    """The merge as trees: the project's tree recorded as a child of the result's parent, so that
    parent is the one merge base (a cherry-pick, without `--merge-base`, which came in git 2.40)."""
    env = _result_env()
    base = checkpoints.git(["rev-parse", f"{commit}^"], r.top).stdout.strip()
    tree = checkpoints.git(["rev-parse", f"{project}^{{tree}}"], r.top).stdout.strip()
    ours = checkpoints.git(["commit-tree", tree, "-p", base, "-m", "aether: the project as it is"], r.top, env=env).stdout.strip()
    proc = checkpoints.git(["merge-tree", "--write-tree", "-z", "--name-only", ours, commit], r.top, env=env, check=False)
    fields = proc.stdout.split("\0")
    if proc.returncode == 0 and fields[0]:
        return fields[0], []
    if proc.returncode != 1 or not fields[0]:  # not a conflict: git could not merge at all
        message = (proc.stderr.strip().splitlines() or ["git could not merge it"])[-1]
        return None, [{"path": "(the result)", "why": message, "hunks": []}]
    names = fields[1 : fields.index("", 1)] if "" in fields[1:] else fields[1:]
    conflicts = []
    for name in dict.fromkeys(names):  # a path in two conflicts is named twice
        shown = checkpoints.git(["cat-file", "-p", f"{fields[0]}:{name}"], r.top, check=False, raw=True)
        conflicts.append(_conflict(r, name, _text_hunks(shown.stdout[:200_000]) if shown.returncode == 0 else []))
    return None, conflicts or [{"path": "(the result)", "why": "git could not merge it", "hunks": []}]


def _conflict(r: checkpoints.Repo, name: str, hunks: list) -> dict:
    return {
        "path": name[len(r.prefix) :] if name.startswith(r.prefix) else name,
        "hunks": hunks,
        "why": "changed by both (the same lines, or added twice)"
        if hunks
        else "changed by both in ways that cannot merge (removed on one side, not text)",
    }


def _merge_in_scratch(r: checkpoints.Repo, scope: str, project: str, commit: str) -> tuple:
    """The merge in a scratch worktree (git older than 2.38): a checkout of the whole project."""
    rel = rel_path(scope, SCRATCH)
    gitdir = create(r, rel, project)
    path = full(r, rel)
    try:
        proc = _git(path, gitdir, ["cherry-pick", "--no-commit", "--allow-empty", commit], env=checkpoints.git_env(), check=False)
        if proc.returncode == 0:
            return _git(path, gitdir, ["write-tree"]).stdout.strip(), []
        listed = _git(path, gitdir, ["diff", "--name-only", "-z", "--diff-filter=U"], check=False).stdout
        conflicts = [_conflict(r, name, _hunks(os.path.join(path, name))) for name in listed.split("\0") if name]
        if not conflicts:
            message = (proc.stderr.strip().splitlines() or ["git could not merge it"])[-1]
            conflicts.append({"path": "(the result)", "why": message, "hunks": []})
        return None, conflicts
    finally:
        remove(r, rel)


def _hunks(path: str) -> list:
    try:
        with open(path, "rb") as fh:
            data = fh.read(200_000)
    except OSError:
        return []
    return _text_hunks(data)


def _text_hunks(data: bytes) -> list:
    return worktree_rules.hunks(data.decode("utf-8", "replace"))


def changes(r: checkpoints.Repo, before: str, after: str) -> list:
    """[(status A|M|D|T, new mode, new blob, path from the project)] between two trees/commits,
    the project's folder only, `.aether/` left out (paths exactly as git has them)."""
    raw = checkpoints.git(["diff-tree", "-r", "-z", "--no-renames", "--raw", before, after, "--", r.prefix or "."], r.top).stdout.split(
        "\0"
    )
    out = []
    for i in range(0, len(raw) - 1, 2):
        meta, path = raw[i].split(), raw[i + 1]
        if len(meta) < 5 or not path.startswith(r.prefix):
            continue
        rel = path[len(r.prefix) :]
        if rel == ".aether" or rel.startswith(".aether/"):
            continue
        out.append((meta[4][:1], meta[1], meta[3], rel))
    return out


def content(r: checkpoints.Repo, blob: str, path: str) -> bytes:
    """A blob as the project's working tree holds it (its attributes' filters: line endings …)."""
    return checkpoints.git(["cat-file", "--filters", f"--path={r.prefix}{path}", blob], r.top, raw=True).stdout


# ---------------------------------------------------------------- what a builder did with git in its copy


def head_left(gitdir: str, base: str) -> str | None:
    """Why the worktree's HEAD is no longer its base, detached (None when it is): its builder checked
    out a branch or a commit, committed, reset … — its diff from the base is then not its change."""
    try:
        with open(os.path.join(gitdir, "HEAD"), encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096).strip()
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if head == base:
        return None
    if head.startswith("ref:"):
        return f"it is on the branch {head[4:].strip().removeprefix('refs/heads/')} (a git checkout or switch)"
    return f"it moved to {head[:12]} (a git commit, checkout or reset)"


def _reflog(r: checkpoints.Repo, ref: str, gitdir: str | None = None) -> list:
    """[(commit, date, subject)] of a ref's reflog, newest first (the HEAD of the worktree whose
    git folder is `gitdir`, when given)."""
    args = ([f"--git-dir={gitdir}"] if gitdir else []) + ["reflog", "show", "--date=raw", "--format=%H%x09%gd%x09%gs", ref, "--"]
    out = []
    for line in checkpoints.git(args, r.top, check=False).stdout.splitlines():
        commit, _tab, rest = line.partition("\t")
        selector, _tab, subject = rest.partition("\t")
        out.append((commit, selector.rpartition("@{")[2].rstrip("}"), subject))
    return out


def put_back(r: checkpoints.Repo, gitdir: str, where: str) -> list:
    """Branches moved from the worktree whose git folder is `gitdir` (commits, amends, resets made
    there while its HEAD was on them) put back where they were: [(branch, moved to, put back at)].
    The proof is the worktree's own HEAD reflog, which git writes with every move of the branch its
    HEAD is on: a branch's newest reflog entries found there were made in the worktree; a move made
    anywhere else (the user's own commits) is left alone."""
    if not gitdir or not os.path.isdir(gitdir):
        return []
    made = set(_reflog(r, "HEAD", gitdir))
    if len({commit for commit, _date, _subject in made}) < 2:  # its HEAD never moved
        return []
    reached = {commit for commit, _date, _subject in made}
    heads = checkpoints.git(["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/"], r.top, check=False).stdout
    moved = []
    for commit, ref in (line.split(" ", 1) for line in heads.splitlines() if " " in line):
        if commit not in reached or ref.startswith(f"refs/heads/{BRANCH_PREFIX}"):
            continue
        log = _reflog(r, ref)
        ours = next((i for i, entry in enumerate(log) if entry not in made), len(log))
        if 0 < ours < len(log) and log[0][0] == commit:
            back = log[ours][0]
            proc = checkpoints.git(
                ["update-ref", "-m", f"aether: put back, moved from the worktree {where}", ref, back, commit], r.top, check=False
            )
            if proc.returncode == 0:
                moved.append((ref.removeprefix("refs/heads/"), commit, back))
    return moved


# ---------------------------------------------------------------- kept results, and what is on disk


def keep(r: checkpoints.Repo, scope: str, node: str, commit: str) -> str:
    """Keep a result that could not be merged: on the branch `aether/<build>/<node>` (one already
    on that very commit is reused; another name gets -2, -3 …), or, when git cannot make that branch
    (a branch `aether` holds its folder …), on the ref `refs/aether/kept/<build>/<node>`. Returns
    the name git knows it by; raises `result_not_kept` when both are refused."""
    why = "every name was taken while it was made"
    for namespace, prefix in (("refs/heads/", BRANCH_PREFIX), ("", KEPT_REF_PREFIX)):
        base = f"{namespace}{prefix}{scope}/{node}"
        same = sorted(ref for ref, held in checkpoints.held(r, base).items() if held == commit)
        if same:
            return same[0].removeprefix("refs/heads/")
        for ref in checkpoints.free_names(r, base):
            proc = checkpoints.git(["update-ref", ref, commit, ""], r.top, check=False)
            now = checkpoints.git(["rev-parse", "-q", "--verify", ref], r.top, check=False).stdout.strip()
            if proc.returncode == 0 or now == commit:
                return ref.removeprefix("refs/heads/")
            if not now:  # not taken but refused (a ref named like a folder on the way, a lock): the next namespace
                why = checkpoints.said(proc.stderr)
                break
    raise state_error(
        "result_not_kept",
        f"{node}'s result ({commit}) could not be kept on {BRANCH_PREFIX}{scope}/{node} "
        f"nor on {KEPT_REF_PREFIX}{scope}/{node}: {why}; free one of those names, "
        f"or keep it yourself: git branch <a name> {commit}",
        commit=commit,
    )


def drop_branch(r: checkpoints.Repo, name: str) -> bool:
    if name.startswith(KEPT_REF_PREFIX):
        ref = name
    elif name.startswith(BRANCH_PREFIX):
        ref = f"refs/heads/{name}"
    else:
        raise state_error(
            "not_a_colony_branch", f"{name} is not a branch the colony made (they start {BRANCH_PREFIX} or {KEPT_REF_PREFIX})"
        )
    return checkpoints.git(["update-ref", "-d", ref], r.top, check=False).returncode == 0


def on_disk(r: checkpoints.Repo) -> list:
    """The worktrees under the builders' folder — those git knows and folders without its
    record — as paths from the project."""
    folder = root(r)
    real = os.path.realpath(folder)
    found = []
    out = checkpoints.git(["worktree", "list", "--porcelain"], r.top, check=False).stdout
    for line in out.splitlines():
        if line.startswith("worktree "):
            path = os.path.realpath(line[len("worktree ") :])
            parts = os.path.relpath(path, real).split(os.sep)
            if len(parts) == 2 and ".." not in parts:
                found.append(f"{checkpoints.WORKTREES}/{parts[0]}/{parts[1]}")
    for _admin, rel in entries(r):  # those `git worktree list` could not show (an entry left half-written)
        if rel not in found:
            found.append(rel)
    if os.path.isdir(folder):
        for scope in sorted(os.listdir(folder)):
            inner = os.path.join(folder, scope)
            if os.path.islink(inner) or not os.path.isdir(inner):
                continue
            for node in sorted(os.listdir(inner)):
                rel = f"{checkpoints.WORKTREES}/{scope}/{node}"
                if rel not in found:
                    found.append(rel)
    return found


def branches(r: checkpoints.Repo) -> dict:
    """{name: commit} of every `aether/…` branch and `refs/aether/kept/…` ref."""
    out = checkpoints.git(
        ["for-each-ref", "--format=%(refname) %(objectname)", f"refs/heads/{BRANCH_PREFIX}", KEPT_REF_PREFIX], r.top, check=False
    ).stdout
    pairs = (line.split(" ", 1) for line in out.splitlines() if " " in line)
    return {ref.removeprefix("refs/heads/"): commit for ref, commit in pairs}
