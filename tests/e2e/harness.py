"""Run real Claude Code (`claude -p`, or its interactive TUI in tmux) against the scripted model
server, fully offline.

Each run gets the test's throwaway HOME, a fixture project directory outside any git
repository, and a fresh `FakeAPI`. No `--allowedTools` and no skip-permissions: the slash
command's own `allowed-tools` is the only thing that grants a tool call, so a run proves it.
The result (`Run`) holds the stream-json events, every request the model server saw (main
thread, subagents, side requests) and the files written under the run's directory:

    <tmp>/e2e/run-N/requests.jsonl   every model request, as received, with how it was answered
    <tmp>/e2e/run-N/stream.jsonl     Claude Code's stream-json output
    <tmp>/e2e/run-N/stderr.txt       Claude Code's stderr
    <tmp>/e2e/run-N/report.txt       the readable report a failing run prints
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .fake_api import FakeAPI, Step
from helpers.processes import kill_tree

E2E_DIR = Path(__file__).resolve().parent
REPO = E2E_DIR.parents[1]
FIXTURES = E2E_DIR / "fixtures"
PROBE_PLUGIN = FIXTURES / "probe"

# The Claude Code releases the tests run. Every test runs on the newest (package.json pins it);
# the tests marked `oldest` run on the oldest release Aether supports too (oldest/package.json).
CLAUDE_VERSION = "2.1.332"
OLDEST_VERSION = "2.1.326"
INSTALL_COMMAND = "make e2e-deps"
NODE_MODULES = E2E_DIR / "node_modules"
INSTALLS = {CLAUDE_VERSION: NODE_MODULES, OLDEST_VERSION: E2E_DIR / "oldest" / "node_modules"}
# Seconds one `claude -p` run may take before it is killed (AETHER_E2E_TIMEOUT overrides).
RUN_TIMEOUT = 180.0
# Any API key will do: the fake server ignores it (and never records it).
DUMMY_API_KEY = "sk-ant-e2e-dummy-key"
# An interactive session is done with a prompt when the model server has been quiet this long.
QUIET_SECONDS = 3.0
# The clock the scenarios pin for the helper (AETHER_NOW).
NOW = {"AETHER_NOW": "2026-02-04T10:00:00Z"}
# Seconds run_and_kill waits for a run to be ready to kill.
KILL_WAIT = 120.0


class E2EFailure(AssertionError):
    """A run went wrong: the message carries the whole readable report."""


class SetupError(RuntimeError):
    """Claude Code is missing or not the pinned version; the message names the fix."""


# ---------------------------------------------------------------------------------------------
# Finding Claude Code.


def claude_version(path: Path) -> str:
    """The version a `claude` executable reports ("" when it does not run)."""
    home = tempfile.mkdtemp(prefix="aether-e2e-version-")
    try:
        proc = subprocess.run(
            [str(path), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env={**_base_env(), "HOME": home},
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return proc.stdout.strip().split(" ")[0] if proc.returncode == 0 else ""


def claude_binary(version: str = CLAUDE_VERSION) -> Path:
    """The pinned `claude` executable of `version` (the newest unless told), or SetupError saying
    how to install it. AETHER_E2E_CLAUDE=/path/to/claude runs that binary in place of the newest,
    whatever version it reports — unless AETHER_E2E_CLAUDE_VERSION names the one it must report."""
    override = os.environ.get("AETHER_E2E_CLAUDE") if version == CLAUDE_VERSION else None
    if override:
        return _found((Path(override),), os.environ.get("AETHER_E2E_CLAUDE_VERSION") or None, "tests/e2e")
    modules = INSTALLS.get(version, NODE_MODULES)
    # npm's shim first; the platform package's own binary when the postinstall step was blocked.
    candidates = (modules / ".bin" / "claude", *sorted(modules.glob("@anthropic-ai/claude-code-*/claude")))
    return _found(candidates, version, modules.parent.relative_to(REPO).as_posix())


@functools.cache  # each test asks; the answer holds for the session (a failure is asked again)
def _found(candidates: tuple, version: str | None, folder: str) -> Path:
    """The first candidate that runs and reports `version` (any version, when None)."""
    tried = []
    for path in candidates:
        if not (path.is_file() and os.access(path, os.X_OK)):
            tried.append(f"{path}: missing")
            continue
        found = claude_version(path)
        if found and (version is None or found == version):
            return path
        tried.append(f"{path}: says {found or 'nothing (it does not run)'!r}")
    what = f"Claude Code {version}" if version else "The Claude Code at AETHER_E2E_CLAUDE"
    raise SetupError(
        f"{what} is not installed for the end-to-end tests. Run `{INSTALL_COMMAND}` in {REPO} "
        f"(needs Node.js and npm; it runs `npm ci` in {folder}). Looked at: " + "; ".join(tried or ["nothing"])
    )


# ---------------------------------------------------------------------------------------------
# Plugins.


def _front_matter(text: str) -> tuple[dict, str]:
    """The `key: value` lines of a Markdown file's front matter, and the body after it."""
    match = re.match(r"\A---\r?\n(.*?)\r?\n---\r?\n?(.*)\Z", text, re.S)
    if not match:
        return {}, text
    fields = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            fields[key.strip()] = value.strip().strip("'\"")
    return fields, match.group(2)


