"""The helper's side of the mod (`aether mod …`, colony/mod.py): how each slash command is served,
and a whole build run by the mod's loop — launched, answered, waited — to the same state as the
Queen's path, each answer recorded once."""

from __future__ import annotations

import json
import os
import time

from aether.rules import drive as rules

from helpers.colony import ok, write
from helpers.drive import ASSIGNMENT, named_checks, result


def serve(p, command, args=""):
    return ok(p, "mod", "serve", input={"command": command, "args": args})


def ledger(p):
    data = json.loads((p.data / "spawns.json").read_text("utf-8"))
    return {s["local"]: s for s in data["spawns"] if s["scope"] == data["runs"][-1]["scope"]}


def answer_all(p, action, answers):
    """The mod's step for a spawn action: every ant launched, each answer recorded, then the wait."""
    refs = [s["ref"] for s in action["spawns"]]
    ok(p, "mod", "launched", input={"spawns": [{"ref": r, "agent_id": f"agent-{r.split('/')[1]}"} for r in refs]})
    for s in action["spawns"]:
        text = answers(s) if callable(answers) else answers
        usage = {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 50, "model": "claude-test"}
        # the calls the mod saw the ant make (tool.call): a watcher runs the commands its brief names
        calls = [
            {"tool": "Bash", "input": {"command": c}, "isError": False, "text": "4 passed in 0.02s", "ms": 9, "t": time.time()}
            for c in named_checks(s["prompt"]).values()
        ]
        answer = {"ref": s["ref"], "agent_id": f"agent-{s['id']}", "text": text, "usage": usage, "reason": "answer", "calls": calls}
        ok(p, "mod", "answer", input=answer)
    return ok(p, "mod", "wait", input={"refs": refs, "seconds": 1})


# ---------------------------------------------------------------- serve


def test_commands_that_need_no_judgment_are_the_helpers_text(mod_colony):
    p = mod_colony
    status = serve(p, "ant:status")
    assert status["serve"] == "text" and "Build a todo API" in status["text"] and status["exit_code"] == 0
    assert serve(p, "ant:status", "what is left?")["serve"] == "model"  # a question: the model answers
    assert "Phase 1" in serve(p, "ant:phase", "1")["text"]
    focus = serve(p, "ant:focus", '"error messages of the parser"')
    assert "error messages of the parser" in focus["text"]
    signals = json.loads((p.data / "pheromones.json").read_text("utf-8"))["signals"]
    assert [s["content"] for s in signals if s["type"] == "FOCUS"] == ["error messages of the parser"]
    assert serve(p, "ant:redirect")["serve"] == "model"  # no text: the model asks for it
    assert "/ant:build <N>" in serve(p, "ant:help")["text"]
    assert serve(p, "ant:init", "a goal")["serve"] == "model"
    assert serve(p, "ant:bug", "list")["serve"] == "model"


def test_aether_runtime_prompts_hands_every_command_to_the_markdown(mod_colony, monkeypatch):
    monkeypatch.setenv("AETHER_RUNTIME", "prompts")
    assert serve(mod_colony, "ant:status")["serve"] == "model"
    assert serve(mod_colony, "ant:build", "1")["serve"] == "model"


def test_a_helper_error_is_the_commands_text_with_a_non_zero_status(mod_colony):
    out = serve(mod_colony, "ant:build", "2")
    assert out["serve"] == "text" and out["exit_code"] == rules.EXIT_ERROR and out["text"].startswith("Aether: ")
    bad = serve(mod_colony, "ant:build", "1 --approve --resume")
    assert bad["exit_code"] == rules.EXIT_ERROR
    assert serve(mod_colony, "ant:build")["text"] == "Aether: Run /ant:build <phase>."


def test_bad_input_gets_an_error_envelope(mod_colony):
    p = mod_colony
    for args, payload in (
        (("serve",), "not json"),
        (("serve",), "[1]"),
        (("answer",), {"agent_id": "x"}),
        (("answer",), {"ref": "nope", "text": "x"}),
        (("wait",), {"refs": "b1/w1"}),
        (("launched",), {"spawns": [{"agent_id": "x"}]}),
    ):
        done = p.run("mod", *args, input=payload if isinstance(payload, str) else json.dumps(payload))
        assert done.code != 0 and json.loads(done.stderr)["ok"] is False, (args, payload)


