#!/usr/bin/env python3
"""PreToolUse guard for Aether (hooks/guard.sh runs it with the helper's venv Python).

Claude Code passes the tool call as JSON on stdin; inside a subagent the input carries
`agent_type` (e.g. `ant:builder`) and `agent_id`, in the Queen's own thread it does not. Bash
commands are read with tree-sitter-bash (hooks/shell.py): every command a line may run, in a
pipeline, a list, `$(…)`, a function, an `sh -c '…'` body. The rules, one module each under
hooks/rails/ (the names and options they check against: rails/tables.py; what they read from
disk: rails/state.py), applied to each call by `decide` below:

1. approval.py — Nobody in Claude Code approves a bug's fix plan, the Queen included: approval is
   a person's typed `/ant:bug approve <id>` (hooks/approve.sh), and no thread writes its tickets
   (`.aether/typed/`), the Bug Bash state (`.aether/bugs/`) or the settings (`.aether/config.yaml`)
   by a file tool or a write form this guard reads (colony.PersonOnly), nor gives a command a Bug
   Bash setting (`AETHER_BUG_…`). `aether bug approve` approves nothing, but is refused too (it says
   so sooner), and so are the prompt hook run by hand (its real path, however spelled) and its step
   (`aether bug typed-approval`),
   the word spelled so the shell builds it (`app""rove`, `a\\pprove`, `$'\\x61pprove'`, a
   variable), Claude Code's variables unset or overridden (`env -u`, `env -i`, `unset`,
   `CLAUDECODE= aether`, `export CLAUDECODE=`), and `aether` run through a pseudo-terminal
   (`script`, `expect`, `unbuffer`, `socat`, python's pty, `ssh -t`): attempts to step around it.
2. queen.py — The Queen's own helper: a main-thread Bash command made only of `aether …` calls
   (fed by a quoted here-document, or by `echo … |`) is allowed without a permission prompt — a
   slash command's `allowed-tools` lasts only its turn, and an ant's answer may arrive after it.
   Claude Code still applies the user's own deny and ask rules. Anything else: no decision.
   (hooks/guard.sh answers the plainest form, `aether <plain words>`, itself.)
3. only_queen.py — Only the Queen calls `aether`: an ant's command that runs it is denied.
4. read_only.py — Read-only castes (and the Bug Bash researcher) change no file: every write form
   is refused (redirections into files, before or after a here-document, `>(…)`, `sed -i`, `tee`,
   `cp`, `git commit`, code that opens a file for writing …) and so are the options that run other
   commands (`sed` `e`/`w`, `find -exec`, `awk` `system()`, `git -c core.*=`, `--ext-diff` …).
   They run known read commands, tests and checks, and the project's own programs; anything else
   is refused with what to use. Scouts write notes under .aether/research/ only.
5. read_only.py — The Bug Bash analyzer and planner only read and search: known search commands
   only.
6. builders.py — A builder of a build whose builders work in their own git worktrees stays in its
   own working copy (`.aether/worktrees/<build>/<node>`, found from its spawn: Claude Code's
   record of the Agent call that started it, or the WORKING COPY its brief names): Write/Edit only
   there (its report file aside); every Bash command starts with `cd <it> &&`, and no path, `cd`,
   `-C`, nested body or code string reaches the main checkout or a sibling's copy; no variable
   whose value the guard cannot see, no `cd -`, `popd`, `eval`, `CDPATH=`; no git command that
   moves refs or changes settings (the helper merges its work). When the state that says so cannot
   be read, the builder is refused, not let through. A `cd` inside `( … )` moves no command after
   it.
7. colony.py — No ant, builders included, writes the colony's own files: anything under `.aether/`
   (and the `AETHER_DATA_DIR` folder, and `~/.aether/`) but a scout's notes in
   `.aether/research/`, a builder's report file and an isolated builder's own worktree — by a file
   tool, or any write form of rule 4 in Bash (paths resolved through `..`, links, braces, patterns
   and the line's `cd`s, `pushd`s and `CDPATH=`; `.AETHER` is `.aether`); nor copies or extracts a
   whole folder into one that holds `.aether/`, nor runs `git stash --all`; nor runs code (Perl,
   PHP, Ruby, awk, Python and Node that write, through `poetry run`/`uv run` too) that names them.
   Reading is fine. A path it cannot see is refused in a command that spells `.aether`.
8. mod_grant.py — An ant the mod sent (outside any command's turn) is granted what the command's
   `allowed-tools` give the Queen's ants, once the rules above let its call through.

When the shell parser is not installed, ants are refused (naming the fix) and the Queen's
commands get no decision unless they touch the approval gate.

This is a guard rail against mistakes, not a sandbox: a program an ant writes and runs can
still write anywhere.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # loaded by its path (the tests): the rules beside it
    sys.path.insert(0, HERE)

from rails.approval import APPROVE_REFUSED, approves_bug, bypass  # noqa: E402
from rails.colony import COLONY_ONLY, PERSON_ONLY, PersonOnly, _colony_file, _person_only_file  # noqa: E402
from rails.mod_grant import mod_grant  # noqa: E402
from rails.reading import _braces as _braces  # noqa: E402 — the tests read it here
from rails.reading import _flat  # noqa: E402
from rails.state import _project  # noqa: E402
from rails.tables import CLAUDE_CODE_VARS, FILE_TOOLS, READ_ONLY, READ_ONLY_HINTS, SEARCH_ONLY, WRITE_ANYWHERE, WRITE_UNDER  # noqa: E402


def _deny(reason: str) -> dict:
    return {"permissionDecision": "deny", "permissionDecisionReason": reason}


def _ant_bash(caste: str, script, event: dict) -> str | None:
    from rails.colony_bash import colony_bash  # start-up: a file tool's call needs none of these rules
    from rails.only_queen import ONLY_QUEEN, runs_aether
    from rails.read_only import read_only

    if runs_aether(script):
        return ONLY_QUEEN
    own = colony_bash(caste, script, event)
    if own:
        return own
    if caste in SEARCH_ONLY:
        found = read_only(script, True, None)
        if found:
            return (
                f"The {caste} agent only reads and searches: `{found[0]}` is refused. Use "
                f"Read, or grep, find, ls, cat, head, tail, sed -n, git log/show/diff/blame; "
                f"take what running the code showed from the reproduction."
            )
    if caste in READ_ONLY or caste in WRITE_UNDER:
        research = os.path.realpath(os.path.join(_project(), WRITE_UNDER[caste])) if caste in WRITE_UNDER else None
        found = read_only(script, False, research)
        if found:
            return (
                f"The {caste} caste is read-only: `{found[0]}` {found[1]}. Use read-only commands (ls, cat, "
                f"grep, find, git log/diff/show), run tests, and report what should change. " + READ_ONLY_HINTS.get(caste, "")
            ).strip()
    if caste in WRITE_ANYWHERE:
        from rails.builders import isolated_builder  # start-up: only a builder's call needs the rule

        return isolated_builder("Bash", event.get("tool_input") or {}, event, script)
    return None


def _ant_file(caste: str, tool: str, tool_input: dict, event: dict) -> str | None:
    own = _colony_file(caste, tool_input, event)
    if own:
        return own
    if caste in WRITE_ANYWHERE:
        from rails.builders import isolated_builder  # start-up: only a builder's call needs the rule

        return isolated_builder(tool, tool_input, event)
    if caste in READ_ONLY:
        return f"The {caste} caste is read-only: report the change instead of making it."
    if caste in WRITE_UNDER:
        allowed = WRITE_UNDER[caste]
        path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
        project = _project()
        rel = os.path.relpath(os.path.realpath(os.path.join(project, path)), os.path.realpath(project))
        if not (rel + "/").startswith(allowed) or rel.startswith(".."):
            return f"The {caste} caste writes only under {allowed} (asked for {path})."
    return None


def _without_parser(event: dict, problem: str) -> dict | None:
    """No shell parser: ants are refused; the Queen's commands that touch the gate too."""
    agent = str(event.get("agent_type") or "")
    if agent.startswith("ant:"):
        return _deny(
            f"Aether's guard cannot read this command: its shell parser is not installed ({problem}). "
            f"Stop, and say in your result block that the user must run `make install` in the Aether "
            f"plugin folder (or start a new session so the plugin's environment is built)."
        )
    tool_input = raw if isinstance(raw := event.get("tool_input"), dict) else {}
    flat = _flat(str(tool_input.get("command") or ""))
    if agent or not ("pprov" in flat or "unset" in flat or any(v.lower() in flat for v in CLAUDE_CODE_VARS)):
        return None
    return _deny(
        f"{APPROVE_REFUSED} (The guard cannot read this command: its shell parser is not installed "
        f"— {problem}; run `make install` in the Aether plugin folder.)"
    )


