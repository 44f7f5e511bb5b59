"""Shared fixtures: every test runs in a throwaway project with a throwaway home.

`project.run(...)` calls the CLI in-process (fast); `project.sh(...)` runs `bin/aether` in a
real subprocess, exactly as a prompt would. The fixtures several test modules share are here
too; the helpers they share are plain functions in tests/helpers/.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import bugs as bug_helpers
from helpers import drive, worktrees

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "bin" / "aether"


def pytest_collection_modifyitems(config, items):
    """The tests marked slow first (otherwise in their order): side by side, xdist hands tests out
    in this order, so the long ones start early and the short ones fill the gaps — none is left
    running alone at the end of `make test`."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        """The success envelope's `result` (asserts the envelope is a success)."""
        env = json.loads(self.stdout)
        assert env["ok"] is True, env
        assert self.code == 0, (self.code, self.stderr)
        return env["result"]

    @property
    def error(self) -> dict:
        """The failure envelope on stderr (asserts it is one, with nothing on stdout)."""
        assert self.code != 0, (self.code, self.stdout)
        assert self.stdout == "", self.stdout
        lines = self.stderr.strip().splitlines()
        assert len(lines) == 1, self.stderr
        env = json.loads(lines[0])
        assert env["ok"] is False and env["code"] and env["error"], env
        return env


def _reset_caches() -> None:
    from aether.core import paths

    for fn in (paths.home_dir, paths.project_root, paths.data_dir, paths.project_id):
        fn.cache_clear()


class Project:
    def __init__(self, root: Path, home: Path):
        self.root = root
        self.home = home
        self.global_dir = home / ".aether"
        self.data = root / ".aether" / "data"

    def run(self, *args, input: str | bytes | None = None, cwd: Path | None = None) -> Result:
        """Run `aether ARGS` in this process (same code path as the console script)."""
        from aether.cli import main

        raw_in = input.encode("utf-8") if isinstance(input, str) else (input or b"")
        out, err = io.BytesIO(), io.BytesIO()
        saved = sys.stdin, sys.stdout, sys.stderr, os.getcwd()
        sys.stdin = io.TextIOWrapper(io.BytesIO(raw_in), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8")
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8")
        os.chdir(cwd or self.root)
        _reset_caches()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            stdout, stderr = out.getvalue(), err.getvalue()
            sys.stdin, sys.stdout, sys.stderr, cwd_before = saved
            os.chdir(cwd_before)
            _reset_caches()
        return Result(code, stdout.decode("utf-8"), stderr.decode("utf-8"))

    def sh(self, *args, input: str | bytes | None = None, cwd: Path | None = None, env: dict | None = None, timeout: float = 60) -> Result:
        """Run `bin/aether ARGS` as a subprocess."""
        proc = subprocess.run(
            [str(LAUNCHER), *map(str, args)],
            input=input.encode("utf-8") if isinstance(input, str) else input,
            capture_output=True,
            cwd=cwd or self.root,
            env={**os.environ, **(env or {})},
            timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))

    def file(self, name: str) -> Path:
        return self.data / name

    def load(self, name: str):
        return json.loads(self.file(name).read_text(encoding="utf-8"))

    def write(self, name: str, content) -> Path:
        path = self.file(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content)
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """No test ever touches the real home or a real project."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AETHER_HOME", str(home / ".aether"))
    for var in ("AETHER_DATA_DIR", "AETHER_NOW", "AETHER_PRETTY", "NO_COLOR", "CLAUDECODE", "CLAUDE_PROJECT_DIR", "CLAUDE_PID"):
        monkeypatch.delenv(var, raising=False)
    _reset_caches()
    yield home
    _reset_caches()


@pytest.fixture
def project(tmp_path, _isolated_home) -> Project:
    root = tmp_path / "proj"
    (root / ".aether").mkdir(parents=True)
    return Project(root, _isolated_home)


# ---------------------------------------------------------------- colonies


@pytest.fixture
def drive_colony(project, monkeypatch) -> Project:
    """A colony with PHASE_PLAN loaded, ready for `aether next --build 1` (helpers/drive.py)."""
    return drive.start_colony(project, monkeypatch)


@pytest.fixture
def mod_colony(drive_colony, monkeypatch) -> Project:
    """`drive_colony`, with this process standing in for the Claude Code that runs the mod (and
    its hooks: CLAUDE_PID), whatever AETHER_RUNTIME the tests run under."""
    monkeypatch.setenv("CLAUDE_PID", str(os.getpid()))
    monkeypatch.delenv("AETHER_RUNTIME", raising=False)
    return drive_colony


@pytest.fixture
def worktree_colony(project, monkeypatch) -> Project:
    """A colony with a two-task phase in a git repository: app.py committed, notes.txt untracked;
    same-wave builders get their own worktrees (helpers/worktrees.py)."""
    return worktrees.start_colony(project, monkeypatch)


# ---------------------------------------------------------------- Bug Bash


@pytest.fixture(scope="session")
def project_venv(tmp_path_factory) -> Path:
    """A virtual environment of 'the project' (not the helper's), which can import pytest."""
    venv = tmp_path_factory.mktemp("project-venv") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "helper_site.pth").write_text(str(Path(pytest.__file__).parents[1]) + "\n")
    return venv


@pytest.fixture
def bugs(project, project_venv, monkeypatch) -> bug_helpers.Bugs:
    """`aether bug` on a project whose add() subtracts (`Bugs.approve` stands for the person's
    typed `/ant:bug approve`, as Aether's prompt hook hands it over). Its tests run with a venv
    of its own that has pytest ($VIRTUAL_ENV), whatever `python3` on PATH holds."""
    bug_helpers.make_calc(project.root)
    monkeypatch.setenv("VIRTUAL_ENV", str(project_venv))
    return bug_helpers.Bugs(project)


@pytest.fixture(scope="session")
def guard_server():
    """The guard that stays up (hooks/guard_serve.py), on a socket of its own, in a thread of this
    worker: the tests' environment is its environment, as Claude Code's is the mod's guard's."""
    sys.path.insert(0, str(REPO / "hooks"))
    import guard_serve

    folder = tempfile.mkdtemp(prefix="aether-guard-test-")  # short: a socket's path is at most ~100 bytes
    server, path = guard_serve.open_server(folder)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield path
    server.shutdown()
    server.server_close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["hook", "served"])
def guard_path(request, monkeypatch):
    """The guard's tests, run against both of its paths: `guard.decide` as hooks/guard.sh runs it
    (one call per process), and the same call asked of the guard that stays up over its socket,
    as the mod asks it (hooks/mod_guard.ts). Modules opt in with
    `pytestmark = pytest.mark.usefixtures("guard_path")`."""
    if request.param == "served":
        path = request.getfixturevalue("guard_server")  # first: it puts hooks/ on the path
        import guard
        import guard_serve

        decide = guard.decide

        def asked(event):
            if threading.current_thread() is not threading.main_thread():
                return decide(event)  # the server's own call, beneath the socket
            status, answer = guard_serve.ask(path, event)
            assert status == 200, answer
            return answer["decision"]

        monkeypatch.setattr(guard, "decide", asked)
    return request.param
