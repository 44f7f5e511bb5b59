"""Bug Bash verdicts on what ran: a reproduction is confirmed only by a failing run Aether made
itself, and a fix is FIXED only when nothing that passed before it fails after it (the whole
suite is run before and after). The fixture project has its own interpreter (`.venv`)."""

from __future__ import annotations

import copy
import json
import os

import pytest

from aether.bugs import runs

from helpers.bugs import FIX_PLAN, REPRODUCTION, ROOT_CAUSE, plan, set_config

# The bug's own test passes once add() adds; sub() has a test of its own, which passes today.
FIRST_TEST = "from calc import sub\n\n\ndef test_first():\n    assert sub(5, 3) == 2\n"
OTHER_FAILING = "def test_other():\n    assert 'unrelated' == 'broken long ago'\n"
# A lazy researcher: it ran the report's test, which passes, and says it failed.
LAZY = dict(
    copy.deepcopy(REPRODUCTION),
    reproduction_steps=["python -m pytest tests/test_first.py -v"],
    test_output="FAILED tests/test_first.py::test_first - assert 7 == 2",
)


@pytest.fixture
def calc(bugs, project_venv):
    """The calc project with its own interpreter and tests/test_first.py (passing)."""
    os.symlink(project_venv, bugs.p.root / ".venv")
    (bugs.p.root / "tests" / "test_first.py").write_text(FIRST_TEST)
    return bugs


def _reproducing(bugs, bug_id, *, test=None):
    args = ["init", "add() returns the wrong sum", "--id", bug_id] + (["--test", test] if test else [])
    bugs.ok(*args)
    bugs.ok("analyze", bug_id)


# ---------------------------------------------------------------- item 4: the reproduction


def test_a_reproduction_that_passes_is_not_confirmed_and_ends_not_reproducible(calc):
    set_config(calc.p, max_reproduction_attempts=2)
    _reproducing(calc, "lazy", test="tests/test_first.py::test_first")
    first = calc.record("lazy", "reproduction", LAZY)
    err = first.error
    assert first.code == 4 and err["code"] == "invalid_agent_output"
    assert err["retry_allowed"] is True and err["attempt"] == 1
    (said,) = [d for d in err["defects"] if "ran and passed" in d]
    assert "tests/test_first.py::test_first" in said and "exit 0 (1 ran: 1 passed)" in said
    assert err["run"]["outcome"] == "passed" and err["run"]["exit_code"] == 0
    assert err["run"]["command"][0] == str(calc.p.root / ".venv" / "bin" / "python")
    assert err["run"]["counts"]["passed"] == 1 and err["run"]["counts"]["failed"] == 0
    state = calc.state("lazy")
    assert state["phase"] == "reproducing" and state["reproduction"] is None
    assert "1 passed" in (calc.p.root / ".aether/bugs/lazy/reproduction.log").read_text()

    # the last attempt lies again: the bug ends NOT_REPRODUCIBLE, with what ran kept
    last = calc.record("lazy", "reproduction", LAZY).error
    assert last["code"] == "invalid_agent_output" and last["retry_allowed"] is False
    assert last["phase"] == "NOT_REPRODUCIBLE" and "NOT_REPRODUCIBLE" in last["error"]
    state = calc.state("lazy")
    assert state["phase"] == "not_reproducible" and state["agent_rejections"] == {}
    rep = state["reproduction"]
    assert rep["confirmed"] is False and rep["claimed_confirmed"] is True and rep["run"]["outcome"] == "passed"
    assert [t["to_phase"] for t in calc.history("lazy")] == ["reproducing", "not_reproducible"]
    report = (calc.p.root / ".aether/bugs/lazy/reproduction.md").read_text()
    assert "NOT REPRODUCED" in report and "## What Aether ran" in report and "this run did not show the bug" in report
    status = calc.run("status", "lazy").stdout
    assert "Reproduction: NOT REPRODUCED" in status and "→ exit 0 (1 ran: 1 passed)" in status


