#!/usr/bin/env python3
"""PreToolUse guard for Aether's agents (stdlib only; runs on every tool call, so it is small).

Claude Code passes the tool call as JSON on stdin; inside a subagent the input carries
`agent_type` (e.g. `ant:builder`), in the Queen's own thread it does not. The rules:

1. Only the Queen calls `aether`: a subagent's Bash command that runs it is denied, with a
   reason telling the worker to return its result block instead.
2. Read-only castes don't write: their Write/Edit calls and file-changing Bash commands are
   denied (scouts may write research briefs under .aether/research/ only).
3. The Bug Bash analyzer and planner only read and search (seed 003 gives them Read, Glob and
   Grep, no Bash): their Bash runs only the commands in SEARCH_COMMANDS.
4. Nobody in Claude Code approves a bug's fix plan, the Queen included: `aether bug approve`
   is a person's act, in their own terminal. Also refused: the word spelled so the shell
   builds it (`app""rove`, `a\\pprove`, `$'\\x61pprove'`, a variable), Claude Code's
   variables unset or overridden (`env -u`, `env -i`, `unset`, `CLAUDECODE= aether`,
   `export CLAUDECODE=`), and `aether` run through a pseudo-terminal (`script`, `expect`,
   `unbuffer`, `socat`, python's pty, `ssh -t`) — the helper checks the same signals itself.

5. A builder of a build whose builders work in their own git worktrees changes only its
   working copy: its Write/Edit calls stay inside one of the build's worktrees
   (`.aether/worktrees/<build>/<node>`) — its report file under .aether/spawns/ aside — and
   each Bash command starts with `cd <worktree> &&` (every command starts in the main checkout).

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
READ_ONLY = {"colonizer", "route-setter", "watcher", "architect",
             "bug-researcher", "root-cause-analyzer", "fix-planner"}
# The Bug Bash agents (names as `aether bug` gives them in agent_step): the researcher runs
# reproductions but changes no file (the fix plan must match the files byte for byte); the
# analyzer and planner only search and read.
READ_ONLY_HINTS = {"bug-researcher": "Run a reproduction from stdin instead of saving it "
                                     "(`.venv/bin/python - <<'EOF'` … `EOF`, or `python3 -c '…'`)."}
SEARCH_ONLY = {"root-cause-analyzer", "fix-planner"}
SEARCH_COMMANDS = {  # Glob and Grep through Bash; `sed` only with -n (print lines)
    "grep", "egrep", "fgrep", "rg", "find", "ls", "tree", "cat", "head", "tail", "wc", "sed",
    "sort", "uniq", "cut", "nl", "file", "stat", "diff", "pwd", "echo", "true", "cd", "basename",
    "dirname", "realpath", "readlink", "tr", "git",
}
GIT_SEARCH = {"log", "show", "diff", "blame", "grep", "ls-files", "status", "rev-parse", "shortlog",
              "describe"}
FIND_ACTIONS = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                "-fls"}

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
PREFIXES = {"env", "sudo", "command", "exec", "time", "nohup", "nice", "timeout", "xargs", "builtin",
            "setsid", "stdbuf", "ionice", "chrt", "taskset", "doas", "runuser", "su"}
SHELLS = {"sh", "bash", "zsh", "dash"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "\n", "|&", ";;"}
# Variables Claude Code sets for its commands: the helper's approval gate reads them.
CLAUDE_CODE_VARS = {"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID",
                    "CLAUDE_CODE_EXECPATH", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_PID",
                    "CLAUDE_CODE_SSE_PORT", "CLAUDE_AGENT_SDK_VERSION"}
# Programs that give a command a pseudo-terminal (the gate wants a person's terminal).
PTY_WRAPPERS = {"script", "expect", "unbuffer", "socat", "faketty", "empty", "ptyrun", "tmux",
                "screen", "zpty", "dtach", "abduco", "ssh"}
DECLARERS = {"export", "declare", "typeset", "readonly", "local"}
APPROVE_REFUSED = ("Approving a fix plan is the user's decision, made outside Claude Code: tell "
                   "them to review the plan and run `aether bug approve <id>` in their own terminal.")


def _parts(command: str) -> list[list[str]]:
    """Split a shell command into simple commands (token lists), including `$( … )` and
    backtick bodies, and `sh -c '…'` strings, recursively."""
    tokens = _shell_tokens(command)
    if tokens is None:  # unbalanced quotes: judge the raw words
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
    if "\n" in command:  # a newline separates commands, which the lexer above does not see
        for line in command.split("\n"):
            if line.strip():
                nested.extend(_parts(line))
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


def shell_code(command: str) -> str:
    """The command without the body of a quoted here-document that ends it: for
    `cmd <<'EOF'`, the body, and `EOF` last, the body is data, not commands (so `x > 1` in a
    script piped to python is no redirect). Anything less plain is returned unchanged."""
    import re

    first, newline, rest = command.partition("\n")
    match = re.search(r"<<(-?)\s*(['\"])([A-Za-z_][A-Za-z0-9_]*)\2", first)
    if not newline or not match or first.rstrip().endswith("\\") or "`" in first \
            or first.count("(") != first.count(")"):
        return command
    tokens = _shell_tokens(first)
    if tokens is None:
        return command
    ops = [i for i, t in enumerate(tokens) if t in ("<<", "<<-")]
    delimiter = match.group(3)
    if len(ops) != 1 or tokens[ops[0] + 1:ops[0] + 2] != [match.group(1) + delimiter]:
        return command  # the operator found in the text is not the shell's (e.g. quoted)
    lines = rest.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    ends = [i for i, line in enumerate(lines)
            if (line.lstrip("\t") if match.group(1) else line) == delimiter]
    if ends != [len(lines) - 1]:
        return command  # more after the body: judge it all
    return first


def runs_aether(command: str) -> bool:
    for part in _parts(command):
        words = _strip_prefixes(part)
        if words and os.path.basename(words[0]) == "aether":
            return True
    return False


def approves_bug(command: str) -> bool:
    """True when a command runs `aether bug approve` (asking for its --help is fine)."""
    for part in _parts(command):
        words = _strip_prefixes(part)
        if not words or os.path.basename(words[0]) != "aether":
            continue
        if "-h" in words or "--help" in words:
            continue
        if [w for w in words[1:] if not w.startswith("-")][:2] == ["bug", "approve"]:
            return True
    return False


def _ansi_c(command: str) -> str:
    """`$'\\x61b'` → `'ab'`: bash's ANSI-C quoting decoded (shlex does not know it)."""
    import codecs
    import re

    def decode(match):
        try:
            text = codecs.decode(match.group(1), "unicode_escape")
        except (UnicodeDecodeError, ValueError):
            text = match.group(1)
        return "'" + text.replace("'", "'\\''") + "'"

    return re.sub(r"\$'((?:[^'\\]|\\.)*)'", decode, command)


