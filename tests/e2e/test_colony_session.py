"""A whole colony session in real Claude Code: init, focus, plan (a scout researches the goal
first), build phase 1, continue.

Several `claude -p` runs share one fixture project. The scripted Queen runs exactly the
commands her command body says (see colony_script.py); the scripted ants do real work with real
Write/Edit/Read/Bash calls, so the helper checks real files. No --allowedTools and no
skip-permissions: each command's `allowed-tools` is the only grant, for the Queen and the ants
she spawns — the run fails on any permission denial.

The build of phase 1 (todo store, CLI, tests) goes through:
- a wave plan that needs the user's approval (`/ant:build 1`, then `/ant:build 1 --approve`);
- wave 1: w1 claims a file it never wrote (caught by spawn-finish) and its retry r1 recovers;
  w2 asks for a scout (a blocking SPAWN REQUEST): scout s1 writes a research note, rerun x1
  finishes the CLI; the advisory reviewer v1 finds a CRITICAL import error, rebuilds b1, b2
  fix it, reviewer v2 lets the wave pass;
- wave 2: w3's tests fail, the failure ladder skips the blind retry and debugger d1 patches
  the store;
- the watcher verifies, build-finish reads every task's outcome from the spawn tree, the
  learnings are recorded and one is promoted; /ant:continue advances to phase 2.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from .colony_script import (
    Queen,
    body_of,
    command_body,
    helper_result,
    hook_says,
    is_ref,
    is_spawn,
    json_block,
    next_action,
    next_with,
    queen_turn,
    run_body,
    runs_checks,
    spawn_next,
    spawn_request,
    worker_result,
)
from .fake_api import (
    agent,
    bash,
    first_user_contains,
    say,
    subagent,
    tool,
    tool_result_contains,
    turn,
)
from .harness import NOW, REPO, ClaudeCode, _front_matter, state

pytestmark = pytest.mark.e2e

GOAL = "A tiny todo CLI in Python: add items and list them"
FOCUS = "keep the store in memory first; no database yet"
PYTEST = "python3 -m pytest -q -p no:cacheprovider tests"
AGENT_FILES = {name: REPO / ".aether" / "workers" / f"{name}.md" for name in ("route-setter", "builder", "watcher", "scout")}

# ---------------------------------------------------------------- the code the ants write

STORE = '''"""An in-memory todo store."""

_items = []


def add(text):
    _items.append({"id": len(_items) + 1, "text": text})


def items():
    return list(_items)
'''
STORE_BUG = """    _items.append({"id": len(_items) + 1, "text": text})
"""
STORE_FIX = """    item = {"id": len(_items) + 1, "text": text}
    _items.append(item)
    return item
"""
CLI = '''"""The todo command line."""

import argparse

from todo.storage import add, items


def main(argv=None):
    parser = argparse.ArgumentParser(prog="todo")
    args = parser.parse_args(argv)
    return args
'''
CLI_SUBCOMMANDS_OLD = """    parser = argparse.ArgumentParser(prog="todo")
    args = parser.parse_args(argv)
    return args
"""
CLI_SUBCOMMANDS_NEW = """    parser = argparse.ArgumentParser(prog="todo")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("add").add_argument("text")
    sub.add_parser("list")
    args = parser.parse_args(argv)
    if args.command == "add":
        print(add(args.text)["id"])
    else:
        for item in items():
            print(item["id"], item["text"])
    return 0
"""
TESTS = """from todo import store


def test_add_returns_the_item():
    item = store.add("milk")
    assert item["text"] == "milk"


def test_items_lists_what_was_added():
    store.add("bread")
    assert "bread" in [i["text"] for i in store.items()]
