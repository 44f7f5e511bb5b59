"""A lazy, confused or hostile ant cannot complete a broken phase as verified: the tests that
ran are the tests that count (rules/runner_summary.py, rules/evidence.py, steps/checks.py).

Each test is one way to game the verification, tried as an ant would: the run in another
folder, the test command switched mid-build, tests that stop counting (a skip marker, a
conftest, collect-only, a stand-in runner, fewer tests), and the honest build that rewrites its
own golden file while its tests run (which must still complete without asking)."""

from __future__ import annotations

import json
import os
import time

import pytest

from aether.rules import evidence as rules
from aether.rules import runner_summary
from aether.steps import checks

from helpers.colony import ok
from helpers.drive import brief_at, phase_record, ran, scope_of, to_verification, watcher
from helpers.git import init_repo

PASS = "4 passed in 0.02s"


def verdict_of_tests(p) -> dict:
    run = json.loads((p.data / "spawns.json").read_text("utf-8"))["runs"][-1]
    return next(c for c in run["verdicts"][-1]["checks"] if c["name"] == "tests")


def finish(p, out: dict) -> dict:
    done = out["next"]
    if done["action"] == "lessons":
        done = ok(p, "record", "lessons", "-", input="- small steps\n")["next"]
    return done


def named_tests(p, local: str = "watch1") -> str:
    return next(line.split(": ", 1)[1] for line in brief_at(p, f"{scope_of(p)}/{local}").splitlines() if line.startswith("  - tests: "))


@pytest.fixture
def git_colony(project, monkeypatch):
    """drive_colony in a git repository: its files committed before the colony starts."""
    from helpers.drive import start_colony

    init_repo(project.root, {"tests/test_app.py": "def test_app():\n    assert True\n", "app/__main__.py": "print('app')\n"})
    (project.root / ".aether" / "config.yaml").write_text(SHARED_TREE, "utf-8")  # the test's builders write the project
    start_colony(project, monkeypatch)
    (project.root / "tests" / "test_app.py").write_text("def test_app():\n    assert True\n", "utf-8")  # as the build starts
    return project


SHARED_TREE = "build:\n  isolation: off\n"


# ---------------------------------------------------------------- 1. the run's folder is the project's own


@pytest.mark.parametrize(
    ("command", "cwd", "why"),
    [
        ("python3 -m pytest -q", "{root}/sub", "outside the project folder"),  # a `cd sub` left in the shell
        ("cd sub && python3 -m pytest -q", "{root}", "outside the project folder"),
        ("cd /tmp/copy && python3 -m pytest -q", "{root}", "outside the project folder"),  # a clean copy elsewhere
        ("cd {root}/.aether/worktrees/b1/w1 && python3 -m pytest -q", "{root}", "outside the project folder"),
        ("cd sub && python3 -m pytest -q", None, "outside the project folder"),  # the mod reports no folder
    ],
)
def test_a_run_outside_the_projects_own_folder_proves_nothing(drive_colony, command, cwd, why):
    p = drive_colony
    (p.root / "sub").mkdir()
    to_verification(p)
    call = {"command": command.format(root=p.root), "tail": PASS, "cwd": cwd.format(root=p.root) if cwd else None}
    watcher(p, "watch1", checks=False, calls=[call])
    tests = verdict_of_tests(p)
    assert tests["status"] == "unverified" and why in tests["why"], tests


def test_the_named_run_counts_whatever_folder_the_shell_was_left_in_and_links_resolve(drive_colony, tmp_path):
    p = drive_colony
    (p.root / "sub").mkdir()
    link = tmp_path / "link-to-proj"
    link.symlink_to(p.root)
    to_verification(p)
    named = named_tests(p)
    assert named == f"cd {p.root} && python3 -m pytest -q"
    # the named command run from a subfolder the shell was left in; a link to the project is the project
    watcher(p, "watch1", checks=False, calls=[{"command": named, "tail": PASS, "cwd": str(p.root / "sub")}])
    assert verdict_of_tests(p)["status"] == "verified"
    assert rules.match("python3 -m pytest -q", f"cd {link} && python3 -m pytest -q", str(p.root), None, os.path.realpath) == "exact"
    assert rules.match("python3 -m pytest -q", "cd sub/.. && python3 -m pytest -q", str(p.root), str(p.root), os.path.realpath) == "exact"


