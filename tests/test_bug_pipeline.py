"""Seed 003's integration scenarios through the CLI, and the approval gate."""

from __future__ import annotations

import copy
import json

from aether.bugs.approval import plan_hash

from helpers.bugs import FIX_PLAN, LOW, NOT_REPRODUCED, REPRODUCTION, ROOT_CAUSE, failing_plan, set_config


def test_happy_path(bugs, project_venv, monkeypatch):
    import os

    os.symlink(project_venv, bugs.p.root / ".venv")
    monkeypatch.setenv("AETHER_NOW", "2026-03-01T10:00:00Z")
    out = bugs.run(
        "init",
        "Login fails with special characters",
        "--test",
        "tests/test_calc.py::test_add",
        "--github-issue",
        "123",
        "--error",
        "assert -1 == 5",
        "--text",
    )
    assert out.stdout.splitlines()[:2] == [
        "Created bug investigation: login-fails-with-special-characters",
        "Location: .aether/bugs/login-fails-with-special-characters/",
    ]
    i = "login-fails-with-special-characters"
    step = bugs.ok("analyze", i)["agent_step"]
    assert step["agent"] == "bug-researcher" and step["record"] == f"aether bug record {i} reproduction -"
    assert step["reads"] == [f".aether/bugs/{i}/report.md"]
    assert bugs.record(i, "reproduction", REPRODUCTION).json["agent_step"]["agent"] == "root-cause-analyzer"
    assert bugs.record(i, "root-cause", ROOT_CAUSE).json["agent_step"]["agent"] == "fix-planner"
    planned = bugs.record(i, "fix-plan", FIX_PLAN).json
    assert planned["phase"] == "PLANNED" and planned["agent_step"] is None
    assert planned["fix_plan_hash"] == plan_hash(bugs.state(i)["fix_plan"])
    assert "Risk: LOW" in planned["text"] and f"/ant:bug approve {i}" in planned["text"]
    bugs.approve(i)
    rec = bugs.state(i)["approval_record"]
    assert rec == {
        "bug_id": i,
        "approved_by": rec["approved_by"],
        "approved_at": "2026-03-01T10:00:00Z",
        "fix_plan_hash": planned["fix_plan_hash"],
        "given_via": "typed_command",
        "prompt_id": rec["prompt_id"],
        "session_id": "s1",
    }
    assert rec["approved_by"] and bugs.audit() == [rec]
    assert bugs.ok("fix", i)["phase"] == "FIXED"
    phases_seen = [t["to_phase"] for t in bugs.history(i)]
    assert phases_seen == [
        "reproducing",
        "reproduced",
        "analyzing",
        "analyzed",
        "planning",
        "planned",
        "approved",
        "implementing",
        "verifying",
        "fixed",
    ]
    triggers = [t["trigger"] for t in bugs.history(i)]
    assert triggers == [
        "user_command",
        "agent_output",
        "auto",
        "agent_output",
        "auto",
        "agent_output",
        "user_command",
        "user_command",
        "auto",
        "auto",
    ]
    assert bugs.ok("history", i) == bugs.history(i)


def test_not_reproducible(bugs):
    bugs.drive("n", "reproducing")
    out = bugs.record("n", "reproduction", NOT_REPRODUCED).json
    assert out["phase"] == "NOT_REPRODUCIBLE"
    assert "Could not reproduce after 3 attempts" in out["text"]
    assert "Review: .aether/bugs/n/reproduction.md" in out["text"]
    err = bugs.run("analyze", "n")
    assert err.code == 3 and err.error["code"] == "not_reproducible"
    assert "aether bug reject n --reason -" in err.error["error"]
    bugs.ok("reject", "n", "--reason", "cannot reproduce")
    assert bugs.phase("n") == "wont_fix"


def test_stop_at_reproduce(bugs):
    bugs.ok("init", "bug", "--id", "s")
    assert bugs.ok("analyze", "s", "--stop-at", "reproduce")["stop_at"] == "reproduce"
    out = bugs.record("s", "reproduction", REPRODUCTION).json
    assert out["phase"] == "REPRODUCED" and out["agent_step"] is None
    state = bugs.state("s")
    assert state["root_cause"] is None and state["phase"] == "reproduced"
    # a later `analyze` carries on from there
    assert bugs.ok("analyze", "s")["phase"] == "ANALYZING"


