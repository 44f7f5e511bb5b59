"""Each contract rule of the three agent results, accepted and rejected, through `bug record`."""

from __future__ import annotations

import copy
import json
import os

import pytest

from helpers.bugs import FIX_PLAN, GOOD_TESTS, NOT_REPRODUCED, REPRODUCTION, ROOT_CAUSE, set_config


def _with(base: dict, **changes) -> dict:
    doc = copy.deepcopy(base)
    for key, value in changes.items():
        if value is _DROP:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


_DROP = object()


def _expect(result, defect: str | None):
    if defect is None:
        assert result.code == 0, result.stderr
        return result.json
    err = result.error
    assert result.code == 4 and err["code"] == "invalid_agent_output", err
    assert any(defect in d for d in err["defects"]), err["defects"]
    return err


# ---------------------------------------------------------------- reproduction

REPRO_CASES = [
    ("valid", {}, None),
    ("confirmed missing", {"confirmed": _DROP}, "confirmed: missing"),
    ("confirmed not a boolean", {"confirmed": "yes"}, "confirmed: must be true or false"),
    ("confirmed needs a step", {"reproduction_steps": []}, "reproduction_steps: has 0 entries, needs at least 1"),
    ("steps required", {"reproduction_steps": _DROP}, "reproduction_steps: missing"),
    ("blank step", {"reproduction_steps": ["  "]}, "reproduction_steps[0]: must be a non-empty string"),
    ("confirmed needs a file", {"affected_files": []}, "affected_files: has 0 entries, needs at least 1"),
    ("confirmed needs a file (absent)", {"affected_files": _DROP}, "affected_files: needs at least 1"),
    ("confidence low", {"confidence": "low"}, None),
    ("confidence medium", {"confidence": "medium"}, None),
    ("confidence bad", {"confidence": "certain"}, "confidence: must be one of high, medium, low"),
    ("attempts above max", {"attempts": 4}, "attempts: must be <= 3"),
    ("attempts zero", {"attempts": 0}, "attempts: must be >= 1"),
    ("attempts at max", {"attempts": 3}, None),
    ("unknown field", {"confirmd": True}, "confirmd: unknown field"),
    ("snippets must be strings", {"related_code_snippets": {"a.py": 1}}, "related_code_snippets: must be an object of strings"),
    ("environment must be strings", {"environment": ["py"]}, "environment: must be an object of strings"),
    ("test_output null ok", {"test_output": None}, None),
    ("test_output wrong type", {"test_output": 3}, "test_output: must be a string or null"),
]


@pytest.mark.parametrize("name,changes,defect", REPRO_CASES, ids=[c[0] for c in REPRO_CASES])
def test_reproduction_rules(bugs, name, changes, defect):
    bugs.drive("r", "reproducing")
    _expect(bugs.record("r", "reproduction", _with(REPRODUCTION, **changes)), defect)


def test_not_confirmed_needs_no_steps_or_files(bugs):
    bugs.drive("r", "reproducing")
    out = bugs.record("r", "reproduction", NOT_REPRODUCED).json
    assert out["phase"] == "NOT_REPRODUCIBLE"


def test_max_reproduction_attempts_comes_from_config(bugs, monkeypatch):
    monkeypatch.setenv("AETHER_BUG_MAX_REPRO_ATTEMPTS", "5")
    bugs.drive("r", "reproducing")
    assert bugs.record("r", "reproduction", _with(REPRODUCTION, attempts=5)).code == 0


# ---------------------------------------------------------------- root cause

