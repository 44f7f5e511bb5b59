"""Bug Bash: a fixture project with a real bug (add() subtracts), the agents' valid answers,
and `Bugs`, a driver that takes a bug to any phase through the real CLI."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

CALC = '''def add(a, b):
    """Sum of a and b."""
    return a - b


def sub(a, b):
    return a - b
'''
CALC_TEST = """from calc import add


def test_add():
    assert add(2, 3) == 5
"""

REPRODUCTION = {
    "confirmed": True,
    "reproduction_steps": ["python -m pytest tests/test_calc.py::test_add", "observe add(2, 3) == -1"],
    "test_output": "FAILED tests/test_calc.py::test_add - assert -1 == 5",
    "error_message": "assert -1 == 5",
    "stack_trace": 'File "tests/test_calc.py", line 5, in test_add',
    "affected_files": ["calc.py", "tests/test_calc.py"],
    "related_code_snippets": {"calc.py": "return a - b"},
    "confidence": "high",
    "notes": "fails every time",
    "attempts": 1,
    "environment": {"python": "3.11"},
}
NOT_REPRODUCED = {"confirmed": False, "reproduction_steps": [], "attempts": 3, "notes": "Test path not found: tests/test_gone.py"}
ROOT_CAUSE = {
    "summary": "add() subtracts its arguments instead of adding them",
    "execution_trace": ["test_add calls add(2, 3)", "add evaluates a - b", "the test compares -1 with 5"],
    "root_cause_file": "calc.py",
    "root_cause_line": 3,
    "root_cause_code": "return a - b",
    "root_cause_explanation": "The operator is - where the function promises a sum.",
    "why_not_caught": "add had no test until this one.",
    "confidence": "high",
    "alternative_hypotheses": ["the test expects the wrong value"],
}
GOOD_TESTS = [
    {
        "name": "test_add_positive",
        "description": "2 + 3 is 5",
        "category": "regression",
        "test_code": "def test_add_positive():\n    from calc import add\n    assert add(2, 3) == 5\n",
    },
    {
        "name": "test_add_negative",
        "description": "-1 + -1 is -2",
        "category": "edge_case",
        "test_code": "def test_add_negative():\n    from calc import add\n    assert add(-1, -1) == -2\n",
    },
]
FIX_PLAN = {
    "summary": "Use + in add()",
    "changes": [
        {
            "file_path": "calc.py",
            "change_type": "modify",
            "current_code": '    """Sum of a and b."""\n    return a - b\n',
            "proposed_code": '    """Sum of a and b."""\n    return a + b\n',
            "explanation": "add must add",
        }
    ],
    "test_cases": GOOD_TESTS,
    "risk_level": "low",
    "risk_explanation": "one operator in one function",
    "scope": "1 file, 1 line",
    "side_effects": [],
    "rollback_plan": "put the - back",
    "estimated_effort": "5 minutes",
}


def plan(**changes) -> dict:
    out = copy.deepcopy(FIX_PLAN)
    out.update(changes)
    return out


def failing_plan() -> dict:
    """A plan whose second test cannot pass (2 + 2 is not 5)."""
    tests = copy.deepcopy(GOOD_TESTS)
    tests[1] = {
        "name": "test_add_wrong",
        "description": "expects the impossible",
        "category": "regression",
        "test_code": "def test_add_wrong():\n    from calc import add\n    assert add(2, 2) == 5\n",
    }
    return plan(test_cases=tests)


# A plan that touches one new file: low risk, auto-approved where the settings allow it.
LOW = plan(
    changes=[
        {"file_path": "extra.py", "change_type": "create", "proposed_code": "def helper():\n    return 1\n", "explanation": "new helper"}
    ]
)


# ---------------------------------------------------------------- fixture project


def make_calc(root: Path) -> None:
    (root / "calc.py").write_text(CALC)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_calc.py").write_text(CALC_TEST)


def set_config(project, **settings) -> None:
    import yaml

    (project.root / ".aether" / "config.yaml").write_text(yaml.safe_dump({"bug_bash": settings}))


def tree(root: Path) -> dict:
    """Every file of the project outside .aether (path → bytes), to prove nothing changed."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in (".aether", ".venv") or "__pycache__" in rel.parts:
            continue
        if path.is_file() or path.is_symlink():
            out[str(rel)] = path.read_bytes() if path.is_file() else os.readlink(path)
    return out


_TICKETS = 0


