"""Same-wave builders in their own git worktrees, merged back in order, and no work lost
(docs/decisions/worktrees.md).

- Whether a build isolates its builders, and the line of a safety net it goes without:
  steps/isolation.py.
- `prepare`: worktrees for the builders of a spawn action, from a snapshot of the project as it
  is then (the build's checkpoint at first, the merged state later); a retry or debugger goes on
  in the worktree of the task it continues; a builder handed out again finds its worktree as its
  last run left it.
- `merge`: a helper step after a wave's spawns: each result, in the fixed order of
  rules/worktrees.py, merged into the project by git (state/worktrees.py); a conflict fails the
  task with a conflict report (the failure ladder retries it on the merged state) and keeps the
  result on a branch `aether/<build>/<node>`.
- `release` (when the waves are done) and `abandon` (a build that ends, is aborted or starts
  over): the worktrees go; any work in them not merged (finished, failed, or never recorded) is
  kept on branches first, with the commands to look at it and apply it. Run again after a kill,
  each finishes what the killed run left (docs/decisions/worktrees.md, "Killed at any point").
- `listing`, `clean`: what the colony made (worktrees, kept branches) and what a crash left.
- Writing a merged result into the project, all or nothing: steps/merge_back.py.
"""

from __future__ import annotations

import os
import time

from aether.core import clock, paths
from aether.core.exceptions import AetherError, state_error
from aether.core.text import one_line
from aether.rules import spawn_tree
from aether.rules import worktrees as worktree_rules
from aether.state import checkpoints, events, store
from aether.state import spawns as ledger
from aether.state import worktrees as wt
from aether.steps import merge_back


def _repo() -> checkpoints.Repo:
    r = checkpoints.repo()
    if r is None:
        raise state_error("not_a_git_repo", "the builders' worktrees need the project's git repository")
    return r


def _workdir(r: checkpoints.Repo, rel: str) -> str:
    """The project's folder inside the worktree at `rel`, from the project (what a builder cd's into)."""
    return f"{rel}/{r.prefix}".rstrip("/")


# ---------------------------------------------------------------- handing worktrees out


@store.writes("colony")
def _mark(colony, owners: dict) -> None:
    """Set each node's working copy (node → workdir); a node whose lineage goes on is passed."""
    tree = spawn_tree.tree_of(colony)
    for node_id, (workdir, passed) in owners.items():
        tree["nodes"][node_id]["worktree"] = workdir
        for old in passed:
            tree["nodes"][old]["merge"] = "passed"


@store.writes("worktrees", "events")
def _claim(
    files, scope: str, node: str, rel: str, base: str, gitdir: str, workdir: str, passed_from: str | None, lost: str | None = None
) -> None:
    """The record of a worktree handed to `node` (taken over from `passed_from`, or new); `lost`:
    the folder was gone and was made again from its base (said in an event)."""
    data = files["worktrees"]
    for old in [w for w in data["worktrees"] if w.get("scope") == scope and w.get("path") == rel and w.get("status") == "active"]:
        wt.end(
            old, "passed" if passed_from else "discarded", why=f"handed on to {node}" if passed_from else "handed out again: started over"
        )
    wt.add_record(
        data,
        {
            "scope": scope,
            "node": node,
            "path": rel,
            "base": base,
            "gitdir": gitdir,
            "workdir": workdir,
            "status": "active",
            "branch": None,
            "result": None,
            "created_at": clock.iso(),
            "ended_at": None,
            "why": None,
        },
    )
    if lost:
        events.append(files["events"], "worktree_lost", node, f"{node}: {lost}")


def _again(r: checkpoints.Repo, rec: dict) -> str:
    """A worktree found gone (removed, or replaced by a symbolic link) made again from its base —
    the branches its builder moved put back first, while its git folder still tells. Its git folder."""
    _put_back(r, rec)
    return wt.create(r, rec["path"], rec["base"])


