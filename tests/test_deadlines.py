"""A hung ant has a deadline (rules/deadlines.py): each spawn carries its caste's deadline
(`deadlines:` in .aether/config.yaml over the defaults); past it, under the mod, `aether mod wait`
tells the mod to stop the ant, which is handed out once more; stopped a second time before it
answers — at its deadline, or by Claude Code's watchdog — the run stops (why `deadline`, exit 14)
saying which ant, its deadline, what it was doing and what goes on. Nothing fails; its spend
counts. The markdown runtime counts the stops Claude Code reports (a cut Agent call, a stalled
or killed background ant). The clock is pinned (AETHER_NOW) and moved by the tests."""

from __future__ import annotations

import json

import pytest

from aether.core.exceptions import AetherError
from aether.rules import deadlines as rules
from aether.rules import drive as drive_rules

from helpers.colony import ok
from helpers.drive import NOW, approved_wave, context, failure_history, hook, ran, spawn_rec

LATER = "2026-02-04T10:16:00Z"  # 16 minutes on: past a route-setter's 15m
STALLED = "Agent stalled: no progress for 600s (stream watchdog did not recover)"


@pytest.fixture
def colony(mod_colony):
    return mod_colony


def config(p, text):
    (p.root / ".aether" / "config.yaml").write_text(text, "utf-8")


def lead_launched(p, agent, monkeypatch, at=NOW):
    """The build's first action (the Phase Lead) served to the mod and launched at `at` as `agent`."""
    monkeypatch.setenv("AETHER_NOW", at)
    out = ok(p, "mod", "serve", input={"command": "ant:build", "args": "1"})["action"]
    if out["action"] == "stop":
        return out
    lead = out["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": agent}]})
    return lead


# ---------------------------------------------------------------- the rule


def test_durations_read_as_a_person_writes_them_and_print_back_the_same():
    assert [rules.parse(v, "deadlines.builder") for v in ("45m", "1h30m", "90s", "2h", " 1H 5M ")] == [2700, 5400, 90, 7200, 3900]
    assert [rules.fmt(s) for s in (2700, 5400, 90, 7200, 3, 0)] == ["45m", "1h30m", "1m30s", "2h", "3s", "0s"]
    for bad in ("45", 45, "", "m", "ten minutes", "0s", "25h", True, None):
        with pytest.raises(AetherError) as caught:
            rules.parse(bad, "deadlines.builder")
        assert caught.value.code == "invalid_config" and "deadlines.builder" in caught.value.message


def test_every_caste_has_a_default_and_builders_get_longer_than_watchers():
    table = rules.table()
    assert set(table) == set(rules.DEFAULTS) and all(60 <= s <= 3600 for s in table.values())
    assert table["builder"] > table["watcher"] > table["scout"]
    assert rules.for_agent("ant:builder", rules.table({"builder": 90})) == 90
    assert rules.for_agent("general-purpose") is None


def test_a_running_ant_reads_its_time_against_its_deadline():
    launched = {"local": "w1", "subagent_type": "ant:builder", "launched_at": "2026-02-04T10:00:00Z", "deadline_s": 1800}
    at = 1_770_199_200.0  # 2026-02-04T10:00:00Z
    assert rules.ant_line(launched, at + 185) == "w1 builder 3m05s/30m"
    assert not rules.overdue(launched, at + 1799) and rules.overdue(launched, at + 1800)
    assert rules.ant_line(launched, at + 1870) == "w1 builder 31m10s/30m past its deadline"
    assert rules.ant_line({**launched, "deadline_s": None}, at + 5) == "w1 builder 5s"  # a spawn handed out before deadlines
    assert rules.stalled_for(f'Agent "w1 builder" failed: {STALLED}') == 600 and rules.stalled_for("done") is None
    assert rules.doing({"tool": "Bash", "command": "pytest -q", "exit": 1}) == "its last call was Bash `pytest -q` (exit 1)"
    assert rules.doing(None) == "it had made no tool call"


# ---------------------------------------------------------------- the setting


def test_the_config_sets_a_castes_deadline_and_each_spawn_carries_it(colony):
    p = colony
    config(p, "deadlines:\n  route-setter: 2m\n  builder: 1h\n")
    lead = ok(p, "next", "--build", "1")
    assert lead["spawns"][0]["id"] == "lead1" and spawn_rec(p, "lead1")["deadline_s"] == 120
    ok(p, "record", "lead1", "-", input=json.dumps({"phase": 1, "workers": [{"id": "api", "caste": "builder", "tasks": ["1.1"]}]}))
    wave = ok(p, "next", "--build", "1", "--approve")
    assert spawn_rec(p, wave["spawns"][0]["id"])["deadline_s"] == 3600
    assert spawn_rec(p, "lead1")["deadline_s"] == 120