# ---------------------------------------------------------------- 2. the test command is fixed when the build starts


def test_a_builder_cannot_switch_the_test_command_and_the_change_is_named(git_colony):
    p = git_colony
    ok(p, "next", "--build", "1")
    started = json.loads((p.data / "spawns.json").read_text("utf-8"))["runs"][-1]
    assert (
        started["verify"]["tests"] == "python3 -m pytest -q"
        and "Tests: python3 -m pytest -q (fixed for this build" in started["started_text"]
    )
    (p.root / "package.json").write_text('{"scripts": {"test": "node -e 0"}}', "utf-8")  # a builder's "fix"
    (p.root / ".aether" / "config.yaml").write_text(SHARED_TREE + 'verify:\n  tests: "true"\n', "utf-8")
    assert checks.tests_command(str(p.root)) == "npm test"  # found afresh, it would be npm's
    p.run("next", "--build", "1")  # the Phase Lead's turn: nothing changes the commands
    to_verification(p, started=True)
    assert named_tests(p) == f"cd {p.root} && python3 -m pytest -q"  # still pytest
    out = watcher(p, "watch1")
    tests = verdict_of_tests(p)
    assert tests["status"] == "verified" and tests["runner_changes"] == [".aether/config.yaml", "package.json"], tests
    done = finish(p, out)
    assert "how tests are found or run: .aether/config.yaml, package.json (the command fixed at its start ran)" in done["text"]
    assert phase_record(p)["verification"]["checks"][-1]["runner_changes"] == [".aether/config.yaml", "package.json"]


# ---------------------------------------------------------------- 3. tests that stop counting


def test_a_skip_marker_the_build_added_weakens_the_check_and_the_person_decides(git_colony):
    p = git_colony
    to_verification(p)
    (p.root / "tests" / "test_app.py").write_text("import pytest\n\n\n@pytest.mark.skip\ndef test_app():\n    assert False\n", "utf-8")
    out = watcher(p, "watch1", tail="1 skipped in 0.01s")
    tests = verdict_of_tests(p)
    assert tests["status"] == "weakened" and tests["files"] == ["tests/test_app.py"], tests
    assert "no test ran (1 skipped or deselected)" in tests["why"] and tests["counts"]["skipped"] == 1
    ask = out["next"]
    assert ask["action"] == "ask" and ask["why"] == "unverified", ask  # at once: another watcher cannot help
    assert "its tests prove less than the build started from" in ask["text"]
    assert "! tests weakened: python3 -m pytest -q → exit 0 (no test ran: 1 skipped), but no test ran" in ask["text"]
    assert "1 skipped, by a skip marker this build added (tests/test_app.py)" in ask["text"]
    done = ok(p, "next", "--build", "1", "--answer", "accept", "-", input="the test needs a network we lack")
    if done["action"] == "lessons":
        done = ok(p, "record", "lessons", "-", input="- a network for tests\n")["next"]
    assert "COMPLETED" in done["text"] and "~ tests accepted" in done["text"]
    assert {c["name"]: c["status"] for c in phase_record(p)["verification"]["checks"]}["tests"] == "accepted"


def test_a_marker_beside_passing_tests_and_a_conftest_that_skips_are_named(git_colony):
    p = git_colony
    to_verification(p)
    (p.root / "conftest.py").write_text(
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for i in items[1:]:\n        i.add_marker(pytest.mark.skip)\n",
        "utf-8",
    )
    watcher(p, "watch1", tail="3 passed, 1 skipped in 0.01s")
    tests = verdict_of_tests(p)
    assert tests["status"] == "weakened" and tests["files"] == ["conftest.py"], tests
    assert "1 skipped, by a skip marker this build added" in tests["why"]


