"""complexity-detect: seed 001's heuristics on fixture trees, the walk, --apply."""

import os

import pytest

from aether.colony import complexity


def make(root, files):
    """Create files (path → content) under root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def py_files(n, folder="src"):
    return {f"{folder}/m{i}.py": f"x = {i}\n" for i in range(n)}


def detect(project, *args, **kw):
    return project.run("complexity-detect", *args, **kw).json


def add_tool_folders(root):
    """Everything a developer machine leaves in a project that is not its source."""
    venv_lib = {f".venv/lib/python3.11/site-packages/pkg/m{i}.py": "" for i in range(80)}
    make(
        root,
        {
            ".venv/pyvenv.cfg": "home = /usr/bin\n",
            **venv_lib,
            ".venv/lib/python3.11/site-packages/pkg/tests/test_x.py": "",
            "myenv/pyvenv.cfg": "home = /usr/bin\n",  # a virtualenv under any name
            "myenv/lib/thing.go": "package x\n",
            ".aether/data/COLONY_STATE.json": "{}",
            ".aether/workers/builder.md": "# builder\n",
            ".claude/commands/ant/init.md": "x\n",
            ".git/hooks/pre-commit.sh": "#!/bin/sh\n",
            "node_modules/lib/index.js": "module.exports = 1\n",
            "node_modules/lib/index.test.js": "test()\n",
            "vendor/github.com/x/y.go": "package y\n",
            "__pycache__/a.cpython-311.pyc": "",
            "dist/bundle.js": "",
            "build/lib/x.rs": "",
            "target/debug/main.rs": "",
        },
    )


# ---------------------------------------------------------------- each mode


def test_lightweight_reachable_with_tool_folders_present(project):
    make(project.root, {"main.py": "print('hi')\n", "util.py": "", "README.md": "# x\n", "data.json": "{}"})
    add_tool_folders(project.root)
    result = detect(project, "--goal", "a tiny command-line todo list")
    signals = result["signals"]
    assert result["mode"] == "LIGHTWEIGHT", result
    assert signals["source_files"] == 2 and signals["files"] == 4
    assert signals["languages"] == ["Python"]
    assert (signals["has_tests"], signals["has_ci"], signals["capped"]) == (False, False, False)
    assert signals["goal_words"] == 5 and signals["complex_goal_terms"] == []
    assert len(result["reasons"]) == 5


def test_empty_project_with_short_goal_is_lightweight(project):
    result = detect(project, "--goal", "a small script")
    assert result["mode"] == "LIGHTWEIGHT"
    assert result["signals"]["languages"] == [] and result["signals"]["source_files"] == 0


def test_standard_between_the_bounds(project):
    make(project.root, py_files(30))
    result = detect(project, "--goal", "a markdown to html converter")
    assert result["mode"] == "STANDARD"
    assert result["signals"]["source_files"] == 30
    assert "30 source files" in result["reasons"][0]


@pytest.mark.parametrize("count,mode", [(19, "LIGHTWEIGHT"), (20, "STANDARD"), (50, "STANDARD"), (51, "FULL")])
def test_file_count_bounds(project, count, mode):
    make(project.root, py_files(count))
    assert detect(project, "--goal", "short goal")["mode"] == mode


@pytest.mark.parametrize("words,mode", [(49, "LIGHTWEIGHT"), (50, "STANDARD"), (51, "FULL")])
def test_goal_word_bounds(project, words, mode):
    make(project.root, py_files(3))
    result = detect(project, "--goal", " ".join(["word"] * words))
    assert result["mode"] == mode and result["signals"]["goal_words"] == words


@pytest.mark.parametrize(
    "files,marker",
    [
        ({"a.py": "", "b.go": "package b\n"}, "several languages"),
        ({"a.py": "", "tests/test_a.py": ""}, "test suite"),
        ({"lib.py": "", "test_lib.py": ""}, "test suite"),
        ({"app.ts": "", "app.test.ts": ""}, "test suite"),
        ({"a.go": "", "a_test.go": ""}, "test suite"),
        ({"A.java": "", "ATest.java": ""}, "test suite"),
        ({"a.py": "", "pytest.ini": "[pytest]\n"}, "test suite"),
        ({"a.js": "", "jest.config.js": ""}, "test suite"),
        ({"a.py": "", ".github/workflows/ci.yml": "on: push\n"}, "CI configuration"),
        ({"a.py": "", ".gitlab-ci.yml": "x: 1\n"}, "CI configuration"),
        ({"a.py": "", "Jenkinsfile": "pipeline {}\n"}, "CI configuration"),
        ({"a.py": "", ".circleci/config.yml": "x: 1\n"}, "CI configuration"),
    ],
)
def test_full_when_any_tree_signal(project, files, marker):
    make(project.root, files)
    result = detect(project, "--goal", "small tool")
    assert result["mode"] == "FULL", result
    assert any(marker in reason for reason in result["reasons"]), result["reasons"]


@pytest.mark.parametrize(
    "goal,terms",
    [
        ("Add authentication to the app", ["authentication"]),
        ("a tiny store backed by a Database", ["database"]),
        ("expose two APIs", ["api"]),
        ("OAuth login with a REST API and Postgres databases", ["oauth", "login", "api", "postgres", "database"]),
        ("real-time chat over websockets", ["real-time", "websocket"]),
    ],
)
def test_full_when_goal_names_a_complex_domain(project, goal, terms):
    make(project.root, {"a.py": ""})
    result = detect(project, "--goal", goal)
    assert result["mode"] == "FULL"
    assert result["signals"]["complex_goal_terms"] == terms


def test_terms_are_whole_words(project):
    make(project.root, {"a.py": ""})
    result = detect(project, "--goal", "rapid capital authoring tool")  # api/auth inside words
    assert result["mode"] == "LIGHTWEIGHT" and result["signals"]["complex_goal_terms"] == []


def test_related_languages_count_once_and_markup_is_no_language(project):
    make(
        project.root,
        {"src/app.ts": "", "src/view.tsx": "", "jest.setup.js": "", "index.html": "", "style.css": "", "README.md": "", "config.yaml": ""},
    )
    result = detect(project, "--goal", "a small page")
    assert result["signals"]["languages"] == ["JavaScript/TypeScript"]
    assert result["signals"]["source_files"] == 3 and result["mode"] == "LIGHTWEIGHT"


def test_docs_folder_named_spec_is_not_a_test_suite(project):
    make(project.root, {"a.py": "", "spec/design.md": "# design\n"})
    assert detect(project, "--goal", "small tool")["signals"]["has_tests"] is False


def test_empty_ci_folder_is_not_ci(project):
    (project.root / ".github" / "workflows").mkdir(parents=True)
    make(project.root, {"a.py": ""})
    assert detect(project, "--goal", "small tool")["signals"]["has_ci"] is False


# ---------------------------------------------------------------- the walk


def test_max_depth_and_language_counts(project):
    make(project.root, {"a.py": "", "pkg/b.py": "", "pkg/sub/deep/c.py": "", "pkg/sub/deep/d.sh": ""})
    signals = detect(project, "--goal", "x")["signals"]
    assert signals["max_depth"] == 3
    assert signals["language_files"] == {"Python": 3, "Shell": 1}
    assert signals["languages"] == ["Python", "Shell"]


def test_walk_is_capped(project, monkeypatch):
    monkeypatch.setattr(complexity, "WALK_FILE_LIMIT", 10)
    make(project.root, py_files(30))
    result = detect(project, "--goal", "x")
    assert result["signals"]["capped"] is True and result["signals"]["files"] == 10
    assert result["mode"] == "LIGHTWEIGHT"  # 10 counted < 20; the flag tells the caller it is a lower bound


def test_exactly_the_file_limit_is_not_capped(project, monkeypatch):
    monkeypatch.setattr(complexity, "WALK_FILE_LIMIT", 10)
    make(project.root, py_files(10))
    signals = detect(project, "--goal", "x")["signals"]
    assert (signals["files"], signals["capped"]) == (10, False)


def test_folder_cap(project, monkeypatch):
    monkeypatch.setattr(complexity, "WALK_DIR_LIMIT", 5)
    make(project.root, {f"d{i}/m.py": "" for i in range(20)})
    signals = detect(project, "--goal", "x")["signals"]
    assert signals["capped"] is True and signals["dirs_scanned"] <= 5


def test_symlink_loops_are_not_followed(project):
    make(project.root, {"a.py": ""})
    os.symlink(project.root, project.root / "loop")
    os.symlink(project.root / "a.py", project.root / "alias.py")
    signals = detect(project, "--goal", "x")["signals"]
    assert signals["source_files"] == 1 and signals["capped"] is False


def test_unreadable_folder_is_skipped(project, monkeypatch):
    make(project.root, {"a.py": "", "locked/b.py": ""})
    real_scandir = os.scandir
    locked = str(project.root / "locked")

    def scandir(path="."):
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(complexity.os, "scandir", scandir)
    signals = detect(project, "--goal", "x")["signals"]
    assert (signals["dirs_unreadable"], signals["source_files"]) == (1, 1)


def test_path_argument_and_bad_paths(project, tmp_path):
    other = make(tmp_path / "other", {"main.go": "", "lib.rs": ""})
    result = detect(project, other, "--goal", "x")
    assert result["signals"]["languages"] == ["Go", "Rust"] and result["mode"] == "FULL"
    assert project.run("complexity-detect", tmp_path / "missing").error["code"] == "invalid_path"
    assert project.run("complexity-detect", other / "main.go").error["code"] == "invalid_path"


def test_goal_from_stdin_keeps_unicode(project):
    result = detect(project, "--goal", "-", input="una base de données — database 🐜\n")
    assert result["signals"]["complex_goal_terms"] == ["database"]


# ---------------------------------------------------------------- the colony's goal, --apply


def test_goal_defaults_to_the_colony_goal(project):
    make(project.root, {"a.py": ""})
    assert detect(project)["signals"]["goal_words"] == 0  # no colony: no goal
    project.run("colony-init", "Build a payments API")
    result = detect(project)
    assert result["signals"]["complex_goal_terms"] == ["payment", "api"] and result["mode"] == "FULL"


def test_apply_stores_mode_and_records_a_decision(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    make(project.root, {"a.py": "", "b.py": ""})
    project.run("colony-init", "a tiny todo tool")
    assert project.load("COLONY_STATE.json")["mode"] == "STANDARD"
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T11:00:00Z")
    result = detect(project, "--apply")
    assert result["mode"] == "LIGHTWEIGHT" and result["applied"] is True
    assert result["previous_mode"] == "STANDARD"
    colony = project.load("COLONY_STATE.json")
    assert colony["mode"] == "LIGHTWEIGHT" and colony["mode_set_at"] == "2026-02-04T11:00:00Z"
    assert colony["mode_indicators"]["source_files"] == 2
    assert colony["mode_indicators"]["languages"] == ["Python"]
    (decision,) = project.load("memory.json")["decisions"]
    assert decision["type"] == "mode" and "LIGHTWEIGHT" in decision["content"]
    assert "fewer than 20 source files" in decision["context"]
    # An explicit goal overrides the colony's for the judgement.
    assert detect(project, "--apply", "--goal", "now with a database")["mode"] == "FULL"
    assert project.load("COLONY_STATE.json")["mode"] == "FULL"
    assert len(project.load("memory.json")["decisions"]) == 2


def test_apply_needs_an_active_colony(project):
    err = project.run("complexity-detect", "--apply").error
    assert err["code"] == "state_missing"
    assert not project.file("COLONY_STATE.json").exists() and not project.file("memory.json").exists()


def test_apply_refused_mid_build(project):
    project.run("colony-init", "a tiny todo tool")
    colony = project.load("COLONY_STATE.json")
    colony["state"] = "EXECUTING"
    project.write("COLONY_STATE.json", colony)
    before = project.file("COLONY_STATE.json").read_bytes()
    err = project.run("complexity-detect", "--apply").error
    assert err["code"] == "colony_executing"
    assert project.file("COLONY_STATE.json").read_bytes() == before


def test_through_the_launcher(project):
    make(project.root, py_files(3))
    result = project.sh("complexity-detect", "--goal", "-", input="a little script\n")
    assert result.json["mode"] == "LIGHTWEIGHT"
