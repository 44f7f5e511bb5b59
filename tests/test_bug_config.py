"""Bug Bash configuration, costs, ids, state versioning and storage failures."""

from __future__ import annotations

import json
import os

import pytest

from aether.bugs import config as bug_config

from helpers.bugs import REPRODUCTION, set_config

# ---------------------------------------------------------------- configuration


def test_defaults_without_a_config_file(project):
    cfg = bug_config.load(str(project.root / ".aether" / "config.yaml"))
    assert cfg["max_reproduction_attempts"] == 3 and cfg["reproduction_timeout_seconds"] == 300
    assert cfg["max_analysis_attempts"] == 2 and cfg["analysis_timeout_seconds"] == 300
    assert cfg["planning_timeout_seconds"] == 300 and cfg["min_test_cases"] == 2
    assert cfg["auto_approve_low_risk"] is False and cfg["require_approval_reason"] is False
    assert cfg["storage_path"] == ".aether/bugs"
    assert cfg["agent_model"] == "claude-sonnet-4-20250514" and cfg["agent_temperature"] == 0.2
    assert (cfg["max_phase_cost_usd"], cfg["max_total_cost_usd"]) == (0.50, 2.00)


@pytest.mark.parametrize(
    "settings,key,message",
    [
        ({"max_reproduction_attempts": 0}, "bug_bash.max_reproduction_attempts", "must be >= 1"),
        ({"reproduction_timeout_seconds": 29}, "bug_bash.reproduction_timeout_seconds", "must be >= 30"),
        (
            {"reproduction_timeout_seconds": 601},
            "bug_bash.reproduction_timeout_seconds",
            "must be between 30 and 600 (the Bug Researcher's Bash tool waits at most that long)",
        ),
        ({"min_test_cases": 0}, "bug_bash.min_test_cases", "must be >= 1"),
        ({"agent_temperature": 1.5}, "bug_bash.agent_temperature", "must be between 0 and 1"),
        ({"agent_temperature": -0.1}, "bug_bash.agent_temperature", "must be >= 0"),
        ({"max_analysis_attempts": "two"}, "bug_bash.max_analysis_attempts", "must be a integer"),
        ({"max_reproduction_attempts": True}, "bug_bash.max_reproduction_attempts", "must be a integer"),
        ({"min_test_cases": 2.5}, "bug_bash.min_test_cases", "whole number"),
        ({"auto_approve_low_risk": "yes"}, "bug_bash.auto_approve_low_risk", "must be true or false"),
        ({"storage_path": ""}, "bug_bash.storage_path", "non-empty string"),
        ({"max_total_cost_usd": float("nan")}, "bug_bash.max_total_cost_usd", "finite"),
        ({"test_command": ""}, "bug_bash.test_command", "is empty"),
        ({"test_command": 3}, "bug_bash.test_command", "command string or a list"),
        ({"max_reproducton_attempts": 5}, "bug_bash.max_reproducton_attempts", "did you mean max_reproduction_attempts?"),
    ],
)
def test_bad_settings_name_the_key(bugs, settings, key, message):
    set_config(bugs.p, **settings)
    err = bugs.run("list").error
    assert err["code"] == "invalid_config" and err["key"] == key, err
    assert key in err["error"] and message in err["error"]


@pytest.mark.parametrize("seconds", [30, 300, 600])
def test_the_researchers_bash_timeout_comes_from_the_reproduction_timeout(bugs, seconds):
    set_config(bugs.p, reproduction_timeout_seconds=seconds)
    bugs.ok("init", "x", "--id", "slow")
    step = bugs.ok("analyze", "slow")["agent_step"]
    assert step["timeout_seconds"] == seconds and step["bash_timeout_ms"] == seconds * 1000
    assert step["bash_timeout_ms"] <= bug_config.BASH_TIMEOUT_MAX_MS


