"""Contract tests for every prompt file: the slash commands (`.claude/commands/ant/*.md`) and the
caste agents (the manifest's `agents`, `.aether/workers/*.md`) — today's and every one added later.

The conventions prompts follow, which these tests check:

- **Helper calls** are written `aether <subcommand> …`, inline in backticks or on their own
  line in a ```bash block (one command per line; a heredoc body is not a command). Each one
  must parse against the real CLI (subcommand, options, arguments and their types), without
  running it. For parsing, `$ARGUMENTS` stands for `1` and a placeholder `<name>` for a sample
  value (see PLACEHOLDERS); stdin (`-`) reads a sample text.
- **Shell shape**: every Bash line a command body tells the Queen to run must be one that
  `allowed-tools: Bash(aether:*)` grants: each part of a compound command (`&&`, `||`, `;`, `|`)
  is `aether …` or read-only `echo`/`cat`/`head`/`tail`/`true`; no `FOO=1 aether`, no `$(…)` or
  backticks, no redirect into a file (`2>&1` is fine), no absolute path to the binary, no `cd`.
  Free text goes on stdin through a heredoc with a QUOTED delimiter (`<<'EOF'`). `$ARGUMENTS`
  appears on a command line only as a whole argument (numbers and slugs), never in a
  `` !`…` `` line; `$1`/`$0`-style positional arguments are never used.
- **Answer fields**: a prompt names a field of a helper answer as `result.<path>` in backticks
  (`result.warning`, `result.next.slash`; `[]` descends into a list: `result.signals[].type`).
  It refers to the nearest `aether <subcommand>` written before it in the same file, and must
  exist in a real answer of that subcommand, recorded by running the CLI through SCENARIO
  below. Referencing a subcommand's fields for the first time means adding it to SCENARIO.
- **References**: `ant:<name>` (an agent) must be an agent of the manifest; `/ant:<name>` (a
  command) must have its file — or be one of PENDING_COMMANDS, the original set not written
  yet. A backticked path into the plugin (`docs/…`, `.aether/workers/…`,
  `${CLAUDE_PLUGIN_ROOT}/…`, see PLUGIN_PATHS) must exist; `.aether/data/<file>` and
  `~/.aether/<file>` must name a state file the helper knows.
- **Budgets**, in tokens counted as ceil(UTF-8 bytes / 3.5) (BYTES_PER_TOKEN; the whole file,
  front matter included): `build.md` plus every plugin file it references ≤ 1,500; every other
  command (plus what it references) ≤ 2,000; every agent ≤ 2,500; the descriptions and argument
  hints of all commands and agents — what every session pays for — ≤ 800. (The same 800 is
  checked against `claude plugin details` in tests/test_plugin.py.)
"""

from __future__ import annotations

import io
import json
import math
import re
import shlex
import sys
from pathlib import Path

import click
import pytest
import yaml

from helpers.prompts import HEREDOC, Snippet, shell_snippets

REPO = Path(__file__).resolve().parents[1]
COMMANDS_DIR = REPO / ".claude" / "commands" / "ant"
WORKERS_DIR = REPO / ".aether" / "workers"
MANIFEST = REPO / ".claude-plugin" / "plugin.json"

BYTES_PER_TOKEN = 3.5
BUDGET_BUILD = 1500  # build.md and everything it tells the Queen to read
BUDGET_COMMAND = 2000
BUDGET_AGENT = 2500
BUDGET_ALWAYS_ON = 800

# The v4.4 command set (seed 001 and DESIGN): each has its file, or is still to be written.
ORIGINAL_COMMANDS = {
    "init",
    "colonize",
    "plan",
    "build",
    "continue",
    "status",
    "focus",
    "redirect",
    "feedback",
    "phase",
    "pause-colony",
    "resume-colony",
    "organize",
    "help",
}
PENDING_COMMANDS: set = set()  # none left: every original command has its file

