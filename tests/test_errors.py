import re

import pytest

from aether.state import error_log

ID = re.compile(r"^err_\d+_[0-9a-f]{4}$")


def test_error_add_returns_id_and_stores_record(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    err_id = project.run("error-add", "Security", "HIGH", "token leaked in logs", 2, "--task-id", "2.3", "--root-cause", "debug print").json
    assert ID.match(err_id) and err_id.startswith("err_1770199200_")
    data = project.load("errors.json")
    assert data["version"] == 1
    assert data["errors"] == [
        {
            "id": err_id,
            "category": "security",
            "severity": "high",
            "description": "token leaked in logs",
            "root_cause": "debug print",
            "phase": 2,
            "task_id": "2.3",
            "timestamp": "2026-02-04T10:00:00Z",
        }
    ]
    assert data["flagged_patterns"] == []


def test_optional_fields_default_to_null(project):
    project.run("error-add", "runtime", "low", "flaky")
    (err,) = project.load("errors.json")["errors"]
    assert (err["phase"], err["task_id"], err["root_cause"]) == (None, None, None)


def test_description_round_trips_exactly_through_stdin(project):
    text = 'multi\nline "quoted" $(rm -rf /) `tick` \\ ünïcødé 🐜\n'
    project.run("error-add", "runtime", "medium", "-", input=text).json
    assert project.load("errors.json")["errors"][0]["description"] == text


@pytest.mark.parametrize(
    "args,code",
    [
        (("runtime", "urgent", "x"), "invalid_severity"),
        (("runtime", "", "x"), "invalid_severity"),
        (("", "low", "x"), "invalid_category"),
        (("   ", "low", "x"), "invalid_category"),
        (("two\nlines", "low", "x"), "invalid_category"),
        (("c" * 65, "low", "x"), "invalid_category"),
        (("runtime", "low", "   "), "invalid_description"),
        (("runtime", "low", "x", "two"), "invalid_argument"),
        (("runtime", "low", "x", "-1"), "usage_error"),  # click reads -1 as an option
        (("runtime", "low", "x", "1.5"), "invalid_argument"),
        (("runtime", "low", "x" * 4001), "content_too_long"),
        (("runtime", "low"), "invalid_argument"),  # missing DESCRIPTION
    ],
)
def test_bad_input_is_refused_and_nothing_written(project, args, code):
    err = project.run("error-add", *args).error
    assert err["code"] == code
    assert not project.file("errors.json").exists()


def test_keeps_the_newest_50(project):
    data = {"errors": [], "flagged_patterns": []}
    for i in range(50):
        error_log.append(data, f"cat{i}", "low", f"error {i}")
    project.write("errors.json", data)
    first_id = data["errors"][0]["id"]
    new_id = project.run("error-add", "runtime", "low", "the 51st").json
    errors = project.load("errors.json")["errors"]
    assert len(errors) == 50
    assert errors[-1]["id"] == new_id
    assert first_id not in {e["id"] for e in errors}
    assert errors[0]["description"] == "error 1"


def test_third_error_of_a_category_flags_a_pattern(project, monkeypatch):
    for i, stamp in enumerate(["2026-02-04T10:00:00Z", "2026-02-04T11:00:00Z"]):
        monkeypatch.setenv("AETHER_NOW", stamp)
        project.run("error-add", "import", "high", f"missing module {i}")
    assert project.load("errors.json")["flagged_patterns"] == []
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T12:00:00Z")
    project.run("error-add", "IMPORT", "low", "missing\nmodule 3")
    assert project.load("errors.json")["flagged_patterns"] == [
        {
            "category": "import",
            "count": 3,
            "first_seen": "2026-02-04T10:00:00Z",
            "last_seen": "2026-02-04T12:00:00Z",
            "flagged_at": "2026-02-04T12:00:00Z",
            "description": "recurring import errors; flagged on: missing module 3",
        }
    ]
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T13:00:00Z")
    project.run("error-add", "import", "low", "again")
    (pattern,) = project.load("errors.json")["flagged_patterns"]
    assert (pattern["count"], pattern["last_seen"], pattern["flagged_at"]) == (4, "2026-02-04T13:00:00Z", "2026-02-04T12:00:00Z")


def test_pattern_check_and_summary(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    assert project.run("error-pattern-check").json == []
    assert project.run("error-summary").json == {"total": 0, "by_category": {}, "by_severity": {}}
    for category, severity in [("runtime", "high"), ("runtime", "low"), ("syntax", "low"), ("runtime", "critical"), ("syntax", "LOW")]:
        project.run("error-add", category, severity, "something failed")
    assert project.run("error-pattern-check").json == [
        {
            "category": "runtime",
            "count": 3,
            "first_seen": "2026-02-04T10:00:00Z",
            "last_seen": "2026-02-04T10:00:00Z",
        }
    ]
    assert project.run("error-summary").json == {
        "total": 5,
        "by_category": {"runtime": 3, "syntax": 2},
        "by_severity": {"critical": 1, "high": 1, "low": 3},
    }


def test_library_append_clips_long_text_for_other_commands():
    data = {"errors": [], "flagged_patterns": []}
    err = error_log.append(data, "runtime", "Critical", "x" * 10000, phase=1, task_id="1.1")
    assert len(err["description"]) == error_log.MAX_DESCRIPTION_LENGTH
    assert err["description"].endswith("…") and err["severity"] == "critical"
    with pytest.raises(Exception) as exc:
        error_log.append(data, "runtime", "severe", "x")
    assert exc.value.code == "invalid_severity"
    assert error_log.patterns(data) == []


def test_error_add_via_launcher_subprocess(project):
    res = project.sh("error-add", "runtime", "low", "-", input="from stdin ✓")
    assert ID.match(res.json)
    assert project.load("errors.json")["errors"][0]["description"] == "from stdin ✓"