# ---------------------------------------------------------------- the loop


def test_a_build_run_by_the_mods_loop_records_each_answer_once(mod_colony):
    p = mod_colony
    first = serve(p, "ant:build", "1")
    assert first["serve"] == "loop" and first["runtime"] == "mod"
    lead = first["action"]
    assert [s["id"] for s in lead["spawns"]] == ["lead1"]
    assert lead["spawns"][0]["prompt"].startswith("[aether spawn .aether/spawns/") and "--- PHASE LEAD ---" in lead["spawns"][0]["prompt"]
    assert ledger(p)["lead1"]["runtime"] == "mod"
    asked = answer_all(p, lead, json.dumps(ASSIGNMENT))
    assert asked["action"] == "ask" and asked["exit_code"] == rules.EXIT_STATUS["approval"]
    assert "/ant:build 1 --approve" in asked["text"]

    action = serve(p, "ant:build", "1 --approve")["action"]
    seen = []
    while action["action"] == "spawn":
        seen += [s["id"] for s in action["spawns"]]
        nodes = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]["nodes"]

        def answer(s, nodes=nodes):
            node = nodes.get(s["id"], {})
            if s["id"] == "lessons":
                return "- keep the store small\n"
            if s["id"].startswith("watch"):
                return '```json\n{"passed": true, "score": 90, "summary": "ok", "checks": [{"name": "tests", "passed": true, "detail": "4 passed"}]}\n```'
            if node.get("role") == "reviewer":
                return '```json\n{"findings": [], "summary": "fine"}\n```'
            write(p, *node["writes"])
            return result(files_created=node["writes"])

        action = answer_all(p, action, answer)
    assert action["action"] == "done" and action["exit_code"] == 0, action
    assert seen[:2] == ["w1", "w2"] and "watch1" in seen
    spawns = ledger(p)
    assert all(s["status"] == "recorded" for s in spawns.values())
    assert {s["via"] for k, s in spawns.items() if k != "lead1"} == {"mod"}
    assert all(s["usage"]["total_tokens"] == 200 for s in spawns.values())
    costs = json.loads((p.data / "costs.json").read_text("utf-8"))
    assert "200" in json.dumps(costs)  # counted in the spend, once per ant
    phase = json.loads((p.data / "PROJECT_PLAN.json").read_text("utf-8"))["phases"][0]
    assert phase["status"] == "completed"
    if "lessons" in spawns:
        assert spawns["lessons"]["model"] is None and spawns["lessons"]["subagent_type"] == "ant:architect"
        assert "keep the store small" in (p.data / "memory.json").read_text("utf-8")
    # a late second answer of the same ant changes nothing
    again = ok(p, "mod", "answer", input={"ref": spawns["w1"]["ref"], "agent_id": "agent-w1", "text": result(), "reason": "answer"})
    assert again["already_recorded"] is True


def test_no_answer_is_handed_out_again_once_then_recorded_as_none(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    first = ok(
        p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a1", "text": "  ", "reason": "error", "usage": {"output_tokens": 5}}
    )
    assert "again" in first["line"] and ledger(p)["lead1"]["status"] == "dispatched"
    again = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
    assert again["action"] == "spawn" and again["spawns"][0]["ref"] == lead["ref"]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a2"}]})
    ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a2", "text": "", "reason": "refusal"})
    assert ledger(p)["lead1"]["status"] == "recorded"


def test_an_interrupted_ant_counts_its_spend_and_is_handed_out_again(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    waiting = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0.3})
    assert waiting["action"] == "wait" and waiting["agents"] == {lead["ref"]: "a1"}
    stopped = waiting["interrupt"]  # what the mod shows if the person presses Esc now
    assert stopped["exit_code"] == rules.EXIT_STATUS["stopped"] and "/ant:build 1" in stopped["text"] and "lead1" in stopped["text"]
    ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a1", "text": "", "reason": "aborted", "usage": {"output_tokens": 40}})
    rec = ledger(p)["lead1"]
    assert rec["status"] == "dispatched" and rec["usage"]["total_tokens"] == 40
    # the same command goes on: the spawn is handed out again, nothing recorded twice
    assert [s["id"] for s in serve(p, "ant:build", "1")["action"]["spawns"]] == ["lead1"]