def _flat(command: str) -> str:
    """The command with quotes, backslashes and empty-looking expansions removed, lower-case:
    what the shell may glue into one word (`a"p"p\\rove` → `approve`)."""
    import re

    text = _ansi_c(command)
    text = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*", "", text)
    return re.sub(r"[\"'\\]", "", text).lower()


def _expands(word: str) -> bool:
    return "$" in word or "`" in word


def bypass(command: str) -> str | None:
    """Why a command steps around the approval gate (None when it does not)."""
    decoded = _ansi_c(command)
    flat = _flat(command)
    mentions = "aether" in flat or ("bug" in flat and "pprov" in flat)
    for part in _parts(decoded):
        words = part
        for i, word in enumerate(words):  # `unset CLAUDECODE`, `export CLAUDECODE=`, `X= cmd`
            name = word.split("=", 1)[0]
            if "=" in word and name in CLAUDE_CODE_VARS and (
                    i == 0 or words[i - 1] in DECLARERS or "=" in words[i - 1]
                    or os.path.basename(words[0]) in PREFIXES):
                return "overrides " + name
            if name in CLAUDE_CODE_VARS and i > 0 and words[0] in ("unset", *DECLARERS):
                return "unsets " + name
        envs = [i for i, w in enumerate(words) if os.path.basename(w) == "env"]
        for i in envs:
            for k, arg in enumerate(words[i + 1:], start=i + 1):
                if not arg.startswith("-"):
                    break
                value = words[k + 1] if k + 1 < len(words) else ""
                if arg in ("-u", "--unset") and value in CLAUDE_CODE_VARS or \
                        arg.startswith(("-u", "--unset=")) and arg.split("=")[-1].lstrip("-u") in CLAUDE_CODE_VARS:
                    return "unsets Claude Code's variables (env -u)"
                if arg in ("-i", "-", "--ignore-environment") and ("bug" in flat or "pprov" in flat):
                    return "clears the environment (env -i)"
        stripped = _strip_prefixes(words)
        if not stripped:
            continue
        name = os.path.basename(stripped[0])
        if mentions and name in PTY_WRAPPERS:
            return f"runs aether through a pseudo-terminal ({name})"
        if mentions and name.startswith("python") and "pty" in " ".join(stripped[1:]):
            return "runs aether through a pseudo-terminal (python pty)"
        if name == "eval" or _expands(stripped[0]):  # noqa: SIM102
            if "pprov" in flat or "bug" in flat:
                return "builds the command at run time"
        if name == "aether" and not {"-h", "--help"} & set(stripped):
            args = [w for w in stripped[1:] if not w.startswith("-")]
            if args[:1] == ["bug"] and (len(args) == 1 or _expands(args[1])):
                return "names the bug subcommand through the shell"
            if args[:1] == ["bug"] and "pprov" in flat and (
                    "pprov" in args[1].lower() or any(c in command for c in "$`\\")):
                return "spells `approve` so the shell builds it"
    return None


