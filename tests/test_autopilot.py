"""The autopilot (`aether run`): its stop rules and the cap arithmetic (pure), and whole runs
through the CLI, with every answer recorded the way Claude Code's PostToolUse hook records it —
from the Agent result captured from Claude Code (tests/fixtures/agent_post_tool_use.json)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from aether.core.exceptions import AetherError
from aether.rules import autopilot, models, spend

from helpers.autopilot import PAYLOAD, WIDE, answer, block, brief_of, built, colony_maker, drive, failed, lead_plan, post, snapshot
from helpers.colony import ok
from helpers.drive import with_tests


@pytest.fixture
def colony(project, monkeypatch):
    return colony_maker(project, monkeypatch)


# ---------------------------------------------------------------- the stop rules (pure)


def view(**kw):
    phases = kw.pop("phases", [{"id": 1, "status": "completed"}, {"id": 2, "status": "pending"}, {"id": 3, "status": "pending"}])
    return {"state": "READY", "current": 1, "phases": phases, "range": {"from": 1, "to": 3}, "built": [1], "failed_here": [], **kw}


def test_rules_completion_then_a_running_build_then_no_plan():
    assert autopilot.next_run_step(view(state="COMPLETED")) == {"do": "done", "why": "completed"}
    assert autopilot.next_run_step(view(state="EXECUTING", building=2)) == {"do": "build", "phase": 2}
    assert autopilot.next_run_step(view(state="PLANNING")) == {"do": "stop", "why": "no_plan"}


def test_rules_a_done_phase_is_finished_then_closed_as_continue_closes_it():
    assert autopilot.next_run_step(view(unfinished=1)) == {"do": "build", "phase": 1}  # its lessons first
    assert autopilot.next_run_step(view()) == {"do": "continue", "phase": 1}  # the archivist, phase-advance


def test_rules_closing_a_phase_lessons_then_the_archivist_then_advance():
    from aether.rules import drive as drive_rules

    def step(**kw):
        base = {
            "state": "READY",
            "done": True,
            "advanced": False,
            "lessons": {"due": False, "done": False},
            "archivist": {"due": False, "answered": False},
        }
        return drive_rules.next_continue_step({**base, **kw})["do"]

    assert step(done=False) == "stop"
    assert step(lessons={"due": True, "done": False}, archivist={"due": True, "answered": False}) == "lessons"
    assert step(lessons={"due": True, "done": True}, archivist={"due": True, "answered": False}) == "spawn_archivist"
    assert step(archivist={"due": True, "answered": True}) == "advance"
    assert step() == "advance" and step(advanced=True) == "done"
    assert step(state="COMPLETED", done=False) == "done"
    assert step(state="COMPLETED", lessons={"due": True, "done": False}) == "lessons"


def test_rules_the_range_the_phase_count_a_failed_phase_and_skips():
    two = [{"id": 1, "status": "completed"}, {"id": 2, "status": "completed"}, {"id": 3, "status": "pending"}]
    assert autopilot.next_run_step(view(current=2, phases=two, range={"from": 1, "to": 2}, built=[1, 2])) == {"do": "continue", "phase": 2}
    after = [{"id": 1, "status": "completed"}, {"id": 2, "status": "pending"}, {"id": 3, "status": "pending"}]
    assert autopilot.next_run_step(view(current=2, phases=after, range={"from": 1, "to": 1})) == {"do": "done", "why": "range"}
    assert autopilot.next_run_step(view(current=2, phases=after, range={"from": 1, "to": 3, "max_phases": 1})) == {
        "do": "done",
        "why": "max_phases",
    }
    failed_two = [{"id": 1, "status": "completed"}, {"id": 2, "status": "failed"}, {"id": 3, "status": "pending"}]
    assert autopilot.next_run_step(view(current=2, phases=failed_two, failed_here=[2])) == {"do": "stop", "why": "phase_failed", "phase": 2}
    assert autopilot.next_run_step(view(current=2, phases=failed_two, range={"from": 3, "to": 3})) == {"do": "skip", "phase": 2}
    assert autopilot.next_run_step(view(current=2, phases=failed_two)) == {"do": "build", "phase": 2}


def test_the_range_from_the_options():
    phases = [{"id": 1, "status": "completed"}, {"id": 2, "status": "pending"}, {"id": 3, "status": "pending"}]
    assert autopilot.check_range(phases, None, None, None, None) == {"from": 2, "to": 3, "max_phases": None, "only": False}
    assert autopilot.check_range(phases, None, None, 3, None)["from"] == 3
    for bad, code in (
        ((4, None, None, None), "unknown_phase"),
        ((3, 2, None, None), "usage_error"),
        ((2, None, 2, None), "usage_error"),
        ((None, None, None, 0), "usage_error"),
    ):
        with pytest.raises(AetherError) as exc:
            autopilot.check_range(phases, *bad)
        assert exc.value.code == code


# ---------------------------------------------------------------- the cap arithmetic (pure)


def test_amounts_parse_and_print():
    assert [spend.parse_amount(t) for t in ("2M", "500k", "1.5m", "250000", "250_000", "3 tokens")] == [
        2_000_000,
        500_000,
        1_500_000,
        250_000,
        250_000,
        3,
    ]
    assert spend.parse_amount("1.9") == 2 and spend.parse_amount(800_000) == 800_000
    for bad in (
        "",
        "two million",
        "-5k",
        "0",
        "1e3",
        "99999999999",
        True,
        "5 TB",
        "1" + "0" * 400,
        10**30,
        "999999999999999999k",
        "５k",
        float("inf"),
    ):
        with pytest.raises(AetherError) as exc:
            spend.parse_amount(bad)
        assert exc.value.code == "invalid_amount"
    assert [spend.fmt(n) for n in (950, 1234, 45_000, 1_234_567, 12_000_000)] == ["950", "1.23k", "45k", "1.23M", "12M"]


def test_usage_from_a_real_agent_result_adds_up_per_caste_and_model():
    response = PAYLOAD["tool_response"]
    from aether.state.spawns import usage_of

    usage = usage_of(response)
    assert usage["total_tokens"] == response["totalTokens"] == 1230
    assert usage["model"] == response["resolvedModel"]
    b = spend.bucket()
    spend.add(b, "scout", usage, usage["model"])
    spend.add(b, "scout", usage, usage["model"])
    spend.add(b, "builder", {"total_tokens": 40_000, "duration_ms": 1000}, None)
    spend.add(b, "builder", None, None)  # no usage (hooks off): counted as a spawn, not as tokens
    assert (b["tokens"], b["spawns"], b["unmetered"]) == (42_460, 4, 1)
    assert b["castes"]["scout"]["models"] == {response["resolvedModel"]: {"tokens": 2460, "spawns": 2}}
    assert b["castes"]["builder"]["models"][spend.UNMETERED] == {"tokens": 40_000, "spawns": 2}
    total = spend.merge([b, b])
    assert (total["tokens"], total["castes"]["scout"]["spawns"]) == (84_920, 4)


def test_the_cap_stops_an_action_that_would_pass_it_and_a_cap_already_reached():
    caps = {"run": 100_000, "phase": 50_000}
    assert spend.check(10_000, 10_000, 40_000, caps) is None
    assert spend.check(10_000, 10_000, 40_001, caps) == {"cap": "phase", "limit": 50_000, "spent": 10_000, "next": 40_001, "reached": False}
    assert spend.check(70_000, 0, 40_000, caps)["cap"] == "run"
    assert spend.check(100_000, 0, 0, caps)["reached"] is True


def test_estimates_learn_from_what_the_colony_spent():
    assert spend.per_spawn("builder") == spend.PER_SPAWN["builder"]
    history = {"castes": {"builder": {"tokens": 30_000, "spawns": 3, "metered": 3}}}
    assert spend.per_spawn("builder", history) == 10_000
    assert spend.estimate(["builder", "builder", "watcher"], history) == 20_000 + spend.PER_SPAWN["watcher"]
    # spawns whose answers carried no usage do not pull the average down
    b = spend.bucket()
    spend.add(b, "builder", {"total_tokens": 40_000}, None)
    for _ in range(9):
        spend.add(b, "builder", None, None)
    assert spend.per_spawn("builder", b) == 40_000


def test_models_per_caste_and_mode():
    assert models.for_agent("ant:scout", "STANDARD") == "haiku"
    assert models.for_agent("ant:builder", "STANDARD") is None  # the session's model
    assert models.for_agent("ant:scout", "FULL") == "sonnet"
    assert models.for_agent("ant:builder", "LIGHTWEIGHT", {"builder": "sonnet"}) == "sonnet"
    assert models.for_agent("ant:scout", "LIGHTWEIGHT", {"scout": "inherit"}) is None
    assert models.for_agent("ant:bug-researcher", "STANDARD") is None
    with pytest.raises(AetherError):
        models.check("builder", "gpt-5", "models.builder")


# ---------------------------------------------------------------- whole runs through the CLI


def test_a_three_phase_run_goes_unattended_to_completed_and_counts_its_cost(colony):
    p = colony()
    first = ok(p, "run")
    assert first["action"] == "spawn" and first["autopilot"].startswith("r-")
    final, spawned = drive(p, first)
    assert spawned == ["lead1", "w1"] * 3
    assert final["action"] == "done" and final["why"] == "completed" and final["command"] is None
    assert "DONE: the colony is COMPLETED" in final["text"] and "COLONY COMPLETE" in final["text"]
    assert "✓ phase 1 Module 1" in final["text"] and "✓ phase 3 Module 3" in final["text"]
    assert "Spent: 60k tokens in 6 spawns" in final["text"]
    assert p.load("COLONY_STATE.json")["state"] == "COMPLETED"
    costs = p.load("costs.json")
    (run,) = costs["runs"]
    assert {k: b["tokens"] for k, b in run["phases"].items()} == {"1": 20_000, "2": 20_000, "3": 20_000}
    summary = ok(p, "completion-summary", "--json")
    assert summary["cost"]["tokens"] == 60_000 and summary["cost"]["phases"] == {"1": 20_000, "2": 20_000, "3": 20_000}
    assert summary["cost"]["castes"]["builder"]["models"] == {"claude-opus-5-5": {"tokens": 30_000, "spawns": 3}}
    assert "Cost: 60k tokens in 6 spawns" in summary["text"]
    assert ok(p, "validate-state", "all")["pass"] is True
    # asked again, the ended run says so and changes nothing
    assert ok(p, "next")["action"] == "done"


def test_a_run_stops_for_the_wave_plan_approval_and_goes_on_when_approved(colony):
    p = colony("STANDARD", phases=2, wide=3)
    stop, _ = drive(p, ok(p, "run"), {"lead1": WIDE})  # 3 workers: STANDARD asks the user
    assert stop["action"] == "ask" and stop["why"] == "approval" and stop["command"] == "/ant:run --approve"
    assert "STOPPED: the wave plan needs your approval" in stop["text"] and "To continue: /ant:run --approve" in stop["text"]
    assert "Wave 1" in stop["text"]  # the plan to approve
    assert ok(p, "next")["why"] == "approval"  # asked again: the same stop
    status = ok(p, "status", "--json")
    assert status["autopilot"]["stopped"] == "approval" and status["next"]["slash"] == "/ant:run --approve"
    final, spawned = drive(p, ok(p, "run", "--approve"))
    assert spawned[:3] == ["w1", "w2", "w3"] and final["why"] == "completed"
    tree_event = [e for e in p.load("events.json")["events"] if e["type"] == "plan_approved"]
    assert tree_event[0]["source"] == "user"


def test_auto_approve_is_taken_where_the_mode_allows_it(colony):
    p = colony("STANDARD", phases=1, wide=3)
    final, spawned = drive(p, ok(p, "run", "--auto-approve"), {"lead1": WIDE})
    assert spawned[:4] == ["lead1", "w1", "w2", "w3"] and final["why"] == "completed"
    assert [e["source"] for e in p.load("events.json")["events"] if e["type"] == "plan_approved"] == ["auto:run"]


def test_full_mode_refuses_auto_approve_and_changes_nothing(colony):
    p = colony("FULL", phases=1)
    err = p.run("run", "--auto-approve").error
    assert err["code"] == "auto_approve_not_allowed" and "FULL" in err["error"]
    assert not p.file("spawns.json").exists() or p.load("spawns.json")["runs"] == []
    assert p.load("COLONY_STATE.json")["state"] == "READY"


def test_a_low_cap_stops_the_run_between_actions_and_a_raised_cap_goes_on(colony):
    p = colony(phases=3)
    first = ok(p, "run", "--budget", "70k")
    stop, spawned = drive(p, first, tokens=20_000)
    # lead1 20k + w1 20k (phase 1), lead1 20k (phase 2) = 60k; phase 2's builder, at the colony's
    # own 20k per builder, would make 80k > 70k: the run stops before that wave
    assert spawned == ["lead1", "w1", "lead1"]
    assert stop["action"] == "stop" and stop["why"] == "budget"
    assert "the next action (1 builder, ≈20k tokens) would bring this run to ≈80k of its 70k-token cap" in stop["text"]
    assert stop["command"] == "/ant:run --budget 140k" and stop["text"].endswith("To continue: /ant:run --budget 140k")
    assert "✓ phase 1 Module 1" in stop["text"] and "▸ phase 2 Module 2 (building: 0 of 1 waves done)" in stop["text"]
    # stopped cleanly at the wave boundary: the wave planned, nothing dispatched and unrecorded
    colony_state = p.load("COLONY_STATE.json")
    assert (colony_state["state"], colony_state["current_phase"]) == ("EXECUTING", 2)
    assert colony_state["spawn_tree"]["nodes"]["w1"]["status"] == "planned"
    assert all(s["status"] == "recorded" for s in p.load("spawns.json")["spawns"])
    assert ok(p, "validate-state", "all")["pass"] is True
    assert ok(p, "status", "--json")["spend"]["tokens"] == 60_000
    assert ok(p, "next")["why"] == "budget"  # asked again: the same stop, nothing new
    final, more = drive(p, ok(p, "run", "--budget", "200k"), tokens=20_000)
    assert more == ["w1", "lead1", "w1"] and final["why"] == "completed"
    assert "Spent: 120k tokens in 6 spawns" in final["text"]


def test_a_phase_cap_stops_inside_a_phase_before_its_next_wave(colony):
    p = colony(phases=1)
    stop, spawned = drive(p, ok(p, "run", "--phase-budget", "30k"), tokens=20_000)
    assert spawned == ["lead1"] and stop["why"] == "budget"
    assert "would bring phase 1 to" in stop["text"] and stop["command"].startswith("/ant:run --phase-budget ")
    assert p.load("COLONY_STATE.json")["spawn_tree"]["nodes"]["w1"]["status"] == "planned"  # not dispatched


def test_a_stop_request_from_another_terminal_stops_at_the_next_boundary(colony):
    p = colony(phases=2)
    first = ok(p, "run")
    asked = ok(p, "run", "--stop")
    assert asked["stopping"] is True
    for s in first["spawns"]:
        post(p, s, answer(p, s))
    stop = ok(p, "next")
    assert stop["action"] == "stop" and stop["why"] == "user" and stop["command"] == "/ant:run"
    again, _ = drive(p, ok(p, "run"))
    assert again["why"] == "completed"
    assert p.run("run", "--stop").error["code"] == "nothing_running"


def test_a_common_cause_abort_stops_with_the_report_the_tag_and_the_run_s_recovery(colony):
    p = colony(phases=3, criteria=False, wide=2, wide_phase=2)
    subprocess.run(["git", "init", "-q"], cwd=p.root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "base"], cwd=p.root, check=True
    )

    def lead(project, spawn):
        phase = int(re.search(r"Phase (\d+):", brief_of(project, spawn)).group(1))
        return lead_plan(phase, 2 if phase == 2 else 1)

    def worker(project, spawn):  # phase 2's two workers fail with the same import error
        brief = brief_of(project, spawn)
        return failed(brief) if re.search(r"mods/m2(_2)?\.py", brief) else built(project, brief)

    stop, spawned = drive(p, ok(p, "run"), {"lead1": lead, "w1": worker, "w2": worker})
    assert spawned == ["lead1", "w1", "lead1", "w1", "w2"]
    assert stop["action"] == "stop" and stop["why"] == "abort_phase" and stop["command"] == "/ant:run --from 2"
    text = stop["text"]
    assert "STOPPED: the failure protocol aborted the phase" in text
    assert "AETHER BUILD ABORTED — phase 2" in text and "a common cause" in text
    assert "Abort tag: aether/phase-2-aborted" in text
    assert "Apply the fix by hand, then go on with the autopilot: `/ant:run --from 2`" in text
    assert "Build the phase once, supervised, step by step: `/ant:build 2`" in text
    assert "Skip phase 2 and go on: `/ant:run --from 3`" in text
    assert "✓ phase 1 Module 1" in text and "Spent: 50k tokens in 5 spawns" in text
    tags = subprocess.run(["git", "tag"], cwd=p.root, capture_output=True, text=True).stdout.split()
    assert tags == ["aether/phase-2-aborted"]
    assert p.load("PROJECT_PLAN.json")["phases"][1]["status"] == "failed"
    again = ok(p, "run")  # going on without --from: the phase is still failed, and the stop says how on
    assert again["why"] == "phase_failed" and again["command"] == "/ant:run --from 2"
    # after the fix, /ant:run --from 2 rebuilds phase 2 and completes the colony
    final, more = drive(p, ok(p, "run", "--from", "2"), {"lead1": lead})
    assert final["why"] == "completed" and more == ["lead1", "w1", "w2", "lead1", "w1"]
    assert [ph["status"] for ph in p.load("PROJECT_PLAN.json")["phases"]] == ["completed"] * 3


def test_from_a_later_phase_skips_one_that_may_be_skipped_and_refuses_one_that_may_not(colony):
    p = colony(phases=3)
    err = p.run("run", "--from", "3").error
    assert err["code"] == "phase_required" and "phase 1" in err["error"]
    assert not p.file("spawns.json").exists() or p.load("spawns.json")["runs"] == []


def test_skipping_phases_with_from(colony):
    p = colony(phases=3, criteria=False)
    final, spawned = drive(p, ok(p, "run", "--from", "3"))
    assert spawned == ["lead1", "w1"] and final["why"] == "completed"
    statuses = [ph["status"] for ph in p.load("PROJECT_PLAN.json")["phases"]]
    assert statuses == ["skipped", "skipped", "completed"]
    assert "↷ phase 1 Module 1 (skipped)" in final["text"]


def test_range_and_phase_count_end_the_run_with_the_command_that_goes_on(colony):
    p = colony(phases=3)
    final, spawned = drive(p, ok(p, "run", "--to", "1"))
    assert spawned == ["lead1", "w1"] and final["why"] == "range" and final["command"] == "/ant:run"
    assert p.load("COLONY_STATE.json")["current_phase"] == 2
    final, spawned = drive(p, ok(p, "run", "--max-phases", "1"))
    assert spawned == ["lead1", "w1"] and final["why"] == "max_phases"
    final, spawned = drive(p, ok(p, "run", "--only", "3"))
    assert final["why"] == "completed"


def test_a_dry_run_shows_the_phases_castes_and_estimate_and_changes_nothing(colony):
    p = colony("STANDARD", phases=2)
    before = {f.name: f.read_bytes() for f in p.data.iterdir() if f.is_file()}
    out = ok(p, "run", "--dry-run", "--from", "1")
    assert out["dry_run"] is True and [r["id"] for r in out["phases"]] == [1, 2]
    assert out["phases"][0]["agents"] == {"route-setter": 1, "builder": 1, "watcher": 1}
    assert out["total"]["agents"] == 6 and out["total"]["tokens"] == 2 * (25_000 + 45_000 + 30_000)
    assert "AUTOPILOT DRY RUN · STANDARD · phases 1–2" in out["text"] and "1.1 mods/m1.py" in out["text"]
    assert {f.name: f.read_bytes() for f in p.data.iterdir() if f.is_file()} == before


def test_settings_from_the_config_file_set_caps_and_models(colony):
    p = colony("STANDARD", phases=1)
    (p.root / ".aether" / "config.yaml").write_text("budget:\n  run: 3M\n  phase: 700k\nmodels:\n  builder: sonnet\n", "utf-8")
    out = ok(p, "run", "--dry-run")
    assert out["caps"] == {"run": 3_000_000, "phase": 700_000} and out["models"]["builder"] == "sonnet"
    first = ok(p, "run")
    lead = first["spawns"][0]
    assert "model" not in lead  # route-setter: the session's model
    post(p, lead, answer(p, lead))
    wave = ok(p, "next")
    assert wave["spawns"][0]["model"] == "sonnet"
    assert '"model": "sonnet"' in ok(p, "next")["line"]  # the hook's line carries it to the Queen
    record = next(s for s in p.load("spawns.json")["spawns"] if s["local"] == "w1")
    assert record["model"] == "sonnet" and record["cost_key"] == "1"
    (p.root / ".aether" / "config.yaml").write_text("budget:\n  runs: 3M\n", "utf-8")
    err = p.run("run", "--dry-run").error
    assert err["code"] == "invalid_config" and "did you mean run?" in err["error"]


def test_the_slash_command_s_arguments_arrive_on_stdin(colony):
    p = colony(phases=2)
    out = ok(p, "run", "-", input="--dry-run --to 1\n")
    assert out["dry_run"] is True and out["range"]["to"] == 1
    assert ok(p, "run", "-", input="\n")["action"] == "spawn"  # no arguments: a run from where the colony stands
    assert p.run("run", "-", input="--bogus\n").error["code"] == "usage_error"
    assert p.run("run", "-", input="--budget lots\n").error["code"] == "invalid_amount"
    assert p.run("run", "--stop", "--budget", "1M").error["code"] == "usage_error"
    assert p.run("run", "stray", "words").error["code"] == "usage_error"


def test_the_session_context_after_clear_says_where_the_run_stands(colony):
    p = colony(phases=2)
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "clear"})
    assert p.run("session-hook", input=payload).stdout == ""  # a planned colony, nothing under way
    ok(p, "run", "--budget", "1k")
    out = json.loads(p.run("session-hook", input=payload).stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    text = out["additionalContext"]
    assert "is mid-run" in text and "the run is stopped: the spend cap" in text
    assert "To continue, run /ant:run --budget" in text and len(text.splitlines()) == 2
    assert p.run("session-hook", input=json.dumps({"source": "startup"})).stdout == ""
    assert p.run("session-hook", input="not json").stdout == ""


def test_no_colony_no_context(project):
    assert project.run("session-hook", input=json.dumps({"source": "compact"})).stdout == ""


def stalled_code_loop(project, monkeypatch) -> dict:
    """A FULL colony's run, approved, whose code loop stagnated: the run's stop that asks."""
    from helpers.colony import PHASE_PLAN
    from helpers.drive import ASSIGNMENT as FOUR_TASKS
    from helpers.drive import drive as answer_until_asked
    from helpers.drive import verification

    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = with_tests(project)
    ok(p, "colony-init", "Build a todo API", "--mode", "FULL")
    ok(p, "plan-load", "-", input=json.dumps(PHASE_PLAN))
    ok(p, "run")
    asked = ok(p, "record", "lead1", "-", input=block(FOUR_TASKS))["next"]
    assert (asked["action"], asked["why"], asked["command"]) == ("ask", "approval", "/ant:run --approve")
    finding = ["src/todo.py:1 F401 `os` imported but unused"]
    return answer_until_asked(p, ok(p, "run", "--approve"), [verification(x, 1, finding) for x in (0.6, 0.8, 0.9)])


def test_a_code_loop_that_asks_stops_the_run_and_its_answer_goes_on(project, monkeypatch):
    from helpers.drive import drive as answer_until_asked
    from helpers.drive import verification

    p = project
    stop = stalled_code_loop(p, monkeypatch)
    assert (stop["action"], stop["why"]) == ("ask", "code_loop")
    assert stop["command"] == "/ant:run --answer <your choice, and guidance>"
    assert "Answer with /ant:run --answer <your choice, and guidance>." in stop["text"]
    assert "/ant:build 1 --answer" not in stop["text"]
    err = p.run("run", "--answer", "maybe", "words").error
    assert err["code"] == "invalid_argument"  # not a choice: nothing changed, the run still waits
    assert ok(p, "next")["why"] == "code_loop"
    refined = ok(p, "run", "-", input="--answer refine drop the import in src/todo.py\n")
    assert refined["action"] == "spawn"
    loop = json.loads((p.data / "loops.json").read_text("utf-8"))["loops"][-1]
    assert loop["feedback"][-1]["text"] == "drop the import in src/todo.py"
    lessons = answer_until_asked(p, refined, [verification(1, 0, [])])
    assert lessons["action"] == "lessons"
    after = ok(p, "record", "lessons", "-", input="- drop unused imports before verifying\n")["next"]
    # phase 1 done and advanced: the run goes on with phase 2's Phase Lead
    assert [s["id"] for s in after["spawns"]] == ["lead1"] and "Phase 2:" in brief_of(p, after["spawns"][0])
    assert p.load("PROJECT_PLAN.json")["phases"][0]["status"] == "completed"


def test_full_mode_asks_each_approval_and_runs_the_archivist_after_the_third_phase(colony):
    from helpers.drive import verification

    p = colony("FULL", phases=3)
    verified = verification(1, 0, [])  # the code loop (every FULL build) completes at once

    def archivist(project, spawn):
        """Asked while the run closes phase 3: its build's command goes on with the run, another is refused."""
        same = ok(project, "next", "--build", "3")
        assert same["autopilot"] and [s["id"] for s in same["spawns"]] == ["arch3"]
        assert "is closing phase 3" in project.run("next", "--build", "2").error["error"]
        return answer(project, spawn)

    action, approvals = ok(p, "run"), 0
    while True:
        action, spawned = drive(p, action, {"watch1": verified, "arch3": archivist})
        if action["why"] != "approval":
            break
        approvals += 1
        action = ok(p, "run", "--approve")
    assert approvals == 3 and action["why"] == "completed"
    runs = p.load("spawns.json")["runs"]
    (run,) = [r for r in runs if r["command"] == "run"]
    # each phase closed as /ant:continue closes it: a continue run of the autopilot's
    closing = {r["phase"]: r for r in runs if r["command"] == "continue"}
    assert sorted(closing) == [1, 2, 3] and {c["parent"] for c in closing.values()} == {run["scope"]}
    assert closing[3]["report"]["summary"] == "two stale files" and closing[1]["report"] is None
    arch = next(s for s in p.load("spawns.json")["spawns"] if s["local"] == "arch3")
    assert (arch["subagent_type"], arch["model"], arch["cost_key"], arch["scope"], arch["autopilot"]) == (
        "ant:architect",
        None,
        "3",
        closing[3]["scope"],
        run["scope"],
    )
    assert "Archivist after phase 3: two stale files (.aether/spawns/" in action["text"]
    event = [e for e in p.load("events.json")["events"] if e["type"] == "hygiene_report"]
    assert len(event) == 1 and event[0]["content"].startswith("two stale files (report: .aether/spawns/")
    assert p.load("COLONY_STATE.json")["state"] == "COMPLETED"