"""
RESEARCH_NOTE = (
    '# argparse subcommands\n\nUse `parser.add_subparsers(dest="command", required=True)` and one `add_parser` per command (Python 3.7+).\n'
)

# ---------------------------------------------------------------- what the planner and critic say

PLAN_V1 = {
    "goal": GOAL,
    "phases": [
        {
            "id": 1,
            "name": "Everything",
            "description": "store, CLI and packaging at once",
            "tasks": [
                {"id": "1.1", "description": "store and CLI", "depends_on": []},
                {"id": "1.2", "description": "packaging", "depends_on": ["1.1"]},
            ],
            "success_criteria": ["it works"],
        }
    ],
}
PLAN_V2 = {
    "goal": GOAL,
    "phases": [
        {
            "id": 1,
            "name": "Core",
            "description": "the in-memory store, the CLI and their tests",
            "tasks": [
                {"id": "1.1", "description": "todo/store.py: add() and items() in memory", "depends_on": []},
                {"id": "1.2", "description": "todo/cli.py: `add` and `list` subcommands", "depends_on": []},
                {"id": "1.3", "description": "tests/test_todo.py for the store", "depends_on": ["1.1"]},
            ],
            "success_criteria": ["`python3 -m pytest` passes", "`todo add milk` then `todo list` shows milk"],
        },
        {
            "id": 2,
            "name": "Persistence",
            "description": "keep the items in a JSON file",
            "tasks": [
                {"id": "2.1", "description": "save and load the items", "depends_on": ["1.1"]},
                {"id": "2.2", "description": "the CLI uses the saved items", "depends_on": ["2.1"]},
                {"id": "2.3", "description": "tests for save and load", "depends_on": ["2.1"]},
            ],
            "success_criteria": ["items survive a restart"],
        },
        {
            "id": 3,
            "name": "Packaging",
            "description": "install it as a command",
            "tasks": [
                {"id": "3.1", "description": "pyproject.toml with a console script", "depends_on": []},
                {"id": "3.2", "description": "README with usage", "depends_on": []},
                {"id": "3.3", "description": "an install test", "depends_on": ["3.1"]},
            ],
            "success_criteria": ["`pip install .` gives a `todo` command"],
        },
    ],
}


def assessment(score: int, summary: str, issue: str, recommendation: str) -> str:
    return (
        f"## Planning Assessment\n### Overall Score\n{score}\n### Assessment Summary\n{summary}\n"
        f"### Detailed Feedback\n- see the key issues\n### Key Issues\n- {issue}\n"
        f"### Recommendations\n- {recommendation}"
    )


CRITIQUE_1 = assessment(
    70,
    "One phase does everything; no tests are planned.",
    "no test strategy and no phase boundaries",
    "split into core, persistence and packaging phases with test tasks",
)
CRITIQUE_2 = assessment(86, "Three phases that build on each other, each with tests.", "packaging could come earlier", "keep it as it is")

# ---------------------------------------------------------------- what the other ants say

ASSIGNMENT = {
    "phase": 1,
    "workers": [
        {"id": "store", "caste": "builder", "tasks": ["1.1"], "writes": ["todo/store.py", "todo/__init__.py"]},
        {"id": "cli", "caste": "builder", "tasks": ["1.2"], "writes": ["todo/cli.py"], "reads": ["todo/store.py"]},
        {
            "id": "tests",
            "caste": "builder",
            "tasks": ["1.3"],
            "writes": ["tests/test_todo.py"],
            "reads": ["todo/store.py"],
            "depends_on": ["store"],
        },
    ],
}
W3_FAILURE = {
    "status": "failed",
    "summary": "tests fail: store.add returns None",
    "files_created": ["tests/test_todo.py"],
    "files_modified": [],
    "failure": {
        "task": "1.3",
        "caste": "builder",
        "error": "TypeError: 'NoneType' object is not subscriptable",
        "root_cause": "store.add() does not return the item it adds",
        "suggested_fix": "return the item from add() in todo/store.py",
        "confidence": 60,
        "fix_scope": "other_files",
        "files": ["todo/store.py"],
        "category": "logic",
        "hypotheses": [{"hypothesis": "add() returns None", "result": "confirmed"}],
        "maps_to_criterion": True,
    },
}
DEBUG_RESULT = {
    "status": "completed",
    "diagnosis": "add() appended the item but returned None",
    "fix_applied": True,
    "files_modified": ["todo/store.py"],
    "verification": {"status": "pass", "details": "2 passed"},
}
CRITICAL = {
    "findings": [
        {
            "severity": "CRITICAL",
            "description": "todo/cli.py imports todo.storage, which does not exist",
            "location": "todo/cli.py:5",
            "recommendation": "import from todo.store",
        },
        {"severity": "LOW", "description": "no docstring on main()", "location": "todo/cli.py:8", "recommendation": "add one"},
    ],
    "summary": "the CLI cannot be imported",
    "critical_count": 1,
}
CLEAN = {
    "findings": [{"severity": "LOW", "description": "no docstring on main()", "location": "todo/cli.py:8", "recommendation": "add one"}],
    "summary": "the wave runs",
    "critical_count": 0,
}
WATCHER_REPORT = {
    "passed": True,
    "score": 90,
    "summary": "tests pass and the CLI adds and lists",
    "checks": [
        {"name": "syntax", "passed": True, "detail": "4 files compile"},
        {"name": "imports", "passed": True, "detail": "todo.cli and todo.store import"},
        {"name": "tests", "passed": True, "detail": "2 passed"},
    ],
}
LESSONS = "- argparse subcommands need dest= and required=True\n- return what a store adds, tests rely on it\n"
PROMOTED = "Store functions should return what they add: callers and tests rely on it"


def prompt_from(header: str, *parts: str) -> str:
    return "\n".join([header, *[p.strip("\n") for p in parts if p]])


def earlier_text(request, prefix: str) -> str:
    """What the Queen's latest Bash call starting with `prefix` printed (earlier in the run)."""
    calls = [u for u in request.tool_uses() if u["name"] == "Bash" and u["input"]["command"].startswith(prefix)]
    wanted = calls[-1]["id"]
    for m in request.messages:
        for c in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(c, dict) and c.get("type") == "tool_result" and c.get("tool_use_id") == wanted:
                return c["content"] if isinstance(c["content"], str) else "".join(b.get("text", "") for b in c["content"])
    raise AssertionError(f"no output of {prefix!r}")


