"""State that stays the same size however long the colony grows: spawns.json keeps what the runs
under way need and archives the rest, only the newest runs keep their briefs and answers, and an
ant's evidence log keeps its newest calls and counts those that went."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aether.core import paths
from aether.state import atomic_files, evidence, store
from aether.state import spawns as ledger

from helpers.colony import ok, write


@pytest.fixture
def here(project, monkeypatch):
    """The library called directly in `project` (its paths found from the working folder)."""
    monkeypatch.chdir(project.root)
    for fn in (paths.project_root, paths.data_dir, paths.home_dir):
        fn.cache_clear()
    yield project
    for fn in (paths.project_root, paths.data_dir, paths.home_dir):
        fn.cache_clear()


def _runs(data: dict, n: int, command: str = "build") -> list:
    """`n` runs of `command` added one after another, each finished with two spawns."""
    scopes = []
    for i in range(n):
        run = ledger.new_run(data, command, phase=i + 1)
        for local in ("lead1", "w1"):
            rec = ledger.add(data, run["scope"], local, "node", "ant:builder", f"{local} builder", "a1")
            rec.update(status="recorded", outcome=f"{local}: completed")
        run["done"] = True
        scopes.append(run["scope"])
    return scopes


def test_the_hot_file_keeps_the_newest_finished_runs_and_archives_the_rest_once(here):
    data = {"spawns": [], "runs": [], "claim": None}
    scopes = _runs(data, ledger.HOT_RUNS + 5)
    ledger.new_run(data, "continue")  # a run under way: the older finished ones go now
    assert [r["scope"] for r in data["runs"]][:-1] == scopes[-ledger.HOT_RUNS :]
    assert {s["scope"] for s in data["spawns"]} == set(scopes[-ledger.HOT_RUNS :])
    archived = ledger.archived()
    assert [line["run"]["scope"] for line in archived] == scopes[: -ledger.HOT_RUNS]
    assert all([s["local"] for s in line["spawns"]] == ["lead1", "w1"] for line in archived)
    assert archived[0]["spawns"][1]["outcome"] == "w1: completed"  # each ant's record and outcome kept


def test_runs_under_way_and_runs_awaiting_an_answer_stay_whatever_their_age(here):
    data = {"spawns": [], "runs": [], "claim": None}
    autopilot = ledger.new_run(data, "run")  # the autopilot: not done for as long as it runs
    first, second = _runs(data, 2)
    ledger.find(data, f"{first}/w1").update(status="background")  # its answer may still come
    ledger.find(data, f"{second}/w1").update(status="returned")  # kept, not recorded yet
    _runs(data, ledger.HOT_RUNS + 2)
    scopes = [r["scope"] for r in data["runs"]]
    assert autopilot["scope"] in scopes and first in scopes and second in scopes  # the run an answer lands on
    assert ledger.find(data, f"{first}/lead1") is not None and ledger.find(data, f"{first}/w1")["status"] == "background"
    ledger.find(data, f"{first}/w1").update(status="recorded")  # the answer came
    ledger.new_run(data, "continue")
    assert first not in [r["scope"] for r in data["runs"]] and second in [r["scope"] for r in data["runs"]]
    assert first in [line["run"]["scope"] for line in ledger.archived()]


def test_an_archive_that_cannot_be_written_leaves_the_runs_in_the_hot_file(here, monkeypatch):
    data = {"spawns": [], "runs": [], "claim": None}
    monkeypatch.setattr(ledger, "_archive", lambda lines: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    scopes = _runs(data, ledger.HOT_RUNS + 3)
    assert [r["scope"] for r in data["runs"]] == scopes and len(data["spawns"]) == 2 * len(scopes)  # nothing lost


def test_the_archive_is_bounded_and_a_run_a_crash_left_in_both_counts_once(here, monkeypatch):
    monkeypatch.setattr(ledger, "MAX_ARCHIVE_BYTES", 2000)
    data = {"spawns": [], "runs": [], "claim": None}
    for _ in range(6):
        _runs(data, ledger.HOT_RUNS + 3)
    path = ledger.archive_path()
    assert os.path.getsize(path) < 2000 + 4000 and os.path.exists(path + ".1")
    assert not os.path.exists(path + ".2")  # one older generation, no more
    line = ledger.archived()[-1]
    atomic_files.append_jsonl(path, [line])  # written again, as after a crash before the hot file's write
    scopes = [x["run"]["scope"] for x in ledger.archived()]
    assert scopes.count(line["run"]["scope"]) == 1 and len(scopes) == len(set(scopes))


def test_only_the_runs_in_the_hot_file_keep_their_briefs(here, tmp_path):
    data = {"spawns": [], "runs": [], "claim": None}
    scopes = _runs(data, 3)
    for scope in scopes:
        ledger.write_brief(scope, "w1", "brief")
    spawns_dir = here.root / ".aether" / "spawns"
    (spawns_dir / "texts").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (spawns_dir / "b9-link").symlink_to(outside)  # never followed, never removed
    (spawns_dir / "odd name").mkdir()  # no scope of ours
    gone = scopes[0]
    data["runs"] = [r for r in data["runs"] if r["scope"] != gone]
    data["spawns"] = [s for s in data["spawns"] if s["scope"] != gone]
    assert ledger.prune_folders(data) == 1
    assert sorted(os.listdir(spawns_dir)) == sorted([*scopes[1:], "texts", "b9-link", "odd name"])
    assert outside.exists()


def test_a_long_colony_keeps_spawns_json_and_the_briefs_to_its_newest_runs(project, monkeypatch):
    """Twelve phases built through `aether next` and `record`: the hot file and the briefs stay
    the size a few runs need, and every phase completed."""
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    phases = 12
    plan = {
        "goal": "Small modules",
        "phases": [
            {
                "id": i,
                "name": f"Module {i}",
                "description": f"m{i}",
                "tasks": [{"id": f"{i}.1", "description": f"mods/m{i}.py", "depends_on": []}],
                "success_criteria": ["it imports"],
            }
            for i in range(1, phases + 1)
        ],
    }
    write(project, "mods/__init__.py")
    ok(project, "colony-init", "Small modules", "--mode", "LIGHTWEIGHT")
    ok(project, "plan-load", "-", input=json.dumps(plan))
    for phase in range(1, phases + 1):
        action = ok(project, "next", "--build", str(phase))
        while action["action"] in ("spawn", "lessons"):
            if action["action"] == "lessons":
                action = ok(project, "record", "lessons", "-", input="- one module a phase\n")["next"]
                continue
            for spawn in action["spawns"]:
                if spawn["id"].startswith("lead"):
                    worker = {"id": f"m{phase}", "caste": "builder", "tasks": [f"{phase}.1"], "writes": [f"mods/m{phase}.py"]}
                    answer = "```json\n" + json.dumps({"phase": phase, "workers": [worker]}) + "\n```"
                else:
                    write(project, f"mods/m{phase}.py")
                    doc = {"status": "completed", "summary": "done", "files_created": [f"mods/m{phase}.py"], "files_modified": []}
                    answer = "```json\n" + json.dumps(doc) + "\n```"
                out = ok(project, "record", spawn["id"], "-", input=answer)
            action = out["next"]
        assert action["action"] == "done", action
        end = ok(project, "next", "--continue")
        while end["action"] == "lessons":
            end = ok(project, "record", "lessons", "-", input="- one module a phase\n")["next"]
    hot = project.load("spawns.json")
    assert len([r for r in hot["runs"] if r.get("done")]) <= ledger.HOT_RUNS + 1
    assert len(hot["spawns"]) <= 2 * (ledger.HOT_RUNS + 1)
    assert len(os.listdir(project.root / ".aether" / "spawns")) <= ledger.HOT_RUNS + 2
    assert (project.data / ledger.ARCHIVE).exists()
    statuses = [p["status"] for p in project.load("PROJECT_PLAN.json")["phases"]]
    assert statuses == ["completed"] * phases


def test_costs_keep_the_newest_phases_apart_and_every_token_in_the_total():
    from aether.state import costs

    data = {"colonies": [], "runs": []}
    costs.add(data, "s1", None, "plan", "route-setter", {"total_tokens": 7, "duration_ms": 1}, "m")
    for phase in range(1, costs.MAX_PHASES + 11):
        costs.add(data, "s1", "r1", str(phase), "builder", {"total_tokens": phase, "duration_ms": 10}, "m")
    mine = costs.colony_spend("s1", data)
    keys = list(mine["phases"])
    assert keys[0] == costs.EARLIER and "plan" in keys  # the older numbered phases add up first
    assert [k for k in keys if k.isdigit()] == [str(n) for n in range(11, costs.MAX_PHASES + 11)]
    assert mine["phases"][costs.EARLIER]["tokens"] == sum(range(1, 11)) and mine["phases"][costs.EARLIER]["spawns"] == 10
    assert mine["total"]["tokens"] == 7 + sum(range(1, costs.MAX_PHASES + 11))  # nothing lost
    assert costs.run_spend("r1", data)["total"]["spawns"] == costs.MAX_PHASES + 10


def test_the_phase_being_spent_on_keeps_its_bucket_after_a_plan_numbered_from_1_again():
    from aether.state import costs

    data = {"colonies": [], "runs": []}
    for phase in range(51, 51 + costs.MAX_PHASES):  # a colony past its first plan
        costs.add(data, "s1", "r1", str(phase), "builder", {"total_tokens": 1}, "m")
    costs.add(data, "s1", "r1", "1", "builder", {"total_tokens": 500}, "m")  # planned again: ids from 1
    for holder in (costs.colony_spend("s1", data), costs.run_spend("r1", data)):
        assert holder["phases"]["1"]["tokens"] == 500  # a per-phase cap still reads what phase 1 spent
        assert len([k for k in holder["phases"] if k.isdigit()]) == costs.MAX_PHASES
        assert holder["phases"][costs.EARLIER]["tokens"] == 1 and "51" not in holder["phases"]


def test_a_run_whose_archivists_report_is_pointed_to_keeps_its_folder(here):
    data = {"spawns": [], "runs": [], "claim": None}
    scopes = _runs(data, 2)
    for scope in scopes:
        ledger.write_brief(scope, "w1", "brief")
    reported = next(r for r in data["runs"] if r["scope"] == scopes[0])
    reported["report"] = {"phase": 1, "summary": "tidy", "file": f".aether/spawns/{scopes[0]}/w1.answer.md"}
    atomic_files.append_jsonl(ledger.archive_path(), [{"run": reported, "spawns": []}, {"run": data["runs"][1], "spawns": []}])
    data["runs"], data["spawns"] = [], []
    assert ledger.prune_folders(data) == 1
    assert os.listdir(here.root / ".aether" / "spawns") == [scopes[0]]


def test_runs_with_a_report_are_listed_as_they_are_archived_and_pruning_reads_no_archive(here, monkeypatch):
    data = {"spawns": [], "runs": [], "claim": None}
    scopes = _runs(data, 2)
    for scope in scopes:
        ledger.write_brief(scope, "w1", "brief")
    data["runs"][0]["report"] = {"phase": 1, "summary": "tidy", "file": f".aether/spawns/{scopes[0]}/w1.answer.md"}
    for r in data["runs"]:
        r["done"] = True
    monkeypatch.setattr(ledger, "HOT_RUNS", 0)
    assert ledger.cool(data) == sorted(scopes)  # both archived; the reported one listed
    assert data["reported"] == [scopes[0]] and data["runs"] == []

    def no_archive():
        raise AssertionError("the archive was read")

    monkeypatch.setattr(ledger, "archived", no_archive)
    assert ledger.prune_folders(data) == 1
    assert os.listdir(here.root / ".aether" / "spawns") == [scopes[0]]
    data["reported"] = [f"r{n}" for n in range(ledger.MAX_REPORTED)]
    monkeypatch.setattr(ledger, "HOT_RUNS", 0)
    more = _runs(data, 1)
    data["runs"][-1].update(done=True, report={"phase": 2, "summary": "s", "file": "f"})
    ledger.cool(data)
    assert len(data["reported"]) == ledger.MAX_REPORTED and data["reported"][-1] == more[0]  # the newest kept


# ---------------------------------------------------------------- the evidence keeps an ant's newest calls


def _bash(n: int, size: int = 2000) -> dict:
    return {
        "at": "2026-02-04T10:00:00Z",
        "t": 1770199200.0 + n,
        "tool": "Bash",
        "command": f"step {n}",
        "exit": 0,
        "tail": "x" * size,
        "id": f"toolu_{n}",
    }


def _ant_with_a_log(here) -> str:
    """A build's watcher that Claude Code ran as agent `a1`, its log opened: its ref."""

    def change(data):
        run = ledger.new_run(data, "build", phase=1)
        ledger.add(data, run["scope"], "watch1", "node", "ant:watcher", "watch1 watcher", "a1", agent_id="a1")
        return run["scope"] + "/watch1"

    ref = store.update("spawns", change)
    evidence.open_log("a1", ref, "hooks")
    return ref


