"""The `ant` plugin's frame: manifest, marketplace, hooks, icon, and the install path.

`claude plugin validate` and `claude plugin details` run the pinned Claude Code (`make
e2e-deps`); the SessionStart bootstrap and the launcher's use of its venv are tested here
directly, and with a real `claude plugin install` in tests/e2e/test_plugin_simple.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e.harness import CLAUDE_VERSION, OLDEST_VERSION, ClaudeCode, SetupError, claude_binary

from helpers.plugin import copy_plugin

REPO = Path(__file__).resolve().parents[1]
PLUGIN_DIR = REPO / ".claude-plugin"
BOOTSTRAP = REPO / "hooks" / "bootstrap.py"
LAUNCHER = REPO / "bin" / "aether"
ALWAYS_ON_BUDGET = 800  # tokens every session pays for the plugin (`plugin details`)

sys.path.insert(0, str(REPO / "hooks"))
import bootstrap  # noqa: E402
import guard  # noqa: E402


def load(name: str) -> dict:
    return json.loads((PLUGIN_DIR / name).read_text("utf-8"))


# ---------------------------------------------------------------- manifest and marketplace


def test_manifest_names_the_plugin_and_its_parts():
    from aether import __version__

    m = load("plugin.json")
    assert m["name"] == "ant" and m["license"] == "MIT"
    assert m["version"] == __version__
    for key in ("description", "repository", "homepage"):
        assert isinstance(m[key], str) and m[key]
    assert m["author"]["name"] and len(m["keywords"]) >= 3
    assert (REPO / m["commands"]).is_dir() and m["commands"].endswith("/.claude/commands/ant/")
    assert [Path(p).stem for p in m["agents"]] == [
        "colonizer",
        "route-setter",
        "builder",
        "watcher",
        "scout",
        "architect",  # the castes
        "bug-researcher",
        "root-cause-analyzer",
        "fix-planner",
    ]  # Bug Bash (`/ant:bug`)
    assert all((REPO / p).is_file() for p in m["agents"])


def test_pyproject_and_marketplace_carry_the_same_version():
    import tomllib

    version = load("plugin.json")["version"]
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    assert pyproject["project"]["version"] == version
    market = load("marketplace.json")
    (entry,) = [p for p in market["plugins"] if p["name"] == "ant"]
    assert entry["version"] == market["metadata"]["version"] == version
    assert entry["source"] == "./"


def test_icon_is_a_square_png_the_directory_accepts():
    icon = REPO / load("plugin.json")["icon"]
    data = icon.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width == height and 512 <= width <= 2048
    assert len(data) < 2 * 1024 * 1024


def test_hooks_wire_the_guard_the_agent_hooks_and_the_bootstrap():
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
    pre, agent_pre = hooks["PreToolUse"]
    matched = set(pre["matcher"].split("|"))
    assert {"Bash"} | guard.FILE_TOOLS <= matched and "Agent" not in matched
    # the briefs go in, the answers are recorded wherever Claude Code hands them back (the
    # subagent tool has been `Task` in some releases)
    (agent_post, kept), (agent_failure, kept_failure), (denied,) = (
        hooks["PostToolUse"],
        hooks["PostToolUseFailure"],
        hooks["PermissionDenied"],
    )
    assert agent_pre["matcher"] == agent_post["matcher"] == agent_failure["matcher"] == denied["matcher"] == "Agent|Task"
    # what each ant runs and writes is kept as evidence, whatever its exit
    assert kept == kept_failure and set(kept["matcher"].split("|")) == {"Bash"} | guard.FILE_TOOLS
    assert [h["command"] for h in kept["hooks"]] == ['sh "${CLAUDE_PLUGIN_ROOT}/hooks/evidence.sh"']
    (began,), (stop,), (prompt,) = hooks["SubagentStart"], hooks["SubagentStop"], hooks["UserPromptSubmit"]
    assert "matcher" not in began and "matcher" not in stop and "matcher" not in prompt
    start, restart = hooks["SessionStart"]
    commands = [
        h["command"]
        for h in pre["hooks"]
        + agent_pre["hooks"]
        + agent_post["hooks"]
        + agent_failure["hooks"]
        + denied["hooks"]
        + began["hooks"]
        + stop["hooks"]
        + prompt["hooks"]
        + start["hooks"]
        + restart["hooks"]
    ]
    assert commands == [
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/agent.sh" pre',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/agent.sh" post',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/agent.sh" failure',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/agent.sh" denied',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/agent.sh" start',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/agent.sh" stop',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/approve.sh"',  # a person's typed /ant:bug approve
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/agent.sh" prompt',
        'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/bootstrap.py"',
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/session.sh"',
    ]
    assert "matcher" not in start  # startup, resume, /clear and compaction alike
    # the colony's context only where the conversation lost it (or was picked up again)
    assert set(restart["matcher"].split("|")) == {"clear", "compact", "resume"}
    # the hooks that must refuse fail closed: a guard or Agent hook that cannot run, crashes or
    # times out refuses the call it guards (Claude Code's default lets it through); the others
    # keep the default — a recording hook that fails must never block an answer or a prompt
    declared = [
        (event, entry.get("matcher"), hook["onFailure"])
        for event, entries in hooks.items()
        for entry in entries
        for hook in entry["hooks"]
        if "onFailure" in hook
    ]
    assert declared == [("PreToolUse", pre["matcher"], "block"), ("PreToolUse", agent_pre["matcher"], "block")]


# ---------------------------------------------------------------- Claude Code's own checks


@pytest.fixture(scope="module", params=[CLAUDE_VERSION, OLDEST_VERSION], ids=lambda v: f"claude-{v}")
def claude_cli(request, tmp_path_factory):
    """`claude` of each release the suite runs: the newest and the oldest Aether supports."""
    try:
        binary = claude_binary(request.param)
    except SetupError as exc:
        pytest.fail(str(exc), pytrace=False)
    work = tmp_path_factory.mktemp("plugin-cli")
    home = work / "home"
    home.mkdir()
    return ClaudeCode(binary, work, home=home)


def _type_errors(report: dict) -> list:
    """The TypeScript errors `plugin validate` found: (file, message), from its report."""
    return [
        (Path(c["file"]).name, w["message"])
        for c in report.get("contents", [])
        for w in c.get("warnings", [])
        if "error TS" in w.get("message", "")
    ]


@pytest.mark.e2e
@pytest.mark.parametrize("profile", [[], ["--profile", "directory"]], ids=["strict", "directory"])
def test_claude_plugin_validate_passes_strict(claude_cli, profile):
    proc = claude_cli.cli("plugin", "validate", "--strict", "--json", *profile, REPO)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["success"] is True, proc.stdout
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    assert _type_errors(report) == []  # the mod type-checks (test_claude_plugin_validate_type_checks_the_mod_strictly)
    provides = report["provides"]
    assert sorted(provides["commands"]) == sorted(f"ant:{p.stem}" for p in (REPO / ".claude/commands/ant").glob("*.md"))
    assert sorted(provides["agents"]) == sorted(f"ant:{Path(p).stem}" for p in load("plugin.json")["agents"])
    assert provides["bin"] == ["aether"]
    assert sorted((h["event"], h.get("matcher", "")) for h in provides["hooks"]) == [
        ("PermissionDenied", "Agent|Task"),
        ("PostToolUse", "Agent|Task"),
        ("PostToolUse", "Bash|Write|Edit|MultiEdit|NotebookEdit"),
        ("PostToolUseFailure", "Agent|Task"),
        ("PostToolUseFailure", "Bash|Write|Edit|MultiEdit|NotebookEdit"),
        ("PreToolUse", "Agent|Task"),
        ("PreToolUse", "Bash|Write|Edit|MultiEdit|NotebookEdit"),
        ("SessionStart", ""),
        ("SessionStart", "clear|compact|resume"),
        ("SubagentStart", ""),
        ("SubagentStop", ""),
        ("UserPromptSubmit", ""),  # a person's typed /ant:bug approve
        ("UserPromptSubmit", ""),  # the notifications that carry ants' answers
    ]
    if profile:
        directory = report["directory"]
        assert directory["findings"] == [] and directory["undecided"] == [] and directory["failure"] is None
        # incomplete only because the directory's rules for plugin code (hooks/mod.ts) run in its portal
        assert directory["incomplete"] is True and any("names a hooks module" in n for n in directory["notes"])


@pytest.mark.e2e
def test_claude_plugin_validate_type_checks_the_mod_strictly(claude_cli, tmp_path):
    """The mod's type check: `claude plugin validate --strict` compiles hooks/mod.ts, what it
    imports (hooks/types.ts) and hooks/mod.test.ts against Claude Code's own declarations, strict
    with noUncheckedIndexedAccess (the options of the tsconfig the engine lays), and a type error
    fails it — the repository passes (above), a copy with an implicit any and an unchecked index
    does not."""
    root = copy_plugin(tmp_path / "plugin")
    with (root / "hooks" / "types.ts").open("a", encoding="utf-8") as fh:
        fh.write("export function loose(x) { return x }\nconst words: string[] = []\nexport const first: string = words[0]\n")
    report = json.loads(claude_cli.cli("plugin", "validate", "--strict", "--json", root).stdout)
    errors = _type_errors(report)
    assert report["success"] is False, report
    assert [f for f, m in errors if "TS7006" in m] == ["types.ts"], errors  # noImplicitAny (strict)
    assert [f for f, m in errors if "'string | undefined' is not assignable" in m] == ["types.ts"], errors  # noUncheckedIndexedAccess


@pytest.mark.e2e
def test_claude_plugin_validate_passes_for_each_manifest(claude_cli):
    for name in ("plugin.json", "marketplace.json"):
        proc = claude_cli.cli("plugin", "validate", "--strict", "--json", PLUGIN_DIR / name)
        report = json.loads(proc.stdout)
        assert proc.returncode == 0 and report["success"] is True, (name, proc.stdout)
        assert report["manifest"]["type"] == name.split(".")[0]
        assert report["manifest"]["warnings"] == []


def always_on_tokens(details: str) -> int:
    """The `Always-on: ~N tok` line of `claude plugin details` (`< N` counts as N)."""
    match = re.search(r"Always-on:\s+(?:~|<\s*)?(\d[\d,]*)\s+tok", details)
    assert match, f"no Always-on line in:\n{details}"
    return int(match.group(1).replace(",", ""))


def test_always_on_line_is_read():
    assert always_on_tokens("Projected token cost\n  Always-on:   ~171 tok   added") == 171
    assert always_on_tokens("  Always-on:   < 20 tok") == 20
    assert always_on_tokens("  Always-on:   ~1,204 tok") == 1204


@pytest.mark.e2e
def test_plugin_details_always_on_cost_is_within_budget(claude_cli):
    proc = claude_cli.cli("--plugin-dir", REPO, "plugin", "details", "ant")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"ant {load('plugin.json')['version']}")
    skills = re.search(r"Skills \((\d+)\)\s+(.*)", out)
    names = sorted(p.stem for p in (REPO / ".claude/commands/ant").glob("*.md"))
    assert int(skills.group(1)) == len(names) and sorted(skills.group(2).split(", ")) == names
    assert "PreToolUse, SessionStart" in out and "no model context cost" in out
    assert always_on_tokens(out) <= ALWAYS_ON_BUDGET


# ---------------------------------------------------------------- the SessionStart bootstrap


def run_hook(root: Path, data: Path | None, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_PLUGIN")}
    full["CLAUDE_PLUGIN_ROOT"] = str(root)
    if data is not None:
        full["CLAUDE_PLUGIN_DATA"] = str(data)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, str(root / "hooks" / "bootstrap.py")], input="{}", capture_output=True, text=True, env=full, timeout=60
    )


def fake_venv(path: Path, marker: str | None = bootstrap.READY, content: str = "x") -> Path:
    """A folder the launcher takes for a venv: bin/python echoes its arguments."""
    (path / "bin").mkdir(parents=True)
    python = path / "bin" / "python"
    python.write_text('#!/bin/sh\necho "fake-python $*"\n')
    python.chmod(0o755)
    if marker:
        (path / marker).write_text(content)
    return path


def launch(root: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("AETHER_VENV",)}
    full.update(env or {})
    return subprocess.run([str(root / "bin" / "aether"), *args], capture_output=True, text=True, env=full, timeout=60)


def test_the_hook_does_nothing_outside_claude_code_and_in_a_set_up_checkout(tmp_path):
    assert run_hook(REPO, None).stdout == ""  # no CLAUDE_PLUGIN_DATA
    data = tmp_path / "data"
    proc = run_hook(REPO, data)  # the repository has .venv (make install)
    assert proc.returncode == 0 and proc.stdout == ""
    assert list(data.iterdir()) == []


def test_the_venv_key_follows_the_version_and_the_sources(tmp_path):
    root = copy_plugin(tmp_path / "plugin")
    key = bootstrap.venv_key(str(root))
    assert key.startswith(load("plugin.json")["version"] + "-")
    assert bootstrap.venv_key(str(root)) == key
    (root / "scripts" / "aether" / "__pycache__").mkdir(exist_ok=True)
    (root / "scripts" / "aether" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert bootstrap.venv_key(str(root)) == key  # caches do not count
    with open(root / "scripts" / "aether" / "modes.py", "a") as fh:
        fh.write("\n# changed\n")
    assert bootstrap.venv_key(str(root)) != key


def test_a_ready_venv_is_a_quick_no_op_that_points_the_launcher_at_it(tmp_path):
    root = copy_plugin(tmp_path / "plugin")
    data = tmp_path / "data"
    venvs = data / "venvs"
    key = bootstrap.venv_key(str(root))
    old = fake_venv(venvs / "0.0.1-old")
    older = fake_venv(venvs / "0.0.0-older")
    os.utime(older / bootstrap.READY, (1, 1))
    partial = fake_venv(venvs / "0.0.2-partial", marker=bootstrap.INSTALLING, content="999999999")
    current = fake_venv(venvs / key)
    started = time.monotonic()
    proc = run_hook(root, data)
    assert proc.returncode == 0 and proc.stdout == ""  # nothing to tell the user
    assert time.monotonic() - started < 5
    assert (root / ".venv-location").read_text().strip() == str(current)
    assert sorted(p.name for p in venvs.iterdir()) == sorted([key, old.name])  # one previous kept
    assert not partial.exists() and not older.exists()
    out = launch(root, "version")
    assert out.returncode == 0 and out.stdout.startswith("fake-python -I -c from aether.startup import main")
    assert out.stdout.rstrip().endswith(" version")


def test_the_launcher_reports_a_failed_install_with_its_reason(tmp_path):
    root = copy_plugin(tmp_path / "plugin")
    venv = fake_venv(
        tmp_path / "data" / "venvs" / "k", marker=bootstrap.FAILED, content='pip install failed (exit 1); see /x/"install".log\n'
    )
    (root / ".venv-location").write_text(f"{venv}\n")
    out = launch(root, "status")
    assert out.returncode == 2 and out.stdout == ""
    env = json.loads(out.stderr)
    assert env["ok"] is False and env["code"] == "not_installed"
    assert 'pip install failed (exit 1); see /x/"install".log' in env["error"]
    assert "new Claude Code session" in env["error"] and str(root) in env["error"]


def test_the_launcher_waits_for_a_running_install(tmp_path):
    root = copy_plugin(tmp_path / "plugin")
    venv = tmp_path / "data" / "venvs" / "k"
    venv.mkdir(parents=True)
    (root / ".venv-location").write_text(f"{venv}\n")
    builder = subprocess.Popen(["sleep", "30"])
    try:
        (venv / bootstrap.INSTALLING).write_text(str(builder.pid))
        started = time.monotonic()
        out = launch(root, "status", env={"AETHER_INSTALL_WAIT": "1"})
        waited = time.monotonic() - started
        assert 0.9 <= waited < 10
        env = json.loads(out.stderr)
        assert out.returncode == 2 and env["code"] == "installing"
        assert str(tmp_path / "data" / "install.log") in env["error"]

        # The build finishes while the launcher waits: the call goes through.
        def finish():
            time.sleep(0.6)
            fake_venv(venv, marker=bootstrap.READY)
            (venv / bootstrap.INSTALLING).unlink()

        import threading

        thread = threading.Thread(target=finish)
        thread.start()
        out = launch(root, "version", env={"AETHER_INSTALL_WAIT": "20"})
        thread.join()
        assert out.returncode == 0 and out.stdout.startswith("fake-python")
    finally:
        builder.send_signal(signal.SIGKILL)
        builder.wait()


def test_the_launcher_ignores_a_dead_build(tmp_path):
    root = copy_plugin(tmp_path / "plugin")
    venv = fake_venv(tmp_path / "data" / "venvs" / "k", marker=bootstrap.INSTALLING, content="999999999")
    (root / ".venv-location").write_text(f"{venv}\n")
    started = time.monotonic()
    out = launch(root, "status")
    assert time.monotonic() - started < 5
    env = json.loads(out.stderr)
    assert env["code"] == "not_installed" and "make install" in env["error"]


@pytest.mark.slow
def test_the_hook_builds_the_venv_in_the_background_and_the_launcher_uses_it(tmp_path):
    """The real thing, without Claude Code: venv + pip install of the plugin's own package."""
    root = copy_plugin(tmp_path / "plugin")
    data = tmp_path / "data"
    started = time.monotonic()
    proc = run_hook(root, data)
    assert time.monotonic() - started < 5  # the session is not held up
    message = json.loads(proc.stdout)["systemMessage"]
    assert "installing its helper" in message and str(data / "install.log") in message
    target = Path((root / ".venv-location").read_text().strip())
    assert target.parent == data / "venvs" and target.name == bootstrap.venv_key(str(root))

    out = launch(root, "version", env={"AETHER_INSTALL_WAIT": "300"})  # waits for the build
    assert out.returncode == 0, (out.stderr, (data / "install.log").read_text())
    assert json.loads(out.stdout) == {"ok": True, "result": load("plugin.json")["version"]}
    assert (target / bootstrap.READY).exists() and not (target / bootstrap.INSTALLING).exists()
    assert not list(root.rglob("*.egg-info")) and not (root / "build").exists()
    assert not [p for p in data.iterdir() if p.name.startswith("source.")]

    again = run_hook(root, data)  # next session: nothing to do
    assert again.returncode == 0 and again.stdout == ""


