"""The test suite's own helpers."""

from __future__ import annotations

import shutil

from helpers.plugin import not_shipped


def test_the_plugin_copy_leaves_out_only_the_checkouts_own_folders(tmp_path):
    repo = tmp_path / "repo"
    for path in (".venv/bin/python", ".git/HEAD", "build/lib/x.py", "tests/e2e/node_modules/claude",
                 ".aether/data/COLONY_STATE.json", "scripts/aether_colony.egg-info/PKG-INFO",
                 "scripts/aether/__pycache__/x.pyc", ".pytest_cache/v",
                 # plugin content that merely shares a name with one of those
                 "scripts/aether/build/__init__.py", "docs/data/notes.md", "tests/fixtures/build/app.py",
                 "tests/fixtures/node_modules/x.js", ".aether/workers/builder.md", "scripts/aether/rules/waves.py"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("x")
    shutil.copytree(repo, tmp_path / "copy", ignore=not_shipped(repo))
    copied = sorted(str(p.relative_to(tmp_path / "copy")) for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert copied == [".aether/workers/builder.md", "docs/data/notes.md", "scripts/aether/build/__init__.py",
                      "scripts/aether/rules/waves.py", "tests/fixtures/build/app.py",
                      "tests/fixtures/node_modules/x.js"]
