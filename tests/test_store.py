"""The store's guarantees: atomic replace, backups, stale temp files, corrupt and too-new files,
restore, locks (timeout, a holder killed by SIGKILL) and unwritable folders."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import LAUNCHER

from aether.core.exceptions import AetherError
from aether.state import atomic_files, schemas, store

PY = sys.executable


def emit(project, text="a signal long enough to be specific"):
    return project.run("pheromone-emit", "FOCUS", text).json


def signal_count(project) -> int:
    return len(project.load("pheromones.json")["signals"])


def backups(project, name="pheromones.json"):
    return [project.data / ".backups" / f"{name}.{n}" for n in (1, 2, 3)]


def temp_files(project):
    return sorted(p.name for p in project.data.iterdir() if ".tmp." in p.name)


@pytest.fixture
def lib(project, monkeypatch):
    """Use the library directly inside the fixture project."""
    monkeypatch.chdir(project.root)
    return project


# ---------------------------------------------------------------- atomic replace


def test_write_goes_through_a_complete_temp_file_in_the_same_folder(lib, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst, *a, **kw):
        if str(dst).endswith("pheromones.json"):
            with open(src, "rb") as fh:
                seen.append((os.path.dirname(src), os.path.dirname(dst), json.loads(fh.read())))
        return real_replace(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", spy)
    store.update(
        "pheromones",
        lambda d: d["signals"].append(
            {"id": "s1", "type": "FOCUS", "content": "x", "strength": 0.7, "half_life_seconds": 3600, "created_at": "2026-01-01T00:00:00Z"}
        ),
    )
    assert len(seen) == 1
    src_dir, dst_dir, content = seen[0]
    assert src_dir == dst_dir == str(lib.data)
    assert content == lib.load("pheromones.json")  # the temp file was whole before the swap
    assert temp_files(lib) == []


def test_failed_write_leaves_the_old_file_and_no_temp(lib, monkeypatch):
    emit(lib, "first signal, which must survive")
    before = lib.file("pheromones.json").read_bytes()
    backups_before = [p.read_bytes() if p.exists() else None for p in backups(lib)]

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(AetherError) as caught:
        store.update("pheromones", lambda d: d["signals"].clear())
    assert caught.value.code == "state_unwritable" and caught.value.exit_code == 2
    assert "No space left" in caught.value.message
    assert lib.file("pheromones.json").read_bytes() == before
    assert [p.read_bytes() if p.exists() else None for p in backups(lib)] == backups_before
    assert temp_files(lib) == []


def test_readers_never_see_a_partial_file(project):
    """A writer process rewrites a large file over and over; every read parses."""
    big = "ü" * 1900
    for _ in range(30):
        emit(project, big)
    writer = subprocess.Popen(
        ["bash", "-c", f'for i in $(seq 15); do "$0" pheromone-emit FOCUS "{big} $i" >/dev/null || exit 1; done', str(LAUNCHER)],
        cwd=project.root,
    )
    reads = 0
    try:
        while writer.poll() is None:
            data = json.loads(project.file("pheromones.json").read_bytes())
            assert not schemas.FILES["pheromones"].validate(data)
            reads += 1
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0
    assert reads > 0
    assert signal_count(project) == 45


def test_data_is_utf8_json_with_a_version(project):
    emit(project, 'ünïcødé 🐜 and "quotes" and \\ backslashes')
    raw = project.file("pheromones.json").read_bytes()
    assert "🐜".encode() in raw  # ensure_ascii=False
    assert json.loads(raw)["version"] == schemas.FILES["pheromones"].version


# ---------------------------------------------------------------- backups


def test_three_hard_link_backups_rotate(project):
    inodes = []
    for n in range(1, 6):
        emit(project, f"signal number {n} for the rotation test")
        inodes.append(project.file("pheromones.json").stat().st_ino)
    slots = backups(project)
    # backup k holds the version before the last k-1 writes: 4, 3 and 2 signals
    assert [len(json.loads(p.read_text())["signals"]) for p in slots] == [4, 3, 2]
    # they are the very files that were replaced (hard links, no copies)
    assert [p.stat().st_ino for p in slots] == [inodes[3], inodes[2], inodes[1]]
    assert all(p.stat().st_nlink == 1 for p in slots)
    assert sorted(p.name for p in (project.data / ".backups").iterdir()) == [p.name for p in slots]


def test_first_write_makes_no_backup(project):
    emit(project)
    assert not any(p.exists() for p in backups(project))


def test_stale_temp_files_of_a_dead_writer_are_cleaned(project):
    emit(project)
    stale = project.data / ".pheromones.json.tmp.999999.abcdef"
    stale.write_text('{"signals": [')
    other = project.data / ".events.json.tmp.999999.abcdef"  # another file's: not ours to touch
    other.write_text("{")
    emit(project, "the next write cleans up after the dead one")
    assert not stale.exists()
    assert other.exists()
    assert signal_count(project) == 2


# ---------------------------------------------------------------- corrupt files

CORRUPTIONS = {
    "truncated": '{"signals": [{"id": "a"',
    "not_json": "this is not json at all",
    "empty": "",
    "array": "[]",
    "wrong_type": '{"signals": "many"}',
    "bad_record": '{"signals": [{"id": 1, "type": "FOCUS"}]}',
    "invalid_utf8": b'{"signals": [], "x": "\xff\xfe"}',
}


def _corrupt(project, how):
    path = project.file("pheromones.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    content = CORRUPTIONS[how]
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path.read_bytes()


@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_corrupt_file_is_never_overwritten(project, how):
    for n in range(2):
        emit(project, f"valid signal {n} before the damage")
    newest_valid = backups(project)[0]
    bad = _corrupt(project, how)
    writes = [
        ("pheromone-emit", "FOCUS", "a signal that must not land"),
        ("pheromone-cleanup",),
        ("colony-init", "a new goal"),
        ("colony-init", "--force", "a new goal"),
    ]
    for args in writes:
        result = project.run(*args)
        err = result.error
        assert (result.code, err["code"]) == (2, "state_corrupt"), (args, err)
        assert str(newest_valid) in err["error"] and "state-restore" in err["error"]
        assert err["backup"] == str(newest_valid)
    assert project.run("pheromone-batch").error["code"] == "state_corrupt"  # reads refuse too
    assert project.file("pheromones.json").read_bytes() == bad
    assert not project.file("COLONY_STATE.json").exists()  # colony-init wrote nothing at all


PLAN = {
    "goal": "g",
    "phases": [
        {
            "id": 1,
            "name": "One",
            "description": "the first phase",
            "tasks": [{"id": "1.1", "description": "a task", "depends_on": []}],
            "success_criteria": ["it works"],
        }
    ],
}

# A write command per state file: (file, where it lives, command to run twice, setup commands)
WRITERS = [
    ("events.json", "data", ("event-add", "note", "queen", "something happened"), ()),
    ("errors.json", "data", ("error-add", "runtime", "high", "it broke"), ()),
    ("memory.json", "data", ("decision-add", "use SQLite"), ()),
    ("COLONY_STATE.json", "data", ("plan-start",), ()),
    ("PROJECT_PLAN.json", "data", ("plan-load", "-"), (("plan-start",),)),
    ("learnings.json", "home", ("learning-promote", "bcrypt 12 rounds is slow", "proj-a", "1"), ()),
]


@pytest.mark.parametrize("filename,where,command,setup", WRITERS, ids=[w[0] for w in WRITERS])
def test_each_files_writer_refuses_a_corrupt_file(project, filename, where, command, setup):
    plan = json.dumps(PLAN)
    assert project.run("colony-init", "a goal for the corruption test").code == 0
    for step in setup:
        assert project.run(*step).code == 0
    folder = project.data if where == "data" else project.global_dir
    for _ in range(2):  # two writes: the first one's result becomes backup 1
        result = project.run(*command, input=plan)
        assert result.code == 0, result.stderr
        if command[0] == "plan-load":
            assert project.run("plan-start").code == 0
    path = folder / filename
    path.write_text('{"half": ')
    result = project.run(*command, input=plan)
    err = result.error
    assert (result.code, err["code"]) == (2, "state_corrupt"), err
    assert err["backup"] == str(folder / ".backups" / f"{filename}.1")
    assert err["backup"] in err["error"]
    assert path.read_text() == '{"half": '


def test_corrupt_without_backup_says_so(project):
    _corrupt(project, "not_json")
    err = project.run("pheromone-emit", "FOCUS", "a signal that must not land").error
    assert err["code"] == "state_corrupt" and err["backup"] is None
    assert "no valid backup" in err["error"]


def test_newest_valid_backup_skips_corrupt_backups(project):
    for n in range(3):
        emit(project, f"valid signal {n} before the damage")
    slots = backups(project)
    os.unlink(slots[0])
    slots[0].write_text("garbage")  # a damaged backup is passed over
    _corrupt(project, "truncated")
    err = project.run("pheromone-emit", "FOCUS", "a signal that must not land").error
    assert err["backup"] == str(slots[1])


@pytest.mark.parametrize("name", sorted(schemas.FILES))
def test_every_state_file_refuses_writes_when_corrupt(lib, name):
    spec = schemas.FILES[name]
    path = store.path_of(spec)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write('{"oops": ')
    with pytest.raises(AetherError) as caught:
        store.update(name, lambda data: data.update(version=spec.version))
    assert (caught.value.code, caught.value.exit_code) == ("state_corrupt", 2)
    with pytest.raises(AetherError):
        store.read(name)
    with open(path) as fh:
        assert fh.read() == '{"oops": '


@pytest.mark.parametrize("name", sorted(schemas.FILES))
def test_every_state_file_round_trips_its_default(lib, name):
    spec = schemas.FILES[name]
    store.update(name, lambda data: None)
    assert store.read(name) == spec.default()
    with open(store.path_of(spec), "rb") as fh:
        assert json.loads(fh.read()) == spec.default()


def test_schema_invalid_change_is_refused_and_nothing_written(lib):
    emit(lib)
    before = lib.file("pheromones.json").read_bytes()
    with pytest.raises(AetherError) as caught:
        store.update("pheromones", lambda d: d["signals"].append({"id": 5}))
    assert caught.value.code == "invalid_state_change" and caught.value.exit_code == 1
    assert lib.file("pheromones.json").read_bytes() == before


def test_update_many_is_all_or_nothing(lib):
    emit(lib)
    before = lib.file("pheromones.json").read_bytes()

    def change(files):
        files["pheromones"]["signals"].clear()
        files["events"]["events"] = "not a list"

    with pytest.raises(AetherError):
        store.update_many(["pheromones", "events"], change)
    assert lib.file("pheromones.json").read_bytes() == before
    assert not lib.file("events.json").exists()


def test_a_failing_change_writes_nothing(lib):
    emit(lib)
    before = lib.file("pheromones.json").read_bytes()

    def change(data):
        data["signals"].clear()
        raise AetherError("nope", "refused half-way")

    with pytest.raises(AetherError):
        store.update("pheromones", change)
    assert lib.file("pheromones.json").read_bytes() == before


def test_v44_file_without_version_upgrades_and_keeps_unknown_fields(lib):
    lib.write("pheromones.json", {"signals": [], "custom_field": {"kept": True}})
    store.update("pheromones", lambda d: None)
    data = lib.load("pheromones.json")
    assert data["version"] == 1 and data["custom_field"] == {"kept": True}


# ---------------------------------------------------------------- newer schema


def test_newer_schema_version_is_refused(project):
    emit(project)
    newer = {"version": 99, "signals": [], "from_the_future": True}
    project.write("pheromones.json", newer)
    before = project.file("pheromones.json").read_bytes()
    for args in (("pheromone-emit", "FOCUS", "a signal that must not land"), ("pheromone-batch",)):
        result = project.run(*args)
        err = result.error
        assert (result.code, err["code"]) == (2, "state_too_new"), err
        assert "schema version 99" in err["error"] and "upgrade Aether" in err["error"]
    assert project.file("pheromones.json").read_bytes() == before


def test_restore_refuses_to_drop_a_newer_file(lib):
    emit(lib)
    emit(lib, "second signal so a backup exists")
    lib.write("pheromones.json", {"version": 99, "signals": []})
    with pytest.raises(AetherError) as caught:
        store.restore("pheromones")
    assert caught.value.code == "state_too_new"
    assert lib.load("pheromones.json")["version"] == 99
    store.restore("pheromones", force=True)
    assert len(lib.load("pheromones.json")["signals"]) == 1


# ---------------------------------------------------------------- restore


def test_restore_brings_back_the_newest_valid_backup(lib):
    for n in range(3):
        emit(lib, f"valid signal {n} before the damage")
    expected = backups(lib)[0].read_bytes()
    bad = _corrupt(lib, "truncated")
    result = store.restore("pheromones")
    assert result["restored_from"] == str(backups(lib)[0])
    assert lib.file("pheromones.json").read_bytes() == expected
    with open(result["replaced_content_saved_as"], "rb") as fh:
        assert fh.read() == bad  # the damaged content is kept aside, not lost
    emit(lib, "writes work again after the restore")
    assert signal_count(lib) == 3
    assert temp_files(lib) == []


def test_restore_refuses_a_valid_file_unless_forced(lib):
    emit(lib)
    emit(lib, "the second signal of two")
    with pytest.raises(AetherError) as caught:
        store.restore("pheromones")
    assert (caught.value.code, caught.value.exit_code) == ("restore_refused", 1)
    assert signal_count(lib) == 2
    store.restore("pheromones", force=True)
    assert signal_count(lib) == 1


def test_restore_without_backup(lib):
    _corrupt(lib, "not_json")
    with pytest.raises(AetherError) as caught:
        store.restore("pheromones")
    assert (caught.value.code, caught.value.exit_code) == ("no_backup", 2)


def test_restore_of_a_missing_file(lib):
    emit(lib)
    emit(lib, "second signal so a backup exists")
    os.unlink(lib.file("pheromones.json"))
    result = store.restore("pheromones")
    assert result["replaced_content_saved_as"] is None
    assert signal_count(lib) == 1


def test_unknown_file_name(lib):
    with pytest.raises(AetherError) as caught:
        store.read("nonsense")
    assert caught.value.code == "unknown_file" and "pheromones" in caught.value.message


# ---------------------------------------------------------------- locks

HOLD_FLOCK = """
import fcntl, os, sys, time
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""

