"""A FULL build's code loop and a watcher whose answer holds no score, in real Claude Code under
both runtimes (the mod, and the markdown commands with the shell hooks):

- watch1 runs its checks honestly, then answers garbage: the loop scores nothing and sends no
  builder; watch2 is sent, told why the last answer was refused; it answers garbage too: the
  build stops and asks the person (exit 11 under the mod), saying what happened and how to go on;
- watch2 answers well instead: the loop scores it (100, complete) and the build finishes.
"""

from __future__ import annotations

import json
import re

import pytest

from .colony_script import CALCULATOR, driven_queen, honest_watcher, is_ref, json_block, with_tests, worker_result
from .fake_api import say, subagent, tool, turn
from .harness import NOW, aether_ok, state

pytestmark = pytest.mark.e2e

ASSIGNMENT = {"phase": 1, "workers": [{"id": "adder", "caste": "builder", "tasks": ["1.1"], "writes": ["calc.py", "tests/test_calc.py"]}]}
CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
GARBAGE = "LGTM!!! Everything checks out, ship it. {not json"
GOOD = json_block(
    {
        "passed": True,
        "score": 100,
        "summary": "every check passes",
        "checks": [{"name": "tests", "passed": True, "detail": "2 passed"}],
        "score_parts": {
            "tests": {"passed": 2, "failed": 0},
            "types": {"errors": 0},
            "lint": {"errors": 0},
            "coverage": 95,
            "plan_alignment": 1,
            "spec_alignment": 1,
        },
        "findings": [],
    }
)
LESSONS = "- a one-task phase verifies in one watcher\n"
AS_JSON = ["--output-format", "json"]  # exit statuses hold for json output (not stream-json)


def _ready(claude) -> None:
    """A FULL colony of CALCULATOR whose Phase Lead answered: its wave waits for approval."""
    with_tests(claude.project)
    aether_ok(claude, "colony-init", "-", "--mode", "FULL", input=CALCULATOR["goal"])
    aether_ok(claude, "plan-load", "-", input=json.dumps(CALCULATOR))
    # FULL's launch check: a module has no program to start, so the project names what stands for it
    (claude.project / ".aether" / "config.yaml").write_text('verify:\n  launch: python3 -c "import calc"\n', "utf-8")
    aether_ok(claude, "next", "--build", "1")
    aether_ok(claude, "record", "lead1", "-", input=json_block(ASSIGNMENT))


def _builder(project) -> list:
    return [
        subagent("ant:builder", is_ref("w1"), turn(1)).reply(tool("Write", file_path=f"{project}/calc.py", content=CALC)),
        subagent("ant:builder", is_ref("w1"), turn(2)).reply(tool("Write", file_path=f"{project}/tests/test_calc.py", content=TEST)),
        subagent("ant:builder", is_ref("w1"), turn(3)).reply(
            say(worker_result("add() with its test", created=["calc.py", "tests/test_calc.py"]))
        ),
    ]


def _spawned(claude) -> list:
    """The build's spawns, in the order they were handed out."""
    ledger = state(claude, "spawns.json")
    scope = ledger["runs"][-1]["scope"]
    return [s["local"] for s in ledger["spawns"] if s["scope"] == scope]


def _ants(run) -> set:
    """The spawns whose briefs reached the model."""
    return {m.group(1) for t in run.subagent_turns() for m in [re.search(r"/(\w+)\.md\]", t.first_user_text)] if m}


def _watch2_brief(run) -> str:
    return next(t.first_user_text for t in run.subagent_turns("ant:watcher") if re.search(r"/watch2\.md\]", t.first_user_text))


def test_a_verification_without_a_score_is_asked_again_then_the_person(runtime_claude):
    claude = runtime_claude
    _ready(claude)
    ants = [*_builder(claude.project), *honest_watcher(is_ref("watch1"), GARBAGE), *honest_watcher(is_ref("watch2"), GARBAGE)]
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 5) + ants, env=NOW, args=AS_JSON, check=False, timeout=300)
    run.check(exit_code=11 if claude.runtime == "mod" else 0)  # the mod ends on the person's question

    assert run.permission_denials == []
    # watch1's garbage sent no fix-up builder: the watcher was asked again, told why
    assert _spawned(claude) == ["lead1", "w1", "watch1", "watch2"] and _ants(run) == {"w1", "watch1", "watch2"}
    brief = _watch2_brief(run)
    assert "--- VERIFICATION ---" in brief and "Your last answer was refused — the watcher's answer is not valid JSON" in brief
    # the second garbage answer: the person is asked, told what happened and how to go on
    text = run.text
    assert "Phase 1's code loop could not score its verification: watch1 and watch2 answered without a score" in text, text
    assert "no builder was sent to fix anything" in text and "✓ tests:" in text
    assert "Answer with /ant:build 1 --answer <your choice, and guidance>:" in text and "accept <why>" in text
    loop = state(claude, "loops.json")["loops"][-1]
    assert (loop["status"], loop["iterations"]) == ("active", [])
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert "refinements" not in tree and list(tree["nodes"]) == ["w1"]
    assert state(claude, "COLONY_STATE.json")["state"] == "EXECUTING"
    answered = aether_ok(claude, "next", "--build", "1", "--answer", "stop", "-", input="not now")
    assert answered["action"] == "stop" and answered["text"] == "Build of phase 1 stopped: not now"


def test_a_good_second_answer_is_scored_and_the_build_finishes(runtime_claude):
    claude = runtime_claude
    _ready(claude)
    ants = [*_builder(claude.project), *honest_watcher(is_ref("watch1"), GARBAGE), *honest_watcher(is_ref("watch2"), GOOD)]
    if claude.runtime == "mod":  # the mod asks an architect for the phase's lessons; the Queen writes them herself
        ants.append(subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS)))
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 6, LESSONS) + ants, env=NOW, args=AS_JSON, timeout=300)

    assert run.code == 0 and run.permission_denials == []
    assert _spawned(claude)[:4] == ["lead1", "w1", "watch1", "watch2"] and _ants(run) - {"lessons"} == {"w1", "watch1", "watch2"}
    assert "Your last answer was refused" in _watch2_brief(run)
    loop = state(claude, "loops.json")["loops"][-1]
    assert [(i["score"], i["decision"]) for i in loop["iterations"]] == [(100, "complete")] and loop["status"] == "complete"
    record = state(claude, "phase_records.json")["records"][-1]
    assert record["status"] == "completed" and record["watcher"]["summary"] == "every check passes"
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    assert "could not score" not in run.text and "COMPLETED" in run.text, run.text
