"""Evidence, not claims: what each ant ran and wrote (kept by hooks/evidence.sh or the mod)
decides a phase's checks, its failures' errors and its builders' claims."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from aether.rules import evidence as rules
from aether.state import evidence
from aether.steps import checks

from helpers.colony import ok, write
from helpers.drive import (
    WATCHER_SAYS_PASS,
    approved_wave,
    brief_at,
    named_checks,
    phase_record,
    ran,
    ran_checks,
    result,
    scope_of,
    to_verification,
    watcher,
)

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "evidence"


def errors(p) -> list:
    return [e["description"] for e in json.loads((p.data / "errors.json").read_text("utf-8"))["errors"]]


# ---------------------------------------------------------------- honest and lying watchers


def test_an_honest_watcher_completes_the_phase_and_the_record_says_how(drive_colony):
    p = drive_colony
    action = to_verification(p)
    brief = brief_at(p, f"{scope_of(p)}/watch1")
    named = named_checks(brief)
    assert named == {  # each in the project's own folder, whatever folder the shell was left in
        "imports": f"cd {p.root} && python3 -c \"import sys; sys.path.insert(0, 'src'); import api, cli, todo\"",
        "tests": f"cd {p.root} && python3 -m pytest -q",
    }
    assert action["spawns"][0]["subagent_type"] == "ant:watcher"
    out = watcher(p, "watch1")
    assert "syntax verified, imports verified, tests verified" in out["line"]
    done = out["next"] if out["next"]["action"] == "done" else ok(p, "record", "lessons", "-", input="- small steps\n")["next"]
    assert "COMPLETED" in done["text"] and "Verified by what ran:" in done["text"]
    assert "✓ tests: python3 -m pytest -q → exit 0 (4 ran: 4 passed), " in done["text"]
    proof = phase_record(p)["verification"]
    assert proof["passed"] is True and [(c["name"], c["status"], c["exit"]) for c in proof["checks"]] == [
        ("syntax", "verified", None),
        ("imports", "verified", 0),
        ("tests", "verified", 0),
    ]
    status = p.run("status").stdout
    assert "VERIFIED BY WHAT RAN" in status and "Phase 1: every check proven" in status
    listing = p.run("evidence", "watch1").stdout
    assert "&& python3 -m pytest -q → exit 0" in listing


def test_a_pass_never_run_gets_one_more_watcher_then_stops_for_the_persons_word(drive_colony):
    p = drive_colony
    to_verification(p)
    first = watcher(p, "watch1", checks=False)  # says every check passed; ran nothing
    assert "tests unverified" in first["line"] and "imports unverified" in first["line"]
    again = first["next"]
    assert [s["id"] for s in again["spawns"]] == ["watch2"]
    brief = brief_at(p, f"{scope_of(p)}/watch2")
    assert "The last verification left these unverified" in brief and "  · tests (never ran)" in brief
    stop = watcher(p, "watch2", checks=False)["next"]
    assert stop["action"] == "ask" and stop["why"] == "unverified" and stop["command"] == "/ant:build 1 --answer accept <why>"
    assert "Phase 1 cannot complete" in stop["text"] and "? tests unverified: `python3 -m pytest -q` never ran" in stop["text"]
    assert "/ant:build 1 --answer accept <why>" in stop["text"] and "/ant:build 1 --answer refine <words>" in stop["text"]
    assert ok(p, "next")["why"] == "unverified"  # asked again: the same stop
    # another watcher on the person's word, then their acceptance, recorded with the phase
    more = ok(p, "next", "--build", "1", "--answer", "refine", "-", input="verify again")
    assert [s["id"] for s in more["spawns"]] == ["watch3"]
    assert watcher(p, "watch3", checks=False)["next"]["why"] == "unverified"
    done = ok(p, "next", "--build", "1", "--answer", "accept", "-", input="tests need a database we don't have here")
    if done["action"] == "lessons":
        done = ok(p, "record", "lessons", "-", input="- a database for tests\n")["next"]
    assert "COMPLETED" in done["text"] and "~ tests accepted" in done["text"]
    proof = phase_record(p)["verification"]
    assert proof["accepted"]["why"] == "tests need a database we don't have here" and proof["accepted"]["checks"] == ["imports", "tests"]
    assert {c["name"]: c["status"] for c in proof["checks"]} == {"syntax": "verified", "imports": "accepted", "tests": "accepted"}


def test_a_watcher_that_saw_the_tests_fail_and_claims_a_pass_is_contradicted(drive_colony):
    p = drive_colony
    to_verification(p)
    tail = "tests/test_app.py F\nE   AssertionError: assert 2 == 3\n1 failed, 3 passed in 0.1s"
    out = watcher(p, "watch1", checks=False, calls=[{"command": "python3 -m pytest -q", "exit": 1, "tail": tail}])
    assert "tests contradicted" in out["line"]
    done = out["next"]
    assert (
        "FAILED" in done["text"] and "✗ tests contradicted: python3 -m pytest -q → exit 1, yet the watcher claimed a pass" in done["text"]
    )
    assert "E   AssertionError: assert 2 == 3" in done["text"]
    assert any("tests contradicted: `python3 -m pytest -q` exited 1 while the watcher claimed a pass" in e for e in errors(p))
    assert phase_record(p)["status"] == "failed"


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ({"command": "python3 -m pytest -q | tail -3"}, "ran piped"),
        ({"command": "cd .aether/worktrees/b1/w1 && python3 -m pytest -q"}, "outside the project folder"),
        ({"command": "python3 -m pytest -q", "cwd": "/elsewhere/.aether/worktrees/b1/w1"}, "outside the project folder"),
        ({"command": "python3 -m pytest -q", "t": 1000.0}, "ran before the build's last change"),
        ({"command": "python3 -m pytest -q", "exit": None}, "exit status is unknown"),
    ],
)
def test_a_run_that_proves_nothing_leaves_the_check_unverified(drive_colony, call, why):
    p = drive_colony
    to_verification(p)
    out = watcher(p, "watch1", checks=False, calls=[call])
    run = json.loads((p.data / "spawns.json").read_text("utf-8"))["runs"][-1]
    tests = next(c for c in run["verdicts"][-1]["checks"] if c["name"] == "tests")
    assert tests["status"] == "unverified" and why in tests["why"], tests
    assert [s["id"] for s in out["next"]["spawns"]] == ["watch2"]


def test_a_change_after_the_last_green_run_needs_a_new_run(drive_colony):
    p = drive_colony
    to_verification(p)
    ref = f"{scope_of(p)}/watch1"
    ran_checks(p, ref, brief_at(p, ref))
    time.sleep(0.05)
    (p.root / "src" / "todo.py").write_text("broken = (\n", "utf-8")  # a file of the build changed after the run
    out = ok(p, "record", "watch1", "-", input=WATCHER_SAYS_PASS)
    assert "tests unverified" in out["line"] and "syntax failed" in out["line"]
    done = out["next"]
    assert done["action"] in ("done", "lessons") or done["action"] == "spawn"  # syntax failed: nothing to re-verify
    assert done["action"] != "spawn" and "FAILED" in ok(p, "next")["text"]


# ---------------------------------------------------------------- failures from the real output


def failing(p, local: str, words: str, where: str):
    """Builder `local` fails, in its own words, after its test run printed one ImportError."""
    ref = f"{scope_of(p)}/{local}"
    tail = f"  File \"{where}/src/todo.py\", line {len(words)}, in <module>\nModuleNotFoundError: No module named 'config'"
    ran(p, ref, [{"command": "python3 -m pytest -q", "exit": 2, "tail": tail}])
    failure = {
        "task": "1.1" if local == "w1" else "1.3",
        "error": words,
        "root_cause": words,
        "suggested_fix": "add it",
        "confidence": 90,
        "fix_scope": "contained",
        "files": [],
        "category": "runtime",
    }
    return ok(p, "record", local, "-", input=result(status="failed", summary=words, failure=failure))


def test_one_real_import_error_described_two_ways_is_a_common_cause(drive_colony):
    p = drive_colony
    assert [s["id"] for s in approved_wave(p)["spawns"]] == ["w1", "w2"]
    failing(p, "w1", "the store module cannot find its settings", "/tmp/wt/b1/w1")
    out = failing(p, "w2", "config is not importable from the api", "/tmp/wt/b1/w2")
    stop = out["next"]
    assert stop["action"] == "stop" and stop["why"] == "abort_phase"
    assert "common cause" in stop["text"] and "no module named 'config'" in stop["text"].lower()
    nodes = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]["nodes"]
    observed = nodes["w1"]["failure"]["observed"]
    assert observed["command"] == "python3 -m pytest -q" and observed["exit"] == 2
    assert observed["error"] == "ModuleNotFoundError: No module named 'config'"
    assert nodes["w1"]["failure"]["error"] == "the store module cannot find its settings"  # its words stay, as its account


def test_the_retry_brief_carries_what_really_failed(drive_colony):
    p = drive_colony
    approved_wave(p)
    write(p, "src/api.py")
    ok(p, "record", "w2", "-", input=result(files_created=["src/api.py"]))
    retry = failing(p, "w1", "something about settings", "/x")["next"]
    assert [s["id"] for s in retry["spawns"]] == ["r1"]
    brief = brief_at(p, f"{scope_of(p)}/r1")
    assert "What failed, as it ran: `python3 -m pytest -q` exited 2" in brief and "No module named 'config'" in brief
    assert "Previous error (the worker's account): something about settings" in brief


def test_a_builder_that_says_the_tests_pass_after_its_own_run_failed_fails(drive_colony):
    p = drive_colony
    approved_wave(p)
    write(p, "src/todo.py")
    ref = f"{scope_of(p)}/w1"
    ran(p, ref, [{"command": "python3 -m pytest -q", "exit": 1, "tail": "E   assert 1 == 2\n1 failed"}])
    out = ok(p, "record", "w1", "-", input=result(summary="done, all tests pass", files_created=["src/todo.py"]))
    assert "failed" in out["line"]
    node = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]["nodes"]["w1"]
    assert node["failure"]["category"] == "unverified_claim"
    assert node["failure"]["error"].startswith("claimed the tests pass, but `python3 -m pytest -q` exited 1")


def test_files_claimed_that_no_call_wrote_are_noted(drive_colony):
    p = drive_colony
    approved_wave(p)
    write(p, "src/todo.py")
    ran(p, f"{scope_of(p)}/w1", [{"command": "ls src"}])
    ok(p, "record", "w1", "-", input=result(files_created=["src/todo.py"]))
    node = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]["nodes"]["w1"]
    assert node["status"] == "completed" and node["unwitnessed"] == ["src/todo.py"]


# ---------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    ("command", "how"),
    [
        ("python3 -m pytest -q", "exact"),
        ("  python3  -m pytest   -q ", "exact"),
        ("python3 -m pytest -q 2>&1", "exact"),
        ("cd /proj && python3 -m pytest -q", "exact"),
        ("cd . && python3 -m pytest -q", "exact"),
        ("cd /other && python3 -m pytest -q", "elsewhere"),
        ("python3 -m pytest -q | tail -3", "piped"),
        ("python3 -m pytest -q 2>&1 | tail", "piped"),
        ("python3 -m pytest -q || true", None),
        ("python3 -m pytest -q; 2>&1", None),  # `2>&1` alone is a second command, exiting 0
        ("python3 -m pytest -q 2>&1;", "exact"),
        ("python3 -m\npytest -q", None),  # two lines: two commands
        ("PYTEST_ADDOPTS=--collect-only python3 -m pytest -q", None),
        ("python3 -m pytest -q tests/test_one.py", None),
        ("echo python3 -m pytest -q", None),
    ],
)
def test_a_run_matches_the_named_command_only_as_written(command, how):
    assert rules.match("python3 -m pytest -q", command, "/proj", "/proj") == how


def test_the_telling_line_and_paths_normalised():
    assert rules.error_line("collected 3\nE   ImportError: x\n1 failed\n") == "E   ImportError: x"
    assert rules.error_line("Traceback (most recent call last):\n  File 'a.py'\nKeyError: 'k'\n") == "KeyError: 'k'"
    assert rules.error_line("") == ""
    assert rules.normal_paths("File /tmp/wt/b1/w1/src/a.py, line 3") == "File a.py, line 3"
    from aether.rules.failures import normalize_error

    a = normalize_error("  File \"/tmp/wt/w1/src/todo.py\", line 3\nModuleNotFoundError: No module named 'config' at 0x7f00")
    b = normalize_error("  File \"/home/u/p/src/todo.py\", line 12\nModuleNotFoundError: No module named 'config' at 0x7f99")
    assert a == b


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"package.json": '{"scripts": {"test": "jest"}}'}, "npm test"),
        ({"package.json": '{"scripts": {"test": "vitest"}}', "pnpm-lock.yaml": ""}, "pnpm test"),
        ({"package.json": '{"scripts": {"test": "mocha"}}', "yarn.lock": ""}, "yarn test"),
        ({"package.json": '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'}, None),
        ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, "python3 -m pytest -q"),
        ({"tests/test_a.py": ""}, "python3 -m pytest -q"),
        ({"go.mod": "module x\n"}, "go test ./..."),
        ({"Cargo.toml": "[package]\n"}, "cargo test"),
        ({"Makefile": "build:\n\ttrue\ntest:\n\ttrue\n"}, "make test"),
        ({"README.md": "no tests"}, None),
    ],
)
def test_the_projects_test_command_is_found_from_its_files(tmp_path, files, command):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    assert checks.tests_command(str(tmp_path)) == command


def test_verify_in_config_names_the_commands_fixed_when_the_build_starts(drive_colony):
    p = drive_colony
    (p.root / ".aether" / "config.yaml").write_text("verify:\n  tests: make check\n", "utf-8")
    to_verification(p)
    assert named_checks(brief_at(p, f"{scope_of(p)}/watch1"))["tests"] == f"cd {p.root} && make check"
    # fixed when the build started: a change made since (a builder's, a bad one) changes nothing
    (p.root / ".aether" / "config.yaml").write_text("verify:\n  test: make check\n", "utf-8")
    assert named_checks(ok(p, "verify-brief", "1")["text"])["tests"] == f"cd {p.root} && make check"


# ---------------------------------------------------------------- capture: the hook and the mod


def hook(payload: dict, project: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(REPO / "hooks" / "evidence.sh")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "CLAUDE_PROJECT_DIR": str(project), **(env or {})},
        check=False,
    )


def payload(name: str, agent: str = "a1b2c3", agent_type: str = "ant:watcher") -> dict:
    data = json.loads((FIXTURES / f"{name}.json").read_text("utf-8"))
    data.update(agent_id=agent, agent_type=agent_type)
    return data


def test_the_hook_keeps_an_ants_calls_and_nothing_else(project):
    log = project.data / "evidence" / "a1b2c3.jsonl"
    assert hook(payload("bash"), project.root).returncode == 0 and not log.exists()  # no colony here
    project.data.mkdir(parents=True)
    (project.data / "spawns.json").write_text('{"version": 1, "spawns": [], "runs": []}', "utf-8")
    for name in ("bash", "bash_failure", "write"):
        done = hook(payload(name), project.root)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    hook(payload("bash", agent_type="other:agent"), project.root)  # another plugin's agent
    hook(payload("bash"), project.root)  # the same call reported twice is kept once
    lines = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert lines[0]["spawn"] is None and lines[0]["by"] == "hooks"  # its spawn: the one run as this agent
    assert [(r.get("tool"), r.get("exit"), r.get("command") or r.get("path")) for r in lines[1:]] == [
        ("Bash", 0, "echo hi; sleep 1"),
        ("Bash", 3, "echo bad; exit 3"),
        ("Write", None, "/work/project/a.txt"),
    ]
    assert lines[1]["ms"] == 1041 and lines[2]["tail"] == "bad" and isinstance(lines[2]["t"], float)


def test_the_hook_leaves_the_mods_ants_to_the_mod_and_bounds_each_log(project):
    folder = project.data / "evidence"
    folder.mkdir(parents=True)
    (project.data / "spawns.json").write_text("{}", "utf-8")
    (folder / "m1.jsonl").write_text(json.dumps({"spawn": "b1/w1", "agent_id": "m1", "by": "mod", "at": "x"}) + "\n", "utf-8")
    hook(payload("bash", agent="m1"), project.root)
    assert len((folder / "m1.jsonl").read_text("utf-8").splitlines()) == 1
    (folder / "big.jsonl").write_text(json.dumps({"spawn": "b1/w2", "agent_id": "big", "by": "hooks", "at": "x"}) + "\n", "utf-8")
    huge = payload("bash_failure", agent="big")
    huge["error"] = "Exit code 1\n" + "x" * 100_000
    for n in range(300):
        hook({**huge, "tool_use_id": f"toolu_{n}"}, project.root)
    lines = [json.loads(line) for line in (folder / "big.jsonl").read_text("utf-8").splitlines()]
    assert os.path.getsize(folder / "big.jsonl") <= evidence.MAX_ANT_BYTES
    assert all(len(line.get("tail", "")) <= 1501 for line in lines)
    # the newest calls are kept, the oldest went, and the header counts them: none lost unsaid
    ids = [line["id"] for line in lines[1:]]
    assert ids == [f"toolu_{n}" for n in range(300 - len(ids), 300)]
    assert lines[0]["agent_id"] == "big" and lines[0]["dropped"] == 300 - len(ids) > 0


def test_bad_agent_ids_and_odd_payloads_never_fail_the_call(project):
    (project.data / "evidence").mkdir(parents=True)
    (project.data / "spawns.json").write_text("{}", "utf-8")
    for agent in ("../../etc", "a b", "", "x" * 200):
        assert hook(payload("bash", agent=agent), project.root).returncode == 0
    for raw in ("not json", "{}", '{"agent_type": "ant:x", "agent_id": "a1"}'):
        done = subprocess.run(["sh", str(REPO / "hooks" / "evidence.sh")], input=raw, capture_output=True, text=True, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert os.listdir(project.data / "evidence") == []


# ---------------------------------------------------------------- what cannot count as proof


def test_a_log_no_spawn_ran_as_and_a_call_from_the_future_prove_nothing(drive_colony):
    p = drive_colony
    to_verification(p)
    ref = f"{scope_of(p)}/watch1"
    folder = p.data / "evidence"
    folder.mkdir(exist_ok=True)
    forged = [{"spawn": ref, "agent_id": "forged", "by": "hooks", "at": "x"}] + [
        {"tool": "Bash", "command": c, "exit": 0, "t": time.time(), "ms": 1, "tail": ""} for c in named_checks(brief_at(p, ref)).values()
    ]
    (folder / "forged.jsonl").write_text("".join(json.dumps(x) + "\n" for x in forged), "utf-8")  # written by an ant, not a hook
    ran(p, ref, [{"command": "python3 -m pytest -q", "t": time.time() + 3600}])  # its own agent, a call dated an hour ahead
    out = ok(p, "record", "watch1", "-", input=WATCHER_SAYS_PASS)
    assert "imports unverified" in out["line"] and "tests unverified" in out["line"]


def test_a_call_that_did_not_run_to_its_end_has_no_exit_status():
    from aether.state import evidence

    bash = json.loads((FIXTURES / "bash.json").read_text("utf-8"))
    backgrounded = {**bash, "tool_response": {**bash["tool_response"], "backgroundTaskId": "b1"}}
    assert evidence.from_hook(backgrounded)["exit"] is None and evidence.from_hook(bash)["exit"] == 0
    assert evidence.from_hook({**bash, "tool_input": {**bash["tool_input"], "run_in_background": True}})["exit"] is None
    refused = {"tool": "Bash", "input": {"command": "go test ./..."}, "refused": True, "isError": False, "text": ""}
    assert evidence.from_mod(refused)["exit"] is None
    assert evidence.from_mod({**refused, "refused": False})["exit"] == 0
    assert evidence.from_mod({**refused, "refused": False, "isError": True, "text": "Exit code 2\nboom"})["exit"] == 2


def test_a_named_command_with_its_own_cd_matches_as_written_and_scripts_are_not_imported():
    assert rules.match("cd src && python3 -m app --help", "cd src && python3 -m app --help", "/p", "/p") == "exact"
    assert rules.match("cd src && python3 -m app --help", "cd /p && cd src && python3 -m app --help", "/p") == "exact"
    assert rules.match("cd src && python3 -m app --help", "python3 -m app --help", "/p", "/p") is None
    assert rules.match("python3 -m pytest -q", "python3 -m pytest -q 2>&1 ;", "/p", "/p") == "exact"
    assert checks.imports_command(["app/__main__.py", "setup.py", "app/core.py", "conftest.py"]) == 'python3 -c "import app.core"'


def test_refining_again_and_again_sends_one_watcher_each_time_then_asks(drive_colony):
    p = drive_colony
    to_verification(p)
    assert watcher(p, "watch1", checks=False)["next"]["spawns"][0]["id"] == "watch2"
    asked = watcher(p, "watch2", checks=False)["next"]
    for n in range(3, 10):
        assert asked["why"] == "unverified", asked
        more = ok(p, "next", "--build", "1", "--answer", "refine", "-", input="once more")
        assert [s["id"] for s in more["spawns"]] == [f"watch{n}"]
        asked = watcher(p, f"watch{n}", checks=False)["next"]
    assert asked["action"] == "ask"


def test_build_finish_by_hand_takes_no_verdicts_from_its_caller(drive_colony):
    p = drive_colony
    to_verification(p)
    said = {"passed": True, "score": 95, "summary": "all good", "checks": []}
    forged = {"watcher": said, "evidence": {"passed": True, "checks": []}}
    out = ok(p, "build-finish", "1", "--results", "-", input=json.dumps(forged))
    assert out["evidence"] is None  # the caller's "evidence" is dropped: only the driven build judges


def test_a_fifo_or_a_torn_log_in_the_evidence_folder_hangs_and_breaks_nothing(drive_colony):
    p = drive_colony
    to_verification(p)
    folder = p.data / "evidence"
    folder.mkdir(exist_ok=True)
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "torn.jsonl").write_bytes(b'{"spawn": null, "agent_id": "torn"' + b"[" * 100_000)
    out = watcher(p, "watch1")
    assert "tests verified" in out["line"]