HOLD_IN_UPDATE = """
import sys, time
from aether.state import store
def change(data):
    print("holding", flush=True)
    time.sleep(60)
    data["signals"].clear()
store.update("pheromones", change)
"""


def _start(code, *args, cwd, expect):
    proc = subprocess.Popen([PY, "-c", code, *args], cwd=cwd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == expect
    return proc


def test_lock_timeout_is_a_clean_error(project):
    emit(project)
    before = project.file("pheromones.json").read_bytes()
    holder = _start(HOLD_FLOCK, str(project.file("pheromones.json.lock")), cwd=project.root, expect="locked")
    try:
        started = time.monotonic()
        result = project.sh("pheromone-emit", "FOCUS", "a signal that waits for the lock", env={"AETHER_LOCK_TIMEOUT": "0.3"}, timeout=20)
        elapsed = time.monotonic() - started
        err = result.error
        assert (result.code, err["code"]) == (2, "lock_timeout")
        assert "AETHER_LOCK_TIMEOUT" in err["error"] and err["file"].endswith("pheromones.json")
        assert 0.3 <= elapsed < 15
        # readers take no lock
        assert len(project.sh("pheromone-batch", env={"AETHER_LOCK_TIMEOUT": "0.3"}).json) == 1
    finally:
        holder.kill()
        holder.wait()
    assert project.file("pheromones.json").read_bytes() == before
    emit(project, "once the holder is gone, writes go through")
    assert signal_count(project) == 2


def test_writer_waits_for_a_lock_that_is_released_in_time(project):
    holder = _start(HOLD_FLOCK, str(project.file("pheromones.json.lock")), cwd=project.root, expect="locked")
    try:
        waiter = subprocess.Popen(
            [str(LAUNCHER), "pheromone-emit", "FOCUS", "a patient signal waiting"],
            cwd=project.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "AETHER_LOCK_TIMEOUT": "30"},
        )
        time.sleep(0.5)
        assert waiter.poll() is None  # still waiting
    finally:
        holder.kill()
        holder.wait()
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, err
    assert json.loads(out)["ok"] is True
    assert signal_count(project) == 1