# ---------------------------------------------------------------- refusals change nothing; odd state is named


def test_a_refused_answer_or_option_writes_nothing(colony):
    p = colony(phases=2)
    stop = ok(p, "run", "--budget", "1k")
    assert stop["why"] == "budget"
    before = snapshot(p)
    for args, code in (
        (("--budget", "5M", "--auto-approve", "--answer", "accept", "fine"), "nothing_to_answer"),
        (("--from", "2", "--answer", "accept", "fine"), "usage_error"),
        (("--answer", "refine", "-"), "invalid_content"),
        (("--budget", "lots"), "invalid_amount"),
        (("--from", "9"), "unknown_phase"),
    ):
        assert p.run("run", *args, input="  \n").error["code"] == code, args
        assert snapshot(p) == before, args


def test_a_completed_colony_has_nothing_to_run(colony):
    p = colony(phases=1)
    drive(p, ok(p, "run"))
    again = ok(p, "run")
    assert again["action"] == "done" and again["why"] == "completed" and "nothing left to build" in again["text"]


def test_words_after_answer_arrive_as_typed(project, monkeypatch):
    p = project
    stalled_code_loop(p, monkeypatch)
    words = "keep the \"db\" layer; don't touch it, isn't it -v --help"
    ok(p, "run", "-", input=f"--answer refine {words}\n")
    loop = json.loads((p.data / "loops.json").read_text("utf-8"))["loops"][-1]
    assert loop["feedback"][-1]["text"] == words


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["runs"][0].pop("range"),
        lambda d: d["runs"][0].pop("budget"),
        lambda d: d["runs"][0].update(budget={"run": "lots", "phase": 1}),
        lambda d: d["runs"][0].update(stopped={"why": "budget"}),
        lambda d: d["runs"][0].update(range={"from": 1}),
    ],
)
def test_a_hand_edited_run_record_is_state_corrupt(colony, edit):
    p = colony(phases=2)
    ok(p, "run", "--budget", "1k")
    data = p.load("spawns.json")
    edit(data)
    p.write("spawns.json", data)
    for args in (("run",), ("next",), ("status", "--json"), ("run", "--budget", "1M")):
        assert p.run(*args).error["code"] == "state_corrupt", args


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["colonies"][0]["phases"]["1"].pop("unmetered"),
        lambda d: d["colonies"][0]["phases"]["1"].update(unmetered="x"),
        lambda d: d["colonies"][0]["phases"]["1"]["castes"]["route-setter"]["models"].update(x=3),
    ],
)
def test_a_hand_edited_costs_file_is_state_corrupt_and_names_its_restore(colony, edit):
    p = colony(phases=2)
    first = ok(p, "run")
    post(p, first["spawns"][0], answer(p, first["spawns"][0]))
    data = p.load("costs.json")
    edit(data)
    p.write("costs.json", data)
    err = p.run("status", "--json").error
    assert err["code"] == "state_corrupt" and "costs" in err["error"]


