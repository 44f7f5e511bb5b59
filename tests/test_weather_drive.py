"""A limit is weather, not a failure: an ant a usage or rate limit (or an overload) stopped did not
run — nothing fails, no rung of the ladder is spent, its spawn stays to be handed out, the run
stops saying so (exit 15) or waits when asked, and the same command goes on with only the ants that
are missing. Both runtimes: the mod's `answer` and the Queen's hooks (colony/dispatch.py `held`)."""

from __future__ import annotations

import json

import pytest

from aether.rules import drive as rules

from helpers.colony import ok
from helpers.drive import ASSIGNMENT, approved_wave, context, failure_history, hook, result, spawn_rec, spawns_of

USAGE_LIMIT = "API Error: Request rejected (429) · You have reached your usage limit"
AGENT_USAGE_LIMIT = f"Agent terminated early due to an API error: {USAGE_LIMIT} (error type rate_limit, HTTP 429, request id r1)"


@pytest.fixture
def colony(mod_colony):
    return mod_colony


def mod_wave(p):
    """The lead's plan approved under the mod: the first wave's spawn action as the mod gets it."""
    lead = ok(p, "mod", "serve", input={"command": "ant:build", "args": "1"})["action"]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["spawns"][0]["ref"], "agent_id": "agent-lead"}]})
    ok(p, "mod", "answer", input={"ref": lead["spawns"][0]["ref"], "agent_id": "agent-lead", "text": json.dumps(ASSIGNMENT)})
    wave = ok(p, "mod", "serve", input={"command": "ant:build", "args": "1 --approve"})["action"]
    assert [s["id"] for s in wave["spawns"]] == ["w1", "w2"]
    refs = {s["id"]: s["ref"] for s in wave["spawns"]}
    ok(p, "mod", "launched", input={"spawns": [{"ref": r, "agent_id": f"agent-{i}"} for i, r in refs.items()]})
    return refs


def limited(p, ref, agent, error=USAGE_LIMIT, rate_limits=None):
    usage = {"input_tokens": 0, "output_tokens": 0}
    payload = {
        "ref": ref,
        "agent_id": agent,
        "text": "",
        "usage": usage,
        "reason": "error",
        "error": error,
        "rate_limits": rate_limits or [],
    }
    return ok(p, "mod", "answer", input=payload)


def test_under_the_mod_a_usage_limit_is_no_failure_and_the_build_stops_with_its_own_status(colony):
    p = colony
    refs = mod_wave(p)
    said = limited(p, refs["w1"], "agent-w1")
    assert "did not run" in said["line"] and "usage limit" in said["line"]
    assert spawn_rec(p, "w1")["status"] == "dispatched" and spawn_rec(p, "w1")["limited"] == 1
    # its wave mate answers normally, and is recorded
    ok(p, "mod", "answer", input={"ref": refs["w2"], "agent_id": "agent-w2", "text": result(files_created=[])})
    stop = ok(p, "mod", "wait", input={"refs": list(refs.values()), "seconds": 1})
    assert (stop["action"], stop["why"], stop["exit_code"]) == ("stop", "limit", rules.EXIT_STATUS["limit"]) == ("stop", "limit", 15)
    assert "Claude Code's usage limit" in stop["text"] and "w1 (builder) did not run" in stop["text"]
    assert "Nothing failed" in stop["text"] and "/ant:build 1" in stop["text"] and stop["command"] == "/ant:build 1"
    assert failure_history(p) == []  # no failure report, so no retry and no debugger
    nodes = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]["nodes"]
    assert nodes["w2"]["status"] == "completed" and nodes["w1"]["status"] == "running"
    # asked again without the person's command: still held (nothing is sent into the limit)
    assert ok(p, "mod", "wait", input={"refs": [], "seconds": 0})["why"] == "limit"

    # the same command after the limit lifts: only the ant that is missing goes out
    again = ok(p, "mod", "serve", input={"command": "ant:build", "args": "1"})["action"]
    assert [s["id"] for s in again["spawns"]] == ["w1"]
    assert spawns_of(p).get("weather") is None and spawns_of(p)["weather_cleared"]["by"] == "person"
    assert "limited_by" not in spawn_rec(p, "w1")  # an ordinary spawn again: a later hold waits for it while it runs