def earlier_result(request, prefix: str) -> dict:
    """The helper's answer to the Queen's latest Bash call starting with `prefix`."""
    return json.loads(earlier_text(request, prefix).strip().splitlines()[-1])["result"]


# ---------------------------------------------------------------- the runs


def init_and_focus(claude):
    init = claude.run(
        f"/ant:init {GOAL}",
        [
            queen_turn(1).reply(lambda r: run_body(r, "aether colony-init - <<", stdin=GOAL)),
            queen_turn(2).reply(lambda r: run_body(r, "aether pheromone-render")),
            queen_turn(3).reply(say("The colony is READY. Steer it with /ant:focus, then /ant:plan.")),
        ],
        env=NOW,
    )
    focus = claude.run(
        f"/ant:focus {FOCUS}",
        queen(
            claude,
            queen_turn(1).reply(lambda r: run_body(r, "aether pheromone-emit FOCUS - <<", stdin=FOCUS)),
            queen_turn(2).reply(lambda r: run_body(r, "aether pheromone-render")),
            queen_turn(3).reply(say("Focus set.")),
        ),
        env=NOW,
    )
    return init, focus


GOAL_BRIEF = "# A todo CLI in Python\n\nargparse subcommands; keep the items in a module-level list first.\n"


def queen(claude, *steps) -> list:
    """The Queen's steps: none where the plugin's mod runs the command (no model turn)."""
    return [] if claude.runtime == "mod" else list(steps)


def brief_path(request) -> str:
    """The brief path a research task names (its `BRIEF:` line)."""
    return re.search(r"^BRIEF: (\S+)$", request.first_user_text, re.M).group(1)


def plan_run(claude):
    return claude.run(
        "/ant:plan",
        [
            *queen(
                claude,
                queen_turn(1).reply(lambda r: run_body(r, "aether next --plan")),
                # research first: one scout for the goal (no list given); then planner, critic, planner, critic
                *[queen_turn(n).reply(spawn_next) for n in range(2, 7)],
                queen_turn(7, hook_says("Aether next: done")).reply(lambda r: say(next_action(r)["text"])),
            ),
            # the scout writes its brief where the task says
            subagent("ant:scout", first_user_contains("--- RESEARCH TASK ---"), turn(1)).reply(
                lambda r: tool("Write", file_path=str(claude.project / brief_path(r)), content=GOAL_BRIEF)
            ),
            subagent("ant:scout", first_user_contains("--- RESEARCH TASK ---"), turn(2)).reply(
                lambda r: say(f"argparse and a module-level list are enough.\nBRIEF: {brief_path(r)}")
            ),
            # the ants
            subagent("ant:route-setter", first_user_contains("--- PLANNER ---"), ~first_user_contains("LOOP FEEDBACK"), turn(1)).reply(
                bash("ls -la", "Look at the project")
            ),
            subagent("ant:route-setter", ~first_user_contains("LOOP FEEDBACK"), turn(2)).reply(say(json_block(PLAN_V1, "A first plan."))),
            subagent("ant:watcher", first_user_contains("Phase 1: Everything"), turn(1)).reply(say(CRITIQUE_1)),
            subagent("ant:route-setter", first_user_contains("LOOP FEEDBACK"), turn(1)).reply(bash("ls -la", "Look at the project again")),
            subagent("ant:route-setter", first_user_contains("LOOP FEEDBACK"), turn(2)).reply(
                say(json_block(PLAN_V2, "Split as the critic asked."))
            ),
            subagent("ant:watcher", first_user_contains("Phase 1: Core"), turn(1)).reply(say(CRITIQUE_2)),
        ],
        env=NOW,
    )


def build_asks_for_approval(claude):
    plan_file = str(claude.project / ".aether" / "data" / "PROJECT_PLAN.json")
    return claude.run(
        "/ant:build 1",
        [
            *queen(
                claude,
                queen_turn(1).reply(lambda r: next_with(r, "aether next --build <N>", N=1)),
                queen_turn(2).reply(spawn_next),  # the Phase Lead, by reference
                # the hook recorded the plan; the next action asks the user
                queen_turn(3, hook_says("Aether next: ask")).reply(lambda r: say(next_action(r)["text"])),
            ),
            subagent("ant:route-setter", first_user_contains("--- PHASE LEAD ---"), turn(1)).reply(tool("Read", file_path=plan_file)),
            subagent("ant:route-setter", turn(2), tool_result_contains("todo/store.py")).reply(
                say(json_block(ASSIGNMENT, "Three builders; the tests wait for the store."))
            ),
        ],
        env=NOW,
    )


