"""`aether watch` in a real terminal: tmux runs it in one pane while helper calls drive a colony
through a wave; the captured screen follows. Without a terminal it prints one frame."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest
from conftest import LAUNCHER

from helpers.colony import make_plan


class Pane:
    def __init__(self, tmp_path, project, width=100, env_extra=None):
        assert shutil.which("tmux"), "the live view is tested in tmux: install it (apt-get install tmux)"
        self.name = f"aether-watch-{os.getpid()}-{time.monotonic_ns()}"
        self.socket = str(tmp_path / "tmux.sock")
        env = " ".join(
            f"{k}={v}" for k, v in {"HOME": os.environ["HOME"], "AETHER_HOME": os.environ["AETHER_HOME"], **(env_extra or {})}.items()
        )
        self.tmux(
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            str(width),
            "-y",
            "50",
            f"cd {project.root} && env {env} {LAUNCHER} watch --interval 0.2; sleep 30",
        )

    def tmux(self, *args):
        return subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=20)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name).stdout

    def wait_for(self, text: str, timeout: float = 15) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never shown; the screen:\n{self.screen()}")

    def close(self):
        self.tmux("kill-server")


@pytest.fixture
def pane_for(tmp_path):
    panes = []

    def make(project, **kw):
        panes.append(Pane(tmp_path, project, **kw))
        return panes[-1]

    yield make
    for pane in panes:
        pane.close()


def test_the_live_view_follows_a_colony_through_a_wave(project, pane_for):
    project.run("colony-init", "Build a todo API").json
    pane = pane_for(project)
    first = pane.wait_for("watching — Ctrl-C to quit")
    assert "AETHER COLONY · READY" in first and "No plan yet." in first
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    pane.wait_for("Phase 1 name")
    project.run("build-start", 1).json
    plan = {
        "phase": 1,
        "workers": [
            {"id": "api", "caste": "builder", "tasks": ["1.1", "1.2"], "writes": ["src/api.py"]},
            {"id": "db", "caste": "builder", "tasks": ["1.3"], "writes": ["src/db.py"]},
        ],
    }
    project.run("plan-waves", "-", input=json.dumps(plan)).json
    project.run("plan-waves", "--approve")
    project.run("spawn-start", "w1").json
    shown = pane.wait_for("RUNNING")
    assert "EXECUTING" in shown and "w1 builder · wave 1 ·" in shown and "SPAWN TREE" in shown
    project.run("decision-add", "keep the API and the database in separate modules").json
    shown = pane.wait_for("RECENT DECISIONS")
    assert "keep the API and the database" in shown
    pane.tmux("send-keys", "-t", pane.name, "C-c")
    time.sleep(0.5)
    assert "Traceback" not in pane.screen()


def test_narrow_and_no_color(project, pane_for):
    project.run("colony-init", "Build a todo API with a rather long goal that will not fit a narrow window").json
    pane = pane_for(project, width=44, env_extra={"NO_COLOR": "1"})
    shown = pane.wait_for("Ctrl-C")
    assert all(len(line) <= 44 for line in shown.splitlines())
    assert "\x1b" not in pane.tmux("capture-pane", "-p", "-e", "-t", pane.name).stdout.replace("\x1b[0m", "")


def test_without_a_terminal_one_frame(project):
    project.run("colony-init", "Build a todo API").json
    proc = subprocess.run([str(LAUNCHER), "watch"], cwd=project.root, capture_output=True, text=True, timeout=20)
    assert proc.returncode == 0 and "AETHER COLONY · READY" in proc.stdout and "Ctrl-C" not in proc.stdout
