"""The plugin's mod serves the /ant:* commands in real Claude Code (hooks/mod.ts): no Queen turn.

- `/ant:status` and the other commands that need no judgment: the helper's text, no model request;
- a build under the mod: every ant of a wave spawned at once by code (they overlap), each answer
  recorded once through the mod (`via: mod`), the lessons written by an ant on the session's
  model, the phase completed — and the main thread never asks the model anything;
- `claude -p "/ant:build …"` ends with the stop's text and its exit status (10: an approval);
- with AETHER_RUNTIME=prompts the same build runs by the markdown command (the fallback), to the
  same state.
"""

from __future__ import annotations

import json

import pytest

from .colony_script import (
    FOUR_ASSIGNMENT,
    FOUR_MODULES,
    FOUR_REVIEW,
    FOUR_VERIFIED,
    TWO_ASSIGNMENT,
    TWO_PLAN,
    honest_watcher,
    is_ref,
    json_block,
    with_tests,
    worker_result,
)
from .fake_api import say, subagent, tool, turn
from .harness import NOW, aether_ok, state
from .interactive import interactive

pytestmark = pytest.mark.e2e

LESSONS = "independent modules build well in one wave"
ANT_SECONDS = 3.0  # how long each scripted builder takes to answer


def _ready(claude) -> None:
    aether_ok(claude, "colony-init", "-", input=FOUR_MODULES["goal"])
    aether_ok(claude, "plan-load", "-", input=json.dumps(FOUR_MODULES))
    lead = aether_ok(claude, "next", "--build", "1")
    assert [s["id"] for s in lead["spawns"]] == ["lead1"], lead
    asked = aether_ok(claude, "record", "lead1", "-", input=json_block(FOUR_ASSIGNMENT))
    assert asked["next"]["action"] == "ask"  # 4 workers: STANDARD asks the user
    (claude.project / "mods").mkdir()
    (claude.project / "mods" / "__init__.py").write_text("", "utf-8")
    with_tests(claude.project)


def _ants(claude, delay: float = ANT_SECONDS) -> list:
    steps = []
    for i in range(1, 5):
        steps += [
            subagent("ant:builder", is_ref(f"w{i}"), turn(1)).reply(
                tool("Write", file_path=f"{claude.project}/mods/m{i}.py", content=f"VALUE = {i}\n")
            ),
            subagent("ant:builder", is_ref(f"w{i}"), turn(2)).reply(
                say(worker_result(f"mods/m{i}.py", created=[f"mods/m{i}.py"])), delay=delay
            ),
        ]
    return steps + [
        subagent("ant:watcher", is_ref("v1")).reply(say(FOUR_REVIEW)),
        *honest_watcher(is_ref("watch1"), FOUR_VERIFIED),
    ]


@pytest.mark.oldest  # the mod's smoke run on the oldest Claude Code Aether supports
def test_status_and_the_signal_commands_take_no_model_request(claude_mod):
    aether_ok(claude_mod, "colony-init", "-", input="A colony served by code")
    status = claude_mod.run("/ant:status", [], env=NOW)
    assert status.requests == [] and "A colony served by code" in status.text, status.report()
    focus = claude_mod.run("/ant:focus the parser's error messages", [], env=NOW)
    assert focus.requests == [] and "the parser's error messages" in focus.text
    signals = state(claude_mod, "pheromones.json")["signals"]
    assert [s["content"] for s in signals if s["type"] == "FOCUS"] == ["the parser's error messages"]
    helped = claude_mod.run("/ant:help", [], env=NOW)
    assert helped.requests == [] and "/ant:build <N>" in helped.text


