"""Modes, the research fan-out, the code loop and recovery, each in real Claude Code.

Every case is a scripted session: the Queen runs exactly the commands her command body spells
out (colony_script.py), the ants do real work with real tool calls, and the helper answers for
real. No --allowedTools and no skip-permissions: each command's `allowed-tools` is the only
grant. State is prepared with the helper where the case does not need the slash command.

A build is the helper's loop (`aether next --build N`): the Queen sends the Agent calls each
`spawn` action lists, the hooks record the answers and add the next action (`Next: …`), and she
shows the text of `ask`, `done` and `stop`.

- a LIGHTWEIGHT build: no approval, no reviewer, no watcher ant; the finish runs the syntax
  check itself and asks for no lessons;
- a FULL build in a git repository whose code loop stagnates and asks the user: the helper
  scores each verification itself, loop-present is shown, the user's answer
  (`/ant:build 1 --answer …` → `aether next --build 1 --answer refine -`) is stored and plans
  the next round, which completes the loop; every iteration is a checkpoint ref;
- a research fan-out: three scouts in ONE message, the planner gets their briefs' paths (and
  the recurring frictions), not their contents;
- a recovery after an abort: the failure ladder aborts the phase, the `stop` action's text is
  the abort report with the recovery options, the user fixes a file by hand and skips a task,
  `/ant:build 1` resumes the phase (a new Phase Lead for what is left) and completes it.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from .colony_script import (
    SLUG,
    Queen,
    body_of,
    command_body,
    hand_back,
    honest_watcher,
    hook_lines,
    hook_says,
    is_spawn,
    json_block,
    next_action,
    next_with,
    run_body,
    runs_checks,
    slug_assignment,
    slug_plan,
    spawn_next,
    worker_result,
)
from .fake_api import (
    bash,
    first_user_contains,
    say,
    subagent,
    tool,
    tool_result_contains,
    turn,
)
from .harness import NOW, state
from helpers.git import git, init_repo

pytestmark = pytest.mark.e2e

PYTEST = "python3 -m pytest -q -p no:cacheprovider tests"


# ---------------------------------------------------------------- shared steps


def heredoc(command: str, text: str) -> dict:
    """`command` with `text` on stdin (a helper-given command, e.g. a lessons action's)."""
    return bash(f"{command} <<'EOF'\n{text.rstrip(chr(10))}\nEOF")


def agent_messages(run) -> list[list[dict]]:
    """The Agent calls of each assistant message of the main thread that holds some."""
    seen, out = set(), []
    for request in run.main_turns:
        for m in request.messages:
            if m.get("role") != "assistant" or not isinstance(m.get("content"), list):
                continue
            calls = [c for c in m["content"] if c.get("type") == "tool_use" and c["name"] == "Agent"]
            key = tuple(c["id"] for c in calls)
            if calls and key not in seen:
                seen.add(key)
                out.append(calls)
    return out


SHOW = "show the user this text:"


def shown(request) -> str:
    """The text an `ask`, `done` or `stop` action says to show the user: what follows the hooks'
    `Next: … show the user this text:` line, else the `text` of the helper's last answer."""
    lines = hook_lines(request)
    starts = [i for i, line in enumerate(lines) if line.startswith("Aether next: ") and line.endswith(SHOW)]
    if starts:
        return "\n".join(lines[starts[-1] + 1 :])
    return next_action(request)["text"]


def record_lessons(request, lessons: str) -> dict:
    """The Queen's reply to a lessons action: her lines piped to the command it gives."""
    action = next_action(request)
    assert action["action"] == "lessons", action
    command = action.get("command") or action["text"].rsplit("Record them with: ", 1)[1]
    return heredoc(command.split(" <<")[0], lessons)


def prepare(claude, goal: str, plan: dict, *init_args):
    for args, stdin in ((("colony-init", "-", *init_args), goal), (("plan-load", "-"), json.dumps(plan))):
        done = claude.aether(*args, input=stdin, env=NOW)
        assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- (a) a LIGHTWEIGHT build

SETTINGS = "slug/settings.json"


@pytest.mark.oldest  # the markdown runtime's smoke run on the oldest Claude Code Aether supports
@pytest.mark.parametrize("mode", ["default", "auto"])
def test_a_lightweight_build_spawns_no_reviewer_and_no_watcher(claude, mode):
    """Under `claude -p` as it starts (the default permission mode), and in auto mode (`--permission-mode
    auto`; the default of `claude -p` in 2.1.285–2.1.301): there each ant hands its report back
    through SubagentHandback and the Agent result only points at a message; the hook records the
    report the result carries beside it."""
    prepare(claude, "A slug helper", slug_plan(SETTINGS), "--mode", "LIGHTWEIGHT")
    project = claude.project
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)  # the Phase Lead
    q.step(spawn_next, hook_says("Aether next: spawn"))  # no approval asked: w1 and w2 at once
    q.step(lambda r: say(shown(r)), hook_says("Aether next: done"))
    ants = [
        subagent("ant:route-setter", first_user_contains("--- PHASE LEAD ---")).reply(
            hand_back(json_block(slug_assignment(SETTINGS), "Two independent builders."))
        ),
        subagent("ant:builder", is_spawn("w1"), turn(1)).reply(tool("Write", file_path=f"{project}/slug/core.py", content=SLUG)),
        subagent("ant:builder", is_spawn("w1"), turn(2)).reply(
            tool("Write", file_path=f"{project}/slug/__init__.py", content="from slug.core import slugify\n")
        ),
        subagent("ant:builder", is_spawn("w1"), turn(3)).reply(
            hand_back(worker_result("slugify() in slug/core.py", created=["slug/core.py", "slug/__init__.py"]))
        ),
        subagent("ant:builder", is_spawn("w2"), turn(1)).reply(
            tool("Write", file_path=f"{project}/slug/settings.json", content='{"separator": "-"}\n')
        ),
        subagent("ant:builder", is_spawn("w2"), turn(2)).reply(
            hand_back(worker_result("the separator setting", created=["slug/settings.json"]))
        ),
    ]
    args = ["--permission-mode", "auto"] if mode == "auto" else []
    run = claude.run("/ant:build 1", q.steps + ants, env=NOW, timeout=300, args=args)

    assert run.permission_denials == []
    assert command_body(run.main_turns[0]) == body_of("build").replace("$ARGUMENTS", "1")
    # the Queen ran the loop's one command; every other action came from the hooks' `Next:` lines
    assert run.bash_commands() == ["aether next --build 1"]
    # the mode decided: the plan needed no approval, the two-worker wave no reviewer, and no
    # watcher ant was spawned at all — the Agent calls were the lead, then both builders at once
    assert [[c["input"]["description"] for c in m] for m in agent_messages(run)] == [["lead1 route-setter"], ["w1 builder", "w2 builder"]]
    assert run.subagent_turns("ant:watcher") == []
    # in auto mode every Agent result only pointed at the report (handed back through SubagentHandback)
    assert ["SubagentHandback" in run.tool_result(c)["text"] for c in run.tool_calls("Agent")] == [mode == "auto"] * 3
    colony = state(claude, "COLONY_STATE.json")
    tree = colony["spawn_tree"]
    assert (colony["mode"], tree["approval"]["approved_by"]) == ("LIGHTWEIGHT", "auto:LIGHTWEIGHT")
    assert tree["review_skipped"] == {"1": "mode_has_no_reviewer"}
    assert sorted(tree["nodes"]) == ["w1", "w2"] and tree["status"] == "finished"
    ledger = state(claude, "spawns.json")
    build = ledger["runs"][-1]
    assert (build["command"], build["watcher_spawns"], build["answers"], build["finished"]) == ("build", False, [], True)
    assert {s["local"]: (s["status"], s["via"]) for s in ledger["spawns"] if s["scope"] == build["scope"]} == {
        n: ("recorded", "hook") for n in ("lead1", "w1", "w2")
    }
    assert not (project / ".aether" / "data" / "loops.json").exists()  # no code loop was bound
    # the finish ran the syntax check itself, on the files the builders really wrote
    record = state(claude, "phase_records.json")["records"][-1]
    check = record["syntax_check"]
    assert (record["status"], record["watcher"], record["code_loop"]) == ("completed", None, None)
    assert (check["kind"], check["passed"], check["checked"], check["failed"]) == ("syntax", True, 3, 0)
    assert sorted(record["files_created"]) == ["slug/__init__.py", "slug/core.py", "slug/settings.json"]
    assert "syntax check passed" in run.text and "Next: /ant:continue" in run.text
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    # LIGHTWEIGHT learns at the project's end: no lessons asked for, none stored
    assert build["lessons_due"] is False and "Aether next: lessons" not in "\n".join(hook_lines(run.main_turns[-1]))
    assert not any(e.get("phase") == 1 for e in state(claude, "memory.json").get("phase_learnings", []))
    # LIGHTWEIGHT emits FEEDBACK only: no FOCUS on entering the phase
    auto = [(s["type"], s["source"]) for s in state(claude, "pheromones.json")["signals"] if str(s.get("source", "")).startswith("auto:")]
    assert auto == [("FEEDBACK", "auto:build")]