def test_a_writer_killed_holding_the_lock_never_blocks_the_next(project):
    emit(project)
    before = project.file("pheromones.json").read_bytes()
    env = {**os.environ, "AETHER_DATA_DIR": str(project.data)}
    proc = subprocess.Popen([PY, "-c", HOLD_IN_UPDATE], cwd=project.root, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert project.file("pheromones.json").read_bytes() == before  # its change never landed
    # with a 2 s lock timeout, success proves the dead writer's lock was gone
    result = project.sh("pheromone-emit", "FOCUS", "the next writer gets through", env={"AETHER_LOCK_TIMEOUT": "2"})
    assert result.code == 0, result.stderr
    assert signal_count(project) == 2


def test_bad_lock_timeout_values_fall_back_to_the_default(lib, monkeypatch):
    for raw in ("nan", "-1", "soon", ""):
        monkeypatch.setenv("AETHER_LOCK_TIMEOUT", raw)
        assert atomic_files.lock_timeout() == atomic_files.DEFAULT_LOCK_TIMEOUT
    monkeypatch.setenv("AETHER_LOCK_TIMEOUT", "0.25")
    assert atomic_files.lock_timeout() == 0.25


def test_opposite_lock_orders_do_not_deadlock(project):
    code = """
import sys
from aether.state import store
names = sys.argv[1].split(",")
for _ in range(30):
    store.update_many(names, lambda files: None)
"""
    env = {**os.environ, "AETHER_DATA_DIR": str(project.data), "AETHER_LOCK_TIMEOUT": "20"}
    procs = [subprocess.Popen([PY, "-c", code, order], cwd=project.root, env=env) for order in ("pheromones,events", "events,pheromones")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]


# ---------------------------------------------------------------- unwritable places


def _blocked_data_dir(project, how):
    if how == "data_dir_is_a_file":
        target = project.root / "blocked"
        target.write_text("a file, not a folder")
        return target
    if how == "parent_is_a_file":
        (project.root / "afile").write_text("x")
        return project.root / "afile" / "data"
    if how == "lock_is_a_folder":
        project.data.mkdir(parents=True, exist_ok=True)
        (project.data / "pheromones.json.lock").mkdir()
        return project.data
    if how == "backups_is_a_file":
        project.data.mkdir(parents=True, exist_ok=True)
        project.write("pheromones.json", {"signals": []})
        (project.data / ".backups").write_text("x")
        return project.data
    if how == "proc":
        return "/proc/aether-cannot-live-here/data"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["data_dir_is_a_file", "parent_is_a_file", "lock_is_a_folder", "backups_is_a_file", "proc"])
def test_unwritable_data_folder_is_a_clean_error(project, how):
    data_dir = _blocked_data_dir(project, how)
    target = project.data / "pheromones.json"
    before = target.read_bytes() if target.exists() else None
    result = project.sh("pheromone-emit", "FOCUS", "a signal with nowhere to go", env={"AETHER_DATA_DIR": str(data_dir)})
    err = result.error  # one JSON line on stderr, nothing on stdout
    assert (result.code, err["code"]) == (2, "state_unwritable"), err
    assert "Traceback" not in result.stderr
    if before is not None:
        assert target.read_bytes() == before
        assert temp_files(project) == []
