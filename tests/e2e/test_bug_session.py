"""`/ant:bug` in real Claude Code: a real failing test, three scripted agents, a person's approval.

The fixture project has a real bug (`last_n` slices one item too early) and a pytest test that
exposes it. It has its own interpreter, as a user's project would: `.venv` is a virtual
environment made from the base Python, which finds pytest through a `.pth` file naming the
site-packages that pytest is installed in for these tests (the repository's venv). So the Bug
Researcher's `.venv/bin/python -m pytest …` and `aether bug fix`'s verification both run the
project's interpreter — never the helper's own environment — with only what `make install` set up.

The scripted model does what the command body says (`tests/e2e/README.md`): it takes commands
from the body, builds each agent's task from the helper's `agent_step`, copies the agents' JSON
out of Claude Code's hand-back, and reads the token count from the `<usage>` block. Claude Code
does the rest for real: permissions (no --allowedTools, no skip-permissions), the guard hook,
the subagents' system prompts and tool lists.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .bug_project import (
    BUG,
    CALC,
    CALC_FIXED,
    ERROR,
    FIX_PLAN,
    REPRODUCTION,
    RETRY_LINE,
    ROOT_CAUSE,
    after,
    agent_task,
    answer,
    json_block,
    make_project,
    record_cost,
    reported_json,
    retry_agent,
    usage_tokens,
)
from .fake_api import (
    agent,
    bash,
    first_user_contains,
    main,
    say,
    subagent,
    tool,
    tool_error,
    tool_result_contains,
    turn,
)
from .harness import NOW, REPO, plugin_agents
from helpers.prompts import shell_snippets

pytestmark = pytest.mark.e2e


INVALID_REPRODUCTION = {"confirmed": True, "reproduction_steps": [], "confidence": "certain", "attempts": 1}

# What each agent's model turns cost (the fake model reports these; Claude Code sums them).
USAGE = {
    "researcher": {"input_tokens": 4000, "output_tokens": 300},
    "researcher-retry": {"input_tokens": 5000, "output_tokens": 400},
    "analyzer": {"input_tokens": 6000, "output_tokens": 500},
    "planner": {"input_tokens": 7000, "output_tokens": 900},
}


# ---------------------------------------------------------------- the fixture project


def project_tests(root: Path, *paths: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(root / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def bug_state(claude) -> dict:
    return json.loads((claude.project / ".aether" / "bugs" / BUG / "state.json").read_text("utf-8"))


# ---------------------------------------------------------------- what the scripted Queen reads


def command_body(request) -> str:
    blocks = [b.get("text", "") for b in request.messages[0]["content"] if b.get("type") == "text"]
    bodies = [b for b in blocks if not b.startswith(("<system-reminder>", "<command-message>"))]
    assert len(bodies) == 1, blocks
    return bodies[0]


def body_command(request, command: str) -> str:
    """The body's shell command written as `command` (or `command <<'EOF'` with its heredoc)."""
    found = [s.text for s in shell_snippets(command_body(request)) if s.text == command or s.text.startswith(command + " <<")]
    assert found, f"the body has no command {command!r}"
    return found[0]


def step_of(request) -> dict:
    return answer(request)["result"]["agent_step"]


def task(step: dict) -> str:
    """The agent's task as the body describes it (bug_project.agent_task)."""
    return agent_task(step)


def record_result(request):
    step = answer(request)["result"]["agent_step"]  # the cost answer still names the step
    return bash(f"{step['record']} <<'EOF'\n```json\n{reported_json(request)}\n```\nEOF")


def retry(request):
    """Sleep as long as the helper said, as the body says."""
    return bash(f"sleep {answer(request)['retry_in_seconds']:g}")


# ---------------------------------------------------------------- the session


