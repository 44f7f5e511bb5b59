"""Nothing leaves the project: hostile project trees and hostile paths against every command
that reads or writes files. After each run no byte outside the project has changed (the
outside tree is checksummed before and after), and each refusal is one JSON error on stderr.

Figures: `SCENARIOS` × their commands, and `BAD_PATHS` × `PATH_FIELDS` (see test ids).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from aether.core import containment

from helpers.bugs import FIX_PLAN, REPRODUCTION, ROOT_CAUSE, Bugs, make_calc, set_config
from helpers.colony import start_build, worker

# ---------------------------------------------------------------- the outside tree


def digest(folder: Path) -> dict:
    """Every entry under `folder`: path → sha256 of its bytes, its mode, or its link target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, folder)
            st = os.lstat(full)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[rel] = ("dir", st.st_mode)
            else:
                with open(full, "rb") as fh:
                    out[rel] = ("file", st.st_mode, hashlib.sha256(fh.read()).hexdigest())
    return out


def assert_refused(result, *codes):
    """One JSON error on stderr, a non-zero exit, nothing on stdout, no traceback."""
    assert result.code != 0, result.stdout
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    env = json.loads(lines[0])
    assert env["ok"] is False and env["error"]
    if codes:
        assert env["code"] in codes, env
    return env


COLONY = {"version": 1, "goal": "g", "state": "READY", "current_phase": 0, "mode": "STANDARD"}
ERRORS = {
    "version": 1,
    "errors": [
        {
            "id": "err_1_aaaa",
            "category": "outside",
            "severity": "high",
            "description": "SECRET FROM OUTSIDE",
            "root_cause": None,
            "phase": None,
            "task_id": None,
            "timestamp": "2026-01-01T00:00:00Z",
        }
    ],
    "flagged_patterns": [],
}


@pytest.fixture
def outside(tmp_path):
    """A folder beside the project with content an attacker would like read or overwritten."""
    root = tmp_path / "outside"
    for sub in ("data", "backups", "tests", "research", "bugs", "reports"):
        (root / sub).mkdir(parents=True)
    (root / "data" / "COLONY_STATE.json").write_text(json.dumps(COLONY))
    (root / "errors.json").write_text(json.dumps(ERRORS))
    (root / "secret.txt").write_text("do not touch\n")
    (root / "research" / "brief.md").write_text("# planted brief\n")
    return root


def link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        import shutil

        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


# ---------------------------------------------------------------- hostile trees × commands

STATE_COMMANDS = [
    ("status",),
    ("colony-init", "a goal"),
    ("error-add", "build", "high", "x"),
    ("error-summary",),
    ("error-pattern-check",),
    ("event-add", "note", "queen", "x"),
    ("activity-log", "NOTE", "queen", "x"),
    ("activity-log-read",),
    ("activity-log-init", "1"),
    ("decision-add", "x"),
    ("learning-add", "1", "x"),
    ("memory-compress",),
    ("pheromone-emit", "FOCUS", "x"),
    ("pheromone-decay",),
    ("pheromone-cleanup",),
    ("query", "goal"),
    ("state-restore", "errors"),
    ("colony-pause",),
    ("colony-resume",),
    ("validate-state", "all"),
    ("research-plan", "-"),
    ("complexity-detect", "--apply"),
    ("learning-promote", "x"),
    ("phase",),
    ("checkpoint-list",),
    ("friction-summary",),
]


def seeded(project):
    project.run("colony-init", "Build a todo API").json
    project.run("error-add", "build", "high", "first").json
    project.run("error-add", "build", "high", "second").json  # errors.json.1 exists now


def scenario_data_dir(project, outside):
    link(project.root / ".aether" / "data", outside / "data")


def scenario_backups(project, outside):
    seeded(project)
    link(project.data / ".backups", outside / "backups")


def scenario_state_file(project, outside):
    seeded(project)
    for name in ("errors.json", "COLONY_STATE.json", "pheromones.json", "events.json", "memory.json", "activity.log"):
        link(project.data / name, outside / "errors.json" if name == "errors.json" else outside / "secret.txt")


def scenario_backup_slot(project, outside):
    seeded(project)
    link(project.data / ".backups" / "errors.json.1", outside / "errors.json")
    (project.data / "errors.json").write_text("{damaged")