@pytest.mark.parametrize(
    "text, key, says",
    [
        ("deadlines:\n  bulder: 45m\n", "deadlines.bulder", "did you mean builder?"),
        ("deadlines:\n  builder: 45\n", "deadlines.builder", "a duration such as 45m, 1h30m or 90s, not '45'"),
        ("deadline:\n  builder: 45m\n", "deadline", "did you mean deadlines?"),
    ],
)
def test_a_deadline_that_cannot_be_read_is_refused_naming_it(colony, text, key, says):
    p = colony
    config(p, text)
    bad = p.run("next", "--build", "1")
    err = json.loads(bad.stderr)
    assert bad.code == 1 and err["code"] == "invalid_config" and err["key"] == key and says in err["error"], err


# ---------------------------------------------------------------- under the mod


def test_past_its_deadline_the_mod_is_told_to_stop_the_ant_then_it_goes_out_once_more(colony, monkeypatch):
    p = colony
    lead = lead_launched(p, "a1", monkeypatch)
    waiting = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    assert waiting["action"] == "wait" and waiting["stop"] == [] and "lead1 route-setter 0s/15m" in waiting["progress"]

    monkeypatch.setenv("AETHER_NOW", LATER)
    asked = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    assert asked["action"] == "wait" and asked["stop"] == ["a1"]
    assert asked["line"] == "lead1 (route-setter) is past its deadline (15m): stopping it"
    assert "lead1 route-setter 16m00s/15m past its deadline" in asked["progress"]
    assert ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})["stop"] == []  # asked once
    # the stop worked: Claude Code ends the ant, `aborted`, listed killed
    ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0, "stopped": [{"agent_id": "a1", "ok": True, "text": "stopped"}]})
    said = ok(
        p,
        "mod",
        "answer",
        input={"ref": lead["ref"], "agent_id": "a1", "text": "", "reason": "aborted", "status": "killed", "usage": {"output_tokens": 70}},
    )
    assert (
        said["line"] == "lead1 did not answer — it ran past its deadline (15m) and was stopped; nothing failed, it is handed out once more"
    )
    r = spawn_rec(p, "lead1")
    assert (r["status"], r["deadline_stops"], r["deadline_hit"]["how"], r["usage"]["total_tokens"]) == ("dispatched", 1, "deadline", 70)
    again = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    assert again["action"] == "spawn" and [s["ref"] for s in again["spawns"]] == [lead["ref"]]
    assert again["line"] == "phase 1 · spawn lead1 route-setter (lead1 once more: stopped before it answered)"
    assert failure_history(p) == [] and "70" in (p.data / "costs.json").read_text("utf-8")  # nothing failed; its spend counts


def test_stopped_a_second_time_the_build_stops_with_its_own_why_and_exit_14(colony, monkeypatch):
    p = colony
    lead = lead_launched(p, "a1", monkeypatch)
    ran(p, lead["ref"], [{"command": "git log --oneline", "exit": 0}])  # what it was doing (its kept calls)
    for agent, at in (("a1", LATER), ("a2", "2026-02-04T10:40:00Z")):
        monkeypatch.setenv("AETHER_NOW", at)
        assert ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})["stop"] == [agent]
        ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": agent, "text": "", "reason": "aborted", "status": "killed"})
        out = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
        if agent == "a1":
            assert out["action"] == "spawn"
            monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:24:00Z")
            ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a2"}]})
    assert (
        (out["action"], out["why"], out["exit_code"])
        == ("stop", "deadline", drive_rules.EXIT_STATUS["stopped"])
        == ("stop", "deadline", 14)
    )
    text = out["text"]
    assert "lead1 (route-setter) was stopped 2 times before it answered" in text and "it ran past its deadline (15m)" in text
    assert "Its deadline: 15m (deadlines: route-setter: … in .aether/config.yaml)" in text
    assert "its last call was Bash `git log --oneline` (exit 0)" not in text  # a2 made no call: its own run's calls
    assert "it had made no tool call" in text and "Nothing failed" in text and "To go on: /ant:build 1" in text
    assert out["command"] == "/ant:build 1" and failure_history(p) == []
    assert ok(p, "mod", "wait", input={"refs": [], "seconds": 0})["why"] == "deadline"  # not sent again by itself
    # the person's command goes on: the ant goes out again, its count started afresh
    back = ok(p, "mod", "serve", input={"command": "ant:build", "args": "1"})["action"]
    assert [s["id"] for s in back["spawns"]] == ["lead1"] and spawn_rec(p, "lead1")["deadline_stops"] == 0


