"""The Bug Bash sessions' fixture project (`last_n` slices one item too early, and a pytest test
exposes it), and the agents' valid answers for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BUG = "last-n"
CALC = '''def last_n(items, n):
    """The last n items of a list (none when n is 0 or less)."""
    if n <= 0:
        return []
    return items[-n - 1:]
'''
CALC_FIXED = CALC.replace("items[-n - 1:]", "items[-n:]")
CALC_TEST = """from calc import last_n


def test_last_two():
    assert last_n([1, 2, 3, 4], 2) == [3, 4]
"""
ERROR = "assert [2, 3, 4] == [3, 4]"
REPRODUCTION = {
    "confirmed": True,
    "reproduction_steps": [".venv/bin/python -m pytest tests/test_calc.py -v --tb=long"],
    "test_output": "FAILED tests/test_calc.py::test_last_two - " + ERROR,
    "error_message": "AssertionError: " + ERROR,
    "stack_trace": "tests/test_calc.py:5: in test_last_two\n    assert last_n([1, 2, 3, 4], 2) == [3, 4]",
    "affected_files": ["calc.py", "tests/test_calc.py"],
    "related_code_snippets": {"calc.py": "return items[-n - 1:]"},
    "confidence": "high",
    "notes": "fails on every run",
    "attempts": 1,
    "environment": {"python": "3", "os": "Linux"},
}
ROOT_CAUSE = {
    "summary": "last_n slices from -n - 1, one item before the last n",
    "execution_trace": [
        "test_last_two calls last_n([1, 2, 3, 4], 2)",
        "last_n skips the n <= 0 guard and evaluates items[-n - 1:]",
        "items[-3:] is [2, 3, 4]: one item too many",
    ],
    "root_cause_file": "calc.py",
    "root_cause_line": 5,
    "root_cause_code": "return items[-n - 1:]",
    "root_cause_explanation": "The slice starts n + 1 items from the end instead of n.",
    "why_not_caught": "last_n had no test until this one.",
    "confidence": "high",
    "alternative_hypotheses": ["the test expects the wrong value (ruled out by the docstring)"],
}
FIX_PLAN = {
    "summary": "Slice the last n items from -n",
    "changes": [
        {
            "file_path": "calc.py",
            "change_type": "modify",
            "current_code": "    return items[-n - 1:]\n",
            "proposed_code": "    return items[-n:]\n",
            "explanation": "Start the slice n items from the end.",
        }
    ],
    "test_cases": [
        {
            "name": "test_last_n_two",
            "description": "the last two of four",
            "category": "regression",
            "test_code": "def test_last_n_two():\n    from calc import last_n\n    assert last_n([1, 2, 3, 4], 2) == [3, 4]\n",
        },
        {
            "name": "test_last_n_all",
            "description": "n equal to the length",
            "category": "edge_case",
            "test_code": "def test_last_n_all():\n    from calc import last_n\n    assert last_n([1, 2], 2) == [1, 2]\n",
        },
    ],
    "risk_level": "low",
    "risk_explanation": "One slice in one function; the n <= 0 guard is unchanged.",
    "scope": "1 file, 1 line",
    "side_effects": [],
    "rollback_plan": "Put back `items[-n - 1:]` in calc.py.",
    "estimated_effort": "5 minutes",
}


def make_project(root: Path) -> None:
    """calc.py with the bug, its failing test, and the project's own interpreter in .venv."""
    (root / "calc.py").write_text(CALC, "utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(CALC_TEST, "utf-8")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(root / ".venv")], check=True, timeout=120)
    site = next((root / ".venv" / "lib").glob("python*/site-packages"))
    (site / "e2e_test_tools.pth").write_text(str(Path(pytest.__file__).parents[1]) + "\n", "utf-8")
