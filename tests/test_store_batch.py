"""One write per state file per call: `store.batch()` (the driver's lock opens one for every step
of a run) keeps each colony file it changes locked, with its new content in memory, and writes it
once when the call ends — also when the call fails. A step whose effect outside the state files
must find its record on disk (a git command that changes the repository, a merge writing the
project's files) writes what the call changed so far first."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aether.core.exceptions import AetherError
from aether.state import checkpoints, events, store

from helpers.colony import ok, write
from helpers.drive import ASSIGNMENT, result

PY = sys.executable


@pytest.fixture
def lib(project, monkeypatch):
    monkeypatch.chdir(project.root)
    return project


@pytest.fixture
def writes(monkeypatch) -> list:
    """The files of each write, as the store makes it: [[file name, …], …]."""
    seen: list = []
    real = store._replace_all

    def spy(items):
        seen.append([os.path.basename(path) for path, _payload in items])
        return real(items)

    monkeypatch.setattr(store, "_replace_all", spy)
    return seen


def note(text: str):
    return lambda data: events.append(data, "build_aborted", "queen", text)


def said(project) -> list:
    return [e["content"] for e in project.load("events.json")["events"]]


def test_a_file_changed_three_times_in_a_batch_is_written_once_at_its_end(lib, writes):
    with store.batch():
        for n in range(3):
            store.update("events", note(f"e{n}"))
        assert [e["content"] for e in store.read("events")["events"]] == ["e0", "e1", "e2"]  # this process sees them
        assert store.exists("events")
        assert not lib.file("events.json").exists() and writes == []  # nobody else does yet
    assert writes == [["events.json"]]
    assert said(lib) == ["e0", "e1", "e2"]


def test_a_failed_call_writes_what_it_finished_and_not_the_change_that_failed(lib, writes):
    def half_then_refused(data):
        events.append(data, "build_aborted", "queen", "half")
        raise AetherError("refused", "refused half-way")

    with pytest.raises(AetherError), store.batch():
        store.update("events", note("done"))
        store.update("events", half_then_refused)
    assert said(lib) == ["done"] and writes == [["events.json"]]


def test_a_change_that_fails_validation_inside_a_batch_leaves_the_batch_as_it_was(lib):
    with store.batch():
        store.update("events", note("kept"))
        with pytest.raises(AetherError) as caught:
            store.update("events", lambda d: d.update(events="not a list"))
        assert caught.value.code == "invalid_state_change"
        store.update("events", note("after"))
    assert said(lib) == ["kept", "after"]


def test_nested_batches_are_one(lib, writes):
    with store.batch():
        store.update("events", note("outer"))
        with store.batch():
            store.update("events", note("inner"))
        assert writes == []
    assert writes == [["events.json"]] and said(lib) == ["outer", "inner"]


def test_another_process_waits_for_the_batch_and_then_sees_its_writes(lib):
    code = "from aether.state import store, events\nstore.update('events', lambda d: events.append(d, 'build_aborted', 'queen', 'other'))"
    env = {**os.environ, "AETHER_DATA_DIR": str(lib.data)}
    with store.batch():
        store.update("events", note("mine"))
        refused = subprocess.run([PY, "-c", code], cwd=lib.root, env={**env, "AETHER_LOCK_TIMEOUT": "0.3"}, capture_output=True, text=True)
        assert refused.returncode != 0 and "timed out after 0.3s waiting for the lock" in refused.stderr
    done = subprocess.run([PY, "-c", code], cwd=lib.root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert said(lib) == ["mine", "other"]


def _held_by_another(lock_path) -> bool:
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def test_a_batch_never_waits_on_a_lock_that_sorts_before_one_it_holds(lib, writes):
    """The batch holds pheromones.json; another writer holds events.json (it sorts first) and waits
    for pheromones.json. The batch, wanting events.json, writes what it has and lets go instead of
    waiting: both finish, nobody times out, and neither change is lost."""
    store.update("pheromones", lambda d: None)
    writes.clear()
    code = (
        "from aether.state import store, events\n"
        "store.update_many(['events', 'pheromones'], lambda f: events.append(f['events'], 'build_aborted', 'queen', 'other'))"
    )
    env = {**os.environ, "AETHER_DATA_DIR": str(lib.data), "AETHER_LOCK_TIMEOUT": "20"}
    started = time.monotonic()
    with store.batch():
        store.update("pheromones", lambda d: d["signals"].clear())
        other = subprocess.Popen([PY, "-c", code], cwd=lib.root, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 15
        while not _held_by_another(lib.file("events.json.lock")):
            assert other.poll() is None and time.monotonic() < deadline, "the other writer never took events.json's lock"
            time.sleep(0.01)
        store.update("events", note("mine"))
    assert other.wait(timeout=20) == 0, other.stderr.read()
    assert time.monotonic() - started < 10
    assert writes == [["pheromones.json"], ["events.json"]]  # the batch's first part went before it let go
    assert said(lib) == ["other", "mine"]


def test_a_step_waiting_for_the_write_runs_after_it(lib):
    seen = []
    with store.batch():
        store.update("events", note("mine"))
        store.when_written(lambda _: seen.append(json.loads(lib.file("events.json").read_text("utf-8"))["events"][-1]["content"]))
        assert seen == []
    assert seen == ["mine"]
    store.when_written(lambda _: seen.append("at once"))  # no batch: at once
    assert seen == ["mine", "at once"]


def test_flush_writes_the_batch_so_far(lib, writes):
    with store.batch():
        store.update("events", note("before the effect"))
        store.flush()
        assert said(lib) == ["before the effect"]
        store.update("events", note("after"))
    assert writes == [["events.json"], ["events.json"]] and said(lib) == ["before the effect", "after"]


@pytest.mark.parametrize(
    "args, env, changes",
    [
        (["rev-parse", "HEAD"], None, False),
        (["--git-dir=/x", "--work-tree=/y", "status", "--porcelain"], None, False),
        (["worktree", "list", "--porcelain"], None, False),
        (["update-ref", "refs/aether/checkpoints/x", "abc", ""], None, False),  # a new ref, recorded after it is made
        (["add", "-A"], {"GIT_INDEX_FILE": "/tmp/i"}, False),
        (["rm", "-r", "-q", "--cached", "--", ".aether"], {"GIT_INDEX_FILE": "/tmp/i"}, False),
        (["worktree", "add", "--detach", "p"], None, True),
        (["update-ref", "-d", "refs/aether/checkpoints/x"], None, True),
        (["checkout-index", "-a", "-f"], {"GIT_INDEX_FILE": "/tmp/i"}, True),
        (["add", "-A"], None, True),
        (["tag", "-a", "aether/phase-1-aborted"], None, True),
        (["reflog", "show", "--format=%H", "refs/x"], None, False),
        (["reflog", "expire", "--all"], None, True),
    ],
)
def test_git_commands_that_change_the_repository_write_the_batch_first(args, env, changes):
    assert checkpoints._changes_repository(args, env) is changes


def test_a_build_writes_each_state_file_once_per_call(drive_colony, writes):
    """`next`, each `record` of a wave: no state file written twice in one call."""
    p = drive_colony

    def call(*args, **kw):
        writes.clear()
        out = ok(p, *args, **kw)
        flat = [name for files in writes for name in files]
        assert flat and len(flat) == len(set(flat)), (args, writes)
        return out

    call("next", "--build", "1")
    call("record", "lead1", "-", input=json.dumps(ASSIGNMENT))
    action = call("next", "--build", "1", "--approve")
    nodes = p.load("COLONY_STATE.json")["spawn_tree"]["nodes"]
    for spawn in action["spawns"]:
        write(p, *nodes[spawn["id"]]["writes"])
        action = call("record", spawn["id"], "-", input=result(files_created=nodes[spawn["id"]]["writes"]))
    assert "spawns.json" in [name for files in writes for name in files]


def test_a_batch_that_lets_go_for_a_busy_lock_takes_back_every_lock_of_the_update(lib):
    """Holding events.json, the batch updates colony and events together while another process
    holds COLONY_STATE.json (it sorts first): it writes, lets go, and takes both back in order —
    events.json stays locked, so a third writer waits instead of being overwritten."""
    holder = subprocess.Popen([PY, "-c", HOLD_FOR_A_SECOND, str(lib.file("COLONY_STATE.json.lock"))], stdout=subprocess.PIPE, text=True)
    code = "from aether.state import store, events\nstore.update('events', lambda d: events.append(d, 'build_aborted', 'queen', 'other'))"
    env = {**os.environ, "AETHER_DATA_DIR": str(lib.data)}
    with store.batch():
        store.update("events", note("mine1"))
        assert holder.stdout.readline().strip() == "held"
        store.update_many(["colony", "events"], lambda f: events.append(f["events"], "build_aborted", "queen", "mine2"))
        other = subprocess.run([PY, "-c", code], cwd=lib.root, env={**env, "AETHER_LOCK_TIMEOUT": "0.5"}, capture_output=True, text=True)
        assert other.returncode != 0 and "timed out" in other.stderr  # it had to wait: events.json was locked
    holder.wait(timeout=10)
    assert said(lib) == ["mine1", "mine2"]


HOLD_FOR_A_SECOND = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(1.0)
"""


def test_long_work_inside_a_step_lets_other_writers_in(lib, writes, monkeypatch):
    monkeypatch.setattr(store, "LONG_HOLD", 0.05)
    with store.batch():
        store.update("events", note("before"))
        store.let_others_in()  # not held long yet: nothing written
        assert writes == []
        time.sleep(0.1)
        store.let_others_in()
        assert writes == [["events.json"]] and not store._BATCH.locks
        store.update("events", note("after"))
    assert said(lib) == ["before", "after"]


def test_a_step_that_fails_keeps_its_own_error_and_what_it_finished(lib):
    with pytest.raises(AetherError) as caught, store.batch():
        store.update("events", note("finished"))
        raise AetherError("its_own", "the step's own error")
    assert caught.value.code == "its_own" and said(lib) == ["finished"]


def test_the_agent_hooks_wait_for_a_steps_locks_within_their_own_timeout():
    from aether.cli import drive as cli_drive

    hooks = json.loads((Path(__file__).resolve().parents[1] / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
    timeouts = [h["timeout"] for groups in hooks.values() for g in groups for h in g["hooks"] if "agent.sh" in h["command"]]
    assert timeouts and min(timeouts) >= cli_drive.HOOK_LOCK_WAIT + 5
