"""colony-pause / colony-resume: a handoff that lets a new session resume where the last stopped."""

import json

import pytest

NOW = "2026-02-04T10:00:00Z"
LATER = "2026-02-04T11:30:00Z"

PLAN = {
    "phases": [
        {
            "id": 1,
            "name": "Foundation",
            "description": "skeleton",
            "tasks": [
                {"id": "1.1", "description": "package", "depends_on": []},
                {"id": "1.2", "description": "model", "depends_on": ["1.1"]},
                {"id": "1.3", "description": "tests", "depends_on": []},
            ],
            "success_criteria": ["pytest runs green"],
        },
        {
            "id": 2,
            "name": "API",
            "description": "endpoints",
            "tasks": [{"id": "2.1", "description": "routes", "depends_on": []}],
            "success_criteria": ["the API answers"],
        },
    ]
}


@pytest.fixture
def colony(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", NOW)
    project.run("colony-init", "Build a todo API with tests").json
    return project


def building(project):
    """A colony in the middle of building phase 1: two workers planned in one wave."""
    project.run("plan-load", "-", input=json.dumps(PLAN)).json
    project.run("build-start", "1").json
    plan = {
        "workers": [
            {"id": "a", "caste": "builder", "tasks": ["1.1", "1.2"], "writes": ["src/a.py"]},
            {"id": "b", "caste": "builder", "tasks": ["1.3"], "writes": ["tests/t.py"]},
        ]
    }
    project.run("plan-waves", "-", input=json.dumps(plan)).json
    return project


def test_pause_without_a_colony_is_a_clear_error_and_writes_nothing(project):
    err = project.run("colony-pause").error
    assert err["code"] == "no_colony" and "/ant:init" in err["error"]
    assert project.run("colony-resume").error["code"] == "no_colony"
    assert not project.file("handoff.json").exists()


def test_pause_saves_the_snapshot_note_and_event(colony):
    colony.run("pheromone-emit", "FOCUS", "auth endpoints before anything else").json
    note = 'The user wants SQLite — "not Postgres"; it\'s $HOME `x`\nsecond line ünïcødé 🐜'
    out = colony.run("colony-pause", "--note", "-", input=note + "\n").json

    saved = colony.load("handoff.json")
    assert saved["version"] == 1
    assert saved["paused_at"] == NOW and saved["resumed_at"] is None
    assert saved["note"] == note  # exact, trailing newline trimmed
    assert saved["session_id"] == colony.load("COLONY_STATE.json")["session_id"] == out["session_id"]
    snap = saved["snapshot"]
    assert snap == out["snapshot"]
    assert (snap["goal"], snap["state"], snap["mode"], snap["current_phase"]) == ("Build a todo API with tests", "READY", "STANDARD", 0)
    assert [s["type"] for s in snap["signals"]] == ["INIT", "FOCUS"]  # strongest first
    assert snap["build"] is None and snap["phase"] is None
    assert snap["next"]["slash"] == "/ant:plan"
    assert out["file"] == str(colony.file("handoff.json"))
    events = colony.load("events.json")["events"]
    assert events[-1]["type"] == "colony_paused" and events[-1]["source"] == "queen"
    assert "second line ünïcødé 🐜" in out["text"] and "/ant:resume-colony" in out["text"]


def test_pause_mid_build_records_the_running_build_and_the_resume_command(colony):
    building(colony)
    colony.run("error-add", "import", "high", "cannot import bcrypt").json
    out = colony.run("colony-pause", "--text")
    assert out.code == 0 and not out.stdout.startswith("{")
    text = out.stdout
    assert "EXECUTING" in text and "phase 1 of 2: Foundation" in text
    assert "Build running: phase 1 · 1 waves · workers: 2 planned · open tasks: 1.1, 1.2, 1.3" in text
    assert "[high] import" in text
    assert "aether next --build 1" in text

    snap = colony.load("handoff.json")["snapshot"]
    assert snap["build"] == {"phase": 1, "name": "Foundation", "open_tasks": ["1.1", "1.2", "1.3"], "waves": 1, "workers": {"planned": 2}}
    assert snap["phase"] == {
        "id": 1,
        "name": "Foundation",
        "status": "in_progress",
        "tasks": {"total": 3, "pending": 3, "in_progress": 0, "completed": 0, "failed": 0, "skipped": 0},
    }
    assert snap["open_errors"]["count"] == 1
    assert snap["open_errors"]["newest"][0]["description"] == "cannot import bcrypt"
    assert snap["next"] == {"slash": "/ant:build 1", "command": "aether next --build 1", "reason": snap["next"]["reason"]}


def test_resume_reports_the_note_what_changed_and_the_live_next_step(colony, monkeypatch):
    building(colony)
    colony.run("colony-pause", "--note", "wave 1 was about to start").json
    monkeypatch.setenv("AETHER_NOW", LATER)
    colony.run("build-abort", "1", "--reason", "user stopped it").json  # the state moves on

    out = colony.run("colony-resume").json
    assert out["paused"] is True and out["stale"] is False
    assert out["paused_at"] == NOW and out["resumed_at"] == LATER
    assert out["note"] == "wave 1 was about to start"
    assert out["handoff"]["state"] == "EXECUTING" and out["now"]["state"] == "READY"
    changed = {c["field"]: (c["before"], c["now"]) for c in out["changes"]}
    assert changed["state"] == ("EXECUTING", "READY")
    assert changed["phase_status"] == ("in_progress", "failed")
    assert out["next"] == out["now"]["next"]
    assert out["next"]["command"] == "aether next --build 1"  # from the state now
    assert "Since the pause: state EXECUTING → READY" in out["text"]
    assert "wave 1 was about to start" in out["text"]
    assert colony.load("handoff.json")["resumed_at"] == LATER
    assert colony.load("events.json")["events"][-1]["type"] == "colony_resumed"

    again = colony.run("colony-resume", "--text").stdout
    assert f"resumed once already, {LATER.replace('T', ' ').replace('Z', ' UTC')}" in again


def test_resume_without_a_handoff_shows_the_state_and_writes_nothing(colony):
    out = colony.run("colony-resume").json
    assert (out["paused"], out["stale"], out["handoff"], out["changes"]) == (False, False, None, [])
    assert "no handoff was saved" in out["text"]
    assert out["next"]["slash"] == "/ant:plan"
    assert not colony.file("handoff.json").exists()
    assert colony.load("events.json")["events"][-1]["type"] == "colony_initialized"


def test_a_handoff_of_an_earlier_colony_is_stale_and_ignored(colony):
    colony.run("colony-pause", "--note", "old colony's note").json
    colony.run("colony-init", "A different goal entirely", "--force").json
    out = colony.run("colony-resume").json
    assert out["stale"] is True and out["paused"] is False and out["note"] is None
    assert "earlier colony" in out["text"] and "old colony's note" not in out["text"]
    assert colony.load("handoff.json")["resumed_at"] is None


def test_pause_replaces_the_previous_handoff(colony, monkeypatch):
    colony.run("colony-pause", "--note", "first").json
    monkeypatch.setenv("AETHER_NOW", LATER)
    colony.run("colony-pause").json
    saved = colony.load("handoff.json")
    assert saved["paused_at"] == LATER and saved["note"] is None


@pytest.mark.parametrize("note", ["", "   \n\t"])
def test_a_blank_note_is_no_note(colony, note):
    out = colony.run("colony-pause", "--note", "-", input=note).json
    assert out["note"] is None and "Note for the next session" not in out["text"]


def test_an_oversized_note_is_refused_and_nothing_is_written(colony):
    from aether.colony.handoff import MAX_NOTE_LENGTH

    err = colony.run("colony-pause", "--note", "-", input="x" * (MAX_NOTE_LENGTH + 1)).error
    assert err["code"] == "content_too_long" and str(MAX_NOTE_LENGTH) in err["error"]
    assert not colony.file("handoff.json").exists()
    assert colony.load("events.json")["events"][-1]["type"] == "colony_initialized"


def test_invalid_utf8_note_is_refused(colony):
    err = colony.run("colony-pause", "--note", "-", input=b"\xff\xfe bad").error
    assert err["code"] == "invalid_utf8"
    assert not colony.file("handoff.json").exists()


def test_a_corrupt_handoff_is_never_overwritten(colony):
    colony.write("handoff.json", '{"paused_at": 5, "snapshot": []}')
    err = colony.run("colony-pause").error
    assert err["code"] == "state_corrupt" and "repair or remove the file" in err["error"]
    assert colony.run("colony-resume").error["code"] == "state_corrupt"
    assert colony.file("handoff.json").read_text() == '{"paused_at": 5, "snapshot": []}'


def test_the_handoff_is_a_validated_state_file(colony):
    colony.run("colony-pause").json
    report = colony.run("validate-state", "handoff").json
    assert report["pass"] is True and report["file"] == "handoff.json"
    every = colony.run("validate-state", "all").json
    assert "handoff.json" in [f["file"] for f in every["files"]]


def test_pause_and_resume_through_the_launcher(colony):
    """The way the Queen calls it: a quoted heredoc through bin/aether, --text output."""
    note = "line one\n'single' and \"double\" quotes, $(not run)"
    out = colony.sh("colony-pause", "--text", "--note", "-", input=note, env={"AETHER_NOW": NOW})
    assert out.code == 0 and out.stderr == ""
    assert "$(not run)" in out.stdout
    back = colony.sh("colony-resume", "--text", env={"AETHER_NOW": LATER})
    assert back.code == 0 and "COLONY RESUMED" in back.stdout and "$(not run)" in back.stdout
