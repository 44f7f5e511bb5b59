"""The Bug Bash tests' fixture project (helpers/bugs.py) really has its bug."""

from __future__ import annotations

import subprocess

from helpers.bugs import make_calc


def test_fixture_project_really_has_the_bug(project, project_venv):
    make_calc(project.root)
    proc = subprocess.run(
        [str(project_venv / "bin" / "python"), "-m", "pytest", "-q", "tests/test_calc.py", "-p", "no:cacheprovider"],
        cwd=project.root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "assert -1 == 5" in proc.stdout
