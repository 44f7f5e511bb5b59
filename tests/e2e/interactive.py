"""Interactive sessions: the real TUI of Claude Code in tmux (auto mode, Claude Code's default),
against the scripted model server — what `claude -p` does not show (see README.md,
"Interactive sessions")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from .fake_api import FakeAPI, Step
from .harness import (
    DUMMY_API_KEY,
    QUIET_SECONDS,
    RUN_TIMEOUT,
    ClaudeCode,
    E2EFailure,
    SetupError,
    _tail,
    _Turns,
    plugin_agents,
    script_problems,
)

TMUX = shutil.which("tmux")


class Session(_Turns):
    """What one interactive session did: the model requests, the screen at the end, the files."""

    def __init__(self, *, argv, prompts, api: FakeAPI, screen: str, seconds: float, dir, project, home, timed_out: bool):
        self.argv, self.prompts, self.api, self.screen = argv, prompts, api, screen
        self.seconds, self.dir, self.project, self.home, self.timed_out = seconds, dir, project, home, timed_out

    def report(self) -> str:
        head = [
            f"interactive session: {' '.join(p if isinstance(p, str) else f'<{p.name}>' for p in self.prompts)}  seconds={self.seconds:.1f}{'  TIMED OUT' if self.timed_out else ''}",
            f"project: {self.project}",
            f"files:   {self.dir}/(requests.jsonl, screen.txt, report.txt)",
            "screen (tail):\n" + _tail(self.screen, 30),
        ]
        return "\n".join(head) + "\n" + self.api.report()

    def check(self, *, all_steps_used: bool = True) -> Session:
        problems = []
        if self.timed_out:
            problems.append("the session did not settle in time")
        problems += script_problems(self.api, all_steps_used)
        if problems:
            raise E2EFailure("; ".join(problems) + "\n" + self.report())
        return self


def _trust(home: Path, project: Path) -> None:
    """A home whose Claude Code has been set up: onboarding done, the project trusted, the test
    key approved (else the TUI asks about each before the first prompt)."""
    config = home / ".claude.json"
    data = json.loads(config.read_text("utf-8")) if config.exists() else {}
    data.update(hasCompletedOnboarding=True, theme="dark")
    data.setdefault("projects", {})[str(project)] = {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
    data["customApiKeyResponses"] = {"approved": [DUMMY_API_KEY[-20:]], "rejected": []}
    config.write_text(json.dumps(data), "utf-8")


def _tmux(*args, check=True) -> subprocess.CompletedProcess:
    return subprocess.run([TMUX, *args], capture_output=True, text=True, check=check, timeout=30)


class Key:
    """A key pressed in an interactive session (tmux's name: `Escape`), then `then_wait` seconds;
    `screen` holds what the terminal showed then."""

    def __init__(self, name: str, then_wait: float = 3.0):
        self.name, self.then_wait, self.screen = name, then_wait, ""


def interactive(
    claude: ClaudeCode,
    prompts: list,
    script: list[Step],
    *,
    plugin_dirs=None,
    env=None,
    timeout: float | None = None,
    check: bool = True,
    quiet: float = QUIET_SECONDS,
    until=None,
) -> Session:
    """Type each prompt into Claude Code's interactive TUI (in tmux, auto mode: the default) and
    wait after each until the model server has been quiet for `quiet` seconds (after the last,
    with `check`, also until every step is used): a session the person would see settled. With
    `check`, fail unless every request matched a step and every step was used. `until(screen)`:
    wait for what the screen shows instead (a prompt that brings no model request)."""
    if TMUX is None:
        raise SetupError("tmux is not installed: the interactive end-to-end tests drive Claude Code's TUI in tmux (apt-get install tmux)")
    plugins = [Path(p) for p in (plugin_dirs or claude.plugin_dirs)]
    known = {}
    for p in plugins:
        known.update(plugin_agents(p))
    run_dir = claude.workdir / "e2e" / f"session-{len(claude.runs) + 1}"
    run_dir.mkdir(parents=True, exist_ok=True)
    timeout = timeout or float(os.environ.get("AETHER_E2E_TIMEOUT") or RUN_TIMEOUT)
    _trust(claude.home, claude.project)
    api = FakeAPI(script, agents=known, log_path=run_dir / "requests.jsonl")
    name = f"aether-e2e-{os.getpid()}-{len(claude.runs) + 1}"
    argv = [str(claude.binary)] + [arg for p in plugins for arg in ("--plugin-dir", str(p))]
    screen, timed_out = "", False
    with api:
        full = {**claude.env(api.url, env), "TERM": "xterm-256color"}
        command = "exec env -i " + " ".join(f"{k}={_quote(v)}" for k, v in full.items()) + " " + " ".join(_quote(a) for a in argv)
        started = time.monotonic()
        _tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", str(claude.project), command)
        try:
            timed_out = not _wait_for(lambda: "❯" in _screen(name), started + 60)
            for i, prompt in enumerate(prompts):
                if isinstance(prompt, Key):  # a key press (Esc) while a command runs, then a pause
                    _tmux("send-keys", "-t", name, prompt.name)
                    time.sleep(prompt.then_wait)
                    prompt.screen = _screen(name)
                    continue
                _tmux("send-keys", "-t", name, "-l", prompt)
                time.sleep(0.3)
                _tmux("send-keys", "-t", name, "Enter")
                every = check and i == len(prompts) - 1
                if until is not None:
                    timed_out = timed_out or not _wait_for(lambda: until(_screen(name)), started + timeout)
                    continue
                timed_out = timed_out or not _settle(api, started + timeout, quiet, every)
            if check and prompts and isinstance(prompts[-1], Key):  # a look while it ran: then every step
                timed_out = timed_out or not _settle(api, started + timeout, quiet, True)
            screen = _screen(name)
        finally:
            _tmux("kill-session", "-t", name, check=False)
        seconds = time.monotonic() - started
    session = Session(
        argv=argv,
        prompts=prompts,
        api=api,
        screen=screen,
        seconds=seconds,
        dir=run_dir,
        project=claude.project,
        home=claude.home,
        timed_out=timed_out,
    )
    claude.runs.append(session)
    (run_dir / "screen.txt").write_text(screen, "utf-8")
    (run_dir / "report.txt").write_text(session.report() + "\n", "utf-8")
    return session.check() if check else session


def _quote(value: str) -> str:
    import shlex

    return shlex.quote(str(value))


def _screen(name: str) -> str:
    return _tmux("capture-pane", "-p", "-t", name, check=False).stdout


def _wait_for(condition, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def _settle(api: FakeAPI, deadline: float, quiet: float, every: bool) -> bool:
    """Wait until a request came, then `quiet` seconds with none (and, with `every`, until every
    step is used); False at the deadline."""
    seen = len(api.requests)

    def settled():
        if len(api.requests) == seen:
            return False
        newest = max(r.answered_at or r.received_at for r in api.requests)
        return time.monotonic() - newest >= quiet and (not every or not api.unused_steps)

    return _wait_for(settled, deadline)
