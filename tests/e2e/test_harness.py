"""The harness itself, proved in real Claude Code with the probe plugin (fixtures/probe)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from .fake_api import (
    agent,
    bash,
    first_user_contains,
    main,
    say,
    subagent,
    tool_error,
    tool_result_contains,
    tool_results,
)
from .harness import PROBE_PLUGIN, REPO, E2EFailure, _base_env, _front_matter

pytestmark = pytest.mark.e2e

COMMAND_FILE = PROBE_PLUGIN / "commands" / "version.md"
AGENT_FILE = PROBE_PLUGIN / "agents" / "prober.md"


@pytest.fixture
def probe(claude):
    claude.plugin_dirs = [PROBE_PLUGIN]
    return claude


def helper_version_output() -> str:
    """What `aether version` prints when run directly, to compare with what the model saw."""
    proc = subprocess.run([str(REPO / "bin" / "aether"), "version"], capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def test_command_body_reaches_the_model_and_aether_runs_from_the_plugin_bin(probe):
    # Premise: nothing but the plugin's bin/ can provide `aether` to the Bash tool.
    assert shutil.which("aether", path=_base_env()["PATH"]) is None
    expected = helper_version_output()
    note = 'it\'s "quoted" — ünïcødé 🐜'
    run = probe.run(
        f"/probe:version {note}",
        [
            main().reply(say("Checking."), bash("aether version", "Show the helper's version")),
            main(tool_result_contains(expected)).reply(say("The helper is 0.1.0.")),
        ],
    )

    first = run.main_turns[0]
    _, body = _front_matter(COMMAND_FILE.read_text("utf-8"))
    blocks = [b["text"] for b in first.messages[0]["content"] if b.get("type") == "text"]
    assert body.replace("$ARGUMENTS", note) in blocks  # the body, arguments substituted
    assert "<command-name>/probe:version</command-name>" in first.first_user_text

    (call,) = run.tool_calls("Bash")
    assert call["input"]["command"] == "aether version"
    result = run.tool_result(call)
    assert result["is_error"] is False
    assert result["details"]["stdout"] == expected
    assert run.main_turns[1].tool_results() == [{"tool_use_id": call["id"], "text": expected, "is_error": False}]
    assert run.permission_denials == []
    assert run.text == "The helper is 0.1.0."
    assert (run.dir / "requests.jsonl").read_text("utf-8").count("\n") == len(run.requests)
    assert probe.aether("version").stdout.strip() == expected  # the helper, run by the test


def test_agent_call_starts_a_subagent_whose_system_prompt_is_the_agent_body(probe):
    run = probe.run(
        "/probe:version",
        [
            main().reply(agent("probe:prober", "TASK-ALPHA: report back", "probe alpha")),
            subagent("probe:prober").reply(say("PROBE-RESULT: alpha")),
            main(tool_result_contains("PROBE-RESULT: alpha")).reply(say("done")),
        ],
    )

    _, body = _front_matter(AGENT_FILE.read_text("utf-8"))
    sub = [r for r in run.requests if "cc_is_subagent=true" in r.system]
    assert len(sub) == 1 and sub[0].thread == "probe:prober"
    assert body.strip() in sub[0].system
    assert all(body.strip() not in r.system for r in run.main_turns)
    assert sub[0].first_user_text == "TASK-ALPHA: report back"
    assert sub[0].tools == ["Read"]  # the agent's `tools:` list is all it gets
    assert "Agent" in run.main_turns[0].tools

    (call,) = run.tool_calls("Agent")
    details = run.tool_result(call)["details"]
    assert (details["status"], details["agentType"]) == ("completed", "probe:prober")
    assert "PROBE-RESULT: alpha" in run.tool_result(call)["text"]


def test_two_foreground_agents_in_one_message_run_in_parallel_and_return_together(probe):
    slow = 2.0
    run = probe.run(
        "/probe:version",
        [
            main().reply(agent("probe:prober", "TASK-ONE", "one"), agent("probe:prober", "TASK-TWO", "two")),
            subagent("probe:prober", first_user_contains("TASK-ONE")).reply(say("PROBE-RESULT: one"), delay=slow),
            subagent("probe:prober", first_user_contains("TASK-TWO")).reply(say("PROBE-RESULT: two"), delay=slow),
            main(tool_results(2)).reply(say("wave done")),
        ],
    )

    one, two = run.subagent_turns("probe:prober")
    # Parallel: each subagent asked before the other was answered.
    assert two.received_at < one.answered_at and one.received_at < two.answered_at
    # The barrier: the main thread's next turn comes after both answers, with both results.
    after = run.main_turns[1]
    assert after.received_at > max(one.answered_at, two.answered_at)
    texts = sorted(t["text"] for t in after.tool_results())
    assert "PROBE-RESULT: one" in texts[0] and "PROBE-RESULT: two" in texts[1]
    assert [c["input"]["run_in_background"] for c in run.tool_calls("Agent")] == [False, False]


def test_a_quoted_heredoc_is_allowed_and_content_and_env_reach_the_helper(probe):
    content = 'Focus on "auth" — it\'s $(not run) `nor this` ünïcødé 🐜\nsecond line'
    command = f"aether pheromone-emit FOCUS - <<'EOF'\n{content}\nEOF"
    run = probe.run(
        "/probe:version",
        [
            main().reply(bash(command, "Emit a focus signal")),
            main(tool_result_contains('"ok":true')).reply(say("emitted")),
        ],
        env={"AETHER_NOW": "2026-02-04T10:00:00Z"},
    )

    assert run.permission_denials == []
    stored = json.loads((probe.project / ".aether" / "data" / "pheromones.json").read_text("utf-8"))
    (signal,) = stored["signals"]
    assert signal["content"].rstrip("\n") == content
    assert signal["created_at"] == "2026-02-04T10:00:00Z"
    assert json.loads(run.tool_result(run.tool_calls("Bash")[0])["text"])["result"]["id"] == signal["id"]


def test_other_claude_subcommands_run_with_the_same_home(probe):
    proc = probe.cli("plugin", "validate", "--strict", "--json", PROBE_PLUGIN)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["success"] is True
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    provides = report["provides"]
    assert (provides["commands"], provides["agents"], provides["bin"]) == (["probe:version"], ["probe:prober"], ["aether"])


def test_bash_outside_allowed_tools_is_denied(probe):
    run = probe.run(
        "/probe:version",
        [
            main().reply(bash("touch made-by-model.txt")),
            main(tool_error()).reply(say("denied as expected")),
        ],
    )

    (call,) = run.tool_calls("Bash")
    result = run.tool_result(call)
    assert result["is_error"] is True
    assert "approval" in result["text"] or "permission" in result["text"]
    assert [d["tool_input"]["command"] for d in run.permission_denials] == ["touch made-by-model.txt"]
    assert not (run.project / "made-by-model.txt").exists()


def test_aether_is_denied_without_a_command_granting_it(probe):
    # The same call as in the /probe:version test, from a plain prompt: nothing allows it.
    run = probe.run(
        "please run the aether helper",
        [
            main().reply(bash("aether version")),
            main(tool_error()).reply(say("not allowed")),
        ],
    )

    (call,) = run.tool_calls("Bash")
    assert run.tool_result(call)["is_error"] is True
    assert [d["tool_name"] for d in run.permission_denials] == ["Bash"]


def test_an_unmatched_request_fails_loudly_with_a_readable_report(probe):
    run = probe.run(
        "/probe:version",
        [
            main().reply(bash("aether version")),
            main(tool_result_contains("NEVER-PRINTED")).reply(say("unreachable")),
        ],
        check=False,
    )

    assert run.code != 0 and run.result.get("is_error") is True
    assert run.api.unmatched and run.api.unmatched[0].thread == "main"
    with pytest.raises(E2EFailure) as failed:
        run.check()
    report = str(failed.value)
    assert "matched no script step" in report and "never used" in report
    assert "REFUSED" in report and '{"ok":true' in report  # what arrived: the tool result
    assert "tool_result_contains('NEVER-PRINTED') ✗" in report  # why the waiting step missed
    assert str(run.dir) in report and (run.dir / "report.txt").read_text("utf-8")


def test_a_run_that_exceeds_its_timeout_is_killed_with_a_clear_failure(probe):
    with pytest.raises(E2EFailure) as failed:
        probe.run("/probe:version", [main().reply(say("too late"), delay=30)], timeout=4)
    assert "did not finish within 4 s" in str(failed.value)
    assert probe.runs[-1].seconds < 20 and probe.runs[-1].timed_out


def test_a_missing_claude_install_names_the_install_command(monkeypatch):
    from .harness import SetupError, claude_binary

    monkeypatch.setenv("AETHER_E2E_CLAUDE", os.devnull + "-no-such-claude")
    with pytest.raises(SetupError, match="make e2e-deps"):
        claude_binary()


def test_the_run_environment_leaks_nothing_from_outside(monkeypatch, tmp_path):
    stray = tmp_path / "stray-bin"
    stray.mkdir()
    (stray / "aether").write_text("#!/bin/sh\n")
    monkeypatch.setenv("PATH", f"{stray}{os.pathsep}{os.environ['PATH']}")
    for name in ("CLAUDECODE", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "AETHER_DATA_DIR"):
        monkeypatch.setenv(name, "from-outside")
    env = _base_env()
    assert str(stray) not in env["PATH"].split(os.pathsep)
    assert not [k for k in env if k.startswith(("CLAUDE", "ANTHROPIC", "AETHER")) and k != "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]