def test_stop_at_analyze(bugs):
    bugs.ok("init", "bug", "--id", "s")
    bugs.ok("analyze", "s", "--stop-at", "analyze")
    bugs.record("s", "reproduction", REPRODUCTION).json
    out = bugs.record("s", "root-cause", ROOT_CAUSE).json
    assert out["phase"] == "ANALYZED"
    assert bugs.state("s")["fix_plan"] is None
    assert bugs.ok("analyze", "s")["phase"] == "PLANNING"


def test_stop_at_can_be_set_while_running(bugs):
    bugs.drive("s", "reproducing")
    bugs.ok("analyze", "s", "--stop-at", "analyze")
    bugs.record("s", "reproduction", REPRODUCTION).json
    assert bugs.record("s", "root-cause", ROOT_CAUSE).json["phase"] == "ANALYZED"
    assert bugs.run("analyze", "s", "--stop-at", "reproduce").error["code"] == "invalid_phase"


def test_approval_required(bugs):
    bugs.drive("a", "planned")
    result = bugs.run("fix", "a")
    assert result.code == 2 and result.error["code"] == "approval_required"
    assert "/ant:bug approve a" in result.error["error"]
    assert bugs.phase("a") == "planned"


def test_blocked_on_test_failure(bugs, project_venv):
    import os

    os.symlink(project_venv, bugs.p.root / ".venv")
    bugs.drive("b", "approved", fix_plan=failing_plan())
    result = bugs.run("fix", "b")
    assert result.code == 4
    state = bugs.state("b")
    assert state["phase"] == "blocked" and "1 of 3 tests failed" in state["blocked_reason"]
    status = bugs.ok("status", "b", "--json")
    assert status["blocked_reason"] == state["blocked_reason"]
    assert status["next"] == ["aether bug analyze b --retry", "aether bug rollback b"]


def test_retry_from_blocked(bugs):
    bugs.drive("r", "blocked")
    old = bugs.state("r")
    out = bugs.ok("analyze", "r", "--retry")
    assert out["phase"] == "REPRODUCING" and out["action"] == "retried"
    state = bugs.state("r")
    assert state["transitions"][-1]["from_phase"] == "blocked"
    assert state["transitions"][-1]["metadata"]["reason"] == old["blocked_reason"]
    for key in ("reproduction", "root_cause", "fix_plan", "approval_record", "blocked_reason"):
        assert state[key] is None, key
    assert state["previous_attempts"][-1]["fix_plan"] == old["fix_plan"]
    # the new plan needs a new approval; the failed fix is rolled back first (with it applied
    # the bug's test passes, and a reproduction that passes is no reproduction)
    bugs.ok("rollback", "r")
    set_config(bugs.p)
    bugs.record("r", "reproduction", REPRODUCTION).json
    bugs.record("r", "root-cause", ROOT_CAUSE).json
    bugs.record("r", "fix-plan", FIX_PLAN).json
    assert bugs.run("fix", "r").error["code"] == "approval_required"


# ---------------------------------------------------------------- approval is human


def test_approve_is_refused_whoever_runs_it(bugs, monkeypatch):
    bugs.drive("a", "planned")
    for env in ({"CLAUDECODE": "1"}, {"CLAUDECODE": ""}):
        proc = bugs.p.sh("bug", "approve", "a", env=env)
        assert proc.code == 2 and proc.error["code"] == "approval_requires_human"
        assert "/ant:bug approve a" in proc.error["error"]
    assert bugs.phase("a") == "planned" and bugs.audit() == []


def test_the_approver_is_the_login_name(bugs):
    bugs.drive("a", "planned")
    bugs.approve("a")
    rec = bugs.state("a")["approval_record"]
    assert rec["approved_by"] and not rec["approved_by"].startswith("auto:")


def test_require_approval_reason(bugs):
    set_config(bugs.p, require_approval_reason=True)
    bugs.ok("init", "x", "--id", "a")
    bugs.ok("analyze", "a")
    bugs.record("a", "reproduction", REPRODUCTION).json
    bugs.record("a", "root-cause", ROOT_CAUSE).json
    bugs.record("a", "fix-plan", FIX_PLAN).json
    said, _ = bugs.typed("/ant:bug approve a")
    assert "✗ Not approved" in said and "needs a reason" in said and bugs.phase("a") == "planned"
    bugs.approve("a", "reviewed the diff")
    rec = bugs.state("a")["approval_record"]
    assert rec["reason"] == "reviewed the diff" and bugs.audit()[0]["reason"] == "reviewed the diff"