RC_CASES = [
    ("valid", {}, None),
    ("summary 100 characters", {"summary": "x" * 100}, None),
    ("summary 101 characters", {"summary": "x" * 101}, "summary: 101 characters, the limit is 100"),
    ("summary on two lines", {"summary": "one\ntwo"}, "summary: must be a single line"),
    ("summary empty", {"summary": " "}, "summary: must not be empty"),
    ("trace of 2 steps", {"execution_trace": ["a", "b"]}, "execution_trace: has 2 entries, needs at least 3"),
    ("trace missing", {"execution_trace": _DROP}, "execution_trace: missing"),
    ("file missing", {"root_cause_file": _DROP}, "root_cause_file: missing"),
    ("file does not exist", {"root_cause_file": "nope.py"}, "does not exist in the project"),
    ("file outside (..)", {"root_cause_file": "../outside.py"}, "contains `..`"),
    ("file outside (absolute)", {"root_cause_file": "/etc/hostname"}, "is outside the project"),
    ("file in .aether", {"root_cause_file": ".aether/config.yaml"}, "is inside .aether/"),
    ("line past the end", {"root_cause_line": 99}, "root_cause_line: 99 is past the end of calc.py"),
    ("line zero", {"root_cause_line": 0}, "root_cause_line: must be >= 1"),
    ("line null", {"root_cause_line": None}, None),
    ("code empty", {"root_cause_code": ""}, "root_cause_code: must not be empty"),
    ("explanation empty", {"root_cause_explanation": ""}, "root_cause_explanation: must not be empty"),
    ("explanation missing", {"root_cause_explanation": _DROP}, "root_cause_explanation: missing"),
    ("why_not_caught empty", {"why_not_caught": ""}, "why_not_caught: must not be empty"),
    ("confidence bad", {"confidence": "sure"}, "confidence: must be one of"),
    ("unknown field", {"root_cause": "x"}, "root_cause: unknown field"),
]


@pytest.mark.parametrize("name,changes,defect", RC_CASES, ids=[c[0] for c in RC_CASES])
def test_root_cause_rules(bugs, name, changes, defect):
    bugs.drive("c", "analyzing")
    _expect(bugs.record("c", "root-cause", _with(ROOT_CAUSE, **changes)), defect)


def test_root_cause_file_absolute_inside_is_made_relative(bugs):
    bugs.drive("c", "analyzing")
    doc = _with(ROOT_CAUSE, root_cause_file=str(bugs.p.root / "calc.py"))
    bugs.record("c", "root-cause", doc).json
    assert bugs.state("c")["root_cause"]["root_cause_file"] == "calc.py"


def test_root_cause_file_through_symlink_out_is_refused(bugs, tmp_path):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    os.symlink(outside, bugs.p.root / "link.py")
    bugs.drive("c", "analyzing")
    _expect(
        bugs.record("c", "root-cause", _with(ROOT_CAUSE, root_cause_file="link.py")), "leads outside the project through a symbolic link"
    )


def test_root_cause_code_not_in_file_is_a_warning(bugs):
    bugs.drive("c", "analyzing")
    out = bugs.record("c", "root-cause", _with(ROOT_CAUSE, root_cause_code="return a * b")).json
    assert out["warnings"] == ["root_cause_code is not found verbatim in calc.py"]


# ---------------------------------------------------------------- fix plan


def _change(**changes):
    return [_with(FIX_PLAN["changes"][0], **changes)]


def _test(i=0, **changes):
    tests = copy.deepcopy(GOOD_TESTS)
    tests[i] = _with(tests[i], **changes)
    return tests