def test_an_ant_claude_code_lists_as_ended_without_its_answer_is_handed_out_again(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    first = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0, "statuses": {"a1": "completed"}})
    assert first["action"] == "wait"  # once: its answer may be on its way
    again = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0, "statuses": {"a1": "killed"}})
    assert again["action"] == "spawn" and [s["ref"] for s in again["spawns"]] == [lead["ref"]]
    # a late answer of that first agent changes nothing now; the new one's is recorded
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a2"}]})
    stale = ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a1", "text": "", "reason": "aborted"})
    assert stale["line"] is None and ledger(p)["lead1"]["status"] == "launched"
    ok(p, "mod", "answer", input={"agent_id": "a2", "text": json.dumps(ASSIGNMENT), "reason": "answer"})  # found by its agent
    assert ledger(p)["lead1"]["status"] == "recorded"


def test_a_spawn_claude_code_refuses_twice_stops_the_command(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    for attempt in (1, 2):
        ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "why": "agent type not found"}]})
        out = ok(p, "mod", "wait", input={"refs": [lead["ref"]], "seconds": 0})
        assert out["action"] == ("spawn" if attempt == 1 else "stop"), out
    assert out["exit_code"] == rules.EXIT_STATUS["stopped"] and "refused to start lead1" in out["text"] and "/ant:build 1" in out["text"]


