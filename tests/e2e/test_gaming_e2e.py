"""Evidence a lazy ant cannot fool, in real Claude Code (scripted ants, real commands, real pytest):

- under both runtimes: a watcher runs the tests green in a subfolder (`cd sub && …`) and claims
  a pass → unverified (not the project's folder); the next watcher runs what its brief names
  (with its `cd <project>`) and the real failure fails the phase;
- under both runtimes: a builder adds a `package.json` whose test script always passes and a
  skip marker on the test its change broke → the watcher is still told pytest (fixed when the
  build started), pytest says `1 skipped`, and the check is weakened: the build stops for the
  person, naming the test file and the package.json;
- a builder's `conftest.py` that skips every test → weakened, naming the conftest.
"""

from __future__ import annotations

import json

import pytest

from .colony_script import CALCULATOR, driven_queen, is_ref, json_block, named_checks, runs_checks, with_tests, worker_result
from .fake_api import bash, say, subagent, tool, tool_result_contains, turn
from .harness import NOW, aether_ok, state

pytestmark = pytest.mark.e2e

PLAN = CALCULATOR
ASSIGNMENT = {"phase": 1, "workers": [{"id": "adder", "caste": "builder", "tasks": ["1.1"], "writes": ["calc.py", "tests/test_calc.py"]}]}
BROKEN = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
SKIPPED = "import pytest\n\nfrom calc import add\n\n\n@pytest.mark.skip(reason='flaky')\ndef test_add():\n    assert add(1, 2) == 3\n"
SKIP_ALL = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.skip)\n"
)
CLAIMS_A_PASS = json_block(
    {"passed": True, "score": 96, "summary": "all checks pass", "checks": [{"name": "tests", "passed": True, "detail": "green"}]}
)


def _ready(claude):
    with_tests(claude.project)  # the project's own test, green: pytest is its test command from the start
    aether_ok(claude, "colony-init", "-", input=PLAN["goal"])
    aether_ok(claude, "plan-load", "-", input=json.dumps(PLAN))
    aether_ok(claude, "next", "--build", "1")
    aether_ok(claude, "record", "lead1", "-", input=json_block(ASSIGNMENT))


def _builder(project, files: dict) -> list:
    """The builder writes each file, then answers (without running anything)."""
    steps = [
        subagent("ant:builder", is_ref("w1"), turn(n)).reply(tool("Write", file_path=f"{project}/{name}", content=text))
        for n, (name, text) in enumerate(files.items(), start=1)
    ]
    done = worker_result("add() with its test", created=list(files))
    return [*steps, subagent("ant:builder", is_ref("w1"), turn(len(files) + 1)).reply(say(done))]


def _verdicts(claude) -> list:
    return [{c["name"]: c for c in v["checks"]} for v in state(claude, "spawns.json")["runs"][-1]["verdicts"]]


def test_a_green_run_in_a_subfolder_proves_nothing_and_the_real_run_fails_the_phase(runtime_claude):
    claude = runtime_claude
    project = claude.project
    (project / "sub").mkdir()
    (project / "sub" / "test_other.py").write_text("def test_other():\n    assert True\n", "utf-8")
    _ready(claude)
    ants = [
        *_builder(project, {"calc.py": BROKEN, "tests/test_calc.py": TEST}),
        subagent("ant:watcher", is_ref("watch1"), turn(1)).reply(bash("cd sub && python3 -m pytest -q")),
        subagent("ant:watcher", is_ref("watch1"), turn(2), tool_result_contains("1 passed")).reply(say(CLAIMS_A_PASS)),
        subagent("ant:watcher", is_ref("watch2"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", is_ref("watch2"), turn(2), tool_result_contains("1 failed")).reply(say(CLAIMS_A_PASS)),
    ]
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 5) + ants, env=NOW, timeout=300)

    assert run.permission_denials == []
    first, second = _verdicts(claude)
    assert first["tests"]["status"] == "unverified", first["tests"]
    assert "outside the project folder" in first["tests"]["why"]
    assert second["tests"]["status"] == "contradicted" and second["tests"]["counts"]["failed"] == 1, second["tests"]
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "failed"
    if claude.runtime == "mod":  # the fixture project is in no git repository: the safety nets it goes without, said
        assert "aether: ⚠ no checkpoint · builders share one tree (not a git repository)" in run.stderr, run.stderr


