import re

import pytest

from aether.state import events

# ---------------------------------------------------------------- events.json


def test_event_add_returns_the_event(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    event = project.run("event-add", "phase_started", "queen", "Phase 1 started").json
    assert re.match(r"^evt_1770199200_[0-9a-f]{4}$", event["id"])
    assert event == {
        "id": event["id"],
        "type": "phase_started",
        "source": "queen",
        "content": "Phase 1 started",
        "timestamp": "2026-02-04T10:00:00Z",
    }
    data = project.load("events.json")
    assert data["version"] == 1 and data["events"] == [event]


def test_event_content_round_trips_through_stdin(project):
    text = "line 1\nline \"2\" 'single' $HOME `x` ✓ 🐜\n"
    event = project.run("event-add", "note", "builder", "-", input=text).json
    assert event["content"] == text
    assert project.load("events.json")["events"][0]["content"] == text


def test_keeps_the_newest_100(project):
    data = {"events": []}
    for i in range(100):
        events.append(data, "tick", "test", f"event {i}")
    project.write("events.json", data)
    oldest = data["events"][0]["id"]
    new = project.run("event-add", "tick", "test", "event 100").json
    stored = project.load("events.json")["events"]
    assert len(stored) == 100
    assert stored[-1] == new and stored[0]["content"] == "event 1"
    assert oldest not in {e["id"] for e in stored}


def test_one_megabyte_on_stdin_is_refused_and_nothing_written(project):
    project.run("event-add", "tick", "test", "first")
    before = project.file("events.json").read_bytes()
    err = project.run("event-add", "dump", "builder", "-", input="x" * (1024 * 1024)).error
    assert err["code"] == "content_too_long" and "4000" in err["error"]
    assert project.file("events.json").read_bytes() == before


@pytest.mark.parametrize(
    "args,code",
    [
        (("", "queen", "c"), "invalid_argument"),
        (("two words", "queen", "c"), "invalid_argument"),
        (("type", "  ", "c"), "invalid_argument"),
        (("type", "line\nbreak", "c"), "invalid_argument"),
        (("type", "queen", " \n "), "invalid_content"),
        (("type", "queen"), "invalid_argument"),
    ],
)
def test_event_add_bad_input(project, args, code):
    assert project.run("event-add", *args).error["code"] == code
    assert not project.file("events.json").exists()


def test_library_append_clips_content():
    data = {"events": []}
    event = events.append(data, "big", "queen", "y" * 5000)
    assert len(event["content"]) == events.MAX_EVENT_CONTENT and event["content"].endswith("…")


# ---------------------------------------------------------------- activity.log


def log_text(project):
    return project.file("activity.log").read_text(encoding="utf-8")


def test_colony_init_creates_an_empty_activity_log(project):
    project.run("colony-init", "build the thing")
    assert log_text(project) == ""
    assert project.run("activity-log-read").json == ""


def test_activity_log_line_format(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:11:12Z")
    assert project.run("activity-log", "spawn", "queen", "builder for wave 1").json == "logged"
    assert project.run("activity-log", "COMPLETE", "builder-ant", "-", input="done:\nfirst line\r\n  second line\t(tab)\n").json == "logged"
    assert log_text(project) == (
        "[10:11:12] SPAWN queen: builder for wave 1\n[10:11:12] COMPLETE builder-ant: done: ⏎ first line ⏎ second line (tab)\n"
    )


def test_activity_log_clips_a_huge_description(project):
    project.run("activity-log", "NOTE", "scout", "z" * 50000).json
    (line,) = log_text(project).splitlines()
    assert len(line) < 1100 and line.endswith("…")


@pytest.mark.parametrize(
    "args",
    [
        ("", "queen", "x"),
        ("TWO WORDS", "queen", "x"),
        ("SPAWN", "", "x"),
        ("SPAWN", "a:b", "x"),
        ("SPAWN", "two\nlines", "x"),
        ("SPAWN", "queen", "  \n "),
    ],
)
def test_activity_log_bad_input(project, args):
    assert project.run("activity-log", *args).error["code"] == "invalid_argument"
    assert not project.file("activity.log").exists()


def test_activity_log_is_off_in_lightweight_mode(project):
    project.run("colony-init", "tiny script", "--mode", "LIGHTWEIGHT")
    assert project.run("activity-log", "SPAWN", "queen", "x").json == "skipped"
    assert project.run("activity-log-init", 1).json["skipped"] is True
    assert log_text(project) == ""


def test_activity_log_init_archives_without_overwriting(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    first = project.run("activity-log-init", 1, "Setup").json
    assert first == {"archived": False, "archive": None, "header": "# Phase 1: Setup -- 2026-02-04T10:00:00Z"}
    project.run("activity-log", "SPAWN", "queen", "one")
    second = project.run("activity-log-init", 2).json
    assert second["archived"] is True
    archive = project.file("activity-phase-2.log")
    assert second["archive"] == str(archive)
    assert archive.read_text(encoding="utf-8") == ("# Phase 1: Setup -- 2026-02-04T10:00:00Z\n[10:00:00] SPAWN queen: one\n")
    # a retry of the same phase keeps the first archive and adds a suffix
    third = project.run("activity-log-init", 2, "Build\nAPI").json
    assert third["archive"] == str(project.file("activity-phase-2-2.log"))
    assert archive.read_text(encoding="utf-8").count("\n") == 2
    # the combined log is never truncated
    assert log_text(project) == (
        "# Phase 1: Setup -- 2026-02-04T10:00:00Z\n"
        "[10:00:00] SPAWN queen: one\n\n"
        "# Phase 2: unnamed -- 2026-02-04T10:00:00Z\n\n"
        "# Phase 2: Build ⏎ API -- 2026-02-04T10:00:00Z\n"
    )


@pytest.mark.parametrize("bad", ["x", "-1", "1.5"])
def test_activity_log_init_bad_phase(project, bad):
    err = project.run("activity-log-init", bad).error
    assert err["code"] in ("invalid_argument", "usage_error")
    assert not project.file("activity.log").exists()


def test_activity_log_read_filters_by_caste_field(project):
    project.run("activity-log-init", 1, "Build")
    for i in range(25):
        project.run("activity-log", "WORK", "builder", f"task {i}")
    project.run("activity-log", "SPAWN", "queen", "a builder for the watcher")  # names builder in text only
    project.run("activity-log", "DONE", "Hammer-42 (Builder)", "named worker")
    project.run("activity-log", "DONE", "builders", "not a whole-word match")
    whole = project.run("activity-log-read").json
    assert whole == log_text(project)
    lines = project.run("activity-log-read", "BUILDER").json.splitlines()
    assert len(lines) == 20
    assert lines[0].endswith("builder: task 6") and lines[-1].endswith("(Builder): named worker")
    assert all("queen" not in line and "builders" not in line for line in lines)
    assert project.run("activity-log-read", "architect").json == ""


def test_activity_log_read_without_a_log(project):
    assert project.run("activity-log-read").json == ""
    assert project.run("activity-log-read", "builder").json == ""


def test_activity_log_library_helper(project, monkeypatch):
    from aether.core import paths

    monkeypatch.chdir(project.root)
    paths.data_dir.cache_clear()
    paths.project_root.cache_clear()
    assert events.activity_log("spawn", "queen", "from the library", mode="STANDARD") is True
    assert events.activity_log("spawn", "queen", "skipped", mode="LIGHTWEIGHT") is False
    assert log_text(project).count("\n") == 1 and "SPAWN queen: from the library" in log_text(project)


def test_parallel_appends_keep_one_entry_per_line(project):
    import subprocess

    from conftest import LAUNCHER

    project.data.mkdir(parents=True)
    procs = [
        subprocess.Popen(
            [str(LAUNCHER), "activity-log", "WORK", f"builder-{i}", "ünïcode " * 100],
            cwd=project.root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(8)
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    lines = log_text(project).splitlines()
    assert sorted(line.split(" ")[2] for line in lines) == [f"builder-{i}:" for i in range(8)]
    assert all(line.endswith("ünïcode") for line in lines)