def test_reject_needs_a_reason(bugs):
    bugs.drive("j", "planned")
    for args in ((), ("--reason", "  ")):
        result = bugs.run("reject", "j", *args)
        assert result.code == 2 and result.error["code"] == "reason_required"
    out = bugs.ok("reject", "j", "--reason", "duplicate of #12")
    assert out["phase"] == "WONT_FIX" and bugs.state("j")["rejection"]["reason"] == "duplicate of #12"


def test_plan_changed_after_approval_is_refused(bugs):
    bugs.drive("t", "approved")
    state = bugs.state("t")
    state["fix_plan"]["changes"][0]["proposed_code"] = "    import os; os.system('x')\n"
    bugs.write_state("t", state)
    before = (bugs.p.root / "calc.py").read_text()
    err = bugs.run("fix", "t").error
    assert err["code"] == "plan_changed_since_approval"
    assert err["approved_hash"] != err["plan_hash"] == plan_hash(state["fix_plan"])
    assert (bugs.p.root / "calc.py").read_text() == before and bugs.phase("t") == "approved"


def test_forged_approval_not_in_the_audit_log_is_refused(bugs):
    bugs.drive("t", "planned")
    state = bugs.state("t")
    state["phase"] = "approved"
    state["approval_record"] = {
        "bug_id": "t",
        "approved_by": "mallory",
        "approved_at": "2026-01-01T00:00:00Z",
        "fix_plan_hash": plan_hash(state["fix_plan"]),
    }
    bugs.write_state("t", state)
    assert bugs.run("fix", "t").error["code"] == "approval_not_audited"
    del state["approval_record"]
    bugs.write_state("t", state)
    assert bugs.run("fix", "t").error["code"] == "approval_required"


def test_hash_is_sha256_of_canonical_json():
    import hashlib

    doc = {"b": "ü", "a": [1, {"y": 2, "x": 1}]}
    expected = hashlib.sha256('{"a":[1,{"x":1,"y":2}],"b":"ü"}'.encode()).hexdigest()
    assert plan_hash(doc) == expected


# ---------------------------------------------------------------- LOW risk: an assessment for the person


def test_the_low_risk_assessment_is_shown_not_acted_on(bugs):
    bugs.drive("m", "planning")
    out = bugs.record("m", "fix-plan", FIX_PLAN).json  # says low, but changes a line
    assert out["phase"] == "PLANNED"
    assert [f[:17] for f in out["low_risk"]["failed"]] == ["it only adds code"]
    bugs.drive("o", "planning")
    out = bugs.record("o", "fix-plan", LOW).json
    assert out["phase"] == "PLANNED" and out["low_risk"]["eligible"] and bugs.audit() == []


def test_low_risk_criteria():
    from aether.bugs.approval import LOW_CRITERIA, low_risk

    cfg = {"min_test_cases": 2}
    assert low_risk(LOW, cfg)["eligible"]
    two_files = copy.deepcopy(LOW)
    two_files["changes"].append(dict(LOW["changes"][0], file_path="more.py"))
    assert "it changes a single file" in low_risk(two_files, cfg)["failed"]
    medium = dict(LOW, risk_level="medium")
    assert low_risk(medium, cfg)["failed"] == ["the plan's risk_level is low"]
    two_defs = copy.deepcopy(LOW)
    two_defs["changes"][0]["proposed_code"] += "\n\ndef other():\n    return 2\n"
    assert "the added code touches at most one function or class definition" in low_risk(two_defs, cfg)["failed"]
    untested = dict(LOW, test_cases=[dict(t, category="edge_case") for t in LOW["test_cases"]])
    assert low_risk(untested, cfg)["failed"] == ["it has at least min_test_cases tests, one of them a regression test"]
    deleting = dict(LOW, changes=[{"file_path": "x.py", "change_type": "delete", "explanation": "x"}])
    assert LOW_CRITERIA["additive"] in low_risk(deleting, cfg)["failed"]
    adding = dict(
        LOW,
        changes=[
            {
                "file_path": "calc.py",
                "change_type": "modify",
                "current_code": "def add(a, b):\n",
                "proposed_code": "def add(a, b):\n    log(b)\n",
                "explanation": "a log line",
            }
        ],
    )
    assert low_risk(adding, cfg)["eligible"]


# ---------------------------------------------------------------- status and list


