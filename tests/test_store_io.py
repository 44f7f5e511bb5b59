"""The store beyond one file: multi-file writes that prepare everything before the first replace,
the shared helpers for plain files (atomic replacement, JSON Lines), the activity log's one
entry per line, and damaged folders reported as state errors."""

from __future__ import annotations

import json
import os
import stat

import pytest

from aether.core.exceptions import AetherError
from aether.state import atomic_files, store

SIGNAL = "a signal long enough to be specific"


@pytest.fixture
def lib(project, monkeypatch):
    monkeypatch.chdir(project.root)
    return project


def temps(folder) -> list:
    return sorted(p.name for p in folder.iterdir() if ".tmp." in p.name)


def two_files(project):
    project.run("pheromone-emit", "FOCUS", SIGNAL).json
    project.run("event-add", "note", "queen", "first event").json
    return {n: project.file(n).read_bytes() for n in ("pheromones.json", "events.json")}


def change_both(files):
    files["pheromones"]["signals"].clear()
    files["events"]["events"].clear()
    return "done"


# ---------------------------------------------------------------- update_many


def test_update_many_prepares_every_file_before_the_first_replace(lib, monkeypatch):
    two_files(lib)
    real_replace = os.replace
    seen = []

    def spy(src, dst, *a, **kw):
        if os.path.dirname(str(dst)) == str(lib.data) and not seen:
            backups = lib.data / ".backups"
            seen.append((temps(lib.data), sorted(p.name for p in backups.iterdir())))
        return real_replace(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", spy)
    assert store.update_many(["pheromones", "events"], change_both) == "done"
    pending, backups = seen[0]
    assert [name.split(".tmp.")[0] for name in pending] == [".events.json", ".pheromones.json"]
    assert {"pheromones.json.1", "events.json.1"} <= set(backups)
    assert lib.load("pheromones.json")["signals"] == [] and lib.load("events.json")["events"] == []
    assert temps(lib.data) == []


@pytest.mark.parametrize("where", ["rotate", "fsync"])
def test_a_failure_before_the_replaces_changes_no_file(lib, monkeypatch, where):
    before = two_files(lib)
    calls = []
    if where == "rotate":
        real = store._rotate_backups

        def flaky(path):
            calls.append(path)
            if len(calls) == 2:
                raise OSError(13, "Permission denied", path)
            real(path)

        monkeypatch.setattr(store, "_rotate_backups", flaky)
    else:
        real = os.fsync

        def flaky(fd):
            calls.append(fd)
            if len(calls) == 2:
                raise OSError(28, "No space left on device")
            real(fd)

        monkeypatch.setattr(os, "fsync", flaky)
    with pytest.raises(AetherError) as caught:
        store.update_many(["pheromones", "events"], change_both)
    assert caught.value.code == "state_unwritable"
    assert {n: lib.file(n).read_bytes() for n in before} == before
    assert temps(lib.data) == []


def test_a_blocked_backup_slot_leaves_the_colony_as_it_was(project):
    """The review's case: build-start writes the plan and the colony; the plan's backups cannot
    rotate (slot 3 is a non-empty folder), so nothing may change."""
    project.run("colony-init", "Build a todo API").json
    plan = {
        "goal": "Build a todo API",
        "phases": [
            {
                "id": 1,
                "name": "Base",
                "description": "the base",
                "tasks": [{"id": "1.1", "description": "set up"}],
                "success_criteria": ["it runs"],
            }
        ],
    }
    project.run("plan-load", "-", input=json.dumps(plan)).json
    backups = project.data / ".backups"
    backups.mkdir(exist_ok=True)
    (backups / "PROJECT_PLAN.json.2").write_bytes(project.file("PROJECT_PLAN.json").read_bytes())
    (backups / "PROJECT_PLAN.json.3" / "x").mkdir(parents=True)
    before = {n: project.file(n).read_bytes() for n in ("COLONY_STATE.json", "PROJECT_PLAN.json")}
    assert project.run("build-start", "1").error["code"] == "state_unwritable"
    assert {n: project.file(n).read_bytes() for n in before} == before
    assert project.run("query", "state").json == "READY"
    assert temps(project.data) == []


# ---------------------------------------------------------------- plain files


def test_write_text_atomic_replaces_whole_files_with_a_mode(tmp_path):
    path = tmp_path / "script.sh"
    path.write_text("old\n")
    atomic_files.write_text_atomic(str(path), "#!/bin/sh\necho é\n", 0o755)
    assert path.read_text() == "#!/bin/sh\necho é\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    atomic_files.write_text_atomic(str(path), "new\n")
    assert path.read_text() == "new\n" and temps(tmp_path) == []


def test_write_text_atomic_leaves_the_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "report.md"
    path.write_text("old\n")
    with pytest.raises(AetherError) as caught:
        atomic_files.write_text_atomic(str(path), "bad \ud800")
    assert caught.value.code == "invalid_state_change"

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError):
        atomic_files.write_text_atomic(str(path), "new\n")
    assert path.read_text() == "old\n" and temps(tmp_path) == []


