"""How the `aether` process starts (aether.startup) and how the store locks (filelock).

Start-up speed itself is measured by `make bench`, never by a timed test; these tests check that
the measures behind it change nothing a user can see.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import subprocess
import sys
import time

import pytest
from conftest import LAUNCHER, REPO

from aether import startup
from aether.core.exceptions import AetherError
from aether.state import store

PY = sys.executable

# Runs the launcher's entry point and reports, at exit, which lazy modules never ran and how
# many garbage collections happened.
PROBE = """
import atexit, gc, json, sys
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
def report():
    from aether.startup import LAZY_MODULES
    waiting = [n for n in LAZY_MODULES if type(sys.modules.get(n)).__name__ == "Awaiting"]
    sys.stderr.write("\\nPROBE " + json.dumps({"waiting": waiting, "gc": collections,
                                              "threshold": gc.get_threshold()[0]}) + "\\n")
atexit.register(report)
from aether.startup import main
main()
"""


def probe(project, *args):
    proc = subprocess.run([PY, "-I", "-c", PROBE, *map(str, args)], cwd=project.root, capture_output=True, text=True, timeout=60)
    before, _, report = proc.stderr.rpartition("\nPROBE ")
    return proc, json.loads(report), before


def in_fresh_python(code: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([PY, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


# ---------------------------------------------------------------- the launcher's entry point


def test_the_launcher_runs_the_startup_entry_point(tmp_path):
    fake = tmp_path / "venv" / "bin" / "python"  # echoes how the launcher starts it
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    proc = subprocess.run(
        [str(LAUNCHER), "status", "--json", 'it\'s "quoted" ünïcode'],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "AETHER_VENV": str(tmp_path / "venv")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:-1] == [
        "-I",
        "-c",
        "from aether.startup import main; main()",
        "status",
        "--json",
        'it\'s "quoted" ünïcode',
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["version"],
        ["pheromone-decay", "1", "1800", "3600"],
        ["pheromone-emit", "FOCUS", "a focus signal, long enough to be kept"],
        ["event-add", "probe_event", "tests", "an event with ünïcode"],
        ["status", "--json"],
        ["query", "length(signals)", "--file", "pheromones"],
    ],
)
def test_rarely_used_modules_never_run_on_ordinary_calls(project, args):
    project.run("colony-init", "Build a small REST API with tests")
    proc, report, _ = probe(project, *args)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    assert report["waiting"] == list(startup.LAZY_MODULES)
    # an ordinary call allocates far less than the threshold: the collector never runs
    assert report["threshold"] == startup.GC_THRESHOLD and report["gc"] == []


def test_failures_still_answer_with_an_envelope(project):
    for args, code in ((["pheromone-decay", "nan", "1", "2"], 1), (["no-such-command"], 1), (["pheromone-emit", "FOCUS"], 1)):
        proc, report, stderr = probe(project, *args)
        assert proc.returncode == code and proc.stdout == ""
        envelope = json.loads(stderr.strip().splitlines()[-1])
        assert envelope["ok"] is False and envelope["code"]
        assert "Traceback" not in stderr
        assert report["waiting"] == list(startup.LAZY_MODULES)


def test_aether_debug_traceback_loads_what_it_needs(project):
    """An internal error under AETHER_DEBUG prints a real traceback: traceback, linecache and
    tokenize load on use and show the source lines."""
    code = (
        "import aether.rules.pheromones as p\n"
        "def boom(*a, **k):\n    raise RuntimeError('forced failure for the test')\n"
        "p.batch = boom\n"
        "from aether.startup import main\nmain()\n"
    )
    proc = subprocess.run(
        [PY, "-I", "-c", code, "pheromone-batch"], cwd=project.root, capture_output=True, text=True, env={**os.environ, "AETHER_DEBUG": "1"}
    )
    assert proc.returncode == 3
    assert "Traceback" in proc.stderr and "RuntimeError: forced failure for the test" in proc.stderr
    assert 'cli.main(args=args, prog_name="aether", standalone_mode=False)' in proc.stderr  # source
    assert json.loads(proc.stderr.strip().splitlines()[-1])["code"] == "internal_error"


def test_a_lazy_module_loads_whole_on_first_use():
    proc = in_fresh_python(
        "import sys\n"
        "from aether.startup import lazy_import, LAZY_MODULES\n"
        "expected = [n for n in LAZY_MODULES if n not in sys.modules]\n"
        "assert lazy_import() == expected and 'secrets' in expected\n"
        "import secrets, traceback, ipaddress\n"  # the import statement alone runs nothing
        "assert 'hmac' not in sys.modules and type(secrets).__name__ == 'Awaiting'\n"
        "assert len(secrets.token_hex(8)) == 16 and 'hmac' in sys.modules\n"
        "assert type(secrets) is type(sys)\n"
        "from ipaddress import ip_address\n"
        "assert str(ip_address('::1')) == '::1'\n"
        "import json\n"
        "try:\n    json.loads('{')\nexcept ValueError:\n    text = traceback.format_exc()\n"
        "assert 'return _default_decoder.decode(s)' in text, text\n"  # a source line, via linecache
        "print('ok')\n"
    )
    assert proc.stdout.strip() == "ok"


def test_lazy_import_skips_modules_already_loaded_or_missing():
    proc = in_fresh_python(
        "import sys, json\n"
        "from aether.startup import lazy_import\n"
        "print(lazy_import(('json', 'no_such_module_here', 'secrets')))\n"
        "print(type(sys.modules['json']).__name__)\n"
    )
    assert proc.stdout.split("\n")[:2] == ["['secrets']", "module"]


def test_the_library_is_untouched(project):
    """In-process use (`aether.cli.main`) neither registers lazy modules nor tunes the collector."""
    import gc

    threshold = gc.get_threshold()
    assert project.run("version").json
    assert gc.get_threshold() == threshold
    assert all(type(m).__name__ != "Awaiting" for m in list(sys.modules.values()))


# ---------------------------------------------------------------- the store's lock: filelock


def _hold(path):
    """Another process holding the kernel lock of `path` until killed."""
    code = (
        "import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n"
    )
    os.makedirs(os.path.dirname(path), exist_ok=True)
    proc = subprocess.Popen([PY, "-c", code, path], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _free(path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@pytest.fixture
def lib(project, monkeypatch):
    monkeypatch.chdir(project.root)
    return project


def test_the_store_locks_with_filelock_on_a_sidecar(lib, monkeypatch):
    import filelock

    seen = []

    def change(data):
        seen.append(_free(str(lib.file("pheromones.json.lock"))))
        data["signals"].clear()

    made = []
    real = filelock.FileLock

    def spy(*args, **kwargs):
        made.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(filelock, "FileLock", spy)
    store.update("pheromones", change)
    assert seen == [False]  # held (by this process) while the change runs
    assert _free(str(lib.file("pheromones.json.lock")))  # and released after
    assert [a[0] for a, _ in made] == [str(lib.file("pheromones.json.lock"))]
    assert made[0][1]["fallback_to_soft"] is False


def test_several_files_share_one_deadline_and_release_on_timeout(lib, monkeypatch):
    """update_many locks in path order; when a later lock times out, the earlier ones are freed
    and nothing is written."""
    lib.run("colony-init", "Build a small REST API with tests")
    events = str(lib.file("events.json"))
    before = {n: lib.file(n).read_bytes() for n in ("COLONY_STATE.json", "events.json")}
    holder = _hold(events + ".lock")
    monkeypatch.setenv("AETHER_LOCK_TIMEOUT", "0.4")
    try:
        started = time.monotonic()
        with pytest.raises(AetherError) as caught:
            store.update_many(["colony", "events"], lambda files: files["events"]["events"].clear())
        elapsed = time.monotonic() - started
        assert caught.value.code == "lock_timeout" and caught.value.exit_code == 2
        assert "events.json" in str(caught.value) and "AETHER_LOCK_TIMEOUT" in str(caught.value)
        assert 0.35 <= elapsed < 5
        assert _free(str(lib.file("COLONY_STATE.json.lock")))  # the first lock was let go
    finally:
        holder.kill()
        holder.wait()
    assert {n: lib.file(n).read_bytes() for n in before} == before


def test_a_filesystem_without_flock_is_an_error_not_a_soft_lock(lib, monkeypatch):
    """fallback_to_soft=False: where flock is missing (ENOSYS), writing fails cleanly instead of
    silently trading the kernel lock for a lock file that a crash would leave behind."""
    lib.run("pheromone-emit", "FOCUS", "a signal written before flock went away")
    before = lib.file("pheromones.json").read_bytes()

    def no_flock(fd, op):
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    result = lib.run("pheromone-emit", "FOCUS", "a signal that cannot be locked")
    err = result.error
    assert (result.code, err["code"]) == (2, "state_unwritable")
    assert "cannot lock" in err["error"] and "pheromones.json" in err["error"]
    assert lib.file("pheromones.json").read_bytes() == before


def test_the_bench_wires_the_orchestration_rows():
    proc = subprocess.run(
        [PY, "-c", "import run; print(sorted(run.HOOKS))"], cwd=REPO / "bench", capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["['history1000',", "'plan200']"]
