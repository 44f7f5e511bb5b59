"""Killed at any point, nothing finished is lost: the helper SIGKILLed (with the git it runs) at
named points of a merge-back, a build's start, a worktree's hand-out and `build-abort`, then the
recovery command run — and, in the slow sweep, killed at random moments many times. After
recovery every builder's work is merged or on a named ref and the text says where, HEAD, the
index and the user's branches are unchanged, every state file validates, and each step can be run
again. Also: the colony's files kept out of the user's `git stash -u`, `git clean -fd`, `git add -A`.
Real git repositories (tests/helpers/kills.py runs the killed step)."""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path

import pytest

from helpers import kills
from helpers.colony import ok, tree
from helpers.git import git_output as git  # as git printed it
from helpers.worktrees import APP, LEAD, block, done, edit, start_colony, start_wave, workdir

# Named points: a function of Aether's, patched in the killed process.
BEFORE_THE_RECORD = {"at": "aether.state.spawns:keep_answer", "when": "before"}  # the builder's edit made, its answer not recorded
ABORT_AFTER_READY = {"at": "aether.steps.worktrees:abandon", "when": "before"}  # the colony READY, the worktrees not dealt with
AFTER_WORKTREE_ADD = {"at": "aether.state.checkpoints:git", "when": "after", "git": ["worktree", "add"]}
AFTER_THE_RUN = {"at": "aether.colony.dispatch:new_run", "when": "after"}  # the build started, its run written
OLD_GIT = {"returns": {"aether.state.worktrees:_merges_trees": False}}  # a merge in a scratch worktree


def records(p) -> list:
    return p.load("worktrees.json")["worktrees"]


def scope(p) -> str:
    return p.load("spawns.json")["runs"][-1]["scope"]


def valid(p) -> None:
    assert ok(p, "validate-state", "all")["pass"] is True


def both_builders_edit(p) -> None:
    """w1 changes app.py, w2 writes util.py, each in its worktree."""
    edit(p, "w1", "app.py", "return 1", "return 11")
    (workdir(p, "w2") / "util.py").write_text("HELP = 2\n", "utf-8")


def kept_text(text: str, where: list) -> None:
    """The text names every ref the work is kept on, with the commands to look at it and apply it."""
    refs = [w for w in where if w != "project"]
    assert refs, where
    for ref in refs:
        assert ref in text and f"git show --stat {ref}" in text and f"git cherry-pick --no-commit {ref}" in text, (ref, text)


# ---------------------------------------------------------------- 1. a builder killed between its edit and its record


@pytest.mark.parametrize("recovery", ["build-abort", "next --resume"])
def test_a_builders_edits_whose_record_was_killed_are_kept_by_every_recovery(worktree_colony, recovery):
    p = worktree_colony
    start_wave(p)
    both_builders_edit(p)
    before = kills.users_view(p.root)
    ok(p, "record", "w2", "-", input=done(created=["util.py"]))
    kills.killed_at(p.root, BEFORE_THE_RECORD, "record", "w1", "-", input=done(modified=["app.py"]))
    assert tree(p)["nodes"]["w1"]["status"] != "completed"  # nothing of w1 was recorded
    if recovery == "build-abort":
        text = ok(p, "build-abort", "1", "--reason", "-", input="stop\n")["text"]
    else:
        ok(p, "next", "--build", "1", "--resume")
        text = p.load("spawns.json")["runs"][-1]["started_text"]
    w1 = kills.where(p.root, "app.py", "return 11")
    w2 = kills.where(p.root, "util.py", "HELP = 2")
    assert w1 and "project" not in w1 and w2  # on named refs, not applied behind the user's back
    kept_text(text, w1)
    kept_text(text, w2)
    assert kills.users_view(p.root) == before and kills.worktrees_listed(p.root) == []
    valid(p)


# ---------------------------------------------------------------- 2. build-abort killed after the colony is READY