PLAN_CASES = [
    ("valid", {}, None),
    ("no changes", {"changes": []}, "changes: has 0, needs at least 1"),
    ("changes missing", {"changes": _DROP}, "changes: missing"),
    ("one test of 2", {"test_cases": GOOD_TESTS[:1]}, "test_cases: has 1, needs at least 2"),
    ("modify without current_code", {"changes": _change(current_code=None)}, "current_code: required and non-empty for a modify change"),
    ("modify without proposed_code", {"changes": _change(proposed_code="")}, "proposed_code: required and non-empty for a modify change"),
    (
        "create without proposed_code",
        {"changes": _change(change_type="create", file_path="new.py", current_code=None, proposed_code=None)},
        "proposed_code: required and non-empty for a create change",
    ),
    ("create", {"changes": _change(change_type="create", file_path="pkg/new.py", current_code=None, proposed_code="X = 1\n")}, None),
    (
        "delete needs no code",
        {"changes": _change(change_type="delete", file_path="tests/test_calc.py", current_code=None, proposed_code=None)},
        None,
    ),
    ("bad change type", {"changes": _change(change_type="rename")}, "change_type: must be one of modify, create, delete"),
    ("explanation required", {"changes": _change(explanation="")}, "explanation: must not be empty"),
    ("no-op change", {"changes": _change(proposed_code=FIX_PLAN["changes"][0]["current_code"])}, "identical to current_code"),
    ("rollback plan empty", {"rollback_plan": ""}, "rollback_plan: must not be empty"),
    ("rollback plan missing", {"rollback_plan": _DROP}, "rollback_plan: missing"),
    ("risk explanation empty", {"risk_explanation": " "}, "risk_explanation: must not be empty"),
    ("risk level bad", {"risk_level": "none"}, "risk_level: must be one of low, medium, high"),
    ("risk level high", {"risk_level": "high"}, None),
    ("summary missing", {"summary": _DROP}, "summary: missing"),
    ("test name not a function name", {"test_cases": _test(name="add works")}, "must be a Python function name starting with `test`"),
    ("test name without test prefix", {"test_cases": _test(name="check_add")}, "must be a Python function name starting with `test`"),
    ("test code not Python", {"test_cases": _test(test_code="def test_add_positive(:\n")}, "test_code: is not valid Python"),
    (
        "test code defines another name",
        {"test_cases": _test(test_code="def test_other():\n    pass\n")},
        "does not define a top-level function `def test_add_positive",
    ),
    ("test description empty", {"test_cases": _test(description="")}, "description: must not be empty"),
    ("test category bad", {"test_cases": _test(category="smoke")}, "category: must be one of regression, edge_case, integration"),
    ("duplicate test names", {"test_cases": [GOOD_TESTS[0], GOOD_TESTS[0]]}, "the name 'test_add_positive' is used more than once"),
    ("current_code not found", {"changes": _change(current_code="return a * b")}, "current_code is not found in the file"),
    (
        "current_code found twice",
        {"changes": _change(current_code="return a - b", proposed_code="return a + b")},
        "current_code is found 2 times",
    ),
    (
        "create over an existing file",
        {"changes": _change(change_type="create", current_code=None)},
        "the file already exists; create never overwrites",
    ),
    (
        "delete a missing file",
        {"changes": _change(change_type="delete", file_path="gone.py", current_code=None, proposed_code=None)},
        "does not exist, so it cannot be deleted",
    ),
    ("path with ..", {"changes": _change(file_path="../calc.py")}, "contains `..`"),
    ("absolute path", {"changes": _change(file_path="/tmp/calc.py")}, "is an absolute path"),
    ("path into .git", {"changes": _change(change_type="create", file_path=".git/hooks/pre-commit", current_code=None)}, "is inside .git/"),
    (
        "path onto the test file",
        {"changes": _change(change_type="create", file_path="tests/test_bug_f.py", current_code=None)},
        "must not touch tests/test_bug_f.py",
    ),
    ("unknown field", {"patches": []}, "patches: unknown field"),
]


@pytest.mark.parametrize("name,changes,defect", PLAN_CASES, ids=[c[0] for c in PLAN_CASES])
def test_fix_plan_rules(bugs, name, changes, defect):
    bugs.drive("f", "planning")
    _expect(bugs.record("f", "fix-plan", _with(FIX_PLAN, **changes)), defect)


def test_min_test_cases_from_config(bugs):
    set_config(bugs.p, min_test_cases=3)
    bugs.drive("f", "planning")
    _expect(bugs.record("f", "fix-plan", FIX_PLAN), "test_cases: has 2, needs at least 3 (bug_bash.min_test_cases)")


def test_symlink_target_is_refused(bugs):
    os.symlink("calc.py", bugs.p.root / "alias.py")
    bugs.drive("f", "planning")
    _expect(bugs.record("f", "fix-plan", _with(FIX_PLAN, changes=_change(file_path="alias.py"))), "is a symbolic link")