def test_a_reproduction_that_really_fails_is_reproduced_with_the_run_recorded(calc):
    _reproducing(calc, "real", test="tests/test_calc.py::test_add")
    out = calc.record("real", "reproduction", REPRODUCTION).json
    assert out["phase"] == "ANALYZING"
    run = calc.state("real")["reproduction"]["run"]
    assert run["outcome"] == "failed" and run["exit_code"] == 1 and run["tests"] == ["tests/test_calc.py::test_add"]
    assert (run["counts"]["ran"], run["counts"]["failed"]) == (1, 1)
    assert run["command"][:3] == [str(calc.p.root / ".venv" / "bin" / "python"), "-m", "pytest"]
    assert "assert -1 == 5" in run["output_tail"]
    shown = ".venv/bin/python -m pytest -v --tb=short -p no:cacheprovider tests/test_calc.py::test_add"
    assert out["reproduced_by"] == f"{shown} → exit 1 (1 ran: 1 failed)"
    assert f"Reproduced by: {shown} → exit 1 (1 ran: 1 failed)" in out["text"]
    summary = calc.ok("status", "real", "--json")["reproduction"]["run"]
    assert summary["result"] == "exit 1 (1 ran: 1 failed)" and summary["shown"] == shown
    panel = calc.run("status", "real").stdout
    assert "Reproduced by: .venv/bin/python -m pytest" in panel and "→ exit 1 (1 ran: 1 failed)" in panel


def test_the_test_comes_from_reproduction_test_then_the_report_then_the_steps(calc):
    # no test in the report: the pytest command among the steps names it
    _reproducing(calc, "steps")
    doc = dict(REPRODUCTION, reproduction_steps=["cd . && python -m pytest tests/test_calc.py::test_add -v --tb=long 2>&1 | tail"])
    calc.record("steps", "reproduction", doc).json
    assert calc.state("steps")["reproduction"]["run"]["tests"] == ["tests/test_calc.py::test_add"]
    # reproduction_test wins over the report's test path
    _reproducing(calc, "named", test="tests/test_first.py")
    calc.record("named", "reproduction", dict(REPRODUCTION, reproduction_test=str(calc.p.root / "tests/test_calc.py"))).json
    assert calc.state("named")["reproduction"]["run"]["tests"] == ["tests/test_calc.py"]


@pytest.mark.parametrize(
    "named, said",
    [
        ("tests/test_gone.py::test_x", "reproduction_test: 'tests/test_gone.py' does not exist in the project"),
        ("../outside.py", "reproduction_test: '../outside.py' contains `..`"),
        ("/etc/passwd", "reproduction_test: '/etc/passwd' is outside the project"),
        ("--collect-only", "reproduction_test: must name a test of the project"),
        (".aether/bugs/x/state.json", "is inside .aether/"),
        ("tests", "is not a test file of the project"),  # a folder: any failing test in it would do
        ("node_modules/pkg/test_x.py", "is installed code"),
    ],
)
def test_a_reproduction_test_outside_the_project_or_missing_is_refused_unrun(calc, named, said):
    _reproducing(calc, "r")
    err = calc.record("r", "reproduction", dict(REPRODUCTION, reproduction_test=named)).error
    assert err["code"] == "invalid_agent_output" and any(said in d for d in err["defects"]), err["defects"]
    assert "run" not in err and not (calc.p.root / ".aether/bugs/r/reproduction.log").exists()
    assert calc.phase("r") == "reproducing"


def test_a_reproduction_that_cannot_run_is_rejected_and_says_why(calc):
    _reproducing(calc, "none")  # no test anywhere: nothing to run
    doc = dict(REPRODUCTION, reproduction_steps=["open the app and click Login"])
    err = calc.record("none", "reproduction", doc).error
    assert any(d.startswith("could not run the reproduction: it names no test") for d in err["defects"])

    (calc.p.root / "tests" / "test_broken.py").write_text("def test_x(:\n")  # a collection error
    _reproducing(calc, "collect")
    err = calc.record("collect", "reproduction", dict(REPRODUCTION, reproduction_test="tests/test_broken.py")).error
    (said,) = [d for d in err["defects"] if d.startswith("could not run the reproduction")]
    assert "error(s) (collection or setup) and no failing test" in said
    assert err["run"]["outcome"] == "could_not_run" and calc.phase("collect") == "reproducing"

    set_config(calc.p, test_command="true")  # a command that is no test runner
    _reproducing(calc, "norunner")
    err = calc.record("norunner", "reproduction", dict(REPRODUCTION, reproduction_test="tests/test_calc.py")).error
    assert any("ends with no test runner summary" in d for d in err["defects"])