READ_ONLY_WORDS = {"echo", "cat", "head", "tail", "true", "sleep"}  # sleep: a retry's wait (granted too)
# Subcommands that change nothing: a command calling only these may leave model invocation on.
READ_ONLY_SUBCOMMANDS = {
    "status",
    "phase",
    "pheromone-render",
    "pheromone-batch",
    "pheromone-validate",
    "pheromone-decay",
    "pheromone-effective",
    "help",
    "version",
    "query",
    "validate-state",
    "error-pattern-check",
    "error-summary",
    "activity-log-read",
    "spawn-check",
    "feedback-get",
}
PLACEHOLDERS = {
    "n": "1",
    "phase": "1",
    "wave": "1",
    "caste": "builder",
    "type": "FOCUS",
    "file": "colony",
    "id": "w1",
    "node": "w1",
    "threshold": "80",
    "score": "80",
}
PLUGIN_PATHS = (".aether/workers/", ".claude/", ".claude-plugin/", "docs/", "hooks/", "bin/", "scripts/", "tests/")
KNOWN_TOOLS = {"Read", "Write", "Edit", "Bash", "WebFetch", "WebSearch", "NotebookEdit"}
WRITING_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
RUNTIME_TEXT_FILES = ("activity.log",)


# ---------------------------------------------------------------- reading prompt files


def manifest() -> dict:
    return json.loads(MANIFEST.read_text("utf-8"))


def command_files() -> list[Path]:
    return sorted(COMMANDS_DIR.glob("*.md"))


def agent_files() -> list[Path]:
    listed = [(REPO / p).resolve() for p in manifest().get("agents") or []]
    return sorted(set(listed) | set(WORKERS_DIR.glob("*.md")))


def prompt_files() -> list[Path]:
    return command_files() + agent_files()


def rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def split_front_matter(text: str) -> tuple[dict, str]:
    match = re.match(r"\A---\n(.*?)\n---\n(.*)\Z", text, re.S)
    assert match, "no front matter (a file must start with ---, key: value lines, ---)"
    data = yaml.safe_load(match.group(1))
    assert isinstance(data, dict), f"front matter is not a mapping: {data!r}"
    return data, match.group(2)


def tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


# ---------------------------------------------------------------- finding commands in a body


def _command_line(snippet: Snippet) -> tuple[str, str | None]:
    """The command's first line without its heredoc, and the heredoc delimiter as written."""
    first = snippet.text.split("\n", 1)[0]
    doc = re.search(r"<<-?\s*(\S+)", first)
    if not doc:
        return first, None
    return first[: doc.start()] + first[doc.end() :], doc.group(1)


PLACEHOLDER = re.compile(r"<(\w[^<>]*)>")


def _fill(line: str) -> str:
    """Placeholders (`<phase>`, `<the reason>`) replaced by sample values, quoted."""
    return PLACEHOLDER.sub(lambda m: shlex.quote(PLACEHOLDERS.get(m.group(1).strip().lower(), "x")), line)


def shell_problems(snippet: Snippet) -> list[str]:
    """Why `Bash(aether:*)` would not grant this command (see the module docstring)."""
    line, delimiter = _command_line(snippet)
    line = _fill(line)
    problems = []
    if delimiter is not None and not re.fullmatch(r"'[^']+'|\"[^\"]+\"", delimiter):
        problems.append(f"heredoc delimiter {delimiter} is not quoted (write <<'EOF')")
    if snippet.kind == "bang" and "$ARGUMENTS" in snippet.text:
        problems.append("$ARGUMENTS in a !` ` line (pass free text on stdin with a quoted heredoc)")
    if "$(" in line or "`" in line:
        problems.append("command substitution in a command")
    line = line.replace("2>&1", " ")
    if ">" in line or re.search(r"(?<!<)<(?!<)", line):
        problems.append("a redirect into or from a file")
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return problems + [f"does not parse as shell words: {exc}"]
    part: list = []
    for word in words + [";"]:
        if word in ("&&", "||", ";", "|") or word.endswith(";"):
            if word.endswith(";") and word != ";":
                part.append(word[:-1])
            if part:
                head = part[0]
                if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", head):
                    problems.append(f"an environment assignment before the command ({head})")
                elif head.startswith("/") or (head.endswith("/aether") and head != "aether"):
                    problems.append(f"a path to a program ({head}): call plain `aether`")
                elif head != "aether" and head not in READ_ONLY_WORDS:
                    problems.append(f"`{head}` is neither `aether` nor a read-only command")
                for arg in part[1:]:
                    if "$ARGUMENTS" in arg and arg != "$ARGUMENTS":
                        problems.append(f"$ARGUMENTS inside an argument ({arg!r}): pass it whole, or free text on stdin")
            part = []
        else:
            part.append(word)
    return problems


def aether_calls(snippet: Snippet) -> list[list[str]]:
    """The argument lists of every `aether …` part of a command."""
    line, _ = _command_line(snippet)
    line = _fill(line).replace("2>&1", " ")
    try:
        words = shlex.split(line)
    except ValueError:
        return []
    calls, part = [], []
    for word in words + [";"]:
        if word in ("&&", "||", ";", "|"):
            if part and part[0] == "aether":
                calls.append(part[1:])
            part = []
        else:
            part.append(word)
    return calls


