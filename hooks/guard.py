#!/usr/bin/env python3
"""PreToolUse guard for Aether's agents (stdlib only; runs on every tool call, so it is small).

Claude Code passes the tool call as JSON on stdin; inside a subagent the input carries
`agent_type` (e.g. `ant:builder`), in the Queen's own thread it does not. Two rules:

1. Only the Queen calls `aether`: a subagent's Bash command that runs it is denied, with a
   reason telling the worker to return its result block instead.
2. Read-only castes don't write: their Write/Edit calls and file-changing Bash commands are
   denied (scouts may write research briefs under .aether/research/ only).

This is a guard rail against mistakes, not a sandbox: a determined program can still write.
"""

from __future__ import annotations

import json
import os
import shlex
import sys

# agent name (without the `ant:` prefix) → what it may change
WRITE_ANYWHERE = {"builder"}
WRITE_UNDER = {"scout": ".aether/research/"}
READ_ONLY = {"colonizer", "route-setter", "watcher", "architect", "bug-analyzer", "bug-planner"}
# bug-researcher: may run commands (reproductions) and write scratch files, but not call aether

FILE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
# Command words that change files or repository state.
MUTATING = {
    "rm", "rmdir", "mv", "cp", "dd", "tee", "touch", "mkdir", "chmod", "chown", "ln", "truncate",
    "shred", "install", "patch", "rsync", "unlink", "sponge",
}
GIT_MUTATING = {
    "add", "commit", "reset", "checkout", "switch", "restore", "rm", "mv", "push", "pull",
    "merge", "rebase", "stash", "tag", "clean", "apply", "am", "cherry-pick", "revert",
    "update-ref", "branch", "fetch", "init", "clone", "worktree", "gc", "prune",
}
PREFIXES = {"env", "sudo", "command", "exec", "time", "nohup", "nice", "timeout", "xargs", "builtin"}
SHELLS = {"sh", "bash", "zsh", "dash"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "\n", "|&", ";;"}


def _parts(command: str) -> list[list[str]]:
    """Split a shell command into simple commands (token lists), including `$( … )` and
    backtick bodies, and `sh -c '…'` strings, recursively."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: judge the raw words
        tokens = command.split()
    parts, current = [], []
    for token in tokens:
        if token in SEPARATORS or set(token) <= set(";&|()"):
            if current:
                parts.append(current)
            current = []
        else:
            current.append(token)
    if current:
        parts.append(current)
    nested = []
    for text in _substitutions(command):
        nested.extend(_parts(text))
    for part in parts:
        words = _strip_prefixes(part)
        if len(words) >= 3 and os.path.basename(words[0]) in SHELLS and words[1] == "-c":
            nested.extend(_parts(words[2]))
    return parts + nested


def _substitutions(command: str) -> list[str]:
    """Bodies of `$( … )` and `` ` … ` `` in a command (quoted or not: shells expand them
    inside double quotes)."""
    bodies, i = [], 0
    while i < len(command):
        if command.startswith("$(", i):
            depth, j = 1, i + 2
            while j < len(command) and depth:
                depth += {"(": 1, ")": -1}.get(command[j], 0)
                j += 1
            bodies.append(command[i + 2 : j - 1])
            i = j
        elif command[i] == "`":
            j = command.find("`", i + 1)
            if j < 0:
                break
            bodies.append(command[i + 1 : j])
            i = j + 1
        else:
            i += 1
    return bodies


def _strip_prefixes(words: list[str]) -> list[str]:
    """Drop `FOO=bar` assignments and wrappers like env/sudo/xargs to reach the real command."""
    i = 0
    while i < len(words):
        word = words[i]
        if "=" in word and not word.startswith("=") and word.split("=", 1)[0].isidentifier():
            i += 1
        elif os.path.basename(word) in PREFIXES:
            i += 1
            while i < len(words) and words[i].startswith("-"):  # wrapper options
                i += 1
        else:
            break
    return words[i:]


def runs_aether(command: str) -> bool:
    for part in _parts(command):
        words = _strip_prefixes(part)
        if words and os.path.basename(words[0]) == "aether":
            return True
    return False


def writes_files(command: str) -> bool:
    """True when a command obviously changes files: redirection into a file, a mutating
    command word, `sed -i`, or a mutating git subcommand."""
    if _raw_redirects(command):
        return True
    for part in _parts(command):
        words = _strip_prefixes(part)
        if not words:
            continue
        name = os.path.basename(words[0])
        if name in MUTATING:
            return True
        if name == "sed" and any(w == "-i" or w.startswith("-i") or w == "--in-place" for w in words[1:]):
            return True
        if name == "git":
            if _git_subcommand(words[1:]) in GIT_MUTATING:
                return True
        if name in ("find",) and any(w in ("-delete", "-exec", "-execdir", "-ok") for w in words):
            return True
    return False


def _git_subcommand(args: list[str]) -> str:
    """The subcommand of `git [options] <sub> …` (skipping -C/-c and their values)."""
    i = 0
    while i < len(args):
        if args[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"):
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return args[i]
    return ""


def _raw_redirects(command: str) -> list[str]:
    """Output redirections that target a file (not `2>&1`, not `>/dev/null`)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars="<>&|;()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    found = []
    for i, token in enumerate(tokens):
        if token in (">", ">>", "&>", ">|", "&>>"):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if target.startswith("&") or target == "/dev/null" or target.startswith("/dev/std"):
                continue
            if i > 0 and tokens[i - 1].isdigit() and target.startswith("&"):
                continue
            found.append(token if token != "&>>" else ">>")
    return found


def decide(event: dict) -> str | None:
    """The reason to deny this tool call, or None to let Claude Code decide as usual."""
    agent = str(event.get("agent_type") or "")
    if not agent:
        return None  # the Queen's own thread
    if not agent.startswith("ant:"):
        return None  # not one of ours
    caste = agent.split(":", 1)[1]
    tool = event.get("tool_name")
    tool_input = event.get("tool_input") or {}
    if tool == "Bash":
        command = str(tool_input.get("command") or "")
        if runs_aether(command):
            return (
                "Only the Queen runs `aether`. Finish your task and put what you found or did "
                "in your result block; the Queen records it."
            )
        if (caste in READ_ONLY or caste in WRITE_UNDER) and writes_files(command):
            return (
                f"The {caste} caste is read-only: this command would change files. Use read-only "
                f"commands (ls, cat, grep, find, git log/diff/show) and report what should change."
            )
        return None
    if tool in FILE_TOOLS:
        if caste in READ_ONLY:
            return f"The {caste} caste is read-only: report the change instead of making it."
        if caste in WRITE_UNDER:
            allowed = WRITE_UNDER[caste]
            path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
            project = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
            rel = os.path.relpath(os.path.realpath(os.path.join(project, path)), os.path.realpath(project))
            if not (rel + "/").startswith(allowed) or rel.startswith(".."):
                return f"The {caste} caste writes only under {allowed} (asked for {path})."
    return None


def main() -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        return 0  # not ours to judge
    reason = decide(event) if isinstance(event, dict) else None
    if reason:
        json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                          "permissionDecision": "deny",
                                          "permissionDecisionReason": reason}}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