def approved_build(claude):
    q = Queen()
    project = str(claude.project)
    q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
    # wave 1: w1, w2 · r1, s1 · x1 · reviewer v1 · rebuild b1, b2 · reviewer v2; wave 2: w3 · d1;
    # the watcher — every action comes from the hooks' `Next:` line
    for _ in range(9):
        q.step(spawn_next)
    q.step(
        lambda r: bash(f"aether record lessons - <<'EOF'\n{LESSONS}global convention: {PROMOTED}\nEOF"), hook_says("Aether next: lessons")
    )
    q.step(lambda r: say(helper_result(r)["next"]["text"]))

    ants = [
        # wave 1: w1 writes the store but claims the package file too
        subagent("ant:builder", is_spawn("w1"), turn(1)).reply(tool("Write", file_path=f"{project}/todo/store.py", content=STORE)),
        subagent("ant:builder", is_spawn("w1"), turn(2)).reply(
            say(worker_result("store with add() and items()", created=["todo/store.py", "todo/__init__.py"]))
        ),
        # w2 writes a first CLI and asks for a scout before finishing it
        subagent("ant:builder", is_spawn("w2"), turn(1)).reply(tool("Write", file_path=f"{project}/todo/cli.py", content=CLI)),
        subagent("ant:builder", is_spawn("w2"), turn(2)).reply(
            say(
                spawn_request(
                    "scout",
                    "need the argparse subcommand API before adding `add` and `list`",
                    "Python 3 stdlib argparse: subparsers with a required command",
                )
                + "\n\n"
                + worker_result("CLI skeleton; the subcommands wait for the scout", created=["todo/cli.py"])
            )
        ),
        # r1: the retry makes the package file for real
        subagent(
            "ant:builder",
            is_spawn("r1"),
            turn(1),
        ).reply(tool("Write", file_path=f"{project}/todo/__init__.py", content='"""The todo package."""\n')),
        subagent("ant:builder", is_spawn("r1"), turn(2)).reply(say(worker_result("package file created", created=["todo/__init__.py"]))),
        # s1: the scout checks argparse and writes its note under .aether/research/
        subagent("ant:scout", is_spawn("s1"), turn(1)).reply(
            bash('python3 -c "import argparse; print(argparse.ArgumentParser().add_subparsers.__name__)"')
        ),
        subagent("ant:scout", is_spawn("s1"), turn(2), tool_result_contains("add_subparsers")).reply(
            tool("Write", file_path=f"{project}/.aether/research/argparse-subcommands.md", content=RESEARCH_NOTE)
        ),
        subagent("ant:scout", is_spawn("s1"), turn(3)).reply(
            say(
                worker_result(
                    "add_subparsers(dest='command', required=True), one add_parser per command",
                    created=[".aether/research/argparse-subcommands.md"],
                )
            )
        ),
        # x1: the rerun of w2 finishes the CLI with the scout's findings (the bad import stays)
        subagent(
            "ant:builder",
            is_spawn("x1"),
            turn(1),
        ).reply(tool("Read", file_path=f"{project}/todo/cli.py")),
        subagent("ant:builder", is_spawn("x1"), turn(2)).reply(
            tool("Edit", file_path=f"{project}/todo/cli.py", old_string=CLI_SUBCOMMANDS_OLD, new_string=CLI_SUBCOMMANDS_NEW)
        ),
        subagent("ant:builder", is_spawn("x1"), turn(3)).reply(say(worker_result("add and list subcommands", modified=["todo/cli.py"]))),
        # v1: the reviewer imports the CLI and finds it broken
        subagent("ant:watcher", is_spawn("v1"), turn(1)).reply(bash('python3 -c "import todo.cli"')),
        subagent("ant:watcher", is_spawn("v1"), turn(2), tool_result_contains("No module named 'todo.storage'")).reply(
            say(json_block(CRITICAL, "The CLI does not import."))
        ),
        # b1, b2: the rebuild; b1's store is fine, b2 fixes the import
        subagent("ant:builder", is_spawn("b1"), turn(1)).reply(say(worker_result("the store was not involved; nothing to change"))),
        subagent("ant:builder", is_spawn("b2"), turn(1)).reply(tool("Read", file_path=f"{project}/todo/cli.py")),
        subagent("ant:builder", is_spawn("b2"), turn(2)).reply(
            tool("Edit", file_path=f"{project}/todo/cli.py", old_string="from todo.storage import", new_string="from todo.store import")
        ),
        subagent("ant:builder", is_spawn("b2"), turn(3)).reply(bash('python3 -c "import todo.cli" && echo imports')),
        subagent("ant:builder", is_spawn("b2"), turn(4), tool_result_contains("imports")).reply(
            say(worker_result("import fixed: todo.store", modified=["todo/cli.py"]))
        ),
        # v2: the wave passes its second review
        subagent("ant:watcher", is_spawn("v2"), turn(1)).reply(bash('python3 -c "import todo.cli" && echo imports')),
        subagent("ant:watcher", is_spawn("v2"), turn(2), tool_result_contains("imports")).reply(say(json_block(CLEAN))),
        # wave 2: w3's tests fail on the store
        subagent("ant:builder", is_spawn("w3"), turn(1)).reply(tool("Write", file_path=f"{project}/tests/test_todo.py", content=TESTS)),
        subagent("ant:builder", is_spawn("w3"), turn(2)).reply(bash(PYTEST)),
        subagent("ant:builder", is_spawn("w3"), turn(3), tool_result_contains("1 failed")).reply(
            say(json_block(W3_FAILURE, "The store's add() returns None."))
        ),
        # d1: the debugger patches the store (not the test) and runs the tests
        subagent(
            "ant:builder",
            is_spawn("d1"),
            turn(1),
        ).reply(tool("Read", file_path=f"{project}/todo/store.py")),
        subagent("ant:builder", is_spawn("d1"), turn(2)).reply(
            tool("Edit", file_path=f"{project}/todo/store.py", old_string=STORE_BUG, new_string=STORE_FIX)
        ),
        subagent("ant:builder", is_spawn("d1"), turn(3)).reply(bash(PYTEST)),
        subagent("ant:builder", is_spawn("d1"), turn(4), tool_result_contains("2 passed")).reply(
            say(json_block(DEBUG_RESULT, "Patched add() to return the item."))
        ),
        # the watcher's verification: it runs the checks' commands its brief names
        subagent("ant:watcher", first_user_contains("--- VERIFICATION ---"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", first_user_contains("--- VERIFICATION ---"), turn(2), tool_result_contains("2 passed")).reply(
            say(json_block(WATCHER_REPORT, "All checks pass."))
        ),
    ]
    if claude.runtime == "mod":  # the lessons: an ant on the session's model writes them
        lessons = subagent("ant:architect", is_ref("lessons")).reply(say(f"{LESSONS}global convention: {PROMOTED}\n"))
        return claude.run("/ant:build 1 --approve", [*ants, lessons], env=NOW, args=["--continue"], timeout=600)
    return claude.run("/ant:build 1 --approve", q.steps + ants, env=NOW, args=["--continue"], timeout=600)


def continue_run(claude):
    """The build recorded the phase's lessons and no archivist is due: closing it is one call."""
    return claude.run(
        "/ant:continue",
        queen(
            claude,
            queen_turn(1).reply(lambda r: next_with(r, "aether next --continue")),
            queen_turn(2, tool_result_contains('"action":"done"')).reply(lambda r: say(helper_result(r)["text"])),
        ),
        env=NOW,
    )


# ---------------------------------------------------------------- the session


@pytest.mark.parametrize("runtime", ["prompts", "mod"])
def test_a_colony_session_plans_builds_and_continues(claude_bin, tmp_path, _isolated_home, runtime):
    """The same session and the same ants under both runtimes: the Queen's turns (the markdown
    commands), or the plugin's mod with no Queen turn past /ant:init — to the same state."""
    claude = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime=runtime)
    init, focus = init_and_focus(claude)
    plan = plan_run(claude)
    asked = build_asks_for_approval(claude)
    build = approved_build(claude)
    cont = continue_run(claude)
    runs = [init, focus, plan, asked, build, cont]

    # -- every command's allowed-tools were enough, for the Queen and every ant she spawned
    assert [r.permission_denials for r in runs] == [[]] * len(runs)
    ledger = state(claude, "spawns.json")
    build_run = [r for r in ledger["runs"] if r["command"] == "build"][-1]
    built = [s for s in ledger["spawns"] if s["scope"] == build_run["scope"]]
    sent = [s["local"] for s in built if s["local"] not in ("lead1", "lessons")]
    assert sent == ["w1", "w2", "s1", "r1", "x1", "v1", "b1", "b2", "v2", "w3", "d1", "watch1"], sent
    if runtime == "mod":  # no Queen turn past /ant:init; every answer recorded through the mod
        assert [len(r.main_turns) for r in runs] == [3, 0, 0, 0, 0, 0]
        assert {s["local"]: (s["status"], s["via"]) for s in built} == {n: ("recorded", "mod") for n in ["lead1", *sent, "lessons"]}
    else:
        _queens_path(claude, plan, asked, build, cont, built, sent)
    _the_state_afterwards(claude, plan)