def test_symlinked_folder_escaping_is_refused(bugs, tmp_path):
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "out", bugs.p.root / "vendor")
    bugs.drive("f", "planning")
    doc = _with(FIX_PLAN, changes=_change(change_type="create", file_path="vendor/x.py", current_code=None))
    _expect(bugs.record("f", "fix-plan", doc), "leads outside the project through a symbolic link")


def test_crlf_hint(bugs):
    (bugs.p.root / "calc.py").write_bytes(b'def add(a, b):\r\n    """Sum of a and b."""\r\n    return a - b\r\n')
    bugs.drive("f", "planning")
    _expect(bugs.record("f", "fix-plan", FIX_PLAN), "(the file has CRLF line endings)")


# ---------------------------------------------------------------- defects as a list, retries


def test_every_defect_is_listed_and_nothing_moves(bugs):
    bugs.drive("f", "planning")
    before = bugs.state("f")
    doc = _with(FIX_PLAN, changes=[], rollback_plan="", test_cases=[{"name": "bad name"}])
    err = bugs.record("f", "fix-plan", doc).error
    assert {d.split(":")[0] for d in err["defects"]} >= {
        "rollback_plan",
        "changes",
        "test_cases",
        "test_cases[0].name",
        "test_cases[0].description",
        "test_cases[0].test_code",
    }
    after = bugs.state("f")
    assert after["phase"] == "planning" and after["fix_plan"] is None
    assert after["agent_rejections"] == {"fix-plan": 1}
    assert {k: v for k, v in after.items() if k not in ("agent_rejections", "updated_at")} == {
        k: v for k, v in before.items() if k not in ("agent_rejections", "updated_at")
    }
    assert not (bugs.p.root / ".aether" / "bugs" / "f" / "fix-plan.md").exists()


def test_retry_policy_counts_attempts_with_backoff(bugs):
    bugs.drive("r", "reproducing")
    seen = []
    for _ in range(3):
        err = bugs.record("r", "reproduction", {"confirmed": True}).error
        seen.append((err["attempt"], err["max_attempts"], err["retry_allowed"], err["retry_in_seconds"]))
    assert seen == [(1, 3, True, 5.0), (2, 3, True, 10.0), (3, 3, False, None)]
    assert '"confirmed": false' in err["error"]
    bugs.record("r", "reproduction", REPRODUCTION).json
    assert bugs.state("r")["agent_rejections"] == {}


@pytest.mark.parametrize(
    "text,defect",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object, found a list"),
        ("", "not valid JSON"),
    ],
)
def test_malformed_documents(bugs, text, defect):
    bugs.drive("r", "reproducing")
    _expect(bugs.record("r", "reproduction", text), defect)


def test_record_from_a_file_with_unicode(bugs, tmp_path):
    bugs.drive("r", "reproducing")
    doc = _with(REPRODUCTION, notes="quotes \" ' `x` $(rm -rf /) ünïcødé 🐜\nline two")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    bugs.run("record", "r", "reproduction", str(path)).json
    assert bugs.state("r")["reproduction"]["notes"] == doc["notes"]
    assert "ünïcødé 🐜" in (bugs.p.root / ".aether/bugs/r/reproduction.md").read_text()


def test_reports_written_on_success(bugs):
    bugs.drive("f", "planned")
    folder = bugs.p.root / ".aether" / "bugs" / "f"
    for name in ("report.md", "reproduction.md", "root-cause-analysis.md", "fix-plan.md", "test-cases.py"):
        assert (folder / name).read_text().strip(), name
    assert "add() subtracts" in (folder / "root-cause-analysis.md").read_text()
    module = (folder / "test-cases.py").read_text()
    compile(module, "test-cases.py", "exec")
    assert "def test_add_positive" in module and "def test_add_negative" in module


def test_fence_survives_backticks(bugs):
    bugs.drive("r", "reproducing")
    bugs.record("r", "reproduction", _with(REPRODUCTION, test_output="```\ninner\n```")).json
    text = (bugs.p.root / ".aether/bugs/r/reproduction.md").read_text()
    assert "````\n```\ninner\n```\n````" in text