class Bugs:
    """The `aether bug` CLI on one fixture project."""

    def __init__(self, project):
        self.p = project

    def run(self, *args, input=None):
        return self.p.run("bug", *args, input=input)

    def ok(self, *args, input=None):
        return self.run(*args, input=input).json

    def record(self, bug_id, kind, doc):
        text = doc if isinstance(doc, str) else json.dumps(doc)
        return self.run("record", bug_id, kind, "-", input=text)

    def typed(self, prompt: str, *, prompt_id: str = "", age: float = 0) -> tuple[str, int]:
        """What Aether's prompt hook does when the person types PROMPT in Claude Code: keep the
        hook's input as a ticket and run `bug typed-approval`. (the text the person sees, exit)"""
        global _TICKETS
        _TICKETS += 1
        folder = self.p.root / ".aether" / "typed"
        folder.mkdir(parents=True, exist_ok=True)
        ticket = folder / f"{os.getpid()}-{_TICKETS}.json"
        event = {"session_id": "s1", "prompt_id": prompt_id or f"p{_TICKETS}", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        ticket.write_text(json.dumps(event, separators=(",", ":")))
        if age:
            os.utime(ticket, (ticket.stat().st_atime - age, ticket.stat().st_mtime - age))
        result = self.run("typed-approval", str(ticket))
        if not result.stdout:  # not the approve command: no answer, the prompt goes on
            assert result.code == 0 and result.stderr == "", result
            return "", result.code
        answer = json.loads(result.stdout)
        assert answer["decision"] == "block" and result.stderr == "", result
        return answer["reason"], result.code

    def approve(self, bug_id: str, reason: str = "") -> str:
        """The person types `/ant:bug approve BUG_ID [REASON]`; asserts it approved."""
        text, _ = self.typed(f"/ant:bug approve {bug_id}" + (f" {reason}" if reason else ""))
        assert "✓ Fix plan approved" in text, text
        return text

    def state(self, bug_id) -> dict:
        return json.loads((self.p.root / ".aether" / "bugs" / bug_id / "state.json").read_text())

    def write_state(self, bug_id, state) -> None:
        (self.p.root / ".aether" / "bugs" / bug_id / "state.json").write_text(json.dumps(state))

    def history(self, bug_id) -> list[dict]:
        path = self.p.root / ".aether" / "bugs" / bug_id / "history" / "phase_transitions.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def audit(self) -> list[dict]:
        path = self.p.root / ".aether" / "bugs" / "approvals.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def phase(self, bug_id) -> str:
        return self.state(bug_id)["phase"]

    def drive(self, bug_id, target, *, fix_plan=None, monkeypatch=None) -> None:
        """Take a new bug `bug_id` to phase `target` the way a user and the Queen would."""
        self.ok("init", "add() returns the wrong sum", "--id", bug_id, "--test", "tests/test_calc.py::test_add")
        if target == "created":
            return
        stop = {"reproducing": None, "reproduced": "reproduce", "not_reproducible": None, "analyzing": None, "analyzed": "analyze"}.get(
            target
        )
        self.ok("analyze", bug_id, *(["--stop-at", stop] if stop else []))
        if target == "reproducing":
            return
        if target == "not_reproducible":
            self.record(bug_id, "reproduction", NOT_REPRODUCED).json
            return
        self.record(bug_id, "reproduction", REPRODUCTION).json
        if target in ("reproduced", "analyzing"):
            return
        self.record(bug_id, "root-cause", ROOT_CAUSE).json
        if target in ("analyzed", "planning"):
            return
        self.record(bug_id, "fix-plan", fix_plan or FIX_PLAN).json
        if target == "planned":
            return
        if target == "wont_fix":
            self.ok("reject", bug_id, "--reason", "not worth it")
            return
        self.approve(bug_id)
        if target == "approved":
            return
        if target in ("fixed", "blocked"):
            set_config(self.p, test_command="true" if target == "fixed" else "false")
            result = self.run("fix", bug_id)
            assert self.phase(bug_id) == target, (result.stdout, result.stderr)
            return
        # implementing / verifying: a fix interrupted there (the process dies)
        from aether.bugs import fixer

        set_config(self.p, test_command="true")
        name = "apply" if target == "implementing" else "verify"

        def die(*a, **k):
            raise KeyboardInterrupt

        assert monkeypatch is not None
        with monkeypatch.context() as m:
            m.setattr(fixer, name, die)
            assert self.run("fix", bug_id).code == 130
        assert self.phase(bug_id) == target


AT_A_TERMINAL = {
    "stdin_tty": True,
    "stderr_tty": True,
    "claude_code_env": [],
    "claude_code_env_in_parents": [],
    "claude_code_parents": [],
    "parents_checked": 0,
}
