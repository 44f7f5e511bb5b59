"""A safety net a build goes without — no checkpoint, builders sharing one tree the mode wanted
apart — said in one line where the person looks (`aether status`, the run's isolation decision the
status line and a `-p` run read), with why; nothing said when both are there, or isolation is off
by choice."""

from __future__ import annotations

import json
import subprocess

import pytest

from aether.core.exceptions import state_error
from aether.state import checkpoints
from aether.steps import isolation

from helpers.colony import ok, tree
from helpers.worktrees import LEAD


def status(p) -> tuple:
    """(the status text, its `safety` field)."""
    view = ok(p, "status", "--json")
    return view["text"], view["safety"]


def decision(p) -> dict:
    return p.load("spawns.json")["runs"][-1]["isolation"]


def test_outside_git_the_status_says_both_nets_are_off(drive_colony):
    p = drive_colony
    ok(p, "next", "--build", "1")
    text, safety = status(p)
    assert safety == "⚠ no checkpoint · builders share one tree (not a git repository)"
    assert text.splitlines()[2] == safety  # under the colony's name and goal: seen first
    assert decision(p)["warning"] == safety


def test_isolation_off_by_choice_says_only_the_checkpoint(drive_colony):
    p = drive_colony
    (p.root / ".aether" / "config.yaml").write_text("build:\n  isolation: off\n", "utf-8")
    ok(p, "next", "--build", "1")
    assert status(p)[1] == "⚠ no checkpoint (not a git repository)"


def test_a_build_with_both_nets_says_nothing(worktree_colony):
    p = worktree_colony
    ok(p, "next", "--build", "1")
    text, safety = status(p)
    assert safety is None and "⚠" not in text
    assert decision(p)["on"] is True and decision(p)["warning"] is None


def test_git_missing_the_build_goes_on_and_says_why(worktree_colony, monkeypatch, tmp_path):
    p = worktree_colony
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    first = ok(p, "next", "--build", "1")  # was: the isolation decision failed the build's start (git_missing)
    assert first["spawns"][0]["id"] == "lead1"
    assert status(p)[1] == "⚠ no checkpoint · builders share one tree (git is not installed)"


def test_a_failed_checkpoint_turns_isolation_off_and_says_so(worktree_colony, monkeypatch):
    p = worktree_colony

    def fails(label, phase):
        raise state_error("git_failed", "`git add -A` failed: fatal: unable to write new index file")

    monkeypatch.setattr(checkpoints, "snapshot", fails)
    ok(p, "next", "--build", "1")
    assert decision(p)["on"] is False
    assert status(p)[1] == "⚠ no checkpoint · builders share one tree (the checkpoint could not be made)"
    monkeypatch.chdir(p.root)  # the library called in this process: the project is the working directory
    decided = isolation.decide("STANDARD", None, "b1-x", missing="`git add -A` failed: fatal: unable to write new index file")
    assert decided["warning"] == "⚠ no checkpoint · builders share one tree (`git add -A` failed: fatal: unable to write new index file)"


def test_git_too_old_for_worktrees_keeps_the_checkpoint_and_says_builders_share(worktree_colony, monkeypatch):
    p = worktree_colony
    monkeypatch.setattr(checkpoints, "git_version", lambda cwd: (2, 16))
    ok(p, "next", "--build", "1")
    iso = decision(p)
    assert iso["on"] is False and "git 2.16 is too old (the worktrees need git 2.17 or newer)" in iso["why"]
    assert status(p)[1] == "⚠ builders share one tree (git 2.16 is too old)"
    wave = ok(p, "record", "lead1", "-", input=LEAD)["next"]
    assert "Builders: isolation off: git 2.16 is too old" in wave["text"]
    assert not any(n.get("worktree") for n in tree(p)["nodes"].values())


def test_submodules_say_builders_share(worktree_colony):
    p = worktree_colony
    (p.root / ".gitmodules").write_text('[submodule "lib"]\n\tpath = lib\n\turl = ../lib\n', "utf-8")
    ok(p, "next", "--build", "1")
    assert status(p)[1] == "⚠ builders share one tree (the repository has submodules)"


def test_the_warning_goes_with_the_build(drive_colony):
    p = drive_colony
    ok(p, "next", "--build", "1")
    assert status(p)[1]
    ok(p, "build-abort", "1", "--reason", "-", input="changed my mind")
    text, safety = status(p)
    assert safety is None and "⚠" not in text
    assert isolation.warning({"done": True, "isolation": {"warning": "⚠ no checkpoint (x)"}}) is None
    assert isolation.warning({"isolation": {"on": False, "why": "off (an older run)"}}) is None


def test_the_git_version_is_read(tmp_path):
    found = checkpoints.git_version(str(tmp_path))
    assert isinstance(found, tuple) and found >= (2, 0)
    printed = subprocess.run(["git", "version"], capture_output=True, text=True).stdout
    assert printed.startswith(f"git version {found[0]}.{found[1]}")


@pytest.mark.parametrize(
    "lost, shared, line",
    [
        (None, None, None),
        ("not a git repository", "not a git repository", "⚠ no checkpoint · builders share one tree (not a git repository)"),
        ("git is not installed", None, "⚠ no checkpoint (git is not installed)"),
        (None, "git 2.9 is too old", "⚠ builders share one tree (git 2.9 is too old)"),
        (
            "git failed",
            "the repository has submodules",
            "⚠ no checkpoint · builders share one tree (git failed; the repository has submodules)",
        ),
    ],
)
def test_the_warning_line(lost, shared, line):
    assert isolation.warning_line(lost, shared) == line


def test_a_run_recorded_before_the_warning_existed_shows_none(drive_colony):
    p = drive_colony
    ok(p, "next", "--build", "1")
    data = p.load("spawns.json")
    data["runs"][-1]["isolation"].pop("warning")
    p.write("spawns.json", json.dumps(data))
    assert status(p)[1] is None
