"""Git checkpoints in real temporary repositories: refs through a temporary index that leave
HEAD, the index, the working tree and every branch exactly as they were."""

import json
import os

import pytest

from helpers.colony import make_plan
from helpers.git import git


def tree_files(root):
    """Every file under root except .git and colony state: {relative path: bytes}."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and not os.path.join(folder, d).endswith(os.path.join(".aether", "data"))]
        for name in files:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root)] = open(path, "rb").read()  # noqa: SIM115
    return out


def git_state(root):
    """What must never change: HEAD, the index, branches, tags' absence on branches, files."""
    gitdir = os.path.join(root, ".git")
    index = os.path.join(gitdir, "index")
    state = {
        "HEAD": open(os.path.join(gitdir, "HEAD"), "rb").read(),  # noqa: SIM115
        "index": open(index, "rb").read() if os.path.exists(index) else None,  # noqa: SIM115
        "branches": git(root, "for-each-ref", "refs/heads"),
        "files": tree_files(root),
    }
    status = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    state["status"] = [line for line in status if ".aether/data/" not in line]
    return state


@pytest.fixture
def repo(project):
    """A git repository with one commit, a staged change, an unstaged change, an untracked
    file and an ignored file; a colony with a plan, before its first build."""
    root = project.root
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "app.py").write_text("print('v1')\n")
    (root / "lib.py").write_text("x = 1\n")
    git(root, "add", ".gitignore", "app.py", "lib.py")
    git(root, "commit", "-q", "-m", "first")
    (root / "app.py").write_text("print('v2')\n")
    git(root, "add", "app.py")  # staged
    (root / "lib.py").write_text("x = 2\n")  # unstaged
    (root / "notes ü.txt").write_text("untracked ünïcødé\n")
    (root / "debug.log").write_text("ignored\n")
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    return project


def test_build_start_checkpoint_leaves_everything_untouched(repo):
    root = repo.root
    before = git_state(root)
    head = git(root, "rev-parse", "HEAD")
    out = repo.run("build-start", 1).json
    cp = out["checkpoint"]
    assert cp["ref"].startswith("refs/aether/checkpoints/phase-1-") and cp["phase"] == 1
    assert cp["label"] == "build-start phase 1" and cp["parent"] == head
    assert git_state(root) == before  # HEAD, index, branches and working tree byte-for-byte
    assert git(root, "rev-parse", cp["ref"]) == cp["commit"]
    assert git(root, "rev-parse", f"{cp['commit']}^") == head
    files = git(root, "ls-tree", "-r", "--name-only", cp["commit"]).splitlines()
    assert sorted(files) == [".gitignore", "app.py", "lib.py", "notes ü.txt"]  # untracked in, ignored out
    assert not any(f.startswith(".aether") for f in files)  # colony state is never snapshotted
    assert git(root, "show", f"{cp['commit']}:app.py") == "print('v2')"
    assert git(root, "show", f"{cp['commit']}:lib.py") == "x = 2"
    assert git(root, "log", "--format=%an <%ae>", "-1", cp["commit"]) == "Aether <aether@localhost>"
    assert git(root, "rev-list", "--count", "main") == "1"  # no commit on any branch
    stored = repo.load("checkpoints.json")["checkpoints"]
    assert stored == [cp]
    assert "Checkpoint: refs/aether/checkpoints/phase-1-" in out["text"]


def test_repository_without_commits(project):
    root = project.root
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    before = git_state(root)
    cp = project.run("build-start", 1).json["checkpoint"]
    assert cp["parent"] is None
    assert git(root, "rev-list", "--count", cp["commit"]) == "1"
    assert git(root, "ls-tree", "-r", "--name-only", cp["commit"]) == "a.txt"
    assert git_state(root) == before
    assert git(root, "rev-parse", "-q", "--verify", "HEAD", check=False) == ""  # still unborn


def test_no_git_repository_no_checkpoint_no_error(project):
    project.run("colony-init", "Build a todo API").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    out = project.run("build-start", 1).json
    assert out["checkpoint"] is None and out["warnings"] == []
    assert not project.file("checkpoints.json").exists()