# ---------------------------------------------------------------- parsing against the real CLI


def _sample(word: str) -> str:
    if word == "$ARGUMENTS":
        return "1"
    match = re.fullmatch(r"<([^<>]+)>", word)
    if match:
        return PLACEHOLDERS.get(match.group(1).strip().lower(), "x")
    return word


def parse_problem(args: list[str]) -> str | None:
    """None when `aether ARGS` parses (subcommand exists, options and values are accepted)."""
    from aether.cli import cli
    from aether.core.exceptions import AetherError

    args = [_sample(a) for a in args]
    saved = sys.stdin
    sys.stdin = io.StringIO("sample text, as a heredoc would send it\n")
    try:
        ctx = cli.make_context("aether", list(args))
        group, rest = cli, [*ctx._protected_args, *ctx.args]
        while True:
            if not rest:
                return "no subcommand"
            name, cmd, rest = group.resolve_command(ctx, rest)
            if cmd is None:
                return f"unknown subcommand {name!r}"
            ctx = cmd.make_context(name, list(rest), parent=ctx)
            if not isinstance(cmd, click.Group):
                return None
            group, rest = cmd, [*ctx._protected_args, *ctx.args]
    except AetherError as exc:
        return f"{exc.code}: {exc.message}"
    except click.exceptions.Exit:
        return "asks for --help/--version"
    except click.ClickException as exc:
        return exc.format_message()
    finally:
        sys.stdin = saved


def subcommand_of(args: list[str]) -> str | None:
    words = [a for a in args if not a.startswith("-")]
    return words[0] if words else None


# ---------------------------------------------------------------- answers of the real CLI

# Steps run in a fresh project to record real answers: (args, stdin). Add the subcommands whose
# fields your prompt names (answers are merged per subcommand: every field seen counts).
PLAN = {
    "goal": "Build a todo API",
    "phases": [
        {
            "id": 1,
            "name": "Foundation",
            "description": "skeleton",
            "success_criteria": ["tests run"],
            "tasks": [
                {"id": "1.1", "description": "package", "depends_on": []},
                {"id": "1.2", "description": "model", "depends_on": ["1.1"]},
                {"id": "1.3", "description": "tests", "depends_on": []},
            ],
        },
        {
            "id": 2,
            "name": "API",
            "description": "endpoints",
            "success_criteria": ["answers"],
            "tasks": [{"id": "2.1", "description": "routes", "depends_on": []}],
        },
    ],
}


def _result(**fields) -> str:
    return "```json\n" + json.dumps({"status": "completed", "summary": "done", **fields}) + "\n```\n"