def scenario_research(project, outside):
    seeded(project)
    link(project.root / ".aether" / "research", outside / "research")


def scenario_lock(project, outside):
    seeded(project)
    link(project.data / "errors.json.lock", outside / "secret.txt")
    link(project.data / "events.json.lock", outside / "secret.txt")


SCENARIOS = {
    "symlinked .aether/data": scenario_data_dir,
    "symlinked .backups": scenario_backups,
    "state files linked out": scenario_state_file,
    "backup slot linked out": scenario_backup_slot,
    "symlinked .aether/research": scenario_research,
    "lock files linked out": scenario_lock,
}


@pytest.mark.parametrize("command", STATE_COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_hostile_tree_writes_nothing_outside(project, outside, scenario, command):
    SCENARIOS[scenario](project, outside)
    before = digest(outside)
    result = project.run(*command, input="- FastAPI auth\n- Postgres schema\n")
    assert digest(outside) == before, f"{' '.join(command)} changed the outside tree"
    if result.code != 0:
        assert_refused(result)
    else:
        assert "SECRET FROM OUTSIDE" not in result.stdout  # nothing was read from outside


def test_hole_2_backups_do_not_follow_a_symlinked_backups_folder(project, outside):
    seeded(project)
    link(project.data / ".backups", outside / "backups")
    before = digest(outside)
    env = assert_refused(project.run("error-add", "build", "high", "third"), "path_outside_project")
    assert env["path"].endswith(".backups") and env["rule"]
    assert digest(outside) == before and not (outside / "backups" / "errors.json.1").exists()
    assert len(project.load("errors.json")["errors"]) == 2  # the write changed nothing


def test_hole_3_state_restore_imports_no_outside_content(project, outside):
    seeded(project)
    link(project.data / ".backups" / "errors.json.1", outside / "errors.json")
    for slot in (2, 3):
        (project.data / ".backups" / f"errors.json.{slot}").unlink(missing_ok=True)
    (project.data / "errors.json").write_text("{damaged")
    before = digest(outside)
    result = project.run("state-restore", "errors")
    assert digest(outside) == before
    assert_refused(result, "no_backup")
    assert "SECRET FROM OUTSIDE" not in (project.data / "errors.json").read_text()


def test_a_symlinked_data_folder_is_refused_but_aether_data_dir_is_trusted(project, outside, monkeypatch):
    link(project.root / ".aether" / "data", outside / "data")
    env = assert_refused(project.run("status"), "path_outside_project")
    assert "outside" in env["path"] or "data" in env["path"]
    # AETHER_DATA_DIR names the folder explicitly: a user's setting, trusted as named
    monkeypatch.setenv("AETHER_DATA_DIR", str(project.root / ".aether" / "data"))
    assert project.run("status", "--json").code == 0
    # …but a link inside it that leads out is not
    link(outside / "data" / ".backups", outside / "backups")
    before = digest(outside / "backups")
    project.run("error-add", "build", "high", "one").json
    assert_refused(project.run("error-add", "build", "high", "two"), "path_outside_project")
    assert digest(outside / "backups") == before


def test_global_folder_links_leading_out_are_refused(project, outside):
    project.run("colony-init", "g").json
    project.run("learning-promote", "first learning").json
    link(project.global_dir / ".backups", outside / "backups")
    before = digest(outside)
    assert_refused(project.run("learning-promote", "second learning"), "path_outside_project")
    assert digest(outside) == before


# ---------------------------------------------------------------- bug bash


def test_hole_1_bug_fix_writes_no_test_through_a_symlinked_tests_folder(bugs, outside):
    bugs.drive("t", "approved")
    set_config(bugs.p, test_command="true")
    link(bugs.p.root / "tests", outside / "tests")  # after approval: `ln -s <outside>/tests tests`
    before = digest(outside)
    result = bugs.run("fix", "t")
    assert digest(outside) == before, "bug fix wrote outside the project"
    env = assert_refused(result, "implementation_failed")
    assert any("symbolic link" in d for d in env["defects"])
    assert bugs.phase("t") == "approved"


@pytest.mark.parametrize("target", ["reproduction.md", "verification.log", "state.json.lock"])
def test_bug_files_linked_out_are_never_written_through(bugs, outside, target):
    bugs.drive("r", "approved" if target == "verification.log" else "reproducing")
    set_config(bugs.p, test_command="true")
    link(bugs.p.root / ".aether" / "bugs" / "r" / target, outside / "secret.txt")
    before = digest(outside)
    if target == "reproduction.md":
        result = bugs.record("r", "reproduction", REPRODUCTION)
    elif target == "verification.log":
        result = bugs.run("fix", "r")
    else:
        result = bugs.run("analyze", "r")
    assert digest(outside) == before
    if result.code != 0:
        assert_refused(result)


def test_a_symlinked_bug_storage_is_refused(bugs, outside):
    link(bugs.p.root / ".aether" / "bugs", outside / "bugs")
    before = digest(outside)
    assert_refused(bugs.run("init", "a bug", "--id", "b"), "path_outside_project", "path_is_symlink")
    assert_refused(bugs.run("list", "--json"), "path_outside_project")
    assert digest(outside) == before


def test_a_configured_storage_outside_the_project_is_refused(bugs, outside):
    set_config(bugs.p, storage_path=str(outside / "bugs"))
    before = digest(outside)
    assert_refused(bugs.run("init", "a bug", "--id", "b"), "path_outside_project")
    assert digest(outside) == before


# ---------------------------------------------------------------- paths callers name

LONG = "a/" * 2100 + "x.py"
BAD_PATHS = {
    "dotdot": "../outside/x.py",
    "absolute": "/etc/passwd",
    "home": "~/.bashrc",
    "git": ".git/config",
    "state": ".aether/data/COLONY_STATE.json",
    "nul": "src/a\x00.py",
    "backslash": "..\\..\\outside\\x.py",
    "long": LONG,
    "long name": "n" * 300 + ".py",
    "symlink out": "escape/x.py",
}
PATH_FIELDS = [
    "plan-waves writes",
    "plan-waves reads",
    "spawn-finish files_created",
    "fix-plan file_path",
    "root-cause root_cause_file",
    "research-collect brief",
    "bug init --test",
    "syntax-check",
]


def hostile_paths(project, outside):
    (project.root / ".git").mkdir(exist_ok=True)
    (project.root / ".git" / "config").write_text("[core]\n")
    link(project.root / "escape", outside)


def _plan_waves(project, field, path):
    start_build(project, tasks=2)
    w = worker("w", ["1.1"], writes=[path] if field.endswith("writes") else ["src/ok.py"], reads=[path] if field.endswith("reads") else [])
    result = project.run("plan-waves", "-", input=json.dumps({"workers": [w]}))
    env = assert_refused(result, "invalid_plan", "invalid_report")  # a NUL: invalid_report
    assert env["code"] == "invalid_report" or env["defects"][0]["path"].startswith("workers[0].")
    assert project.load("COLONY_STATE.json")["spawn_tree"] is None  # nothing stored


def _spawn_finish(project, field, path):
    start_build(project, tasks=2)
    project.run("plan-waves", "-", input=json.dumps({"workers": [worker("w", ["1.1"], writes=["src/a.py"])]})).json
    project.run("spawn-start", "w1").json
    payload = {"status": "completed", "summary": "done", "files_created": [path], "failure": None}
    result = project.run("spawn-finish", "w1", "-", input=json.dumps(payload))
    if result.code == 0:
        out = result.json
        if path.startswith((".git/", ".aether/")):  # inside the project: a claim that holds
            assert out["status"] == "completed"
        else:  # a path clipped for length names no file: missing
            assert out["status"] == "failed" and out["unverified"][0]["problem"] in ("outside_project", "invalid_path", "missing")
    else:
        assert_refused(result, "invalid_report")


def _bug_record(project, field, path):
    b = Bugs(project)
    make_calc(project.root)
    b.ok("init", "add is wrong", "--id", "p")
    b.ok("analyze", "p")
    b.record("p", "reproduction", REPRODUCTION).json
    if field.startswith("root-cause"):
        result = b.record("p", "root-cause", {**ROOT_CAUSE, "root_cause_file": path})
    else:
        b.record("p", "root-cause", ROOT_CAUSE).json
        plan = json.loads(json.dumps(FIX_PLAN))
        plan["changes"][0]["file_path"] = path
        result = b.record("p", "fix-plan", plan)
    env = assert_refused(result, "invalid_agent_output")
    assert env["defects"]


def _research(project, field, path):
    project.run("colony-init", "Build an API").json
    project.run("research-plan", "-", input="- auth\n- storage\n").json
    out = project.run("research-collect", "-", input=json.dumps([path]))
    if out.code == 0:
        got = out.json
        assert got["paths"] == [] and got["rejected"][0]["problem"] in ("outside_research_dir", "invalid_path")
    else:
        assert_refused(out)


def _bug_init_test(project, field, path):
    make_calc(project.root)
    result = project.run("bug", "init", "a bug", "--id", "q", "--test", path)
    if result.code != 0:
        assert_refused(result)


def _syntax_check(project, field, path):
    project.run("colony-init", "g").json
    result = project.run("syntax-check", path)
    if result.code != 0:
        assert_refused(result)
    else:
        assert "root:" not in result.stdout  # never read /etc/passwd or outside files


FIELD_RUNNERS = {
    "plan-waves writes": _plan_waves,
    "plan-waves reads": _plan_waves,
    "spawn-finish files_created": _spawn_finish,
    "fix-plan file_path": _bug_record,
    "root-cause root_cause_file": _bug_record,
    "research-collect brief": _research,
    "bug init --test": _bug_init_test,
    "syntax-check": _syntax_check,
}


ARGV_FIELDS = ("bug init --test", "syntax-check")  # given on the command line: argv holds no NUL


@pytest.mark.parametrize("field, name", [(f, n) for f in PATH_FIELDS for n in BAD_PATHS if not (n == "nul" and f in ARGV_FIELDS)])
def test_bad_paths_in_every_field_that_names_a_file(project, outside, field, name):
    path = BAD_PATHS[name]
    hostile_paths(project, outside)
    before = digest(outside)
    FIELD_RUNNERS[field](project, field, path)
    assert digest(outside) == before


def test_hole_4_plan_waves_refuses_writes_outside_the_project(project, outside):
    hostile_paths(project, outside)
    start_build(project, tasks=2)
    bad = ["../outside/x", "/etc/hosts", "~/.bashrc", ".git/config", ".aether/data/COLONY_STATE.json", "escape/x.py"]
    result = project.run("plan-waves", "-", input=json.dumps({"workers": [worker("w", ["1.1"], writes=bad, reads=["src/ok.py"])]}))
    env = assert_refused(result, "invalid_plan")
    assert result.code == 1
    assert [d["path"] for d in env["defects"]] == [f"workers[0].writes[{k}]" for k in range(len(bad))]
    assert project.load("COLONY_STATE.json")["spawn_tree"] is None
    # a research brief may be read; .aether/data may not
    ok = project.run(
        "plan-waves", "-", input=json.dumps({"workers": [worker("w", ["1.1"], writes=["src/a.py"], reads=[".aether/research/auth.md"])]})
    )
    assert ok.json["waves"][0]["workers"][0]["reads"] == [".aether/research/auth.md"]


# ---------------------------------------------------------------- the guard itself


def test_project_path_rules(project, outside):
    hostile_paths(project, outside)
    root = str(project.root)
    for path in BAD_PATHS.values():
        assert containment.project_path(path, root=root)[1], path
    assert containment.project_path("./src//a.py", root=root) == ("src/a.py", None)
    assert containment.project_path(".aether/research/x.md", root=root, allowed=(".aether/research/",)) == (".aether/research/x.md", None)


def test_make_dirs_creates_no_folder_below_a_link(project, outside, monkeypatch):
    monkeypatch.chdir(project.root)
    link(project.root / ".aether" / "data", outside / "data")
    before = digest(outside)
    with pytest.raises(containment.AetherError) as caught:
        containment.make_dirs(str(project.root / ".aether" / "data" / "new" / "deeper"))
    assert caught.value.code == "path_outside_project" and digest(outside) == before
    (project.root / "inner").mkdir()
    link(project.root / "alias", project.root / "inner")  # a link that stays inside
    with pytest.raises(containment.AetherError) as caught:
        containment.make_dirs(str(project.root / "alias" / "made"))
    assert caught.value.code == "path_is_symlink" and not (project.root / "inner" / "made").exists()