def test_status_panel_and_json(bugs, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2025-12-10T14:30:00Z")
    bugs.drive("login-special-chars", "planned")
    text = bugs.run("status", "login-special-chars").stdout
    assert text.startswith("╭") and "Bug: login-special-chars" in text.splitlines()[0]
    for piece in (
        "Phase: PLANNED (awaiting approval)",
        "Created: 2025-12-10 14:30:00",
        "Reproduction: CONFIRMED (high confidence)",
        "Root Cause: calc.py:3",
        "Summary: Use + in add()",
        "Tests: 2 new test cases",
        "Risk: LOW",
        "Next: /ant:bug approve login-special-chars",
    ):
        assert piece in text, piece
    assert all(len(line) == 72 for line in text.splitlines())
    data = bugs.ok("status", "login-special-chars", "--json")
    assert data["phase"] == "PLANNED" and data["created_at"] == "2025-12-10T14:30:00Z"
    assert data["root_cause"] == {"file": "calc.py", "line": 3, "confidence": "high", "summary": ROOT_CAUSE["summary"]}
    assert data["fix_plan"] == {"summary": "Use + in add()", "files_changed": 1, "test_cases": 2, "risk_level": "low"}
    assert data["reproduction"]["confirmed"] is True


def test_list_filters_limits_and_flags_corrupt_bugs(bugs, monkeypatch):
    for n, phase in enumerate(("created", "planned", "reproducing")):
        monkeypatch.setenv("AETHER_NOW", str(1_760_000_000 + n))
        bugs.drive(f"bug-{n}", phase)
    data = bugs.ok("list", "--json")
    assert [r["bug_id"] for r in data["bugs"]] == ["bug-2", "bug-1", "bug-0"]
    assert [r["next"] for r in data["bugs"]] == ["(running)", "approve", "analyze"]
    assert [r["bug_id"] for r in bugs.ok("list", "--phase", "PLANNED", "--json")["bugs"]] == ["bug-1"]
    limited = bugs.ok("list", "--limit", "1", "--json")
    assert limited["count"] == 3 and len(limited["bugs"]) == 1
    text = bugs.run("list").stdout
    assert "Bug Investigations" in text and "3 bugs found." in text
    assert bugs.run("list", "--phase", "done").error["code"] == "invalid_phase_name"
    (bugs.p.root / ".aether/bugs/bug-0/state.json").write_text("{oops")
    rows = bugs.ok("list", "--json")["bugs"]
    assert rows[-1]["bug_id"] == "bug-0" and "corrupt" in rows[-1]["error"]
    assert bugs.ok("status", "--json")["count"] == 3  # status without an id lists


def test_list_with_no_bugs(bugs):
    assert bugs.ok("list", "--json") == {"bugs": [], "count": 0, "text": bugs.ok("list", "--json")["text"]}
    assert "0 bugs found" in bugs.run("list").stdout


def test_unknown_bug(bugs):
    for args in (
        ("status", "nope"),
        ("approve", "nope"),
        ("fix", "nope"),
        ("analyze", "nope"),
        ("reject", "nope", "--reason", "x"),
        ("history", "nope"),
        ("cost", "nope", "--agent", "a", "--input-tokens", "1", "--output-tokens", "1"),
    ):
        result = bugs.run(*args)
        assert result.code == 1 and result.error["code"] == "bug_not_found", args
    assert not (bugs.p.root / ".aether" / "bugs" / "nope").exists()


def test_json_round_trip_of_report_text(bugs, tmp_path):
    trace = tmp_path / "trace.txt"
    trace.write_text('Traceback (most recent call last):\n  File "x.py", line 1\n"quoted" ünï\n')
    out = bugs.ok("init", "-", "--id", "u", "--stack-trace", f"@{trace}", input="Crash on start\nwith $(weird) `chars` and 'quotes' 🐜")
    report = bugs.state("u")["report"]
    assert report["description"] == "Crash on start\nwith $(weird) `chars` and 'quotes' 🐜"
    assert report["stack_trace"] == trace.read_text()
    assert out["phase"] == "CREATED"
    assert "🐜" in (bugs.p.root / ".aether/bugs/u/report.md").read_text()
    assert bugs.run("init", "x", "--stack-trace", "@/no/such/file").error["code"] == "file_unreadable"
    assert json.loads(bugs.run("init", "x", "--id", "v").stdout)["ok"] is True