def prepare(tree: dict, node_ids: list, iso: dict | None) -> dict:
    """Worktrees for the isolated builders among `node_ids` of a build whose isolation is `iso`:
    {node: {workdir, note}} (note: what its brief must say, else None). One snapshot of the project
    is the base of every new worktree of the action."""
    iso = iso or {}
    if not iso.get("on"):
        return {}
    nodes = [tree["nodes"][i] for i in node_ids if worktree_rules.isolated(tree["nodes"][i])]
    if not nodes:
        return {}
    r = _repo()
    scope = iso["scope"]
    records = wt.records()
    base = None
    owners, out = {}, {}
    for node in nodes:
        mine = wt.find({"worktrees": records}, scope, node["id"], ("active",))
        lineage = None
        if mine is None and node["role"] in worktree_rules.CONTINUING_ROLES:
            lineage = _lineage_record(tree, node, records, scope)
        note = None
        if mine is not None:  # handed out again: the same worktree, as its last builder left it
            rel, passed = mine["path"], []
            if not wt.intact(wt.full(r, rel), mine.get("gitdir") or ""):  # gone (a crash in between): from its base again
                _claim(
                    scope,
                    node["id"],
                    rel,
                    mine["base"],
                    _again(r, mine),
                    _workdir(r, rel),
                    None,
                    lost="its worktree was gone when it was handed out again: made again from its base; "
                    "the work in it was lost with the folder",
                )
        elif lineage is not None:  # the task goes on where its last run left it
            rel, passed = lineage["path"], [lineage["node"]]
            gitdir, lost = lineage["gitdir"], None
            if not wt.intact(wt.full(r, rel), gitdir):
                gitdir = _again(r, lineage)
                lost = (
                    f"the worktree of {lineage['node']}, whose task it continues, was gone (removed, or replaced "
                    f"by a symbolic link): made again from the snapshot it started from; {lineage['node']}'s "
                    f"work in it was lost with the folder"
                )
                note = (
                    f"The copy of {lineage['node']} (the run before you) was gone: yours was made again from the "
                    f"snapshot it started from, and the work done in it was lost with the folder — do the whole "
                    f"task, not only the fix."
                )
            _claim(scope, node["id"], rel, lineage["base"], gitdir, _workdir(r, rel), lineage["node"], lost)
        else:
            if base is None:
                base, _tree = checkpoints.snapshot_commit(r, f"aether: wave {node['wave']} of {scope}")
            rel, passed = wt.rel_path(scope, node["id"]), []
            _claim(scope, node["id"], rel, base, wt.create(r, rel, base), _workdir(r, rel), None)
        owners[node["id"]] = (_workdir(r, rel), [p for p in passed if p in tree["nodes"]])
        out[node["id"]] = {"workdir": _workdir(r, rel), "note": note}
    _mark(owners)
    return out


def _lineage(tree: dict, node: dict) -> set:
    """The runs of the node's task: its worker, and the retries, debuggers … that repeat it."""
    origin = spawn_tree.origin_of(tree, node)
    return {n["id"] for n in tree["nodes"].values() if spawn_tree.origin_of(tree, n) == origin}


def _lineage_record(tree: dict, node: dict, records: list, scope: str) -> dict | None:
    """The active worktree record of the task's earlier run (the latest), which the node continues."""
    runs = _lineage(tree, node) - {node["id"]}
    holders = [w for w in records if w.get("scope") == scope and w.get("node") in runs and w.get("status") == "active"]
    return holders[-1] if holders else None


def brief_section(workdir: str, note: str | None = None) -> str:
    full = os.path.join(paths.project_root(), workdir)
    return "\n".join(
        [
            "--- WORKING COPY ---",
            f"You work in your own copy of the project: {workdir} (a git worktree holding the project as it "
            "was when you were handed out; builders beside you have their own).",
            f"- Start EVERY Bash command with `cd {workdir} && ` — each command starts in the main checkout, which you must not change.",
            f"- Write and edit files only under {full}/, and name files in your result block relative to it, as if it were the project.",
            "- The helper merges your changes into the project after the wave: do not commit, branch, check out, "
            "reset, stash or push (a copy whose HEAD moved is not merged).",
            f"- The colony's own files (.aether/, research notes included) are not in your copy: read them in the project, "
            f"under {paths.aether_dir()}/, with the Read tool.",
            *([f"- {note}"] if note else []),
            "--- END WORKING COPY ---",
        ]
    )