FAILED = json.dumps(
    {
        "status": "failed",
        "summary": "import fails",
        "failure": {
            "task": "1.3",
            "error": "ImportError: no module named store",
            "root_cause": "missing module",
            "suggested_fix": "add it",
            "confidence": 90,
            "fix_scope": "contained",
            "files": [],
        },
    }
)
REQUEST = (
    "--- SPAWN REQUEST ---\ncaste: scout\nreason: which argparse API\ncontext: stdlib\n"
    "blocking: true\n--- END SPAWN REQUEST ---\n" + _result()
)
CRITICAL = json.dumps({"findings": [{"severity": "CRITICAL", "description": "x.py fails to import"}], "summary": "import error"})
WATCHER = json.dumps(
    {"watcher": {"passed": True, "score": 90, "summary": "ok", "checks": [{"name": "tests", "passed": True, "detail": "3 passed"}]}}
)
ASSIGNMENT = json.dumps(
    {
        "workers": [  # waves: w1 (1.1) and w2 (1.3), then w3 (1.2, after 1.1)
            {"id": "a", "caste": "builder", "tasks": ["1.1"], "writes": ["a.py"]},
            {"id": "b", "caste": "builder", "tasks": ["1.3"], "writes": ["b.py"]},
            {"id": "c", "caste": "builder", "tasks": ["1.2"], "writes": ["c.py"], "depends_on": ["a"]},
        ]
    }
)
# A colony session after the steps above: colonize, the plan loop, a build of two waves
# (approval, a sub-spawn and its rerun, a retry, a CRITICAL review and its rebuild),
# verification, learnings, continue. `{subcommand.field}` in an argument is that field of the
# subcommand's latest answer (ids the helper made).
BUILD_SCENARIO = [
    (("complexity-detect",), None),  # --apply would make this empty folder LIGHTWEIGHT
    (("plan-start",), None),
    (("loop-init", "plan"), None),
    (("feedback-store", "{loop-init.loop_id}", "-"), "## Planning Assessment\n### Overall Score\n72\n"),
    (("loop-decide", "{loop-init.loop_id}", "72"), None),
    (("feedback-get", "{loop-init.loop_id}"), None),
    (("feedback-store", "{loop-init.loop_id}", "-"), "## Planning Assessment\n### Overall Score\n90\n"),
    (("loop-decide", "{loop-init.loop_id}", "90"), None),
    (("plan-load", "-"), json.dumps(PLAN)),
    (("build-start", "1"), None),
    (("plan-waves", "-"), ASSIGNMENT),
    (("build-start", "1", "--approve"), None),
    (("spawn-start", "w1"), None),
    (("spawn-start", "w2"), None),
    (("spawn-finish", "w1", "-"), REQUEST),
    (("spawn-finish", "w2", "-"), FAILED),
    (("spawn-requests", "w1", "-"), REQUEST),
    (("failure-decide", "--worker", "w2"), None),
    (("spawn-start", "r1"), None),
    (("spawn-finish", "r1", "-"), _result()),
    (("spawn-start", "s1"), None),
    (("spawn-finish", "s1", "-"), _result()),
    (("spawn-start", "x1"), None),
    (("spawn-finish", "x1", "-"), _result()),
    (("wave-conflicts", "1"), None),
    (("review-needed", "1"), None),
    (("spawn-start", "v1"), None),
    (("review-decide", "1", "-"), CRITICAL),
    (("spawn-start", "b1"), None),
    (("spawn-finish", "b1", "-"), _result()),
    (("spawn-start", "b2"), None),
    (("spawn-finish", "b2", "-"), _result()),
    (("review-needed", "1"), None),
    (("spawn-start", "v2"), None),
    (("review-decide", "1", "-"), json.dumps({"findings": [], "summary": "fine"})),
    (("spawn-start", "w3"), None),
    (("spawn-finish", "w3", "-"), _result()),
    (("review-needed", "2"), None),
    (("verify-brief", "1"), None),
    (("build-finish", "1", "--results", "-"), WATCHER),
    (("continue-start",), None),
    (("hygiene-check",), None),
    (("learning-add", "1", "-", "--each-line"), "keep the store and its tests in step\n"),
    (("event-add", "hygiene_report", "architect", "-"), "clean\n"),
    (("decision-add", "-", "--type", "codebase"), "structure: a small CLI\n"),
    (("phase-advance",), None),
    (("build-start", "2"), None),
    (("build-abort", "2", "--reason", "-"), "a common cause: the same import error in every task\n"),
    # /ant:plan's research fan-out, and /ant:colonize's mode (READY again after the abort)
    (("research-plan", "-"), "- argparse subcommands\n- atomic JSON writes\n"),
    (("research-collect", "-"), "Done.\nBRIEF: .aether/research/argparse-subcommands.md\n"),
    (("complexity-detect", "--apply"), None),
    (("next", "--build", "2"), None),  # the helper drives: the Phase Lead to spawn
    (("record", "lead1", "-"), "no plan yet\n"),  # refused: sent back to the lead (lead2), `next` in the answer
    (("run",), None),  # the autopilot adopts the build of phase 2: lead2 to spawn
]
SCENARIO = [
    (("version",), None),
    (("help", "--json"), None),
    (("status", "--json"), None),  # no colony yet
    (("colony-init", "-"), "Build a todo API with tests\n"),
    (("pheromone-emit", "FOCUS", "-"), "auth\n"),  # short: answers a warning
    (("pheromone-emit", "REDIRECT", "-"), "no global state in request handlers\n"),
    (("pheromone-render", "--json"), None),
    (("plan-load", "-"), json.dumps(PLAN)),
    (("status", "--json"), None),
    (("phase", "--json"), None),
    (("phase", "1", "--json"), None),
    (("colony-pause", "--note", "-"), "the user prefers SQLite\n"),
    (("colony-resume",), None),
    (("build-start", "1"), None),
    (("colony-pause",), None),
    ("corrupt-global-learnings", None),  # the next init warns that none were injected
    (("colony-init", "--force", "-"), "A second goal for the same folder\n"),
    *BUILD_SCENARIO,
    (
        ("bug", "init", "--report", "-"),
        json.dumps({"description": "last_n returns one item too many", "id": "b1", "test": "tests/test_calc.py"}),
    ),
    (("bug", "analyze", "b1"), None),
]


