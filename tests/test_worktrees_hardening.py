"""Builders' worktrees that lose nothing and never hang, whatever a builder did to its copy: a HEAD
moved off its snapshot (a checkout, a commit), a branch name git cannot create, a copy replaced by
a symbolic link or gone, a merge the disk refuses half-way, git's environment variables, a stale
lock — and `build-abort`, which ends the build whatever state the worktrees are in. Real git
repositories; the calls that once hung run in a subprocess with a timeout."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from aether.core.exceptions import AetherError

from helpers.colony import ok, tree
from helpers.git import git_output as git  # as git printed it
from helpers.worktrees import APP, LEAD, done, edit, start_wave, workdir

HANG = 60  # seconds a subprocess call may take before the test counts it as hung


def worktrees(p) -> list:
    return p.load("worktrees.json")["worktrees"]


def record_of(p, node: str) -> dict:
    return next(w for w in reversed(worktrees(p)) if w["node"] == node)


def events(p, kind: str) -> list:
    return [e["content"] for e in p.load("events.json")["events"] if e["type"] == kind]


def failed(task: str, error: str) -> str:
    return (
        "```json\n"
        + json.dumps(
            {
                "status": "failed",
                "summary": error,
                "files_created": [],
                "files_modified": [],
                "failure": {
                    "task": task,
                    "error": error,
                    "root_cause": "?",
                    "suggested_fix": "fix it",
                    "confidence": 90,
                    "fix_scope": "contained",
                    "files": ["app.py"],
                    "category": "logic",
                },
            }
        )
        + "\n```"
    )


def brief_of(p, action: dict, node: str) -> str:
    spawn = next(s for s in action["spawns"] if s["id"] == node)
    return (p.root / spawn["prompt"].split("Your brief is ")[1].split(" ")[0]).read_text("utf-8")


def sh_ok(p, *args, input=None, env=None) -> dict:
    """`bin/aether ARGS` in a subprocess that must answer within HANG seconds."""
    return p.sh(*args, input=input, env=env, timeout=HANG).json


# ---------------------------------------------------------------- 5. a HEAD that left its base is refused, not merged


def test_a_checkout_and_commit_on_a_users_branch_is_refused_and_the_branch_put_back(worktree_colony):
    p = worktree_colony
    git(p.root, "branch", "feature")  # the user's branch: app.py only, no notes.txt
    feature = git(p.root, "rev-parse", "feature").strip()
    head = (git(p.root, "symbolic-ref", "HEAD"), git(p.root, "rev-parse", "HEAD"))
    start_wave(p)
    copy = workdir(p, "w1")
    git(copy, "checkout", "-q", "feature")  # notes.txt (untracked in the project) leaves the copy
    edit(p, "w1", "app.py", "return 1", "return 10")
    git(copy, "commit", "-q", "-am", "on the user's branch")  # moves feature
    ok(p, "record", "w2", "-", input=done())
    after = ok(p, "record", "w1", "-", input=done(modified=["app.py"]))["next"]
    w1 = tree(p)["nodes"]["w1"]
    assert w1["status"] == "failed" and w1["merge"] == "refused"
    assert w1["failure"]["category"] == "worktree_head_moved" and "feature" in w1["failure"]["error"]
    assert (p.root / "notes.txt").exists() and (p.root / "app.py").read_text("utf-8") == APP  # nothing merged
    assert git(p.root, "rev-parse", "feature").strip() == feature  # put back where it was …
    assert "feature" in " ".join(events(p, "branch_put_back")) and "put back" in w1["failure"]["error"]  # … and said
    assert (git(p.root, "symbolic-ref", "HEAD"), git(p.root, "rev-parse", "HEAD")) == head
    kept = record_of(p, "w1")
    assert kept["status"] == "kept" and "return 10" in git(p.root, "show", f"{kept['branch']}:app.py")  # nothing lost
    assert [s["id"] for s in after["spawns"]] == ["r1"]  # retried like a conflict, on the merged state
    assert (workdir(p, "r1") / "notes.txt").exists()


def test_a_commit_in_a_detached_copy_is_refused_not_merged(worktree_colony):
    p = worktree_colony
    start_wave(p)
    edit(p, "w1", "app.py", "return 1", "return 10")
    git(workdir(p, "w1"), "commit", "-q", "-am", "committed by the builder")
    ok(p, "record", "w2", "-", input=done())
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    w1 = tree(p)["nodes"]["w1"]
    assert w1["merge"] == "refused" and w1["failure"]["category"] == "worktree_head_moved"
    assert (p.root / "app.py").read_text("utf-8") == APP
    assert "return 10" in git(p.root, "show", f"{record_of(p, 'w1')['branch']}:app.py")


def test_build_abort_puts_back_a_users_branch_a_builder_committed_on(worktree_colony):
    p = worktree_colony
    git(p.root, "branch", "feature")
    feature = git(p.root, "rev-parse", "feature").strip()
    start_wave(p)
    git(workdir(p, "w1"), "checkout", "-q", "feature")
    edit(p, "w1", "app.py", "return 1", "return 10")
    git(workdir(p, "w1"), "commit", "-q", "-am", "on the user's branch")
    out = sh_ok(p, "build-abort", "1", "--reason", "-", input="stop\n")
    assert git(p.root, "rev-parse", "feature").strip() == feature and "feature" in out["text"]


# ---------------------------------------------------------------- 6. a blocked branch name ends, it never loops


def conflicting_wave(p) -> None:
    start_wave(p)
    edit(p, "w1", "app.py", "return 2", "return 'one'")
    edit(p, "w2", "app.py", "return 2", "return 'two'")
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))


def test_a_branch_named_aether_does_not_hang_a_conflict_and_the_result_is_kept_where_git_can_name_it(worktree_colony):
    p = worktree_colony
    git(p.root, "branch", "aether")  # refs/heads/aether blocks refs/heads/aether/<build>/<node>
    conflicting_wave(p)
    after = sh_ok(p, "record", "w2", "-", input=done(modified=["app.py"]))["next"]
    assert [s["id"] for s in after["spawns"]] == ["r1"]
    name = record_of(p, "w2")["branch"]
    assert name.startswith("refs/aether/kept/") and "return 'two'" in git(p.root, "show", f"{name}:app.py")
    listed = ok(p, "worktrees", "--json")
    assert [k["apply"] for k in listed["kept"]] == [f"git cherry-pick --no-commit {name}"]
    ok(p, "worktrees", "--drop", name, "--json")
    assert git(p.root, "for-each-ref", "refs/aether/kept/") == ""


def test_build_abort_keeps_a_result_when_a_branch_named_aether_blocks_the_usual_name(worktree_colony):
    p = worktree_colony
    git(p.root, "branch", "aether")
    start_wave(p)
    edit(p, "w1", "app.py", "return 1", "return 11")
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    out = sh_ok(p, "build-abort", "1", "--reason", "-", input="stop\n")
    name = record_of(p, "w1")["branch"]
    assert name.startswith("refs/aether/kept/") and name in out["text"]
    assert "return 11" in git(p.root, "show", f"{name}:app.py")


def test_a_result_no_name_can_hold_is_a_clear_error_not_a_loop(worktree_colony):
    p = worktree_colony
    git(p.root, "branch", "aether")
    git(p.root, "update-ref", "refs/aether/kept", "HEAD")  # blocks the fallback namespace too
    conflicting_wave(p)
    error = sh_ok(p, "record", "w2", "-", input=done(modified=["app.py"]))["next_error"]  # recorded; the merge says why
    assert error["code"] == "result_not_kept" and "git branch <a name>" in error["error"]
    assert "refs/aether/kept" in error["error"] and (p.root / "app.py").read_text("utf-8").count("'one'") == 1


def test_kept_names_and_checkpoint_refs_take_the_next_free_suffix(worktree_colony, monkeypatch):
    from aether.state import checkpoints, worktrees

    p = worktree_colony
    monkeypatch.chdir(p.root)
    r = checkpoints.repo()
    head = git(p.root, "rev-parse", "HEAD").strip()
    other = git(p.root, "commit-tree", "-p", head, "-m", "another", f"{head}^{{tree}}").strip()
    for name in ("aether/b1/w1", "aether/b1/w1-2", "aether/b1/w1-3"):
        git(p.root, "update-ref", f"refs/heads/{name}", other)
    assert worktrees.keep(r, "b1", "w1", head) == "aether/b1/w1-4"
    assert worktrees.keep(r, "b1", "w1", head) == "aether/b1/w1-4"  # the same result: the same name
    tags = [checkpoints.tag_abort(1, "stop") for _ in range(3)]
    assert tags == ["aether/phase-1-aborted", "aether/phase-1-aborted-2", "aether/phase-1-aborted-3"]


def test_an_abort_tag_named_aether_is_an_error_the_abort_report_names(worktree_colony, monkeypatch):
    from aether.state import checkpoints

    p = worktree_colony
    monkeypatch.chdir(p.root)
    git(p.root, "tag", "aether")
    with pytest.raises(AetherError) as exc:
        checkpoints.tag_abort(1, "stop")
    assert exc.value.code == "git_failed" and "refs/tags/aether" in exc.value.message


# ---------------------------------------------------------------- 7. a copy replaced by a symbolic link, or gone


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("not the colony's\n", "utf-8")
    return folder


def replace_with_link(copy: Path, target: Path) -> None:
    shutil.rmtree(copy)
    copy.symlink_to(target)


def test_a_copy_replaced_by_a_link_is_a_worktree_gone_and_its_retry_works_in_the_project(worktree_colony, outside):
    p = worktree_colony
    start_wave(p)
    ok(p, "record", "w2", "-", input=done())
    replace_with_link(workdir(p, "w1"), outside)
    after = ok(p, "record", "w1", "-", input=done())["next"]
    assert tree(p)["nodes"]["w1"]["failure"]["category"] == "worktree_gone"
    copy = workdir(p, "r1")
    assert [s["id"] for s in after["spawns"]] == ["r1"] and copy.is_dir() and not copy.is_symlink()
    assert sorted(os.listdir(outside)) == ["keep.txt"]


@pytest.mark.parametrize("how", ["removed", "linked"])
def test_a_copy_gone_when_its_task_is_retried_is_made_again_and_the_brief_says_the_work_was_lost(worktree_colony, outside, how):
    p = worktree_colony
    start_wave(p)
    ok(p, "record", "w2", "-", input=done())
    copy = workdir(p, "w1")
    (copy / "half.py").write_text("HALF = 1\n", "utf-8")
    if how == "removed":
        shutil.rmtree(copy)
    else:
        replace_with_link(copy, outside)
    after = ok(p, "record", "w1", "-", input=failed("1.1", "it does not import"))["next"]
    assert [s["id"] for s in after["spawns"]] == ["r1"]
    again = workdir(p, "r1")
    assert again == copy and again.is_dir() and not again.is_symlink()
    assert (again / "app.py").read_text("utf-8") == APP and not (again / "half.py").exists()
    assert "was lost" in brief_of(p, after, "r1") and events(p, "worktree_lost")
    assert sorted(os.listdir(outside)) == ["keep.txt"]


# ---------------------------------------------------------------- 8. a merge writes everything or nothing


def one_builder(p, work, claims=None) -> None:
    start_wave(p)
    work(workdir(p, "w1"))
    ok(p, "record", "w2", "-", input=done())
    ok(p, "record", "w1", "-", input=claims or done())


def test_a_folder_in_the_way_of_a_file_changes_nothing_and_names_the_path(worktree_colony):
    p = worktree_colony
    (p.root / ".gitignore").write_text("*.log\n", "utf-8")
    (p.root / "out").mkdir()
    (p.root / "out" / "run.log").write_text("the user's log\n", "utf-8")  # ignored: not in any snapshot

    def work(copy):
        (copy / "a.py").write_text("A = 1\n", "utf-8")
        (copy / "out").write_text("a file\n", "utf-8")

    one_builder(p, work)
    w1 = tree(p)["nodes"]["w1"]
    assert w1["merge"] == "conflict" and w1["failure"]["files"] == ["out"]
    assert "folder" in w1["failure"]["error"] and ".tmp" not in w1["failure"]["error"]
    assert not (p.root / "a.py").exists() and (p.root / "out" / "run.log").exists()


def test_a_file_in_the_way_of_a_folder_changes_nothing_and_names_the_path(worktree_colony):
    p = worktree_colony
    (p.root / ".gitignore").write_text("secret\n!secret/\n", "utf-8")  # the file is ignored, a folder would not be
    (p.root / "secret").write_text("the user's secret\n", "utf-8")

    def work(copy):
        (copy / "a.py").write_text("A = 1\n", "utf-8")
        (copy / "secret").mkdir()
        (copy / "secret" / "x.py").write_text("X = 1\n", "utf-8")

    one_builder(p, work)
    w1 = tree(p)["nodes"]["w1"]
    assert w1["merge"] == "conflict" and w1["failure"]["files"] == ["secret/x.py"]
    assert "secret is a file" in w1["failure"]["error"] and str(p.root) not in w1["failure"]["error"]
    assert not (p.root / "a.py").exists() and (p.root / "secret").read_text("utf-8") == "the user's secret\n"


def test_a_write_that_fails_after_the_checks_is_rolled_back(worktree_colony, monkeypatch):
    from aether.state import atomic_files

    p = worktree_colony
    (p.root / "app.py").chmod(0o640)
    real = atomic_files.write_bytes_atomic

    def disk_full(path, payload, mode=None):
        if path.endswith("z.py"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path + ".tmp.123")
        return real(path, payload, mode)

    monkeypatch.setattr(atomic_files, "write_bytes_atomic", disk_full)

    def work(copy):
        edit(p, "w1", "app.py", "return 1", "return 10")
        (copy / "notes.txt").unlink()
        (copy / "sub").mkdir()
        (copy / "sub" / "new.py").write_text("NEW = 1\n", "utf-8")
        (copy / "z.py").write_text("Z = 1\n", "utf-8")

    one_builder(p, work)
    w1 = tree(p)["nodes"]["w1"]
    assert w1["merge"] == "conflict" and w1["failure"]["files"] == ["z.py"]
    assert "No space left on device" in w1["failure"]["error"] and ".tmp" not in w1["failure"]["error"]
    assert (p.root / "app.py").read_text("utf-8") == APP and (os.stat(p.root / "app.py").st_mode & 0o777) == 0o640
    assert (p.root / "notes.txt").read_text("utf-8") == "untracked, made by the colony\n"
    assert not (p.root / "sub").exists() and not (p.root / "z.py").exists()


# ---------------------------------------------------------------- 9. git's environment, and locks


LOCATING = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
    "GIT_CONFIG_VALUE_0",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
)


def test_git_env_drops_every_variable_that_locates_a_repository(monkeypatch):
    from aether.state import checkpoints

    listed = subprocess.run(["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True).stdout.split()
    for var in {*LOCATING, *listed}:
        monkeypatch.setenv(var, "/somewhere/else")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/home/me/.gitconfig")  # the user's settings, not a repository
    env = checkpoints.git_env()
    assert sorted(v for v in {*LOCATING, *listed} if v in env) == []
    assert env["GIT_CONFIG_GLOBAL"] == "/home/me/.gitconfig"


@pytest.mark.parametrize("var", ["GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"])
def test_checkpoints_and_worktrees_stay_in_the_projects_repository_whatever_the_environment(worktree_colony, tmp_path, var):
    p = worktree_colony
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "someone else's")
    env = {var: str(other / ".git" / ("objects" if var == "GIT_OBJECT_DIRECTORY" else ""))}
    sh_ok(p, "next", "--build", "1", env=env)

    sh_ok(p, "record", "lead1", "-", input=LEAD, env=env)
    refs = git(p.root, "for-each-ref", "--format=%(objectname)", "refs/aether/checkpoints/").split()
    assert refs and all(git(p.root, "cat-file", "-t", c).strip() == "commit" for c in refs)
    assert git(other, "for-each-ref", "refs/aether/") == "" and len(git(other, "worktree", "list").splitlines()) == 1
    assert len(git(p.root, "worktree", "list").splitlines()) == 3  # the project and its two builders


def test_a_stale_index_lock_in_a_builders_git_folder_blocks_nothing(worktree_colony):
    p = worktree_colony
    start_wave(p)
    edit(p, "w1", "app.py", "return 1", "return 10")
    Path(record_of(p, "w1")["gitdir"], "index.lock").write_text("", "utf-8")  # a git that died in the copy
    ok(p, "record", "w2", "-", input=done())
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    assert tree(p)["nodes"]["w1"]["merge"] == "merged" and "return 10" in (p.root / "app.py").read_text("utf-8")


def test_a_lock_git_cannot_take_is_named_with_the_command_that_removes_it(worktree_colony):
    from aether.state import checkpoints

    p = worktree_colony
    lock = p.root / ".git" / "index.lock"
    lock.write_text("", "utf-8")
    with pytest.raises(AetherError) as exc:
        checkpoints.git(["add", "-A"], str(p.root))
    assert exc.value.code == "git_locked" and f"rm '{lock}'" in exc.value.message


# ---------------------------------------------------------------- build-abort always aborts


def _fake_git(tmp_path: Path) -> dict:
    """A `git` on PATH that fails on what saves or removes a worktree (and works otherwise)."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    script = folder / "git"
    script.write_text(
        '#!/bin/sh\nfor a in "$@"; do case "$a" in add|worktree|update-ref|write-tree)\n'
        "  echo 'fatal: simulated failure' >&2; exit 128;; esac; done\n"
        f'exec {shutil.which("git")} "$@"\n',
        "utf-8",
    )
    script.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