def _queens_path(claude, plan, asked, build, cont, built, sent):
    """What the markdown commands' path shows: the bodies, the short references, the hooks."""
    # -- what Claude Code sent to the model: the command bodies (arguments substituted) …
    assert command_body(plan.main_turns[0]) == body_of("plan").replace("$ARGUMENTS", "")
    assert command_body(asked.main_turns[0]) == body_of("build").replace("$ARGUMENTS", "1")
    assert command_body(build.main_turns[0]) == body_of("build").replace("$ARGUMENTS", "1 --approve")
    assert command_body(cont.main_turns[0]) == body_of("continue")
    # … each agent's system prompt is its agent file, with the caste's tools …
    for run, name, tools in (
        (plan, "route-setter", {"Read", "Bash"}),
        (plan, "watcher", {"Read", "Bash"}),
        (build, "builder", {"Read", "Write", "Edit", "Bash"}),
        (build, "scout", {"Read", "Write", "Bash"}),
        (build, "watcher", {"Read", "Bash"}),
    ):
        turns = run.subagent_turns(f"ant:{name}")
        body = _front_matter(AGENT_FILES[name].read_text("utf-8"))[1].strip()
        assert turns and all(body in t.system for t in turns), name
        assert all(set(t.tools) == tools for t in turns), (name, turns[0].tools)
    # … the Queen sent short references; the hook put the helper's briefs in, unchanged; every
    # Agent call waited in the foreground with a scoped caste and no display name
    calls = build.tool_calls("Agent")
    assert all(c["input"]["run_in_background"] is False and "name" not in c["input"] for c in calls)
    assert all(len(c["input"]["prompt"]) < 150 for c in calls)
    assert [c["input"]["description"].split()[0] for c in calls] == sent
    spawn_dir = claude.project / ".aether" / "spawns"
    briefs = {}
    for call in calls:
        node = call["input"]["description"].split()[0]
        path = re.search(r"(\.aether/spawns/\S+\.md)", call["input"]["prompt"]).group(1)
        briefs[node] = (claude.project / path).read_text("utf-8")
        assert any(briefs[node].strip() in t.first_user_text for t in build.subagent_turns()), node
    assert "keep the store in memory first" in briefs["w1"]
    assert "ACTIVE PHEROMONES (as sensed by builder)" in briefs["w1"]
    assert "--- DEBUGGER ANT ---" in briefs["d1"] and "never rewrite it from scratch" in briefs["d1"]
    assert "--- RETRY CONTEXT ---" in briefs["r1"] and "todo/__init__.py (missing)" in briefs["r1"]
    assert "--- ADVISORY REVIEWER ---" in briefs["v1"] and "CRITICAL: the code does not run" in briefs["v1"]
    assert "--- REBUILD ---" in briefs["b2"] and "todo.storage" in briefs["b2"]
    assert "s1 (scout): add_subparsers(dest='command', required=True)" in briefs["x1"]
    assert "--- VERIFICATION ---" in briefs["watch1"] and "todo/cli.py" in briefs["watch1"]
    # … the answers were recorded by the hooks, exactly as Claude Code returned them, with usage
    build_run = [r for r in state(claude, "spawns.json")["runs"] if r["command"] == "build"][-1]
    assert {s["local"]: (s["status"], s["via"]) for s in built} == {n: ("recorded", "hook") for n in ["lead1", *sent]}
    assert all(s["usage"]["total_tokens"] > 0 and s["usage"]["duration_ms"] >= 0 for s in built)
    recorded = (spawn_dir / build_run["scope"] / "w3.answer.md").read_text("utf-8")
    assert recorded == json_block(W3_FAILURE, "The store's add() returns None.")
    # … and the Queen wrote no answer and no brief: her Bash calls are the loop's own
    assert [c["input"]["command"].split(" <<")[0] for c in build.tool_calls("Bash")] == [
        "aether next --build 1 --approve",
        "aether record lessons -",
    ]