def test_a_bug_from_report_to_fixed(runtime_claude):
    # Under the mod, /ant:bug is a command for the model (the mod serves it to the markdown body),
    # and the typed approval is the prompt hook's: the same session runs under both runtimes.
    claude = runtime_claude
    make_project(claude.project)
    assert project_tests(claude.project).returncode == 1  # the bug is real

    # /ant:bug init — the report reaches the helper as JSON on stdin.
    description = 'last_n(items, 2) returns 3 items — "one too many"; it\'s off by one'
    report = {"description": description, "id": BUG, "test": "tests/test_calc.py", "error": ERROR}
    init = claude.run(
        f'/ant:bug init {description} --id {BUG} --test tests/test_calc.py --error "{ERROR}"',
        [
            main().reply(
                lambda r: bash(
                    body_command(r, "aether bug init --report -").replace(
                        "<the JSON object, in its ```json fence>", "```json\n" + json.dumps(report, ensure_ascii=False) + "\n```"
                    )
                )
            ),
            main(tool_result_contains('"phase":"CREATED"')).reply(say(f"Created. Next: /ant:bug analyze {BUG}")),
        ],
        env=NOW,
    )
    assert init.permission_denials == []
    assert "aether bug init --report - <<'EOF'" in init.bash_commands()[0]
    saved = bug_state(claude)["report"]
    assert saved["description"] == description and saved["test_path"] == "tests/test_calc.py"
    assert saved["error_message"] == ERROR and saved["github_issue"] is None

    # /ant:bug analyze — three agents, one rejected result sent back, through PLANNED.
    researcher = subagent("ant:bug-researcher", ~first_user_contains(RETRY_LINE))
    analyzer, planner = subagent("ant:root-cause-analyzer"), subagent("ant:fix-planner")
    run = claude.run(
        f"/ant:bug analyze {BUG}",
        [
            main(turn(1)).reply(lambda r: bash(body_command(r, "aether bug analyze <id>").replace("<id>", BUG))),
            main(tool_result_contains('"step":"reproduce"')).reply(
                lambda r: agent("ant:bug-researcher", task(step_of(r)), "Reproduce the bug")
            ),
            (researcher & turn(1)).reply(bash(".venv/bin/python -m pytest tests/test_calc.py -v --tb=long 2>&1", timeout_ms=300000)),
            (researcher & tool_result_contains("1 failed")).reply(say(json_block(INVALID_REPRODUCTION)), usage=USAGE["researcher"]),
            main(tool_result_contains("<usage>subagent_tokens")).reply(record_cost("bug-researcher")),
            main(after("aether bug cost"), tool_result_contains('"phase":"REPRODUCING"')).reply(record_result),
            main(tool_error(), tool_result_contains('"invalid_agent_output"')).reply(retry),
            main(after("sleep")).reply(retry_agent),
            subagent("ant:bug-researcher", first_user_contains(RETRY_LINE)).reply(
                say(json_block(REPRODUCTION)), usage=USAGE["researcher-retry"]
            ),
            main(tool_result_contains("<usage>subagent_tokens")).reply(record_cost("bug-researcher")),
            main(after("aether bug cost"), tool_result_contains('"phase":"REPRODUCING"')).reply(record_result),
            main(tool_result_contains('"step":"analyze"'), after("aether bug record")).reply(
                lambda r: agent("ant:root-cause-analyzer", task(step_of(r)), "Find the root cause")
            ),
            (analyzer & turn(1)).reply(bash("grep -rn 'def last_n' --include=*.py .")),
            (analyzer & turn(2)).reply(bash(".venv/bin/python -m pytest tests/test_calc.py -q")),
            (analyzer & turn(3) & tool_error()).reply(lambda r: tool("Read", file_path=str(claude.project / "calc.py"))),
            (analyzer & turn(4)).reply(say(json_block(ROOT_CAUSE)), usage=USAGE["analyzer"]),
            main(tool_result_contains("<usage>subagent_tokens")).reply(record_cost("root-cause-analyzer")),
            main(after("aether bug cost"), tool_result_contains('"phase":"ANALYZING"')).reply(record_result),
            main(tool_result_contains('"step":"plan"'), after("aether bug record")).reply(
                lambda r: agent("ant:fix-planner", task(step_of(r)), "Plan the fix")
            ),
            (planner & turn(1)).reply(bash("sed -n '1,10p' calc.py")),
            (planner & turn(2)).reply(say(json_block(FIX_PLAN)), usage=USAGE["planner"]),
            main(tool_result_contains("<usage>subagent_tokens")).reply(record_cost("fix-planner")),
            main(after("aether bug cost"), tool_result_contains('"phase":"PLANNING"')).reply(record_result),
            main(tool_result_contains('"phase":"PLANNED"')).reply(say(f"Planned. Review it, then type `/ant:bug approve {BUG}`.")),
        ],
        env=NOW,
        timeout=300,
    )

    # The command's own calls were all granted (the one denial is the guard's, below); only
    # the rejected result failed.
    assert [d["tool_input"]["command"] for d in run.permission_denials] == [".venv/bin/python -m pytest tests/test_calc.py -q"]
    queen = run.tool_calls("Bash")
    failed = [c["input"]["command"].split("\n")[0] for c in queen if run.tool_result(c)["is_error"]]
    assert failed == [f"aether bug record {BUG} reproduction - <<'EOF'"]
    assert {c["input"]["command"].split()[0] for c in queen} == {"aether", "sleep"}  # no tests

    # Each agent ran with its own file as system prompt, exactly its tools, and the task the
    # Queen wrote from the helper's agent_step.
    known = plugin_agents(REPO)
    spawned = [(c["input"]["subagent_type"], c["input"]["prompt"], c["input"]["run_in_background"]) for c in run.tool_calls("Agent")]
    assert [s[0] for s in spawned] == ["ant:bug-researcher", "ant:bug-researcher", "ant:root-cause-analyzer", "ant:fix-planner"]
    assert not any(s[2] for s in spawned)
    for name, prompt, _ in spawned:
        turns = run.subagent_turns(name)
        assert turns and all(known[name] in t.system for t in turns), name
        assert sorted(turns[0].tools) == ["Bash", "Read"], (name, turns[0].tools)
        assert any(t.first_user_text.endswith(prompt) for t in turns)
        assert prompt.startswith(f"bug_id: {BUG}\nread_first: .aether/bugs/{BUG}/report.md")
    first, retried = spawned[0][1], spawned[1][1]
    assert first.endswith("max_attempts: 3\ntimeout_seconds: 300\nbash_timeout_ms: 300000")
    assert "bash_timeout_ms" not in spawned[2][1] and "bash_timeout_ms" not in spawned[3][1]
    assert spawned[3][1].endswith("min_test_cases: 2")

    # The researcher's reproduction really ran the project's failing test.
    ran = run.subagent_turns("ant:bug-researcher")[1].tool_results()[0]
    assert ran["text"].startswith("Exit code 1") and "1 failed" in ran["text"] and ERROR in ran["text"]

    # The rejected result went back to the same agent with the helper's defect list.
    defects = [
        "reproduction_steps: has 0 entries, needs at least 1 when confirmed is true",
        "affected_files: needs at least 1 entry when confirmed is true",
        "confidence: must be one of high, medium, low, found 'certain'",
    ]
    assert retried.startswith(first + "\n" + RETRY_LINE + "\n" + "\n".join(defects) + "\n")
    assert retried.endswith("```json\n" + json.dumps(INVALID_REPRODUCTION, indent=2) + "\n```")
    sleep = next(c for c in queen if c["input"]["command"].startswith("sleep"))
    assert sleep["input"]["command"] == "sleep 5"

    # The analyzer may search and read but not run anything, whatever the command grants.
    denied = run.subagent_turns("ant:root-cause-analyzer")[2].tool_results()[0]
    assert denied["is_error"] and "only reads and searches" in denied["text"]
    assert "`python` is refused" in denied["text"]
    found = run.subagent_turns("ant:root-cause-analyzer")[1].tool_results()[0]["text"]
    assert "calc.py:1:def last_n(items, n):" in found

    # Costs come from the usage blocks, per agent and phase.
    state = bug_state(claude)
    assert state["phase"] == "planned"
    spent = [(c["agent_name"], c["phase"], c["input_tokens"], c["output_tokens"]) for c in state["costs"]]
    shown = [usage_tokens(t) for t in run.main_turns if "[Subagent hand-back]" in t.last_text]
    assert [s[:2] for s in spent] == [
        ("bug-researcher", "reproducing"),
        ("bug-researcher", "reproducing"),
        ("root-cause-analyzer", "analyzing"),
        ("fix-planner", "planning"),
    ]
    assert [s[2] for s in spent] == shown and all(s[3] == 0 for s in spent)
    # Claude Code's count is the agent's last model turn, input and output together.
    assert shown == [sum(USAGE[k].values()) for k in ("researcher", "researcher-retry", "analyzer", "planner")]
    assert state["agent_rejections"] == {}
    assert state["fix_plan"]["changes"][0]["current_code"] == "    return items[-n - 1:]\n"
    assert (claude.project / "calc.py").read_text("utf-8") == CALC  # nothing fixed yet
    for name in ("reproduction.md", "root-cause-analysis.md", "fix-plan.md", "test-cases.py"):
        assert (claude.project / ".aether" / "bugs" / BUG / name).is_file()

    # The model is told the plan waits for the person; its own try is refused.
    asked = claude.run(
        "Approve the plan for me.",
        [
            main(turn(1)).reply(bash(f"aether bug approve {BUG}")),
            main(tool_error()).reply(say(f"Type `/ant:bug approve {BUG}` yourself.")),
        ],
        env=NOW,
    )
    refused = asked.tool_result(asked.tool_calls("Bash")[0])
    assert refused["is_error"] and "the user's decision" in refused["text"]
    assert bug_state(claude)["phase"] == "planned"
    assert not (claude.project / ".aether" / "bugs" / "approvals.jsonl").exists()

    # /ant:bug approve, typed by the person: approved by Aether's prompt hook, with no model turn.
    approve = claude.run(f"/ant:bug approve {BUG} the slice is right", [], env=NOW)
    assert approve.api.requests == [] and "✓ Fix plan approved" in approve.stdout
    approval = bug_state(claude)["approval_record"]
    assert approval["given_via"] == "typed_command" and approval["reason"] == "the slice is right"
    assert approval["fix_plan_hash"] == state["transitions"][-1]["metadata"]["fix_plan_hash"]

    # /ant:bug fix — applied, tests written and run with the project's interpreter: FIXED.
    fix = claude.run(
        f"/ant:bug fix {BUG}",
        [
            main(turn(1)).reply(lambda r: bash(body_command(r, "aether bug fix <id>").replace("<id>", BUG))),
            main(tool_result_contains('"phase":"FIXED"')).reply(say("Fixed.")),
        ],
        env=NOW,
        timeout=300,
    )
    assert fix.bash_commands() == [f"aether bug fix {BUG}"] and fix.permission_denials == []
    done = json.loads(fix.tool_result(fix.tool_calls("Bash")[0])["text"])["result"]
    assert done["phase"] == "FIXED" and done["implementation"]["tests_failed"] == 0
    assert done["implementation"]["test_command"][0] == str(claude.project / ".venv" / "bin" / "python")
    assert {t["name"] for t in done["implementation"]["tests"]} == {"test_last_n_two", "test_last_n_all", "test_last_two"}
    assert (claude.project / "calc.py").read_text("utf-8") == CALC_FIXED
    written = (claude.project / "tests" / "test_bug_last_n.py").read_text("utf-8")
    assert written.startswith(f"# aether bug {BUG}: regression tests")
    after_fix = project_tests(claude.project)
    assert after_fix.returncode == 0 and "3 passed" in after_fix.stdout, after_fix.stdout
    assert bug_state(claude)["phase"] == "fixed"