# ---------------------------------------------------------------- the install checked whole: `aether self-check`


def test_self_check_imports_every_module_of_the_package(project):
    package = REPO / "scripts" / "aether"
    modules = [p for p in package.rglob("*.py") if "__pycache__" not in p.parts]
    # every module but the package itself and __main__ (importing it runs the CLI)
    assert project.run("self-check").json == {"modules": len(modules) - 2}
    assert "self-check" not in project.run("--help").stdout  # hidden: the hook's, not the user's


@pytest.fixture
def install_missing_a_module(tmp_path) -> Path:
    """A copy of the helper's package (on no sys.path yet) without rules/waves.py, which
    steps/waves.py imports: the install that leaves a module out."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "scripts" / "aether", site / "aether", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "aether" / "rules" / "waves.py").unlink()
    return site


def test_self_check_names_the_module_that_does_not_import(install_missing_a_module, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", bootstrap.LAUNCH, "self-check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(install_missing_a_module)},
    )
    assert (proc.returncode, proc.stdout) == (3, "")
    env = json.loads(proc.stderr)
    assert env["code"] == "self_check_failed" and env["missing"] == ["aether.rules.waves"]
    assert "(missing: aether.rules.waves; " in env["error"]
    assert "aether.steps.waves (ModuleNotFoundError: No module named 'aether.rules.waves')" in env["failed"]
    assert "command plan-waves: aether.cli.waves:plan_waves (ModuleNotFoundError: No module named 'aether.rules.waves')" in env["failed"]


def test_the_hooks_build_is_ready_only_when_the_self_check_passes(install_missing_a_module, tmp_path):
    bootstrap.check_install(sys.executable)  # this checkout's helper: whole
    python = tmp_path / "python"  # the venv's python, its package missing rules/waves.py
    python.write_text(
        f'#!/bin/sh\n[ "$1" = "-I" ] && shift  # let PYTHONPATH reach the copy\n'
        f'PYTHONPATH="{install_missing_a_module}" exec "{sys.executable}" "$@"\n'
    )
    python.chmod(0o755)
    with pytest.raises(RuntimeError) as failed:
        bootstrap.check_install(str(python))
    assert str(failed.value).startswith("the installed helper's self-check failed (exit 3): ")
    assert "(missing: aether.rules.waves; " in str(failed.value)
    assert "aether.steps.waves (ModuleNotFoundError: No module named 'aether.rules.waves')" in str(failed.value)


def test_one_version_everywhere_and_changes_md_names_it():
    import re
    import tomllib

    version = load("plugin.json")["version"]
    assert tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["version"] == version
    changes = (REPO / "CHANGES.md").read_text("utf-8")
    first = re.search(r"^## Version (\S+)$", changes, re.M)
    assert first and first.group(1) == version, "CHANGES.md's newest entry is the current version"
