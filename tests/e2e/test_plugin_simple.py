"""The `ant` plugin in real Claude Code: the simple commands, the guard hook, a marketplace install.

The scripted model does what each command body says, literally: it takes the commands out of
the body Claude Code sent (with `$ARGUMENTS` already substituted) and runs them as Bash calls.
So these tests prove that the prompts' own commands are granted by their `allowed-tools`
(no --allowedTools, no skip-permissions) and that the helper does the work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aether.cli.self_check import import_all

from .fake_api import agent, bash, main, say, subagent, tool_error, tool_result_contains, turn
from .harness import NOW, REPO, state
from helpers.git import git
from helpers.plugin import copy_plugin
from helpers.prompts import shell_snippets

pytestmark = pytest.mark.e2e

PLAN = {
    "phases": [
        {
            "id": 1,
            "name": "Foundation",
            "description": "project skeleton",
            "tasks": [
                {"id": "1.1", "description": "create the package", "depends_on": []},
                {"id": "1.2", "description": "todo model", "depends_on": ["1.1"]},
                {"id": "1.3", "description": "test setup", "depends_on": []},
            ],
            "success_criteria": ["pytest runs green"],
        },
        {
            "id": 2,
            "name": "API",
            "description": "endpoints",
            "tasks": [{"id": "2.1", "description": "routes", "depends_on": []}],
            "success_criteria": ["the API answers"],
        },
    ]
}


# ---------------------------------------------------------------- helpers


def command_body(request) -> str:
    """The command body as Claude Code sent it (front matter removed, arguments substituted)."""
    blocks = [b.get("text", "") for b in request.messages[0]["content"] if b.get("type") == "text"]
    bodies = [b for b in blocks if not b.startswith(("<system-reminder>", "<command-message>"))]
    assert len(bodies) == 1, blocks
    return bodies[0]


def body_commands(request) -> list[str]:
    """The shell commands the body tells the Queen to run, in order, as written."""
    return [s.text for s in shell_snippets(command_body(request)) if s.kind != "bang"]


def nth_command(n: int, replace: dict | None = None):
    """A reply running the body's n-th command (after text replacements, e.g. a placeholder)."""

    def reply(request):
        command = body_commands(request)[n]
        for old, new in (replace or {}).items():
            command = command.replace(old, new)
        return bash(command)

    return reply


def results(run) -> list[dict]:
    return [run.tool_result(c) for c in run.tool_calls("Bash")]


def colony(claude, goal="Build a todo API with tests"):
    out = claude.aether("colony-init", "-", input=goal, env=NOW)
    assert out.returncode == 0, out.stderr
    return claude


# ---------------------------------------------------------------- /ant:init


def test_init_starts_the_colony_with_the_goal_from_a_quoted_heredoc(claude):
    goal = 'Build a "todo" API — it\'s $HOME-proof, `not run`; ünïcødé 🐜'
    run = claude.run(
        f"/ant:init {goal}",
        [
            main().reply(nth_command(0)),
            main(tool_result_contains('"ok":true')).reply(nth_command(1)),
            main(tool_result_contains("ACTIVE PHEROMONES")).reply(say("Colony started.")),
        ],
        env=NOW,
    )

    body = command_body(run.main_turns[0])
    assert f"aether colony-init - <<'EOF'\n   {goal}\n   EOF" in body
    assert "/ant:colonize" in body and "/ant:focus" in body and "/ant:plan" in body
    assert run.permission_denials == []
    first, render = results(run)
    answer = json.loads(first["text"])["result"]
    assert answer["goal"] == goal and answer["state"] == "READY"
    assert answer["global_learnings_injected"] == 0
    assert "INIT" in render["text"] and render["is_error"] is False
    saved = state(claude, "COLONY_STATE.json")
    assert saved["goal"] == goal and saved["state"] == "READY"
    assert state(claude, "pheromones.json")["signals"][0]["content"] == goal


