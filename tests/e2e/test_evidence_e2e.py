"""Evidence, not claims, in real Claude Code 2.1.328 (scripted ants, real commands):

- under both runtimes (the mod, and the markdown commands with the shell hooks): w1 writes
  `calc.py` and its test and runs it green; w2's change then breaks it without running it;
  watch1 runs the tests through a pipe (`| tail`: exit 0) and claims a pass → unverified (piped,
  and the imports never ran); watch2 runs what its brief names, sees `1 failed` and still claims a
  pass → contradicted: the phase fails, the real output recorded;
- three builders hit one `ModuleNotFoundError` and each describes it its own way → the
  common-cause breaker aborts the phase on the real error text (no retry);
- a watcher that ran nothing, twice, under the markdown commands → the build stops naming
  what is missing and how to go on; the person's acceptance completes it, recorded;
- the hooks and the mod both off (`disableAllHooks`): the Queen records each answer herself,
  nothing is kept of what the ants ran, so the tests a watcher really ran are not proven — the
  build stops unverified, never passes silently.
"""

from __future__ import annotations

import json
import re

import pytest

from .colony_script import (
    Queen,
    agent_report,
    driven_queen,
    is_ref,
    json_block,
    next_action,
    next_with,
    runs_checks,
    spawn_next,
    worker_result,
)
from .fake_api import Matcher, bash, say, subagent, tool, tool_result_contains, turn
from .harness import NOW, aether_ok, state

pytestmark = pytest.mark.e2e

PLAN = {
    "goal": "A tiny calculator",
    "phases": [
        {
            "id": 1,
            "name": "Calculator",
            "description": "add and sub",
            "tasks": [
                {"id": "1.1", "description": "calc.py: add(), with its test", "depends_on": []},
                {"id": "1.2", "description": "calc.py: sub()", "depends_on": ["1.1"]},
            ],
            "success_criteria": ["add(1, 2) == 3"],
        }
    ],
}
ASSIGNMENT = {
    "phase": 1,
    "workers": [
        {"id": "adder", "caste": "builder", "tasks": ["1.1"], "writes": ["calc.py", "tests/test_calc.py"]},
        {"id": "subber", "caste": "builder", "tasks": ["1.2"], "writes": ["calc.py"], "depends_on": ["adder"]},
    ],
}
CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
CLAIMS_A_PASS = json_block(
    {"passed": True, "score": 96, "summary": "all checks pass", "checks": [{"name": "tests", "passed": True, "detail": "green"}]}
)


def _ready(claude, plan=PLAN, assignment=ASSIGNMENT):
    aether_ok(claude, "colony-init", "-", input=plan["goal"])
    aether_ok(claude, "plan-load", "-", input=json.dumps(plan))
    aether_ok(claude, "next", "--build", "1")
    aether_ok(claude, "record", "lead1", "-", input=json_block(assignment))


def _adder(project, matcher) -> list:
    """w1 writes calc.py and its test (and runs nothing); w2 changes nothing."""
    return [
        subagent("ant:builder", matcher("w1"), turn(1)).reply(tool("Write", file_path=f"{project}/calc.py", content=CALC)),
        subagent("ant:builder", matcher("w1"), turn(2)).reply(tool("Write", file_path=f"{project}/tests/test_calc.py", content=TEST)),
        subagent("ant:builder", matcher("w1"), turn(3)).reply(
            say(worker_result("add() with its test", created=["calc.py", "tests/test_calc.py"]))
        ),
        subagent("ant:builder", matcher("w2"), turn(1)).reply(say(worker_result("nothing to change for sub() yet"))),
    ]


def _verdicts(claude) -> list:
    return [{c["name"]: (c["status"], c["why"]) for c in v["checks"]} for v in state(claude, "spawns.json")["runs"][-1]["verdicts"]]