# ---------------------------------------------------------------- merging back


def last_merge_t(tree: dict) -> float | None:
    """When the build last merged a builder's worktree back (the real clock), None: never."""
    nodes = (tree.get("nodes") or {}).values()
    times = [n["merged_t"] for n in nodes if isinstance(n, dict) and isinstance(n.get("merged_t"), (int, float))]
    return max(times, default=None)


@store.writes("colony", "worktrees", "events")
def _record_merge(
    files, scope: str, node_id: str, outcome: str, branch: str | None, commit: str | None, changed: list, report: dict | None
) -> None:
    tree = spawn_tree.tree_of(files["colony"])
    node = tree["nodes"][node_id]
    rec = wt.find(files["worktrees"], scope, node_id, ("active",))
    assert rec is not None  # merge() found it active; only this merge ends it
    node["merge"] = outcome
    node["merged_t"] = round(time.time(), 3)  # the real clock: a check must run after it (steps/checks.py)
    if outcome in ("merged", "empty"):
        node["files_created"] = [p for s, *_rest, p in changed if s == "A"]
        node["files_modified"] = [p for s, *_rest, p in changed if s in ("M", "T")]
        node["files_removed"] = [p for s, *_rest, p in changed if s == "D"]
        wt.end(rec, "merged", result=commit)
        events.append(
            files["events"],
            "merged",
            node_id,
            f"{node_id}: {len(changed)} file(s) merged into the project" if changed else f"{node_id}: its worktree held no change",
        )
    else:
        node["status"] = "failed"
        node["failure"] = report
        node["failure_decided"] = False
        assert report is not None  # a result not merged always comes with its report
        why, kind = {
            "conflict": ("merge conflict", "merge_conflict"),
            "refused": ("its HEAD left the snapshot it was made from", "merge_refused"),
            "missing": ("its worktree was gone", "merge_failed"),
        }[outcome]
        wt.end(rec, "kept" if branch else "discarded", branch=branch, result=commit, why=why)
        events.append(files["events"], kind, node_id, f"{node_id}: {one_line(report['error'], 200)}")


def _put_back(r: checkpoints.Repo, rec: dict) -> list:
    """Put back the user's branches the builder of `rec` moved from its worktree (commits made there);
    the lines that say so (events too)."""
    try:
        moved = wt.put_back(r, rec.get("gitdir") or "", rec["path"])
    except AetherError as exc:
        lines = [f"{rec['node']}: whether its worktree moved a branch of yours could not be checked: {exc.message}"]
    else:
        lines = [
            f"your branch {branch} was moved from {rec['node']}'s worktree (to {now[:12]}): put back at {was[:12]}, where it was"
            for branch, now, was in moved
        ]
    if lines:
        _events("branch_put_back", rec["node"], lines)
    return lines


@store.writes("events")
def _events(data, kind: str, source: str, lines: list) -> None:
    for line in lines:
        events.append(data, kind, source, line)


def _merge_one(r: checkpoints.Repo, scope: str, node: dict, rec: dict) -> str:
    """Merge one result; returns its outcome (merged, empty, conflict, refused, missing)."""
    put_back = _put_back(r, rec)
    try:
        commit = wt.result(r, rec["path"], rec.get("gitdir") or "", rec["base"], node["id"])
    except wt.Gone:
        _record_merge(scope, node["id"], "missing", None, None, [], worktree_rules.gone_report(node))
        return "missing"
    left = wt.head_left(rec.get("gitdir") or "", rec["base"])
    if left:  # a checkout, a commit, a reset: its diff from the base is no longer the builder's change
        branch = wt.keep(r, scope, node["id"], commit) if commit else None
        _record_merge(scope, node["id"], "refused", branch, commit, [], worktree_rules.head_moved_report(node, left, branch, put_back))
        return "refused"
    if commit is None:
        _record_merge(scope, node["id"], "empty", None, None, [], None)
        return "empty"
    now, _tree = checkpoints.snapshot_commit(r, f"aether: the project before {node['id']} merges")
    merged, conflicts = wt.merge_onto(r, scope, now, commit)
    writes = []
    if merged is not None:
        writes, conflicts = merge_back.plan(r, now, merged)
    if not conflicts:
        try:
            merge_back.apply(writes)
        except merge_back.WriteFailed as exc:  # the disk refused after the checks: what was written is put back
            conflicts = [{"path": exc.rel, "why": exc.why, "hunks": []}]
    if conflicts:
        branch = wt.keep(r, scope, node["id"], commit)
        _record_merge(scope, node["id"], "conflict", branch, commit, [], worktree_rules.conflict_report(node, conflicts, branch))
        return "conflict"
    _record_merge(scope, node["id"], "merged", None, commit, wt.changes(r, rec["base"], commit), None)
    return "merged"


