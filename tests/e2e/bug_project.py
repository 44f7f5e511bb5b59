"""The Bug Bash sessions' fixture project (`last_n` slices one item too early, and a pytest test
exposes it), the agents' valid answers for it, an approval as the person gives it, and the
steps of a Queen who follows bug.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .fake_api import Matcher, agent, bash
from .harness import NOW

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


# ---------------------------------------------------------------- evidence: what ran decides

# A second test, which passes today: `last_n(items, 0)` is empty (the `n <= 0` guard).
FIRST_TEST = """from calc import last_n


def test_last_zero():
    assert last_n([1, 2], 0) == []
"""
# A researcher that ran that passing test (the report's) and says it failed.
LAZY_REPRODUCTION = dict(
    REPRODUCTION,
    reproduction_steps=[".venv/bin/python -m pytest tests/test_first.py -v --tb=long"],
    test_output="FAILED tests/test_first.py::test_last_zero - assert [1, 2] == []",
    error_message="AssertionError: assert [1, 2] == []",
)
# A plan whose own tests pass but which drops the `n <= 0` guard: test_last_zero breaks.
BREAKING_PLAN = dict(
    FIX_PLAN,
    changes=[
        dict(
            FIX_PLAN["changes"][0],
            current_code="    if n <= 0:\n        return []\n    return items[-n - 1:]\n",
            proposed_code="    if n < 0:\n        return []\n    return items[-n:]\n",
        )
    ],
)


def add_first_test(root: Path) -> None:
    (root / "tests" / "test_first.py").write_text(FIRST_TEST, "utf-8")


def approved_by_a_person(claude, bug_id: str) -> dict:
    """The person types `/ant:bug approve BUG_ID` in Claude Code: Aether's prompt hook approves the
    PLANNED fix plan, with no model turn. Returns the approval record."""
    run = claude.run(f"/ant:bug approve {bug_id}", [], env=NOW)
    assert run.api.requests == [] and "✓ Fix plan approved" in run.stdout, run.report()
    state = json.loads((claude.project / ".aether" / "bugs" / bug_id / "state.json").read_text("utf-8"))
    assert state["phase"] == "approved" and state["approval_record"]["given_via"] == "typed_command"
    return state["approval_record"]


# ---------------------------------------------------------------- a Queen who follows bug.md


def answer(request) -> dict:
    """Aether's envelope in the last tool result (an error's comes after `Exit code N`)."""
    text = request.tool_results()[0]["text"]
    return json.loads(text[text.index("{") :])


def agent_task(step: dict, bug_id: str = BUG) -> str:
    """The agent's task as bug.md describes it: `key: value` lines from agent_step."""
    lines = [f"bug_id: {bug_id}", "read_first: " + ", ".join(step["reads"])]
    lines += [f"{key}: {step[key]}" for key in ("max_attempts", "timeout_seconds", "bash_timeout_ms", "min_test_cases") if key in step]
    return "\n".join(lines)


def hand_back(request) -> str:
    """The newest Agent result in the conversation (Claude Code's hand-back text)."""
    texts = [t["text"] for t in request.tool_results(last_only=False)]
    return next(t for t in reversed(texts) if "[Subagent hand-back]" in t)


def reported_json(request) -> str:
    """The agent's JSON block, copied out of the hand-back (whose lines are indented by 2)."""
    match = re.search(r"^  ```json\n(.*?)\n  ```$", hand_back(request), re.S | re.M)
    return "\n".join(line[2:] for line in match.group(1).split("\n"))


def record_reported(request, bug_id: str = BUG):
    """`aether bug record <id> reproduction -` with the agent's ```json block on stdin."""
    return bash(f"aether bug record {bug_id} reproduction - <<'EOF'\n```json\n{reported_json(request)}\n```\nEOF")


def json_block(doc: dict) -> str:
    return "Done.\n\n```json\n" + json.dumps(doc, indent=2) + "\n```"


def after(command_start: str) -> Matcher:
    """The last tool call of the conversation was a Bash command starting with this."""

    def test(r):
        uses = r.tool_uses()
        return uses[-1]["name"] == "Bash" and uses[-1]["input"]["command"].startswith(command_start)

    return Matcher(f"after({command_start!r})", test)


RETRY_LINE = "Your previous result was rejected. Fix these defects:"


def retry_agent(request, name: str = "ant:bug-researcher"):
    """The same agent again, as bug.md says: the same task, the defects one a line, its previous block."""
    texts = [t["text"] for t in request.tool_results(last_only=False)]
    rejected = next(text for text in reversed(texts) if '"invalid_agent_output"' in text)
    defects = json.loads(rejected[rejected.index("{") :])["defects"]
    first = next(u for u in request.tool_uses() if u["name"] == "Agent")
    previous = "```json\n" + reported_json(request) + "\n```"
    return agent(name, "\n".join([first["input"]["prompt"], RETRY_LINE, *defects, previous]), "Reproduce again")


def usage_tokens(request) -> int:
    return int(re.search(r"<usage>subagent_tokens: (\d+)", hand_back(request)).group(1))


def record_cost(name: str, bug_id: str = BUG):
    """`aether bug cost` with the token count of Claude Code's `<usage>` block, as bug.md says."""
    return lambda r: bash(f"aether bug cost {bug_id} --agent {name} --input-tokens {usage_tokens(r)} --output-tokens 0")