def aborted_half_way(p) -> dict:
    """w1 finished and recorded (not merged: w2 is still out), w2's edits unrecorded; build-abort
    killed after it marked the colony READY, before it dealt with the worktrees."""
    start_wave(p)
    both_builders_edit(p)
    before = kills.users_view(p.root)
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    kills.killed_at(p.root, ABORT_AFTER_READY, "build-abort", "1", "--reason", "stop")
    assert p.load("COLONY_STATE.json")["state"] == "READY" and len(kills.worktrees_listed(p.root)) == 2
    return before


@pytest.mark.parametrize("recovery", ["build-abort", "next", "worktrees --clean", "next --resume"])
def test_an_abort_killed_after_ready_is_finished_by_the_next_command_and_keeps_every_result(worktree_colony, recovery):
    p = worktree_colony
    before = aborted_half_way(p)
    if recovery == "build-abort":  # run again: it finishes what the first left
        out = ok(p, "build-abort", "1", "--reason", "-", input="stop\n")
        assert out["again"] is True and "aborted already" in out["text"]
        text = out["text"]
    elif recovery == "next":  # not "Phase 1 is not being built": the abort, finished, and what it kept
        action = ok(p, "next", "--build", "1")
        assert action["action"] == "stop" and "not being built" not in action["text"]
        text = action["text"]
        assert ok(p, "next", "--build", "1")["spawns"][0]["id"] == "lead1"  # and the phase builds again
    elif recovery == "worktrees --clean":
        text = ok(p, "worktrees", "--clean", "--json")["text"]
    else:
        ok(p, "next", "--build", "1", "--resume")
        text = p.load("spawns.json")["runs"][-1]["started_text"]
    w1 = kills.where(p.root, "app.py", "return 11")
    w2 = kills.where(p.root, "util.py", "HELP = 2")
    assert w1 and w2 and "project" not in w1 + w2
    kept_text(text, w1)
    kept_text(text, w2)
    assert {r["node"]: r["status"] for r in records(p) if r["status"] != "passed"} == {"w1": "kept", "w2": "kept"}
    assert kills.users_view(p.root) == before and kills.worktrees_listed(p.root) == []
    valid(p)


def test_an_abort_of_the_failure_protocol_killed_after_ready_stops_with_its_report_and_what_it_kept(worktree_colony):
    p = worktree_colony
    start_wave(p)
    both_builders_edit(p)
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    security = block(
        {
            "status": "failed",
            "summary": "SQL injection",
            "files_created": ["util.py"],
            "files_modified": [],
            "failure": {
                "task": "1.2",
                "error": "SQL injection in the query",
                "root_cause": "?",
                "suggested_fix": "parameters",
                "confidence": 90,
                "fix_scope": "contained",
                "files": ["util.py"],
                "category": "security",
            },
        }
    )
    kills.killed_at(p.root, ABORT_AFTER_READY, "record", "w2", "-", input=security)
    assert p.load("COLONY_STATE.json")["state"] == "READY"
    action = ok(p, "next", "--build", "1")
    assert action["action"] == "stop" and action["why"] == "abort_phase"
    assert "AETHER BUILD ABORTED — phase 1" in action["text"] and "was aborted already" not in action["text"]
    w2 = kills.where(p.root, "util.py", "HELP = 2")
    assert w2 and "project" not in w2
    kept_text(action["text"], w2)
    assert kills.where(p.root, "app.py", "return 11")  # w1's: merged, or kept
    assert kills.worktrees_listed(p.root) == []
    valid(p)


def test_build_abort_run_twice_says_the_same_kept_results_and_changes_nothing_more(worktree_colony):
    p = worktree_colony
    start_wave(p)
    both_builders_edit(p)
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    first = ok(p, "build-abort", "1", "--reason", "-", input="stop\n")
    again = ok(p, "build-abort", "1", "--reason", "-", input="stop\n")
    assert [k["branch"] for k in again["kept"]] == [k["branch"] for k in first["kept"]] and len(first["kept"]) == 2
    assert again["event"] is None and sum(e["type"] == "build_aborted" for e in p.load("events.json")["events"]) == 1
    assert p.run("build-abort", "2", "--reason", "x").error["code"] == "invalid_transition"  # no abort of phase 2 to finish