def not_searching(command: str) -> str | None:
    """The first command word that is not a search or read (None when all are)."""
    for part in _parts(command):
        words = _strip_prefixes(part)
        if not words:
            continue
        name = os.path.basename(words[0])
        if name not in SEARCH_COMMANDS:
            return name
        if name == "git" and _git_subcommand(words[1:]) not in GIT_SEARCH:
            return f"git {_git_subcommand(words[1:])}".strip()
        if name == "sed" and not any(w in ("--quiet", "--silent") or (
                w.startswith("-") and not w.startswith("--") and "n" in w) for w in words[1:]):
            return "sed without -n"
        if name == "find" and FIND_ACTIONS & set(words):
            return "find " + sorted(FIND_ACTIONS & set(words))[0]
    return None


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
        if name == "git":  # noqa: SIM102
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


def _shell_tokens(text: str) -> list[str] | None:
    """Shell words with operators as their own tokens; None when quoting is unbalanced."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def _raw_redirects(command: str) -> list[str]:
    """Output redirections that target a file (not `2>&1`, not `>/dev/null`)."""
    tokens = _shell_tokens(command)
    if tokens is None:
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


def _json(path: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def worktrees(project: str) -> list[str]:
    """The real paths of the running build's working copies ([] when its builders share the tree)."""
    data_dir = os.environ.get("AETHER_DATA_DIR") or os.path.join(project, ".aether", "data")
    records = _json(os.path.join(data_dir, "worktrees.json"))
    if not isinstance(records, dict) or not isinstance(records.get("worktrees"), list):
        return []
    spawns = _json(os.path.join(data_dir, "spawns.json"))
    runs = spawns.get("runs") if isinstance(spawns, dict) and isinstance(spawns.get("runs"), list) else []
    build = next((r for r in reversed(runs) if isinstance(r, dict) and r.get("command") == "build"), None)
    if build is None or build.get("done"):
        return []
    out = []
    for w in records["worktrees"]:
        if isinstance(w, dict) and w.get("status") == "active" and w.get("scope") == build.get("scope"):
            where = w.get("workdir") if isinstance(w.get("workdir"), str) else w.get("path")
            if isinstance(where, str):
                out.append(os.path.realpath(os.path.join(project, where)))
    return out


def _inside_any(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in roots)


WORKTREE_HINT = ("your brief's WORKING COPY section names your worktree under .aether/worktrees/: work "
                 "there, not in the main checkout")
CD_WORDS = ("cd", "pushd")
GIT_DIR_OPTIONS = ("--git-dir", "--work-tree")