def merge(tree: dict, wave: int, scope: str) -> None:
    """Merge the wave's finished results into the project, in order (the events say how each went)."""
    r = _repo()
    for node in worktree_rules.to_merge(tree, wave):
        rec = wt.find({"worktrees": wt.records()}, scope, node["id"], ("active",))
        if rec is None:  # the record went (a hand edit): nothing to merge
            _mark_missing(node["id"])
            continue
        if _merge_one(r, scope, node, rec) == "merged":
            _drop_superseded(r, tree, node, scope)
        wt.remove(r, rec["path"])


def _drop_superseded(r: checkpoints.Repo, tree: dict, node: dict, scope: str) -> None:
    """A task's earlier result kept after a conflict goes once a later run of it is merged."""
    lineage = _lineage(tree, node)
    for rec in wt.records():
        if rec.get("scope") == scope and rec.get("node") in lineage and rec.get("status") == "kept" and rec.get("branch"):
            wt.drop_branch(r, rec["branch"])
            _drop_record(rec["branch"], f"superseded: {node['id']}'s run of the task was merged")


@store.writes("colony")
def _mark_missing(colony, node_id: str) -> None:
    spawn_tree.tree_of(colony)["nodes"][node_id]["merge"] = "missing"


# ---------------------------------------------------------------- ending a build, and what is left


@store.writes("worktrees")
def _end_record(data, scope: str, node: str, status: str, branch: str | None, commit: str | None, why: str) -> None:
    """One active worktree ends (written before its folder goes: a kill in between leaves a folder
    whose work a record holds, which the next sweep removes)."""
    rec = wt.find(data, scope, node, ("active",))
    if rec is not None:
        wt.end(rec, status, branch=branch, result=commit, why=why)
        rec.pop("unsaved", None)


@store.writes("worktrees")
def _add_kept(data, scope: str, node: str, path: str, base: str, gitdir: str, branch: str, commit: str, why: str) -> None:
    """The record of work found in a worktree no record held (kept on `branch` before it went)."""
    if any(w.get("status") == "kept" and w.get("branch") == branch for w in data["worktrees"]):
        return
    now = clock.iso()
    wt.add_record(
        data,
        {
            "scope": scope,
            "node": node,
            "path": path,
            "base": base,
            "gitdir": gitdir,
            "workdir": path,
            "status": "kept",
            "branch": branch,
            "result": commit,
            "created_at": now,
            "ended_at": now,
            "why": why,
        },
    )


@store.writes("worktrees", "events")
def _unsaved(files, unsaved: list, notes: list) -> None:
    for scope, node, why in unsaved:  # still active: the next build's start tries to keep it again
        rec = wt.find(files["worktrees"], scope, node, ("active",))
        if rec is not None:
            rec.update(unsaved=True, why=why)
    for line in notes:
        events.append(files["events"], "worktrees_left", "queen", line)