def test_a_limit_while_a_wave_mate_still_runs_waits_for_it_then_stops(colony):
    p = colony
    refs = mod_wave(p)
    limited(p, refs["w1"], "agent-w1")
    waiting = ok(p, "mod", "wait", input={"refs": list(refs.values()), "seconds": 0.2})
    assert waiting["action"] == "wait" and waiting["refs"] == [refs["w2"]]  # api still runs: not abandoned
    ok(p, "mod", "answer", input={"ref": refs["w2"], "agent_id": "agent-w2", "text": result(files_created=[])})
    assert ok(p, "mod", "wait", input={"refs": [refs["w2"]], "seconds": 1})["why"] == "limit"


@pytest.mark.parametrize(
    "error, kind",
    [
        ("API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit", "rate_limit"),
        ("API Error: 529 Overloaded. This is a server-side issue, usually temporary", "overloaded"),
        ("API Error: 500 Internal server error. This is a server-side issue", "api_error"),
    ],
)
def test_a_rate_limit_or_an_overload_that_outlived_the_retries_holds_the_run_too(colony, error, kind):
    p = colony
    refs = mod_wave(p)
    limited(p, refs["w1"], "agent-w1", error=error)
    ok(p, "mod", "answer", input={"ref": refs["w2"], "agent_id": "agent-w2", "text": result(files_created=[])})
    stop = ok(p, "mod", "wait", input={"refs": list(refs.values()), "seconds": 1})
    assert stop["why"] == "limit" and spawns_of(p)["weather"]["kind"] == kind and failure_history(p) == []


def test_an_api_error_that_is_no_weather_still_takes_the_no_answer_path(colony):
    p = colony
    refs = mod_wave(p)
    out = limited(p, refs["w1"], "agent-w1", error="API Error: 400 · prompt is too long (error type invalid_request)")
    assert "hands it out again" in out["line"] and spawns_of(p).get("weather") is None
    assert spawn_rec(p, "w1")["empty"] == 1 and not spawn_rec(p, "w1").get("limited")


def test_the_reset_a_subscriber_sees_is_shown_and_the_status_band_says_what_holds_the_run(colony):
    p = colony
    refs = mod_wave(p)
    windows = [{"kind": "five_hour", "percentUsed": 100, "resetsAt": "2026-02-04T13:00:00Z"}]
    limited(p, refs["w1"], "agent-w1", rate_limits=windows)
    assert spawns_of(p)["weather"]["resets_at"] == "2026-02-04T13:00:00Z"
    band = ok(p, "mod", "progress", input={})["progress"]
    assert "held by Claude Code's usage limit · resets 13:00 UTC (in 3h00m)" in band
    ok(p, "mod", "answer", input={"ref": refs["w2"], "agent_id": "agent-w2", "text": result(files_created=[])})
    stop = ok(p, "mod", "wait", input={"refs": list(refs.values()), "seconds": 1})
    assert "resets at 13:00 UTC (in 3h00m)" in stop["text"]
    watch = p.run("watch")
    assert watch.code == 0 and "held by Claude Code's usage limit" in watch.stdout, watch.stdout