def test_an_error_or_a_refusal_is_no_answer_and_so_is_an_unknown_reason_without_text(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    out = ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a1", "text": "API Error: 529 Overloaded", "reason": "error"})
    assert "again" in out["line"] and ledger(p)["lead1"]["status"] == "dispatched"
    # the same ant's end brought twice counts once; a reason Claude Code added since, with no text,
    # is no answer: the second ant's is the second time, and the spawn is recorded as having none
    again = ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a1", "text": "", "reason": "error"})
    assert "again" in again["line"] and ledger(p)["lead1"]["empty"] == 1
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a2"}]})
    later = ok(p, "mod", "answer", input={"ref": lead["ref"], "agent_id": "a2", "text": "", "reason": "max_turns"})
    assert ledger(p)["lead1"]["status"] == "recorded" and "plan refused" in later["line"], later  # the ladder's, not a loop
    unknown = p.run("mod", "answer", input=json.dumps({"ref": "zz/w9", "reason": "aborted"}))
    assert unknown.code != 0 and json.loads(unknown.stderr)["code"] == "unknown_spawn"


def test_launched_needs_the_claude_code_process(mod_colony, monkeypatch):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    monkeypatch.delenv("CLAUDE_PID")
    done = p.run("mod", "launched", input=json.dumps({"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]}))
    assert done.code != 0 and json.loads(done.stderr)["code"] == "no_claude_process"


def test_a_wait_for_nothing_answers_the_newest_run_at_once(mod_colony):
    p = mod_colony
    serve(p, "ant:build", "1")
    out = ok(p, "mod", "wait", input={"refs": [], "seconds": 0})
    assert out["action"] == "spawn" and [s["id"] for s in out["spawns"]] == ["lead1"]


def test_an_aborted_phase_ends_the_mods_build_with_the_abort_report(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]
    answer_all(p, lead, json.dumps(ASSIGNMENT))
    wave = serve(p, "ant:build", "1 --approve")["action"]
    failure = {
        "task": "1.1",
        "error": "ImportError: no module named todo",
        "root_cause": "the package is missing",
        "confidence": 20,
        "category": "security",
    }
    end = answer_all(
        p, wave, lambda s: result(status="failed", summary="broken", failure={**failure, "task": "1.1" if s["id"] == "w1" else "1.3"})
    )
    assert end["action"] == "stop" and end.get("why") == "abort_phase" and end["exit_code"] == rules.EXIT_STATUS["abort"], end
    assert "AETHER BUILD ABORTED" in end["text"]
    scope = wave["spawns"][0]["ref"].split("/")[0]
    again = ok(p, "mod", "wait", input={"refs": [], "seconds": 0, "scope": scope})  # the run, asked again: the same stop
    assert again["action"] == "stop" and again["why"] == "abort_phase"


def test_the_queens_hooks_leave_the_mods_spawns_alone(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    tool_input = {"description": lead["description"], "prompt": lead["prompt"], "subagent_type": lead["subagent_type"]}
    assert p.run("agent-hook", "pre", input=json.dumps({"tool_input": tool_input, "tool_use_id": "toolu_plugin_1"})).stdout == ""
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    done = {"status": "completed", "agentId": "a1", "content": [{"type": "text", "text": json.dumps(ASSIGNMENT)}]}
    post = p.run("agent-hook", "post", input=json.dumps({"tool_input": tool_input, "tool_response": done}))
    assert post.stdout == "" and ledger(p)["lead1"]["status"] == "launched"
    # the Queen asking meanwhile is told to wait: the ant runs now, in this Claude Code
    queen = ok(p, "next", "--build", "1")
    assert queen["action"] == "wait"


def test_exit_statuses_per_kind_of_stop():
    assert rules.exit_status("done", "completed") == 0
    kinds = {
        why: rules.exit_status("stop" if why != "approval" else "ask", why)
        for why in ("approval", "code_loop", "abort_phase", "phase_failed", "budget", "user", "blocked")
    }
    assert kinds == {"approval": 10, "code_loop": 11, "abort_phase": 12, "phase_failed": 12, "budget": 13, "user": 14, "blocked": 14}
    assert rules.exit_status("ask", None) == 11
    assert len(set(rules.EXIT_STATUS.values()) | {rules.EXIT_DONE, rules.EXIT_ERROR}) == len(rules.EXIT_STATUS) + 2


def test_a_lessons_ant_without_lessons_twice_lets_the_build_finish_without_them(mod_colony):
    from aether.colony import continue_drive, dispatch
    from aether.colony import mod as mod_loop
    from aether.state import spawns as spawns_file
    from aether.state import store

    p = mod_colony
    os.chdir(p.root)
    build = dispatch.new_run("build", phase=1, lessons_due=True, lessons_done=False, finished=True)
    action = mod_loop.for_mod(continue_drive.lessons_action(build, 1, build["scope"]))
    assert [s["id"] for s in action["spawns"]] == ["lessons"] and action["spawns"][0]["subagent_type"] == "ant:architect"
    ref = action["spawns"][0]["ref"]
    assert "Write 1–5 lessons phase 1 taught" in action["spawns"][0]["prompt"]
    first = mod_loop.answer(ref, "a1", "", {}, "error")
    assert "handed out again" in first["line"]
    second = mod_loop.answer(ref, "a2", "", {}, "error")
    assert second["line"].startswith("no lessons")
    run = spawns_file.run_of(store.read("spawns"), build["scope"])
    assert run["lessons_done"] is True and run["lessons_forgone"]


def test_plan_colonize_continue_and_run_are_served_by_the_loop(mod_colony):
    p = mod_colony
    assert serve(p, "ant:run", "--dry-run")["action"]["action"] == "done"
    planned = serve(p, "ant:plan", "--force keep the API small")
    assert planned["serve"] == "loop" and planned["action"]["action"] in ("spawn", "ask", "done")
    run = json.loads((p.data / "spawns.json").read_text("utf-8"))["runs"][-1]
    assert run["command"] == "plan"
    assert serve(p, "ant:colonize")["serve"] == "loop"
    refused = serve(p, "ant:run", "--from nope")
    assert refused["serve"] == "text" and refused["exit_code"] == rules.EXIT_ERROR
    assert serve(p, "ant:continue")["serve"] in ("loop", "text")


def test_status_says_which_runtime_sent_the_newest_ants(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    view = ok(p, "status", "--json")
    assert view["runtime"] == "mod" and "RUNTIME  mod" in view["text"]


def test_help_is_read_from_the_plugin_claude_code_names(mod_colony, monkeypatch, tmp_path):
    (tmp_path / ".claude" / "commands" / "ant").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "ant" / "help.md").write_text("Show this:\n\n```\nTHE INSTALLED HELP\n```\n", "utf-8")
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(tmp_path))  # a marketplace install: the helper lives elsewhere
    assert serve(mod_colony, "ant:help")["text"] == "THE INSTALLED HELP"
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(tmp_path / "gone"))
    missing = serve(mod_colony, "ant:help")
    assert missing["exit_code"] == rules.EXIT_ERROR and "help.md cannot be read" in missing["text"]


def test_an_answer_to_a_loop_that_does_not_wait_is_the_helpers_error(mod_colony):
    out = serve(mod_colony, "ant:build", "1 --answer refine add the missing tests")
    assert out["serve"] == "text" and out["exit_code"] == rules.EXIT_ERROR and "waits for an answer" in out["text"]


def test_the_arguments_are_read_as_the_markdown_commands_read_them(mod_colony, monkeypatch):
    from aether.colony import drive

    seen = []
    monkeypatch.setattr(
        drive, "answer", lambda phase, choice, words: seen.append((phase, choice, words)) or {"action": "done", "text": "", "command": None}
    )
    monkeypatch.setattr(
        drive,
        "next_action",
        lambda *a, **kw: seen.append(kw | {"phase": a[0] if a else None}) or {"action": "done", "text": "", "command": None},
    )
    p = mod_colony
    serve(p, "ant:build", "1 --answer keep the parser but add codes")
    serve(p, "ant:build", "2 --answer accept as it is")
    serve(p, "ant:build", "--approve 1")
    serve(p, "ant:plan", "--force keep it small\n  - no ORM\n--accept")
    assert seen[0] == (1, "refine", "keep the parser but add codes")
    assert seen[1] == (2, "accept", "accept as it is")
    assert seen[2]["phase"] == 1 and seen[2]["approve"] is True
    assert (seen[3]["guidance"], seen[3]["force"], seen[3]["accept"]) == ("keep it small\n  - no ORM", True, True)


# ---------------------------------------------------------------- answers kept until the helper takes them


def _kept(p, name, payload):
    spool = p.data / "spool"
    spool.mkdir(exist_ok=True)
    (spool / name).write_text(json.dumps(payload), "utf-8")
    return spool / name


def test_an_answer_the_mod_kept_is_recorded_by_the_next_command_once(mod_colony):
    from helpers.drive import ASSIGNMENT

    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    usage = {"input_tokens": 900, "output_tokens": 100}
    kept = _kept(p, "a1.json", {"ref": lead["ref"], "agent_id": "a1", "text": json.dumps(ASSIGNMENT), "usage": usage, "reason": "answer"})
    ok(p, "next")  # the helper failed when the mod handed it in: the next command takes it first
    assert not kept.exists() and ledger(p)["lead1"]["status"] == "recorded"
    ok(p, "next")
    costs = json.loads((p.data / "costs.json").read_text("utf-8"))["colonies"][0]["phases"]["1"]
    assert costs["tokens"] == 1000  # counted once


def test_a_kept_file_that_is_not_its_agents_answer_for_the_mods_spawn_is_set_aside(mod_colony):
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}]})
    forged = {"ref": lead["ref"], "text": "```json\n{}\n```", "usage": {"input_tokens": 10**9}, "reason": "answer"}
    other = _kept(p, "x.json", forged)  # no agent: any file an ant could write
    stranger = _kept(p, "a9.json", {**forged, "agent_id": "a9"})  # an agent that is not the spawn's
    ok(p, "next")
    assert (p.data / "spool" / "x.json.bad").exists() and (p.data / "spool" / "a9.json.bad").exists()
    assert not other.exists() and not stranger.exists()
    assert ledger(p)["lead1"]["status"] == "launched"  # nothing recorded from them
    costs = p.data / "costs.json"
    spent = json.loads(costs.read_text("utf-8"))["colonies"] if costs.exists() else []
    assert sum(b["tokens"] for c in spent for b in c["phases"].values()) == 0  # nor counted


