"""Where a run's time went: `aether status --timeline` (and `--svg`) draws the newest run — each
ant's start and end by wave, its model and tokens, the merges."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from aether.core import clock
from aether.rules import timeline

from helpers.colony import ok
from helpers.drive import approved_wave, result, scope_of

T0 = clock.parse_iso("2026-02-04T10:00:00Z")


def _spawn(local, kind, caste, start, end, tokens=None, model=None):
    usage = {"total_tokens": tokens, "model": model} if tokens is not None else None
    return {
        "local": local,
        "kind": kind,
        "subagent_type": f"ant:{caste}",
        "dispatched_at": clock.iso(T0 + start - 5),
        "launched_at": clock.iso(T0 + start),
        "recorded_at": clock.iso(T0 + end) if end is not None else None,
        "usage": usage,
        "status": "recorded" if end is not None else "launched",
    }


SPAWNS = [
    _spawn("lead1", "lead", "route-setter", 0, 40, 3000, "sonnet"),
    _spawn("w1", "node", "builder", 60, 160, 24000, "sonnet"),
    _spawn("w2", "node", "builder", 60, 250, 31000, "opus"),
    _spawn("watch1", "node", "watcher", 270, None),
]
NODES = {
    "w1": {"wave": 1, "role": "worker", "merge": "merged", "merged_t": T0 + 255},
    "w2": {"wave": 1, "role": "worker", "merge": "conflict", "merged_t": T0 + 256},
    "watch1": {"wave": 2, "role": "watcher"},
}


def test_each_ant_is_placed_on_the_runs_time_axis_by_wave():
    rows = timeline.rows(SPAWNS, NODES)
    assert [(r["id"], r["group"], r["caste"], r["seconds"]) for r in rows] == [
        ("lead1", "lead", "route-setter", 40),
        ("w1", "wave 1", "builder", 100),
        ("w2", "wave 1", "builder", 190),
        ("watch1", "watcher", "watcher", None),  # still running: no end yet
    ]
    merged = timeline.merges(NODES)
    assert [(m["id"], m["outcome"]) for m in merged] == [("w1", "merged"), ("w2", "conflict")]
    text = timeline.text("build of phase 1", rows, merged, now=T0 + 300)
    lines = text.splitlines()
    assert lines[0] == "TIMELINE · build of phase 1 · 4 ant(s) · 5m00s · 58.0k tokens"
    w1, w2, watch = (next(line for line in lines if f" {n} " in f" {line} ") for n in ("w1", "w2", "watch1"))
    bar = lambda line: line[18 : 18 + timeline.BAR]  # noqa: E731
    assert bar(w1).index("█") == bar(w2).index("█") == 8  # both launched at 1m of 5m
    assert bar(w2).count("█") > bar(w1).count("█")  # w2 ran longer
    assert "running" in watch and bar(watch).rstrip("·").endswith("█")  # drawn to now
    assert "24.0k tokens" in w1 and "opus" in w2
    assert any(line.startswith("merge") and "conflict" in line for line in lines)
    assert lines[-1] == timeline.footnote(rows)  # said, not invented
    assert lines[-1].startswith("Not recorded here: the time in hooks and the time in the helper")


def test_the_picture_is_an_svg_with_a_bar_per_ant_and_a_mark_per_merge():
    rows = timeline.rows(SPAWNS, NODES)
    picture = timeline.svg("build of phase 1 <b1>", rows, timeline.merges(NODES), now=T0 + 300)
    root = ET.fromstring(picture)  # well-formed, the title's markup escaped
    ns = "{http://www.w3.org/2000/svg}"
    bars = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(bars) == 4 and len(list(root.iter(f"{ns}path"))) == 2
    assert bars[1].find(f"{ns}title").text == "w1 (builder): 1m40s, sonnet, 24.0k tokens"
    assert float(bars[2].get("width")) > float(bars[1].get("width"))
    assert "http" not in picture.replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    page = timeline.html("t", picture)
    assert page.startswith("<!doctype html>") and picture in page


def test_status_timeline_draws_the_newest_run_and_writes_the_picture_in_the_project(drive_colony):
    p = drive_colony
    action = approved_wave(p)
    for spawn in action["spawns"]:
        ok(p, "record", spawn["id"], "-", input=result())
    out = p.run("status", "--timeline", "--svg")
    assert out.code == 0, out.stderr
    scope = scope_of(p)
    assert f"({scope}" in out.stdout.splitlines()[0] and "lead1" in out.stdout and "w1" in out.stdout
    svg_file, page = p.root / ".aether" / "reports" / f"timeline-{scope}.svg", p.root / ".aether" / "reports" / f"timeline-{scope}.html"
    assert ET.fromstring(svg_file.read_text("utf-8")).tag.endswith("svg") and page.exists()
    assert f".aether/reports/timeline-{scope}.svg" in out.stdout
    data = p.run("status", "--timeline", "--json").json
    assert data["run"] == scope and [a["id"] for a in data["ants"]][:1] == ["lead1"]
    refused = p.run("status", "--svg")
    assert refused.code != 0 and "--timeline" in refused.stderr


def test_no_run_yet_is_said_plainly(project):
    ok(project, "colony-init", "A goal")
    out = project.run("status", "--timeline")
    assert out.code == 0 and "nothing to draw" in out.stdout


def test_an_ants_own_duration_stretches_a_bar_the_records_seconds_cannot():
    spawn = _spawn("w1", "node", "builder", 10, 10, 500, "sonnet")  # handed out and recorded in one second
    spawn["usage"]["duration_ms"] = 3400
    (row,) = timeline.rows([spawn], {})
    assert round(row["seconds"], 3) == 3.4 and round(row["end"] - T0, 3) == 13.4


def test_a_run_whose_scope_could_name_a_path_writes_nothing(drive_colony, tmp_path):
    p = drive_colony
    approved_wave(p)
    ledger_file = p.data / "spawns.json"
    data = json.loads(ledger_file.read_text("utf-8"))
    scope = scope_of(p)
    evil = "x/../../../../" + str(tmp_path / "pwn").lstrip("/")
    text = ledger_file.read_text("utf-8").replace(scope, evil)  # a hand edit of the state
    ledger_file.write_text(text, "utf-8")
    assert json.loads(text)["runs"][-1]["scope"] == evil and data["runs"][-1]["scope"] == scope
    out = p.run("status", "--timeline", "--svg")
    assert out.code != 0 and "no scope" in out.stderr
    assert not list(tmp_path.glob("pwn*")) and not (p.root / ".aether" / "reports").exists()


def test_control_characters_in_a_name_keep_the_picture_valid():
    spawn = _spawn("w\x01", "node", "builder", 0, 5, 10, "mod\x1bel")
    picture = timeline.svg("t", timeline.rows([spawn], {}), [], now=T0 + 5)
    ET.fromstring(picture)


def test_the_time_an_ants_calls_spent_in_hooks_is_drawn_where_the_mod_measured_it():
    spawns = [{**s, "ref": f"b1/{s['local']}"} for s in SPAWNS]
    rows = timeline.rows(spawns, NODES, hooks={"b1/w1": (42, 14)})
    assert [(r["id"], r["hooks_ms"], r["hooked_calls"]) for r in rows][1:3] == [("w1", 42, 14), ("w2", None, 0)]
    lines = timeline.text("build of phase 1", rows, timeline.merges(NODES), now=T0 + 300).splitlines()
    assert next(line for line in lines if " w1 " in f" {line} ").endswith("24.0k tokens · hooks 42 ms in 14 call(s)")
    assert lines[-1].startswith(timeline.HOOKS_SAID) and "the time in the helper" in lines[-1]  # what is still not drawn, said
    picture = timeline.svg("t", rows, [], now=T0 + 300)
    assert "hooks 42 ms in 14 call(s)" in picture
    notes = [t.text for t in ET.fromstring(picture).iter("{http://www.w3.org/2000/svg}text")][-2:]
    assert " ".join(notes) == timeline.footnote(rows)  # one line a sentence: the picture is 960 wide


def test_status_timeline_adds_up_the_hook_time_the_mod_handed_in_with_an_ants_calls(drive_colony, monkeypatch):
    from aether.colony import mod as mod_loop
    from aether.core import paths
    from aether.state import evidence, store

    p = drive_colony
    action = approved_wave(p)
    for spawn in action["spawns"]:
        ok(p, "record", spawn["id"], "-", input=result())
    monkeypatch.chdir(p.root)
    for fn in (paths.project_root, paths.data_dir):
        fn.cache_clear()
    ref = f"{scope_of(p)}/w1"

    def run_as(data):
        next(s for s in data["spawns"] if s["ref"] == ref)["agent_id"] = "agent-w1"

    store.update("spawns", run_as)
    evidence.open_log("agent-w1", ref, "mod")
    calls = [
        {"tool": "Bash", "input": {"command": "ls"}, "isError": False, "text": "", "ms": 30, "t": T0 + 70, "hooks_ms": 3, "id": "c1"},
        {"tool": "Write", "input": {"file_path": "a.py"}, "isError": False, "text": "", "ms": 9, "t": T0 + 80, "hooks_ms": 4, "id": "c2"},
        {"tool": "Bash", "input": {"command": "pwd"}, "isError": False, "text": "", "ms": 9, "t": T0 + 90, "hooks_ms": -5, "id": "c3"},
    ]
    assert mod_loop.keep_calls({"agent-w1": calls}) == 3  # as `aether mod answer` keeps an ant's calls
    for fn in (paths.project_root, paths.data_dir):
        fn.cache_clear()
    out = p.run("status", "--timeline").stdout
    w1 = next(line for line in out.splitlines() if line.split()[:1] == ["w1"] or " w1 " in f" {line} ")
    assert w1.endswith("hooks 7 ms in 2 call(s)")  # a time no hook can take is not believed
    assert timeline.HOOKS_SAID in out


def test_the_helpers_time_for_the_run_is_drawn_from_what_its_steps_recorded():
    rows = timeline.rows(SPAWNS, NODES)
    lines = timeline.text("build of phase 1", rows, [], now=T0 + 300, helper=(2400, 9)).splitlines()
    assert lines[0].endswith("58.0k tokens · helper 2.4 s in 9 step(s)")
    assert "helper 212 ms in 3 step(s)" in timeline.text("t", rows, [], now=T0 + 300, helper=(212, 3))
    assert timeline.HELPER_SAID in lines[-1] and "Not recorded here: the time in hooks (" in lines[-1]
    picture = timeline.svg("t", rows, [], now=T0 + 300, helper=(2400, 9))
    texts = [t.text for t in ET.fromstring(picture).iter("{http://www.w3.org/2000/svg}text")]
    assert "helper 2.4 s in 9 step(s)" in texts and timeline.HELPER_SAID in texts
    assert timeline.helper_time({"helper_ms": 5, "helper_steps": 0}) is None  # nothing counted: nothing said


def test_each_step_of_a_build_adds_its_time_to_the_build_run(drive_colony):
    """`next`, every `record` and the Agent hooks' steps add their time to the run they worked on,
    in the write the step makes anyway."""
    p = drive_colony
    action = approved_wave(p)  # next, record lead1, next --approve: three steps
    run = p.load("spawns.json")["runs"][-1]
    assert run["helper_steps"] == 3 and run["helper_ms"] >= 0
    ok(p, "next", "--build", "1")  # the wave handed out again: a step of its own
    assert p.load("spawns.json")["runs"][-1]["helper_steps"] == 4
    for spawn in action["spawns"]:
        ok(p, "record", spawn["id"], "-", input=result())
    run = p.load("spawns.json")["runs"][-1]
    assert run["helper_steps"] == 4 + len(action["spawns"])
    data = p.run("status", "--timeline", "--json").json
    assert data["helper"] == {"ms": run["helper_ms"], "steps": run["helper_steps"]}
    assert f"in {run['helper_steps']} step(s)" in data["text"].splitlines()[0]
