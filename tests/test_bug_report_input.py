"""`aether bug init --report -`: the whole bug report as one JSON object on stdin, which is how
`/ant:bug init` hands the user's free text to the helper without a command line."""

from __future__ import annotations

import json

import pytest

HARD_TEXT = 'Login fails with "p@ss!" — it\'s $HOME, `not run`; $(nope)\nsecond line ünï 🐜'


def init(project, doc, *args):
    text = doc if isinstance(doc, str) else json.dumps(doc)
    return project.run("bug", "init", "--report", "-", *args, input=text)


def state(project, bug_id):
    return json.loads((project.root / ".aether" / "bugs" / bug_id / "state.json").read_text("utf-8"))


def test_every_field_arrives_exactly(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    trace = 'Traceback (most recent call last):\n  File "calc.py", line 3\nIndexError: "x"'
    out = init(
        project,
        {
            "description": HARD_TEXT,
            "id": "login-x",
            "test": "tests/test_a.py::test_b",
            "github_issue": 12,
            "error": "Invalid 'credentials'",
            "stack_trace": trace,
        },
    ).json
    assert out["bug_id"] == "login-x" and out["phase"] == "CREATED"
    assert out["next"] == ["aether bug analyze login-x"]
    report = state(project, "login-x")["report"]
    assert report["description"] == HARD_TEXT.strip()
    assert report["test_path"] == "tests/test_a.py::test_b" and report["github_issue"] == 12
    assert report["error_message"] == "Invalid 'credentials'" and report["stack_trace"] == trace
    assert "second line ünï 🐜" in (project.root / ".aether/bugs/login-x/report.md").read_text("utf-8")


def test_only_the_description_is_required_and_nulls_mean_absent(project):
    out = init(project, {"description": "last_n returns one item too many", "test": None, "github_issue": None}).json
    assert out["bug_id"] == "last-n-returns-one-item-too"  # made from the description
    report = state(project, out["bug_id"])["report"]
    assert report["test_path"] is None and report["github_issue"] is None


def test_the_stack_trace_can_name_a_file(project):
    (project.root / "tb.txt").write_text("Traceback: boom\n", "utf-8")
    out = init(project, {"description": "crash on start", "stack_trace": "@tb.txt"}).json
    assert state(project, out["bug_id"])["report"]["stack_trace"] == "Traceback: boom\n"


def test_the_same_as_the_options(project):
    init(project, {"description": "same bug", "id": "one", "test": "tests/t.py", "github_issue": 4, "error": "E"}).json
    project.run("bug", "init", "same bug", "--id", "two", "--test", "tests/t.py", "--github-issue", "4", "--error", "E").json
    assert state(project, "one")["report"] == state(project, "two")["report"]


@pytest.mark.parametrize(
    "doc, code, words",
    [
        ("{not json", "invalid_json", "--report is not valid JSON"),
        ("[1, 2]", "invalid_argument", "must be a JSON object"),
        ('"text"', "invalid_argument", "must be a JSON object"),
        ({"description": "x", "colour": "red"}, "invalid_argument", "unknown key(s) colour"),
        ({"id": "x"}, "invalid_argument", "description is required"),
        ({"description": ""}, "invalid_argument", "description"),
        ({"description": 5}, "invalid_argument", "description must be a string"),
        ({"description": "x", "id": 7}, "invalid_argument", "id must be a string"),
        ({"description": "x", "test": ["a"]}, "invalid_argument", "test must be a string"),
        ({"description": "x", "github_issue": "12"}, "invalid_argument", "github_issue"),
        ({"description": "x", "github_issue": True}, "invalid_argument", "github_issue"),
        ({"description": "x", "github_issue": 0}, "invalid_argument", "github_issue"),
        ({"description": "x", "id": "Not A Slug"}, "invalid_bug_id", "slug"),
        ({"description": "x", "stack_trace": "-"}, "invalid_argument", "stack_trace cannot be -"),
        ({"description": "x", "stack_trace": "@missing.txt"}, "file_unreadable", "missing.txt"),
    ],
)
def test_bad_reports_are_refused_and_nothing_is_created(project, doc, code, words):
    err = init(project, doc)
    assert err.code == 1
    assert err.error["code"] == code and words in err.error["error"], err.error
    assert not (project.root / ".aether" / "bugs").exists() or not any(
        p.name != "approvals.jsonl" for p in (project.root / ".aether" / "bugs").iterdir()
    )


@pytest.mark.parametrize("extra", [["a description"], ["--id", "x"], ["--test", "t.py"], ["--error", "E"], ["--github-issue", "3"]])
def test_report_and_options_do_not_mix(project, extra):
    err = project.run("bug", "init", "--report", "-", *extra, input=json.dumps({"description": "x"}))
    assert err.code == 1 and err.error["code"] == "usage_error"
    assert "--report holds the whole report" in err.error["error"]


def test_a_description_or_a_report_is_needed(project):
    err = project.run("bug", "init")
    assert err.code == 1 and err.error["code"] == "usage_error"
    assert "--report" in err.error["error"] and "DESCRIPTION" in err.error["error"]


def test_an_existing_id_keeps_exit_2(project):
    init(project, {"description": "x", "id": "dup"}).json
    err = init(project, {"description": "y", "id": "dup"})
    assert err.code == 2 and err.error["code"] == "bug_exists"
    assert state(project, "dup")["report"]["description"] == "x"


def test_through_the_launcher_with_a_heredoc_as_the_command_writes_it(project):
    doc = json.dumps({"description": HARD_TEXT, "id": "sh-1"}, ensure_ascii=False)
    out = project.sh("bug", "init", "--report", "-", input=doc + "\n")
    assert out.code == 0, out.stderr
    assert state(project, "sh-1")["report"]["description"] == HARD_TEXT.strip()