def test_an_autopilot_run_asked_to_wait_waits_for_the_reset_then_goes_on_by_itself(colony, monkeypatch):
    p = colony
    started = ok(p, "mod", "serve", input={"command": "ant:run", "args": "--wait --auto-approve"})["action"]
    lead = started["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "agent-lead"}]})
    windows = [{"kind": "five_hour", "percentUsed": 100, "resetsAt": "2026-02-04T10:30:00Z"}]
    limited(p, lead["ref"], "agent-lead", rate_limits=windows)
    waiting = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    assert (waiting["action"], waiting["why"], waiting["until"]) == ("wait", "limit", "2026-02-04T10:31:00Z")
    assert waiting["refs"] == [] and "waiting until 10:31 UTC" in waiting["progress"]
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:31:05Z")  # the reset has passed
    back = ok(p, "mod", "wait", input={"refs": [], "seconds": 0})
    assert back["action"] == "spawn" and [s["id"] for s in back["spawns"]] == ["lead1"]
    pilot = [r for r in spawns_of(p)["runs"] if r["command"] == "run"][-1]
    assert pilot["limit_waits"] == 1 and pilot["limit_waited"] == 1860.0 and spawns_of(p)["weather"] is None


def test_a_run_not_asked_to_wait_stops_and_names_the_flag_that_waits(colony):
    p = colony
    started = ok(p, "mod", "serve", input={"command": "ant:run", "args": "--auto-approve"})["action"]
    lead = started["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "agent-lead"}]})
    limited(p, lead["ref"], "agent-lead")
    stop = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    assert (stop["action"], stop["why"], stop["exit_code"]) == ("stop", "limit", 15)
    assert "STOPPED: a usage or rate limit held the ants" in stop["text"] and "/ant:run --wait" in stop["text"]
    assert stop["text"].rstrip().endswith("To continue: /ant:run")


def test_the_config_asks_every_run_to_wait(colony):
    p = colony
    (p.root / ".aether" / "config.yaml").write_text("run:\n  on_limit: wait\n", "utf-8")
    ok(p, "mod", "serve", input={"command": "ant:run", "args": ""})
    assert [r for r in spawns_of(p)["runs"] if r["command"] == "run"][-1]["wait_limits"] is True
    (p.root / ".aether" / "config.yaml").write_text("run:\n  on_limit: later\n", "utf-8")
    bad = p.run("run", "--dry-run")
    assert bad.code == 1 and json.loads(bad.stderr)["code"] == "invalid_config"


# ---------------------------------------------------------------- the markdown runtime (the Queen's hooks)


def queen_wave(p):
    """The first wave handed to the Queen, each call let through by the PreToolUse hook."""
    wave = approved_wave(p)
    calls = {}
    for i, s in enumerate(wave["spawns"]):
        out = hook(p, "pre", {"tool_input": {k: s[k] for k in ("subagent_type", "description", "prompt")}, "tool_use_id": f"t{i}"})
        calls[s["id"]] = (out["hookSpecificOutput"]["updatedInput"], f"t{i}")
    return calls


def test_the_agent_tools_limit_error_holds_the_run_and_the_queen_is_told_to_stop(colony):
    p = colony
    calls = queen_wave(p)
    models, api = calls["w1"], calls["w2"]
    completed = {"status": "completed", "agentId": "a2", "content": [{"type": "text", "text": result(files_created=[])}], "totalTokens": 10}
    hook(p, "post", {"tool_input": api[0], "tool_use_id": api[1], "tool_response": completed})
    out = hook(p, "failure", {"tool_input": models[0], "tool_use_id": models[1], "error": AGENT_USAGE_LIMIT})
    said = context(out)
    assert "w1 did not run — Claude Code's usage limit" in said
    assert "Aether next: stop — show the user this text:" in said and "Stopped by Claude Code's usage limit" in said
    assert spawn_rec(p, "w1")["status"] == "dispatched" and failure_history(p) == []
    assert ok(p, "next")["why"] == "limit"  # the Queen's `aether next` says the same: nothing is sent
    assert [s["id"] for s in ok(p, "next", "--build", "1")["spawns"]] == ["w1"]  # the person's command goes on


def test_a_background_ants_failed_notification_is_read_as_weather(colony):
    p = colony
    calls = queen_wave(p)
    for local, (tool_input, tool_use_id) in calls.items():
        response = {"status": "async_launched", "agentId": f"bg-{local}"}
        hook(p, "post", {"tool_input": tool_input, "tool_use_id": tool_use_id, "tool_response": response})
    note = (
        "<task-notification>\n<task-id>bg-w1</task-id>\n<tool-use-id>t0</tool-use-id>\n<status>failed</status>\n"
        f'<summary>Agent "models builder" failed: {AGENT_USAGE_LIMIT}</summary>\n</task-notification>'
    )
    said = context(hook(p, "prompt", {"prompt": note}))
    assert "w1 did not run" in said and "(waiting for w2)" in said
    assert spawn_rec(p, "w1")["status"] == "dispatched" and spawns_of(p)["weather"]["kind"] == "usage_limit"


def test_a_wave_mates_answer_after_a_limit_brings_the_stop_however_it_is_recorded(colony):
    """w1 met the limit first; w2's answer, recorded as its ant stops and again from its
    notification, gives the Queen the stop: nobody is left waiting for w1, which goes out again
    only when the limit lifts."""
    p = colony
    calls = queen_wave(p)
    for local, (tool_input, tool_use_id) in calls.items():
        hook(
            p,
            "post",
            {"tool_input": tool_input, "tool_use_id": tool_use_id, "tool_response": {"status": "async_launched", "agentId": f"bg-{local}"}},
        )
    failed = (
        "<task-notification>\n<task-id>bg-w1</task-id>\n<tool-use-id>t0</tool-use-id>\n<status>failed</status>\n"
        f'<summary>Agent "w1 builder" failed: {AGENT_USAGE_LIMIT}</summary>\n</task-notification>'
    )
    assert "(waiting for w2)" in context(hook(p, "prompt", {"prompt": failed}))
    first = ok(p, "record", "w2", "-", input=result(files_created=[]))
    assert first["waiting"] == [] and first["next"]["why"] == "limit", first
    done = (
        "<task-notification>\n<task-id>bg-w2</task-id>\n<tool-use-id>t1</tool-use-id>\n<status>completed</status>\n"
        f'<summary>Agent "w2 builder" finished</summary>\n<result>{result(files_created=[])}</result>\n</task-notification>'
    )
    said = context(hook(p, "prompt", {"prompt": done}))
    assert "w2 was recorded before" in said and "(waiting for" not in said and "usage limit" in said, said
    assert spawn_rec(p, "w1")["status"] == "dispatched"  # not failed, not sent again while the limit holds


def test_an_agent_call_that_keeps_failing_is_sent_at_most_three_times(colony):
    p = colony
    for n in range(1, 4):
        call = (ok(p, "next", "--build", "1") if n == 1 else ok(p, "next"))["spawns"][0]
        tool_input = hook(
            p, "pre", {"tool_input": {k: call[k] for k in ("subagent_type", "description", "prompt")}, "tool_use_id": f"t{n}"}
        )
        tool_input = tool_input["hookSpecificOutput"]["updatedInput"]
        said = context(hook(p, "failure", {"tool_input": tool_input, "tool_use_id": f"t{n}", "error": "the agent process crashed"}))
        assert "the agent process crashed" in said
    stop = ok(p, "next")
    assert (stop["action"], stop["why"]) == ("stop", "failed_calls")
    assert "lead1 (ant:route-setter) was sent 3 times" in stop["text"] and "the agent process crashed" in stop["text"]
    assert ok(p, "next", "--build", "1")["spawns"][0]["id"] == "lead1"  # the person's command: counted afresh


# ---------------------------------------------------------------- a finished build's exit status


def test_a_build_that_ends_with_failed_tasks_exits_12_under_the_mod():
    assert rules.exit_status("done", None, "failed") == 12
    assert rules.exit_status("done", None, "completed") == 0


def test_a_build_that_finishes_with_a_failed_task_ends_with_12_under_the_mod(colony):
    """The README promises 12 for a phase that ends with failed tasks: a `done` whose phase failed
    is no success (it exited 0 before)."""
    from helpers.colony import write
    from helpers.drive import drive

    p = colony
    approved_wave(p)
    write(p, "src/todo.py")
    ok(p, "record", "w1", "-", input=result(files_created=["src/todo.py"]))
    failed = {"task": "1.3", "error": "KeyError: 'id'", "root_cause": "?", "suggested_fix": "?", "confidence": 40}
    answer = (
        "```json\n"
        + json.dumps({"status": "failed", "summary": "no", "files_created": [], "files_modified": [], "failure": failed})
        + "\n```"
    )
    debug = ok(p, "record", "w2", "-", input=answer)["next"]
    undiagnosable = "```json\n" + json.dumps({"status": "failed", "diagnosis": "UNDIAGNOSABLE: no idea", "fix_applied": False}) + "\n```"
    verified = '```json\n{"passed": true, "score": 90, "checks": [], "issues": []}\n```'
    end = drive(p, ok(p, "record", debug["spawns"][0]["id"], "-", input=undiagnosable)["next"], [verified])
    plan = json.loads((p.data / "PROJECT_PLAN.json").read_text("utf-8"))
    assert plan["phases"][0]["status"] == "failed" and (end["action"], end["outcome"]) == ("done", "failed")
    # where the mod's loop meets that end (its last wait), it ends with the abort's status
    scope = spawns_of(p)["runs"][-1]["scope"]
    served = ok(p, "mod", "wait", input={"refs": [], "scope": scope, "seconds": 0})
    assert (served["action"], served["outcome"], served["exit_code"]) == ("done", "failed", 12)


def test_a_stop_asked_while_a_run_waits_out_a_limit_stops_it(colony):
    p = colony
    lead = ok(p, "mod", "serve", input={"command": "ant:run", "args": "--wait --auto-approve"})["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "agent-lead"}]})
    limited(p, lead["ref"], "agent-lead")
    assert ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})["why"] == "limit"
    ok(p, "run", "--stop")  # from any terminal
    stop = ok(p, "mod", "wait", input={"refs": [], "seconds": 0})
    assert (stop["action"], stop["why"], stop["exit_code"]) == ("stop", "user", 14) and "as asked" in stop["text"]


def test_a_run_waits_twelve_hours_at_most_on_the_wall_clock_from_its_first_wait(colony, monkeypatch):
    p = colony
    lead = ok(p, "mod", "serve", input={"command": "ant:run", "args": "--wait --auto-approve"})["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "agent-lead"}]})
    limited(p, lead["ref"], "agent-lead")  # no reset time: a growing pause
    assert ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})["until"] == "2026-02-04T10:05:00Z"
    # eleven hours and fifty-eight minutes on — each ant that went out met the limit again
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T21:58:00Z")
    lead2 = ok(p, "mod", "serve", input={"command": "ant:run", "args": "--wait"})["action"]["spawns"][0]  # its clock kept
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead2["ref"], "agent_id": "agent-lead-2"}]})
    limited(p, lead2["ref"], "agent-lead-2")
    stop = ok(p, "mod", "wait", input={"refs": [lead2["ref"]], "seconds": 0})
    assert (stop["action"], stop["why"]) == ("stop", "limit")  # a next pause would pass 12 hours in all