def record_answers(project) -> dict[str, list]:
    answers: dict[str, list] = {}
    for step, stdin in SCENARIO:
        if step == "corrupt-global-learnings":
            project.global_dir.mkdir(parents=True, exist_ok=True)
            (project.global_dir / "learnings.json").write_text("{not json", "utf-8")
            continue
        step = [_filled(arg, answers) for arg in step]
        out = project.run(*step, input=stdin)
        assert out.code == 0, (step, out.stderr)
        answers.setdefault(step[0], []).append(out.json)
    return answers


def _filled(arg: str, answers: dict) -> str:
    """`{subcommand.field}` → that field of the subcommand's latest answer."""
    match = re.fullmatch(r"\{([\w-]+)\.(\w+)\}", arg)
    return str(answers[match.group(1)][-1][match.group(2)]) if match else arg


def has_field(value, path: list[str]) -> bool:
    if not path:
        return True
    key, rest = path[0], path[1:]
    if key.endswith("[]"):
        key = key[:-2]
        if not isinstance(value, dict) or not isinstance(value.get(key), list):
            return False
        return any(has_field(item, rest) for item in value[key])
    return isinstance(value, dict) and key in value and has_field(value[key], rest)


# ---------------------------------------------------------------- per-file contract


def test_the_prompt_files_are_found():
    names = {p.stem for p in command_files()}
    assert {"init", "status", "phase", "focus", "redirect", "feedback", "pause-colony", "resume-colony", "help"} <= names
    assert {p.stem for p in agent_files()} >= {"colonizer", "route-setter", "builder", "watcher", "scout", "architect"}


def test_every_original_command_exists_or_is_pending():
    names = {p.stem for p in command_files()}
    assert not PENDING_COMMANDS & names, f"written now, so remove from PENDING_COMMANDS: {sorted(PENDING_COMMANDS & names)}"
    assert ORIGINAL_COMMANDS - names == PENDING_COMMANDS


def test_the_manifest_lists_every_worker_file():
    listed = [(REPO / p).resolve() for p in manifest()["agents"]]
    assert len(listed) == len(set(listed))
    assert {p.resolve() for p in WORKERS_DIR.glob("*.md")} <= set(listed), "register it in plugin.json"
    assert all(p.suffix == ".md" and p.is_file() for p in listed)


@pytest.mark.parametrize("path", command_files(), ids=rel)
def test_command_front_matter(path):
    meta, body = split_front_matter(path.read_text("utf-8"))
    for key in ("description", "allowed-tools"):
        assert isinstance(meta.get(key), str) and meta[key].strip(), f"{key} is missing or empty"
    tools = [t.strip() for t in meta["allowed-tools"].split(",")]
    assert "Bash(aether:*)" in tools
    assert "$ARGUMENTS" not in body or isinstance(meta.get("argument-hint"), str), (
        "a command that takes arguments says which in argument-hint"
    )
    writers = {subcommand_of(call) for s in shell_snippets(body) for call in aether_calls(s)}
    writers -= READ_ONLY_SUBCOMMANDS
    if writers:
        assert meta.get("disable-model-invocation") is True, (
            f"calls {sorted(writers)}, which change state: set disable-model-invocation: true"
        )


@pytest.mark.parametrize("path", agent_files(), ids=rel)
def test_agent_front_matter(path):
    from aether.core.castes import CASTES

    meta, body = split_front_matter(path.read_text("utf-8"))
    for key in ("name", "description", "tools"):
        assert meta.get(key), f"{key} is missing"
    assert meta["name"] == path.stem
    tools = meta["tools"] if isinstance(meta["tools"], list) else [t.strip() for t in str(meta["tools"]).split(",")]
    assert set(tools) <= KNOWN_TOOLS, f"unknown tools {sorted(set(tools) - KNOWN_TOOLS)}"
    assert "${" not in body.split("\n", 1)[0]
    sys.path.insert(0, str(REPO / "hooks"))
    try:
        import guard
    finally:
        sys.path.pop(0)
    if meta["name"] in guard.READ_ONLY:
        assert not set(tools) & WRITING_TOOLS, "a read-only caste is given a tool that writes"
    from aether.bugs.pipeline import RECORD_KINDS

    bug_agents = {agent for _, _, agent in RECORD_KINDS.values()}  # the names agent_step gives
    assert meta["name"] in CASTES or meta["name"] in bug_agents