def test_a_stop_heard_twice_counts_once(colony, monkeypatch):
    """The mod keeps an answer in its spool before it hands it in, and a wait may take the kept copy
    first; Claude Code may notify a background ant's end more than once."""
    p = colony
    lead = lead_launched(p, "a1", monkeypatch)
    monkeypatch.setenv("AETHER_NOW", LATER)
    ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    aborted = {"ref": lead["ref"], "agent_id": "a1", "text": "", "reason": "aborted", "status": "killed", "usage": {"output_tokens": 9}}
    spool = p.data / "spool"
    spool.mkdir(exist_ok=True)
    (spool / "a1.json").write_text(json.dumps(aborted), "utf-8")
    ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})  # takes the kept answer
    again = ok(p, "mod", "answer", input=aborted)  # the mod's own call, after
    assert again["line"] == "lead1 was interrupted: it is handed out again"  # no second stop: counted once
    assert spawn_rec(p, "lead1")["deadline_stops"] == 1 and spawn_rec(p, "lead1")["usage"]["total_tokens"] == 9


def test_what_the_ant_was_doing_is_its_last_kept_call(colony, monkeypatch):
    p = colony
    lead = lead_launched(p, "a1", monkeypatch)
    ran(p, lead["ref"], [{"command": "python3 -m pytest -q", "exit": 1}])
    monkeypatch.setenv("AETHER_NOW", LATER)
    ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a1", "text": "", "reason": "aborted", "status": "killed"})
    assert spawn_rec(p, "lead1")["deadline_hit"]["doing"] == "its last call was Bash `python3 -m pytest -q` (exit 1)"


def test_a_stop_that_fails_is_said_and_the_ant_is_never_handed_out_while_it_may_run(colony, monkeypatch):
    p = colony
    lead = lead_launched(p, "a1", monkeypatch)
    monkeypatch.setenv("AETHER_NOW", LATER)
    ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    failed = ok(
        p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0, "stopped": [{"agent_id": "a1", "ok": False, "text": "no such task"}]}
    )
    assert failed["action"] == "wait" and failed["stop"] == []
    assert failed["line"].startswith("lead1 could not be stopped (no such task): it is not handed out again while it may still run")
    assert "/tasks" in failed["line"] and spawn_rec(p, "lead1")["status"] == "launched"
    status = p.run("status").stdout
    assert "lead1 route-setter 16m00s/15m past its deadline" in status and "could not be stopped (no such task)" in status
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:17:30Z")  # a while later: asked again
    assert ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})["stop"] == ["a1"]


def test_an_ant_claude_codes_watchdog_stopped_counts_a_stop_and_an_interrupt_does_not(colony, monkeypatch):
    p = colony
    lead = lead_launched(p, "a1", monkeypatch)
    stalled = ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a1", "text": "", "reason": "aborted", "status": "failed"})
    assert "Claude Code stopped it: its model request made no progress" in stalled["line"] and spawn_rec(p, "lead1")["deadline_stops"] == 1
    ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a2"}]})
    interrupted = ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a2", "text": "", "reason": "aborted", "status": None})
    assert interrupted["line"] == "lead1 was interrupted: it is handed out again" and spawn_rec(p, "lead1")["deadline_stops"] == 1


def test_an_ant_stopped_at_its_deadline_whose_end_goes_unheard_counts_its_stop(colony, monkeypatch):
    p = colony
    lead = lead_launched(p, "a1", monkeypatch)
    monkeypatch.setenv("AETHER_NOW", LATER)
    ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    for _ in range(2):  # listed killed twice, its turn.complete never came
        out = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0, "statuses": {"a1": "killed"}})
    assert out["action"] == "spawn" and spawn_rec(p, "lead1")["deadline_stops"] == 1


def test_an_autopilot_run_stops_at_the_second_stop_and_goes_on_where_it_stood(colony, monkeypatch):
    p = colony
    lead = ok(p, "mod", "serve", input={"command": "ant:run", "args": "--auto-approve"})["action"]["spawns"][0]
    for agent in ("a1", "a2"):
        ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": agent}]})
        ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": agent, "text": "", "reason": "aborted", "status": "failed"})
        out = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    assert (out["action"], out["why"], out["exit_code"]) == ("stop", "deadline", 14)
    assert "STOPPED: an ant was stopped twice before it answered" in out["text"]
    assert out["text"].rstrip().endswith("To continue: /ant:run") and "To go on:" not in out["text"]


# ---------------------------------------------------------------- the markdown runtime (the Queen's hooks)