def test_an_unconfirmed_reproduction_runs_nothing_and_a_run_cannot_be_claimed(calc):
    _reproducing(calc, "n")
    doc = {"confirmed": False, "reproduction_steps": ["python -m pytest tests/test_calc.py"], "notes": "passes here"}
    assert calc.record("n", "reproduction", doc).json["phase"] == "NOT_REPRODUCIBLE"
    assert not (calc.p.root / ".aether/bugs/n/reproduction.log").exists()
    _reproducing(calc, "forged")
    err = calc.record("forged", "reproduction", dict(REPRODUCTION, run={"outcome": "failed"})).error
    assert any(d.startswith("run: unknown field") for d in err["defects"])


# ---------------------------------------------------------------- item 5: the whole suite


def _approved(bugs, bug_id, fix_plan):
    _reproducing(bugs, bug_id, test="tests/test_calc.py::test_add")
    bugs.record(bug_id, "reproduction", REPRODUCTION).json
    bugs.record(bug_id, "root-cause", ROOT_CAUSE).json
    bugs.record(bug_id, "fix-plan", fix_plan).json
    bugs.approve(bug_id)


BREAKS_SUB = plan(
    changes=FIX_PLAN["changes"]
    + [
        {
            "file_path": "calc.py",
            "change_type": "modify",
            "current_code": "def sub(a, b):\n    return a - b\n",
            "proposed_code": "def sub(a, b):\n    return a + b\n",
            "explanation": "make sub look like add",
        }
    ]
)


def test_a_fix_that_breaks_another_test_is_blocked_naming_it(calc):
    _approved(calc, "breaks", BREAKS_SUB)
    result = calc.run("fix", "breaks")
    err = result.error
    assert result.code == 4 and err["code"] == "verification_failed" and err["phase"] == "BLOCKED"
    assert err["broken_tests"] == ["tests/test_first.py::test_first"] and err["already_failing"] == []
    assert "the fix broke 1 test that passed before it: tests/test_first.py::test_first" in err["reason"]
    assert "aether bug rollback breaks" in err["error"]
    assert "✗ Broken by the fix (passed before it): tests/test_first.py::test_first" in err["text"]
    assert runs.BROKEN_ADVICE in err["text"]
    state = calc.state("breaks")
    assert state["phase"] == "blocked" and "tests/test_first.py::test_first" in state["blocked_reason"]
    impl = state["implementation"]
    assert impl["tests_failed"] == 1 and all(t["outcome"] == "passed" for t in impl["tests"])  # its own tests pass
    assert impl["baseline"]["failing"] == ["tests/test_calc.py::test_add"]  # the bug, before the fix
    assert impl["suite"]["failing"] == ["tests/test_first.py::test_first"]
    assert impl["suite"]["command"][:3] == [str(calc.p.root / ".venv" / "bin" / "python"), "-m", "pytest"]
    assert state["transitions"][-1]["metadata"]["broken_tests"] == ["tests/test_first.py::test_first"]
    assert "FAILED tests/test_first.py::test_first" in (calc.p.root / ".aether/bugs/breaks/suite-after.log").read_text()
    panel = calc.run("status", "breaks").stdout
    assert "Broken by the fix: tests/test_first.py::test_first" in panel


def test_a_test_failing_before_the_fix_is_named_not_blamed(calc):
    (calc.p.root / "tests" / "test_other.py").write_text(OTHER_FAILING)
    _approved(calc, "pre", FIX_PLAN)
    out = calc.ok("fix", "pre")
    assert out["phase"] == "FIXED"
    impl = calc.state("pre")["implementation"]
    assert impl["success"] is True and impl["broken_tests"] == []
    assert impl["already_failing"] == ["tests/test_other.py::test_other"]
    assert impl["baseline"]["failing"] == ["tests/test_calc.py::test_add", "tests/test_other.py::test_other"]
    assert impl["suite"]["failing"] == ["tests/test_other.py::test_other"]
    assert "output" not in impl["suite"] and 0 < len(impl["suite"]["output_tail"]) <= runs.OUTPUT_TAIL
    assert "Already failing before the fix (not blamed on it): tests/test_other.py::test_other" in out["text"]
    assert "✓ Bug fixed!" in out["text"]
    assert calc.ok("status", "pre", "--json")["implementation"]["already_failing"] == ["tests/test_other.py::test_other"]


