"""A copy of the plugin as a user receives it: the repository without what a checkout adds
(the venv, git, the e2e tests' Claude Code, caches and build output)."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Paths relative to the repository root that a checkout has and an install does not. Only these
# paths: a folder of the same name deeper down (a user's `build/`, say) is plugin content.
NOT_SHIPPED = frozenset(
    {
        ".git",
        ".venv",
        ".venv-location",  # git, `make install`'s venv, the bootstrap's pointer
        "build",
        ".e2e",  # pip's build output, e2e scratch
        ".pytest_cache",
        ".hypothesis",
        ".ruff_cache",  # the test tools' caches
        ".aether/data",  # a colony run in the checkout itself
        "tests/e2e/node_modules",  # the pinned Claude Code releases (`make e2e-deps`)
        "tests/e2e/oldest/node_modules",
    }
)
PYTHON_CACHE = "__pycache__"  # beside every imported module, at any depth
EGG_INFO_IN = frozenset({".", "scripts"})  # where setuptools leaves `<name>.egg-info` (package-dir)


def not_shipped(root: Path):
    """A `shutil.copytree` ignore function: the names in a folder that the plugin does not ship,
    judged by their path relative to `root`."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = Path(folder).relative_to(root)
        return {
            name
            for name in names
            if (rel / name).as_posix() in NOT_SHIPPED
            or name == PYTHON_CACHE
            or (name.endswith(".egg-info") and rel.as_posix() in EGG_INFO_IN)
        }

    return ignore


def copy_plugin(dest: Path, *, link_venv: bool = False) -> Path:
    """The repository copied to `dest` (which must not exist) as a user receives it. With
    `link_venv`, `.venv` links to the repository's: the helper as installed, no venv to build."""
    shutil.copytree(REPO, dest, ignore=not_shipped(REPO), symlinks=True)
    if link_venv:
        (dest / ".venv").symlink_to(REPO / ".venv")
    return dest