def _the_state_afterwards(claude, plan):
    """The state the session leaves, whoever ran the loop."""
    spawn_dir = claude.project / ".aether" / "spawns"
    build_run = [r for r in state(claude, "spawns.json")["runs"] if r["command"] == "build"][-1]
    assert (spawn_dir / build_run["scope"] / "w3.answer.md").read_text("utf-8") == json_block(W3_FAILURE, "The store's add() returns None.")
    # the false claim caught, the decisions the helper made
    tree_now = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert tree_now["nodes"]["w1"]["unverified"] == [{"path": "todo/__init__.py", "problem": "missing"}]

    # -- the state files afterwards
    project_plan = state(claude, "PROJECT_PLAN.json")
    assert [p["name"] for p in project_plan["phases"]] == ["Core", "Persistence", "Packaging"]
    assert [p["status"] for p in project_plan["phases"]] == ["completed", "pending", "pending"]
    assert [t["status"] for t in project_plan["phases"][0]["tasks"]] == ["completed"] * 3
    colony = state(claude, "COLONY_STATE.json")
    assert (colony["state"], colony["current_phase"], colony["mode"]) == ("READY", 2, "STANDARD")
    tree = colony["spawn_tree"]
    assert tree["status"] == "finished" and tree["approval"]["approved_by"] == "user"
    assert tree["waves"][:2] == [["w1", "w2"], ["w3"]]
    roles = {nid: (n["role"], n["caste"], n["status"]) for nid, n in tree["nodes"].items()}
    assert roles == {
        "w1": ("worker", "builder", "failed"),
        "w2": ("worker", "builder", "completed"),
        "w3": ("worker", "builder", "failed"),
        "r1": ("retry", "builder", "completed"),
        "s1": ("sub_spawn", "scout", "completed"),
        "x1": ("rerun", "builder", "completed"),
        "v1": ("reviewer", "watcher", "completed"),
        "v2": ("reviewer", "watcher", "completed"),
        "b1": ("rebuild", "builder", "completed"),
        "b2": ("rebuild", "builder", "completed"),
        "d1": ("debugger", "builder", "completed"),
    }
    assert tree["nodes"]["s1"]["depth"] == 2 and tree["nodes"]["s1"]["parent"] == "w2"
    assert tree["spawn_requests"][0]["blocking"] is True and tree["spawn_requests"][0]["rerun"] == "x1"
    assert [r["action"] for r in tree["reviews"]["1"]] == ["rebuild", "continue"]
    failures = state(claude, "failures.json")
    assert [(r["task"], r["kind"], r["result"]) for r in failures["retry_log"]] == [
        ("1.1", "retry", "recovered"),
        ("1.3", "debugger", "recovered"),
    ]
    assert [(f["id"], f["task"]) for f in failures["friction"]] == [("FR-001", "1.1"), ("FR-002", "1.3")]
    assert [h["action"] for h in failures["history"]] == ["retry", "debug"]
    events = [e["type"] for e in state(claude, "events.json")["events"]]
    for expected in ("plan_approved", "spawn_started", "spawn_finished", "build_finished", "phase_advanced"):
        assert expected in events, expected
    assert events.index("build_finished") < events.index("phase_advanced")
    assert any(s["type"] == "INIT" and s["content"].strip() == GOAL for s in state(claude, "pheromones.json")["signals"])
    assert any(s["type"] == "FOCUS" and s["content"].strip() == FOCUS for s in state(claude, "pheromones.json")["signals"])
    assert any(s["type"] == "FEEDBACK" and s.get("source") == "auto:build" for s in state(claude, "pheromones.json")["signals"])
    loop = state(claude, "loops.json")["loops"][-1]
    assert (loop["type"], loop["status"], [i["score"] for i in loop["iterations"]]) == ("plan", "complete", [70, 86])
    memory = state(claude, "memory.json")
    assert memory["phase_learnings"][0]["phase"] == 1 and len(memory["phase_learnings"][0]["learnings"]) == 3
    learned = json.loads((claude.home / ".aether" / "learnings.json").read_text("utf-8"))["learnings"]
    assert [l["content"].strip() for l in learned] == [PROMOTED]
    assert (claude.project / ".aether" / "research" / "argparse-subcommands.md").read_text("utf-8") == RESEARCH_NOTE
    research = state(claude, "research.json")["plans"][-1]
    assert research["source"] == "goal" and [t["status"] for t in research["tasks"]] == ["collected"]
    planner = plan.subagent_turns("ant:route-setter")[0].first_user_text
    assert research["tasks"][0]["path"] in planner and GOAL_BRIEF.strip() not in planner

    # -- the code the colony built works
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=claude.project, capture_output=True, text=True
    )
    assert "2 passed" in tests.stdout, tests.stdout + tests.stderr
    assert "from todo.store import add, items" in (claude.project / "todo" / "cli.py").read_text("utf-8")


