"""Helpers for scripting a colony session: a Queen that runs exactly the commands her command
body says, and ants that do real work with real tool calls.

The Queen's Bash calls are taken out of the command body Claude Code sent (with `$ARGUMENTS`
substituted): `run_body(r, "aether spawn-start <id>", id="w1")` finds the body's command that
starts that way, fills its `<placeholders>` and, for a heredoc, puts the text on stdin. A body
that says "(same heredoc)" next to an inline command gets one added the same way. So a step the
body does not spell out cannot be scripted by mistake.
"""

from __future__ import annotations

import json
import re

from .fake_api import Matcher, agent, bash, say, subagent, tool, turn
from .harness import REPO, _front_matter
from helpers.prompts import shell_snippets

COMMAND_TAG = "<command-name>"


# ---------------------------------------------------------------- the command the Queen runs


def _text_blocks(message: dict) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def command_index(request) -> int:
    """Index of the latest user message that carries a slash command (a run may --continue)."""
    for i in range(len(request.messages) - 1, -1, -1):
        m = request.messages[i]
        if m.get("role") == "user" and any(COMMAND_TAG in t for t in _text_blocks(m)):
            return i
    raise ValueError("no slash command in this conversation")


def command_body(request) -> str:
    """The body of the latest slash command, as Claude Code sent it."""
    blocks = _text_blocks(request.messages[command_index(request)])
    bodies = [b for b in blocks if not b.startswith(("<system-reminder>", "<command-message>"))]
    assert len(bodies) == 1, blocks
    return bodies[0]


def body_of(name: str) -> str:
    """The body of the plugin's `/ant:<name>` command file (its front matter removed)."""
    return _front_matter((REPO / ".claude" / "commands" / "ant" / f"{name}.md").read_text("utf-8"))[1]


def queen_turn(n: int, *also: Matcher) -> Matcher:
    """The Queen's n-th model turn of the latest slash command (1 = right after the command),
    and every extra matcher given."""

    def test(request):
        if request.thread != "main":
            return False
        start = command_index(request)
        answered = sum(1 for m in request.messages[start:] if m.get("role") == "assistant")
        return answered == n - 1

    this = Matcher(f"queen_turn({n})", test)
    for extra in also:
        this = this & extra
    return this


def body_command(request, prefix: str, stdin: str | None = None, **fill) -> str:
    """The body's command starting with `prefix`, placeholders filled, `stdin` as its heredoc."""
    for snippet in shell_snippets(command_body(request)):
        first, _, rest = snippet.text.partition("\n")
        if snippet.kind == "bang" or not first.startswith(prefix):
            continue
        for name, value in fill.items():
            first = first.replace(f"<{name}>", str(value))
        assert "<" not in first.replace("<<'EOF'", ""), f"unfilled placeholder in {first!r}"
        if stdin is None:
            assert not rest, f"{first!r} takes a heredoc: pass stdin"
            return first
        if "<<'EOF'" not in first:
            first += " <<'EOF'"
        return f"{first}\n{stdin.rstrip(chr(10))}\nEOF"
    raise AssertionError(f"the command body has no command starting with {prefix!r}")


def run_body(request, prefix: str, stdin: str | None = None, **fill) -> dict:
    """A Bash call of the body's command (see body_command)."""
    return bash(body_command(request, prefix, stdin, **fill))


# ---------------------------------------------------------------- reading tool results


def helper_results(request) -> list[dict]:
    """The helper's `result` of each Bash result in the last message, in call order."""
    out = []
    for item in request.tool_results():
        assert not item["is_error"], item["text"]
        out.append(json.loads(item["text"].strip().splitlines()[-1])["result"])
    return out


def helper_result(request) -> dict:
    (only,) = helper_results(request)
    return only