def test_a_break_after_the_last_green_run_is_caught_and_a_lying_watcher_contradicted(runtime_claude):
    claude = runtime_claude
    _ready(claude)
    project = claude.project
    ants = [
        subagent("ant:builder", is_ref("w1"), turn(1)).reply(tool("Write", file_path=f"{project}/calc.py", content=CALC)),
        subagent("ant:builder", is_ref("w1"), turn(2)).reply(tool("Write", file_path=f"{project}/tests/test_calc.py", content=TEST)),
        subagent("ant:builder", is_ref("w1"), turn(3)).reply(bash("python3 -m pytest -q")),
        subagent("ant:builder", is_ref("w1"), turn(4), tool_result_contains("1 passed")).reply(
            say(worker_result("add() with its test; the tests pass", created=["calc.py", "tests/test_calc.py"]))
        ),
        # the break changes the file's size: within the second of w1's run, Python would trust its
        # cached bytecode of a same-sized calc.py (its check is the source's mtime and size)
        subagent("ant:builder", is_ref("w2"), turn(1)).reply(
            tool("Edit", file_path=f"{project}/calc.py", old_string="return a + b", new_string="return a - b  # sub()")
        ),
        subagent("ant:builder", is_ref("w2"), turn(2)).reply(say(worker_result("sub() added", modified=["calc.py"]))),
        # watch1: the tests through a pipe (tail exits 0 although they fail), and a claimed pass
        subagent("ant:watcher", is_ref("watch1"), turn(1)).reply(bash("python3 -m pytest -q | tail -3")),
        subagent("ant:watcher", is_ref("watch1"), turn(2)).reply(say(CLAIMS_A_PASS)),
        # watch2: runs what its brief names, sees the failure, claims a pass anyway
        subagent("ant:watcher", is_ref("watch2"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", is_ref("watch2"), turn(2), tool_result_contains("1 failed")).reply(say(CLAIMS_A_PASS)),
    ]
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 6) + ants, env=NOW, timeout=300)

    assert run.permission_denials == []
    first, second = _verdicts(claude)
    assert first["tests"][0] == "unverified" and "piped" in first["tests"][1]
    assert first["imports"] == ("unverified", "never ran") and first["syntax"][0] == "verified"
    assert second["imports"][0] == "verified" and second["tests"] == ("contradicted", "exit 1, yet the watcher claimed a pass")
    phase = state(claude, "PROJECT_PLAN.json")["phases"][0]
    assert phase["status"] == "failed"
    errors = [e["description"] for e in state(claude, "errors.json")["errors"]]
    assert any("tests contradicted: `python3 -m pytest -q` exited 1" in e and "assert -1 == 3" in e for e in errors), errors
    record = state(claude, "phase_records.json")["records"][-1]["verification"]
    assert record["passed"] is False and {c["name"]: c["status"] for c in record["checks"]}["tests"] == "contradicted"
    # what each ant ran, kept by code: w1's green run came before w2's change
    calls = aether_ok(claude, "evidence", "w1", "--json")["calls"]
    assert [(c["tool"], c.get("exit")) for c in calls] == [("Write", None), ("Write", None), ("Bash", 0)]
    shown = "\n".join([run.text, run.stderr])
    assert "FAILED" in run.text and "✗ tests contradicted" in run.text, shown
    assert ("runtime mod" in run.stderr) == (claude.runtime == "mod")


def test_one_real_import_error_described_three_ways_is_a_common_cause(claude):
    plan = {
        "goal": "Three modules on a shared config",
        "phases": [
            {
                "id": 1,
                "name": "Modules",
                "description": "three modules",
                "tasks": [{"id": f"1.{i}", "description": f"mods/m{i}.py", "depends_on": []} for i in (1, 2, 3)],
                "success_criteria": ["they import"],
            }
        ],
    }
    assignment = {
        "phase": 1,
        "workers": [{"id": f"m{i}", "caste": "builder", "tasks": [f"1.{i}"], "writes": [f"mods/m{i}.py"]} for i in (1, 2, 3)],
    }
    _ready(claude, plan, assignment)
    project = claude.project
    (project / "mods").mkdir()
    (project / "mods" / "__init__.py").write_text("", "utf-8")
    words = ["the shared settings are not there yet", "config cannot be imported from mods", "ImportError while loading m3"]
    ants = []
    for i, said in enumerate(words, start=1):
        failure = {
            "task": f"1.{i}",
            "error": said,
            "root_cause": said,
            "suggested_fix": "add the module",
            "confidence": 90,
            "fix_scope": "contained",
            "files": [f"mods/m{i}.py"],
            "category": "runtime",
        }
        ants += [
            subagent("ant:builder", is_ref(f"w{i}"), turn(1)).reply(
                tool("Write", file_path=f"{project}/mods/m{i}.py", content="from mods.config import SEPARATOR\n")
            ),
            subagent("ant:builder", is_ref(f"w{i}"), turn(2)).reply(bash(f'python3 -c "import mods.m{i}"')),
            subagent("ant:builder", is_ref(f"w{i}"), turn(3), tool_result_contains("No module named 'mods.config'")).reply(
                say(json_block({"status": "failed", "summary": said, "files_created": [], "files_modified": [], "failure": failure}))
            ),
        ]
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 3) + ants, env=NOW, timeout=300)

    assert [c["input"]["description"] for c in run.tool_calls("Agent")] == ["w1 builder", "w2 builder", "w3 builder"]  # no retry
    assert "a common cause" in run.text and "no module named 'mods.config'" in run.text.lower(), run.text
    nodes = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert nodes["status"] == "aborted"
    observed = [nodes["nodes"][f"w{i}"]["failure"]["observed"] for i in (1, 2, 3)]
    assert {o["error"] for o in observed} == {"ModuleNotFoundError: No module named 'mods.config'"}
    assert [nodes["nodes"][f"w{i}"]["failure"]["error"] for i in (1, 2, 3)] == words  # their own words, kept