def abandon(tree: dict | None, why: str) -> dict:
    """Remove the worktrees of the build that ends (one build runs at a time: every active one),
    and the folders a crash left; any work in them not merged yet — a finished result, a builder's
    edits whose answer was never recorded, a failed run's partial work — is kept on a branch first.
    Never raises: a worktree it cannot save or remove stays where it is, and `notes` say so.
    Run again after a kill, it finishes what the first run left. {kept: [{branch, …}], notes: [line]}"""
    out: dict = {"kept": [], "notes": []}
    try:
        if not store.exists("worktrees"):
            return out
        active = [w for w in wt.records() if w.get("status") == "active"]
        r = checkpoints.repo()
        if r is not None:
            wt.root(r)  # the builders' folder itself replaced by a link: nothing under it is touched
    except AetherError as exc:
        out["notes"].append(f"the builders' worktrees were left as they are: {exc.message}")
        return out
    if r is None:
        return out
    nodes = (tree or {}).get("nodes") or {}
    unsaved, problems, staying = [], [], set()
    for rec in active:
        try:
            _abandon_one(r, rec, nodes.get(rec["node"]) or {}, why, out)
        except (AetherError, OSError) as exc:
            unsaved.append((rec["scope"], rec["node"], f"not saved when {why}: {_said(exc)}"))
            problems.append(
                f"{rec['node']}: {_said(exc)} — its worktree stays at {rec['path']} (`aether worktrees "
                f"--clean` tries again to keep its work on a branch, then removes it)"
            )
            staying.add(rec["path"])
    try:
        for path in wt.on_disk(r):  # folders a crash left between git and the record: no build uses them now
            if path not in staying:
                _sweep(r, path, why, out)
    except (AetherError, OSError) as exc:
        problems.append(f"left-over worktrees were not removed: {_said(exc)} (`aether worktrees --clean` once that is fixed)")
    out["notes"] += problems
    if unsaved or problems:
        _unsaved(unsaved, problems)
    return out


def _said(exc: Exception) -> str:
    return exc.message if isinstance(exc, AetherError) else f"{getattr(exc, 'strerror', None) or exc}"


def _kept_why(node: dict, why: str) -> str:
    """Why a worktree's work is kept, from what became of its run."""
    status = node.get("status")
    if status == "completed":
        return why  # a finished result the merge never reached
    if status in ("failed", "skipped"):
        return f"{why}; its run had failed: the work it left"
    return f"{why}; its builder's answer was never recorded: the changes in its worktree"


def _abandon_one(r: checkpoints.Repo, rec: dict, node: dict, why: str, out: dict) -> None:
    """End one active worktree: the branches its builder moved put back, any work in it kept on a
    branch and the record ended, then the folder removed. Raises AetherError (nothing ended) when
    work it holds cannot be kept."""
    out["notes"] += _put_back(r, rec)
    commit = None
    try:
        commit = wt.result(r, rec["path"], rec.get("gitdir") or "", rec["base"], rec["node"])
    except wt.Gone:
        if (node.get("status") == "completed" and not node.get("merge")) or rec.get("unsaved"):
            out["notes"].append(
                f"{rec['node']}: its worktree was gone (removed, or replaced by a symbolic link): its finished work could not be kept"
            )
    branch = wt.keep(r, rec["scope"], rec["node"], commit) if commit else None
    reason = _kept_why(node, why) if branch else why
    _end_record(rec["scope"], rec["node"], "kept" if branch else "discarded", branch, commit, reason)
    if branch:
        out["kept"].append(kept_entry({**rec, "branch": branch, "why": reason}))
    wt.remove(r, rec["path"])


def _sweep(r: checkpoints.Repo, path: str, why: str, out: dict) -> None:
    """Remove a worktree folder no active record holds — after keeping on a branch any work in it
    that no record holds already (a merge's scratch copy never holds a builder's work)."""
    scope, node = path.split("/")[-2:]
    if node != wt.SCRATCH:
        mine = [w for w in wt.records() if w.get("path") == path]
        last = mine[-1] if mine else None
        gitdir, base = (last.get("gitdir"), last.get("base")) if last else (None, None)
        if not gitdir or not wt.intact(wt.full(r, path), gitdir):
            gitdir, base = wt.found_as_is(r, path)
        try:
            commit = wt.result(r, path, gitdir, base, node) if gitdir and base else None
        except wt.Gone:
            commit = None
        if commit and commit not in {w.get("result") for w in mine}:
            branch = wt.keep(r, scope, node, commit)
            reason = f"{why}; found in a worktree no record held (a crash, or worktrees.json lost)"
            _add_kept(scope, node, path, base, gitdir, branch, commit, reason)
            out["kept"].append(kept_entry({"scope": scope, "node": node, "branch": branch, "why": reason}))
    wt.remove(r, path)


