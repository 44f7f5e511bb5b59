"""The contract every prompt relies on: one JSON envelope per call (stdout for success, stderr
for failure, nothing else), exit 1 for bad input, 2 for state problems, exact round trips of
free text through stdin, a clean answer when the helper is not installed, never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import LAUNCHER, REPO

from aether.cli import COMMANDS

PY = sys.executable
NASTY = "line one\nline \"two\" 'three' $(rm -rf /) `id` ${HOME} \\n \\ back\\slash\t tab ünïcødé 🐜 \u200b end"


def _resolvable(name: str) -> bool:
    module, attr = COMMANDS[name].split(":")
    try:
        return hasattr(__import__(module, fromlist=[attr]), attr)
    except ImportError:
        return False


AVAILABLE = [name for name in sorted(COMMANDS) if _resolvable(name)]


def one_json_line(text: str) -> dict:
    lines = text.splitlines()
    assert len(lines) == 1, text
    return json.loads(lines[0])


def assert_success(result) -> dict:
    assert result.code == 0, result.stderr
    assert result.stderr == ""
    env = one_json_line(result.stdout)
    assert env["ok"] is True and "result" in env
    return env["result"]


def assert_failure(result, code: str, exit_code: int) -> dict:
    assert result.stdout == ""
    env = one_json_line(result.stderr)
    assert env["ok"] is False and isinstance(env["error"], str) and env["error"]
    assert (result.code, env["code"]) == (exit_code, code), env
    assert "Traceback" not in result.stderr
    return env


# ---------------------------------------------------------------- help


def test_the_registry_has_the_core_commands():
    assert {"help", "version", "pheromone-emit", "pheromone-batch"} <= set(AVAILABLE)


@pytest.mark.parametrize("name", AVAILABLE)
def test_every_command_has_help(project, name):
    result = project.run(name, "--help")
    assert result.code == 0 and result.stderr == ""
    assert f"Usage: aether {name}" in result.stdout
    module, attr = COMMANDS[name].split(":")
    command = getattr(__import__(module, fromlist=[attr]), attr)
    assert command.name == name  # the registry key and the command agree
    assert (command.help or "").strip(), f"{name} has no docstring to teach its use"


def test_group_help_and_version(project):
    result = project.sh("--help")
    assert result.code == 0 and result.stderr == "" and "Usage: aether" in result.stdout
    assert project.sh("--version").stdout.strip().startswith("aether ")
    assert isinstance(assert_success(project.sh("version")), str)


# ---------------------------------------------------------------- envelopes


def test_success_is_one_json_line_on_stdout(project):
    signal_ = assert_success(project.sh("pheromone-emit", "FOCUS", "the auth module needs care"))
    assert signal_["type"] == "FOCUS"
    rows = assert_success(project.sh("pheromone-batch"))
    assert [row["id"] for row in rows] == [signal_["id"]]


def test_pretty_output_is_still_one_json_object(project):
    result = project.sh("--pretty", "pheromone-batch")
    assert result.code == 0 and result.stderr == ""
    assert json.loads(result.stdout) == {"ok": True, "result": []}
    assert "\n  " in result.stdout
    result = project.sh("pheromone-batch", env={"AETHER_PRETTY": "1"})
    assert json.loads(result.stdout) == {"ok": True, "result": []}


USAGE_ERRORS = [
    (("pheromone-emit",), "invalid_argument"),  # missing argument
    (("pheromone-emit", "FOCUS", "text long enough to pass", "--bogus"), "usage_error"),
    (("pheromone-emit", "SMELL", "text long enough to pass"), "invalid_argument"),
    (("pheromone-decay", "a", "1", "1"), "invalid_argument"),
    (("pheromone-decay", "1", "1", "nan"), "invalid_argument"),
    (("pheromone-decay", "1", "1", "1", "1"), "usage_error"),  # extra argument
    (("pheromone-emit", "FOCUS", "text long enough to pass", "--strength"), "usage_error"),
    (("pheromone-emit", "FOCUS", "text long enough to pass", "--strength", "-3"), "invalid_argument"),
    (("--bogus",), "usage_error"),
]


@pytest.mark.parametrize("args,code", USAGE_ERRORS)
def test_usage_errors_are_envelopes_with_exit_1(project, args, code):
    env = assert_failure(project.sh(*args), code, 1)
    assert "Usage:" not in env["error"]  # click's own text is wrapped, not printed
    assert not project.file("pheromones.json").exists()


def test_unknown_command(project):
    env = assert_failure(project.sh("pheromone-emitt", "FOCUS", "x"), "unknown_command", 1)
    assert "pheromone-emit" in env["error"] and "aether help" in env["error"]


def test_state_errors_exit_2(project):
    project.write("pheromones.json", "{ not json")
    env = assert_failure(project.sh("pheromone-batch"), "state_corrupt", 2)
    assert env["file"].endswith("pheromones.json")
    assert_failure(project.sh("pheromone-emit", "FOCUS", "never written here"), "state_corrupt", 2)


def test_bare_aether_prints_help(project):
    result = project.sh()
    assert result.code == 0 and result.stderr == ""
    assert "Usage: aether" in result.stdout


# ---------------------------------------------------------------- text in, text out


def test_nasty_text_round_trips_through_stdin(project):
    signal_ = assert_success(project.sh("pheromone-emit", "FOCUS", "-", input=NASTY))
    assert signal_["content"] == NASTY
    assert project.load("pheromones.json")["signals"][0]["content"] == NASTY
    assert [r["content"] for r in assert_success(project.sh("pheromone-batch"))] == [NASTY]


def test_nasty_text_round_trips_through_argv(project):
    signal_ = assert_success(project.sh("pheromone-emit", "REDIRECT", NASTY))
    assert signal_["content"] == NASTY


def test_no_trailing_newline_is_added_or_removed(project):
    for text in ("ends with a newline, keep it\n", "no newline at the end, keep that", "\n\nleading lines"):
        assert assert_success(project.sh("pheromone-emit", "FOCUS", "-", input=text))["content"] == text


def test_megabyte_through_stdin_arrives_whole(project):
    unit = 'ab"c\\d$(x)`y`\nü🐜'  # 14 characters, 21 bytes in UTF-8
    big = unit * (1024 * 1024 // len(unit.encode()) + 1)
    assert len(big.encode()) > 1024 * 1024
    verdict = assert_success(project.sh("pheromone-validate", "-", input=big))
    assert verdict["length"] == len(big) and verdict["reason"] == "too_long"
    # too long for a signal: refused with a clear error, nothing written
    env = assert_failure(project.sh("pheromone-emit", "FOCUS", "-", input=big), "content_too_long", 1)
    assert "limit" in env["error"]
    assert not project.file("pheromones.json").exists()


def test_largest_signal_round_trips_exactly(project):
    from aether.state.pheromones import MAX_CONTENT_LENGTH

    text = ("🐜\"'\\$`\n" * MAX_CONTENT_LENGTH)[:MAX_CONTENT_LENGTH]
    assert assert_success(project.sh("pheromone-emit", "FOCUS", "-", input=text))["content"] == text


def test_invalid_utf8_in_argv(project):
    proc = subprocess.run(
        [str(LAUNCHER), "pheromone-emit", "FOCUS", b"bad bytes \xff\xfe here, long enough"], cwd=project.root, capture_output=True
    )
    result = type("R", (), {"code": proc.returncode, "stdout": proc.stdout.decode(), "stderr": proc.stderr.decode()})
    assert "not valid UTF-8" in assert_failure(result, "invalid_utf8", 1)["error"]
    assert not project.file("pheromones.json").exists()


def test_invalid_utf8_on_stdin(project):
    result = project.sh("pheromone-emit", "FOCUS", "-", input=b"caf\xe9 latin-1 bytes, long enough")
    assert_failure(result, "invalid_utf8", 1)
    assert not project.file("pheromones.json").exists()


def test_empty_stdin(project):
    assert_failure(project.sh("pheromone-emit", "FOCUS", "-", input=b""), "invalid_content", 1)


def test_output_is_utf8_whatever_the_locale(project):
    result = project.sh(
        "pheromone-emit", "FOCUS", "ünïcødé 🐜 signal content", env={"LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "ascii"}
    )
    assert assert_success(result)["content"] == "ünïcødé 🐜 signal content"


# ---------------------------------------------------------------- the launcher


def _copy_launcher(where):
    (where / "bin").mkdir(parents=True)
    shutil.copy2(LAUNCHER, where / "bin" / "aether")
    return where / "bin" / "aether"


@pytest.mark.parametrize("folder", ["plain", 'we"ird \\ name'])
def test_launcher_without_venv_says_how_to_install(tmp_path, folder):
    launcher = _copy_launcher(tmp_path / folder)
    env = {k: v for k, v in os.environ.items() if k != "AETHER_VENV"}
    proc = subprocess.run([str(launcher), "status"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.stdout == ""
    assert proc.returncode == 2
    env_ = one_json_line(proc.stderr)
    assert env_["ok"] is False and env_["code"] == "not_installed"
    assert "make install" in env_["error"] and str(launcher.parent.parent) in env_["error"]


def test_launcher_uses_aether_venv(tmp_path, project):
    launcher = _copy_launcher(tmp_path / "elsewhere")
    proc = subprocess.run(
        [str(launcher), "version"], capture_output=True, text=True, cwd=project.root, env={**os.environ, "AETHER_VENV": str(REPO / ".venv")}
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True


def test_launcher_follows_a_symlink(tmp_path, project):
    link = tmp_path / "somewhere" / "aether"
    link.parent.mkdir()
    link.symlink_to(LAUNCHER)
    proc = subprocess.run([str(link), "version"], capture_output=True, text=True, cwd=project.root)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True


def test_launcher_ignores_pythonpath_and_the_working_directory(project):
    (project.root / "aether").mkdir()
    (project.root / "aether" / "__init__.py").write_text("raise SystemExit('shadowed!')\n")
    (project.root / "click.py").write_text("raise SystemExit('shadowed!')\n")
    result = project.sh("version", env={"PYTHONPATH": str(project.root)})
    assert assert_success(result)


# ---------------------------------------------------------------- never a traceback

FORCED_BUG = """
import aether.rules.pheromones as p
def boom(*a, **k):
    raise RuntimeError("forced failure for the test")
