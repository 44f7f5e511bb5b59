"""/ant:colonize's colonizers, computed by `complexity-detect --apply`: how many (from the
project's size), which lenses each takes, the files each starts with, and the brief to spawn."""

import pytest

from aether.colony import complexity
from aether.rules import colonize

from helpers.colony import ok


def make_sources(root, n, folder="src"):
    (root / folder).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / folder / f"m{i:03}.py").write_text(f"def f{i}():\n    return {i}\n", "utf-8")


@pytest.mark.parametrize(
    "sources,groups",
    [
        (0, [["structure", "stack", "conventions and risks"]]),
        (colonize.ONE_COLONIZER_BELOW - 1, [["structure", "stack", "conventions and risks"]]),
        (colonize.ONE_COLONIZER_BELOW, [["structure", "stack"], ["conventions and risks"]]),
        (colonize.TWO_COLONIZERS_UP_TO, [["structure", "stack"], ["conventions and risks"]]),
        (colonize.TWO_COLONIZERS_UP_TO + 1, [["structure"], ["stack"], ["conventions and risks"]]),
    ],
)
def test_the_projects_size_decides_the_colonizers(project, sources, groups):
    make_sources(project.root, sources)
    ok(project, "colony-init", "Map this project")
    out = ok(project, "complexity-detect", "--apply")
    assert out["signals"]["source_files"] == sources
    assert [c["lenses"] for c in out["colonizers"]] == groups
    assert [c["id"] for c in out["colonizers"]] == [f"c{i}" for i in range(1, len(groups) + 1)]
    assert {c["subagent_type"] for c in out["colonizers"]} == {"ant:colonizer"}
    assert "paths" not in out["signals"]  # where colonizers start is not a complexity signal
    assert "paths" not in project.load("COLONY_STATE.json")["mode_indicators"]


def test_the_brief_names_the_lenses_the_counts_the_start_and_the_signals(project):
    root = project.root
    make_sources(root, 3, "app")
    (root / "README.md").write_text("# demo\n", "utf-8")
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n", "utf-8")
    (root / ".editorconfig").write_text("root = true\n", "utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("def test_x():\n    pass\n", "utf-8")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("x\n", "utf-8")
    ok(project, "colony-init", "Map this project")
    ok(project, "pheromone-emit", "FOCUS", "-", input="the app package and its tests\n")
    (only,) = ok(project, "complexity-detect", "--apply")["colonizers"]
    assert only["lens"] == "structure + stack + conventions and risks"
    start = only["start_with"]
    assert start[0] == "README.md" and "app/" in start and "tests/" in start
    assert "pyproject.toml" in start and ".editorconfig" in start and "app/m000.py" in start
    assert not any(p.startswith("node_modules") for p in start) and len(start) <= colonize.START_WITH
    assert len(start) == len(set(start))
    lines = only["text"].split("\n")
    assert lines[:2] == ["--- COLONIZE ---", "Lens: structure + stack + conventions and risks"]
    assert lines[2] == "Map: " + "; ".join(f"{k}: {v}" for k, v in colonize.LENSES.items())
    assert lines[3] == "Project root: the current directory (4 source files; languages: Python)"
    assert lines[4] == "Start with: " + ", ".join(start)
    assert lines[5] == "ACTIVE PHEROMONES (as sensed by colonizer)"
    assert "FOCUS" in only["text"] and "the app package and its tests" in only["text"]


def test_each_lens_starts_where_it_looks(project):
    make_sources(project.root, colonize.TWO_COLONIZERS_UP_TO + 1, "pkg")
    (project.root / "lib").mkdir()
    (project.root / "lib" / "util.py").write_text("X = 1\n", "utf-8")
    (project.root / "Makefile").write_text("all:\n", "utf-8")
    (project.root / ".github" / "workflows").mkdir(parents=True)
    (project.root / ".github" / "workflows" / "ci.yml").write_text("on: push\n", "utf-8")
    ok(project, "colony-init", "Map this project")
    by_lens = {c["lens"]: c["start_with"] for c in ok(project, "complexity-detect", "--apply")["colonizers"]}
    assert by_lens["structure"][:4] == [".github/", "Makefile", "lib/", "pkg/"]
    assert by_lens["stack"][:2] == ["Makefile", ".github/workflows"]
    assert "lib/util.py" in by_lens["conventions and risks"] and "pkg/m000.py" in by_lens["conventions and risks"]
    brief = {c["lens"]: c["text"] for c in ok(project, "complexity-detect", "--apply")["colonizers"]}
    assert f"({colonize.TWO_COLONIZERS_UP_TO + 2} source files; languages: Python)" in brief["stack"]


def test_a_capped_walk_says_at_least(tmp_path):
    (tmp_path / "empty").mkdir()
    tree = complexity.scan(str(tmp_path / "empty"))
    tree.update(source_files=7, capped=True, languages=["Go"])
    (brief,) = colonize.plan(tree, "ACTIVE PHEROMONES\n  (none)")
    assert "(at least 7 source files; languages: Go)" in brief["text"]
    assert "Start with: (an empty project: survey what is there)" in brief["text"]


def test_scan_paths_are_bounded_and_sorted(tmp_path, monkeypatch):
    monkeypatch.setattr(complexity, "PATHS_KEPT", 3)
    for name in ("c.py", "a.py", "b.py", "d.py"):
        (tmp_path / name).write_text("x = 1\n", "utf-8")
    paths = complexity.scan(str(tmp_path))["paths"]
    assert paths["top"] == ["a.py", "b.py", "c.py"] and paths["sources"] == ["a.py", "b.py", "c.py"]
    assert paths["folders"] == ["a.py"]