TYPE_CHECKING = False  # what the type checker reads as True, without importing typing (start-up)
if TYPE_CHECKING:
    import shell
else:
    shell = None  # hooks/shell.py, imported when a Bash command is to be read


def _load_shell():
    global shell
    if shell is None:
        if HERE not in sys.path:
            sys.path.insert(0, HERE)
        import shell as module

        shell = module
    return shell


def decide(event: dict) -> dict | None:
    """The decision on this tool call — {"permissionDecision": "deny" or "allow",
    "permissionDecisionReason": …} — or None to let Claude Code decide as usual."""
    agent = str(event.get("agent_type") or "")
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    ours = agent.startswith("ant:")
    caste = agent.split(":", 1)[1] if ours else ""
    if tool in FILE_TOOLS:
        why = _ant_file(caste, tool, tool_input, event) if ours else _person_only_file(tool_input, event) if not agent else None
        return _deny(why) if why else (mod_grant(tool, event) if ours else None)
    if tool != "Bash":
        return None
    try:
        _load_shell()
    except (ImportError, OSError, ValueError) as exc:
        return _without_parser(event, f"{type(exc).__name__}: {exc}")
    command = str(tool_input.get("command") or "")
    script = shell.parse(command)
    if approves_bug(script):
        return _deny(APPROVE_REFUSED)
    why = bypass(script, command)
    if why:
        return _deny(f"{APPROVE_REFUSED} (This command {why}.)")
    if not agent:  # the Queen's own thread
        from rails.colony_bash import colony_bash  # start-up: only a Bash call needs these rules
        from rails.queen import queen

        why = colony_bash("", script, event, PersonOnly(event))
        return _deny(why.replace(COLONY_ONLY, PERSON_ONLY)) if why else queen(script)
    if not ours:
        return None  # not one of ours
    why = _ant_bash(caste, script, {**event, "tool_input": tool_input})
    return _deny(why) if why else mod_grant("Bash", event, script)


def judge(event: object) -> dict | None:
    """`decide`, for any input: what is not a JSON object is not judged, and a failure of a rule
    refuses an ant's call (a bug here must not let an ant through) and leaves any other's alone.
    hooks/guard.sh (one call per process) and hooks/guard_serve.py (the mod's) answer with it."""
    if not isinstance(event, dict):
        return None
    try:
        return decide(event)
    except Exception as exc:
        if str(event.get("agent_type") or "").startswith("ant:"):
            return _deny(f"Aether's guard failed on this command ({type(exc).__name__}: {exc}): stop, and say so in your result block.")
        return None


def main() -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        return 0  # not ours to judge
    decision = judge(event)
    if decision:
        json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