BROKEN = ["gone", "linked", "locked", "git_failing", "name_blocked", "builders_folder_linked"]


@pytest.mark.parametrize("state", BROKEN)
def test_build_abort_always_ends_the_build_and_says_what_it_could_not_do(worktree_colony, outside, tmp_path, state):
    p = worktree_colony
    start_wave(p)
    edit(p, "w1", "app.py", "return 1", "return 11")
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))  # finished, not merged: w2 is still out
    copy, env = workdir(p, "w1"), None
    if state == "gone":
        shutil.rmtree(copy)
    elif state == "linked":
        replace_with_link(copy, outside)
    elif state == "locked":
        Path(record_of(p, "w1")["gitdir"], "index.lock").write_text("", "utf-8")
    elif state == "git_failing":
        env = _fake_git(tmp_path)
    elif state == "name_blocked":
        git(p.root, "branch", "aether")
    else:
        folder = p.root / ".aether" / "worktrees"
        folder.rename(tmp_path / "moved-away")
        folder.symlink_to(outside)
    out = sh_ok(p, "build-abort", "1", "--reason", "-", input="stop\n", env=env)
    colony_state = p.load("COLONY_STATE.json")
    assert colony_state["state"] == "READY" and out["phase_status"] == "failed"
    assert sorted(os.listdir(outside)) == ["keep.txt"]
    w1 = record_of(p, "w1")
    if state in ("locked", "name_blocked"):  # saved all the same
        assert w1["status"] == "kept" and "return 11" in git(p.root, "show", f"{w1['branch']}:app.py")
    elif state == "gone":
        assert w1["status"] == "discarded" and "w1" in out["text"] and "gone" in out["text"]
    elif state == "linked":
        assert w1["status"] == "discarded" and not copy.is_symlink() and "gone" in out["text"]
    elif state == "git_failing":  # nothing could be saved: the copy stays where it is, and the text says so
        assert copy.is_dir() and "return 11" in (copy / "app.py").read_text("utf-8")
        assert "simulated failure" in out["text"] and ".aether/worktrees/" in out["text"]
        assert "holds work that could not be kept" in ok(p, "worktrees", "--json")["text"]
        cleaned = ok(p, "worktrees", "--clean", "--json")  # git works again: kept first, then removed
        assert [k["node"] for k in cleaned["kept"]] == ["w1"] and not copy.exists()
        assert "return 11" in git(p.root, "show", f"{record_of(p, 'w1')['branch']}:app.py")
    else:
        assert "symbolic link" in out["text"]
    assert "Traceback" not in json.dumps(out)