def test_a_loop_call_asked_again_after_a_helper_failure_counts_once(mod_colony):
    """The mod asks the same `launched` or `wait` again when the helper failed midway (its `call`
    name the same): a refusal, a look at an ended ant, counts once."""
    p = mod_colony
    lead = serve(p, "ant:build", "1")["action"]["spawns"][0]
    refused = {"spawns": [{"ref": lead["ref"], "why": "busy"}], "call": "launched-x-1"}
    ok(p, "mod", "launched", input=refused)
    ok(p, "mod", "launched", input=refused)
    assert ledger(p)["lead1"]["refused"] == 1
    ok(p, "mod", "launched", input={"spawns": [{"ref": lead["ref"], "agent_id": "a1"}], "call": "launched-x-2"})
    look = {"refs": [lead["ref"]], "seconds": 0, "statuses": {"a1": "failed"}, "call": "wait-x-3"}
    ok(p, "mod", "wait", input=look)
    ok(p, "mod", "wait", input=look)
    assert ledger(p)["lead1"]["status"] == "launched"  # one look at it ended, not two: not handed out yet
    ok(p, "mod", "wait", input={**look, "call": "wait-x-4"})
    assert ledger(p)["lead1"]["status"] == "dispatched"


# ---------------------------------------------------------------- the classic Agent hooks under the mod