def test_a_kept_result_goes_only_when_the_person_lets_it_go_by_name(worktree_colony):
    p = worktree_colony
    aborted_half_way(p)
    ok(p, "worktrees", "--clean", "--json")
    ok(p, "next", "--build", "1", "--resume")  # a new build's start, and another clean: kept results stay
    ok(p, "worktrees", "--clean", "--json")
    branches = [k["branch"] for k in ok(p, "worktrees", "--json")["kept"]]
    assert len(branches) == 2 and sorted(branches) == sorted(kills.kept_refs(p.root))
    ok(p, "worktrees", "--drop", branches[0], "--json")
    assert kills.kept_refs(p.root) == branches[1:]


# ---------------------------------------------------------------- 3. git killed inside a worktree add


# What a git killed inside `git worktree add` leaves, by where the kill landed: its entry locked
# ("initializing") before the worktree's folder was made; the folder made, its `.git` not written yet;
# the `.git` written, the entry's `commondir` not yet (which makes every `git worktree` command fail).
KILLED_ADDS = ["no folder", "folder without .git", "commondir not written"]


def locked_entry(p, rel: str, state: str) -> None:
    path = p.root / rel
    admin = p.root / ".git" / "worktrees" / path.name
    admin.mkdir(parents=True)
    (admin / "locked").write_text("initializing\n", "utf-8")
    (admin / "gitdir").write_text(f"{path}/.git\n", "utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if state == "commondir not written":
        (admin / "commondir").write_text("", "utf-8")
    else:
        (admin / "commondir").write_text("../..\n", "utf-8")
        (admin / "HEAD").write_text(git(p.root, "rev-parse", "HEAD"), "utf-8")
    if state != "no folder":
        path.mkdir()
    if state == "commondir not written":
        (path / ".git").write_text(f"gitdir: {admin}\n", "utf-8")


@pytest.mark.parametrize("state", KILLED_ADDS)
def test_an_entry_left_by_a_killed_worktree_add_blocks_no_merge(worktree_colony, state):
    p = worktree_colony
    start_wave(p)
    both_builders_edit(p)
    locked_entry(p, f".aether/worktrees/{scope(p)}/merge", state)
    ok(p, "record", "w2", "-", input=done(created=["util.py"]))
    after = ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    assert "next_error" not in after, after["next_error"]
    nodes = tree(p)["nodes"]
    assert (nodes["w1"]["merge"], nodes["w2"]["merge"]) == ("merged", "merged")
    assert "return 11" in (p.root / "app.py").read_text("utf-8") and (p.root / "util.py").exists()
    assert kills.worktrees_listed(p.root) == []


@pytest.mark.parametrize("state", KILLED_ADDS)
def test_worktrees_clean_clears_an_entry_a_killed_worktree_add_left(worktree_colony, state):
    p = worktree_colony
    start_wave(p)
    ok(p, "build-abort", "1", "--reason", "-", input="stop\n")
    locked_entry(p, ".aether/worktrees/b9-dead/w3", state)
    assert ok(p, "worktrees", "--json")["stale"] == [".aether/worktrees/b9-dead/w3"]
    out = ok(p, "worktrees", "--clean", "--json")
    assert out["removed"] == [".aether/worktrees/b9-dead/w3"] and kills.worktrees_listed(p.root) == []
    git(p.root, "worktree", "add", "-q", "--detach", str(p.root / ".aether/worktrees/b9-dead/w3"), "HEAD")  # the name is free again


def test_a_git_failure_keeps_gits_advice_in_the_message(worktree_colony):
    from aether.core.exceptions import AetherError
    from aether.state import checkpoints

    p = worktree_colony
    locked_entry(p, ".aether/worktrees/b1-x/merge", "no folder")
    with pytest.raises(AetherError) as exc:
        checkpoints.git(["worktree", "add", "--detach", str(p.root / ".aether/worktrees/b1-x/merge"), "HEAD"], str(p.root))
    assert "missing but locked worktree" in exc.value.message and "'unlock' and 'prune'" in exc.value.message


def test_a_merge_killed_right_after_its_scratch_worktree_add_recovers(worktree_colony):
    p = worktree_colony
    start_wave(p)
    both_builders_edit(p)
    before = kills.users_view(p.root)
    ok(p, "record", "w2", "-", input=done(created=["util.py"]))
    # the scratch worktree of the first merge (a git older than 2.38): the third `worktree add` of the build
    point = {**AFTER_WORKTREE_ADD, "nth": 1, **OLD_GIT}
    kills.killed_at(p.root, point, "record", "w1", "-", input=done(modified=["app.py"]))
    assert any(block.endswith("/merge") or "/merge\n" in block for block in kills.worktrees_listed(p.root))
    after = ok(p, "next", "--build", "1")
    assert after["action"] == "spawn" and [s["id"] for s in after["spawns"]] == ["v1"]  # merged, then the reviewer
    assert "return 11" in (p.root / "app.py").read_text("utf-8") and (p.root / "util.py").exists()
    assert kills.users_view(p.root) == before and kills.worktrees_listed(p.root) == []
    valid(p)


def test_a_git_killed_during_the_scratch_worktrees_checkout_blocks_no_later_merge(worktree_colony, tmp_path):
    p = worktree_colony
    start_wave(p)
    both_builders_edit(p)
    ok(p, "record", "w2", "-", input=done(created=["util.py"]))
    # the killed process's git checks out app.py slowly (a filter only its git knows of): the kill
    # lands while `git worktree add` holds its entry locked, with the folder half made
    (p.root / ".git" / "info" / "attributes").write_text("app.py filter=slow\n", "utf-8")
    slow, checking_out = tmp_path / "slow.gitconfig", tmp_path / "checking-out"
    slow.write_text(f'[filter "slow"]\n\tsmudge = "touch {checking_out}; sleep 5; cat"\n', "utf-8")
    point = {"at": "aether.state.checkpoints:git", "when": "inside", "git": ["worktree", "add"], "once": [str(checking_out)], **OLD_GIT}
    kills.killed_at(p.root, point, "record", "w1", "-", input=done(modified=["app.py"]), env={"GIT_CONFIG_GLOBAL": str(slow)})
    assert "locked" in " ".join(kills.worktrees_listed(p.root))
    after = ok(p, "next", "--build", "1")
    assert [s["id"] for s in after["spawns"]] == ["v1"]
    assert "return 11" in (p.root / "app.py").read_text("utf-8") and kills.worktrees_listed(p.root) == []


# ---------------------------------------------------------------- 4. the isolation decision, made with the run


def test_a_kill_at_the_builds_start_leaves_no_state_half_written(worktree_colony):
    """The build's start writes each state file once, at its end: killed after its run was made
    (the isolation decided), it wrote none, and the same command starts the build whole."""
    p = worktree_colony
    data = p.root / ".aether" / "data"
    before = {f.name: f.read_bytes() for f in data.glob("*.json")}
    kills.killed_at(p.root, AFTER_THE_RUN, "next", "--build", "1")
    assert {f.name: f.read_bytes() for f in data.glob("*.json")} == before
    start_wave(p)
    run = p.load("spawns.json")["runs"][-1]
    assert run["isolation"]["on"] is True and run["isolation"]["scope"] == run["scope"]
    assert "Builders: isolation on" in run["started_text"]
    assert all(tree(p)["nodes"][w].get("worktree") for w in ("w1", "w2"))
    valid(p)


def test_a_run_with_no_isolation_decision_gets_one_and_says_so(worktree_colony):
    p = worktree_colony
    ok(p, "next", "--build", "1")
    spawns = p.load("spawns.json")
    spawns["runs"][-1].pop("isolation")  # a run recorded before the decision was part of it
    p.write("spawns.json", spawns)
    wave = ok(p, "record", "lead1", "-", input=LEAD)["next"]
    assert "isolation on" in wave["text"] and "decided now" in wave["text"]
    assert all(tree(p)["nodes"][w].get("worktree") for w in ("w1", "w2"))


def test_builders_that_must_share_the_tree_are_told_so(worktree_colony):
    p = worktree_colony
    (p.root / ".aether" / "config.yaml").write_text("build:\n  isolation: off\n", "utf-8")
    ok(p, "next", "--build", "1")
    wave = ok(p, "record", "lead1", "-", input=LEAD)["next"]
    assert "Builders: isolation off (build.isolation: off" in wave["text"]
    assert not any(n.get("worktree") for n in tree(p)["nodes"].values())


# ---------------------------------------------------------------- 5. the colony's files out of the user's git commands


def test_the_colonys_files_stay_out_of_git_stash_clean_and_add(worktree_colony):
    p = worktree_colony
    exclude = (p.root / ".git" / "info" / "exclude").read_text("utf-8")
    assert "/.aether/" in exclude.splitlines() and not (p.root / ".gitignore").exists()
    start_wave(p)
    edit(p, "w1", "app.py", "return 1", "return 11")
    (p.root / "mine.txt").write_text("the user's own untracked file\n", "utf-8")
    git(p.root, "-c", "user.name=U", "-c", "user.email=u@x", "stash", "-u")
    assert p.file("COLONY_STATE.json").exists() and not (p.root / "mine.txt").exists()
    ok(p, "record", "w2", "-", input=done())  # the colony goes on, and makes its lock files
    git(p.root, "stash", "pop")  # no lock file of the colony in the way
    assert (p.root / "mine.txt").exists()
    git(p.root, "clean", "-fd")
    assert p.file("COLONY_STATE.json").exists() and workdir(p, "w1").is_dir()
    git(p.root, "add", "-A")
    assert not [f for f in git(p.root, "diff", "--cached", "--name-only").split() if f.startswith(".aether")]
    git(p.root, "reset", "-q")
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    assert tree(p)["nodes"]["w1"]["merge"] == "merged" and "return 11" in (p.root / "app.py").read_text("utf-8")


def test_a_colony_started_before_is_kept_out_at_its_next_build_and_in_a_subfolder_too(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    repo = project.root
    sub = repo / "pkg"
    (sub / ".aether").mkdir(parents=True)
    from helpers.git import init_repo

    shutil.rmtree(repo / ".aether")  # the colony is the subfolder's
    init_repo(repo, {"pkg/app.py": APP}, "base")
    inner = type(project)(sub, project.home)
    ok(inner, "colony-init", "A small app")
    exclude = repo / ".git" / "info" / "exclude"
    assert "/pkg/.aether/" in exclude.read_text("utf-8").splitlines()
    exclude.write_text("# the user's own lines\n*.log", "utf-8")  # as if the colony predated this rule
    from helpers.worktrees import PLAN

    ok(inner, "plan-load", "-", input=json.dumps(PLAN))
    ok(inner, "next", "--build", "1")
    assert exclude.read_text("utf-8").splitlines()[:2] == ["# the user's own lines", "*.log"]
    assert "/pkg/.aether/" in exclude.read_text("utf-8").splitlines()
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_an_answer_after_the_state_folder_vanished_says_so_and_writes_nothing(worktree_colony, tmp_path):
    p = worktree_colony
    start_wave(p)
    shutil.move(p.data, tmp_path / "away")  # what a `git stash -u` did before the colony was kept out
    error = p.run("record", "w2", "-", input=done()).error
    assert error["code"] == "state_missing" and "vanished" in error["error"] and "git stash pop" in error["error"]
    assert not p.data.exists()  # no lock file made: a `git stash pop` would find nothing in its way
    shutil.move(tmp_path / "away", p.data)
    ok(p, "record", "w2", "-", input=done())


# ---------------------------------------------------------------- the sweep: kills at random moments


def _fresh(tmp_path: Path, n: int, monkeypatch):
    from conftest import Project

    root = tmp_path / f"p{n}"
    (root / ".aether").mkdir(parents=True)
    p = start_colony(Project(root, Path(os.environ["HOME"])), monkeypatch)
    start_wave(p)
    both_builders_edit(p)
    return p


def _oracle(p, before: dict, text: str | None) -> None:
    """After recovery: each builder's work merged or on a named ref (and named by the text when on
    one), the user's HEAD, index and branches as they were, every state file valid."""
    for path, change in (("app.py", "return 11"), ("util.py", "HELP = 2")):
        found = kills.where(p.root, path, change)
        assert found, f"{path}: {change!r} lost"
        if text is not None and "project" not in found:
            kept_text(text, found)
    assert kills.users_view(p.root) == before
    valid(p)


def _step(p, kind: str, rng: random.Random | None, window: float) -> tuple:
    """The wave's merge-back (the last builder's `record`) or `build-abort`, killed after a random
    part of `window` seconds (not killed without `rng`): (seconds it ran, where the kill landed)."""
    answer = done(modified=["app.py"])
    if kind == "merge":
        ok(p, "record", "w2", "-", input=done(created=["util.py"]))
        proc = kills.start(p.root, None, "record", "w1", "-", input=answer)
    else:
        ok(p, "record", "w1", "-", input=answer)
        proc = kills.start(p.root, None, "build-abort", "1", "--reason", "stop")
    began = time.monotonic()
    landed = kills.kill_after(proc, rng.uniform(0, window) if rng else None)
    took = time.monotonic() - began
    if not landed:
        return took, "after"
    if kind == "merge":
        nodes = tree(p)["nodes"]
        return took, "merging" if nodes["w1"]["status"] == "completed" else "recording"
    return took, "worktrees" if p.load("COLONY_STATE.json")["state"] == "READY" else "state"


def _recover(p, kind: str, before: dict) -> None:
    """The recovery command, then the oracle."""
    if kind == "merge":
        ok(p, "record", "w1", "-", input=done(modified=["app.py"]))  # recorded once, whatever the kill left
        action = ok(p, "next", "--build", "1")
        assert action["action"] == "spawn" and [s["id"] for s in action["spawns"]] == ["v1"], action
        _oracle(p, before, None)
        assert {tree(p)["nodes"][w]["merge"] for w in ("w1", "w2")} == {"merged"}
        ok(p, "worktrees", "--clean", "--json")  # a merged worktree a kill left before its removal
        assert kills.kept_refs(p.root) == []  # merged work is not kept a second time
    else:
        out = ok(p, "build-abort", "1", "--reason", "-", input="stop\n")  # run again: it finishes the first
        _oracle(p, before, out["text"])
        assert p.load("COLONY_STATE.json")["state"] == "READY"
    assert kills.worktrees_listed(p.root) == []


@pytest.mark.slow
def test_merge_backs_and_aborts_killed_at_random_moments_lose_nothing(tmp_path, monkeypatch):
    """A wave's merge-back and `build-abort`, each killed at a random moment of its run 20 times
    (within the shortest time it ran to its end here), then recovered; the oracle after each."""
    rng = random.Random(20260205)
    windows, landed = {}, {}
    for n in range(42):
        kind = ("merge", "abort")[n % 2]
        p = _fresh(tmp_path, n, monkeypatch)
        before = kills.users_view(p.root)
        took, where = _step(p, kind, rng if kind in windows else None, windows.get(kind, 0))
        if where == "after":  # ran to its end (the first of each kind is not killed): the window is its shortest run
            windows[kind] = min(windows.get(kind, took), took)
        landed.setdefault(kind, []).append(where)
        _recover(p, kind, before)
        shutil.rmtree(p.root)
    killed = {kind: [w for w in spots if w != "after"] for kind, spots in landed.items()}
    assert len(killed["merge"]) >= 10 and len(killed["abort"]) >= 10, landed  # most kills landed inside the step
    assert len(set(killed["merge"])) >= 2 and len(set(killed["abort"])) >= 2, landed  # at more than one point of it
