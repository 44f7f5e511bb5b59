"""Writers killed with SIGKILL at random moments never damage state.

Oracle (pheromones.json, exact while no cap drops a signal: every writer here lifts
MAX_SIGNALS): a write completed when its process exited
0, or, for a library writer, when `store.update` returned and it said so on stdout. Afterwards
the file and its backups parse and validate, every completed write is there exactly once, and
the only other entries are writes that were in flight when their writer was killed (at most
one per killed writer). Nothing is duplicated or partial.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from aether.state import schemas

pytestmark = pytest.mark.slow

PY = sys.executable

# A writer that imports the helper once and writes in a loop, acknowledging each write after
# `store.update` returned (so kills land inside writes, not in interpreter start-up).
LOOP_WRITER = r"""
import sys
from aether.state import pheromones
pheromones.MAX_SIGNALS = 1 << 30  # the store's crash safety is the subject: no cap drops a write
name = sys.argv[1]
print("ready", flush=True)
n = 0
while True:
    pheromones.emit("FOCUS", f"crash {name} n{n:05d}")
    print(n, flush=True)
    n += 1
"""


# `aether pheromone-emit CONTENT` as the launcher runs it (the CLI's main in a new process), with
# the signal cap lifted: the store's crash safety is the subject, and no cap may drop a write.
CLI_WRITER = (
    "import sys; from aether.state import pheromones; pheromones.MAX_SIGNALS = 1 << 30; "
    "from aether.cli import main; main(['pheromone-emit', 'FOCUS', sys.argv[1]])"
)


def _env(data_dir):
    env = {k: v for k, v in os.environ.items() if k != "AETHER_NOW"}
    env.update(AETHER_DATA_DIR=str(data_dir), AETHER_LOCK_TIMEOUT="60")
    return env


def _check(data_dir, completed: set, in_flight: set, kills: int):
    """The file, its backups and its folder after the storm, against the oracle."""
    spec = schemas.FILES["pheromones"]
    data = json.loads((data_dir / "pheromones.json").read_text(encoding="utf-8"))
    assert spec.validate(data) == []
    contents = [s["content"] for s in data["signals"]]
    assert len(contents) == len(set(contents)), "a write was duplicated"
    assert len({s["id"] for s in data["signals"]}) == len(contents)
    present = set(contents)
    missing = completed - present
    assert not missing, f"{len(missing)} completed writes lost, e.g. {sorted(missing)[:3]}"
    extra = present - completed
    assert extra <= in_flight, f"unexpected entries: {sorted(extra - in_flight)[:3]}"
    assert len(extra) <= kills
    for n in range(1, 4):
        backup = data_dir / ".backups" / f"pheromones.json.{n}"
        if backup.exists():
            assert spec.validate(json.loads(backup.read_text(encoding="utf-8"))) == []
    return present


def _final_write(data_dir, completed):
    """After the kills, the next writer gets the lock at once and cleans up temp files."""
    proc = subprocess.run(
        [PY, "-c", CLI_WRITER, "after the storm, all is well"],
        env={**_env(data_dir), "AETHER_LOCK_TIMEOUT": "5"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr  # within the 5 s lock timeout: no lock was left held
    completed.add("after the storm, all is well")
    assert [p.name for p in data_dir.iterdir() if ".tmp." in p.name] == []


def test_library_writers_killed_mid_write(tmp_path):
    """Two looping writers at a time, each killed after a random 0–60 ms of writing: 160 kills."""
    rng = random.Random(20260204)
    data_dir = tmp_path / "data"
    completed, in_flight, kills = set(), set(), 0
    for generation in range(80):
        procs = []
        for slot in range(2):
            name = f"g{generation:03d}s{slot}"
            proc = subprocess.Popen([PY, "-c", LOOP_WRITER, name], env=_env(data_dir), stdout=subprocess.PIPE, text=True)
            assert proc.stdout.readline().strip() == "ready"
            procs.append((name, proc))
        # Each writer's first write is awaited, so the storm writes on a busy machine too; the
        # kill then lands at a random point of a later write.
        first = {name: proc.stdout.readline().strip() for name, proc in procs}
        time.sleep(rng.uniform(0, 0.06))
        for name, proc in procs:  # noqa: B007
            proc.send_signal(signal.SIGKILL)
        for name, proc in procs:
            acked = [int(line) for line in (first[name] + " " + proc.stdout.read()).split()]
            proc.wait()
            proc.stdout.close()
            assert proc.returncode == -signal.SIGKILL
            kills += 1
            assert acked == list(range(len(acked)))
            completed.update(f"crash {name} n{n:05d}" for n in acked)
            in_flight.add(f"crash {name} n{len(acked):05d}")
    assert kills >= 160
    _check(data_dir, completed, in_flight, kills)
    _final_write(data_dir, completed)
    present = _check(data_dir, completed, in_flight, kills)
    assert len(completed) >= 160  # every writer wrote at least once before its kill
    assert len(present) >= len(completed)


def test_cli_writers_killed_at_random_moments(tmp_path):
    """`aether pheromone-emit` calls (the CLI in a process of its own), three at a time, killed after a random 0–150 ms: 120
    kills. A call that exited 0 must be in the file; a killed one may or may not be."""
    rng = random.Random(4040)
    data_dir = tmp_path / "data"
    completed, in_flight, kills = set(), set(), 0
    env = _env(data_dir)
    number = 0
    while kills < 120:
        procs = []
        for _ in range(3):
            content = f"crash cli n{number:05d}"
            number += 1
            procs.append(
                (
                    content,
                    subprocess.Popen([PY, "-c", CLI_WRITER, content], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE),
                )
            )
        time.sleep(rng.uniform(0, 0.15))
        for content, proc in procs:  # noqa: B007
            if rng.random() < 0.8:
                proc.send_signal(signal.SIGKILL)
        for content, proc in procs:
            out, err = proc.communicate(timeout=60)
            if proc.returncode == 0:
                assert json.loads(out)["result"]["content"] == content
                completed.add(content)
            else:
                assert proc.returncode == -signal.SIGKILL, err
                kills += 1
                in_flight.add(content)
    assert completed, "no call finished: the kill window is too short to mean anything"
    _check(data_dir, completed, in_flight, kills)
    _final_write(data_dir, completed)
    _check(data_dir, completed, in_flight, kills)