def test_a_switched_test_command_and_a_skip_marker_cannot_verify_a_broken_phase(runtime_claude):
    claude = runtime_claude
    project = claude.project
    _ready(claude)
    files = {"calc.py": BROKEN, "tests/test_calc.py": SKIPPED, "package.json": '{"scripts": {"test": "node -e 0"}}'}
    ants = [
        *_builder(project, files),
        subagent("ant:watcher", is_ref("watch1"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", is_ref("watch1"), turn(2), tool_result_contains("1 skipped")).reply(say(CLAIMS_A_PASS)),
    ]
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 4) + ants, env=NOW, timeout=300)

    assert run.permission_denials == []
    watch = next(r for r in run.api.requests if r.thread != "main" and "You are the watcher" in r.first_user_text)
    assert [c for c in named_checks(watch) if c.endswith(("pytest -q", "npm test"))] == [f"cd {project} && python3 -m pytest -q"]
    (verdict,) = _verdicts(claude)
    tests = verdict["tests"]
    assert tests["status"] == "weakened" and "tests/test_calc.py" in tests["files"], tests
    assert "package.json" in tests["runner_changes"] and (tests["counts"]["passed"], tests["counts"]["skipped"]) == (1, 1)
    assert aether_ok(claude, "next")["why"] == "unverified"  # the person decides
    assert "! tests weakened" in run.text and "package.json" in run.text, run.text
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "in_progress"


def test_a_conftest_that_skips_every_test_weakens_the_check(claude):
    project = claude.project
    _ready(claude)
    ants = [
        *_builder(project, {"calc.py": BROKEN, "tests/test_calc.py": TEST, "conftest.py": SKIP_ALL}),
        subagent("ant:watcher", is_ref("watch1"), turn(1)).reply(runs_checks),
        subagent("ant:watcher", is_ref("watch1"), turn(2), tool_result_contains("2 skipped")).reply(say(CLAIMS_A_PASS)),
    ]
    run = claude.run("/ant:build 1 --approve", driven_queen(claude, 4) + ants, env=NOW, timeout=300)

    assert run.permission_denials == []
    (verdict,) = _verdicts(claude)
    assert verdict["tests"]["status"] == "weakened" and verdict["tests"]["files"] == ["conftest.py"], verdict["tests"]
    assert "conftest.py" in run.text


def test_an_ants_shell_starts_every_call_in_the_project_folder(runtime_claude):
    """What the verdicts rely on where Claude Code reports no folder (the mod's calls): a `cd`
    an ant made is gone at its next call — each Bash call of a subagent starts in the project's
    folder. Should a release keep an ant's `cd` between calls, this fails."""
    claude = runtime_claude
    project = claude.project
    (project / "sub").mkdir()
    _ready(claude)
    ants = [
        *_builder(project, {"calc.py": BROKEN}),
        subagent("ant:watcher", is_ref("watch1"), turn(1)).reply(bash("cd sub")),
        subagent("ant:watcher", is_ref("watch1"), turn(2)).reply(bash("pwd")),
        subagent("ant:watcher", is_ref("watch1"), turn(3), tool_result_contains(str(project))).reply(say(CLAIMS_A_PASS)),
        subagent("ant:watcher", is_ref("watch2"), turn(1)).reply(say(CLAIMS_A_PASS)),
    ]
    claude.run("/ant:build 1 --approve", driven_queen(claude, 4) + ants, env=NOW, timeout=300, check=False)
    calls = aether_ok(claude, "evidence", "watch1", "--json")["calls"]
    pwd = next(c for c in calls if c.get("command") == "pwd")
    assert pwd["tail"].strip() == str(project), pwd