def test_only_the_reproduction_step_carries_a_bash_timeout(bugs):
    bugs.ok("init", "x", "--id", "quick")
    bugs.ok("analyze", "quick", "--stop-at", "reproduce")
    after = bugs.record("quick", "reproduction", REPRODUCTION).json
    assert after["agent_step"] is None  # stopped at REPRODUCED
    step = bugs.ok("analyze", "quick")["agent_step"]
    assert step["agent"] == "root-cause-analyzer" and "bash_timeout_ms" not in step


@pytest.mark.parametrize(
    "text,message",
    [
        ("bug_bash: [1, 2]\n", "must be a mapping of settings"),
        ("bug_bash:\n  min_test_cases: 3\n bad indent: x\n", "is not valid YAML"),
        ("- a\n- b\n", "must be a mapping of sections"),
    ],
)
def test_malformed_config_files(bugs, text, message):
    (bugs.p.root / ".aether" / "config.yaml").write_text(text)
    err = bugs.run("list").error
    assert err["code"] == "invalid_config" and message in err["error"]


def test_the_colony_s_sections_are_left_to_it_and_an_unknown_one_is_named(bugs):
    (bugs.p.root / ".aether" / "config.yaml").write_text("budget:\n  run: 3M\nmodels:\n  scout: haiku\n")
    assert bugs.ok("list", "--json")["count"] == 0
    (bugs.p.root / ".aether" / "config.yaml").write_text("bug_bsh:\n  min_test_cases: 3\n")
    err = bugs.run("list").error  # a misspelt section would otherwise be ignored without a word
    assert err["code"] == "invalid_config" and "unknown section 'bug_bsh' (did you mean bug_bash?)" in err["error"]


def test_environment_overrides(bugs, monkeypatch, tmp_path):
    set_config(bugs.p, max_reproduction_attempts=2, agent_model="claude-opus-4-20250514")
    monkeypatch.setenv("AETHER_BUG_MAX_REPRO_ATTEMPTS", "5")
    monkeypatch.setenv("AETHER_BUG_AUTO_APPROVE_LOW", "true")  # no longer read: no variable approves
    monkeypatch.setenv("AETHER_BUG_STORAGE_PATH", str(tmp_path / "bugs"))
    monkeypatch.setenv("AETHER_BUG_AGENT_MODEL", "claude-3-5-haiku-20241022")
    cfg = bug_config.load(str(bugs.p.root / ".aether" / "config.yaml"))
    assert cfg["max_reproduction_attempts"] == 5 and cfg["auto_approve_low_risk"] is False
    assert cfg["agent_model"] == "claude-3-5-haiku-20241022"
    bugs.ok("init", "x", "--id", "elsewhere")
    assert (tmp_path / "bugs" / "elsewhere" / "state.json").exists()
    assert not (bugs.p.root / ".aether" / "bugs").exists()


@pytest.mark.parametrize(
    "var,value,message",
    [
        ("AETHER_BUG_MAX_REPRO_ATTEMPTS", "many", "must be a whole number"),
        ("AETHER_BUG_MAX_REPRO_ATTEMPTS", "0", "must be >= 1"),
    ],
)
def test_bad_environment_override_names_the_variable(bugs, monkeypatch, var, value, message):
    monkeypatch.setenv(var, value)
    err = bugs.run("list").error
    assert err["code"] == "invalid_config" and err["key"] == var and message in err["error"]


def test_relative_storage_path_is_inside_the_project(bugs):
    set_config(bugs.p, storage_path="var/bugs")
    bugs.ok("init", "x", "--id", "rel")
    assert (bugs.p.root / "var" / "bugs" / "rel" / "state.json").exists()


# ---------------------------------------------------------------- costs