def agent_report(text: str) -> str:
    """An ant's answer, out of Claude Code's Agent result (the report is indented by 2)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith("The report follows:")) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("agentId:"))
    return "\n".join(line[2:] if line.startswith("  ") else line for line in lines[start:end]).strip("\n")


def agent_reports(request) -> list[str]:
    return [agent_report(item["text"]) for item in request.tool_results()]


def spawn_agents(request) -> list[dict]:
    """One foreground Agent call per spawn-start answer in the last message: the wave."""
    calls = []
    for started in helper_results(request):
        calls.append(agent(started["subagent_type"], started["text"], f"{started['id']} {started['caste']}"))
    return calls


# ---------------------------------------------------------------- what the ants say


def hand_back(text: str):
    """An ant's last reply, as its Claude Code takes an answer: a SubagentHandback call where the
    ant is given that tool (interactive sessions, and `claude -p` of releases whose -p ran in auto
    mode), else its plain last text."""
    return lambda request: tool("SubagentHandback", message=text) if "SubagentHandback" in request.tools else say(text)


def json_block(data: dict, before: str = "") -> str:
    return (before + "\n\n" if before else "") + "```json\n" + json.dumps(data, indent=1) + "\n```"


def worker_result(summary: str, created=(), modified=(), before: str = "") -> str:
    return json_block(
        {"status": "completed", "summary": summary, "files_created": list(created), "files_modified": list(modified), "failure": None},
        before,
    )


def spawn_request(caste: str, reason: str, context: str, blocking: bool = True) -> str:
    return (
        f"--- SPAWN REQUEST ---\ncaste: {caste}\nreason: {reason}\ncontext: {context}\n"
        f"blocking: {'true' if blocking else 'false'}\n--- END SPAWN REQUEST ---"
    )


def is_spawn(node_id: str) -> Matcher:
    """A subagent whose brief is spawn `node_id`'s (`You are w1, …`)."""
    return Matcher(f"is_spawn({node_id})", lambda r: re.search(rf"^You are {re.escape(node_id)}, ", r.first_user_text, re.M))


# ---------------------------------------------------------------- the helper drives (aether next)

HOOK_CONTEXT = "hook additional context:"
NEXT_SPAWN = "Aether next: spawn in ONE message, each with run_in_background false: "


def hook_lines(request) -> list[str]:
    """The lines Aether's PostToolUse hooks added after the last tool results: system messages
    (2.1.3xx), or `<system-reminder>` blocks of the user message that carries them (older)."""
    lines = []
    for m in reversed(request.messages):
        if m.get("role") == "assistant":
            break
        if m.get("role") == "system":
            lines[:0] = [line for block in _text_blocks(m) for line in block.splitlines()]
        elif m.get("role") == "user":
            notes = [b for b in _text_blocks(m) if b.startswith("<system-reminder>") and HOOK_CONTEXT in b]
            lines[:0] = [line for note in notes for line in note.splitlines() if not line.strip().endswith("system-reminder>")]
    return [line.split(HOOK_CONTEXT, 1)[-1].strip() for line in lines if line.strip()]


def next_action(request) -> dict:
    """The next action the Queen got last: from the hooks' `Next: …` line after Agent results,
    else from the helper's answer (`aether next` / `aether record`) in the last tool result."""
    for line in hook_lines(request):
        if line.startswith(NEXT_SPAWN):
            return {"action": "spawn", "spawns": json.loads(line[len(NEXT_SPAWN) :])}
    lines = hook_lines(request)
    for i, line in enumerate(lines):
        if line.startswith("Aether next: "):
            shown = "\n".join(lines[i + 1 :]) if line.endswith("show the user this text:") else line
            return {"action": line[13:].split(" ", 1)[0], "text": shown}
    results = helper_results(request)
    nexts = [r["next"] for r in results if isinstance(r.get("next"), dict)]  # `aether record`s: the last one's
    if nexts:
        return nexts[-1]
    (only,) = results
    return only


def spawn_next(request) -> list[dict]:
    """The Queen's reply to a spawn action: one foreground Agent call per spawn, as given (with
    its `model` when the helper set one)."""
    action = next_action(request)
    assert action["action"] == "spawn", action
    return [
        agent(s["subagent_type"], s["prompt"], s["description"], **({"model": s["model"]} if s.get("model") else {}))
        for s in action["spawns"]
    ]


def is_ref(local: str) -> Matcher:
    """A subagent whose brief is spawn `local`'s (`[aether spawn .aether/spawns/<run>/<local>.md]`)."""
    return Matcher(
        f"is_ref({local})",
        lambda r: re.search(rf"^\[aether spawn \.aether/spawns/[\w-]+/{re.escape(local)}\.md\]", r.first_user_text, re.M),
    )