# ---------------------------------------------------------------- (b) a FULL build's code loop

STATS_PLAN = {
    "goal": "A stats library",
    "phases": [
        {
            "id": p,
            "name": name,
            "description": desc,
            "tasks": [{"id": f"{p}.1", "description": task, "depends_on": []}],
            "success_criteria": [crit],
        }
        for p, name, desc, task, crit in (
            (1, "Mean", "mean() and its tests", "stats/mean.py and tests/test_mean.py", "`python3 -m pytest` passes"),
            (2, "Median", "median()", "stats/median.py", "median works"),
            (3, "Mode", "mode()", "stats/mode.py", "mode works"),
            (4, "CLI", "a command line", "stats/cli.py", "the CLI prints the mean"),
        )
    ],
}
STATS_ASSIGNMENT = {
    "workers": [
        {"id": "mean", "caste": "builder", "tasks": ["1.1"], "writes": ["stats/__init__.py", "stats/mean.py", "tests/test_mean.py"]}
    ]
}
MEAN = "import os\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
MEAN_TEST = "from stats.mean import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"
EMPTY_TEST = "\n\ndef test_empty():\n    assert mean([]) == 0.0\n"
ANSWER = "Another round: drop the unused import in stats/mean.py; coverage can wait for phase 2."


def scored(spec: float, lint_errors: int, findings: list, tests: int = 2) -> dict:
    """A verification with its score parts (all six apply, so the score is out of 100)."""
    return {
        "passed": True,
        "score": 80,
        "summary": "; ".join(findings) or "every check passes",
        "checks": [
            {"name": "tests", "passed": True, "detail": f"{tests} passed"},
            {"name": "lint", "passed": lint_errors == 0, "detail": f"{lint_errors} error(s)"},
            {"name": "execution", "passed": True, "detail": "python3 -c 'from stats.mean import mean'"},
        ],
        "score_parts": {
            "tests": {"passed": tests, "failed": 0},
            "types": {"errors": 0},
            "lint": {"errors": lint_errors},
            "coverage": 90 if spec == 1 else 60,
            "plan_alignment": 1,
            "spec_alignment": spec,
        },
        "findings": findings,
    }