def test_past_its_cap_an_ants_log_drops_its_oldest_calls_and_says_so(here, monkeypatch):
    monkeypatch.setattr(evidence, "MAX_ANT_BYTES", 40 * 1024)
    ref = _ant_with_a_log(here)
    for n in range(100):
        assert evidence.append("a1", [_bash(n)]) == 1
    assert os.path.getsize(evidence.log_path("a1")) <= evidence.MAX_ANT_BYTES
    head, calls = evidence.read("a1")
    kept = [c["id"] for c in calls]
    assert kept == [f"toolu_{n}" for n in range(100 - len(kept), 100)]  # the newest, in order
    assert head["spawn"] == ref and head["dropped"] == 100 - len(kept) > 50
    assert evidence.append("a1", [_bash(99)]) == 0  # a call already kept is not kept twice
    one = here.run("evidence", "watch1").stdout
    assert f"{len(kept)} call(s) kept; its {head['dropped']} oldest not kept (an ant's log past 40 KiB keeps its newest calls)" in one
    assert f"… {head['dropped']} older call(s), not kept" in one and "$ step 99 → exit 0" in one
    listing = here.run("evidence").stdout
    assert f"(+{head['dropped']} older, not kept)" in listing and "the checks read the newest" in listing


def test_the_same_calls_handed_in_again_after_a_rewrite_change_nothing(here, monkeypatch):
    """A retried `mod wait` or an answer taken twice brings calls the log already dropped: they are
    not taken for new ones (the newest stay the newest; nothing is counted twice)."""
    monkeypatch.setattr(evidence, "MAX_ANT_BYTES", 40 * 1024)
    _ant_with_a_log(here)
    batch = [{**_bash(n), "exit": 1 if n == 20 else 0} for n in range(30)]
    evidence.append("a1", batch)
    first = evidence.read("a1")
    assert evidence.append("a1", batch) == 0
    assert evidence.read("a1") == first and first[1][-1]["id"] == "toolu_29" and first[0]["dropped"] + len(first[1]) == 30
    assert evidence.append("a1", [_bash(30)]) == 1  # a new call still comes in