def test_init_injects_promoted_global_learnings(claude):
    home = claude.home / ".aether"
    home.mkdir(parents=True)
    (home / "learnings.json").write_text(
        json.dumps(
            {
                "version": 2,
                "learnings": [
                    {
                        "id": "global_1_ab",
                        "content": "bcrypt with 12 rounds is too slow in tests; use 4",
                        "category": "performance",
                        "tags": [],
                        "source_projects": ["p1", "p2", "p3"],
                        "occurrence_count": 3,
                        "promoted": True,
                    }
                ],
            }
        ),
        "utf-8",
    )
    run = claude.run(
        "/ant:init A service that hashes passwords",
        [
            main().reply(nth_command(0)),
            main(tool_result_contains('"global_learnings_injected":1')).reply(nth_command(1)),
            main(tool_result_contains("bcrypt")).reply(say("1 learning from your other projects.")),
        ],
        env={**NOW, "AETHER_HOME": str(home)},
    )
    assert run.permission_denials == []
    feedback = [s for s in state(claude, "pheromones.json")["signals"] if s["type"] == "FEEDBACK"]
    assert len(feedback) == 1 and feedback[0]["source"] == "auto:global"


# ---------------------------------------------------------------- /ant:focus, /ant:redirect, /ant:feedback


@pytest.mark.parametrize("kind", ["focus", "redirect", "feedback"])
def test_signal_commands_emit_the_text_verbatim_and_show_the_render(claude, kind):
    colony(claude)
    text = "the 'auth' module — \"tokens\" & $(sessions)"
    run = claude.run(
        f"/ant:{kind} {text}",
        [
            main().reply(nth_command(0)),
            main(tool_result_contains('"ok":true')).reply(nth_command(1)),
            main(tool_result_contains("ACTIVE PHEROMONES")).reply(say("Signal emitted.")),
        ],
        env=NOW,
    )
    assert run.permission_denials == []
    emitted, render = results(run)
    signal = json.loads(emitted["text"])["result"]
    assert signal["type"] == kind.upper() and signal["content"].rstrip("\n") == text
    assert "warning" not in signal
    assert kind.upper() in render["text"] and "auth" in render["text"]
    stored = state(claude, "pheromones.json")["signals"]
    assert [s["type"] for s in stored] == ["INIT", kind.upper()]


def test_short_signal_content_is_stored_with_a_warning(claude):
    colony(claude)
    run = claude.run(
        "/ant:focus auth module",
        [
            main().reply(nth_command(0)),
            main(tool_result_contains('"warning"')).reply(nth_command(1)),
            main(tool_result_contains("auth module")).reply(say("Stored; it is short, though.")),
        ],
        env=NOW,
    )
    signal = json.loads(results(run)[0]["text"])["result"]
    assert signal["content"].strip() == "auth module" and "shorter than" in signal["warning"]
    assert state(claude, "pheromones.json")["signals"][-1]["content"].strip() == "auth module"


# ---------------------------------------------------------------- /ant:status, /ant:phase, /ant:help


def test_status_output_arrives_with_the_command(claude):
    colony(claude)
    claude.aether("pheromone-emit", "REDIRECT", "-", input="no global state anywhere", env=NOW)
    run = claude.run("/ant:status", [main().reply(say("Shown."))], env=NOW)
    body = command_body(run.main_turns[0])
    expected = claude.aether("status", env=NOW).stdout.strip()
    assert expected.startswith("AETHER COLONY · READY") and expected in body
    assert "no global state anywhere" in body
    assert run.tool_calls("Bash") == [] and run.permission_denials == []


def test_status_without_a_colony_and_with_a_damaged_one(claude):
    run = claude.run("/ant:status", [main().reply(say("No colony."))])
    assert "No colony here yet." in command_body(run.main_turns[0])
    colony(claude)
    (claude.project / ".aether" / "data" / "COLONY_STATE.json").write_text("{broken", "utf-8")
    run = claude.run("/ant:status", [main().reply(say("Damaged."))])
    body = command_body(run.main_turns[0])
    assert '"code":"state_corrupt"' in body  # the error reaches the Queen; the command still runs