# ---------------------------------------------------------------- /ant:colonize and /ant:organize

APP_FILES = {
    "app.py": "from util import slug\n\n\ndef main():\n    print(slug('Hello World'))\n",
    "util.py": "def slug(text):\n    return text.lower().replace(' ', '-')\n\n\ndef unused():\n    return 1\n",
    "tests/test_util.py": "from util import slug\n\n\ndef test_slug():\n    assert slug('A B') == 'a-b'\n",
    # enough source files that the helper sends two colonizers (see aether.rules.colonize)
    **{f"words/w{i:02}.py": f"WORD = {i}\n" for i in range(17)},
}
MAPS = {
    "structure + stack": {
        "status": "completed",
        "lens": "structure + stack",
        "summary": "app.py calls util.slug; Python only, pytest, no CI",
        "findings": [{"area": "tests/test_util.py", "note": "run with python3 -m pytest"}],
        "suggested_signals": [{"type": "FOCUS", "content": "keep util.py small and fully tested"}],
    },
    "conventions and risks": {
        "status": "completed",
        "lens": "conventions and risks",
        "summary": "one helper module; words/ holds constants only",
        "findings": [{"area": "util.py", "note": "unused() is never called"}],
        "suggested_signals": [{"type": "REDIRECT", "content": "no third-party dependencies for string helpers"}],
    },
}
HYGIENE = {
    "recommendations": [
        {"file": "util.py", "issue": "dead_code", "recommendation": "remove unused(): grep -rn unused . finds no caller", "risk": "low"}
    ]
}