@store.writes("colony")
def _released(colony) -> None:
    tree = spawn_tree.tree_of(colony)
    for node_id in worktree_rules.unreleased(tree):
        tree["nodes"][node_id]["merge"] = "released"
    tree["worktrees_released"] = True


def release(tree: dict) -> None:
    """The waves are done: every worktree left goes — failed tasks', and folders a crash left (a
    helper step, once a build; the verification and the code loop's refiners work in the project)."""
    abandon(tree, "the waves are done")  # what it could not do is in the events
    _released()


def summary(tree: dict | None) -> list:
    """What the merge-back did in a build, one line per isolated run (for the build's summary)."""
    tree = tree or {}
    nodes = sorted((tree.get("nodes") or {}).values(), key=lambda n: n.get("seq") or 0)
    lines = []
    for n in nodes:
        merge = n.get("merge")
        if merge == "merged":
            count = len(n.get("files_created") or []) + len(n.get("files_modified") or []) + len(n.get("files_removed") or [])
            lines.append(f"  {n['id']} merged ({count} file{'s' if count != 1 else ''})")
        elif merge == "conflict":
            files = ", ".join((n.get("failure") or {}).get("files") or [])
            later = [
                m["id"] for m in nodes if m.get("origin") == spawn_tree.origin_of(tree, n) and (m.get("seq") or 0) > (n.get("seq") or 0)
            ]
            lines.append(
                f"  {n['id']} conflicted in {files}"
                + (f" → redone by {', '.join(later)} on the merged state" if later else " (kept on a branch)")
            )
        elif merge == "empty":
            lines.append(f"  {n['id']} changed nothing")
    return lines


def kept_entry(rec: dict) -> dict:
    """A kept result with the commands to look at it and to apply it."""
    branch = rec["branch"]
    return {
        "branch": branch,
        "build": rec["scope"],
        "node": rec["node"],
        "why": rec.get("why"),
        "inspect": f"git show --stat {branch}",
        "apply": f"git cherry-pick --no-commit {branch}",
        "drop": f"aether worktrees --drop {branch}",
    }


def scope_of(tree: dict | None) -> str | None:
    """The build whose worktrees a spawn tree's nodes used (`.aether/worktrees/<build>/<node>`)."""
    for node in ((tree or {}).get("nodes") or {}).values():
        parts = str((node or {}).get("worktree") or "").split("/")
        if parts[:2] == checkpoints.WORKTREES.split("/") and len(parts) > 3:
            return parts[2]
    return None


def kept(scope: str | None = None) -> list:
    return [
        kept_entry(w) for w in wt.records() if w.get("status") == "kept" and w.get("branch") and (scope is None or w.get("scope") == scope)
    ]


def render_kept(rows: list) -> list:
    lines = []
    for k in rows:
        lines.append(
            f"  {k['branch']} ({k['node']}, {k.get('why') or 'not merged'}) — look: {k['inspect']} · "
            f"apply: {k['apply']} · let go: {k['drop']}"
        )
    return lines


def _running_scopes() -> set:
    """The build run whose worktrees are in use (the colony is EXECUTING it)."""
    if store.read("colony").get("state") != "EXECUTING":
        return set()
    run = ledger.current_run(store.read("spawns"), "build")
    return {run["scope"]} if run else set()