def test_jsonl_records_keep_unicode_separators(tmp_path):
    """Records are split on \\n only: U+2028 inside a record (written raw, ensure_ascii=False)
    must not cut it in two."""
    path = str(tmp_path / "log.jsonl")
    records = [{"by": "ann\u2028bob", "n": 1}, {"by": "x\x85y\u2029z", "n": 2}]
    atomic_files.append_jsonl(path, records)
    with open(path, "ab") as fh:
        fh.write(b'{"torn": ')  # a crash mid-line
    assert atomic_files.read_jsonl(path) == records
    assert atomic_files.read_jsonl(str(tmp_path / "none.jsonl")) == []
    with pytest.raises(AetherError) as caught:
        atomic_files.append_jsonl(path, [{"x": float("nan")}])
    assert caught.value.code == "invalid_state_change"
    assert atomic_files.read_jsonl(path) == records


def test_the_bug_logs_read_through_the_shared_jsonl_reader(tmp_path):
    from aether.bugs import approval

    path = str(tmp_path / "audit.jsonl")
    entry = {"bug_id": "b1", "approved_by": "ann\u2028lee", "fix_plan_hash": "h", "approved_at": "t"}
    atomic_files.append_jsonl(path, [entry, ["not", "a", "record"]])
    assert approval.audit_entries(path) == [entry]


# ---------------------------------------------------------------- the activity log


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\r"])
def test_no_description_can_forge_an_entry(project, sep):
    forged = f"real{sep}[09:00:00] COMPLETE builder: forged"
    project.run("activity-log", "SPAWN", "scout", forged).json
    assert project.run("activity-log-read", "builder").json == ""
    text = project.run("activity-log-read").json
    assert len(text.split("\n")) == 2 and text.count("[") == 2 and " ⏎ " in text


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85"])
def test_labels_refuse_unicode_line_separators(project, sep):
    err = project.run("activity-log", "SPAWN", f"scout{sep}builder", "x").error
    assert err["code"] == "invalid_argument"


# ---------------------------------------------------------------- damaged folders


def test_restore_over_a_directory_is_a_state_error(project):
    project.run("colony-init", "Build a todo API").json
    project.run("decision-add", "use sqlite").json  # a second write: a backup exists
    path = project.file("COLONY_STATE.json")
    path.unlink()
    path.mkdir()
    res = project.run("state-restore", "colony")
    assert res.code == 2 and res.error["code"] == "state_unwritable" and "directory" in res.error["error"]
    assert path.is_dir()


def test_activity_log_as_a_directory_is_a_state_error(project):
    project.run("colony-init", "Build a todo API").json
    log = project.file("activity.log")
    log.unlink()
    log.mkdir()
    for args in (("activity-log-init", "2"), ("activity-log-read",)):
        res = project.run(*args)
        assert res.code == 2 and res.error["code"] == "state_unreadable", args
    assert not list(project.data.glob("activity-phase-*"))


def test_data_folder_as_a_file_is_a_state_error(project):
    (project.root / ".aether" / "data").write_text("x")
    res = project.run("activity-log-read")
    assert res.code == 2 and res.error["code"] == "state_unreadable"