@pytest.mark.parametrize("arg, expected", [("1", "Phase 1: Foundation"), ("list", "PHASES (0/2 completed)")])
def test_phase_shows_the_helpers_rendering(claude, arg, expected):
    colony(claude)
    assert claude.aether("plan-load", "-", input=json.dumps(PLAN), env=NOW).returncode == 0
    run = claude.run(
        f"/ant:phase {arg}",
        [
            main().reply(nth_command(0)),
            main(tool_result_contains(expected)).reply(say("Here it is.")),
        ],
        env=NOW,
    )
    (call,) = run.tool_calls("Bash")
    assert call["input"]["command"] == f"aether phase {arg}"
    assert run.permission_denials == []


def test_help_is_static_and_lists_the_flow(claude):
    run = claude.run("/ant:help", [main().reply(say("That is the flow."))])
    body = command_body(run.main_turns[0])
    for name in (
        "/ant:init",
        "/ant:colonize",
        "/ant:focus",
        "/ant:plan",
        "/ant:build",
        "/ant:continue",
        "/ant:pause-colony",
        "/ant:resume-colony",
    ):
        assert name in body
    assert run.tool_calls() == []


# ---------------------------------------------------------------- /ant:pause-colony → new session → /ant:resume-colony


def test_pause_then_resume_in_a_new_session(claude):
    colony(claude)
    assert claude.aether("plan-load", "-", input=json.dumps(PLAN), env=NOW).returncode == 0
    assert claude.aether("build-start", "1", env=NOW).returncode == 0
    note = "User chose SQLite over Postgres.\nNext: wave 1 of phase 1 ('package' and 'tests')."
    pause = claude.run(
        "/ant:pause-colony prefer sqlite",
        [
            main().reply(nth_command(0, {"<the note>": note})),
            main(tool_result_contains("COLONY PAUSED")).reply(say("Paused: /clear when you like.")),
        ],
        env=NOW,
    )
    assert pause.permission_denials == []
    assert "prefer sqlite" in command_body(pause.main_turns[0])
    saved = state(claude, "handoff.json")
    assert saved["note"] == note and saved["snapshot"]["state"] == "EXECUTING"
    assert saved["snapshot"]["next"]["command"] == "aether next --build 1"

    resume = claude.run(
        "/ant:resume-colony",
        [  # a separate `claude -p`: a new session
            main().reply(nth_command(0)),
            main(tool_result_contains("COLONY RESUMED")).reply(say("Resuming phase 1.")),
        ],
        env={"AETHER_NOW": "2026-02-04T12:00:00Z"},
    )
    (shown,) = results(resume)
    assert "User chose SQLite over Postgres." in shown["text"]
    assert "/ant:build 1" in shown["text"] and "Since the pause: nothing changed." in shown["text"]
    assert state(claude, "handoff.json")["resumed_at"] == "2026-02-04T12:00:00Z"


# ---------------------------------------------------------------- the guard hook


def test_a_caste_agent_calling_aether_is_denied_while_the_queen_is_not(claude):
    colony(claude)
    run = claude.run(
        "/ant:status",
        [
            main().reply(bash("aether version")),
            main(tool_result_contains('"ok":true')).reply(agent("ant:builder", "TASK-G: record your result yourself", "builder")),
            subagent("ant:builder").reply(bash("aether event-add note builder 'did it'")),
            subagent("ant:builder", tool_error()).reply(say("RESULT: done, not recorded")),
            main(tool_result_contains("RESULT: done")).reply(agent("ant:watcher", "TASK-W: review", "watcher")),
            subagent("ant:watcher").reply(bash("echo reviewed > review.txt")),
            subagent("ant:watcher", tool_error()).reply(say("REVIEW: read-only, as expected")),
            main(tool_result_contains("REVIEW:")).reply(bash("aether status")),
            main(tool_result_contains("AETHER COLONY")).reply(say("done")),
        ],
        env=NOW,
    )

    queen = results(run)
    assert [r["is_error"] for r in queen] == [False, False]
    builder = run.subagent_turns("ant:builder")
    denied = builder[1].tool_results()[0]
    assert denied["is_error"] is True and "Only the Queen runs `aether`" in denied["text"]
    watcher = run.subagent_turns("ant:watcher")
    assert watcher[1].tool_results()[0]["is_error"] is True
    assert "read-only" in watcher[1].tool_results()[0]["text"]
    assert not (claude.project / "review.txt").exists()
    assert "note" not in [e["type"] for e in state(claude, "events.json")["events"]]


