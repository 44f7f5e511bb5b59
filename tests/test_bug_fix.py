"""`bug fix` on fixture projects: real pytest with the project's interpreter, BLOCKED with a
rollback, refusals that change nothing, dry runs, interruptions and concurrent commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aether.bugs import fixer

from helpers.bugs import CALC, FIX_PLAN, failing_plan, plan, set_config, tree


def _use_venv(bugs, project_venv):
    os.symlink(project_venv, bugs.p.root / ".venv")


def test_happy_path_runs_pytest_with_the_projects_interpreter(bugs, project_venv):
    _use_venv(bugs, project_venv)
    bugs.drive("h", "approved")
    out = bugs.ok("fix", "h")
    assert out["phase"] == "FIXED"
    assert "return a + b" in (bugs.p.root / "calc.py").read_text()
    test_file = bugs.p.root / "tests" / "test_bug_h.py"
    assert test_file.read_text().startswith("# aether bug h: regression tests")
    impl = bugs.state("h")["implementation"]
    assert impl["test_command"][0] == str(bugs.p.root / ".venv" / "bin" / "python")
    assert impl["test_command"][0] != sys.executable
    # the two new tests and the bug's own failing test, all passing now
    assert sorted(t["name"] for t in impl["tests"]) == ["test_add", "test_add_negative", "test_add_positive"]
    assert (impl["tests_passed"], impl["tests_failed"], impl["success"]) == (3, 0, True)
    assert [(t["from_phase"], t["to_phase"]) for t in bugs.state("h")["transitions"][-3:]] == [
        ("approved", "implementing"),
        ("implementing", "verifying"),
        ("verifying", "fixed"),
    ]
    assert "✓ Bug fixed!" in out["text"] and "✓ Modified: calc.py" in out["text"]
    assert "passed" in (bugs.p.root / ".aether/bugs/h/verification.log").read_text()


def test_failing_test_blocks_with_the_rollback_command(bugs, project_venv):
    _use_venv(bugs, project_venv)
    bugs.drive("b", "approved", fix_plan=failing_plan())
    result = bugs.run("fix", "b")
    err = result.error
    assert result.code == 4 and err["code"] == "verification_failed"
    assert err["rollback"] == "aether bug rollback b"
    assert "aether bug rollback b" in err["error"] and "Bug marked as BLOCKED." in err["text"]
    state = bugs.state("b")
    assert state["phase"] == "blocked"
    assert state["blocked_reason"] == "Verification failed - 1 of 3 tests failed"
    assert state["implementation"]["tests_failed"] == 1
    # the changes stay applied until rolled back; rollback puts every file back
    assert "return a + b" in (bugs.p.root / "calc.py").read_text()
    out = bugs.ok("rollback", "b")
    assert sorted(out["restored"]) == ["calc.py", "tests/test_bug_b.py"]
    assert (bugs.p.root / "calc.py").read_text() == CALC
    assert not (bugs.p.root / "tests" / "test_bug_b.py").exists()
    assert bugs.run("rollback", "b").error["code"] == "nothing_to_roll_back"


def test_rollback_refuses_to_lose_later_edits(bugs):
    bugs.drive("b", "blocked")
    (bugs.p.root / "calc.py").write_text(CALC + "# my edit\n")
    err = bugs.run("rollback", "b").error
    assert err["code"] == "rollback_conflict" and err["files"] == ["calc.py"]
    assert (bugs.p.root / "calc.py").read_text().endswith("# my edit\n")
    bugs.ok("rollback", "b", "--force")
    assert (bugs.p.root / "calc.py").read_text() == CALC


def test_git_rollback_hint_in_a_git_project(bugs):
    subprocess.run(["git", "init", "-q"], cwd=bugs.p.root, check=True)
    bugs.drive(
        "b",
        "approved",
        fix_plan=plan(
            changes=FIX_PLAN["changes"]
            + [{"file_path": "new.py", "change_type": "create", "proposed_code": "X = 1\n", "explanation": "new"}]
        ),
    )
    set_config(bugs.p, test_command="false")
    err = bugs.run("fix", "b").error
    assert err["git_rollback"] == "git checkout -- calc.py && rm -f -- new.py tests/test_bug_b.py"


def test_verification_timeout_blocks(bugs):
    bugs.drive("t", "approved")
    set_config(bugs.p, test_command=[sys.executable, "-c", "import time; time.sleep(30)"], verification_timeout_seconds=1)
    err = bugs.run("fix", "t").error
    assert err["code"] == "verification_failed"
    assert bugs.state("t")["blocked_reason"] == "Verification timed out after 1s"


def test_current_code_not_found_refused_with_nothing_changed(bugs):
    bugs.drive("n", "approved")
    (bugs.p.root / "calc.py").write_text(CALC.replace('"""Sum of a and b."""', '"""Sum."""'))
    before_tree, before_state = tree(bugs.p.root), bugs.state("n")
    result = bugs.run("fix", "n")
    err = result.error
    assert result.code == 3 and err["code"] == "implementation_failed"
    assert any("current_code is not found" in d for d in err["defects"])
    assert tree(bugs.p.root) == before_tree
    assert bugs.state("n") == before_state  # still APPROVED


def test_path_escape_at_fix_time_refused(bugs, tmp_path):
    (bugs.p.root / "vendor").mkdir()
    doc = plan(changes=[{"file_path": "vendor/x.py", "change_type": "create", "proposed_code": "X = 1\n", "explanation": "x"}])
    bugs.drive("e", "approved", fix_plan=doc)
    (bugs.p.root / "vendor").rmdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, bugs.p.root / "vendor")  # swapped for a link out after approval
    before = tree(bugs.p.root)
    err = bugs.run("fix", "e").error
    assert err["code"] == "implementation_failed"
    assert any("leads outside the project through a symbolic link" in d for d in err["defects"])
    assert list(outside.iterdir()) == [] and tree(bugs.p.root) == before
    assert bugs.phase("e") == "approved"


@pytest.mark.parametrize(
    "path,problem",
    [
        ("../x.py", "contains `..`"),
        ("a/../../x.py", "contains `..`"),
        ("/etc/passwd", "is an absolute path"),
        ("~/x.py", "is an absolute path"),
        (".git/config", "is inside .git/"),
        (".aether/bugs/x/state.json", "is inside .aether/"),
        ("", "is empty"),
        (".", "names the project root"),
    ],
)
def test_resolve_refuses_escapes(tmp_path, path, problem):
    rel, why = fixer.resolve(str(tmp_path), path)
    assert rel is None and problem in why


def test_dry_run_changes_nothing(bugs):
    bugs.drive("d", "planned")
    bugs_dir = bugs.p.root / ".aether" / "bugs"

    def snapshot():
        return tree(bugs.p.root), {str(p): p.read_bytes() for p in bugs_dir.rglob("*") if p.is_file()}

    before = snapshot()
    out = bugs.ok("fix", "d", "--dry-run")  # a preview is allowed before approval
    assert snapshot() == before
    calc = next(c for c in out["changes"] if c["path"] == "calc.py")
    assert "-    return a - b\n" in calc["diff"] and "+    return a + b\n" in calc["diff"]
    test = next(c for c in out["changes"] if c["test"])
    assert test["path"] == "tests/test_bug_d.py" and "--- /dev/null" in test["diff"]
    assert out["text"].endswith("No changes applied. Run without --dry-run to apply.")
    bugs.approve("d")
    before = snapshot()
    bugs.ok("fix", "d", "--dry-run")
    assert snapshot() == before and bugs.phase("d") == "approved"


def test_dry_run_refused_before_planning(bugs):
    bugs.drive("d", "analyzing")
    assert bugs.run("fix", "d", "--dry-run").error["code"] == "invalid_phase"


def test_failure_half_way_restores_every_file(bugs, monkeypatch):
    doc = plan(
        changes=FIX_PLAN["changes"]
        + [{"file_path": "pkg/deep/new.py", "change_type": "create", "proposed_code": "X = 1\n", "explanation": "new module"}]
    )
    bugs.drive("w", "approved", fix_plan=doc)
    before = tree(bugs.p.root)
    real_write = fixer._write
    calls = []

    def flaky(full, text, mode):
        calls.append(full)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", full)
        real_write(full, text, mode)

    monkeypatch.setattr(fixer, "_write", flaky)
    err = bugs.run("fix", "w").error
    assert err["code"] == "implementation_failed" and err["restored"] is True
    assert tree(bugs.p.root) == before
    assert not (bugs.p.root / "pkg").exists()
    state = bugs.state("w")
    assert state["phase"] == "implementing" and "No space left" in state["implementation"]["error"]
    monkeypatch.setattr(fixer, "_write", real_write)
    set_config(bugs.p, test_command="true")
    assert bugs.ok("fix", "w")["phase"] == "FIXED"  # the interrupted fix resumes
    assert (bugs.p.root / "pkg" / "deep" / "new.py").read_text() == "X = 1\n"


def test_crash_mid_apply_is_undone_on_resume(bugs, monkeypatch):
    bugs.drive("k", "implementing", monkeypatch=monkeypatch)
    # the crash happened after calc.py was written: the resume puts it back and re-applies
    (bugs.p.root / "calc.py").write_text(CALC.replace("return a - b\n", "return a + b\n", 1))
    assert bugs.ok("fix", "k")["phase"] == "FIXED"
    assert (bugs.p.root / "calc.py").read_text().count("return a + b") == 1


def test_project_python_never_the_helpers(tmp_path, monkeypatch):
    helper_bin = os.path.dirname(sys.executable)
    monkeypatch.setenv("PATH", helper_bin)
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    found = fixer.project_python(str(tmp_path))
    assert found is None or not os.path.realpath(found).startswith(os.path.realpath(sys.prefix))
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    py = tmp_path / ".venv" / "bin" / "python"
    py.write_text("#!/bin/sh\n")
    py.chmod(0o755)
    assert fixer.project_python(str(tmp_path)) == str(py)


def test_no_interpreter_blocks_with_a_clear_reason(bugs, monkeypatch):
    bugs.drive("i", "approved")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert fixer.project_python(str(bugs.p.root)) is None
    err = bugs.run("fix", "i").error
    assert err["code"] == "verification_failed"
    assert "set bug_bash.test_command" in bugs.state("i")["blocked_reason"]


@pytest.mark.slow
def test_concurrent_commands_never_corrupt_the_state(bugs):
    bugs.drive("c", "approved")
    set_config(bugs.p, test_command=[sys.executable, "-c", "import time; time.sleep(0.5)"])
    procs = []
    from conftest import LAUNCHER

    def start(*args):
        return subprocess.Popen([str(LAUNCHER), "bug", *args], cwd=bugs.p.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    for _ in range(2):
        procs.append(("fix", start("fix", "c")))
    for n in range(8):
        procs.append(("cost", start("cost", "c", "--agent", f"a{n}", "--input-tokens", "1000", "--output-tokens", "100")))
    for _ in range(3):
        procs.append(("status", start("status", "c", "--json")))
        procs.append(("approve", start("approve", "c")))
    codes = {}
    for kind, proc in procs:
        out, err = proc.communicate(timeout=120)
        codes.setdefault(kind, []).append(proc.returncode)
        if proc.returncode:
            env = json.loads(err.decode().strip().splitlines()[-1])
            assert env["ok"] is False and env["code"]
    assert sorted(codes["fix"]) in ([0, 2], [0, 5])
    assert codes["cost"] == [0] * 8
    assert set(codes["approve"]) == {2}  # never by a command
    assert set(codes["status"]) == {0}
    state = bugs.state("c")  # parses, and the CLI reads it as valid
    assert bugs.ok("status", "c", "--json")["phase"] == "FIXED"
    assert sorted(c["agent_name"] for c in state["costs"]) == [f"a{n}" for n in range(8)]
    logged = [{k: v for k, v in r.items() if k != "bug_id"} for r in bugs.history("c")]
    assert logged == state["transitions"]
    assert (bugs.p.root / "calc.py").read_text().count("return a + b") == 1
