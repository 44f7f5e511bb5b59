import json

import pytest

from aether.state import schemas

TARGETS = ["colony", "pheromones", "plan", "errors", "memory", "events"]


def failed(report):
    return {c["check"]: c.get("detail") for c in report["checks"] if not c["pass"]}


# ---------------------------------------------------------------- validate-state


@pytest.mark.parametrize("target", TARGETS)
def test_validate_each_file_after_init(project, target):
    project.run("colony-init", "a goal worth building")
    report = project.run("validate-state", target).json
    assert report["file"] == schemas.FILES[target].filename
    assert report["path"] == str(project.file(report["file"]))
    assert report["pass"] is True
    names = [c["check"] for c in report["checks"]]
    assert names[:5] == ["exists", "json", "object", "version", "upgrade"]
    assert all(set(c) <= {"check", "pass", "detail"} and c["pass"] for c in report["checks"])
    fields = [k for k in schemas.FILES[target].default() if k != "version"]
    assert all(field in names for field in fields)


def test_validate_all(project):
    project.run("colony-init", "a goal worth building")
    result = project.run("validate-state", "all").json
    assert result["pass"] is True
    files = [f["file"] for f in result["files"]]
    assert files == [schemas.FILES[n].filename for n in schemas.PROJECT_FILES]
    assert "PROJECT_PLAN.json" in files  # v4.4 never validated the plan


def test_validate_all_fails_when_one_file_is_damaged(project):
    project.run("colony-init", "a goal worth building")
    project.write("events.json", "[1, 2")
    result = project.run("validate-state", "all").json
    assert result["pass"] is False
    bad = [f for f in result["files"] if not f["pass"]]
    assert [f["file"] for f in bad] == ["events.json"]


def test_missing_files(project):
    colony = project.run("validate-state", "colony").json
    assert colony["pass"] is False and colony["missing"] is True
    assert "colony-init" in failed(colony)["exists"]
    errors = project.run("validate-state", "errors").json
    assert errors["pass"] is True and errors["missing"] is True
    assert project.run("validate-state", "all").json["pass"] is False


def test_a_bad_field_fails_its_own_check(project):
    project.run("colony-init", "a goal worth building")
    project.run("colony-init", "a second goal to have a backup", "--force")
    data = project.load("COLONY_STATE.json")
    data["state"] = "DANCING"
    data["current_phase"] = "one"
    project.write("COLONY_STATE.json", data)
    report = project.run("validate-state", "colony").json
    assert report["pass"] is False
    bad = failed(report)
    assert set(bad) == {"state", "current_phase"}
    assert "DANCING" in bad["state"]
    assert report["backup"] == str(project.data / ".backups" / "COLONY_STATE.json.1")
    assert "state-restore colony" in report["hint"]