def body_line(request, text: str, **fill) -> str:
    """The body's command written exactly as `text` (placeholders then filled)."""
    lines = [snip.text for snip in shell_snippets(command_body(request)) if snip.kind != "bang"]
    assert text in lines, f"the command body has no command {text!r}"
    for name, value in fill.items():
        text = text.replace(f"<{name}>", str(value))
    return text


def next_with(request, text: str, *flags: str, stdin: str | None = None, **fill) -> dict:
    """The body's `text` command (e.g. `aether next --build <N>`) with the flags the body says to
    add (each written in it as `--flag`), and `stdin` as a quoted heredoc."""
    line = body_line(request, text, **fill)
    for flag in flags:
        assert f"`{flag}`" in command_body(request), f"the body never says to add {flag}"
        line += f" {flag}"
    if stdin is not None:
        assert "`- <<'EOF'`" in command_body(request) or "- <<'EOF'" in command_body(request)
        line += f" - <<'EOF'\n{stdin.rstrip(chr(10))}\nEOF"
    return bash(line)


def hook_says(text: str) -> Matcher:
    """A request whose hook lines (after the last tool results) hold `text`."""
    return Matcher(f"hook_says({text!r})", lambda r: any(text in line for line in hook_lines(r)))


class Queen:
    """The Queen's turns of one run, numbered in order: `step(reply, *extra_matchers)`."""

    def __init__(self):
        self.steps, self.n = [], 0

    def step(self, reply, *also):
        self.n += 1
        self.steps.append(queen_turn(self.n, *also).reply(reply))


def queen_reply(lessons: str):
    """The Queen of a driven loop: she spawns what the last action hands out, writes the lessons
    it asks for (`lessons`), or shows its text — what /ant:build's and /ant:run's bodies say."""

    def reply(request):
        action = next_action(request)
        if action["action"] == "spawn":
            return spawn_next(request)
        if action["action"] == "lessons":
            return bash(f"aether record lessons - <<'EOF'\n{lessons}EOF")
        return say(action["text"])

    return reply


# ---------------------------------------------------------------- the watcher that runs its checks

CHECK_LINE = re.compile(r"^  - (?:imports|tests|launch): (?!checked by|nothing to check|cannot be run)(.+)$", re.M)


def named_checks(request) -> list[str]:
    """The commands a verification brief names, as written."""
    return CHECK_LINE.findall(request.first_user_text)


def runs_checks(request) -> list:
    """An honest watcher's first turn: one Bash call per command its brief names."""
    return [bash(c) for c in named_checks(request)]


SMOKE_TEST = "def test_ok():\n    assert True\n"


def with_tests(project) -> None:
    """The fixture project has a test (`tests/test_smoke.py`): its verification names pytest."""
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "test_smoke.py").write_text(SMOKE_TEST, "utf-8")


def honest_watcher(matcher: Matcher, answer: str, usage: dict | None = None) -> list:
    """A watcher that runs what its brief names (turn 1), then answers (turn 2)."""
    return [
        subagent("ant:watcher", matcher, turn(1)).reply(runs_checks),
        subagent("ant:watcher", matcher, turn(2)).reply(say(answer), usage=usage),
    ]


# ---------------------------------------------------------------- a colony of two small modules, one wave

TWO_PLAN = {
    "goal": "Two small modules",
    "phases": [
        {
            "id": 1,
            "name": "Modules",
            "description": "two modules",
            "tasks": [
                {"id": "1.1", "description": "mods/a.py", "depends_on": []},
                {"id": "1.2", "description": "mods/b.py", "depends_on": []},
            ],
            "success_criteria": ["both import"],
        }
    ],
}
# The Phase Lead's plan for it: one builder a module (w1: mods/a.py, w2: mods/b.py), one wave.
TWO_ASSIGNMENT = {
    "phase": 1,
    "workers": [
        {"id": "a", "caste": "builder", "tasks": ["1.1"], "writes": ["mods/a.py"]},
        {"id": "b", "caste": "builder", "tasks": ["1.2"], "writes": ["mods/b.py"]},
    ],
}