def test_list_status_and_reject_with_a_reason_in_a_heredoc(claude):
    def helper(*args, input=None):
        out = claude.aether("bug", *args, input=input, env=NOW)
        assert out.returncode == 0, out.stderr
        return out

    helper("init", "--report", "-", input=json.dumps({"description": "flaky import", "id": "flaky"}))
    helper("analyze", "flaky")
    helper(
        "record",
        "flaky",
        "reproduction",
        "-",
        input="Could not make it fail.\n```json\n"
        + json.dumps(
            {"confirmed": False, "reproduction_steps": ["python -c 'import calc'"], "attempts": 3, "notes": "imports cleanly on every try"}
        )
        + "\n```\n",
    )

    listed = claude.run(
        "/ant:bug list",
        [
            main(turn(1)).reply(lambda r: bash(body_command(r, "aether bug list"))),
            main(tool_result_contains("Bug Investigations")).reply(say("One bug.")),
        ],
        env=NOW,
    )
    (shown,) = [listed.tool_result(c)["text"] for c in listed.tool_calls("Bash")]
    assert "flaky" in shown and "NOT_REPRODUCIBLE" in shown and "reject" in shown

    reason = 'Can\'t reproduce — "works on my machine"; $(not run) `nor this`'
    rejected = claude.run(
        f"/ant:bug reject flaky {reason}",
        [
            main(turn(1)).reply(
                lambda r: bash(
                    body_command(r, "aether bug reject <id> --reason -").replace("<id>", "flaky").replace("<the reason>", reason)
                )
            ),
            main(tool_result_contains('"phase":"WONT_FIX"')).reply(say("Closed as won't fix.")),
        ],
        env=NOW,
    )
    assert rejected.permission_denials == []
    state = json.loads((claude.project / ".aether/bugs/flaky/state.json").read_text("utf-8"))
    assert state["phase"] == "wont_fix"
    assert state["rejection"]["reason"].strip() == reason
    assert state["rejection"]["from_phase"] == "not_reproducible"