@pytest.mark.parametrize(
    "content,check",
    [
        ("{not json", "json"),
        (b"\xff\xfe{}", "json"),
        ("[]", "object"),
        ('{"version": 99, "errors": [], "flagged_patterns": []}', "version"),
        ('{"version": "one", "errors": [], "flagged_patterns": []}', "version"),
        ('{"errors": {}, "flagged_patterns": []}', "errors"),
        ('{"errors": [{"id": 1}], "flagged_patterns": []}', "errors"),
    ],
)
def test_damaged_errors_file_is_a_failed_check(project, content, check):
    path = project.file("errors.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    report = project.run("validate-state", "errors").json
    assert report["pass"] is False
    assert list(failed(report)) == [check]


def test_cap_check(project):
    project.write(
        "errors.json",
        {
            "errors": [{"id": f"e{i}", "category": "c", "severity": "low", "description": "d", "timestamp": "t"} for i in range(60)],
            "flagged_patterns": [],
        },
    )
    bad = failed(project.run("validate-state", "errors").json)
    assert list(bad) == ["cap:errors"] and "60" in bad["cap:errors"] and "50" in bad["cap:errors"]


@pytest.mark.parametrize("target", ["nope", "", "COLONY"])
def test_unknown_validate_target(project, target):
    err = project.run("validate-state", target).error
    assert err["code"] == "unknown_file" and "all" in err["error"]


def test_validate_accepts_file_names_and_global_files(project):
    project.run("colony-init", "a goal worth building")
    assert project.run("validate-state", "COLONY_STATE.json").json["file"] == "COLONY_STATE.json"
    learnings = project.run("validate-state", "learnings").json
    assert learnings["missing"] is True and learnings["pass"] is True


# ---------------------------------------------------------------- query


def test_query_defaults_to_colony(project):
    project.run("colony-init", "a goal worth building")
    assert project.run("query", "state").json == "READY"
    assert project.run("query", "[goal, current_phase]").json == ["a goal worth building", 0]


def test_query_other_files(project):
    project.run("colony-init", "a goal worth building")
    project.run("pheromone-emit", "FOCUS", "the login flow and its tests")
    assert project.run("query", "signals[?type=='FOCUS'].content", "--file", "pheromones").json == ["the login flow and its tests"]
    assert project.run("query", "length(events)", "--file", "events.json").json == 1
    assert project.run("query", "nothing_here", "--file", "errors").json is None


def test_query_global_learnings_reads_v44_upgraded_and_writes_nothing(project):
    path = project.global_dir / "learnings.json"
    path.parent.mkdir(parents=True)
    raw = json.dumps(
        {
            "version": 1,
            "learnings": [
                {
                    "id": "global_1_abcd",
                    "content": "pin dependencies",
                    "source_project": "p1",
                    "source_phase": 2,
                    "tags": ["deps"],
                    "promoted_at": "2026-01-01T00:00:00Z",
                }
            ],
        }
    )
    path.write_text(raw)
    assert project.run("query", "learnings[0].[promoted, source_projects]", "--file", "learnings").json == [True, ["p1"]]
    assert path.read_text() == raw


def test_query_expression_from_stdin(project):
    project.run("colony-init", "a goal worth building")
    assert project.run("query", "-", input="goal").json == "a goal worth building"


@pytest.mark.parametrize("expr", ["bad[", "", "   ", "abs(goal)", "foo(@)"])
def test_bad_query(project, expr):
    project.run("colony-init", "a goal worth building")
    err = project.run("query", expr).error
    assert err["code"] == "invalid_query"


def test_query_unknown_file(project):
    assert project.run("query", "a", "--file", "secrets").error["code"] == "unknown_file"


# ---------------------------------------------------------------- corrupt files and state-restore

SETUP = {
    "colony": [("colony-init", "a goal worth building"), ("colony-init", "another goal entirely", "--force")],
    "errors": [("error-add", "runtime", "low", "first"), ("error-add", "runtime", "low", "second")],
    "events": [("event-add", "a", "queen", "first"), ("event-add", "b", "queen", "second")],
    "memory": [("decision-add", "first", "--phase", 1), ("decision-add", "second", "--phase", 1)],
}

READERS = [
    ("colony", ("query", "state")),
    ("colony", ("activity-log", "SPAWN", "queen", "reads the mode")),
    ("colony", ("decision-add", "reads the current phase")),
    ("errors", ("error-summary",)),
    ("errors", ("error-pattern-check",)),
    ("errors", ("error-add", "runtime", "low", "third")),
    ("errors", ("query", "errors", "--file", "errors")),
    ("events", ("event-add", "c", "queen", "third")),
    ("events", ("query", "events", "--file", "events")),
    ("memory", ("memory-compress",)),
    ("memory", ("decision-add", "third", "--phase", 1)),
    ("memory", ("learning-add", 1, "a learning")),
    ("memory", ("query", "decisions", "--file", "memory")),
]


def corrupt(project, name):
    for args in SETUP[name]:
        project.run(*args).json
    filename = schemas.FILES[name].filename
    project.write(filename, '{"truncated": ')
    return filename


@pytest.mark.parametrize("name,command", READERS)
def test_every_reader_refuses_a_corrupt_file(project, name, command):
    filename = corrupt(project, name)
    res = project.run(*command)
    err = res.error
    assert res.code == 2 and err["code"] == "state_corrupt"
    backup = str(project.data / ".backups" / f"{filename}.1")
    assert err["backup"] == backup and backup in err["error"]
    assert f"aether state-restore {name}" in err["error"]
    assert project.file(filename).read_text() == '{"truncated": '  # never overwritten


@pytest.mark.parametrize("name", sorted(SETUP))
def test_state_restore_brings_back_the_backup(project, name):
    filename = corrupt(project, name)
    restored = project.run("state-restore", name).json
    assert restored["file"] == str(project.file(filename))
    assert restored["restored_from"].endswith(f"{filename}.1")
    assert project.run("validate-state", name).json["pass"] is True
    # the damaged content was kept aside, not lost
    with open(restored["replaced_content_saved_as"]) as fh:
        assert fh.read() == '{"truncated": '
    # now the file is valid: restoring again needs --force
    res = project.run("state-restore", name)
    assert res.code == 1 and res.error["code"] == "restore_refused"
    assert project.run("state-restore", name, "--force").json["file"] == restored["file"]


def test_restored_errors_hold_the_previous_version(project):
    corrupt(project, "errors")
    project.run("state-restore", "errors")
    assert project.run("error-summary").json["total"] == 1


def test_state_restore_unknown_and_without_backup(project):
    assert project.run("state-restore", "nope").error["code"] == "unknown_file"
    project.write("events.json", "garbage")
    res = project.run("state-restore", "events")
    assert res.code == 2 and res.error["code"] == "no_backup"