def test_the_queens_own_aether_calls_need_no_slash_command(claude):
    """A plain prompt, not a slash command: no `allowed-tools` grant. The guard allows the Queen's
    own `aether …` calls (an ant's answer may arrive after the command's turn ended, and the Queen
    goes on with `aether next`); the approval gate and everything else stay as they were."""
    run = claude.run(
        "Which version is the helper?",
        [
            main(turn(1)).reply(bash("aether version")),
            main(turn(2)).reply(bash("aether bug approve b1")),
            main(turn(3)).reply(bash("touch made-by-the-model")),
            main(turn(4)).reply(say("done")),
        ],
        env=NOW,
    )
    version, approve, touch = results(run)
    assert version["is_error"] is False and json.loads(version["text"])["ok"] is True
    assert approve["is_error"] is True and "the user's decision" in approve["text"]
    assert touch["is_error"] is True and not (claude.project / "made-by-the-model").exists()
    assert [d["tool_input"]["command"] for d in run.permission_denials] == ["aether bug approve b1", "touch made-by-the-model"]


BROKEN = {
    # the guard's Python crashes as it starts (a broken install); guard.sh hands on its exit status
    "guard": ("hooks/guard.py", 'raise ImportError("tree_sitter_bash: a broken install")\n'),
    # the Agent hook's script fails before the helper can answer
    "agent": ("hooks/agent.sh", "#!/bin/sh\necho 'the Agent hook failed' >&2\nexit 1\n"),
}


def broken_plugin(folder: Path, hook: str, *, on_failure: bool) -> Path:
    """A copy of the plugin whose guard or Agent PreToolUse hook errors whenever it runs; without
    `on_failure`, also without the hooks' `onFailure` keys (Claude Code's default, `continue`)."""
    plugin = copy_plugin(folder, link_venv=True)
    path, text = BROKEN[hook]
    (plugin / path).write_text(text, "utf-8")
    if not on_failure:
        hooks = json.loads((plugin / "hooks" / "hooks.json").read_text("utf-8"))
        for entries in hooks["hooks"].values():
            for entry in entries:
                for each in entry["hooks"]:
                    each.pop("onFailure", None)
        (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks), "utf-8")
    return plugin


@pytest.mark.oldest
@pytest.mark.parametrize("hook", ["guard", "agent"])
def test_a_guarding_hook_that_errors_refuses_the_call_it_guards(claude, tmp_path, hook):
    """`"onFailure": "block"` (hooks/hooks.json) on the guard and on the Agent hook that puts the
    briefs in: when the hook itself fails, the call it guards is refused. The same broken copy
    without the key shows Claude Code's default: the call goes ahead — a read-only watcher writes a
    file, an ant starts."""
    colony(claude)
    written = claude.project / "review.txt"
    write = bash(f"python3 -c \"open('{written.name}', 'w').write('by a read-only ant')\"")  # /ant:build grants python3
    ran = {}
    for on_failure in (True, False):
        plugin = broken_plugin(tmp_path / f"plugin-{on_failure}", hook, on_failure=on_failure)
        watcher = [
            subagent("ant:watcher", turn(1)).reply(write),
            subagent("ant:watcher", turn(2)).reply(say("REVIEW: done")),
        ]
        refused = hook == "agent" and on_failure  # then no watcher ever starts
        run = claude.run(
            "/ant:build 1",  # a command whose grant allows the write: only the guard refuses it
            [
                main(turn(1)).reply(agent("ant:watcher", "TASK-W: review the module", "watcher")),
                *([] if refused else watcher),
                main(turn(2)).reply(say("done")),
            ],
            plugin_dirs=[plugin],
            env=NOW,
        )
        ran[on_failure] = (written.exists(), len(run.subagent_turns("ant:watcher")), [d["tool_name"] for d in run.permission_denials])
        if on_failure:
            guarded = run.subagent_turns("ant:watcher")[1].tool_results()[0] if hook == "guard" else run.main_turns[1].tool_results()[0]
            assert guarded["is_error"] is True and "hook error" in guarded["text"] and "onFailure" in guarded["text"], guarded
        written.unlink(missing_ok=True)
    if hook == "guard":
        assert ran == {True: (False, 2, ["Bash"]), False: (True, 2, [])}
    else:
        assert ran == {True: (False, 0, ["Task"]), False: (False, 2, ["Bash"])}  # the ant ran; the guard, intact, refused its write