def test_a_run_asked_to_wait_under_the_markdown_runtime_says_waiting_needs_the_mod(colony):
    p = colony
    lead = ok(p, "run", "--wait", "--auto-approve")["spawns"][0]
    out = hook(p, "pre", {"tool_input": {k: lead[k] for k in ("subagent_type", "description", "prompt")}, "tool_use_id": "t1"})
    tool_input = out["hookSpecificOutput"]["updatedInput"]
    said = context(hook(p, "failure", {"tool_input": tool_input, "tool_use_id": "t1", "error": AGENT_USAGE_LIMIT}))
    assert "only the plugin's mod can wait" in said and "/ant:run --wait" not in said


def test_an_account_the_api_refuses_is_its_own_stop_not_a_limit(colony):
    p = colony
    refs = mod_wave(p)
    limited(p, refs["w1"], "agent-w1", error="API Error: 401 · Invalid API key (error type authentication_failed, HTTP 401)")
    ok(p, "mod", "answer", input={"ref": refs["w2"], "agent_id": "agent-w2", "text": result(files_created=[])})
    stop = ok(p, "mod", "wait", input={"refs": list(refs.values()), "seconds": 1})
    assert (stop["action"], stop["why"], stop["exit_code"]) == ("stop", "api_refused", 14)
    assert "no ant will until that is fixed" in stop["text"] and "--wait" not in stop["text"]


