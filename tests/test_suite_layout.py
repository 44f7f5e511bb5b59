"""The test suite's own layout: what several test modules use lives in tests/helpers/ (fixtures
in the conftest.py files), so no test module imports another — not at the top, not in a
function, not relatively (`from .test_x import …`)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from helpers.plugin import not_shipped

TESTS = Path(__file__).resolve().parent
SKIPPED = {"node_modules", "fixtures", "__pycache__"}  # Claude Code's package, projects the tests copy


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if not SKIPPED & set(p.relative_to(TESTS).parts))


def imports_of_test_modules(path: Path, source: str | None = None) -> list[str]:
    """`file:line: imports <module>` for every import of a test module (one named test_*)."""
    tree = ast.parse(path.read_text("utf-8") if source is None else source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module] if node.module else [alias.name for alias in node.names]
            if node.module:  # `from e2e import test_x` names the module as an alias
                names += [f"{node.module}.{alias.name}" for alias in node.names if alias.name.startswith("test_")]
        else:
            continue
        for name in names:
            if any(part.startswith("test_") for part in name.split(".")):
                found.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}: imports {'.' * getattr(node, 'level', 0)}{name}")
    return found


def test_no_test_module_imports_another():
    found = [line for path in python_files() for line in imports_of_test_modules(path)]
    assert found == [], "move what is shared to tests/helpers/ (fixtures to a conftest.py):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "planted",
    [
        "from test_waves import start_build\n",
        "import test_drive\n",
        "def f():\n    from test_worktrees import git\n",
        "from .test_drive_e2e import state\n",
        "from e2e.test_bug_session import BUG\n",
        "from e2e import test_bug_session\n",
    ],
)
def test_the_check_catches_a_planted_import(planted):
    path = TESTS / "e2e" / "colony_script.py"
    found = imports_of_test_modules(path, path.read_text("utf-8") + "\n" + planted)
    assert len(found) == 1 and found[0].startswith("tests/e2e/colony_script.py:"), found


def test_the_plugin_copy_leaves_out_only_the_checkouts_own_folders(tmp_path):
    repo = tmp_path / "repo"
    for path in (
        ".venv/bin/python",
        ".git/HEAD",
        "build/lib/x.py",
        "tests/e2e/node_modules/claude",
        "tests/e2e/oldest/node_modules/claude",
        ".aether/data/COLONY_STATE.json",
        "scripts/aether_colony.egg-info/PKG-INFO",
        "scripts/aether/__pycache__/x.pyc",
        ".pytest_cache/v",
        # plugin content that merely shares a name with one of those
        "scripts/aether/build/__init__.py",
        "docs/data/notes.md",
        "tests/fixtures/build/app.py",
        "tests/fixtures/node_modules/x.js",
        ".aether/workers/builder.md",
        "scripts/aether/rules/waves.py",
    ):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("x")
    shutil.copytree(repo, tmp_path / "copy", ignore=not_shipped(repo))
    copied = sorted(str(p.relative_to(tmp_path / "copy")) for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert copied == [
        ".aether/workers/builder.md",
        "docs/data/notes.md",
        "scripts/aether/build/__init__.py",
        "scripts/aether/rules/waves.py",
        "tests/fixtures/build/app.py",
        "tests/fixtures/node_modules/x.js",
    ]