def test_a_watcher_that_ran_nothing_stops_the_build_until_the_person_accepts(claude):
    """Without a run, nothing is proven — as with the hooks and the mod both off, where nothing
    is kept at all: the build stops and says what is missing; the person's word is recorded."""
    _ready(claude)
    project = claude.project
    ants = [
        *_adder(project, is_ref),
        subagent("ant:watcher", is_ref("watch1")).reply(say(CLAIMS_A_PASS)),
        subagent("ant:watcher", is_ref("watch2")).reply(say(CLAIMS_A_PASS)),
    ]
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 6) + ants, env=NOW, timeout=300)
    assert "Phase 1 cannot complete" in run.text and "? tests unverified: `python3 -m pytest -q` never ran" in run.text
    assert "/ant:build 1 --answer accept <why>" in run.text
    assert aether_ok(claude, "next")["why"] == "unverified"
    done = aether_ok(claude, "next", "--build", "1", "--answer", "accept", "-", input="I ran the tests myself: green")
    if done["action"] == "lessons":
        done = aether_ok(claude, "record", "lessons", "-", input="- run the named commands\n")["next"]
    assert "COMPLETED" in done["text"] and re.search(r"~ tests accepted.*I ran the tests myself", done["text"])
    assert state(claude, "phase_records.json")["records"][-1]["verification"]["accepted"]["by"] == "user"


def _briefed(local: str) -> Matcher:
    """An ant sent with the short prompt naming its brief file (no hook put the brief in)."""
    return Matcher(f"briefed({local})", lambda r: re.search(rf"\.aether/spawns/[\w-]+/{local}\.md", r.first_user_text) is not None)


def _hookless_queen(request):
    """The Queen without hooks (build.md's third case): she pipes each ant's answer to
    `aether record <id>` herself, then acts on the next action it prints."""
    uses = [u for u in request.tool_uses() if u["name"] == "Agent"]
    results = {r["tool_use_id"]: r for r in request.tool_results()}
    sent = [u for u in uses if u["id"] in results]
    if sent:
        return [
            bash(f"aether record {u['input']['description'].split()[0]} - <<'EOF'\n{agent_report(results[u['id']]['text'])}\nEOF")
            for u in sent
        ]
    action = next_action(request)
    return spawn_next(request) if action["action"] == "spawn" else say(action["text"])


def test_with_the_hooks_and_the_mod_off_nothing_is_proven_and_the_build_stops(claude_mod):
    claude = claude_mod  # the mod would serve /ant:build in code: here it must not load at all
    _ready(claude)
    project = claude.project
    ants = _adder(project, _briefed)
    for local in ("watch1", "watch2"):  # each really runs the tests, green — and nothing keeps it
        ants += [
            subagent("ant:watcher", _briefed(local), turn(1)).reply(bash("python3 -m pytest -q")),
            subagent("ant:watcher", _briefed(local), turn(2), tool_result_contains("1 passed")).reply(say(CLAIMS_A_PASS)),
        ]
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
    for _ in range(9):
        q.step(_hookless_queen)
    run = claude.run("/ant:build 1 --approve", q.steps + ants, env=NOW, args=["--settings", '{"disableAllHooks": true}'], timeout=300)

    assert len(run.main_turns) == 10  # the markdown command ran: no mod
    assert not (project / ".aether" / "data" / "evidence").exists() or not any((project / ".aether" / "data" / "evidence").iterdir())
    assert "Phase 1 cannot complete" in run.text and "? tests unverified: `python3 -m pytest -q` never ran" in run.text
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] != "completed"
    assert {s["local"]: s["via"] for s in state(claude, "spawns.json")["spawns"]}["watch1"] == "queen"