def two_modules_wave(claude) -> None:
    """A LIGHTWEIGHT colony of TWO_PLAN whose Phase Lead answered: its wave of two builders (w1:
    mods/a.py, w2: mods/b.py) is next, and `mods/` a package."""
    from .harness import aether_ok

    aether_ok(claude, "colony-init", "Two small modules", "--mode", "LIGHTWEIGHT")
    aether_ok(claude, "plan-load", "-", input=json.dumps(TWO_PLAN))
    aether_ok(claude, "next", "--build", "1")
    aether_ok(claude, "record", "lead1", "-", input=json_block(TWO_ASSIGNMENT))
    (claude.project / "mods").mkdir()
    (claude.project / "mods" / "__init__.py").write_text("", "utf-8")


# ---------------------------------------------------------------- a slug helper, two phases


def slug_plan(settings: str = "slug/settings.py") -> dict:
    """A slug helper in two phases: the slug function and its separator setting (kept in
    `settings`, a module or a JSON file), then a command line that needs the first."""
    return {
        "goal": "A slug helper",
        "phases": [
            {
                "id": 1,
                "name": "Core",
                "description": "the slug function and its settings",
                "tasks": [
                    {"id": "1.1", "description": "slug/core.py: slugify(text)", "depends_on": []},
                    {"id": "1.2", "description": f"{settings}: the separator", "depends_on": []},
                ],
                "success_criteria": ["slugify('A B') == 'a-b'"],
            },
            {
                "id": 2,
                "name": "CLI",
                "description": "a command line",
                "tasks": [{"id": "2.1", "description": "slug/cli.py", "depends_on": ["1.1"]}],
                "success_criteria": ["python3 -m slug.cli 'A B' prints a-b"],
            },
        ],
    }


def slug_assignment(settings: str = "slug/settings.py") -> dict:
    """The Phase Lead's plan for phase 1 of `slug_plan`: two independent builders, core and settings."""
    return {
        "phase": 1,
        "workers": [
            {"id": "core", "caste": "builder", "tasks": ["1.1"], "writes": ["slug/core.py", "slug/__init__.py"]},
            {"id": "settings", "caste": "builder", "tasks": ["1.2"], "writes": [settings]},
        ],
    }


SLUG = "def slugify(text, sep='-'):\n    return sep.join(text.lower().split())\n"


# ---------------------------------------------------------------- four small modules, one wave

FOUR_MODULES = {
    "goal": "Four small modules",
    "phases": [
        {
            "id": 1,
            "name": "Modules",
            "description": "four independent modules",
            "tasks": [{"id": f"1.{i}", "description": f"mods/m{i}.py", "depends_on": []} for i in range(1, 5)],
            "success_criteria": ["every module imports"],
        }
    ],
}
# The Phase Lead's plan for it: four builders (m1 … m4) in one wave, one module each (4 workers:
# STANDARD asks the person first).
FOUR_ASSIGNMENT = {
    "phase": 1,
    "workers": [{"id": f"m{i}", "caste": "builder", "tasks": [f"1.{i}"], "writes": [f"mods/m{i}.py"]} for i in range(1, 5)],
}
FOUR_REVIEW = json_block({"findings": [], "summary": "four modules, each imports", "critical_count": 0})
FOUR_VERIFIED = json_block(
    {
        "passed": True,
        "score": 95,
        "summary": "the four modules import",
        "checks": [{"name": "imports", "passed": True, "detail": "mods.m1 … mods.m4 import"}],
        "issues": [],
    }
)


# ---------------------------------------------------------------- a one-task calculator, driven

CALCULATOR = {
    "goal": "A tiny calculator",
    "phases": [
        {
            "id": 1,
            "name": "Calculator",
            "description": "add()",
            "tasks": [{"id": "1.1", "description": "calc.py: add(), with its test", "depends_on": []}],
            "success_criteria": ["add(1, 2) == 3"],
        }
    ],
}


def driven_queen(claude, turns: int, lessons: str = "") -> list:
    """The Queen's turns of a driven `/ant:build 1 --approve` under the markdown commands (the
    first approves the wave plan, each next one does what the last action says); none under the
    mod, which runs the loop."""
    if claude.runtime == "mod":
        return []
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
    for _ in range(turns - 1):
        q.step(queen_reply(lessons))
    return q.steps
