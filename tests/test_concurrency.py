"""Many writers at once through the real launcher: no mutation is lost, every file stays valid.

8 processes each run 20 rounds of four mutations (pheromone-emit, event-add, error-add,
learning-promote) against the same project and the same global folder. Each process numbers
its writes; a process's writes are sequential, so in a capped file the entries kept from one
process must be a contiguous suffix of its sequence (in order), and the file keeps
min(cap, total). 160 writes of each kind pass every cap (100 at most), so the caps bind.
Pheromones have no cap: all 160 must be there, each once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import LAUNCHER

from aether.state import schemas

pytestmark = pytest.mark.slow

WORKERS = 8
ROUNDS = 20
TOTAL = WORKERS * ROUNDS
PROJECT_SOURCE = "proj-concurrency"
TAG = re.compile(r"w(\d\d)[ -]n(\d\d\d)")

WORKER = r"""
import json, subprocess, sys
launcher, worker, rounds, project = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
failures, done = [], {}
for i in range(rounds):
    tag = f"w{worker:02d} n{i:03d}"
    calls = {
        "pheromone-emit": (["pheromone-emit", "FOCUS", f"concurrency {tag} focus signal"], None),
        # every other event's content goes through stdin, as prompts send it
        "event-add": (["event-add", "conc_test", f"worker-{worker}", "-"], f"w{worker:02d}-n{i:03d} \"event\"\n")
                     if i % 2 else (["event-add", "conc_test", f"worker-{worker}", f"w{worker:02d}-n{i:03d}"], None),
        "error-add": (["error-add", "runtime", "high", f"concurrency {tag} error", "1"], None),
        "learning-promote": (["learning-promote", f"concurrency lesson {tag} about locks", project, "1"], None),
    }
    for name, (args, stdin) in calls.items():
        proc = subprocess.run([launcher, *args], input=stdin, capture_output=True, text=True)
        ok = proc.returncode == 0 and proc.stderr == ""
        if ok:
            try:
                ok = json.loads(proc.stdout)["ok"] is True and proc.stdout.count("\n") == 1
            except ValueError:
                ok = False
        if ok:
            done[name] = done.get(name, 0) + 1
        else:
            failures.append({"call": args, "rc": proc.returncode, "stdout": proc.stdout[-500:],
                             "stderr": proc.stderr[-500:]})
print(json.dumps({"done": done, "failures": failures}))
"""


@pytest.fixture(scope="module")
def storm(tmp_path_factory):
    """Run the writers once; every test below checks one file of the outcome."""
    base = tmp_path_factory.mktemp("storm")
    root, home = base / "proj", base / "home"
    (root / ".aether").mkdir(parents=True)
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AETHER_DATA_DIR", "AETHER_NOW")}
    # The point is lost updates, not latency: a generous lock wait keeps a loaded machine honest.
    env.update(HOME=str(home), AETHER_HOME=str(home / ".aether"), AETHER_LOCK_TIMEOUT="120")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(LAUNCHER), str(w), str(ROUNDS), PROJECT_SOURCE],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]
    reports = []
    for proc in procs:
        out, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0
        reports.append(json.loads(out))
    return {"data": root / ".aether" / "data", "home": home / ".aether", "reports": reports}


def _load(folder, name):
    spec = schemas.FILES[name]
    data = json.loads((folder / spec.filename).read_text(encoding="utf-8"))
    assert data["version"] == spec.version
    assert spec.validate(data) == []
    leftovers = [p.name for p in folder.iterdir() if ".tmp." in p.name]
    assert leftovers == []
    for n in range(1, 4):  # every backup is a whole, valid earlier version
        backup = json.loads((folder / ".backups" / f"{spec.filename}.{n}").read_text(encoding="utf-8"))
        assert spec.validate(backup) == []
    return data


def _calls_succeeded(storm, command):
    failures = [f for r in storm["reports"] for f in r["failures"] if f["call"][0] == command]
    assert failures == [], failures[:3]
    assert sum(r["done"].get(command, 0) for r in storm["reports"]) == TOTAL


def _tags(texts):
    tags = []
    for text in texts:
        match = TAG.search(text)
        assert match, text
        tags.append((int(match.group(1)), int(match.group(2))))
    return tags


def check_capped(tags, cap):
    """Kept entries: cap of them (fewer than were written), no duplicates, and per worker a
    contiguous suffix of its sequence in order."""
    assert cap < TOTAL  # the cap binds: some writes must go
    assert len(tags) == cap
    assert len(set(tags)) == len(tags)
    for worker in range(WORKERS):
        kept = [n for w, n in tags if w == worker]
        if kept:
            assert kept == list(range(ROUNDS - len(kept), ROUNDS)), (worker, kept)


def test_no_pheromone_is_lost(storm):
    _calls_succeeded(storm, "pheromone-emit")
    signals = _load(storm["data"], "pheromones")["signals"]
    tags = _tags(s["content"] for s in signals)
    assert sorted(tags) == [(w, n) for w in range(WORKERS) for n in range(ROUNDS)]
    assert len({s["id"] for s in signals}) == TOTAL
    for worker in range(WORKERS):  # each worker's signals appear in the order it wrote them
        assert [n for w, n in tags if w == worker] == list(range(ROUNDS))


def test_events_keep_the_newest_100(storm):
    from aether.state.events import MAX_EVENTS

    _calls_succeeded(storm, "event-add")
    events = _load(storm["data"], "events")["events"]
    check_capped(_tags(e["content"] for e in events), MAX_EVENTS)
    assert len({e["id"] for e in events}) == len(events)
    for event in events:
        n = int(TAG.search(event["content"]).group(2))
        expected = f"w{event['source'][len('worker-') :].zfill(2)}-n{n:03d}"
        assert event["content"].rstrip("\n") == (f'{expected} "event"' if n % 2 else expected)


def test_errors_keep_the_newest_50(storm):
    from aether.state.error_log import MAX_ERRORS

    _calls_succeeded(storm, "error-add")
    errors = _load(storm["data"], "errors")["errors"]
    check_capped(_tags(e["description"] for e in errors), MAX_ERRORS)
    assert len({e["id"] for e in errors}) == len(errors)
    assert {(e["category"], e["severity"], e["phase"]) for e in errors} == {("runtime", "high", 1)}


def test_global_learnings_keep_100(storm):
    from aether.state.learning import CAP

    _calls_succeeded(storm, "learning-promote")
    learnings = _load(storm["home"], "learnings")["learnings"]
    check_capped(_tags(entry["content"] for entry in learnings), CAP)
    for entry in learnings:
        assert entry["occurrence_count"] == 1 and entry["source_projects"] == [PROJECT_SOURCE]
        assert entry["promoted"] is False