@pytest.mark.parametrize("path", prompt_files(), ids=rel)
def test_shell_lines_are_granted_by_bash_aether(path):
    _, body = split_front_matter(path.read_text("utf-8"))
    problems = [f"{s!r}: {p}" for s in shell_snippets(body) for p in shell_problems(s)]
    assert not re.search(r"\$(\d|ARGUMENTS\[|\{\d)", body), "positional arguments ($1, $0…)"
    for doc in HEREDOC.finditer(body):
        if not doc.group(1):
            problems.append(f"unquoted heredoc delimiter: {doc.group(0)}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", prompt_files(), ids=rel)
def test_every_aether_call_parses_against_the_cli(path):
    _, body = split_front_matter(path.read_text("utf-8"))
    problems = []
    for snippet in shell_snippets(body):
        for call in aether_calls(snippet):
            problem = parse_problem(call)
            if problem:
                problems.append(f"`aether {' '.join(call)}`: {problem}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", prompt_files(), ids=rel)
def test_referenced_agents_commands_and_files_exist(path):
    from aether.state import schemas

    _, body = split_front_matter(path.read_text("utf-8"))
    agents = {Path(p).stem for p in manifest()["agents"]}
    commands = {p.stem for p in command_files()} | PENDING_COMMANDS
    problems = []
    for m in re.finditer(r"(?<![\w/])ant:([a-z][a-z0-9-]*)", body):
        if m.group(1) not in agents:
            problems.append(f"agent ant:{m.group(1)} is not in the manifest")
    for m in re.finditer(r"(?<![\w])/ant:([a-z][a-z0-9-]*)", body):
        if m.group(1) not in commands:
            problems.append(f"command /ant:{m.group(1)} has no file")
    state_files = {spec.filename for spec in schemas.FILES.values()} | set(RUNTIME_TEXT_FILES)
    for m in re.finditer(r"`([^`\s]+)`", body):
        ref = m.group(1).rstrip(".,;:")
        plugin_ref = ref.removeprefix("${CLAUDE_PLUGIN_ROOT}/")
        if plugin_ref != ref or plugin_ref.startswith(PLUGIN_PATHS):
            if not (REPO / plugin_ref).exists():
                problems.append(f"{ref} does not exist in the plugin")
        elif ref.startswith((".aether/data/", "~/.aether/")):
            name = ref.rsplit("/", 1)[-1]
            if name and name not in state_files and not re.fullmatch(r"activity-phase-\d+(-\d+)?\.log", name):
                problems.append(f"{ref} is not a state file the helper knows")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", prompt_files(), ids=rel)
def test_named_answer_fields_exist_in_real_answers(path, project):
    _, body = split_front_matter(path.read_text("utf-8"))
    refs = [(m.start(), m.group(1)) for m in re.finditer(r"`result\.([\w.\[\]]+)`", body)]
    if not refs:
        return
    answers = record_answers(project)
    calls = [(s.pos, subcommand_of(c)) for s in shell_snippets(body) for c in aether_calls(s)]
    problems = []
    for pos, field in refs:
        before = [sub for p, sub in calls if p < pos]
        if not before:
            problems.append(f"result.{field}: no `aether …` call before it")
            continue
        sub = before[-1]
        if sub not in answers:
            problems.append(f"result.{field}: no recorded answer of `aether {sub}` (add it to SCENARIO)")
        elif not any(has_field(a, field.split(".")) for a in answers[sub]):
            problems.append(f"result.{field} is not in any answer of `aether {sub}`")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- budgets


def referenced_plugin_files(body: str) -> list[Path]:
    found = []
    for m in re.finditer(r"`([^`\s]+)`", body):
        ref = m.group(1).rstrip(".,;:")
        plugin_ref = ref.removeprefix("${CLAUDE_PLUGIN_ROOT}/")
        if (plugin_ref != ref or plugin_ref.startswith(PLUGIN_PATHS)) and (REPO / plugin_ref).is_file():
            found.append(REPO / plugin_ref)
    return sorted(set(found))


def reading_cost(path: Path) -> int:
    """A file's tokens plus those of every plugin file it tells its reader to read."""
    text = path.read_text("utf-8")
    _, body = split_front_matter(text)
    return tokens(text) + sum(tokens(p.read_text("utf-8")) for p in referenced_plugin_files(body))


