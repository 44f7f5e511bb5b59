"""The contracts of Bug Bash: the bug report and the three agents' results (docs/contracts.md).

Each `check_*` returns the normalised record and a list of defects — every problem at once,
each naming its field, so the Queen can hand the whole list back to the agent. Unknown fields
are defects too (a misspelt field would otherwise be dropped silently).
"""

from __future__ import annotations

import ast
import os

from aether.bugs import fixer
from aether.core.text import json_type

CONFIDENCE = ("high", "medium", "low")
RISK_LEVELS = ("low", "medium", "high")
CHANGE_TYPES = ("modify", "create", "delete")
TEST_CATEGORIES = ("regression", "edge_case", "integration")

MAX_SUMMARY_LENGTH = 100  # root cause summary (docs/decisions/bug-bash-gate.md)
MIN_TRACE_STEPS = 3  # root cause execution_trace (docs/decisions/bug-bash-gate.md)
MAX_DESCRIPTION_LENGTH = 10_000  # bug report description
MAX_TEXT_LENGTH = 200_000  # error messages, stack traces, test output
MAX_RECORD_BYTES = 4_000_000  # one agent result document

REPORT_FIELDS = ("description", "test_path", "github_issue", "error_message", "stack_trace", "steps_to_reproduce")


class Checker:
    """Collects defects while reading one document."""

    def __init__(self, doc: dict, where: str):
        self.doc = doc
        self.where = where
        self.defects: list[str] = []

    def add(self, message: str) -> None:
        self.defects.append(message)

    def unknown(self, allowed) -> None:
        for key in self.doc:
            if key not in allowed:
                self.add(f"{key}: unknown field (allowed: {', '.join(allowed)})")

    def text(self, key, *, required=False, nonempty=False, default="", nullable=False, max_length=MAX_TEXT_LENGTH, one_line=False):
        if key not in self.doc or (nullable and self.doc[key] is None):
            if required:
                self.add(f"{key}: missing (required)")
            return None if nullable else default
        value = self.doc[key]
        if not isinstance(value, str):
            self.add(f"{key}: must be a string{' or null' if nullable else ''}, found {json_type(value, article=True)}")
            return None if nullable else default
        if nonempty and not value.strip():
            self.add(f"{key}: must not be empty")
        if len(value) > max_length:
            self.add(f"{key}: {len(value)} characters, the limit is {max_length}")
        if one_line and ("\n" in value.strip() or "\r" in value.strip()):
            self.add(f"{key}: must be a single line")
        return value

    def choice(self, key, choices, default):
        value = self.doc.get(key, default)
        if value not in choices or isinstance(value, bool):
            self.add(f"{key}: must be one of {', '.join(choices)}, found {value!r}")
            return default
        return value

    def strings(self, key, *, required=False, min_items=0, why=""):
        if key not in self.doc:
            if required:
                self.add(f"{key}: missing (required)")
            elif min_items:
                self.add(f"{key}: needs at least {min_items} entr{'y' if min_items == 1 else 'ies'}{why}")
            return []
        value = self.doc[key]
        if not isinstance(value, list):
            self.add(f"{key}: must be a list of strings, found {json_type(value, article=True)}")
            return []
        good = []
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                self.add(f"{key}[{i}]: must be a non-empty string, found {item!r}"[:200])
            else:
                good.append(item)
        if len(value) < min_items:
            self.add(f"{key}: has {len(value)} entr{'y' if len(value) == 1 else 'ies'}, needs at least {min_items}{why}")
        return good

    def mapping(self, key):
        value = self.doc.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            self.add(f"{key}: must be an object of strings")
            return {}
        return value

    def integer(self, key, *, minimum=None, maximum=None, nullable=False, default=None):
        if key not in self.doc or (nullable and self.doc[key] is None):
            return default
        value = self.doc[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(f"{key}: must be a whole number{' or null' if nullable else ''}, found {json_type(value, article=True)}")
            return default
        if minimum is not None and value < minimum:
            self.add(f"{key}: must be >= {minimum}, found {value}")
        if maximum is not None and value > maximum:
            self.add(f"{key}: must be <= {maximum}, found {value}")
        return value


def _not_object(doc, what: str) -> list[str] | None:
    if not isinstance(doc, dict):
        return [f"the {what} must be a JSON object, found {json_type(doc, article=True)}"]
    return None


# ---------------------------------------------------------------- bug report


def check_report(doc: dict) -> tuple[dict, list[str]]:
    c = Checker(doc, "report")
    c.unknown(REPORT_FIELDS)
    report = {
        "description": c.text("description", required=True, nonempty=True, max_length=MAX_DESCRIPTION_LENGTH),
        "test_path": c.text("test_path", nullable=True, max_length=1000, one_line=True),
        "github_issue": c.integer("github_issue", minimum=1, nullable=True),
        "error_message": c.text("error_message", nullable=True),
        "stack_trace": c.text("stack_trace", nullable=True),
        "steps_to_reproduce": c.strings("steps_to_reproduce"),
    }
    if report["description"]:
        report["description"] = report["description"].strip()
    return report, c.defects


# ---------------------------------------------------------------- reproduction (Bug Researcher)

REPRODUCTION_FIELDS = (
    "confirmed",
    "reproduction_steps",
    "test_output",
    "error_message",
    "stack_trace",
    "affected_files",
    "related_code_snippets",
    "confidence",
    "notes",
    "attempts",
    "environment",
    "reproduction_test",
)


def check_reproduction(doc, cfg: dict) -> tuple[dict | None, list[str]]:
    """ReproductionResult: confirmed ⇒ ≥ 1 step and ≥ 1 affected file; confidence high|medium|low;
    1 ≤ attempts ≤ max_reproduction_attempts; reproduction_test null or one line. (That a
    confirmed one really fails is checked by running it: bugs/runs.py.)"""
    bad = _not_object(doc, "reproduction result")
    if bad:
        return None, bad
    c = Checker(doc, "reproduction")
    c.unknown(REPRODUCTION_FIELDS)
    confirmed = doc.get("confirmed")
    if "confirmed" not in doc:
        c.add("confirmed: missing (required): true if the bug was reproduced, else false")
    elif not isinstance(confirmed, bool):
        c.add(f"confirmed: must be true or false, found {confirmed!r}")
    sure = confirmed is True
    result = {
        "confirmed": sure,
        "reproduction_steps": c.strings(
            "reproduction_steps", required=True, min_items=1 if sure else 0, why=" when confirmed is true" if sure else ""
        ),
        "test_output": c.text("test_output", nullable=True),
        "error_message": c.text("error_message", nullable=True),
        "stack_trace": c.text("stack_trace", nullable=True),
        "affected_files": c.strings("affected_files", min_items=1 if sure else 0, why=" when confirmed is true" if sure else ""),
        "related_code_snippets": c.mapping("related_code_snippets"),
        "confidence": c.choice("confidence", CONFIDENCE, "medium"),
        "notes": c.text("notes"),
        "attempts": c.integer("attempts", minimum=1, maximum=cfg["max_reproduction_attempts"], default=1),
        "environment": c.mapping("environment"),
        # the test Aether runs to confirm it (bugs/runs.py): a test file or `path::test`
        "reproduction_test": c.text("reproduction_test", nullable=True, one_line=True, max_length=1000),
    }
    return result, c.defects


# ---------------------------------------------------------------- root cause (Root Cause Analyzer)

ROOT_CAUSE_FIELDS = (
    "summary",
    "execution_trace",
    "root_cause_file",
    "root_cause_line",
    "root_cause_code",
    "root_cause_explanation",
    "why_not_caught",
    "confidence",
    "alternative_hypotheses",
)


def check_root_cause(doc, root: str) -> tuple[dict | None, list[str], list[str]]:
    """RootCauseAnalysis: summary ≤ 100 chars; ≥ 3 trace steps; root_cause_file an existing file
    inside the project; root_cause_line within it; code, explanation and why_not_caught set.
    Returns (record, defects, warnings)."""

    bad = _not_object(doc, "root cause analysis")
    if bad:
        return None, bad, []
    c = Checker(doc, "root_cause")
    c.unknown(ROOT_CAUSE_FIELDS)
    warnings: list[str] = []
    result = {
        "summary": c.text("summary", required=True, nonempty=True, one_line=True),
        "execution_trace": c.strings("execution_trace", required=True, min_items=MIN_TRACE_STEPS),
        "root_cause_file": c.text("root_cause_file", required=True, nonempty=True, one_line=True, max_length=1000),
        "root_cause_line": c.integer("root_cause_line", minimum=1, nullable=True),
        "root_cause_code": c.text("root_cause_code", required=True, nonempty=True),
        "root_cause_explanation": c.text("root_cause_explanation", required=True, nonempty=True),
        "why_not_caught": c.text("why_not_caught", required=True, nonempty=True),
        "confidence": c.choice("confidence", CONFIDENCE, "medium"),
        "alternative_hypotheses": c.strings("alternative_hypotheses"),
    }
    summary = result["summary"]
    if summary and len(summary) > MAX_SUMMARY_LENGTH:
        c.add(f"summary: {len(summary)} characters, the limit is {MAX_SUMMARY_LENGTH}")
    target = result["root_cause_file"]
    if target and target.strip():
        rel, problem = fixer.resolve(root, target.strip(), allow_absolute=True)
        if problem:
            c.add(f"root_cause_file: {target!r} {problem}")
        else:
            assert rel is not None  # resolve gives a path or a problem
            full = fixer.join(root, rel)
            if not os.path.isfile(full):
                c.add(f"root_cause_file: {target!r} does not exist in the project")
            else:
                result["root_cause_file"] = rel
                text = fixer.read_text(full)
                if text is not None:
                    line = result["root_cause_line"]
                    count = len(text.splitlines())
                    if isinstance(line, int) and line > count:
                        c.add(f"root_cause_line: {line} is past the end of {rel} ({count} lines)")
                    code = (result["root_cause_code"] or "").strip()
                    if code and code not in text:
                        warnings.append(f"root_cause_code is not found verbatim in {rel}")
    return result, c.defects, warnings


# ---------------------------------------------------------------- fix plan (Fix Planner)

FIX_PLAN_FIELDS = (
    "summary",
    "changes",
    "test_cases",
    "risk_level",
    "risk_explanation",
    "scope",
    "side_effects",
    "rollback_plan",
    "estimated_effort",
)
CHANGE_FIELDS = ("file_path", "change_type", "current_code", "proposed_code", "explanation")
TEST_FIELDS = ("name", "description", "test_code", "category")


def _check_change(doc, i: int) -> tuple[dict | None, list[str]]:
    where = f"changes[{i}]"
    if not isinstance(doc, dict):
        return None, [f"{where}: must be an object, found {json_type(doc, article=True)}"]
    c = Checker(doc, where)
    c.unknown(CHANGE_FIELDS)
    kind = c.choice("change_type", CHANGE_TYPES, None) if "change_type" in doc else None
    if "change_type" not in doc:
        c.add("change_type: missing (required): modify, create or delete")
    change = {
        "file_path": c.text("file_path", required=True, nonempty=True, one_line=True, max_length=1000),
        "change_type": kind,
        "current_code": c.text("current_code", nullable=True),
        "proposed_code": c.text("proposed_code", nullable=True),
        "explanation": c.text("explanation", required=True, nonempty=True),
    }
    if kind == "modify" and not (change["current_code"] or "").strip():
        c.add("current_code: required and non-empty for a modify change")
    if kind in ("modify", "create") and not (change["proposed_code"] or "").strip():
        c.add(f"proposed_code: required and non-empty for a {kind} change")
    if kind == "modify" and change["current_code"] and change["current_code"] == change["proposed_code"]:
        c.add("proposed_code: identical to current_code (the change does nothing)")
    return change, [f"{where}.{d}" if not d.startswith(where) else d for d in c.defects]


def _defines(test_code: str, name: str) -> str | None:
    """Why test_code is unusable as the test `name` (None when it is fine)."""

    try:
        tree = ast.parse(test_code)
    except SyntaxError as exc:
        return f"is not valid Python (line {exc.lineno}: {exc.msg})"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return None
    return f"does not define a top-level function `def {name}(…)`"


def _check_test(doc, i: int) -> tuple[dict | None, list[str]]:
    where = f"test_cases[{i}]"
    if not isinstance(doc, dict):
        return None, [f"{where}: must be an object, found {json_type(doc, article=True)}"]
    c = Checker(doc, where)
    c.unknown(TEST_FIELDS)
    test = {
        "name": c.text("name", required=True, nonempty=True, one_line=True, max_length=200),
        "description": c.text("description", required=True, nonempty=True),
        "test_code": c.text("test_code", required=True, nonempty=True),
        "category": c.choice("category", TEST_CATEGORIES, "regression"),
    }
    name = test["name"]
    if name and not (name.isidentifier() and name.startswith("test")):
        c.add(f"name: {name!r} must be a Python function name starting with `test`")
    elif name and test["test_code"] and test["test_code"].strip():
        problem = _defines(test["test_code"], name)
        if problem:
            c.add(f"test_code: {problem}")
    return test, [f"{where}.{d}" for d in c.defects]


def check_fix_plan(doc, cfg: dict, root: str, bug_id: str) -> tuple[dict | None, list[str]]:
    """FixPlan: ≥ 1 change; ≥ min_test_cases tests; modify has current and proposed code,
    create has proposed code; risk explanation and rollback plan set. Then the plan is tried
    against the project as it is now (nothing is written): every path inside the project,
    every `current_code` found exactly once, no `create` over an existing file."""

    bad = _not_object(doc, "fix plan")
    if bad:
        return None, bad
    c = Checker(doc, "fix_plan")
    c.unknown(FIX_PLAN_FIELDS)
    plan = {
        "summary": c.text("summary", required=True, nonempty=True, one_line=True, max_length=500),
        "changes": [],
        "test_cases": [],
        "risk_level": c.choice("risk_level", RISK_LEVELS, "low"),
        "risk_explanation": c.text("risk_explanation", required=True, nonempty=True),
        "scope": c.text("scope", max_length=1000),
        "side_effects": c.strings("side_effects"),
        "rollback_plan": c.text("rollback_plan", required=True, nonempty=True),
        "estimated_effort": c.text("estimated_effort", max_length=1000),
    }
    for key, check, minimum, what in (
        ("changes", _check_change, 1, "change"),
        ("test_cases", _check_test, cfg["min_test_cases"], "test case"),
    ):
        items = doc.get(key)
        if key not in doc:
            c.add(f"{key}: missing (required): at least {minimum} {what}{'s' if minimum > 1 else ''}")
            continue
        if not isinstance(items, list):
            c.add(f"{key}: must be a list, found {json_type(items, article=True)}")
            continue
        if len(items) < minimum:
            extra = " (bug_bash.min_test_cases)" if key == "test_cases" else ""
            c.add(f"{key}: has {len(items)}, needs at least {minimum}{extra}")
        for i, item in enumerate(items):
            record, defects = check(item, i)
            c.defects.extend(defects)
            if record is not None:
                plan[key].append(record)
    names = [t["name"] for t in plan["test_cases"] if t["name"]]
    for name in sorted({n for n in names if names.count(n) > 1}):
        c.add(f"test_cases: the name {name!r} is used more than once")
    if not c.defects:
        _, problems = fixer.simulate(plan, root, bug_id)
        c.defects.extend(problems)
    return plan, c.defects