def test_a_log_whose_header_is_not_ours_keeps_nothing_and_says_so(here, monkeypatch):
    monkeypatch.setattr(evidence, "MAX_ANT_BYTES", 8 * 1024)
    _ant_with_a_log(here)
    with open(str(evidence.log_path("a1")), "w", encoding="utf-8") as fh:
        fh.write("not json\n" + "x" * 9000 + "\n")
    assert evidence.append("a1", [_bash(1)]) == 0  # past the cap, and no header to rewrite with


def test_one_call_larger_than_the_cap_is_still_kept_whole(here, monkeypatch):
    monkeypatch.setattr(evidence, "MAX_ANT_BYTES", 8 * 1024)
    _ant_with_a_log(here)
    evidence.append("a1", [_bash(1, 100)])
    assert evidence.append("a1", [_bash(2, 20_000)]) == 1
    head, calls = evidence.read("a1")
    assert [c["id"] for c in calls] == ["toolu_2"] and head["dropped"] == 1


def test_past_the_folders_cap_each_log_keeps_a_quarter_and_its_newest_calls(here, monkeypatch):
    monkeypatch.setattr(evidence, "MAX_ANT_BYTES", 40 * 1024)
    _ant_with_a_log(here)
    (here.data / "evidence" / "other.jsonl").write_bytes(b"{}\n" + b"y" * 60 * 1024)
    monkeypatch.setattr(evidence, "MAX_TOTAL_BYTES", 50 * 1024)
    for n in range(30):
        evidence.append("a1", [_bash(n)])
    assert os.path.getsize(evidence.log_path("a1")) <= evidence.MAX_ANT_BYTES // 4
    head, calls = evidence.read("a1")
    assert calls[-1]["id"] == "toolu_29" and head["dropped"] + len(calls) == 30


def test_writers_of_one_log_at_once_lose_no_call_unsaid(here, tmp_path):
    """Four processes (the hook and the mod's hand-ins) append to one log while it is rewritten:
    every call is either kept or counted as dropped, none twice."""
    _ant_with_a_log(here)
    script = (
        "import sys, json\n"
        "from aether.state import evidence\n"
        "evidence.MAX_ANT_BYTES = 24 * 1024\n"
        "w = int(sys.argv[1])\n"
        "for n in range(60):\n"
        "    evidence.append('a1', [{'tool': 'Bash', 'command': 'c', 'exit': 0, 'tail': 'z' * 500, 'id': f'w{w}-{n}'}])\n"
    )
    env = {**os.environ, "AETHER_DATA_DIR": str(here.data)}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(w)], env=env) for w in range(4)]
    assert all(p.wait(60) == 0 for p in procs)
    head, calls = evidence.read("a1")
    ids = [c["id"] for c in calls]
    assert len(ids) == len(set(ids)) and head["dropped"] + len(ids) == 240
    assert not [name for name in os.listdir(here.data / "evidence") if name.endswith(".tmp")]