@pytest.mark.parametrize("path", command_files(), ids=rel)
def test_command_budget(path):
    budget = BUDGET_BUILD if path.stem == "build" else BUDGET_COMMAND
    cost = reading_cost(path)
    assert cost <= budget, f"{rel(path)} costs {cost} tokens to read; the budget is {budget}"


@pytest.mark.parametrize("path", agent_files(), ids=rel)
def test_agent_budget(path):
    cost = tokens(path.read_text("utf-8"))
    assert cost <= BUDGET_AGENT, f"{rel(path)} is {cost} tokens; the budget is {BUDGET_AGENT}"


def test_always_on_cost_of_descriptions():
    """What every session pays: each command's and agent's description and argument hint."""
    total = 0
    for path in prompt_files():
        meta, _ = split_front_matter(path.read_text("utf-8"))
        total += tokens(str(meta.get("description") or "") + str(meta.get("argument-hint") or ""))
    assert total <= BUDGET_ALWAYS_ON, f"descriptions cost {total} tokens in every session"


# ---------------------------------------------------------------- the checks catch what they must


def test_the_checks_catch_bad_prompts(tmp_path):
    bad = (
        "1. Run `aether no-such-command`.\n"
        "2. Run `aether phase 1 --no-such-flag`.\n"
        "3. Run `FOO=1 aether status` and `/opt/x/bin/aether status`.\n"
        "4. Run `aether status > out.txt` then `aether query $(cat q)`.\n"
        "!`aether pheromone-emit FOCUS $ARGUMENTS`\n"
        "```bash\naether pheromone-emit FOCUS - <<EOF\n$ARGUMENTS\nEOF\nrm -rf x && aether status\n```\n"
    )
    snippets = shell_snippets(bad)
    assert [s.kind for s in snippets] == ["inline", "inline", "inline", "inline", "inline", "inline", "bang", "block", "block"]
    assert parse_problem(["no-such-command"]).startswith("unknown_command")
    assert "no-such-flag" in parse_problem(["phase", "1", "--no-such-flag"])
    assert parse_problem(["phase", "$ARGUMENTS"]) is None
    assert parse_problem(["pheromone-emit", "FOCUS", "-"]) is None
    assert "FLAVOUR" in parse_problem(["pheromone-emit", "FLAVOUR", "-"])
    found = {s.text.split("\n")[0]: shell_problems(s) for s in snippets}
    assert "environment assignment" in found["FOO=1 aether status"][0]
    assert "path to a program" in found["/opt/x/bin/aether status"][0]
    assert any("redirect" in p for p in found["aether status > out.txt"])
    assert any("substitution" in p for p in found["aether query $(cat q)"])
    assert any("$ARGUMENTS in a !" in p for p in found["aether pheromone-emit FOCUS $ARGUMENTS"])
    assert any("not quoted" in p for p in found["aether pheromone-emit FOCUS - <<EOF"])
    assert any("`rm`" in p for p in found["rm -rf x && aether status"])
    assert shell_problems(Snippet(0, "aether version 2>&1; echo done | cat", "inline")) == []
    assert tokens("é" * 7) == 4  # 14 bytes / 3.5


def test_budgets_fail_when_a_file_grows(tmp_path, monkeypatch):
    big = tmp_path / "x.md"
    big.write_text("---\ndescription: x\nallowed-tools: Bash(aether:*)\n---\n" + "word " * 2000, "utf-8")
    assert reading_cost(big) > BUDGET_COMMAND
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "extra.md").write_text("y" * 3500, "utf-8")
    small = tmp_path / "build.md"
    small.write_text("---\ndescription: x\nallowed-tools: Bash(aether:*)\n---\nRead `docs/extra.md`.\n")
    assert reading_cost(small) == tokens(small.read_text()) + 1000


def test_answer_fields_are_checked(project):
    answers = record_answers(project)
    assert has_field(answers["pheromone-emit"][0], ["warning"])
    assert has_field(answers["colony-init"][-1], ["warnings"])
    assert has_field(answers["status"][-1], ["next", "slash"])
    assert has_field(answers["pheromone-render"][0], ["signals[]", "type"])
    assert not has_field(answers["pheromone-render"][0], ["signals[]", "colour"])
    assert not has_field(answers["version"][0], ["anything"])


# ---------------------------------------------------------------- quoted contracts

CONTRACTS = REPO / "docs" / "contracts.md"
QUOTED = ("Rules:", "Risk levels:")  # paragraphs an agent quotes from docs/contracts.md