LINT = "stats/mean.py:1 F401 `os` imported but unused"
GUARD = "stats/mean.py:5 mean([]) raises ZeroDivisionError and no test covers it"
VERIFY_1 = scored(0.6, 1, [LINT, GUARD], tests=1)  # 69
VERIFY_2 = scored(0.8, 1, [LINT])  # 72
VERIFY_3 = scored(0.9, 1, [LINT])  # 73.5: less than 5 points over two iterations → ask the user
VERIFY_4 = scored(1, 0, [])  # 100


def working_copy(request) -> str:
    """The worktree an isolated builder's brief names (`cd <it> && …`)."""
    return re.search(r"Start EVERY Bash command with `cd (\S+) && `", request.first_user_text).group(1)


def test_a_full_build_whose_code_loop_stagnates_asks_the_user_and_goes_on(claude):
    project = claude.project
    init_repo(project, {"README.md": "stats\n"})
    head = git(project, "rev-parse", "HEAD")
    prepare(claude, "A stats library", STATS_PLAN, "--mode", "FULL")
    # FULL's launch check: a library has no program to start, so the project names what stands for it
    (project / ".aether" / "config.yaml").write_text('verify:\n  launch: python3 -c "import stats.mean"\n', "utf-8")
    # the build is started and its wave plan recorded by the helper (`aether record`, as without hooks)
    lead = json.loads(claude.aether("next", "--build", "1", env=NOW).stdout)["result"]
    assert [s["id"] for s in lead["spawns"]] == ["lead1"]
    planned = claude.aether("record", "lead1", "-", input=json_block(STATS_ASSIGNMENT), env=NOW)
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["result"]["next"]["action"] == "ask"  # FULL asks the user to approve
    loop = state(claude, "loops.json")["loops"][-1]  # the code loop build-start bound (FULL)
    assert (loop["type"], loop["phase"], loop["status"]) == ("code", 1, "active")

    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
    q.step(spawn_next)  # w1
    q.step(spawn_next)  # the watcher's verification, watch1
    for _ in range(2):  # the helper scored it: refine, then again after y1 — f1 · y1 · f2 · y2
        q.step(spawn_next, hook_says("Aether next: spawn"))
        q.step(spawn_next, hook_says("Aether next: spawn"))
    q.step(lambda r: say(shown(r)), hook_says("Aether next: ask"))

    def in_copy(path, content):  # FULL isolates its builders: w1 writes in its own worktree
        return lambda r: tool("Write", file_path=f"{project}/{working_copy(r)}/{path}", content=content)

    builder = {
        "w1": [
            in_copy("stats/__init__.py", ""),
            in_copy("stats/mean.py", MEAN),
            in_copy("tests/test_mean.py", MEAN_TEST),
            say(worker_result("mean() and its tests", created=["stats/__init__.py", "stats/mean.py", "tests/test_mean.py"])),
        ],
        "f1": [
            tool(
                "Edit",
                file_path=f"{project}/stats/mean.py",
                old_string="sum(xs) / len(xs)\n",
                new_string="sum(xs) / len(xs) if xs else 0.0\n",
            ),
            tool("Write", file_path=f"{project}/tests/test_mean.py", content=MEAN_TEST + EMPTY_TEST),
            say(worker_result("mean() of an empty list is 0.0, with its test", modified=["stats/mean.py", "tests/test_mean.py"])),
        ],
        "f2": [say(worker_result("nothing left to fix in the tests"))],
    }
    ants = [
        subagent("ant:builder", is_spawn(node), turn(n + 1)).reply(block)
        for node, blocks in builder.items()
        for n, block in enumerate(blocks)
    ]
    ants += [
        subagent("ant:watcher", first_user_contains("--- VERIFICATION ---"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", first_user_contains("--- VERIFICATION ---"), turn(2), tool_result_contains("1 passed")).reply(
            say(json_block(VERIFY_1, "The empty list is not guarded."))
        ),
        subagent("ant:watcher", is_spawn("y1"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", is_spawn("y1"), turn(2), tool_result_contains("2 passed")).reply(
            say(json_block(VERIFY_2, "Tests pass; the lint error stays."))
        ),
        *honest_watcher(is_spawn("y2"), json_block(VERIFY_3)),
    ]
    asked = claude.run("/ant:build 1 --approve", q.steps + ants, env=NOW, timeout=400)

    # the user answers with a slash command, in a new conversation (as after /clear)
    q = Queen()
    q.step(lambda r: run_body(r, "aether next --build <N> --answer", stdin=ANSWER, N=1, choice="refine"))
    q.step(spawn_next, tool_result_contains('"action":"spawn"'))  # f3, its brief with the answer
    q.step(spawn_next, hook_says("Aether next: spawn"))  # y3
    q.step(lambda r: record_lessons(r, "- guard mean() against an empty list\n"), hook_says("Aether next: lessons"))
    q.step(lambda r: say(shown(r)), tool_result_contains('"action":"done"'))
    ants = [
        subagent("ant:builder", is_spawn("f3"), turn(1)).reply(
            tool("Edit", file_path=f"{project}/stats/mean.py", old_string="import os\n\n\n", new_string="")
        ),
        subagent("ant:builder", is_spawn("f3"), turn(2)).reply(say(worker_result("dropped the unused import", modified=["stats/mean.py"]))),
        subagent("ant:watcher", is_spawn("y3"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", is_spawn("y3"), turn(2), tool_result_contains("2 passed")).reply(
            say(json_block(VERIFY_4, "Everything passes."))
        ),
    ]
    answered = claude.run(f"/ant:build 1 --answer {ANSWER}", q.steps + ants, env=NOW, timeout=400)

    assert asked.permission_denials == [] and answered.permission_denials == []
    assert command_body(answered.main_turns[0]) == body_of("build").replace("$ARGUMENTS", f"1 --answer {ANSWER}")
    # the Queen ran only the loop's commands: the helper scored every verification itself
    assert asked.bash_commands() == ["aether next --build 1 --approve"]
    assert [c.split(" <<")[0] for c in answered.bash_commands()] == ["aether next --build 1 --answer refine -", "aether record lessons -"]
    assert [[c["input"]["description"] for c in m] for m in agent_messages(asked)] == [
        ["w1 builder"],
        ["watch1 watcher"],
        ["f1 builder"],
        ["y1 watcher"],
        ["f2 builder"],
        ["y2 watcher"],
    ]
    assert [[c["input"]["description"] for c in m] for m in agent_messages(answered)] == [["f3 builder"], ["y3 watcher"]]
    # the loop stagnated and asked the user: what loop-present renders reached the user
    stored = state(claude, "loops.json")["loops"][-1]
    assert stored["id"] == loop["id"] and [i["score"] for i in stored["iterations"][:3]] == [69, 72, 73.5]
    for piece in ("Coding loop", "Stopped: stagnation", LINT, "Options:", "Recommendation:", "/ant:build 1 --answer"):
        assert piece in asked.text, piece
    assert "feedback-store" not in asked.text  # the answer goes through /ant:build, never to the loop by hand
    # the refinement briefs carried the verification's findings, then the user's answer
    briefs = {
        m.group(1): t.first_user_text
        for run in (asked, answered)
        for t in run.subagent_turns()
        for m in [re.search(r"^You are (\w+), ", t.first_user_text, re.M)]
        if m
    }
    # FULL isolates its builders: w1 worked in a worktree merged back before the verification;
    # the code loop's refinements (f1 …) change the project itself; nothing is left behind
    assert "--- WORKING COPY ---" in briefs["w1"] and "--- WORKING COPY ---" not in briefs["f1"]
    assert [w["status"] for w in state(claude, "worktrees.json")["worktrees"]] == ["merged"]
    assert git(project, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(project, "branch", "--list", "aether/*") == ""
    assert "--- CODE LOOP REFINEMENT ---" in briefs["f1"] and GUARD in briefs["f1"]
    assert "--- CODE LOOP VERIFICATION ---" in briefs["y1"] and '"score_parts"' in briefs["y1"]
    assert "The user's answer" in briefs["f3"] and ANSWER in briefs["f3"]
    assert "The user's answer" not in briefs["f1"] + briefs["f2"]
    # the re-verification's answer was the watcher report the finish took
    record = state(claude, "phase_records.json")["records"][-1]
    assert record["status"] == "completed" and record["watcher"]["summary"] == "every check passes"
    assert record["code_loop"]["scores"] == [69, 72, 73.5, 100] and record["code_loop"]["status"] == "complete"
    ledger = state(claude, "spawns.json")
    build = ledger["runs"][-1]
    assert [a.split("/")[1] for a in build["answers"]] == ["watch1", "y1", "y2", "y3"] and build["scored"] == 4
    assert {s["local"]: s["via"] for s in ledger["spawns"] if s["scope"] == build["scope"]} == {
        "lead1": "queen",
        **{n: "hook" for n in ("w1", "watch1", "f1", "y1", "f2", "y2", "f3", "y3")},
    }
    # the state: the loop's history, the user's answer, a checkpoint ref per iteration, HEAD untouched
    assert [(i["round"], i["decision"]) for i in stored["iterations"]] == [(1, "refine"), (1, "refine"), (1, "user_input"), (2, "complete")]
    assert [f["text"].strip() for f in stored["feedback"] if f["kind"] == "user"] == [ANSWER]
    refs = git(project, "for-each-ref", "--format=%(refname)", "refs/aether/checkpoints").splitlines()
    iteration_refs = [i["checkpoint"] for i in stored["iterations"]]
    assert all(ref in refs for ref in iteration_refs) and len(set(iteration_refs)) == 4
    assert len(refs) == 5  # build-start's checkpoint and one per iteration
    assert git(project, "rev-parse", "HEAD") == head and git(project, "log", "--format=%s") == "initial"
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert tree["waves"] == [["w1"], ["f1"], ["f2"], ["f3"]] and tree["status"] == "finished"
    assert [tree["refinements"][w]["after"] for w in ("2", "3", "4")] == ["critic", "critic", "user"]
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    # FULL learns at every build: the Queen's lessons were stored for phase 1
    learned = [e for e in state(claude, "memory.json")["phase_learnings"] if e["phase"] == 1]
    assert [x.strip() for e in learned for x in e["learnings"]] == ["guard mean() against an empty list"]
    assert "Phase 1 · Mean — COMPLETED" in answered.text and "learning-add" not in answered.text
    assert (project / "stats" / "mean.py").read_text("utf-8") == "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n"
    tests = subprocess.run(
        ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=project, capture_output=True, text=True
    )
    assert "2 passed" in tests.stdout, tests.stdout + tests.stderr


# ---------------------------------------------------------------- (c) the research fan-out

RESEARCH = (
    "### Research\n- argparse subcommands for `add` and `list`\n- atomic JSON file writes with os.replace\n- pytest tmp_path fixtures"
)
BRIEFS = {  # the requirement's first word → what that scout finds
    "argparse": "Use add_subparsers(dest='command', required=True).",
    "atomic": "Write to a temp file in the same folder, fsync, then os.replace.",
    "pytest": "tmp_path gives each test its own folder; monkeypatch.chdir into it.",
}
RESEARCHED_PLAN = {
    "goal": "A todo CLI",
    "phases": [
        {
            "id": 1,
            "name": "Store",
            "description": "atomic JSON store",
            "tasks": [
                {"id": "1.1", "description": "todo/store.py with os.replace writes", "depends_on": []},
                {"id": "1.2", "description": "tests with tmp_path", "depends_on": ["1.1"]},
                {"id": "1.3", "description": "todo/cli.py with add and list subcommands", "depends_on": ["1.1"]},
            ],
            "success_criteria": ["`python3 -m pytest` passes"],
        }
    ],
}
GOOD = (
    "## Planning Assessment\n### Overall Score\n88\n### Assessment Summary\nUses every brief.\n"
    "### Detailed Feedback\n- fine\n### Key Issues\n- none\n### Recommendations\n- go"
)


def make_friction(claude):
    """A build whose retry recovered a task, then was given up: a friction record for the planner."""
    (claude.project / "todo").mkdir()
    steps = [
        (("build-start", "1"), None),
        (("plan-waves", "-"), json.dumps({"workers": [{"id": "a", "caste": "builder", "tasks": ["1.1"], "writes": ["todo/store.py"]}]})),
        (("spawn-start", "w1"), None),
        (
            ("spawn-finish", "w1", "-"),
            json.dumps(
                {
                    "status": "failed",
                    "failure": {
                        "task": "1.1",
                        "error": "PermissionError: the data file is read-only",
                        "root_cause": "the store wrote into the install folder",
                        "suggested_fix": "write under the user's home",
                        "confidence": 90,
                        "fix_scope": "contained",
                        "files": ["todo/store.py"],
                    },
                }
            ),
        ),
        (("failure-decide", "--worker", "w1"), None),
        (("spawn-start", "r1"), None),
        "write",
        (
            ("spawn-finish", "r1", "-"),
            json.dumps({"status": "completed", "summary": "writes under ~/.todo now", "files_created": ["todo/store.py"]}),
        ),
        (("build-abort", "1", "--reason", "-"), "the user re-plans with research first"),
    ]
    for step in steps:
        if step == "write":
            (claude.project / "todo" / "store.py").write_text("PATH = '~/.todo'\n", "utf-8")
            continue
        done = claude.aether(*step[0], input=step[1], env=NOW)
        assert done.returncode == 0, (step, done.stderr)


def test_research_fans_out_in_one_message_and_the_planner_gets_paths(claude):
    prepare(
        claude,
        "A todo CLI",
        {
            "goal": "A todo CLI",
            "phases": [
                {
                    "id": 1,
                    "name": "First try",
                    "description": "store",
                    "tasks": [{"id": "1.1", "description": "todo/store.py", "depends_on": []}],
                    "success_criteria": ["x"],
                }
            ],
        },
    )
    make_friction(claude)
    project = claude.project

    def scout_steps(word):
        mine = first_user_contains("--- RESEARCH TASK ---") & first_user_contains(f"Research: {word} ")
        return [
            subagent("ant:scout", mine, turn(1)).reply(
                lambda r: tool("Write", file_path=f"{project}/{brief_of(r)}", content=f"# {word}\n\n{BRIEFS[word]}\n"), delay=1.0
            ),
            subagent("ant:scout", mine, turn(2)).reply(lambda r: say(f"{BRIEFS[word]}\nBRIEF: {brief_of(r)}")),
        ]

    q = Queen()
    q.step(lambda r: next_with(r, "aether next --plan", stdin=RESEARCH))
    for _ in range(3):  # the three scouts in one message, the planner, the critic
        q.step(spawn_next)
    q.step(lambda r: say(shown(r)), hook_says("Aether next: done"))
    ants = [step for word in BRIEFS for step in scout_steps(word)] + [
        subagent("ant:route-setter", first_user_contains("--- PLANNER ---"), turn(1)).reply(
            lambda r: tool("Read", file_path=str(project / re.search(r"- (\.aether/research/atomic\S*\.md)", r.first_user_text)[1]))
        ),
        subagent("ant:route-setter", first_user_contains("--- PLANNER ---"), turn(2), tool_result_contains("os.replace")).reply(
            say(json_block(RESEARCHED_PLAN, "Planned from the briefs."))
        ),
        subagent("ant:watcher", first_user_contains("--- PLAN CRITIC ---")).reply(say(GOOD)),
    ]
    run = claude.run("/ant:plan " + RESEARCH, q.steps + ants, env=NOW, timeout=300)

    assert run.permission_denials == []
    assert command_body(run.main_turns[0]) == body_of("plan").replace("$ARGUMENTS", RESEARCH)
    # the three scouts were spawned by ONE message and ran at the same time
    messages = agent_messages(run)
    assert [[c["input"]["subagent_type"] for c in m] for m in messages] == [["ant:scout"] * 3, ["ant:route-setter"], ["ant:watcher"]]
    assert all(c["input"]["run_in_background"] is False for c in messages[0])
    firsts = [
        t
        for t in run.subagent_turns("ant:scout")
        if "BRIEF:" in t.first_user_text and not any(m.get("role") == "assistant" for m in t.messages)
    ]
    assert len(firsts) == 3 and max(t.received_at for t in firsts) < min(t.answered_at for t in firsts)
    # the planner got the three paths and the frictions, never the briefs' contents
    research = state(claude, "research.json")["plans"][-1]
    assert research["source"] == "list" and [t["status"] for t in research["tasks"]] == ["collected"] * 3
    planner = run.subagent_turns("ant:route-setter")[0].first_user_text
    for task in research["tasks"]:
        assert task["path"] in planner
        assert (project / task["path"]).is_file()
    assert not any(text in planner for text in BRIEFS.values())
    assert "--- FRICTION" in planner and "the store wrote into the install folder" in planner
    # the plan came from the loop's stored draft
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["name"] == "Store"
    assert state(claude, "loops.json")["loops"][-1]["status"] == "complete"


def brief_of(request) -> str:
    return re.search(r"^BRIEF: (\S+)$", request.first_user_text, re.M).group(1)


# ---------------------------------------------------------------- (d) recovery after an abort

RECOVERY_PLAN = {
    "goal": "A todo store",
    "phases": [
        {
            "id": 1,
            "name": "Store",
            "description": "the store on top of the textkit helper",
            "tasks": [
                {
                    "id": "1.1",
                    "description": "todo/store.py: add() normalises text with textkit.clean",
                    "depends_on": [],
                    "maps_to_criterion": True,
                },
                {"id": "1.2", "description": "colour output for the list (optional)", "depends_on": ["1.1"], "maps_to_criterion": False},
            ],
            "success_criteria": ["`python3 -c 'import todo.store'` works"],
        },
        {
            "id": 2,
            "name": "CLI",
            "description": "the command line",
            "tasks": [{"id": "2.1", "description": "todo/cli.py", "depends_on": []}],
            "success_criteria": ["it runs"],
        },
    ],
}
RECOVERY_ASSIGNMENT = {
    "workers": [
        {"id": "store", "caste": "builder", "tasks": ["1.1"], "writes": ["todo/__init__.py", "todo/store.py"]},
        {"id": "colour", "caste": "builder", "tasks": ["1.2"], "writes": ["todo/colour.py"], "depends_on": ["store"]},
    ]
}
STORE = "from textkit import clean\n\n_items = []\n\n\ndef add(text):\n    _items.append(clean(text))\n"
MISSING = {
    "status": "failed",
    "summary": "textkit is not installed",
    "files_created": [],
    "files_modified": [],
    "failure": {
        "task": "1.1",
        "caste": "builder",
        "error": "ModuleNotFoundError: No module named 'textkit'",
        "root_cause": "the textkit helper module is not in the project",
        "suggested_fix": "add textkit.py with clean() to the project root",
        "confidence": 95,
        "fix_scope": "other_files",
        "files": ["todo/store.py"],
        "category": "missing_dependency",
    },
}
CHECKED = {
    "passed": True,
    "score": 92,
    "summary": "todo.store imports and add() cleans text",
    "checks": [{"name": "imports", "passed": True, "detail": "import todo.store"}],
}


def test_a_recovery_after_an_abort_completes_the_phase(claude):
    prepare(claude, "A todo store", RECOVERY_PLAN)
    project = claude.project
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)  # the Phase Lead
    q.step(spawn_next, hook_says("Aether next: spawn"))  # w1
    q.step(lambda r: say(shown(r)), hook_says("Aether next: stop"))
    ants = [
        subagent("ant:route-setter", first_user_contains("--- PHASE LEAD ---")).reply(say(json_block(RECOVERY_ASSIGNMENT))),
        subagent("ant:builder", is_spawn("w1"), turn(1)).reply(bash('python3 -c "import textkit"')),
        subagent("ant:builder", is_spawn("w1"), turn(2), tool_result_contains("No module named 'textkit'")).reply(say(json_block(MISSING))),
    ]
    aborted = claude.run("/ant:build 1", q.steps + ants, env=NOW, timeout=300)
    first = state(claude, "spawns.json")["runs"][-1]

    # the user takes two of the options: a fix by hand and a skipped task, then /ant:build 1
    (project / "textkit.py").write_text("def clean(text):\n    return ' '.join(text.split())\n", "utf-8")
    # the project's test: a one-line check, named for the watcher in .aether/config.yaml
    check = "python3 -c \"import todo.store; todo.store.add('  a  b '); print(todo.store._items)\""
    (project / ".aether" / "config.yaml").write_text(f"verify:\n  tests: {check}\n", "utf-8")
    skipped = claude.aether("task-skip", "1.2", "--reason", "-", input="colour output is not needed now\n", env=NOW)
    assert skipped.returncode == 0, skipped.stderr
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)  # a new Phase Lead, for what is left
    q.step(spawn_next, hook_says("Aether next: spawn"))  # w1
    q.step(spawn_next, hook_says("Aether next: spawn"))  # the watcher
    q.step(lambda r: record_lessons(r, "- check a helper module exists before building on it\n"), hook_says("Aether next: lessons"))
    q.step(lambda r: say(shown(r)), tool_result_contains('"action":"done"'))
    ants = [
        subagent("ant:route-setter", first_user_contains("--- PHASE LEAD ---")).reply(
            say(json_block({"workers": [RECOVERY_ASSIGNMENT["workers"][0]]}))
        ),
        subagent("ant:builder", is_spawn("w1"), turn(1)).reply(tool("Write", file_path=f"{project}/todo/__init__.py", content="")),
        subagent("ant:builder", is_spawn("w1"), turn(2)).reply(tool("Write", file_path=f"{project}/todo/store.py", content=STORE)),
        subagent("ant:builder", is_spawn("w1"), turn(3)).reply(bash("python3 -c \"import todo.store; print('imports')\"")),
        subagent("ant:builder", is_spawn("w1"), turn(4), tool_result_contains("imports")).reply(
            say(worker_result("store on textkit.clean", created=["todo/__init__.py", "todo/store.py"]))
        ),
        subagent("ant:watcher", first_user_contains("--- VERIFICATION ---"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", first_user_contains("--- VERIFICATION ---"), turn(2), tool_result_contains("['a b']")).reply(
            say(json_block(CHECKED))
        ),
    ]
    resumed = claude.run("/ant:build 1", q.steps + ants, env=NOW, timeout=300)

    assert aborted.permission_denials == [] and resumed.permission_denials == []
    assert aborted.bash_commands() == ["aether next --build 1"]
    assert [c.split(" <<")[0] for c in resumed.bash_commands()] == ["aether next --build 1", "aether record lessons -"]
    # the failure ladder aborted the phase: no retry, no debugger — the lead and w1 only
    assert [[c["input"]["description"] for c in m] for m in agent_messages(aborted)] == [["lead1 route-setter"], ["w1 builder"]]
    failures = state(claude, "failures.json")
    assert [(h["action"], "missing_dependency" in h["reason"]) for h in failures["history"]] == [("abort_phase", True)]
    assert [a["phase"] for a in failures["aborts"]] == [1]
    assert (first["done"], first["stopped"]) == (True, "abort_phase")
    # the stop action's text was the abort report: the user saw the way back
    for piece in (
        "Recovery options:",
        "/ant:build 1",
        "aether task-skip 1.2 --reason -",  # 1.1 is on a criterion
        "aether phase-skip 1 --reason -` — not available",
        "/ant:plan",
        "add textkit.py with clean() to the project root",
    ):
        assert piece in aborted.text, piece
    # the skip was validated by the helper; the resumed build re-planned only what was left, in a new run
    assert json.loads(skipped.stdout)["result"]["remaining"] == ["1.1"]
    second = state(claude, "spawns.json")["runs"][-1]
    assert second["scope"] != first["scope"] and second["phase"] == 1
    assert second["started_text"].startswith("Phase 1 resumed: Store · 1 of 2 tasks to build")
    lead = next(t.first_user_text for t in resumed.subagent_turns("ant:route-setter"))
    assert "Tasks to assign: 1.1\n" in lead
    assert [[c["input"]["description"] for c in m] for m in agent_messages(resumed)] == [
        ["lead1 route-setter"],
        ["w1 builder"],
        ["watch1 watcher"],
    ]
    record = state(claude, "phase_records.json")["records"][-1]
    assert (record["phase"], record["status"], record["tasks"]["skipped"], record["skipped_tasks"]) == (1, "completed", 1, ["1.2"])
    assert record["watcher"]["summary"] == CHECKED["summary"]
    assert "Phase 1 · Store — COMPLETED" in resumed.text and "learning-add" not in resumed.text
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert {n: node["tasks"] for n, node in tree["nodes"].items()} == {"w1": ["1.1"]}
    phase = state(claude, "PROJECT_PLAN.json")["phases"][0]
    assert (phase["status"], [t["status"] for t in phase["tasks"]]) == ("completed", ["completed", "skipped"])
    assert phase["tasks"][1]["skipped"]["reason"].strip() == "colour output is not needed now"
    learned = [x.strip() for e in state(claude, "memory.json")["phase_learnings"] if e["phase"] == 1 for x in e["learnings"]]
    assert learned == ["check a helper module exists before building on it"]
    events = [e["type"] for e in state(claude, "events.json")["events"]]
    assert events.index("build_aborted") < events.index("task_skipped") < events.index("build_resumed") < events.index("build_finished")
    status = json.loads(claude.aether("status", "--json", env=NOW).stdout)["result"]
    assert status["recovery"] is None and status["next"]["slash"] == "/ant:continue"