def test_the_classic_agent_hooks_step_aside_for_the_mods_ants_without_python(tmp_path):
    """hooks/agent.sh ends in shell for the mod's ants (Claude Code's id of a plugin's Agent call,
    `toolu_plugin_…`, on the call and in the ant's `.meta.json`) and for an ant whose transcript is
    not there yet (its start hook would read it); a Queen's ant, or an input the shell cannot read
    plainly, goes to the helper as before."""
    import shutil
    import subprocess
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    (tmp_path / "hooks").mkdir()
    shutil.copy(repo / "hooks" / "agent.sh", tmp_path / "hooks" / "agent.sh")
    (tmp_path / "bin").mkdir()
    started = tmp_path / "helper-started"
    (tmp_path / "bin" / "aether").write_text(f'#!/bin/sh\necho "$2" >> "{started}"\n', "utf-8")
    (tmp_path / "bin" / "aether").chmod(0o755)
    project = tmp_path / "project"
    (project / ".aether" / "data").mkdir(parents=True)
    (project / ".aether" / "data" / "spawns.json").write_text("{}", "utf-8")
    session = project / "s1.jsonl"
    agents = project / "s1" / "subagents"
    agents.mkdir(parents=True)
    for agent, call in (("amod", "toolu_plugin_9ce6"), ("aqueen", "toolu_01AbC")):
        meta = {"agentType": "ant:builder", "toolUseId": call}  # written compact, as Claude Code writes it
        (agents / f"agent-{agent}.meta.json").write_text(json.dumps(meta, separators=(",", ":")), "utf-8")
    (agents / "agent-aqueen.jsonl").write_text("{}\n", "utf-8")  # a transcript there to read

    def hook(event, payload, compact=True):
        text = json.dumps(payload, separators=(",", ":")) if compact else json.dumps(payload)
        subprocess.run(["sh", str(tmp_path / "hooks" / "agent.sh"), event], input=text, text=True, check=True, cwd=project)
        ran = started.read_text("utf-8").split() if started.exists() else []
        started.unlink(missing_ok=True)
        return ran == [event]

    brief = {"prompt": "[aether spawn .aether/spawns/b1-x/w1.md]\n…", "subagent_type": "ant:builder", "description": "w1 builder"}
    mod_call = {"tool_name": "Agent", "tool_input": {**brief, "name": "w1"}, "tool_use_id": "toolu_plugin_9ce6"}
    queen_call = {"tool_name": "Agent", "tool_input": brief, "tool_use_id": "toolu_01AbC"}
    assert hook("pre", mod_call)  # it marks the mod's spawn running before the ant starts
    assert [hook(e, mod_call) for e in ("post", "failure", "denied")] == [False] * 3
    assert [hook(e, queen_call) for e in ("post", "failure", "denied")] == [True] * 3
    assert hook("post", mod_call, compact=False)  # not read plainly: the helper decides

    def ant(agent):
        return {"transcript_path": str(session), "agent_id": agent, "agent_type": "ant:builder"}

    def stopped(agent):
        return {**ant(agent), "agent_transcript_path": str(agents / f"agent-{agent}.jsonl")}

    assert not hook("start", ant("amod")) and hook("start", ant("aqueen"))
    assert not hook("stop", stopped("amod")) and hook("stop", stopped("aqueen"))
    assert hook("stop", stopped("anometa"))  # no meta file: the helper decides
