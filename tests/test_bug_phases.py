"""The phase machine: every phase × operation pair through the CLI, and a property test that
no sequence of commands (tampering included) reaches IMPLEMENTING without an audited approval
of the current plan."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aether.bugs import phases
from aether.bugs.approval import plan_hash

from helpers.bugs import FIX_PLAN, NOT_REPRODUCED, REPRODUCTION, ROOT_CAUSE, Bugs, make_calc, set_config

OPS = {
    "analyze": ("analyze", "{id}"),
    "analyze-stop-reproduce": ("analyze", "{id}", "--stop-at", "reproduce"),
    "analyze-retry": ("analyze", "{id}", "--retry"),
    "record-reproduction": ("record", "{id}", "reproduction", "-"),
    "record-root-cause": ("record", "{id}", "root-cause", "-"),
    "record-fix-plan": ("record", "{id}", "fix-plan", "-"),
    "approve": ("typed", "/ant:bug approve {id}"),
    "reject": ("reject", "{id}", "--reason", "not worth it"),
    "fix": ("fix", "{id}"),
}
INPUTS = {"record-reproduction": REPRODUCTION, "record-root-cause": ROOT_CAUSE, "record-fix-plan": FIX_PLAN}
# A runner whose run has one failing test: what a confirmed reproduction needs (the phases, not the run, are tested here).
ONE_FAILING = [sys.executable, "-c", "print('1 failed in 0.01s'); raise SystemExit(1)"]

# (phase, operation) → the phase it leads to, or the exit code of the refusal.
# Anything not listed is refused with exit 2 (invalid phase, naming the legal commands).
LEGAL = {
    ("created", "analyze"): "reproducing",
    ("created", "analyze-stop-reproduce"): "reproducing",
    ("reproducing", "analyze"): "reproducing",  # resume: nothing moves
    ("reproducing", "analyze-stop-reproduce"): "reproducing",
    ("reproducing", "record-reproduction"): "analyzing",  # REPRODUCED, then automatically on
    ("reproduced", "analyze"): "analyzing",
    ("reproduced", "analyze-stop-reproduce"): "reproduced",  # already stopped there
    ("not_reproducible", "analyze"): 3,
    ("not_reproducible", "analyze-stop-reproduce"): 3,
    ("not_reproducible", "reject"): "wont_fix",
    ("analyzing", "analyze"): "analyzing",
    ("analyzing", "record-root-cause"): "planning",
    ("analyzed", "analyze"): "planning",
    ("planning", "analyze"): "planning",
    ("planning", "record-fix-plan"): "planned",
    ("planned", "approve"): "approved",
    ("planned", "reject"): "wont_fix",
    ("approved", "fix"): "fixed",
    ("implementing", "fix"): "fixed",  # resumes the interrupted fix
    ("verifying", "fix"): "fixed",  # re-runs the verification
    ("blocked", "analyze-retry"): "reproducing",
}


@pytest.mark.parametrize("phase", phases.PHASES)
def test_every_operation_in_every_phase(bugs, monkeypatch, phase):
    for op, args in OPS.items():
        bug_id = f"b-{phases.PHASES.index(phase)}-{list(OPS).index(op)}"
        make_calc(bugs.p.root)  # undo what an earlier bug's fix changed
        set_config(bugs.p, test_command=ONE_FAILING)  # the reproduction the drive records
        bugs.drive(bug_id, phase, monkeypatch=monkeypatch)
        set_config(bugs.p, test_command=ONE_FAILING if op == "record-reproduction" else "true")
        before = bugs.state(bug_id)
        text = json.dumps(INPUTS[op]) if op in INPUTS else None
        expected = LEGAL.get((phase, op), 2)
        if op == "approve":  # the person's typed command: the prompt hook's answer, never an error envelope
            said, code = bugs.typed(f"/ant:bug approve {bug_id}")
            assert code == 0 and ("✓ Fix plan approved" in said) == isinstance(expected, str), (phase, said)
            assert bugs.phase(bug_id) == (expected if isinstance(expected, str) else phase), (phase, op)
            if not isinstance(expected, str):
                assert bugs.state(bug_id) == before and "✗ Not approved" in said, (phase, said)
            continue
        result = bugs.run(*[a.format(id=bug_id) for a in args], input=text)
        if isinstance(expected, str):
            assert result.code == 0, (phase, op, result.stderr)
            assert bugs.phase(bug_id) == expected, (phase, op)
            new = bugs.state(bug_id)["transitions"][len(before["transitions"]) :]
            for t in new:  # each move is in the table, and in the append-only log
                assert t["to_phase"] in phases.TRANSITIONS[t["from_phase"]]
                assert t["trigger"] in ("auto", "user_command", "agent_output")
                assert t["metadata"]["command"].startswith("bug ")
            logged = [{k: v for k, v in r.items() if k != "bug_id"} for r in bugs.history(bug_id)]
            assert logged == bugs.state(bug_id)["transitions"]
        else:
            err = result.error
            assert result.code == expected, (phase, op, err)
            assert bugs.state(bug_id) == before, (phase, op)  # a refusal changes nothing
            legal = phases.legal_commands(phase, bug_id)
            if op != "fix" or phase != "planned":
                assert err["legal"] == legal
            if legal:
                assert legal[0] in err["error"], err["error"]
            else:
                assert "closed" in err["error"]


def test_transition_table_is_the_seeds():
    moves = {(a, b) for a, tos in phases.TRANSITIONS.items() for b in tos}
    assert moves == {
        ("created", "reproducing"),
        ("reproducing", "reproduced"),
        ("reproducing", "not_reproducible"),
        ("reproduced", "analyzing"),
        ("analyzing", "analyzed"),
        ("analyzed", "planning"),
        ("planning", "planned"),
        ("planned", "approved"),
        ("planned", "wont_fix"),
        ("approved", "implementing"),
        ("implementing", "verifying"),
        ("verifying", "fixed"),
        ("verifying", "blocked"),
        ("blocked", "reproducing"),
        ("not_reproducible", "wont_fix"),
    }
    assert len(phases.PHASES) == 14


def test_refusal_names_the_legal_command(bugs):
    bugs.drive("b", "planned")
    err = bugs.run("fix", "b").error
    assert err["code"] == "approval_required"
    assert "/ant:bug approve b" in err["error"]
    err = bugs.run("analyze", "b").error
    assert err["code"] == "invalid_phase" and "`/ant:bug approve b`" in err["error"]


# ---------------------------------------------------------------- the approval gate, as a property

STEPS = [
    "init",
    "analyze",
    "analyze-stop-reproduce",
    "analyze-stop-analyze",
    "analyze-retry",
    "repro",
    "repro-not",
    "repro-bad",
    "root-cause",
    "root-cause-bad",
    "plan",
    "plan-low",
    "plan-bad",
    "approve",
    "approve-by-command",
    "reject",
    "fix",
    "fix-dry",
    "tests-fail",
    "tests-pass",
    "auto-approve-on",
    "tamper-plan",
    "tamper-approval",
    "tamper-phase",
    "rollback",
]
LOW_PLAN = dict(
    FIX_PLAN,
    changes=[
        {"file_path": "extra.py", "change_type": "create", "proposed_code": "def helper():\n    return 1\n", "explanation": "a new helper"}
    ],
)


class _Project:
    """A throwaway project for one hypothesis example (fixtures are per test, not per example)."""

    def __init__(self, base: Path):
        from conftest import Project

        root = base / "proj"
        (root / ".aether").mkdir(parents=True)
        make_calc(root)
        self.project = Project(root, base)


def _step(b: Bugs, name: str, monkeypatch) -> None:
    i = "p"
    state_file = b.p.root / ".aether" / "bugs" / i / "state.json"
    if name == "init":
        b.run("init", "property bug", "--id", i)
    elif name.startswith("analyze"):
        extra = {
            "analyze": [],
            "analyze-retry": ["--retry"],
            "analyze-stop-reproduce": ["--stop-at", "reproduce"],
            "analyze-stop-analyze": ["--stop-at", "analyze"],
        }[name]
        b.run("analyze", i, *extra)
    elif name in ("repro", "repro-not", "repro-bad"):
        doc = {"repro": REPRODUCTION, "repro-not": NOT_REPRODUCED, "repro-bad": {"confirmed": True, "reproduction_steps": []}}[name]
        b.record(i, "reproduction", doc)
    elif name in ("root-cause", "root-cause-bad"):
        b.record(i, "root-cause", ROOT_CAUSE if name == "root-cause" else {"summary": "x" * 101})
    elif name in ("plan", "plan-low", "plan-bad"):
        doc = {"plan": FIX_PLAN, "plan-low": LOW_PLAN, "plan-bad": dict(FIX_PLAN, changes=[])}[name]
        b.record(i, "fix-plan", doc)
    elif name == "approve":
        b.typed(f"/ant:bug approve {i}")
    elif name == "approve-by-command":  # what a model could run: never an approval
        assert b.run("approve", i).code != 0
    elif name == "reject":
        b.run("reject", i, "--reason", "no")
    elif name in ("fix", "fix-dry"):
        b.run("fix", i, *(["--dry-run"] if name == "fix-dry" else []))
    elif name in ("tests-fail", "tests-pass", "auto-approve-on"):
        cfg = {"test_command": "false" if name == "tests-fail" else "true"}
        if name == "auto-approve-on":
            cfg["auto_approve_low_risk"] = True
        set_config(b.p, **cfg)
    elif name == "rollback":
        b.run("rollback", i)
    elif state_file.exists():  # attempts to get around the gate by editing the state
        state = json.loads(state_file.read_text())
        if name == "tamper-plan" and state.get("fix_plan"):
            state["fix_plan"]["summary"] += " (edited)"
        elif name == "tamper-approval" and state.get("fix_plan"):
            state["approval_record"] = {
                "bug_id": i,
                "approved_by": "mallory",
                "approved_at": "2026-01-01T00:00:00Z",
                "fix_plan_hash": plan_hash(state["fix_plan"]),
            }
        elif name == "tamper-phase":
            state["phase"] = "approved"
        state_file.write_text(json.dumps(state))


@st.composite
def sequences(draw):
    """Mostly the way to a fix (twice, with a retry), each step kept 3 times in 4, with up to
    two random steps — tampering included — before each."""
    backbone = [
        "analyze",
        "repro",
        "root-cause",
        draw(st.sampled_from(["plan", "plan-low"])),
        "approve",
        "fix",
        "analyze-retry",
        "repro",
        "root-cause",
        "plan",
        "approve",
        "fix",
    ]
    out = []
    for step in backbone:
        out += draw(st.lists(st.sampled_from(STEPS), max_size=2))
        if draw(st.integers(0, 3)):
            out.append(step)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sequences())
def test_no_sequence_reaches_implementing_without_a_matching_approval(monkeypatch, steps):
    with tempfile.TemporaryDirectory() as tmp:
        b = Bugs(_Project(Path(tmp)).project)
        b.run("init", "property bug", "--id", "p")
        state_file = b.p.root / ".aether" / "bugs" / "p" / "state.json"
        for name in steps:
            before = json.loads(state_file.read_text())
            _step(b, name, monkeypatch)
            after = json.loads(state_file.read_text())
            started = [t for t in after["transitions"][len(before["transitions"]) :] if t["to_phase"] == "implementing"]
            if started:
                approval = before["approval_record"]
                assert approval is not None
                assert approval["fix_plan_hash"] == plan_hash(before["fix_plan"])
                assert any(
                    e["bug_id"] == "p"
                    and e["fix_plan_hash"] == approval["fix_plan_hash"]
                    and e["approved_at"] == approval["approved_at"]
                    and e["approved_by"] == approval["approved_by"]
                    for e in b.audit()
                )
                assert approval["given_via"] == "typed_command"  # a person's, never a rule's (auto-approve-on is a step)
            assert after["phase"] in phases.PHASES
        for t in b.history("p"):
            if t["to_phase"] == "implementing":
                assert t["from_phase"] == "approved"