def test_cost_is_priced_per_model_and_phase(bugs):
    bugs.drive("c", "reproducing")
    out = bugs.ok("cost", "c", "--agent", "bug-researcher", "--input-tokens", "10000", "--output-tokens", "2000")
    assert out["cost"]["cost_usd"] == 0.06  # sonnet 4: 3 $/M in, 15 $/M out
    assert out["cost"]["phase"] == "reproducing" and out["cost"]["model"] == "claude-sonnet-4-20250514"
    out = bugs.ok(
        "cost",
        "c",
        "--agent",
        "x",
        "--input-tokens",
        "1000",
        "--output-tokens",
        "1000",
        "--model",
        "claude-opus-4-20250514",
        "--phase",
        "ANALYZING",
    )
    assert out["cost"]["cost_usd"] == 0.09 and out["by_phase"] == {"reproducing": 0.06, "analyzing": 0.09}
    assert out["cost_usd"] == 0.15
    assert bugs.ok("status", "c", "--json")["cost_usd"] == 0.15


@pytest.mark.parametrize(
    "args,code",
    [
        (("--input-tokens", "-1", "--output-tokens", "1"), "invalid_argument"),
        (("--input-tokens", "1.5", "--output-tokens", "1"), "invalid_argument"),
        (("--input-tokens", "1", "--output-tokens", "1", "--model", "gpt-5"), "unknown_model"),
        (("--input-tokens", "1", "--output-tokens", "1", "--phase", "lunch"), "invalid_phase_name"),
        (("--input-tokens", "1000000000", "--output-tokens", "1"), "invalid_argument"),
    ],
)
def test_cost_rejects_bad_numbers(bugs, args, code):
    bugs.drive("c", "reproducing")
    result = bugs.run("cost", "c", "--agent", "a", *args)
    assert result.code == 1 and result.error["code"] == code
    assert bugs.state("c")["costs"] == []


def test_phase_limit_stops_the_pipeline(bugs):
    bugs.drive("c", "reproducing")
    # 0.51 USD in one phase: over the 0.50 per-phase limit
    result = bugs.run("cost", "c", "--agent", "bug-researcher", "--input-tokens", "170000", "--output-tokens", "0")
    assert result.code == 6 and result.error["code"] == "cost_limit_exceeded"
    assert "exceeds limit $0.50" in result.error["error"]
    assert len(bugs.state("c")["costs"]) == 1  # what was spent is recorded
    for args, text in ((("analyze", "c"), None), (("record", "c", "reproduction", "-"), REPRODUCTION)):
        blocked = bugs.run(*args, input=json.dumps(text) if text else None)
        assert blocked.code == 6 and blocked.error["code"] == "cost_limit_exceeded"
    assert bugs.phase("c") == "reproducing"
    set_config(bugs.p, max_phase_cost_usd=1.0)  # raising the limit lets it continue
    assert bugs.record("c", "reproduction", REPRODUCTION).json["phase"] == "ANALYZING"


def test_total_limit(bugs):
    set_config(bugs.p, max_phase_cost_usd=10.0, max_total_cost_usd=0.10)
    bugs.drive("c", "reproducing")
    bugs.ok("cost", "c", "--agent", "a", "--input-tokens", "30000", "--output-tokens", "0")
    result = bugs.run("cost", "c", "--agent", "a", "--input-tokens", "10000", "--output-tokens", "0", "--phase", "analyzing")
    assert result.code == 6 and "Total cost $0.12 exceeds limit $0.10" in result.error["error"]
    assert result.error["total_usd"] == 0.12


# ---------------------------------------------------------------- ids


@pytest.mark.parametrize("bad", ["../x", "a/b", "UPPER", "has space", "-lead", "trail-", "dou--ble", "x" * 65, "ünï", "a.b", ""])
def test_unsafe_ids_are_refused(bugs, bad):
    result = bugs.run("init", "desc", f"--id={bad}")
    assert result.code == 1 and result.error["code"] == "invalid_bug_id"
    assert bugs.run("status", "--", bad).error["code"] == "invalid_bug_id"
    assert not (bugs.p.root / ".aether" / "bugs").exists() or not any((bugs.p.root / ".aether" / "bugs").iterdir())


def test_auto_ids_are_unique_slugs(bugs):
    first = bugs.ok("init", "Crash: ÜNÏCODE  path!!")["bug_id"]
    second = bugs.ok("init", "Crash: ÜNÏCODE  path!!")["bug_id"]
    assert (first, second) == ("crash-unicode-path", "crash-unicode-path-2")
    assert bugs.ok("init", "🐜🐜")["bug_id"].startswith("bug-")