def queen_lead(p, n):
    call = (ok(p, "next", "--build", "1") if n == 1 else ok(p, "next"))["spawns"][0]
    out = hook(p, "pre", {"tool_input": {k: call[k] for k in ("subagent_type", "description", "prompt")}, "tool_use_id": f"t{n}"})
    return out["hookSpecificOutput"]["updatedInput"]


def background(p, wave):
    """The wave's ants sent by the Queen and run in the background (an interactive session)."""
    for i, s in enumerate(wave["spawns"]):
        tool_input = hook(p, "pre", {"tool_input": {k: s[k] for k in ("subagent_type", "description", "prompt")}, "tool_use_id": f"t{i}"})
        response = {"status": "async_launched", "agentId": f"bg-{s['id']}"}
        hook(p, "post", {"tool_input": tool_input["hookSpecificOutput"]["updatedInput"], "tool_use_id": f"t{i}", "tool_response": response})


def test_an_agent_call_claude_code_cut_is_a_stop_and_the_second_stops_the_build(colony):
    """A foreground ant whose model request hung: Claude Code's watchdog cuts the Agent call
    (PostToolUseFailure, `[Request interrupted by user for tool use]`, is_interrupt)."""
    p = colony
    for n in (1, 2):
        tool_input = queen_lead(p, n)
        payload = {"tool_input": tool_input, "tool_use_id": f"t{n}", "error": rules.INTERRUPTED, "is_interrupt": True}
        said = context(hook(p, "failure", payload))
        assert said.startswith("Aether: lead1 did not answer — Claude Code stopped it: its Agent call was cut ([Request interrupted"), said
        if n == 1:
            assert "it is handed out once more" in said and "Aether next: spawn in ONE message" in said and '"lead1 route-setter"' in said
    assert "stopped 2 times without an answer: the run stops" in said
    assert "Aether next: stop — show the user this text:" in said and "lead1 (route-setter) was stopped 2 times" in said
    stop = ok(p, "next")
    assert (stop["action"], stop["why"]) == ("stop", "deadline") and failure_history(p) == []
    assert spawn_rec(p, "lead1")["deadline_stops"] == 2 and not spawn_rec(p, "lead1").get("failed_calls")
    assert ok(p, "next", "--build", "1")["spawns"][0]["id"] == "lead1"  # the person's command goes on


def test_a_background_ants_stalled_or_killed_notification_is_a_stop(colony):
    p = colony
    background(p, approved_wave(p))

    def note(agent, status, summary):
        return (
            f"<task-notification>\n<task-id>{agent}</task-id>\n<status>{status}</status>\n"
            f"<summary>{summary}</summary>\n</task-notification>"
        )

    said = context(hook(p, "prompt", {"prompt": note("bg-w1", "failed", f'Agent "w1 builder" failed: {STALLED}')}))
    assert "w1 did not answer — Claude Code stopped it: its model request made no progress for 10m (Claude Code's watchdog)" in said
    assert "it is handed out once more" in said and "(waiting for w2)" in said
    assert (spawn_rec(p, "w1")["status"], spawn_rec(p, "w1")["deadline_hit"]["how"]) == ("dispatched", "stalled")
    said = context(hook(p, "prompt", {"prompt": note("bg-w2", "killed", 'Agent "w2 builder" was stopped by the user')}))
    assert 'w2 did not answer — it was stopped in Claude Code (Agent "w2 builder" was stopped by the user)' in said
    assert spawn_rec(p, "w2")["deadline_hit"]["how"] == "stopped" and failure_history(p) == []


# ---------------------------------------------------------------- the display


def test_status_and_watch_list_each_running_ant_against_its_deadline_and_how_to_stop_one(colony, monkeypatch):
    p = colony
    background(p, approved_wave(p))
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:03:05Z")
    view = p.run("status", "--json").json
    assert [a["line"] for a in view["running"]] == ["w1 builder 3m05s/30m", "w2 builder 3m05s/30m"]
    assert view["running"][0]["deadline_s"] == 1800 and view["running"][0]["past_deadline"] is False
    assert "  w1 builder 3m05s/30m · wave 1 · tasks 1.1, 1.2" in p.run("status").stdout
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:31:10Z")
    shown = p.run("watch").stdout
    assert "w1 builder 31m10s/30m past its deadline · wave 1" in shown
    hint = " ".join(line.strip() for line in shown.split("tasks 1.1, 1.2\n", 1)[1].split("\n  w2 ", 1)[0].splitlines())
    assert hint.startswith("past its deadline: stop it in Claude Code (`/tasks`, or Ctrl+X Ctrl+K twice") and "end the process" in hint
    assert all(len(line) <= 100 for line in shown.splitlines())