def test_a_bad_models_setting_mid_build_leaves_no_node_running_without_its_spawn(colony):
    p = colony(phases=1)
    lead = ok(p, "run")["spawns"][0]
    (p.root / ".aether" / "config.yaml").write_text("models:\n  builder: gpt-9\n", "utf-8")
    context = post(p, lead, answer(p, lead))
    assert context.startswith("Aether recorded lead1 Phase Lead: 1 worker in 1 wave")
    assert "The answer is recorded, but the next step failed: models.builder" in context
    assert p.load("COLONY_STATE.json")["spawn_tree"]["nodes"]["w1"]["status"] == "planned"
    (p.root / ".aether" / "config.yaml").unlink()
    assert [s["id"] for s in ok(p, "next")["spawns"]] == ["w1"]


def test_a_stop_text_too_long_for_the_hook_goes_to_a_file(colony, monkeypatch):
    from aether.colony import handback

    p = colony(phases=2)
    monkeypatch.setattr(handback, "HOOK_CONTEXT_LIMIT", 300)
    stop_next = ok(p, "run", "--budget", "40k")
    lead = stop_next["spawns"][0]
    context = post(p, lead, answer(p, lead), tokens=20_000)  # w1 (45k) would pass the 40k cap
    line = context.splitlines()[-1]
    assert line.startswith("Aether next: stop — its text is long: read .aether/spawns/r-")
    assert line.endswith("(it ends with the command that continues: /ant:run --budget 110k).")
    path = p.root / line.split("read ")[1].split(" and show")[0]
    assert path.read_text("utf-8") == ok(p, "next")["text"]
