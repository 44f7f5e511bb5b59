"""Checkpoints and the builders' worktrees in a project that ignores `.aether/` — the way a person
would write it in .gitignore, a whitelist that ignores everything, or info/exclude — and in one
where nothing ignores it: the checkpoint holds the user's files (tracked, and untracked ones git
does not ignore), never the colony's, and the builders still get their own worktrees."""

from __future__ import annotations

import json

import pytest

from aether.state import checkpoints

from helpers.colony import make_plan, ok, tree
from helpers.git import git
from helpers.worktrees import APP, PLAN, done, start_wave, workdir

IGNORED_TOO = "node_modules/\n.env\n"  # what the user ignores: never in a checkpoint, never force-added
# {form: (.gitignore, .git/info/exclude)}: every way of ignoring the colony's folder
FORMS = {
    "folder": (".aether/\n" + IGNORED_TOO, None),
    "name": (".aether\n" + IGNORED_TOO, None),
    "anchored": ("/.aether/\n" + IGNORED_TOO, None),
    "whitelist": ("*\n!.gitignore\n!*.py\n!src/\n!src/**\n", None),  # everything ignored but the sources
    "info-exclude": (IGNORED_TOO, ".aether/data/\n"),
}


def ignoring(project, form: str) -> None:
    """A repository whose commit holds app.py, src/lib.py and the form's .gitignore; an untracked
    source, ignored files of the user's, and the form's info/exclude line (before the colony's own)."""
    root = project.root
    gitignore, exclude = FORMS[form]
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(gitignore, "utf-8")
    (root / "app.py").write_text(APP, "utf-8")
    (root / "src").mkdir()
    (root / "src" / "lib.py").write_text("X = 1\n", "utf-8")
    git(root, "add", "-f", ".gitignore", "app.py", "src/lib.py")
    git(root, "commit", "-q", "-m", "base")
    if exclude:
        (root / ".git" / "info" / "exclude").write_text(exclude, "utf-8")
    (root / "src" / "new.py").write_text("NEW = 1\n", "utf-8")  # untracked, not ignored
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("ignored\n", "utf-8")
    (root / ".env").write_text("SECRET=1\n", "utf-8")


def files_of(root, commit: str) -> list:
    return sorted(git(root, "ls-tree", "-r", "--name-only", commit).splitlines())


@pytest.mark.parametrize("form", list(FORMS))
def test_the_checkpoint_is_made_whatever_ignores_the_colony(project, form):
    ignoring(project, form)
    root = project.root
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-load", "-", input=json.dumps(make_plan()))
    (root / ".aether" / "notes.md").write_text("the colony's, untracked\n", "utf-8")
    head, status = git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain", "--untracked-files=all")
    out = ok(project, "build-start", 1)
    cp = out["checkpoint"]
    assert cp is not None and out["warnings"] == [], out["warnings"]
    assert files_of(root, cp["commit"]) == [".gitignore", "app.py", "src/lib.py", "src/new.py"]  # the user's files, no more
    assert git(root, "rev-parse", "HEAD") == head and git(root, "status", "--porcelain", "--untracked-files=all") == status


@pytest.mark.parametrize("form", list(FORMS))
def test_builders_get_their_own_worktrees_whatever_ignores_the_colony(project, monkeypatch, form):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    ignoring(project, form)
    root = project.root
    ok(project, "colony-init", "A small app")
    ok(project, "plan-load", "-", input=json.dumps(PLAN))
    start_wave(project)
    isolation = project.load("spawns.json")["runs"][-1]["isolation"]
    assert isolation["on"] is True and isolation.get("warning") is None, isolation
    nodes = tree(project)["nodes"]
    assert nodes["w1"]["worktree"].startswith(".aether/worktrees/") and nodes["w1"]["worktree"] != nodes["w2"]["worktree"]
    copy = workdir(project, "w1")
    assert (copy / "src" / "new.py").exists() and not (copy / "node_modules").exists()  # from the checkpoint
    (copy / "app.py").write_text(APP.replace("return 1", "return 11"), "utf-8")
    other = workdir(project, "w2")
    (other / "src" / "util.py").write_text("U = 1\n", "utf-8")
    (other / "node_modules").mkdir()
    (other / "node_modules" / "built.js").write_text("ignored: not merged\n", "utf-8")
    ok(project, "record", "w1", "-", input=done(modified=["app.py"]))
    ok(project, "record", "w2", "-", input=done(created=["src/util.py"]))
    nodes = tree(project)["nodes"]
    assert nodes["w1"]["merge"] == "merged" and nodes["w2"]["merge"] == "merged"
    assert nodes["w2"]["files_created"] == ["src/util.py"]
    assert "return 11" in (root / "app.py").read_text("utf-8") and (root / "src" / "util.py").exists()
    assert not (root / "node_modules" / "built.js").exists()


def test_the_colonys_untracked_files_stay_out_when_nothing_ignores_them(project, monkeypatch):
    """info/exclude a symbolic link (the colony cannot list itself there) and no .gitignore: the
    colony's files are still never snapshotted, nor removed by a restore; a file of `.aether/` the
    user tracks is snapshotted as it is."""
    root = project.root
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("v1\n", "utf-8")
    (root / ".aether" / "config.yaml").write_text("build:\n  isolation: auto\n", "utf-8")
    git(root, "add", "app.py", ".aether/config.yaml")
    git(root, "commit", "-q", "-m", "base")
    exclude = root / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(root.parent / "elsewhere")
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-load", "-", input=json.dumps(make_plan()))
    (root / ".aether" / "config.yaml").write_text("build:\n  isolation: on\n", "utf-8")
    (root / ".aether" / "notes.md").write_text("the colony's, untracked\n", "utf-8")
    out = ok(project, "build-start", 1)
    assert any("symbolic link" in w for w in out["warnings"])
    cp = out["checkpoint"]
    assert files_of(root, cp["commit"]) == [".aether/config.yaml", "app.py"]
    assert git(root, "show", f"{cp['commit']}:.aether/config.yaml") == "build:\n  isolation: on"
    (root / "app.py").write_text("v2\n", "utf-8")
    (root / ".aether" / "later.md").write_text("made after the checkpoint\n", "utf-8")
    monkeypatch.chdir(root)
    restored = checkpoints.restore(cp["ref"], force=True)
    assert (root / "app.py").read_text("utf-8") == "v1\n" and restored["removed"] == []
    assert (root / ".aether" / "later.md").exists() and (root / ".aether" / "notes.md").exists()