def _write_refused(path: str, project: str, roots: list[str]) -> str | None:
    full = os.path.realpath(os.path.join(project, path))
    reports = os.path.realpath(os.path.join(project, ".aether", "spawns"))
    if _inside_any(full, [reports]) and full.endswith(".report.md"):
        return None  # its report file (the brief names it) lives with the briefs, in the main checkout
    if not _inside_any(full, roots):
        return f"This build's builders each write in their own worktree: {path} is outside it — {WORKTREE_HINT}."
    if ".git" in full.split(os.sep):
        return "A worktree's .git belongs to the helper: change the project's files only."
    return None


def _bash_refused(command: str, project: str, roots: list[str]) -> str | None:
    lines = [line for line in command.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    tokens = _shell_tokens("\n".join(lines)) or []
    while tokens and tokens[0] == "(":
        tokens = tokens[1:]
    start = (len(tokens) >= 2 and tokens[0] in CD_WORDS and (len(tokens) == 2 or tokens[2] in ("&&", ";", "||"))
             and _inside_any(os.path.realpath(os.path.join(project, tokens[1])), roots))
    if not start:
        return (f"This build's builders each work in their own worktree: start every Bash command with "
                f"`cd <your working copy> && ` — {WORKTREE_HINT}.")
    here = os.path.realpath(os.path.join(project, tokens[1]))
    real_project = os.path.realpath(project)
    for i, token in enumerate(tokens[2:], start=2):
        previous = tokens[i - 1]
        if token.split("=", 1)[0] in GIT_DIR_OPTIONS:
            return "Name no other git folder or work tree: your working copy is the repository you work in."
        target = None
        if previous in CD_WORDS or previous == "-C":
            target = os.path.realpath(os.path.join(here, token))
        elif token.startswith("/"):
            target = os.path.realpath(token)
            if not _inside_any(target, [real_project]):
                continue  # outside the project: /tmp, /usr … are not the checkout
        if target is not None and not _inside_any(target, roots):
            return f"`{token}` is outside your working copy (the main checkout or another one) — {WORKTREE_HINT}."
    return None


def isolated_builder(tool: str, tool_input: dict) -> str | None:
    """Why an isolated builder's call is refused (None: it stays in its working copy)."""
    project = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    roots = worktrees(project)
    if not roots:
        return None
    if tool in FILE_TOOLS:
        return _write_refused(str(tool_input.get("file_path") or tool_input.get("notebook_path") or ""), project, roots)
    return _bash_refused(str(tool_input.get("command") or ""), project, roots)


def decide(event: dict) -> str | None:
    """The reason to deny this tool call, or None to let Claude Code decide as usual."""
    agent = str(event.get("agent_type") or "")
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    command = shell_code(str(tool_input.get("command") or ""))
    if tool == "Bash" and approves_bug(command):
        return APPROVE_REFUSED
    why = bypass(command) if tool == "Bash" else None
    if why:
        return f"{APPROVE_REFUSED} (This command {why}.)"
    if not agent:
        return None  # the Queen's own thread
    if not agent.startswith("ant:"):
        return None  # not one of ours
    caste = agent.split(":", 1)[1]
    if tool == "Bash":
        if runs_aether(command):
            return (
                "Only the Queen runs `aether`. Finish your task and put what you found or did "
                "in your result block; the Queen records it."
            )
        if caste in SEARCH_ONLY:
            word = not_searching(command)
            if word:
                return (f"The {caste} agent only reads and searches: `{word}` is refused. Use "
                        f"Read, or grep, find, ls, cat, head, tail, sed -n, git log/show/diff/blame; "
                        f"take what running the code showed from the reproduction.")
        if (caste in READ_ONLY or caste in WRITE_UNDER) and writes_files(command):
            return (
                f"The {caste} caste is read-only: this command would change files. Use read-only "
                f"commands (ls, cat, grep, find, git log/diff/show) and report what should change. "
                + READ_ONLY_HINTS.get(caste, "")
            ).strip()
        return isolated_builder(tool, tool_input) if caste in WRITE_ANYWHERE else None
    if tool in FILE_TOOLS and caste in WRITE_ANYWHERE:
        return isolated_builder(tool, tool_input)
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