p.batch = boom
from aether.cli import main
main()
"""


def test_an_internal_error_is_an_envelope_not_a_traceback(project):
    proc = subprocess.run([PY, "-c", FORCED_BUG, "pheromone-batch"], cwd=project.root, capture_output=True, text=True)
    result = type("R", (), {"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr})
    env = assert_failure(result, "internal_error", 3)
    assert "forced failure for the test" in env["error"] and "AETHER_DEBUG" in env["error"]


def test_aether_debug_prints_the_traceback(project):
    proc = subprocess.run(
        [PY, "-c", FORCED_BUG, "pheromone-batch"], cwd=project.root, capture_output=True, text=True, env={**os.environ, "AETHER_DEBUG": "1"}
    )
    assert proc.returncode == 3 and "Traceback" in proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1])["code"] == "internal_error"


def test_interrupt_is_an_envelope_with_exit_130(project):
    proc = subprocess.Popen(
        [str(LAUNCHER), "pheromone-validate", "-"],
        cwd=project.root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a test run in the background ignores SIGINT: not its child
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until Python (not the launcher's `$(…)`) is blocked reading stdin
        with open(f"/proc/{proc.pid}/wchan") as fh, open(f"/proc/{proc.pid}/cmdline", "rb") as cmd:
            if "pipe" in fh.read() and b"aether.startup" in cmd.read():
                break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130 and out == b""
    assert json.loads(err.decode().strip())["code"] == "interrupted"
    assert b"Traceback" not in err


def test_closed_pipe_is_quiet(project):
    signals = [
        {
            "id": f"s{i}",
            "type": "FOCUS",
            "content": "x" * 200,
            "strength": 0.7,
            "half_life_seconds": 3600,
            "created_at": "2026-01-01T00:00:00Z",
        }
        for i in range(2000)
    ]
    project.write("pheromones.json", {"version": 1, "signals": signals})
    proc = subprocess.run(
        ["bash", "-c", f'"{LAUNCHER}" pheromone-batch | head -c 5; exit "${{PIPESTATUS[0]}}"'],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout == '{"ok"'
    assert proc.stderr == "" and proc.returncode == 0


# ---------------------------------------------------------------- the README


def test_readme_lists_every_registered_command():
    """The README's tables list what `aether help` shows; the hidden steps are named after them."""
    from aether.cli import guide

    text = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = text.index("<!-- commands:start -->"), text.index("<!-- commands:end -->")
    listed = set(re.findall(r"^\| `([a-z][a-z0-9-]*)", text[start:end], flags=re.M))
    shown = {n for n in COMMANDS if not guide.hidden(n)}
    assert listed == shown, (
        "README.md's command table is out of date: run `make readme`",
        {"missing": sorted(shown - listed), "not shown": sorted(listed - shown)},
    )
    hidden = text[start:end].rsplit(f"**{guide.ORIGINAL_TITLE[0]}**", 1)[1]
    named = set(re.findall(r"`([a-z][a-z0-9-]*)`", hidden)) - {"help"}  # `aether help --all`, the way to list them
    assert named == set(COMMANDS) - shown, "the hidden steps the README names: run `make readme`"