def test_a_stop_asked_while_waiting_is_heard_where_no_spend_guard_asks_too(colony, monkeypatch):
    """The lessons ant of a run goes out without the autopilot's guard: the wait itself hears it."""
    from aether.colony import dispatch

    p = colony
    lead = ok(p, "mod", "serve", input={"command": "ant:run", "args": "--wait --auto-approve"})["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "agent-lead"}]})
    limited(p, lead["ref"], "agent-lead")
    ok(p, "run", "--stop")
    monkeypatch.chdir(p.root)
    build = next(r for r in spawns_of(p)["runs"] if r["command"] == "build")
    stop = dispatch.held(build, [])
    assert (stop["action"], stop["why"], stop["command"]) == ("stop", "user", "/ant:run")
    assert "Stopped while waiting out Claude Code's usage limit, as asked" in stop["text"]
    assert not [r for r in spawns_of(p)["runs"] if r["command"] == "run"][-1]["stop_requested"]


def test_the_queen_typing_the_builds_command_inside_a_run_neither_lifts_a_hold_nor_resets_the_counts(colony):
    """Only the person's command lifts a limit's hold and counts failed calls afresh — not a Queen
    who types `aether next --build N` inside an /ant:run (it goes on with the run, or is refused)."""
    p = colony
    lead = ok(p, "run", "--auto-approve")["spawns"][0]
    tool_input = hook(p, "pre", {"tool_input": {k: lead[k] for k in ("subagent_type", "description", "prompt")}, "tool_use_id": "t1"})
    tool_input = tool_input["hookSpecificOutput"]["updatedInput"]
    hook(p, "failure", {"tool_input": tool_input, "tool_use_id": "t1", "error": "the agent process crashed"})
    assert spawn_rec(p, "lead1")["failed_calls"] == 1
    refused = p.run("next", "--build", "2")
    assert refused.code == 2 and refused.error["code"] == "build_running"
    ok(p, "next", "--build", "1")  # the run's own phase: goes on with the run
    assert spawn_rec(p, "lead1")["failed_calls"] == 1  # still counted