def test_git_missing_is_a_warning_not_a_failure(repo, monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    out = repo.run("build-start", 1).json
    assert out["checkpoint"] is None and "git is not installed" in out["warnings"][0]
    assert repo.load("COLONY_STATE.json")["state"] == "EXECUTING"


def test_refused_build_makes_no_checkpoint(repo):
    assert repo.run("build-start", 2).error["code"] == "phase_out_of_order"
    assert git(repo.root, "for-each-ref", "refs/aether") == ""


def test_same_second_checkpoints_get_distinct_refs(repo, monkeypatch):
    from aether.state import checkpoints

    monkeypatch.setenv("AETHER_NOW", "1800000000")
    monkeypatch.chdir(repo.root)
    first = checkpoints.create("one", 2)
    second = checkpoints.create("two", 2)
    assert first["ref"] == "refs/aether/checkpoints/phase-2-1800000000"
    assert second["ref"] == "refs/aether/checkpoints/phase-2-1800000000-2"
    assert checkpoints.latest(2) == second and checkpoints.latest() == second
    assert checkpoints.latest(7) is None
    assert checkpoints.create("colony-wide", None)["ref"].startswith("refs/aether/checkpoints/colony-")


def test_cap_deletes_old_refs(repo, monkeypatch):
    from aether.state import checkpoints

    monkeypatch.setattr(checkpoints, "MAX_CHECKPOINTS", 2)
    monkeypatch.chdir(repo.root)
    made = [checkpoints.create(f"n{i}", 1) for i in range(3)]
    kept = repo.load("checkpoints.json")["checkpoints"]
    assert [c["ref"] for c in kept] == [made[1]["ref"], made[2]["ref"]]
    refs = git(repo.root, "for-each-ref", "--format=%(refname)", "refs/aether").splitlines()
    assert sorted(refs) == sorted(c["ref"] for c in kept)


def test_bad_label_and_phase(repo, monkeypatch):
    from aether.core.exceptions import AetherError
    from aether.state import checkpoints

    monkeypatch.chdir(repo.root)
    for label, phase, code in (("  ", 1, "invalid_label"), ("ok", -1, "invalid_argument"), ("ok", True, "invalid_argument")):
        with pytest.raises(AetherError) as exc:
            checkpoints.create(label, phase)
        assert exc.value.code == code
    long = checkpoints.create("x" * 500 + "\nnext line", 1)
    assert len(long["label"]) == checkpoints.MAX_LABEL_LENGTH and "\n" not in long["label"]


def test_abort_tags(repo, monkeypatch):
    from aether.state import checkpoints

    monkeypatch.chdir(repo.root)
    before = git_state(repo.root)
    first = checkpoints.tag_abort(3, "tests fail: 'quoted' \"reason\"\nsecond line")
    second = checkpoints.tag_abort(3, "again")
    third = checkpoints.tag_abort(3, "and again")
    assert (first, second, third) == ("aether/phase-3-aborted", "aether/phase-3-aborted-2", "aether/phase-3-aborted-3")
    assert git(repo.root, "cat-file", "-t", first) == "tag"  # annotated
    message = git(repo.root, "tag", "-l", "--format=%(contents)", first)
    assert message.startswith("Aborted: tests fail: 'quoted' \"reason\"")
    # the tagged commit holds the files as the build left them
    assert git(repo.root, "show", f"{first}^{{commit}}:lib.py") == "x = 2"
    assert git_state(repo.root) == before


def test_abort_tag_outside_git(project, monkeypatch):
    from aether.state import checkpoints

    monkeypatch.chdir(project.root)
    assert checkpoints.tag_abort(1, "reason") is None


def test_restore_puts_files_back(repo, monkeypatch):
    from aether.state import checkpoints

    monkeypatch.chdir(repo.root)
    root = repo.root
    cp = checkpoints.create("before work", 1)
    index_before = (root / ".git" / "index").read_bytes()
    head_before = git(root, "rev-parse", "HEAD")
    (root / "app.py").write_text("print('broken')\n")
    (root / "lib.py").unlink()
    (root / "new_module.py").write_text("junk\n")
    (root / "debug.log").write_text("still ignored\n")
    checkpoints.create("the broken attempt", 1)  # saved, so restore needs no force
    out = checkpoints.restore(cp["ref"])
    assert out["removed"] == ["new_module.py"] and out["saved_first"] is None
    assert (root / "app.py").read_text() == "print('v2')\n"
    assert (root / "lib.py").read_text() == "x = 2\n"
    assert not (root / "new_module.py").exists()
    assert (root / "debug.log").read_text() == "still ignored\n"  # ignored files are not ours
    assert (root / ".git" / "index").read_bytes() == index_before
    assert git(root, "rev-parse", "HEAD") == head_before
    assert repo.load("COLONY_STATE.json")["state"] == "READY"  # state files untouched


def test_restore_refuses_unsaved_changes_unless_forced(repo, monkeypatch):
    from aether.core.exceptions import AetherError
    from aether.state import checkpoints

    monkeypatch.chdir(repo.root)
    cp = checkpoints.create("base", 1)
    (repo.root / "app.py").write_text("print('precious unsaved work')\n")
    with pytest.raises(AetherError) as exc:
        checkpoints.restore(cp["ref"])
    assert exc.value.code == "unsaved_changes"
    assert (repo.root / "app.py").read_text() == "print('precious unsaved work')\n"
    out = checkpoints.restore(cp["ref"], force=True)
    saved = out["saved_first"]
    assert saved and git(repo.root, "show", f"{saved['commit']}:app.py") == "print('precious unsaved work')"
    assert (repo.root / "app.py").read_text() == "print('v2')\n"


def test_restore_errors(repo, monkeypatch):
    from aether.core.exceptions import AetherError
    from aether.state import checkpoints

    monkeypatch.chdir(repo.root)
    for ref, code in (("refs/aether/checkpoints/nope", "unknown_checkpoint"), ("--all", "invalid_argument"), ("", "invalid_argument")):
        with pytest.raises(AetherError) as exc:
            checkpoints.restore(ref)
        assert exc.value.code == code


def test_restore_outside_git(project, monkeypatch):
    from aether.core.exceptions import AetherError
    from aether.state import checkpoints

    monkeypatch.chdir(project.root)
    with pytest.raises(AetherError) as exc:
        checkpoints.restore("refs/aether/checkpoints/phase-1-1")
    assert exc.value.code == "not_a_git_repo"


def test_restore_after_head_moved_is_safe_when_committed(repo, monkeypatch):
    from aether.state import checkpoints

    monkeypatch.chdir(repo.root)
    cp = checkpoints.create("base", 1)
    (repo.root / "app.py").write_text("print('v3')\n")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "user commit")  # the working tree now equals HEAD
    out = checkpoints.restore(cp["ref"])
    assert out["saved_first"] is None and (repo.root / "app.py").read_text() == "print('v2')\n"


@pytest.mark.parametrize("index_version", ["2", "4"])
def test_committed_colony_state_stays_out_of_snapshots(repo, monkeypatch, index_version):
    from aether.state import checkpoints

    root = repo.root
    git(root, "add", "-f", ".aether/data")  # a user who tracks the colony's state files
    git(root, "commit", "-q", "-m", "track state")
    git(root, "update-index", f"--index-version={index_version}")
    monkeypatch.chdir(root)
    cp = checkpoints.create("with tracked state", 1)
    files = git(root, "ls-tree", "-r", "--name-only", cp["commit"]).splitlines()
    assert files and not any(f.startswith(".aether/data") for f in files)
    state = (root / ".aether" / "data" / "COLONY_STATE.json").read_bytes()
    assert checkpoints.restore(cp["ref"])["removed"] == []
    assert (root / ".aether" / "data" / "COLONY_STATE.json").read_bytes() == state