def plugin_agents(plugin_dir: Path) -> dict[str, str]:
    """`{"plugin:agent": system prompt}` for a plugin's agents (the text before any `${…}`).

    Claude Code substitutes `${CLAUDE_PLUGIN_ROOT}` in an agent's body, so only the part
    before the first substitution is known to appear verbatim in the system prompt.
    """
    plugin_dir = Path(plugin_dir)
    manifest = json.loads((plugin_dir / ".claude-plugin" / "plugin.json").read_text("utf-8"))
    name = manifest["name"]
    listed = manifest.get("agents")
    if isinstance(listed, str):
        listed = [listed]
    if listed:
        files = [plugin_dir / p for p in listed]
    else:
        files = sorted((plugin_dir / "agents").glob("*.md"))
    agents = {}
    for file in files:
        fields, body = _front_matter(file.read_text("utf-8"))
        known = body.split("${", 1)[0].strip()
        agents[f"{name}:{fields.get('name') or file.stem}"] = known
    return agents


# ---------------------------------------------------------------------------------------------
# The environment Claude Code runs in.


def _base_env() -> dict:
    """A clean environment: no `aether` on PATH, no CLAUDE*, ANTHROPIC* or AETHER* variables."""
    path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and not os.path.exists(os.path.join(p, "aether"))]
    env = {
        "PATH": os.pathsep.join(path),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "SHELL": shutil.which("bash") or "/bin/bash",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    for keep in ("USER", "LOGNAME", "TMPDIR", "TZ"):
        if os.environ.get(keep):
            env[keep] = os.environ[keep]
    return env


def _ancestor_with(path: Path, name: str) -> Path | None:
    for parent in [path, *path.parents]:
        if (parent / name).exists():
            return parent
    return None


# ---------------------------------------------------------------------------------------------
# One run's result.


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


class _Turns:
    """The model requests of a run or a session (`self.api`: its FakeAPI)."""

    api: FakeAPI

    @property
    def requests(self):
        """Every request the model server received, in arrival order."""
        return self.api.requests

    @property
    def main_turns(self):
        """Model turns of the main conversation (the slash command's own thread)."""
        return self.api.turns("main")

    def subagent_turns(self, name: str | None = None):
        """Model turns of subagents: of agent `name` ("probe:prober"), or of every subagent."""
        return [r for r in self.api.turns() if (r.thread == name if name else r.thread not in ("main", "side"))]


class Run(_Turns):
    """What one `claude -p` run did: exit code, stream events, model requests, files."""

    pid: int | None = None  # Claude Code's process (run_together says it)

    def __init__(self, *, argv, prompt, code, stdout, stderr, api: FakeAPI, seconds, dir, project, home, timed_out=False):
        self.argv, self.prompt, self.code = argv, prompt, code
        self.stdout, self.stderr, self.api = stdout, stderr, api
        self.seconds, self.dir, self.project, self.home = seconds, dir, project, home
        self.timed_out = timed_out
        self.events = []
        try:  # `--output-format json` with --verbose: one JSON list of the events
            whole = json.loads(stdout) if stdout.lstrip().startswith("[") else None
        except ValueError:
            whole = None
        if isinstance(whole, list):
            self.events = [e if isinstance(e, dict) else {"type": "unparsed", "line": str(e)} for e in whole]
            return
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                event = None
            self.events.append(event if isinstance(event, dict) else {"type": "unparsed", "line": line})

    @property
    def side_turns(self):
        """Model requests from neither the main thread nor a subagent (answered automatically)."""
        return self.api.turns("side")

    # -- the stream -------------------------------------------------------------------------

    @property
    def result(self) -> dict:
        """The final `result` event (empty when the run died before writing one)."""
        found = [e for e in self.events if e.get("type") == "result"]
        return found[-1] if found else {}

    @property
    def text(self) -> str:
        """The final answer text Claude Code reported."""
        return self.result.get("result") or ""

    @property
    def permission_denials(self) -> list[dict]:
        return self.result.get("permission_denials") or []

    def tool_calls(self, name: str | None = None, *, main_only: bool = True) -> list[dict]:
        """tool_use blocks Claude Code executed (`name` filters: "Bash", "Agent", …)."""
        calls = []
        for e in self.events:
            if e.get("type") != "assistant" or (main_only and e.get("parent_tool_use_id")):
                continue
            for block in (e.get("message") or {}).get("content") or []:
                if block.get("type") == "tool_use" and (name is None or block.get("name") == name):
                    calls.append(block)
        return calls

    def bash_commands(self) -> list[str]:
        """The command of every main-thread Bash call, in order."""
        return [c["input"].get("command", "") for c in self.tool_calls("Bash")]

    def tool_result(self, call) -> dict:
        """`{text, is_error, details}` for a tool call (a tool_use block or its id).

        `details` is Claude Code's structured result (`stdout`/`stderr` for Bash; `status`,
        `agentType`… for Agent).
        """
        tool_id = call["id"] if isinstance(call, dict) else call
        for e in self.events:
            if e.get("type") != "user":
                continue
            for block in (e.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id:
                    content = block.get("content")
                    text = (
                        content if isinstance(content, str) else "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))
                    )
                    return {"text": text, "is_error": bool(block.get("is_error")), "details": e.get("tool_use_result")}
        raise KeyError(f"no tool result for {tool_id} in the stream")

    # -- reporting --------------------------------------------------------------------------

    def report(self) -> str:
        head = [
            f"claude run: {' '.join(self.argv[:3])} …  exit={self.code} "
            f"seconds={self.seconds:.1f}{'  TIMED OUT' if self.timed_out else ''}",
            f"project: {self.project}",
            f"files:   {self.dir}/(requests.jsonl, stream.jsonl, stderr.txt, report.txt)",
        ]
        if self.result:
            head.append(
                f"result: is_error={self.result.get('is_error')} "
                f"terminal_reason={self.result.get('terminal_reason')} "
                f"text={self.text[:300]!r}"
            )
        if self.permission_denials:
            head.append("permission denials: " + json.dumps(self.permission_denials)[:600])
        if self.stderr.strip():
            head.append("stderr (tail):\n" + _tail(self.stderr))
        return "\n".join(head) + "\n" + self.api.report()

    def check(self, *, exit_code: int | None = 0, all_steps_used: bool = True) -> Run:
        """Fail with the report unless the run ended cleanly and followed the script."""
        problems = []
        if self.timed_out:
            problems.append("the run timed out")
        if exit_code is not None and self.code != exit_code:
            problems.append(f"exit code {self.code}, expected {exit_code}")
        problems += script_problems(self.api, all_steps_used)
        if problems:
            raise E2EFailure("; ".join(problems) + "\n" + self.report())
        return self


def script_problems(api: FakeAPI, all_steps_used: bool = True) -> list[str]:
    """How a run strayed from its script: requests no step matched, steps never used."""
    problems = []
    if api.unmatched:
        problems.append(f"{len(api.unmatched)} request(s) matched no script step")
    if all_steps_used and api.unused_steps:
        problems.append(f"{len(api.unused_steps)} script step(s) never used")
    return problems


# ---------------------------------------------------------------------------------------------
# The runner (the `claude` fixture).


class ClaudeCode:
    """Runs `claude -p` in a throwaway project against a scripted model.

    `plugin_dirs` default to the repository itself (the `ant` plugin); the harness's own
    tests use the probe plugin in fixtures/. `runtime` is who serves the /ant:* commands: the
    markdown commands and the Queen (`prompts`, AETHER_RUNTIME=prompts), or the plugin's mod (`mod`).
    """

    def __init__(self, binary: Path, workdir: Path, home: Path, plugin_dirs=None, runtime: str = "prompts"):
        assert runtime in ("prompts", "mod"), runtime
        self.runtime = runtime
        self.binary = Path(binary)
        self.workdir = Path(workdir)
        self.home = Path(home)
        self.project = self.workdir / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        self.plugin_dirs = [Path(p) for p in (plugin_dirs or [REPO])]
        self.runs: list[Run] = []
        # The helper finds its project by walking up to `.aether/` or `.git`: nothing above
        # the fixture project may have either.
        for marker in (".git", ".aether"):
            found = _ancestor_with(self.project.parent, marker)
            if found:
                raise SetupError(
                    f"the e2e fixture project {self.project} lies under {found}, "
                    f"which has a {marker}; point --basetemp (or TMPDIR) elsewhere"
                )

    def env(self, url: str = "http://127.0.0.1:9", extra: dict | None = None) -> dict:
        """The environment `claude` runs with (model server at `url`; port 9 refuses)."""
        runtime = {"AETHER_RUNTIME": "prompts"} if self.runtime == "prompts" else {}
        return {
            **_base_env(),
            "HOME": str(self.home),
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": DUMMY_API_KEY,
            **runtime,
            **(extra or {}),
        }

    def cli(self, *args, timeout: float = 120, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Run another `claude` subcommand (`plugin validate …`) with this home, no model."""
        return subprocess.run(
            [str(self.binary), *map(str, args)],
            cwd=cwd or self.project,
            env=self.env(extra=env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def aether(self, *args, input: str | None = None, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Run the repository's `bin/aether` in the fixture project (to set up or inspect state)."""
        return subprocess.run(
            [str(REPO / "bin" / "aether"), *map(str, args)],
            cwd=cwd or self.project,
            env=self.env(extra=env),
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def run(
        self,
        prompt: str | list[str],
        script: list[Step],
        *,
        plugin_dirs=None,
        args=(),
        env=None,
        timeout: float | None = None,
        check: bool = True,
        agents: dict | None = None,
        cwd: Path | None = None,
    ) -> Run:
        """Run `claude -p PROMPT` once; with `check` (default) fail unless it went to script.

        A list of prompts is sent as user messages of one session, in order (stream-json input:
        `/clear` then a question, say). `env` adds variables (e.g. `AETHER_NOW`); `args` adds CLI
        flags; `agents` adds `{name: system prompt}` pairs to recognise beyond the plugins' own.
        """
        messages = prompt if isinstance(prompt, list) else None
        prompt = " / ".join(messages) if messages else prompt
        plugins = [Path(p) for p in (plugin_dirs or self.plugin_dirs)]
        known = {}
        for p in plugins:
            known.update(plugin_agents(p))
        known.update(agents or {})
        run_dir = self.workdir / "e2e" / f"run-{len(self.runs) + 1}"
        run_dir.mkdir(parents=True, exist_ok=True)
        timeout = timeout or float(os.environ.get("AETHER_E2E_TIMEOUT") or RUN_TIMEOUT)
        api = FakeAPI(script, agents=known, log_path=run_dir / "requests.jsonl")
        argv = [str(self.binary), "-p"] + (["--input-format", "stream-json"] if messages else [prompt])
        for p in plugins:
            argv += ["--plugin-dir", str(p)]
        argv += ["--output-format", "stream-json", "--verbose", *args]
        stdin = None
        if messages:
            stdin = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": m}}) + "\n" for m in messages).encode(
                "utf-8"
            )
        with api:
            full_env = self.env(api.url, env)
            started = time.monotonic()
            proc = subprocess.Popen(
                argv,
                cwd=cwd or self.project,
                env=full_env,
                stdin=subprocess.PIPE if messages else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            timed_out = False
            try:
                out, err = proc.communicate(input=stdin, timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                try:
                    out, err = proc.communicate(timeout=10)
                except subprocess.TimeoutExpired:  # a detached child still holds the pipes
                    proc.kill()
                    out, err = b"", b"(output lost: a child process kept the pipes open)"
            seconds = time.monotonic() - started
        run = Run(
            argv=argv,
            prompt=prompt,
            code=proc.returncode,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            api=api,
            seconds=seconds,
            dir=run_dir,
            project=cwd or self.project,
            home=self.home,
            timed_out=timed_out,
        )
        self.runs.append(run)
        (run_dir / "stream.jsonl").write_text(run.stdout, "utf-8")
        (run_dir / "stderr.txt").write_text(run.stderr, "utf-8")
        (run_dir / "report.txt").write_text(run.report() + "\n", "utf-8")
        if timed_out:
            raise E2EFailure(f"claude -p did not finish within {timeout:.0f} s (killed)\n" + run.report())
        return run.check() if check else run


# ---------------------------------------------------------------------------------------------
# The fixture project's colony, read and prepared with the helper.


def state(claude: ClaudeCode, name: str):
    """A state file of the fixture project (`.aether/data/<name>`), parsed."""
    return json.loads((claude.project / ".aether" / "data" / name).read_text("utf-8"))


def aether_ok(claude: ClaudeCode, *args, input: str | None = None) -> dict:
    """`aether ARGS` in the fixture project at NOW: its result (fails the test on an error)."""
    done = claude.aether(*args, input=input, env=NOW)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])["result"]


# ---------------------------------------------------------------------------------------------
# A run killed mid-way (a crash, a closed terminal).


def run_and_kill(claude, prompt: str, script: list, ready, *, env=None, wait: float = KILL_WAIT) -> Run:
    """`claude -p PROMPT` as ClaudeCode.run starts it, killed (its process group and every process
    it started) as soon as `ready(pid)` holds. Fails if it never does, or the run ends first."""
    known = {}
    for p in claude.plugin_dirs:
        known.update(plugin_agents(p))
    run_dir = claude.workdir / "e2e" / f"run-{len(claude.runs) + 1}"
    run_dir.mkdir(parents=True, exist_ok=True)
    api = FakeAPI(script, agents=known, log_path=run_dir / "requests.jsonl")
    argv = [str(claude.binary), "-p", prompt]
    for p in claude.plugin_dirs:
        argv += ["--plugin-dir", str(p)]
    argv += ["--output-format", "stream-json", "--verbose"]
    out_path, err_path = run_dir / "stream.jsonl", run_dir / "stderr.txt"
    killed = False
    with api, open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv, cwd=claude.project, env=claude.env(api.url, env), stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        try:
            while time.monotonic() - started < wait and proc.poll() is None:
                if ready(proc.pid):
                    killed = True
                    break
                time.sleep(0.2)
        finally:
            kill_tree(proc.pid)
            proc.wait(timeout=30)
        seconds = time.monotonic() - started
    run = Run(
        argv=argv,
        prompt=prompt,
        code=proc.returncode,
        stdout=out_path.read_text("utf-8", "replace"),
        stderr=err_path.read_text("utf-8", "replace"),
        api=api,
        seconds=seconds,
        dir=run_dir,
        project=claude.project,
        home=claude.home,
    )
    claude.runs.append(run)
    (run_dir / "report.txt").write_text(run.report() + "\n", "utf-8")
    if not killed:
        raise E2EFailure(f"the run was not ready to be killed within {wait:.0f} s (exit {proc.returncode})\n" + run.report())
    return run


# ---------------------------------------------------------------------------------------------
# Several sessions on one colony at once.


def _free_run_dir(claude: ClaudeCode) -> Path:
    """A run folder no run of this fixture project has used (two ClaudeCode may share one)."""
    n = len(claude.runs) + 1
    while (claude.workdir / "e2e" / f"run-{n}").exists():
        n += 1
    path = claude.workdir / "e2e" / f"run-{n}"
    path.mkdir(parents=True)
    return path


def run_together(sessions: list, script: list[Step], *, env=None, args=(), timeout: float | None = None, start_next=None) -> list[Run]:
    """`claude -p PROMPT` for each `(ClaudeCode, PROMPT)` of `sessions` — one project, any runtime
    each — against ONE model server: a step answers whichever run asks first. Started together,
    or each once `start_next()` holds for the one before it (a number: that many seconds after
    it). `args` adds CLI flags to each (`--output-format json` for the exit status). Returns their
    Runs, unchecked, each with its `pid` (Claude Code's process): they share the server, so every
    run's `api` holds every request and step of all of them."""
    known = {}
    for claude, _ in sessions:
        for p in claude.plugin_dirs:
            known.update(plugin_agents(p))
    dirs = [_free_run_dir(claude) for claude, _ in sessions]
    api = FakeAPI(script, agents=known, log_path=dirs[0] / "requests.jsonl")
    timeout = timeout or float(os.environ.get("AETHER_E2E_TIMEOUT") or RUN_TIMEOUT)
    began = time.monotonic()
    started, timed_out = [], set()
    with api, contextlib.ExitStack() as files:
        for i, ((claude, prompt), run_dir) in enumerate(zip(sessions, dirs)):
            if i and start_next is not None:
                after = time.monotonic() + (0 if callable(start_next) else start_next)
                while not (start_next() if callable(start_next) else time.monotonic() >= after) and time.monotonic() - began < timeout:
                    time.sleep(0.1)
            argv = [str(claude.binary), "-p", prompt]
            for p in claude.plugin_dirs:
                argv += ["--plugin-dir", str(p)]
            argv += ["--output-format", "stream-json", "--verbose", *args]
            out = files.enter_context(open(run_dir / "stream.jsonl", "wb"))
            err = files.enter_context(open(run_dir / "stderr.txt", "wb"))
            proc = subprocess.Popen(
                argv,
                cwd=claude.project,
                env=claude.env(api.url, env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            started.append((proc, time.monotonic(), argv))
        for proc, _, _ in started:
            try:
                proc.wait(timeout=max(1.0, began + timeout - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out.add(proc.pid)
                kill_tree(proc.pid)
                proc.wait(timeout=30)
    runs = []
    for (claude, prompt), run_dir, (proc, at, argv) in zip(sessions, dirs, started):
        run = Run(
            argv=argv,
            prompt=prompt,
            code=proc.returncode,
            stdout=(run_dir / "stream.jsonl").read_text("utf-8", "replace"),
            stderr=(run_dir / "stderr.txt").read_text("utf-8", "replace"),
            api=api,
            seconds=time.monotonic() - at,
            dir=run_dir,
            project=claude.project,
            home=claude.home,
            timed_out=proc.pid in timed_out,
        )
        run.pid = proc.pid
        claude.runs.append(run)
        (run_dir / "report.txt").write_text(run.report() + "\n", "utf-8")
        runs.append(run)
    if timed_out:
        raise E2EFailure(f"{len(timed_out)} of {len(runs)} runs did not finish within {timeout:.0f} s (killed)\n" + runs[0].report())
    return runs