@pytest.mark.oldest  # the mod's smoke run on the oldest Claude Code Aether supports
def test_a_wave_of_four_runs_at_once_under_the_mod_with_no_queen_turn(claude_mod):
    _ready(claude_mod)
    script = [*_ants(claude_mod), subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    run = claude_mod.run("/ant:build 1 --approve", script, env=NOW, timeout=300)

    assert run.main_turns == [], run.report()  # the Queen was never asked
    finals = [t for t in run.subagent_turns("ant:builder") if any(m.get("role") == "assistant" for m in t.messages)]
    assert len(finals) == 4
    # the four ants ran together: each final answer was asked for before any came back
    assert max(t.received_at for t in finals) < min(t.answered_at for t in finals), run.report()
    data = state(claude_mod, "spawns.json")
    build = data["runs"][-1]
    spawns = {s["local"]: s for s in data["spawns"] if s["scope"] == build["scope"]}
    wave = [f"w{i}" for i in range(1, 5)]
    assert {w: (spawns[w]["status"], spawns[w]["via"], spawns[w]["runtime"]) for w in wave} == {w: ("recorded", "mod", "mod") for w in wave}
    assert all(spawns[w]["usage"]["total_tokens"] > 0 for w in wave)
    assert spawns["lessons"]["status"] == "recorded" and spawns["lessons"].get("model") is None
    phase = state(claude_mod, "PROJECT_PLAN.json")["phases"][0]
    assert (phase["status"], [t["status"] for t in phase["tasks"]]) == ("completed", ["completed"] * 4)
    assert LESSONS in json.dumps(state(claude_mod, "memory.json"), ensure_ascii=False)
    assert "runtime mod" in run.stderr.splitlines()[0] and "phase 1 · spawn w1 builder, w2 builder, w3 builder, w4 builder" in run.stderr
    assert aether_ok(claude_mod, "validate-state", "all")["pass"] is True


def test_a_stop_ends_a_headless_run_with_its_text_and_exit_status(claude_mod):
    _ready(claude_mod)
    run = claude_mod.run("/ant:build 1", [], env=NOW, args=["--output-format", "json"], check=False)
    assert run.requests == [] and run.code == 10, (run.code, run.stdout[-2000:], run.stderr[-2000:])
    assert "/ant:build 1 --approve" in run.stdout


def test_an_interactive_build_in_auto_mode_under_the_mod_takes_no_queen_turn(claude_mod):
    """Where users are: the TUI in tmux, auto mode. The ants hand their reports back through
    SubagentHandback; the mod reads each from turn.complete, drops Claude Code's copy for the main
    thread (it would start a Queen turn), and the build completes."""
    claude = claude_mod
    aether_ok(claude, "colony-init", "Two small modules", "--mode", "LIGHTWEIGHT")
    aether_ok(claude, "plan-load", "-", input=json.dumps(TWO_PLAN))

    def handback(text):
        return tool("SubagentHandback", message=text)

    script = [subagent("ant:route-setter", is_ref("lead1")).reply(handback(json_block(TWO_ASSIGNMENT)))]
    for local, path in (("w1", "mods/a.py"), ("w2", "mods/b.py")):
        script += [
            subagent("ant:builder", is_ref(local), turn(1)).reply(
                tool("Write", file_path=f"{claude.project}/{path}", content="VALUE = 1\n")
            ),
            subagent("ant:builder", is_ref(local), turn(2)).reply(handback(worker_result(f"{path} written", created=[path]))),
        ]
    script.append(subagent("ant:architect", is_ref("lessons")).reply(handback(LESSONS)))
    session = interactive(claude, ["/ant:build 1"], script, env=NOW, check=False)
    session.check(all_steps_used=False)

    assert session.main_turns == [], session.report()
    spawns = {s["local"]: s for s in state(claude, "spawns.json")["spawns"]}
    assert {k: (s["status"], s["via"]) for k, s in spawns.items() if k != "lessons"} == {
        k: ("recorded", "mod") for k in ("lead1", "w1", "w2")
    }, session.report()
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed", session.report()
    assert "Phase 1" in session.screen or "COMPLETE" in session.screen.upper(), session.screen


# ---------------------------------------------------------------- /ant:run: both runtimes, one state


def _three_phase_script(project, runtime: str) -> list:
    from .autopilot_script import LESSONS as RUN_LESSONS
    from .autopilot_script import VERIFIED as RUN_VERIFIED
    from .autopilot_script import WATCH_USE, builders, leads, queen

    ants = leads(3) + builders(project, "w1", 3)
    for _ in range(3):
        ants += honest_watcher(is_ref("watch1"), RUN_VERIFIED, usage=WATCH_USE)
    if runtime == "mod":
        return ants + [subagent("ant:architect", is_ref("lessons")).reply(say(RUN_LESSONS)) for _ in range(3)]
    return queen("", 14) + ants


def _outcome(claude) -> dict:
    """What a run leaves that must not depend on who ran the loop."""
    spawns = state(claude, "spawns.json")
    return {
        "colony": {k: state(claude, "COLONY_STATE.json")[k] for k in ("state", "current_phase", "mode")},
        "phases": [(p["id"], p["status"], [t["status"] for t in p["tasks"]]) for p in state(claude, "PROJECT_PLAN.json")["phases"]],
        "spawns": sorted((s["local"], s["subagent_type"], s["status"]) for s in spawns["spawns"] if s["local"] != "lessons"),
        "runs": [(r["command"], r.get("phase"), r.get("ended")) for r in spawns["runs"]],
        "lessons": [(e["phase"], e["learnings"]) for e in state(claude, "memory.json")["phase_learnings"]],
        "files": sorted(p.name for p in (claude.project / "mods").glob("m*.py")),
        "valid": aether_ok(claude, "validate-state", "all")["pass"],
    }


def test_three_phases_under_the_mod_and_by_the_markdown_reach_the_same_state(claude_bin, tmp_path, _isolated_home):
    from .autopilot_script import prepare
    from .harness import ClaudeCode

    outcomes, runs = {}, {}
    for runtime in ("mod", "prompts"):
        claude = ClaudeCode(claude_bin, tmp_path / runtime, home=_isolated_home, runtime=runtime)
        project = prepare(claude, 3, "STANDARD")
        runs[runtime] = claude.run("/ant:run", _three_phase_script(project, runtime), env=NOW, timeout=600)
        outcomes[runtime] = _outcome(claude)
    assert outcomes["mod"] == outcomes["prompts"]
    assert outcomes["mod"]["colony"]["state"] == "COMPLETED" and outcomes["mod"]["valid"] is True
    mod, prompts = runs["mod"], runs["prompts"]
    assert mod.main_turns == [] and len(prompts.main_turns) == 14  # the Queen's turns, gone
    assert "DONE: the colony is COMPLETED" in mod.text


# ---------------------------------------------------------------- killed mid-wave, resumed by either runtime


def test_a_build_killed_mid_wave_under_the_mod_resumes_by_the_markdown_with_nothing_twice(claude_bin, tmp_path, _isolated_home):
    from .colony_script import Queen, next_action, next_with, spawn_next
    from .fake_api import bash
    from .harness import ClaudeCode, run_and_kill
    from helpers.processes import SLEEP, alive, argv_of, descendants, is_sleeper

    mod = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime="mod")
    aether_ok(mod, "colony-init", "Two small modules", "--mode", "LIGHTWEIGHT")
    aether_ok(mod, "plan-load", "-", input=json.dumps(TWO_PLAN))
    aether_ok(mod, "next", "--build", "1")
    aether_ok(mod, "record", "lead1", "-", input=json_block(TWO_ASSIGNMENT))
    project = mod.project
    hanging = [subagent("ant:builder", is_ref(local), turn(1)).reply(bash(SLEEP, "wait for the build server")) for local in ("w1", "w2")]
    sleepers: set = set()

    def both_working(pid: int) -> bool:
        spawns = state(mod, "spawns.json")["spawns"]
        launched = {s["local"] for s in spawns if s["status"] == "launched" and s.get("runtime") == "mod"}
        sleepers.update(p for p in descendants(pid) if is_sleeper(argv_of(p)))
        return launched >= {"w1", "w2"} and len(sleepers) >= 2

    killed = run_and_kill(mod, "/ant:build 1", hanging, both_working, env=NOW)
    assert killed.code != 0 and killed.main_turns == []
    assert not any(alive(p) for p in sleepers)  # the ants died with it
    spawns = {s["local"]: s for s in state(mod, "spawns.json")["spawns"]}
    assert {k: s["status"] for k, s in spawns.items()} == {"lead1": "recorded", "w1": "launched", "w2": "launched"}
    briefs = {k: (project / ".aether" / "spawns" / spawns[k]["scope"] / f"{k}.md").read_text("utf-8") for k in ("w1", "w2")}

    # the same command in a new session, by the markdown command this time (mods off)
    prompts = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime="prompts")
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)
    q.step(lambda r: say(next_action(r)["text"]))
    ants = []
    for local, path in (("w1", "mods/a.py"), ("w2", "mods/b.py")):
        ants += [
            subagent("ant:builder", is_ref(local), turn(1)).reply(tool("Write", file_path=f"{project}/{path}", content="VALUE = 1\n")),
            subagent("ant:builder", is_ref(local), turn(2)).reply(say(worker_result(f"{path} written", created=[path]))),
        ]
    resumed = prompts.run("/ant:build 1", q.steps + ants, env=NOW, timeout=300)
    assert resumed.permission_denials == []
    spawns = {s["local"]: s for s in state(mod, "spawns.json")["spawns"]}
    assert sorted(spawns) == ["lead1", "w1", "w2"]  # the same spawns, no new ones
    assert {k: (spawns[k]["status"], spawns[k]["via"], spawns[k].get("runtime")) for k in ("w1", "w2")} == {
        k: ("recorded", "hook", None) for k in ("w1", "w2")
    }
    assert {k: (project / ".aether" / "spawns" / spawns[k]["scope"] / f"{k}.md").read_text("utf-8") for k in ("w1", "w2")} == briefs
    assert len(resumed.subagent_turns()) == 4  # each ant ran once more, nothing twice
    assert state(mod, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    assert aether_ok(mod, "validate-state", "all")["pass"] is True


# ---------------------------------------------------------------- headless: exit statuses of /ant:run


def test_headless_runs_end_with_a_status_per_kind_of_stop(claude_mod):
    from .autopilot_script import builders, failing, lead_answer, leads, prepare
    from helpers.git import git

    claude = claude_mod
    project = prepare(claude, 3, "LIGHTWEIGHT", wide_phase=2)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "the colony's start")
    as_text = ["--output-format", "json"]  # exit statuses hold for text and json output (not stream-json)

    big = {"input_tokens": 19_000, "output_tokens": 1000}
    lead = [subagent("ant:route-setter", is_ref("lead1")).reply(lead_answer, usage=big)]
    capped = claude.run("/ant:run --budget 60k", lead, env=NOW, args=as_text, check=False).check(exit_code=13)
    assert capped.requests and capped.main_turns == []
    assert "STOPPED: the spend cap" in capped.text and "To continue: /ant:run --budget 120k" in capped.text

    script = leads(1) + builders(project, "w1", 1)  # phase 1's Phase Lead answered before the cap stop
    script += [subagent("ant:builder", is_ref("w1")).reply(failing), subagent("ant:builder", is_ref("w2")).reply(failing)]
    aborted = claude.run("/ant:run --budget 10M", script, env=NOW, args=as_text, timeout=400, check=False)
    aborted.check(exit_code=12)
    assert "STOPPED: the failure protocol aborted the phase" in aborted.text and "To continue: /ant:run --from 2" in aborted.text
    assert "aether/phase-2-aborted" in git(project, "tag").split()

    (project / "mods" / "config.py").write_text("SEPARATOR = '-'\n", "utf-8")
    script = leads(2) + builders(project, "w1", 2) + builders(project, "w2", 1)
    script += [subagent("ant:architect", is_ref("lessons")).reply(say("- a shared settings module first"))]  # LIGHTWEIGHT: at the end
    done = claude.run("/ant:run --from 2", script, env=NOW, args=as_text, timeout=400)
    assert done.code == 0 and "DONE: the colony is COMPLETED" in done.text and done.main_turns == []
    assert state(claude, "COLONY_STATE.json")["state"] == "COMPLETED"