# ---------------------------------------------------------------- a real marketplace install


def git_repo(folder: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "plugin"]):
        git(folder, *args)


def marketplace(claude, source: Path) -> Path:
    """A folder marketplace whose `ant` entry is fetched from a git repository (into the cache)."""
    folder = source.parent / "market"
    (folder / ".claude-plugin").mkdir(parents=True)
    own = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text("utf-8"))
    own["plugins"][0]["source"] = {"source": "url", "url": f"file://{source}"}
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(own), "utf-8")
    return folder


@pytest.mark.parametrize("how", ["folder", "git"])
def test_marketplace_install_builds_the_helper_and_runs_it(claude, tmp_path, how):
    """`plugin marketplace add` + `plugin install ant@aether`, then a command without
    --plugin-dir: the SessionStart hook builds the venv in CLAUDE_PLUGIN_DATA and `aether`
    (found through the pointer the hook writes) waits for it and answers."""
    source = copy_plugin(tmp_path / "plugin")
    if how == "git":
        git_repo(source)
        market = marketplace(claude, source)
    else:
        market = source  # the repository's own .claude-plugin/marketplace.json
    for args in (("plugin", "marketplace", "add", market), ("plugin", "install", "ant@aether")):
        proc = claude.cli(*args)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    listed = json.loads(claude.cli("plugin", "list", "--json").stdout)  # 2.1.332 lists its built-in plugins too
    (installed,) = [p for p in listed if p["id"] == "ant@aether"]
    assert installed["enabled"] is True
    root = Path(installed["installPath"]) if how == "git" else source
    assert not (root / ".venv").exists()

    claude.plugin_dirs = []  # the installed plugin only
    version = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text("utf-8"))["version"]
    run = claude.run(
        "/ant:help",
        [
            main().reply(bash("aether version", timeout_ms=300000)),
            main(tool_result_contains(f'"result":"{version}"')).reply(say("installed and working")),
        ],
        timeout=400,
    )
    assert "--plugin-dir" not in run.argv
    (result,) = results(run)
    assert result["is_error"] is False and json.loads(result["text"]) == {"ok": True, "result": version}

    hooks = [e for e in run.events if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"]
    assert any("installing its helper" in (e.get("stdout") or "") for e in hooks), hooks
    data = claude.home / ".claude" / "plugins" / "data" / "ant-aether"
    pointer = Path((root / ".venv-location").read_text("utf-8").strip())
    assert pointer.parent == data / "venvs" and (pointer / ".aether-ready").exists()

    again = claude.run(
        "/ant:help",
        [  # the next session: the hook is a no-op
            main().reply(bash("aether version")),
            # every module of the installed helper imports: no layer left out of the install
            main(tool_result_contains(f'"result":"{version}"')).reply(bash("aether self-check")),
            main(tool_result_contains('"modules":')).reply(say("still working")),
        ],
    )
    hooks = [e for e in again.events if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"]
    assert hooks and all((e.get("stdout") or "") == "" for e in hooks)
    checked = results(again)[-1]
    assert checked["is_error"] is False
    assert json.loads(checked["text"]) == {"ok": True, "result": {"modules": len(import_all()[0])}}
    # the installed plugin's mod loads too and serves /ant:help with its helper: no model request
    claude.runtime = "mod"
    served = claude.run("/ant:help", [])
    assert served.requests == [] and "/ant:build <N>" in served.text