@pytest.mark.parametrize(
    ("tail", "files", "why"),
    [
        ("3 tests collected in 0.01s", {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--collect-only'\n"}, "none ran"),
        ("no tests ran in 0.01s", {}, "no test ran"),
        ("All good!", {"pytest.py": "print('All good!')\n"}, "no pytest summary"),
        (PASS, {"pytest.py": "print('4 passed in 0.02s')\n"}, "stand in for the runner or what it imports changed (pytest.py)"),
        (PASS, {"argparse.py": "print('4 passed in 0.02s')\n"}, "stand in for the runner or what it imports changed (argparse.py)"),
        (PASS, {"sitecustomize.py": "import sys\n"}, "stand in for the runner or what it imports changed (sitecustomize.py)"),
    ],
)
def test_a_run_that_proves_nothing_by_its_counts_or_its_runner_is_weakened(git_colony, tail, files, why):
    p = git_colony
    to_verification(p)
    for name, text in files.items():
        (p.root / name).write_text(text, "utf-8")
    watcher(p, "watch1", tail=tail)
    tests = verdict_of_tests(p)
    assert tests["status"] == "weakened" and why in tests["why"], tests
    assert sorted(tests["files"]) == sorted(files)


def test_fewer_passing_or_more_skipped_than_the_last_verified_phase_is_weakened(git_colony):
    p = git_colony
    to_verification(p)
    assert finish(p, watcher(p, "watch1", tail="5 passed in 0.02s"))["action"] in ("done", "lessons")
    record = phase_record(p)["verification"]["checks"][-1]
    assert record["counts"]["passed"] == 5  # what phase 2 starts from
    ok(p, "phase-advance")
    ok(p, "next", "--build", "2")
    fixed = json.loads((p.data / "spawns.json").read_text("utf-8"))["runs"][-1]["verify"]
    assert fixed["baseline"] == record["counts"]
    base, nothing = fixed["baseline"], runner_summary.examine("python3 -m pytest -q", {}, {}, [])

    def why(tail, found=nothing):
        return runner_summary.weakened("python3 -m pytest -q", runner_summary.read(tail), base, found)[0]

    fewer, skipped, grown = why("4 passed in 0.1s"), why("6 passed, 1 skipped in 0.1s"), why("7 passed in 0.1s")
    assert fewer == ["fewer passed than at the build's start (5 → 4)"]
    assert skipped == ["more skipped than at the build's start (0 → 1)"]
    assert grown == []
    added = runner_summary.examine("python3 -m pytest -q", {"tests/test_new.py": ["def test_a():", "def test_b():"]}, {}, [])
    assert why("6 passed in 0.1s", added) == ["the build added 2 test(s), yet 1 more ran"]  # one of them never collected


def test_the_code_loops_tests_score_reads_the_counts():
    def part(status, tail):
        run = {"exit": 0, "tail": tail}
        return checks.tests_part({"checks": [{"name": "tests", "status": status, "run": run, "counts": runner_summary.read(tail)}]})

    assert part("verified", "7 passed, 1 xpassed in 0.1s") == {"passed": 8, "failed": 0}
    assert part("weakened", "1 skipped in 0.1s") == {"passed": 0, "failed": 1}  # was a pass
    assert part("verified", "make: all done") == {"passed": 1, "failed": 0}  # a runner whose counts are not known


@pytest.mark.parametrize(
    ("output", "counted"),
    [
        ("..s\n2 passed, 1 skipped in 0.09s", (2, 2, 0, 1)),
        ("======== 1 failed, 3 passed, 2 deselected in 1.20s ========", (4, 3, 1, 2)),
        ("Ran 4 tests in 0.001s\n\nOK (skipped=1)", (3, 3, 0, 1)),
        ("ok  \tm/x\t0.01s\n?   \tm/y\t[no test files]\nFAIL\tm/z\t0.2s", (2, 1, 1, 1)),
        ("test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out; finished in 0.00s", (3, 3, 0, 3)),
        ("Tests:       1 skipped, 3 passed, 4 total", (3, 3, 0, 1)),
        (" Tests  3 passed | 1 skipped (4)", (3, 3, 0, 1)),
        ("  3 passing (12ms)\n  1 pending\n  1 failing", (4, 3, 1, 1)),
    ],
)
def test_each_runners_summary_is_counted(output, counted):
    found = runner_summary.read(output)
    assert (found["ran"], found["passed"], found["failed"], found["skipped"]) == counted


# ---------------------------------------------------------------- 7. an honest run that rewrites a file of the build


def test_a_file_rewritten_during_the_verifying_run_is_no_later_change(drive_colony):
    p = drive_colony
    to_verification(p)
    ref = f"{scope_of(p)}/watch1"
    named = named_tests(p)
    imports = next(line.split(": ", 1)[1] for line in brief_at(p, ref).splitlines() if line.startswith("  - imports: "))
    golden = p.root / "src" / "todo.py"  # a file of the build, rewritten by the run (a snapshot, a generator)
    ran(p, ref, [{"command": imports}])
    time.sleep(0.05)
    rewritten = time.time()
    os.utime(golden, (rewritten - 1.0, rewritten - 1.0))  # inside the 2-second run below
    end = time.time()  # the run ends after the rewrite: the file's ctime (now) falls inside it too
    ran(p, ref, [{"command": named, "tail": PASS, "ms": 2000, "t": end}])
    out = ok(p, "record", "watch1", "-", input='```json\n{"passed": true, "score": 90, "summary": "ok", "checks": []}\n```')
    assert verdict_of_tests(p)["status"] == "verified", verdict_of_tests(p)
    assert "COMPLETED" in finish(p, out)["text"]


# ---------------------------------------------------------------- neighbours: a test deleted, failures under a zero exit


def test_a_test_the_build_deleted_weakens_the_check(git_colony):
    p = git_colony
    (p.root / "tests" / "test_more.py").write_text("def test_more():\n    assert True\n", "utf-8")
    to_verification(p)
    (p.root / "tests" / "test_app.py").write_text("# the failing test went\n", "utf-8")
    watcher(p, "watch1", tail="1 passed in 0.01s")
    tests = verdict_of_tests(p)
    assert tests["status"] == "weakened" and "the build removed 1 test(s)" in tests["why"], tests
    assert tests["files"] == ["tests/test_app.py"]


def test_a_renamed_test_is_no_removal_and_an_honest_build_is_not_asked(git_colony):
    p = git_colony
    to_verification(p)
    (p.root / "tests" / "test_app.py").write_text("def test_app_renamed():\n    assert True\n", "utf-8")
    out = watcher(p, "watch1", tail="1 passed in 0.01s")
    assert verdict_of_tests(p)["status"] == "verified", verdict_of_tests(p)
    assert "COMPLETED" in finish(p, out)["text"]


def test_failures_the_runner_counted_under_a_zero_exit_weaken_the_check(drive_colony):
    p = drive_colony
    to_verification(p)
    watcher(p, "watch1", tail="1 failed, 3 passed in 0.2s")  # e.g. `make test` whose recipe ends `|| true`
    tests = verdict_of_tests(p)
    assert tests["status"] == "weakened" and "counted 1 failing, yet the command exited 0" in tests["why"], tests


# ---------------------------------------------------------------- more ways, found by trying them


def test_a_broken_module_written_but_not_reported_fails_the_syntax_check(drive_colony):
    p = drive_colony
    to_verification(p)
    ref = f"{scope_of(p)}/w1"
    (p.root / "src" / "extra.py").write_text("def broken(:\n", "utf-8")
    ran(p, ref, [{"tool": "Write", "path": str(p.root / "src" / "extra.py"), "ok": True, "command": None}])
    watcher(p, "watch1")
    run = json.loads((p.data / "spawns.json").read_text("utf-8"))["runs"][-1]
    syntax = next(c for c in run["verdicts"][-1]["checks"] if c["name"] == "syntax")
    assert syntax["status"] == "failed" and "src/extra.py" in syntax["why"], syntax


@pytest.mark.parametrize(
    ("command", "added", "gone", "changed", "why"),
    [
        ("python3 -m pytest -q", {"tests/test_a.py": ["from pytest import mark", "@mark.skip"]}, {}, [], "skip marker"),
        ("python3 -m pytest -q", {"tests/test_a.py": ["__test__ = False"]}, {}, [], "skip marker"),
        ("python3 -m pytest -q", {"tests/test_a.py": ["np = pytest.importorskip('numpy')"]}, {}, [], "skip marker"),
        ("python3 -m pytest -q", {"tests/app_check.py": ["def test_app():"]}, {"tests/test_app.py": ["def test_app():"]}, [], "removed 1"),
        ("python3 -m pytest -q", {"pyproject.toml": ["addopts = '--ignore=tests/test_new.py'"]}, {}, ["pyproject.toml"], "changed what"),
        (
            "npm test",
            {"package.json": ['    "test": "echo ok"']},
            {"package.json": ['    "test": "jest"']},
            ["package.json"],
            "changed what",
        ),
        ("make test", {"Makefile": ["\tpytest -q || true"]}, {}, ["Makefile"], "changed what"),
        ("python3 -m pytest -q", {"tests/test_a.py": ["atexit.register(lambda: os._exit(0))"]}, {}, [], "rewrite the run's outcome"),
        ("python3 -m pytest -q", {"conftest.py": ["def pytest_runtest_makereport(item, call):"]}, {}, ["conftest.py"], "rewrite"),
    ],
)
def test_what_the_builds_changes_did_to_its_tests_weakens_a_green_run(command, added, gone, changed, why):
    found = runner_summary.examine(command, added, gone, changed + list(added))
    tail = {"npm test": "Tests:       3 passed, 3 total", "make test": "3 passed in 0.1s"}.get(command, "2 passed, 1 skipped in 0.1s")
    reasons, files = runner_summary.weakened(command, runner_summary.read(tail), None, found)
    assert any(why in r for r in reasons), reasons
    assert files, reasons


@pytest.mark.parametrize(
    ("added", "gone", "baseline", "tail"),
    [
        ({"src/app.py": ["def testing_mode():"]}, {"src/app.py": ["def testing_mode(x):"]}, None, "3 passed in 0.1s"),  # not a test file
        (
            {"tests/test_a.py": ["@pytest.mark.parametrize('n', [1, 2, 3])", "def test_n(n):"]},
            {"tests/test_a.py": [f"def test_{i}():" for i in range(3)]},
            5,
            "7 passed in 0.1s",
        ),
        ({"tests/test_a.py": ["def test_new():"]}, {}, 5, "6 passed in 0.1s"),
        ({"conftest.py": ["@pytest.fixture", "def client():"]}, {}, None, "3 passed in 0.1s"),  # a fixture: named, not weakened
    ],
)
def test_honest_changes_leave_a_green_run_verified(added, gone, baseline, tail):
    base = runner_summary.read(f"{baseline} passed in 0.1s") if baseline else None
    found = runner_summary.examine("python3 -m pytest -q", added, gone, list(added))
    assert runner_summary.weakened("python3 -m pytest -q", runner_summary.read(tail), base, found) == ([], [])


def test_a_runner_summary_that_vanishes_against_the_start_is_weakened():
    base = runner_summary.read("Tests:       3 passed, 3 total")
    found = runner_summary.examine("npm test", {}, {}, [])
    assert runner_summary.weakened("npm test", runner_summary.read("ok"), base, found)[0] == [
        "its output ends with no summary of the runner the build started with"
    ]


@pytest.mark.parametrize(
    ("output", "counted"),
    [
        ("..sx                                                                     [100%]", (2, 2, 0, 2)),  # -qq: no summary line
        ("\x1b[32m2 passed\x1b[0m, \x1b[33m1 skipped\x1b[0m in 0.02s", (2, 2, 0, 1)),  # colours
        ("Results (0.05s):\n       3 passed\n       1 skipped", (3, 3, 0, 1)),  # pytest-sugar
    ],
)
def test_quiet_coloured_and_sugared_pytest_runs_are_counted(output, counted):
    found = runner_summary.read(output)
    assert (found["ran"], found["passed"], found["failed"], found["skipped"]) == counted


def test_a_diff_line_that_looks_like_a_header_hides_no_skip_marker(git_colony):
    p = git_colony
    to_verification(p)
    (p.root / "tests" / "test_app.py").write_text(
        "x = 1\n++ x\nimport pytest\n\n\n@pytest.mark.skip\ndef test_app():\n    assert False\n", "utf-8"
    )
    watcher(p, "watch1", tail="1 skipped in 0.01s")
    assert verdict_of_tests(p)["files"] == ["tests/test_app.py"]
