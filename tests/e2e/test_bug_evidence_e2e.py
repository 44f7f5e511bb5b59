"""Bug Bash in real Claude Code, under both runtimes: what ran decides, not what an agent said.

- A lazy Bug Researcher runs a test that passes and reports `confirmed: true` with an invented
  failure: Aether runs that test itself, sees it pass, sends the result back with what ran; the
  researcher lies again on its last attempt and the bug ends NOT_REPRODUCIBLE — never REPRODUCED.
- An approved fix plan whose own tests pass drops a guard another test relies on: `/ant:bug fix`
  runs the whole suite before and after the fix, and the bug ends BLOCKED naming the broken test.

The fixture project (tests/e2e/bug_project.py) has its own interpreter in `.venv`; every test
run here is the project's pytest, started by `aether`.
"""

from __future__ import annotations

import json

import pytest

from .bug_project import (
    BREAKING_PLAN,
    BUG,
    CALC,
    LAZY_REPRODUCTION,
    REPRODUCTION,
    RETRY_LINE,
    ROOT_CAUSE,
    add_first_test,
    after,
    agent_task,
    answer,
    approved_by_a_person,
    json_block,
    make_project,
    record_cost,
    record_reported,
    retry_agent,
)
from .fake_api import agent, bash, first_user_contains, main, say, subagent, tool_error, tool_result_contains, turn
from .harness import NOW

pytestmark = pytest.mark.e2e

FIRST = "tests/test_first.py::test_last_zero"


def _state(claude) -> dict:
    return json.loads((claude.project / ".aether" / "bugs" / BUG / "state.json").read_text("utf-8"))


def _aether(claude, *args, input=None) -> dict:
    out = claude.aether("bug", *args, input=input, env=NOW)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _project(claude, **bug_bash) -> None:
    make_project(claude.project)
    add_first_test(claude.project)
    (claude.project / ".aether").mkdir(exist_ok=True)
    (claude.project / ".aether" / "config.yaml").write_text(json.dumps({"bug_bash": bug_bash}), "utf-8")


def test_a_researcher_who_says_a_passing_test_failed_never_reproduces_the_bug(runtime_claude):
    claude = runtime_claude
    _project(claude, max_reproduction_attempts=2)
    report = {"description": "last_n(items, 0) returns items", "id": BUG, "test": FIRST}
    _aether(claude, "init", "--report", "-", input=json.dumps(report))

    researcher = subagent("ant:bug-researcher", ~first_user_contains(RETRY_LINE))
    run = claude.run(
        f"/ant:bug analyze {BUG}",
        [
            main(turn(1)).reply(bash(f"aether bug analyze {BUG}")),
            main(tool_result_contains('"step":"reproduce"')).reply(
                lambda r: agent("ant:bug-researcher", agent_task(answer(r)["result"]["agent_step"]), "Reproduce the bug")
            ),
            (researcher & turn(1)).reply(bash(".venv/bin/python -m pytest tests/test_first.py -v --tb=long 2>&1", timeout_ms=300000)),
            (researcher & tool_result_contains("1 passed")).reply(say(json_block(LAZY_REPRODUCTION))),
            main(tool_result_contains("<usage>subagent_tokens")).reply(record_cost("bug-researcher")),
            main(after("aether bug cost"), tool_result_contains('"phase":"REPRODUCING"')).reply(record_reported),
            main(tool_error(), tool_result_contains('"invalid_agent_output"')).reply(
                lambda r: bash(f"sleep {answer(r)['retry_in_seconds']:g}")
            ),
            main(after("sleep")).reply(retry_agent),
            subagent("ant:bug-researcher", first_user_contains(RETRY_LINE)).reply(say(json_block(LAZY_REPRODUCTION))),
            main(tool_result_contains("<usage>subagent_tokens")).reply(record_cost("bug-researcher")),
            main(after("aether bug cost"), tool_result_contains('"phase":"REPRODUCING"')).reply(record_reported),
            main(tool_error(), tool_result_contains('"NOT_REPRODUCIBLE"')).reply(say("Not reproducible; see the report.")),
        ],
        env=NOW,
        timeout=300,
    )
    assert run.permission_denials == []

    # The researcher's own run passed; it said otherwise.
    ran = run.subagent_turns("ant:bug-researcher")[1].tool_results()[0]["text"]
    assert "1 passed" in ran and "FAILED" not in ran

    # Both records were refused on Aether's own run of that test, the first with a retry.
    queen = run.tool_calls("Bash")
    records = [run.tool_result(c) for c in queen if c["input"]["command"].startswith(f"aether bug record {BUG} reproduction")]
    assert len(records) == 2 and all(r["is_error"] for r in records)
    first, last = (json.loads(r["text"][r["text"].index("{") :]) for r in records)
    said = f"{FIRST} → exit 0 (1 ran: 1 passed)"
    assert first["code"] == "invalid_agent_output" and first["retry_allowed"] is True
    assert any("ran and passed" in d and said in d for d in first["defects"]), first["defects"]
    assert first["run"]["command"][0] == str(claude.project / ".venv" / "bin" / "python")
    assert last["retry_allowed"] is False and last["phase"] == "NOT_REPRODUCIBLE"

    # The retry carried Aether's defect to the researcher.
    retried = [c["input"]["prompt"] for c in run.tool_calls("Agent")][1]
    assert RETRY_LINE in retried and said in retried

    state = _state(claude)
    assert state["phase"] == "not_reproducible"
    assert "reproduced" not in [t["to_phase"] for t in state["transitions"]]
    rep = state["reproduction"]
    assert rep["confirmed"] is False and rep["claimed_confirmed"] is True
    assert rep["run"]["outcome"] == "passed" and rep["run"]["tests"] == [FIRST] and rep["run"]["exit_code"] == 0
    assert "1 passed" in (claude.project / ".aether" / "bugs" / BUG / "reproduction.log").read_text("utf-8")
    shown = claude.aether("bug", "status", BUG, env=NOW).stdout
    assert "NOT REPRODUCED" in shown and "→ exit 0 (1 ran: 1 passed)" in shown