@pytest.mark.parametrize("runtime", ["prompts", "mod"])
def test_colonize_maps_in_parallel_and_organize_only_reports(claude_bin, tmp_path, _isolated_home, runtime):
    claude = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime=runtime)
    init_and_focus(claude)
    for path, text in APP_FILES.items():
        (claude.project / path).parent.mkdir(parents=True, exist_ok=True)
        (claude.project / path).write_text(text, "utf-8")

    colonize = claude.run(
        "/ant:colonize",
        [
            *queen(
                claude,
                queen_turn(1).reply(lambda r: run_body(r, "aether next --colonize")),
                queen_turn(2).reply(spawn_next),
                queen_turn(3, hook_says("Aether next: done")).reply(lambda r: say(next_action(r)["text"])),
            ),
            *[
                step
                for lens in MAPS
                for step in (
                    subagent("ant:colonizer", first_user_contains(f"Lens: {lens}"), turn(1)).reply(
                        bash("find . -type f -not -path './.aether/*' | head -200")
                    ),
                    subagent("ant:colonizer", first_user_contains(f"Lens: {lens}"), turn(2), tool_result_contains("./util.py")).reply(
                        say(json_block(MAPS[lens], f"The {lens} map."))
                    ),
                )
            ],
        ],
        env=NOW,
    )
    organize = claude.run(
        "/ant:organize util.py",
        [
            queen_turn(1).reply(lambda r: run_body(r, "aether hygiene-check")),
            queen_turn(2).reply(lambda r: agent("ant:architect", helper_result(r)["brief"] + "\nArea: util.py", "archivist")),
            subagent("ant:architect", turn(1)).reply(bash("grep -rn unused . --include=*.py")),
            subagent("ant:architect", turn(2), tool_result_contains("def unused")).reply(say(json_block(HYGIENE, "One dead function."))),
            queen_turn(3).reply(
                lambda r: run_body(r, "aether event-add hygiene_report architect -", stdin="1 recommendation: dead code in util.py")
            ),
            queen_turn(4).reply(say("- dead_code util.py: remove unused() (low risk). Which should I do?")),
        ],
        env=NOW,
    )

    assert colonize.permission_denials == [] and organize.permission_denials == []
    assert command_body(organize.main_turns[0]) == body_of("organize").replace("$ARGUMENTS", "util.py")
    if runtime == "prompts":
        assert command_body(colonize.main_turns[0]) == body_of("colonize")
        # both colonizers the helper planned ran at once from one message (by reference: the hook put the brief in)
        (message,) = [
            m
            for m in colonize.main_turns[-1].messages
            if m.get("role") == "assistant" and sum(1 for c in m["content"] if c.get("type") == "tool_use" and c["name"] == "Agent") == 2
        ]
        # the Queen wrote no map: the helper recorded them from the answers, and showed them
        assert [c["input"]["command"] for c in colonize.tool_calls("Bash")] == ["aether next --colonize"]
    else:  # the mod spawned both at once; no Queen turn
        assert colonize.main_turns == []
    spawned = [s for s in state(claude, "spawns.json")["spawns"] if s["subagent_type"] == "ant:colonizer"]
    briefs = [(claude.project / ".aether" / "spawns" / s["scope"] / f"{s['local']}.md").read_text("utf-8") for s in spawned]
    assert len(briefs) == 2 and all(s["status"] == "recorded" for s in spawned)
    assert sorted(re.search(r"Lens: (.+)", b).group(1) for b in briefs) == sorted(MAPS)
    mapping = colonize.subagent_turns("ant:colonizer")
    body = _front_matter((REPO / ".aether" / "workers" / "colonizer.md").read_text("utf-8"))[1].strip()
    assert len(mapping) == 4 and all(body in t.system and set(t.tools) == {"Read", "Bash"} for t in mapping)
    assert all(any(b.strip() in t.first_user_text for t in mapping) for b in briefs)
    assert all("Start with: " in b and "ACTIVE PHEROMONES (as sensed by colonizer)" in b for b in briefs)
    assert all(m["summary"] in colonize.text for m in MAPS.values())
    assert colonize.text.endswith("Next: /ant:plan")  # a FOCUS steers the colony already: no suggestions
    architect = organize.subagent_turns("ant:architect")
    assert architect and all(set(t.tools) == {"Read", "Bash"} for t in architect)
    assert "--- ARCHIVIST (hygiene report) ---" in architect[0].first_user_text
    # the mode came from the project; the map and the report were recorded, nothing else changed
    colony = state(claude, "COLONY_STATE.json")
    assert colony["mode"] == "FULL" and colony["mode_indicators"]["has_tests"] is True
    decisions = [(d["type"], d["content"]) for d in state(claude, "memory.json")["decisions"]]
    assert decisions[0][0] == "mode"
    assert [c.strip() for t, c in decisions if t == "codebase"] == [f"{lens}: {MAPS[lens]['summary']}" for lens in MAPS]
    events = [e["type"] for e in state(claude, "events.json")["events"]]
    assert "colonized" in events and "hygiene_report" in events
    assert {p: (claude.project / p).read_text("utf-8") for p in APP_FILES} == APP_FILES