def test_where_mods_do_not_load_the_markdown_command_serves(claude_mod):
    """`--bare` loads no hooks module of an installed plugin: /ant:status goes to the model with
    the markdown body, the helper's text inside it, as before the mod."""
    from .colony_script import body_of, command_body, queen_turn

    aether_ok(claude_mod, "colony-init", "-", input="A colony without its mod")
    run = claude_mod.run("/ant:status", [queen_turn(1).reply(say("As shown."))], env=NOW, args=["--bare"])
    assert len(run.main_turns) == 1
    body = command_body(run.main_turns[0])
    assert body.startswith(body_of("status").split("!`", 1)[0].strip()[:40]) and "A colony without its mod" in body


def test_esc_mid_wave_loses_nothing_and_the_same_command_goes_on(claude_mod):
    """Esc while an ant works: the mod's loop ends with the helper's text; the ant finishes and
    its answer is recorded once; /ant:build 1 again goes on from there to the end."""
    from .interactive import Key

    claude = claude_mod
    aether_ok(claude, "colony-init", "One small module", "--mode", "LIGHTWEIGHT")
    one = {**TWO_PLAN, "phases": [{**TWO_PLAN["phases"][0], "tasks": TWO_PLAN["phases"][0]["tasks"][:1]}]}
    aether_ok(claude, "plan-load", "-", input=json.dumps(one))
    aether_ok(claude, "next", "--build", "1")
    aether_ok(claude, "record", "lead1", "-", input=json_block({"phase": 1, "workers": [TWO_ASSIGNMENT["workers"][0]]}))
    path = "mods/a.py"
    script = [
        subagent("ant:builder", is_ref("w1"), turn(1)).reply(tool("Write", file_path=f"{claude.project}/{path}", content="VALUE = 1\n")),
        subagent("ant:builder", is_ref("w1"), turn(2)).reply(
            tool("SubagentHandback", message=worker_result(f"{path} written", created=[path])), delay=8
        ),
        subagent("ant:architect", is_ref("lessons")).reply(tool("SubagentHandback", message=LESSONS)),
    ]
    esc = Key("Escape", then_wait=9)
    session = interactive(claude, ["/ant:build 1", esc, "/ant:build 1"], script, env=NOW, check=False)
    session.check(all_steps_used=False)

    assert "Aether: interrupted." in esc.screen and "/ant:build 1 goes on" in esc.screen, esc.screen
    assert session.main_turns == [], session.report()
    spawns = {s["local"]: s for s in state(claude, "spawns.json")["spawns"]}
    assert (spawns["w1"]["status"], spawns["w1"]["via"]) == ("recorded", "mod")  # after Esc, once
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed", session.report()


def test_the_mods_own_tests_pass_in_claude_codes_kit(claude_mod):
    """hooks/mod.test.ts, run by `claude plugin test` against the pinned Claude Code."""
    from .harness import REPO

    done = claude_mod.cli("plugin", "test", REPO, timeout=300)
    assert done.returncode == 0 and " 0 fail" in done.stdout + done.stderr, done.stdout + done.stderr