def listing() -> dict:
    """worktrees: what the colony made and what is left (nothing of the user's is listed)."""
    r = checkpoints.repo()
    records = wt.records()
    active = [w for w in records if w.get("status") == "active"]
    running = _running_scopes()
    on_disk = wt.on_disk(r) if r else []
    known = {w["path"] for w in active}
    branches = wt.branches(r) if r else {}
    recorded_branches = {w.get("branch") for w in records if w.get("status") == "kept"}
    out: dict = {
        "active": [{"path": w["path"], "build": w["scope"], "node": w["node"], "running": w["scope"] in running} for w in active],
        "stale": sorted({p for p in on_disk if p not in known} | {w["path"] for w in active if w["scope"] not in running}),
        "kept": kept(),
        "unrecorded_branches": sorted(b for b in branches if b not in recorded_branches),
    }
    lines = [f"WORKTREES · {len(out['active'])} in use, {len(out['stale'])} left over, {len(out['kept'])} kept result(s)"]
    unsaved = {w["path"] for w in active if w.get("unsaved")}
    for w in out["active"]:
        lines.append(
            f"  {w['path']} — {w['node']} of {w['build']}"
            + ("" if w["running"] else " (its build is not running)")
            + (" — holds work that could not be kept on a branch: `--clean` tries again" if w["path"] in unsaved else "")
        )
    if out["stale"]:
        lines.append(
            "Left over (a crash, or a build that ended): `aether worktrees --clean` keeps any work in them on a branch, then removes them"
        )
        lines += [f"  {p}" for p in out["stale"]]
    if out["kept"]:
        lines.append("Kept results (not merged):")
        lines += render_kept(out["kept"])
    if out["unrecorded_branches"]:
        lines.append("Branches named aether/… the colony has no record of (left alone): " + ", ".join(out["unrecorded_branches"]))
    out["text"] = "\n".join(lines)
    return out


def clean(drop: str | None = None) -> dict:
    """worktrees --clean: remove the worktrees no running build uses, any work in them kept on a
    branch first (and git's entries a killed `worktree add` left locked); --drop BRANCH: let one
    kept result go — the only way one goes, by the person, by name. Never a worktree outside the
    builders' folder, never a branch the colony did not keep."""
    r = _repo()
    if drop is not None:
        rec = next((w for w in wt.records() if w.get("status") == "kept" and w.get("branch") == drop), None)
        if rec is None:
            raise state_error("unknown_branch", f"{drop!r} is not a result the colony kept (`aether worktrees` lists them)")
        wt.drop_branch(r, drop)
        _drop_record(drop)
        return {"dropped": drop, "removed": [], "text": f"Let go of {drop}."}
    with ledger.lock():  # the driver's: no worktree is being made or merged while the left-overs go
        return _clean(r)


def _clean(r: checkpoints.Repo) -> dict:
    running = _running_scopes()
    removed: list = []
    out: dict = {"kept": [], "notes": []}
    why = "left over: removed by `aether worktrees --clean`"
    nodes = (store.read("colony").get("spawn_tree") or {}).get("nodes") or {}
    for path in listing()["stale"]:
        owner = next((w for w in wt.records() if w.get("path") == path and w.get("status") == "active"), None)
        if owner is not None and owner["scope"] in running:
            continue
        try:
            if owner is None:  # a crash between git and the record (or a lock git left): any work in it kept first
                _sweep(r, path, why, out)
            else:  # its branches put back; the work in it kept first
                node = nodes.get(owner["node"]) or {}
                _abandon_one(r, owner, node if str(node.get("worktree") or "").startswith(path) else {}, why, out)
        except AetherError as exc:
            out["notes"].append(f"{path} stays: {exc.message}")
            continue
        removed.append(path)
    lines = [f"Removed {len(removed)} left-over worktree(s)" + (": " + ", ".join(removed) if removed else ".")]
    if out["kept"]:
        lines += ["Kept first (not merged) — nothing is lost; let one go by name when you are done with it:", *render_kept(out["kept"])]
    lines += out["notes"]
    return {"removed": removed, "dropped": None, "kept": out["kept"], "notes": out["notes"], "text": "\n".join(lines)}


@store.writes("worktrees")
def _drop_record(data, branch: str, why: str = "let go by the user") -> None:
    for w in data["worktrees"]:
        if w.get("status") == "kept" and w.get("branch") == branch:
            wt.end(w, "dropped", why=why)
