"""Rule 1, the approval gate (every thread, the Queen's included): nobody in Claude Code approves
a bug's fix plan — `aether bug approve`, the prompt hook's step run by hand, and the ways around
the gate (the word built by the shell, Claude Code's variables unset or overridden, a
pseudo-terminal) are refused. What only a person's typed command writes: colony.PersonOnly."""

from __future__ import annotations

import os

from shell_words import name_of, unwrap

from .reading import _args, _braces, _flat, _pattern
from .state import _project
from .tables import CLAUDE_CODE_VARS, DECLARERS, PTY_WRAPPERS, PYTHON

APPROVE_REFUSED = (
    "Approving a fix plan is the user's decision, and no command makes it: tell them to review "
    "the plan and type `/ant:bug approve <id>` in Claude Code themselves."
)
APPROVING = {"approve", "typed-approval"}  # the `bug` subcommands: the refusal, and the prompt hook's step
APPROVE_HOOK = "approve.sh"  # the prompt hook that writes a typed approval's ticket
HOOKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the plugin's hooks/ folder
BUG_SETTINGS = "AETHER_BUG_"  # Bug Bash's settings from the environment: where its state lives, what it runs
HOOK_RUNNERS = {"sh", "bash", "dash", "zsh", "ksh", "busybox", "source", "."}  # what runs a script named after it


def _runs_hook(words) -> bool:
    """The command runs the plugin's prompt hook (hooks/approve.sh) — as its program or as the
    script a shell runs — by any spelling that reaches it: a pattern, braces, a link, another
    name of the plugin's folder."""
    import glob  # noqa: PLC0415 — only for a command that may name the hook

    hook = os.path.realpath(os.path.join(HOOKS, APPROVE_HOOK))
    name = name_of(words[0]) if words else ""
    scripts = [words[0]] if name not in HOOK_RUNNERS else [w for w in words[1:] if not w.text.startswith("-")][:1]
    for word in scripts:
        for text in _braces(word.text) or []:
            path = os.path.join(_project(), os.path.expanduser(text))
            found = glob.glob(path) if _pattern(text) else [path]
            if any(os.path.realpath(p) == hook for p in found):
                return True
    return False


def approves_bug(script) -> bool:
    """True when a command runs `aether bug approve` or the prompt hook's step (`bug
    typed-approval`, `hooks/approve.sh`) by hand; asking for --help is fine."""
    for cmd in script.commands:
        at, _, _ = unwrap(cmd.words)
        words = cmd.words[at:]
        if words and _runs_hook(words):
            return True
        if not words or name_of(words[0]) != "aether" or {"-h", "--help"} & {w.text for w in words}:
            continue
        bug = [w.text for w in _args(words[1:])][:2]
        if bug[:1] == ["bug"] and bug[1:] and bug[1] in APPROVING:
            return True
    return False


def _overrides(cmd, seen) -> str | None:
    """Claude Code's variables assigned (`X= cmd`, `export X=`, `env X=`) or unset; a Bug Bash
    setting (`AETHER_BUG_…`) given to a command: where its state lives and what it runs are the person's."""
    for name, _ in cmd.assigns + seen["assigns"]:
        if name in CLAUDE_CODE_VARS:
            return "overrides " + name
        if name.startswith(BUG_SETTINGS):
            return f"sets {name}, a Bug Bash setting (the person's, in their own environment)"
    texts = cmd.texts()
    if texts and texts[0] in ("unset", *DECLARERS):
        for text in texts[1:]:
            if text.split("=", 1)[0].startswith(BUG_SETTINGS) and "=" in text:
                return f"sets {text.split('=', 1)[0]}, a Bug Bash setting (the person's, in their own environment)"
            if text.split("=", 1)[0] in CLAUDE_CODE_VARS:
                return ("overrides " if "=" in text else "unsets ") + text.split("=", 1)[0]
    if set(seen["unset"]) & CLAUDE_CODE_VARS:
        return "unsets Claude Code's variables (env -u)"
    return None


def bypass(script, command: str) -> str | None:
    """Why a command steps around the approval gate (None when it does not)."""
    flat = _flat(command)
    mentions = "aether" in flat or ("bug" in flat and "pprov" in flat)
    if script.errors and "bug" in flat and "pprov" in flat:
        return "is not plain shell the guard can read"
    for cmd in script.commands:
        at, wrappers, seen = unwrap(cmd.words)
        why = _overrides(cmd, seen)
        if why:
            return why
        if seen.get("clear") and ("bug" in flat or "pprov" in flat):
            return "clears the environment (env -i)"
        words = cmd.words[at:]
        if not words:
            continue
        name = name_of(words[0])
        pty = next((w for w in [*wrappers, name] if w in PTY_WRAPPERS), None)
        if mentions and pty:
            return f"runs aether through a pseudo-terminal ({pty})"
        if mentions and PYTHON.match(name or "-") and "pty" in " ".join(w.text for w in words[1:]):
            return "runs aether through a pseudo-terminal (python pty)"
        if (name == "eval" or not words[0].static or seen.get("split")) and ("pprov" in flat or "bug" in flat):
            return "builds the command at run time"
        if name == "aether" and not {"-h", "--help"} & {w.text for w in words}:
            args = _args(words[1:])
            if args[:1] and args[0].text == "bug" and (len(args) == 1 or not args[1].static):
                return "names the bug subcommand through the shell"
            if (
                args[:1]
                and args[0].text == "bug"
                and "pprov" in flat
                and ("pprov" in args[1].text.lower() or any(c in command for c in "$`\\"))
            ):
                return "spells `approve` so the shell builds it"
    return None