def test_existing_id_exits_2(bugs):
    bugs.ok("init", "a", "--id", "same")
    result = bugs.run("init", "b", "--id", "same")
    assert result.code == 2 and result.error["code"] == "bug_exists"
    assert bugs.state("same")["report"]["description"] == "a"


@pytest.mark.parametrize(
    "args,code",
    [
        (("init", ""), "invalid_argument"),
        (("init", "x", "--github-issue", "0"), "invalid_argument"),
        (("init", "x", "--github-issue", "abc"), "invalid_argument"),
        (("init", "x" * 10_001), "invalid_argument"),
        (("analyze", "a", "--stop-at", "plan"), "invalid_argument"),
        (("cost", "a", "--agent", "x"), "invalid_argument"),
    ],
)
def test_bad_arguments_exit_1(bugs, args, code):
    result = bugs.run(*args)
    assert result.code == 1 and result.error["code"] == code


# ---------------------------------------------------------------- state versions and storage


def test_version_0_state_is_migrated(bugs):
    bugs.ok("init", "old", "--id", "v0")
    state = bugs.state("v0")
    for key in ("version", "costs", "agent_rejections", "previous_attempts"):
        state.pop(key)
    bugs.write_state("v0", state)
    assert bugs.ok("status", "v0", "--json")["cost_usd"] == 0
    bugs.ok("analyze", "v0")
    migrated = bugs.state("v0")
    assert migrated["version"] == 1 and migrated["costs"] == [] and migrated["phase"] == "reproducing"


def test_newer_state_is_refused_untouched(bugs):
    bugs.ok("init", "new", "--id", "v9")
    state = dict(bugs.state("v9"), version=9)
    bugs.write_state("v9", state)
    result = bugs.run("analyze", "v9")
    assert result.code == 5 and result.error["code"] == "state_too_new"
    assert bugs.state("v9") == state


def test_corrupt_state_exits_5_and_restores(bugs):
    bugs.ok("init", "c", "--id", "bad")
    bugs.ok("analyze", "bad")
    path = bugs.p.root / ".aether" / "bugs" / "bad" / "state.json"
    path.write_text('{"bug_id": "bad", "phase": "flying"')
    for args in (("status", "bad"), ("analyze", "bad"), ("approve", "bad")):
        result = bugs.run(*args)
        assert result.code == 5 and result.error["code"] == "state_corrupt", args
    assert "aether bug restore bad" in bugs.run("status", "bad").error["error"]
    assert path.read_text() == '{"bug_id": "bad", "phase": "flying"'  # never overwritten
    bugs.ok("restore", "bad")
    assert bugs.phase("bad") == "created"  # the last good version before the analyze


def test_invalid_state_content_is_corrupt(bugs):
    bugs.ok("init", "c", "--id", "bad")
    state = dict(bugs.state("bad"), phase="flying")
    bugs.write_state("bad", state)
    result = bugs.run("status", "bad")
    assert result.code == 5 and "phase is 'flying'" in result.error["error"]


def test_lock_timeout_exits_5(bugs, monkeypatch):
    import fcntl

    bugs.ok("init", "c", "--id", "locked")
    lock = bugs.p.root / ".aether" / "bugs" / "locked" / "state.json.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        result = bugs.p.sh("bug", "analyze", "locked", env={"AETHER_LOCK_TIMEOUT": "0.2"})
        assert result.code == 5 and result.error["code"] == "lock_timeout"
    finally:
        os.close(fd)
    assert bugs.phase("locked") == "created"
    assert bugs.ok("analyze", "locked")["phase"] == "REPRODUCING"


def test_help_works_and_bug_is_listed(project):
    assert "bug" in project.run("help", "--json").json["commands"]
    out = project.run("bug", "fix", "--help")
    assert out.code == 0 and "--dry-run" in out.stdout