def test_the_baseline_survives_an_interrupted_verification(calc, monkeypatch):
    from aether.bugs import fixer

    _approved(calc, "v", BREAKS_SUB)

    def die(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(fixer, "verify", die)
        assert calc.run("fix", "v").code == 130
    kept = calc.state("v")["implementation"]["baseline"]
    assert calc.phase("v") == "verifying" and kept["failing"] == ["tests/test_calc.py::test_add"]
    err = calc.run("fix", "v").error  # re-run on the applied fix: compared with the kept baseline
    assert err["broken_tests"] == ["tests/test_first.py::test_first"]
    assert calc.state("v")["implementation"]["baseline"] == kept


def test_the_suite_is_the_configured_test_command_whole(bugs):
    bugs.drive("c", "approved")
    log = bugs.p.root / "ran.txt"
    runner = ["python3", "-c", "import sys; open('ran.txt', 'a').write(' '.join(sys.argv[1:]) + '\\n')"]
    set_config(bugs.p, test_command=runner)
    assert bugs.ok("fix", "c")["phase"] == "FIXED"
    # before the fix, the bug's own tests, after the fix
    assert log.read_text().splitlines() == ["", "tests/test_bug_c.py tests/test_calc.py::test_add", ""]
    impl = bugs.state("c")["implementation"]
    assert impl["suite"]["source"] == "bug_bash.test_command" and impl["suite_compared_by"] == "exit"


def test_the_colonys_verify_tests_command_is_the_suite(bugs):
    bugs.drive("v", "approved")
    # no bug_bash.test_command: the colony's command is the suite (here it fails once add() adds)
    suite = "echo suite-ran >> ran.txt; grep -q 'a + b' calc.py && exit 3 || exit 0"
    (bugs.p.root / ".aether" / "config.yaml").write_text(json.dumps({"verify": {"tests": suite}}))
    err = bugs.run("fix", "v").error
    impl = bugs.state("v")["implementation"]
    assert impl["suite"]["source"] == "verify: tests" and impl["suite"]["command"] == ["/bin/sh", "-c", suite]
    assert (impl["baseline"]["exit_code"], impl["suite"]["exit_code"]) == (0, 3)
    assert (bugs.p.root / "ran.txt").read_text() == "suite-ran\nsuite-ran\n"
    assert all(t["outcome"] == "passed" for t in impl["tests"])  # its own tests, with the project's pytest, pass
    assert err["code"] == "verification_failed" and "exited with status 3 after the fix (0 before it)" in err["reason"]


# ---------------------------------------------------------------- the comparison, by names, counts, exit


def _run(failing=None, counts=None, exit_code=0, error=None, timed_out=False):
    return {
        "shown": "runner",
        "exit_code": exit_code,
        "error": error,
        "timed_out": timed_out,
        "timeout_seconds": 300,
        "counts": counts,
        "failing": failing,
    }


def _counts(passed, failed, runner="unittest"):
    return {"runner": runner, "unit": "tests", "ran": passed + failed, "passed": passed, "failed": failed, "skipped": 0, "errors": 0}


def test_compare_by_names_by_counts_and_by_exit():
    by_names = runs.compare(_run(["t::a", "t::b"]), _run(["t::b", "t::c", "tests/test_bug_x.py::test_1"]), ["tests/test_bug_x.py"])
    assert (by_names["broken"], by_names["already_failing"], by_names["by"]) == (["t::c"], ["t::b"], "names")
    more = runs.compare(_run(None, _counts(5, 1), 1), _run(None, _counts(6, 2), 1), [])
    assert more["by"] == "counts" and "(1 → 2)" in more["reason"] and more["newly_failing"] == 1
    fewer = runs.compare(_run(None, _counts(5, 0)), _run(None, _counts(4, 0)), [])
    assert "fewer tests of the whole suite pass" in fewer["reason"]
    same = runs.compare(_run(None, _counts(5, 1), 1), _run(None, _counts(7, 1), 1), [])
    assert same["reason"] is None
    assert runs.compare(_run(exit_code=0), _run(exit_code=2), [])["reason"].endswith("exited with status 2 after the fix (0 before it)")
    assert runs.compare(_run(exit_code=2), _run(exit_code=2), [])["reason"] is None
    assert "timed out after 300s" in runs.compare(_run(), _run(timed_out=True, exit_code=-9), [])["reason"]
    no_baseline = runs.compare(_run(error="cannot run x"), _run(["t::a"]), [])
    assert no_baseline["broken"] == ["t::a"] and "no run of the suite from before the fix" in no_baseline["reason"]
    assert runs.compare(None, _run(["t::a"]), [])["broken"] == ["t::a"]  # a state kept before baselines existed


def test_failing_tests_are_read_from_pytests_summary_lines():
    out = "\n".join(
        [
            "ERROR    root:x.py:3 a captured log line",
            "=========================== short test summary info ============================",
            "FAILED tests/test_a.py::test_x[a - b] - AssertionError: 1 - 2",
            "\x1b[31mERROR\x1b[0m tests/test_b.py - ImportError: no module",
            "========================= 1 failed, 1 error in 0.10s ==========================",
        ]
    )
    counts = {"runner": "pytest", "unit": "tests", "ran": 2, "passed": 0, "failed": 1, "errors": 1, "skipped": 0}
    assert runs.failing(out, counts) == ["tests/test_a.py::test_x[a - b]", "tests/test_b.py"]
    assert runs.failing("3 passed in 0.1s", {**counts, "failed": 0, "errors": 0}) == []
    assert runs.failing("FAILED (failures=1)", counts) is None  # no names to read: counts decide


# ---------------------------------------------------------------- what a fix cannot get past


def test_a_fix_that_leaves_the_reproduced_test_failing_is_blocked(calc):
    # The report names no test; the reproduction's run does. A plan that fixes nothing (a docstring
    # and two tests that pass anyway) may not end FIXED with the reproduced test "already failing".
    harmless = plan(
        changes=[
            {
                "file_path": "calc.py",
                "change_type": "modify",
                "current_code": '    """Sum of a and b."""\n',
                "proposed_code": '    """The sum of a and b."""\n',
                "explanation": "words only",
            }
        ],
        test_cases=[dict(t, test_code=f"def {t['name']}():\n    assert True\n") for t in FIX_PLAN["test_cases"]],
    )
    calc.ok("init", "add() returns the wrong sum", "--id", "nofix")
    calc.ok("analyze", "nofix")
    calc.record("nofix", "reproduction", dict(REPRODUCTION, reproduction_test="tests/test_calc.py::test_add")).json
    calc.record("nofix", "root-cause", ROOT_CAUSE).json
    calc.record("nofix", "fix-plan", harmless).json
    calc.approve("nofix")
    err = calc.run("fix", "nofix").error
    assert err["code"] == "verification_failed" and calc.phase("nofix") == "blocked"
    assert "tests/test_calc.py::test_add" not in (err.get("already_failing") or [])


@pytest.mark.parametrize("how", ["delete", "skip"])
def test_a_fix_that_makes_a_passing_test_vanish_is_blocked(calc, how):
    extra = (
        {"file_path": "tests/test_first.py", "change_type": "delete", "explanation": "gone"}
        if how == "delete"
        else {
            "file_path": "tests/test_first.py",
            "change_type": "modify",
            "current_code": "def test_first():\n",
            "proposed_code": "import pytest\n\n\n@pytest.mark.skip\ndef test_first():\n",
            "explanation": "skipped",
        }
    )
    _approved(calc, how, plan(changes=BREAKS_SUB["changes"] + [extra]))
    err = calc.run("fix", how).error
    assert err["code"] == "verification_failed" and calc.phase(how) == "blocked", err
    assert err["broken_tests"] == ["tests/test_first.py::test_first"]
    assert "no longer pass (removed, skipped or deselected)" in err["reason"]