def test_a_fix_that_breaks_another_test_ends_blocked_naming_it(runtime_claude):
    claude = runtime_claude
    _project(claude)
    report = {"description": "last_n returns one item too many", "id": BUG, "test": "tests/test_calc.py"}
    _aether(claude, "init", "--report", "-", input=json.dumps(report))
    _aether(claude, "analyze", BUG)
    reproduced = _aether(claude, "record", BUG, "reproduction", "-", input=json.dumps(REPRODUCTION))["result"]
    assert reproduced["reproduced_by"].endswith("→ exit 1 (1 ran: 1 failed)")  # Aether saw the bug fail
    _aether(claude, "record", BUG, "root-cause", "-", input=json.dumps(ROOT_CAUSE))
    _aether(claude, "record", BUG, "fix-plan", "-", input=json.dumps(BREAKING_PLAN))
    approved_by_a_person(claude, BUG)

    run = claude.run(
        f"/ant:bug fix {BUG}",
        [
            main(turn(1)).reply(bash(f"aether bug fix {BUG}")),
            main(tool_error(), tool_result_contains('"verification_failed"')).reply(say("Blocked: the fix broke a test.")),
        ],
        env=NOW,
        timeout=300,
    )
    assert run.bash_commands() == [f"aether bug fix {BUG}"] and run.permission_denials == []
    shown = run.tool_result(run.tool_calls("Bash")[0])
    err = json.loads(shown["text"][shown["text"].index("{") :])
    assert shown["is_error"] and err["code"] == "verification_failed" and err["phase"] == "BLOCKED"
    assert err["broken_tests"] == [FIRST] and err["already_failing"] == []
    assert f"the fix broke 1 test that passed before it: {FIRST}" in err["reason"]
    assert f"✗ Broken by the fix (passed before it): {FIRST}" in err["text"]
    assert f"aether bug rollback {BUG}" in err["error"]

    state = _state(claude)
    assert state["phase"] == "blocked"
    impl = state["implementation"]
    assert all(t["outcome"] == "passed" for t in impl["tests"])  # the plan's own tests and the report's pass
    assert impl["baseline"]["failing"] == ["tests/test_calc.py::test_last_two"] and impl["suite"]["failing"] == [FIRST]
    assert impl["suite"]["command"][0] == str(claude.project / ".venv" / "bin" / "python")
    assert (claude.project / "calc.py").read_text("utf-8") != CALC  # applied, until rolled back