def quoted_paragraphs(text: str) -> list[str]:
    """Paragraphs starting with one of QUOTED, with line breaks and runs of spaces folded."""
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.lstrip().startswith(QUOTED)]


@pytest.mark.parametrize("path", agent_files(), ids=rel)
def test_agents_quote_their_contract_word_for_word(path):
    contracts = " ".join(CONTRACTS.read_text("utf-8").split())
    for quote in quoted_paragraphs(path.read_text("utf-8")):
        assert quote in contracts, f"{rel(path)} paraphrases docs/contracts.md: {quote[:80]}…"


def test_the_quoted_bug_rules_carry_the_helpers_numbers():
    from aether.bugs import config, models

    rules = quoted_paragraphs(CONTRACTS.read_text("utf-8"))
    root_cause = next(r for r in rules if r.startswith("Rules: `summary` is one line of"))
    assert f"at most {models.MAX_SUMMARY_LENGTH} characters" in root_cause
    assert f"at least {models.MIN_TRACE_STEPS} steps" in root_cause
    agents = {p.stem: p.read_text("utf-8") for p in agent_files()}
    assert {"bug-researcher", "root-cause-analyzer", "fix-planner"} <= set(agents)
    for name in ("bug-researcher", "root-cause-analyzer", "fix-planner"):
        assert quoted_paragraphs(agents[name]), f"{name} quotes no rules"
    row = next(line for line in CONTRACTS.read_text("utf-8").splitlines() if line.startswith("| `reproduction_timeout_seconds` |"))
    minimum, maximum = config.TYPES["reproduction_timeout_seconds"][1], config.MAXIMA["reproduction_timeout_seconds"]
    assert f"integer {minimum} … {maximum}" in row and maximum * 1000 == config.BASH_TIMEOUT_MAX_MS


DRIVEN = ("build", "plan", "colonize", "continue", "run")  # the commands whose loop `aether next` drives


def spawn_step(text: str) -> str:
    """The spawn step of a command body or of docs/contracts.md: from `- `spawn`:` to the `wait`
    item, whitespace folded."""
    found = re.search(r"^- `spawn`: in ONE message.*?^- `wait`: [^\n]*", text, re.S | re.M)
    return " ".join(found.group(0).split()) if found else ""


@pytest.mark.parametrize("name", DRIVEN)
def test_every_driven_command_says_the_spawn_step_word_for_word(name):
    canonical = spawn_step(CONTRACTS.read_text("utf-8"))
    assert canonical, "docs/contracts.md lost the Queen's spawn step"
    body = (REPO / ".claude" / "commands" / "ant" / f"{name}.md").read_text("utf-8")
    assert spawn_step(body) == canonical, f"/ant:{name}'s spawn step drifted from docs/contracts.md"


def test_a_drifted_spawn_step_is_caught():
    canonical = (REPO / "docs" / "contracts.md").read_text("utf-8")
    drifted = canonical.replace("end your turn, and act on those when they come", "wait for them")
    assert spawn_step(drifted) != spawn_step(canonical)


def test_a_paraphrase_is_caught(tmp_path):
    agent = tmp_path / "x.md"
    agent.write_text("---\nname: x\n---\n\nRules: `summary` is one line of at most 99 characters.\n", "utf-8")
    contracts = " ".join(CONTRACTS.read_text("utf-8").split())
    assert quoted_paragraphs(agent.read_text("utf-8"))[0] not in contracts


def test_bug_command_branches_on_error_codes_not_exit_statuses():
    """Inside `aether bug`, exit 3 is both `not_reproducible` and `internal_error`: /ant:bug acts
    on the error's `code`, and every code it names is one the helper really gives."""
    _, body = split_front_matter((COMMANDS_DIR / "bug.md").read_text("utf-8"))
    assert not re.search(r"\bExit \d", body), "bug.md branches on an exit status"
    helper = "\n".join(p.read_text("utf-8") for p in (REPO / "scripts" / "aether").rglob("*.py"))
    branches = re.findall(r"((?:`[a-z]+(?:_[a-z]+)+`,\s*)*`[a-z]+(?:_[a-z]+)+`):", body)  # "`code`, `code`:"
    named = {name for branch in branches for name in re.findall(r"`([a-z_]+)`", branch)}
    assert {"not_reproducible", "invalid_agent_output", "cost_limit_exceeded", "verification_failed"} <= named
    for code in named:
        assert f'"{code}"' in helper, f"bug.md names `{code}`, which the helper never gives"
