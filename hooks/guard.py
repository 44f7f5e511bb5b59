#!/usr/bin/env python3
"""PreToolUse guard for Aether (hooks/guard.sh runs it with the helper's venv Python).

Claude Code passes the tool call as JSON on stdin; inside a subagent the input carries
`agent_type` (e.g. `ant:builder`) and `agent_id`, in the Queen's own thread it does not. Bash
commands are read with tree-sitter-bash (hooks/shell.py): every command a line may run, in a
pipeline, a list, `$(…)`, a function, an `sh -c '…'` body. The rules:

1. Nobody in Claude Code approves a bug's fix plan, the Queen included: approval is a person's
   typed `/ant:bug approve <id>` (hooks/approve.sh), and no thread writes its tickets
   (`.aether/typed/`) or the Bug Bash state (`.aether/bugs/`) by a file tool or a write form this
   guard reads. `aether bug approve` approves nothing, but is refused too (it says so sooner), and
   so are the prompt hook's step run by hand (`hooks/approve.sh`, `aether bug typed-approval`),
   the word spelled so the shell builds it (`app""rove`, `a\\pprove`, `$'\\x61pprove'`, a
   variable), Claude Code's variables unset or overridden (`env -u`, `env -i`, `unset`,
   `CLAUDECODE= aether`, `export CLAUDECODE=`), and `aether` run through a pseudo-terminal
   (`script`, `expect`, `unbuffer`, `socat`, python's pty, `ssh -t`): attempts to step around it.
2. The Queen's own helper: a main-thread Bash command made only of `aether …` calls (fed by a
   quoted here-document, or by `echo … |`) is allowed without a permission prompt — a slash
   command's `allowed-tools` lasts only its turn, and an ant's answer may arrive after it.
   Claude Code still applies the user's own deny and ask rules. Anything else: no decision.
   (hooks/guard.sh answers the plainest form, `aether <plain words>`, itself.)
3. Only the Queen calls `aether`: an ant's command that runs it is denied.
4. Read-only castes (and the Bug Bash researcher) change no file: every write form is refused
   (redirections into files, before or after a here-document, `>(…)`, `sed -i`, `tee`, `cp`,
   `git commit`, code that opens a file for writing …) and so are the options that run other
   commands (`sed` `e`/`w`, `find -exec`, `awk` `system()`, `git -c core.*=`, `--ext-diff` …).
   They run known read commands, tests and checks, and the project's own programs; anything else
   is refused with what to use.
   Scouts write notes under .aether/research/ only.
5. The Bug Bash analyzer and planner only read and search: known search commands only.
6. A builder of a build whose builders work in their own git worktrees stays in its own
   working copy (`.aether/worktrees/<build>/<node>`, found from its spawn: Claude Code's
   record of the Agent call that started it, or the WORKING COPY its brief names): Write/Edit
   only there (its report file aside); every Bash command starts with `cd <it> &&`, and no
   path, `cd`, `-C`, nested body or code string reaches the main checkout or a sibling's copy;
   no variable whose value the guard cannot see, no `cd -`, `popd`, `eval`, `CDPATH=`; no git
   command that moves refs or changes settings (the helper merges its work). When the state
   that says so cannot be read, the builder is refused, not let through. A `cd` inside `( … )`
   moves no command after it.
7. No ant, builders included, writes the colony's own files: anything under `.aether/` (and the
   `AETHER_DATA_DIR` folder, and `~/.aether/`) but a scout's notes in `.aether/research/`, a
   builder's report file and an isolated builder's own worktree — by a file tool, or any write
   form of rule 4 in Bash (paths resolved through `..`, links, braces, patterns and the line's
   `cd`s, `pushd`s and `CDPATH=`; `.AETHER` is `.aether`); nor copies or extracts a whole folder
   into one that holds `.aether/`, nor runs `git stash --all`; nor runs code (Perl, PHP, Ruby,
   awk, Python and Node that write, through `poetry run`/`uv run` too) that names them. Reading is
   fine. A path it cannot see is refused in a command that spells `.aether`.

When the shell parser is not installed, ants are refused (naming the fix) and the Queen's
commands get no decision unless they touch the approval gate.

This is a guard rail against mistakes, not a sandbox: a program an ant writes and runs can
still write anywhere.
"""

from __future__ import annotations

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# agent name (without the `ant:` prefix) → what it may change
WRITE_ANYWHERE = {"builder"}
WRITE_UNDER = {"scout": ".aether/research/"}
READ_ONLY = {"colonizer", "route-setter", "watcher", "architect", "bug-researcher", "root-cause-analyzer", "fix-planner"}
# The Bug Bash agents: the researcher runs reproductions but changes no file (the fix plan
# must match the files byte for byte); the analyzer and planner only search and read.
READ_ONLY_HINTS = {
    "bug-researcher": "Run a reproduction from stdin instead of saving it (`.venv/bin/python - <<'EOF'` … `EOF`, or `python3 -c '…'`)."
}
SEARCH_ONLY = {"root-cause-analyzer", "fix-planner"}
FILE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}

# Variables Claude Code sets for its commands: the helper's approval gate reads them.
CLAUDE_CODE_VARS = {
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_EXECPATH",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_PID",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_AGENT_SDK_VERSION",
}
# Programs that give a command a pseudo-terminal (the gate wants a person's terminal).
PTY_WRAPPERS = {"script", "expect", "unbuffer", "socat", "faketty", "empty", "ptyrun", "tmux", "screen", "zpty", "dtach", "abduco", "ssh"}
DECLARERS = {"export", "declare", "typeset", "readonly", "local"}
APPROVE_REFUSED = (
    "Approving a fix plan is the user's decision, and no command makes it: tell them to review "
    "the plan and type `/ant:bug approve <id>` in Claude Code themselves."
)
ONLY_QUEEN = "Only the Queen runs `aether`. Finish your task and put what you found or did in your result block; the Queen records it."
HELPER_ALLOWED = "Aether's own helper"
HELPER_NOT_ALLOWED = {"uninstall"}  # removes what Aether keeps outside the project: the user says so

# ---------------------------------------------------------------- what read-only castes run

SEARCH_COMMANDS = {  # the analyzer and planner: Glob and Grep through Bash; `sed` only with -n
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "ls",
    "tree",
    "cat",
    "head",
    "tail",
    "wc",
    "sed",
    "sort",
    "uniq",
    "cut",
    "nl",
    "file",
    "stat",
    "diff",
    "pwd",
    "echo",
    "true",
    "cd",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "tr",
    "git",
}
# Commands that only read, with the options that would write or run something.
READERS: dict[str, set[str]] = {
    name: set()
    for name in (
        "cat",
        "head",
        "tail",
        "wc",
        "ls",
        "pwd",
        "echo",
        "printf",
        "true",
        "false",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "stat",
        "du",
        "df",
        "nl",
        "cut",
        "tr",
        "cmp",
        "comm",
        "column",
        "diff",
        "grep",
        "egrep",
        "fgrep",
        "jq",
        "which",
        "type",
        "test",
        "[",
        "[[",
        "seq",
        "expr",
        "sleep",
        "tac",
        "rev",
        "fold",
        "fmt",
        "paste",
        "join",
        "expand",
        "unexpand",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "cksum",
        "b2sum",
        "od",
        "hexdump",
        "strings",
        "printenv",
        "id",
        "whoami",
        "uname",
        "nproc",
        "uniq",
        "cd",
        "exit",
        "set",
        ":",
        "read",
        "wait",
        "shift",
        "return",
        "getconf",
        "locale",
        "ps",
        "free",
        "uptime",
        "numfmt",
        "look",
        "for",
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "unset",
        "pushd",
        "popd",
        "dirs",
        "shopt",
    )
}
READERS.update(
    {
        "rg": {"--pre"},
        "tree": {"-o"},
        "file": {"-C", "--compile"},
        "sort": {"-o", "--output", "--compress-program"},
        "date": {"-s", "--set"},
        "curl": {
            "-o",
            "-O",
            "--output",
            "--remote-name",
            "--remote-name-all",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--create-dirs",
            "--trace",
            "--trace-ascii",
            "--libcurl",
            "-K",
            "--config",
            "--output-dir",
            "--etag-save",
            "--hsts",
            "--alt-svc",
        },
    }
)
READERS["shopt"] = {"-s", "-u"}  # shopt alone (or -p) lists
DEV_FILES = re.compile(r"/dev/(null|stdout|stderr|tty|fd/[0-9]+)")
WRITERS = {  # command → what it does, said to the ant
    **dict.fromkeys(
        (
            "rm",
            "rmdir",
            "mv",
            "cp",
            "dd",
            "tee",
            "touch",
            "mkdir",
            "chmod",
            "chown",
            "chgrp",
            "ln",
            "truncate",
            "shred",
            "install",
            "patch",
            "rsync",
            "unlink",
            "sponge",
            "mkfifo",
            "mknod",
            "mktemp",
            "split",
            "csplit",
            "tar",
            "zip",
            "unzip",
            "gzip",
            "gunzip",
            "bzip2",
            "xz",
            "7z",
            "wget",
            "scp",
            "sftp",
            "ar",
            "cpio",
            "setfacl",
            "chattr",
            "xxd",
        ),
        "changes files",
    ),
    **dict.fromkeys(
        ("vi", "vim", "nvim", "view", "ex", "ed", "emacs", "nano", "pico", "joe", "mcedit", "less", "more", "most", "man", "pg"),
        "is an editor or pager that can write and run commands: use cat, head or sed -n",
    ),
    **dict.fromkeys(("eval", "source", "."), "runs commands the guard cannot read"),
    **dict.fromkeys(
        (
            "alias",
            "function",
            "enable",
            "trap",
            "watch",
            "script",
            "expect",
            "screen",
            "tmux",
            "nohup",
            "sudo",
            "doas",
            "su",
            "runuser",
            "setsid",
            "parallel",
            "at",
            "batch",
            "crontab",
            "npx",
            "pipx",
            "uvx",
            "bunx",
        ),
        "runs commands the guard cannot read",
    ),
    **dict.fromkeys(
        ("env", "command", "builtin", "exec", "stdbuf", "chrt", "taskset", "ionice", "coproc", "unbuffer", "flock"),
        "hides which command runs: call the command directly (set a variable as a prefix: `X=1 cmd`)",
    ),
}
SEEN_THROUGH = {"time", "timeout", "nice"}  # wrappers read-only castes may use: the command is judged
XARGS_SAFE = {
    "grep",
    "egrep",
    "fgrep",
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "stat",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "echo",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "nl",
}
XARGS_OPTIONS = {
    "-0",
    "--null",
    "-r",
    "--no-run-if-empty",
    "-t",
    "--verbose",
    "-n",
    "-L",
    "-d",
    "-P",
    "--max-args",
    "--max-lines",
    "--delimiter",
    "--max-procs",
}
FIND_ACTIONS = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
# Variables that change what an allowed command runs or where it writes.
ENV_REFUSED = {
    "PATH",
    "CDPATH",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "SHELL",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "HOME",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONPYCACHEPREFIX",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "NODE_OPTIONS",
    "LESSOPEN",
    "LESSCLOSE",
    "PYTEST_ADDOPTS",
    "TAR_OPTIONS",
    "XDG_CONFIG_HOME",
    "TMPDIR",
    "ZDOTDIR",
}
ENV_REFUSED_PREFIXES = ("GIT_", "LD_", "DYLD_", "BASH_FUNC_")
BUILDER_ENV_REFUSED = {"CDPATH", "OLDPWD", "HOME", "BASH_ENV", "ENV"}

# ---------------------------------------------------------------- git

GIT_READ = {
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "annotate",
    "grep",
    "ls-files",
    "ls-tree",
    "rev-parse",
    "rev-list",
    "shortlog",
    "describe",
    "cat-file",
    "merge-base",
    "show-ref",
    "for-each-ref",
    "name-rev",
    "diff-tree",
    "diff-index",
    "diff-files",
    "whatchanged",
    "check-ignore",
    "check-attr",
    "count-objects",
    "version",
    "var",
    "show-branch",
    "cherry",
    "range-diff",
}
GIT_SEARCH = {"log", "show", "diff", "blame", "grep", "ls-files", "status", "rev-parse", "shortlog", "describe"}
GIT_LISTS = {
    "stash": {"list", "show"},
    "reflog": {"show"},
    "worktree": {"list"},
    "notes": {"list", "show"},
    "remote": set(),
    "tag": set(),
    "branch": set(),
}  # subcommand: its listing sub-subcommands
GIT_BUILDER = GIT_READ | {"add", "rm", "mv", "restore", "apply", "clean", "checkout", "stage", "format-patch"}
GIT_GLOBAL_WITH_VALUE = {
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
    "--config-env",
    "--super-prefix",
    "--list-cmds",
    "--attr-source",
}
GIT_SAFE_CONFIG = re.compile(
    r"(color\.[\w.-]+|core\.quotepath|diff\.noprefix|log\.[\w.-]+|column\.ui|"
    r"advice\.[\w.-]+|i18n\.[\w.-]+|pager\.\w+=false)(=.*)?$",
    re.I,
)
GIT_RUNS = ("--ext-diff", "--upload-pack", "--receive-pack", "--exec", "--open-files-in-pager", "--config-env", "--exec-path")
GIT_LISTING_FLAGS = {
    "-a",
    "-r",
    "-v",
    "-vv",
    "--all",
    "--remotes",
    "--verbose",
    "--show-current",
    "-l",
    "--list",
    "--no-color",
    "--color",
    "--column",
    "--no-column",
    "-n",
}

# ---------------------------------------------------------------- tests and checks (read-only castes)

PYTHON = re.compile(r"(python|pypy)[0-9.]*$")
INTERPRETERS = {
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
}  # name → the options that give code
INTERPRETER_VALUES = {
    "python": {"-W", "-X", "--check-hash-based-pycs"},
    "perl": {"-I", "-M", "-m"},
    "node": {"-r", "--require", "--import", "--loader", "-C", "--conditions", "--input-type"},
    "nodejs": {"-r", "--require", "--import", "--loader", "-C", "--conditions", "--input-type"},
    "ruby": {"-r", "-I", "-E", "-C"},
    "php": {"-c", "-d", "-z"},
}
FROM_A_PIPE = "reads code from a pipe the guard cannot see: give it with -c/-e or a quoted here-document"
WRITE_MODULES = {
    "pip",
    "ensurepip",
    "venv",
    "virtualenv",
    "compileall",
    "py_compile",
    "zipfile",
    "tarfile",
    "json.tool",
    "pipx",
    "build",
    "twine",
    "idlelib",
    "pdb",
    "trace",
    "cProfile",
    "profile",
    "http.server",
    "smtpd",
    "uv",
    "poetry",
    "pre_commit",
    "tox",
    "nox",
}
CODE_WRITES = (  # compiled on first use (re's cache): most calls run no code, and start-up counts
    r"""\bopen\s*\([^)]*,\s*(?:mode\s*=\s*)?[rR]?['"][rbtU]*[wax+][rbtUwax+]*['"]"""  # open(…, 'w')
    r"""|\.write_(?:text|bytes)\s*\(|\.(?:touch|mkdir|unlink|rmdir|rename|symlink_to|hardlink_to|chmod)\s*\("""
    r"""|\bos\s*\.\s*(?:remove|unlink|rmdir|removedirs|rename|renames|replace|mkdir|makedirs|symlink|link"""
    r"""|truncate|chmod|chown|system|popen|exec\w*|spawn\w*|posix_spawn\w*|mkfifo|mknod|write|utime|fork)\b"""
    r"""|\b(?:shutil|subprocess|pty|fileinput|sqlite3|dbm|shelve|zipfile|tarfile|child_process|FileUtils)\b"""
    r"""|\b(?:exec|__import__|execSync|spawnSync|execFileSync|writeFileSync|appendFileSync|writeFile|appendFile"""
    r"""|createWriteStream|rmSync|unlinkSync|mkdirSync|renameSync|copyFileSync|cpSync)\s*\("""
    r"""|\bfs(?:\.promises)?\.(?:write|append|unlink|rm|mkdir|rename|copy|cp|symlink|link|truncate|chmod|chown"""
    r"""|utimes|open)\w*|\bFile\.(?:write|delete|unlink|rename|open\s*\([^)]*['"][wa])|IO\.popen|%x|\bqx\b"""
    r"""|\bsystem\s*\(|\b(?:unlink|rename|mkdir|rmdir|symlink)\s*\(?\s*['"$]|\bopen\b[^;]*['"][^'"]*[>|]"""
    r"""|\b(?:file_put_contents|fopen|fwrite|fputs|tempnam|shell_exec|passthru|proc_open|sysopen)\s*\("""  # PHP, Perl
    r"""|(?<![\w.])(?:copy|touch)\s*\(|\bIO\.(?:bin)?write\b|\bFile::Copy\b"""
)
PYTEST_WRITES = {
    "--junitxml",
    "--junit-xml",
    "--html",
    "--json-report-file",
    "--report-log",
    "--cov-report",
    "--resultlog",
    "--result-log",
    "--snapshot-update",
    "--sw-skip",
}


def _deny(reason: str) -> dict:
    return {"permissionDecision": "deny", "permissionDecisionReason": reason}


# ---------------------------------------------------------------- the approval gate (every thread)


def _ansi_c(command: str) -> str:
    """`$'\\x61b'` → `'ab'`: bash's ANSI-C quoting decoded."""
    import codecs

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
    text = _ansi_c(command)
    text = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*", "", text)
    return re.sub(r"[\"'\\]", "", text).lower()


def _args(words) -> list:
    return [w for w in words if not w.text.startswith("-")]


APPROVING = {"approve", "typed-approval"}  # the `bug` subcommands: the refusal, and the prompt hook's step
APPROVE_HOOK = "approve.sh"  # the prompt hook that writes a typed approval's ticket
BUG_SETTINGS = "AETHER_BUG_"  # Bug Bash's settings from the environment: where its state lives, what it runs
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "busybox", "source", "."}


def _runs_hook(words) -> bool:
    """The command runs the plugin's prompt hook (hooks/approve.sh) — as its program or as the
    script a shell runs — by any spelling that reaches it: a pattern, braces, a link, another
    name of the plugin's folder."""
    import glob  # noqa: PLC0415 — only for a command that may name the hook

    hook = os.path.realpath(os.path.join(HERE, APPROVE_HOOK))
    name = shell.name_of(words[0]) if words else ""
    scripts = [words[0]] if name not in SHELLS else [w for w in words[1:] if not w.text.startswith("-")][:1]
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
        at, _, _ = shell.unwrap(cmd.words)
        words = cmd.words[at:]
        if words and _runs_hook(words):
            return True
        if not words or shell.name_of(words[0]) != "aether" or {"-h", "--help"} & {w.text for w in words}:
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
        at, wrappers, seen = shell.unwrap(cmd.words)
        why = _overrides(cmd, seen)
        if why:
            return why
        if seen.get("clear") and ("bug" in flat or "pprov" in flat):
            return "clears the environment (env -i)"
        words = cmd.words[at:]
        if not words:
            continue
        name = shell.name_of(words[0])
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


# ---------------------------------------------------------------- the Queen's own helper calls

QUEEN_SHAPES = {
    "program",
    "list",
    "pipeline",
    "redirected_statement",
    "command",
    "command_name",
    "word",
    "string",
    "string_content",
    "raw_string",
    "concatenation",
    "number",
    "file_redirect",
    "file_descriptor",
    "heredoc_redirect",
    "heredoc_start",
    "heredoc_body",
    "heredoc_end",
    "herestring_redirect",
    "&&",
    "||",
    ";",
    "|",
    '"',
    "<<",
    "<<<",
    ">",
    ">>",
    ">&",
}


def _quiet(redirect) -> bool:
    """`2>&1`, `>/dev/null`, a quoted here-document or a static here-string: no file written, nothing run."""
    target = redirect.target
    if redirect.op == "<<":
        return True  # checked with the command's heredoc
    if redirect.op == "<<<":
        return target is not None and target.static
    if target is None or not target.static:
        return False
    return (redirect.op == ">&" and target.text in ("1", "2")) or (redirect.op in (">", ">>") and target.text == "/dev/null")


def queen(script) -> dict | None:
    """Allow a main-thread command made only of `aether …` calls (see rule 2), else no decision."""
    if (
        script.errors
        or script.functions
        or script.out_subst
        or script.background
        or not script.commands
        or not script.node_types <= QUEEN_SHAPES
    ):
        return None
    commands = script.commands
    for i, cmd in enumerate(commands):
        if cmd.depth or cmd.kind != "simple" or cmd.assigns or not all(w.static for w in cmd.words):
            return None
        if not all(_quiet(r) for r in cmd.redirects) or (cmd.heredoc and not cmd.heredoc.quoted):
            return None
        first = cmd.words[0].raw if cmd.words else ""
        if first == "aether":
            if [w.text for w in _args(cmd.words[1:])][:1] and _args(cmd.words[1:])[0].text in HELPER_NOT_ALLOWED:
                return None
            continue
        after = script.source.encode("utf-8", "surrogatepass")[cmd.stmt_end :].decode("utf-8", "replace").lstrip(" \t")
        feeds = after.startswith("|") and not after.startswith(("||", "|&"))
        if first != "echo" or cmd.redirects or not feeds or i + 1 >= len(commands):
            return None
    return {"permissionDecision": "allow", "permissionDecisionReason": HELPER_ALLOWED}


# ---------------------------------------------------------------- read-only castes


def _short_in(text: str, letter: str) -> bool:
    """`-Ei` holds the short option `i` (letters after the dash, up to the first that is not one)."""
    if not text.startswith("-") or text.startswith("--") or len(text) < 2:
        return False
    for char in text[1:]:
        if char == letter:
            return True
        if not char.isalpha():
            return False
    return False


def _has_option(words, options) -> str | None:
    """The first word that gives one of `options` (`-o`, `-uo`, `--output`, `--output=x`)."""
    for w in words:
        text = w.text
        if text == "--":
            return None
        for option in options:
            if text == option or option.startswith("--") and text.startswith(option + "="):
                return option
            if len(option) == 2 and option[0] == "-" and _short_in(text, option[1]):
                return option
    return None


def _sed_address(s: str, i: int) -> int:
    """Past the address of a sed command (`1`, `$`, `/re/`, `\\%re%`, `1,5`, `0~4`, `/a/,+2`, `!`)."""
    n = len(s)
    for _ in range(2):
        while i < n and s[i] in " \t":
            i += 1
        if i < n and (s[i].isdigit() or s[i] in "$+~"):
            i += 1
            while i < n and (s[i].isdigit() or s[i] == "~"):
                i += 1
        elif i < n and s[i] in "/\\":
            delim = s[i + 1] if s[i] == "\\" and i + 1 < n else "/"
            i += 2 if s[i] == "\\" else 1
            while i < n and s[i] != delim:
                i += 2 if s[i] == "\\" else 1
            i += 1
            while i < n and s[i] in "IM":
                i += 1
        if i < n and s[i] == ",":
            i += 1
            continue
        break
    while i < n and s[i] in " \t!":
        i += 1
    return i


def _sed_part(s: str, i: int, delim: str) -> int:
    """Past one part of `s/…/…/` or `y/…/…/` (from the character after a delimiter)."""
    while i < len(s) and s[i] != delim:
        i += 2 if s[i] == "\\" else 1
    return i + 1


def sed_script(s: str) -> str | None:
    """The sed command of a script that writes a file or runs a command (`e`, `w`, `W`, `s///e`,
    `s///w`), or one the guard does not know; None when it only reads and prints."""
    i, n = 0, len(s)
    while i < n:
        if s[i] in " \t\n;{}":
            i += 1
            continue
        if s[i] == "#":
            i = s.find("\n", i) % (n + 1) if "\n" in s[i:] else n
            continue
        i = _sed_address(s, i)
        if i >= n:
            break
        c = s[i]
        if c in "sy" and i + 1 < n and s[i + 1] not in "\n\\":
            i = _sed_part(s, _sed_part(s, i + 2, s[i + 1]), s[i + 1])
            flags = ""
            while c == "s" and i < n and s[i] in "gpiImMew0123456789":
                flags += s[i]
                i += 1
            if "e" in flags or "w" in flags:
                return f"s///{'e' if 'e' in flags else 'w'}"
        elif c in "ewW":
            return c
        elif c in "aicrRbtT:v":  # text, a file to read, a label: up to the end of the line (or `;` for labels)
            end = [j for j in (s.find("\n", i), s.find(";", i) if c in "btT:v" else -1) if j >= 0]
            i = min(end) if end else n
        elif c in "=dDgGhHlLnNpPqQxzF":
            i += 1
            while i < n and s[i].isdigit():
                i += 1
        else:
            return c
    return None


def sed_args(words) -> tuple:
    """(the scripts of a `sed` call, whether -n is given, the option that edits or reads a script
    file: `sed -i`, `sed -f`, or None)."""
    scripts, quiet, form, i = [], False, None, 0
    args = words[1:]
    while i < len(args):
        text = args[i].text
        if text.startswith("--in-place") or _short_in(text, "i"):
            form = form or "sed -i"
        if text in ("-f", "--file") or text.startswith("--file=") or _short_in(text, "f"):
            form = form or "sed -f"
        if text in ("-n", "--quiet", "--silent") or _short_in(text, "n"):
            quiet = True
        if text in ("-e", "--expression") or (_short_in(text, "e") and text.endswith("e")):
            if i + 1 < len(args):
                scripts.append(args[i + 1])
            i += 2
            continue
        if text.startswith("--expression="):
            scripts.append(shell.Word(text, text.split("=", 1)[1], args[i].static))
        elif text in ("-l", "--line-length", "-f", "--file") or text.startswith("-") and text.endswith("f") and _short_in(text, "f"):
            i += 1
        elif not text.startswith("-") and not scripts:
            scripts.append(args[i])
            scripts.append(None)  # the first operand was the script: the rest are files
        i += 1
    return [s for s in scripts if s is not None], quiet, form


def sed_refusal(words, strict: bool) -> str | None:
    """Why a `sed` call is refused to a read-only caste: in place, a script file, a command that
    writes or runs; for the search-only castes also without -n."""
    scripts, quiet, form = sed_args(words)
    if form:
        return form
    for script in scripts:
        if not script.static:
            return "sed with a script built at run time"
        command = sed_script(script.text)
        if command:
            return f"sed {command}"
    return "sed without -n" if strict and not quiet else None


AWK_REFUSED = re.compile(r"system\s*\(|(?<!\|)\|(?!\|)|\|&|@(load|include)|\bprintf?\b[^;}\n]*>")


def awk_program(words) -> tuple:
    """(awk's program word, or None when it is in a file or missing; an option the guard does not know)."""
    args, i = words[1:], 0
    while i < len(args):
        text = args[i].text
        if text in ("-F", "-v", "--field-separator", "--assign"):
            i += 2
            continue
        if text.startswith(("-F", "-v", "--field-separator=", "--assign=")):
            i += 1
            continue
        if text == "--":
            i += 1
            break
        if text.startswith("-"):
            return None, text
        break
    return (args[i] if i < len(args) else None), None


def awk_refusal(words) -> str | None:
    program, option = awk_program(words)
    if option:
        return f"awk {option}"
    if program is None or not program.static:
        return "awk with a program built at run time"
    return "awk system(), | or print >" if AWK_REFUSED.search(program.text) else None


def git_parts(words) -> tuple[list, str, list]:
    """(`git` options before the subcommand as (option, value) pairs, the subcommand, its words)."""
    i, options = 1, []
    while i < len(words):
        text = words[i].text
        if text in GIT_GLOBAL_WITH_VALUE:
            options.append((text, words[i + 1].text if i + 1 < len(words) else ""))
            i += 2
        elif text.startswith("-"):
            options.append(tuple(text.split("=", 1)) if "=" in text else (text, ""))
            i += 1
        else:
            return options, text, words[i + 1 :]
    return options, "", []


def git_refusal(words, allowed: set) -> str | None:
    """Why a `git` call is refused: settings that run commands or move the repository, options
    that run commands or write a file, a subcommand outside `allowed` (listing forms aside)."""
    options, sub, rest = git_parts(words)
    for option, value in options:
        if option == "-c" and not GIT_SAFE_CONFIG.match(value):
            return f"git -c {value.split('=', 1)[0]}"
        if option in ("--git-dir", "--work-tree", "--exec-path", "--config-env", "--super-prefix"):
            return f"git {option}"
    for w in rest:
        if w.text == "--":
            break
        for option in GIT_RUNS:
            if w.text == option or w.text.startswith(option + "="):
                return f"git {option}"
        if w.text == "--output" or w.text.startswith("--output="):
            return "git --output"
        if sub == "grep" and (w.text == "-O" or w.text.startswith("-O")):
            return "git grep -O"
    if sub in allowed:
        if (
            sub == "checkout"
            and not any(w.text == "--" for w in rest)
            or sub == "checkout"
            and _has_option(rest, ("-b", "-B", "--orphan", "--detach", "-t", "--track"))
        ):
            return "git checkout of a branch"
        return None
    if sub in GIT_LISTS:
        subs = [w.text for w in rest if not w.text.startswith("-")]
        if GIT_LISTS[sub]:  # stash, reflog, worktree, notes: their listing subcommands
            if subs[:1] and subs[0] in GIT_LISTS[sub] or sub in ("reflog", "notes") and not subs:
                return None
        elif all(w.text in GIT_LISTING_FLAGS for w in rest if w.text.startswith("-")) and (
            not subs or any(w.text in ("-l", "--list") for w in rest)
        ):
            return None  # branch, tag, remote: listed, none made
    return f"git {sub}".strip()


def code_source(cmd, name: str, words) -> tuple:
    """Where an interpreter's code comes from: ("code", the word, the option) on the command line,
    ("module", name, its words) for `python -m`, ("file", …) a script or a `<` file, ("stdin", the
    here-document or here-string as a word, or None when a pipe feeds it)."""
    kind = "python" if PYTHON.match(name) else name
    flags = INTERPRETERS.get(kind, ("-c",))
    i = 1
    while i < len(words):
        text = words[i].text
        if (
            text in flags
            or (kind == "python" and _short_in(text, "c") and text.endswith("c"))
            or (kind in ("perl", "ruby") and _short_in(text, "e") and text.endswith(("e", "E")))
        ):
            return "code", words[i + 1] if i + 1 < len(words) else None, text
        if kind == "python" and (text == "-m" or text.startswith("-m") and len(text) > 2):
            at = i + 2 if text == "-m" else i + 1
            return "module", words[i + 1].text if text == "-m" and i + 1 < len(words) else text[2:], words[at:]
        if text in INTERPRETER_VALUES.get(kind, ()):
            i += 2
            continue
        if text.startswith("-") and text != "-":
            i += 1
            continue
        if text != "-":
            return "file", words[i], None
        break
    if cmd.heredoc is not None:
        return "stdin", shell.Word("", cmd.heredoc.body, cmd.heredoc.static), None
    if cmd.herestring is not None:
        return "stdin", cmd.herestring, None
    if any(r.op == "<" for r in cmd.redirects):
        return "file", None, None
    return "stdin", None, None


def _runner_python(cmd, words):
    """python: code given with -c or on stdin must not write; `-m` modules that write are refused."""
    how, what, rest = code_source(cmd, "python", words)
    if how == "module":
        if what.split(".")[0] in WRITE_MODULES or what in WRITE_MODULES:
            return f"python -m {what}"
        return check([shell.Word(what, what), *rest]) if (check := RUNNERS.get(what)) else None
    if how == "stdin" and what is None:
        return "python", FROM_A_PIPE
    if how in ("code", "stdin"):
        return _code_refusal(what, f"python {rest}" if how == "code" else "python <<'EOF'")
    return None


def _code_refusal(code, form: str):
    """(form, why) when code an interpreter runs writes files or runs commands."""
    if code is None:
        return None
    if not code.static:
        return form, "runs code built at run time"
    found = code_writes(code.text)
    return (form, f"runs code that writes files or runs commands ({found[:40]})") if found else None


_CODE_WRITES_FOUND: dict = {}  # code → what of it writes: one search per code a call runs, whichever rule asks


def code_writes(text: str) -> str | None:
    """The first thing in `text` that writes files or runs commands (CODE_WRITES), or None."""
    if text not in _CODE_WRITES_FOUND:
        found = re.search(CODE_WRITES, text)
        _CODE_WRITES_FOUND.clear()  # one hook call runs through here: keep the newest only
        _CODE_WRITES_FOUND[text] = found.group(0).strip() if found else None
    return _CODE_WRITES_FOUND[text]


def _requires(words, needed, form) -> str | None:
    return None if _has_option(words[1:], needed) or any(w.text in needed for w in words[1:]) else form


def _subcommand(words, allowed: dict, name: str) -> str | None:
    """Tools whose first operand is a subcommand: allowed maps it to a check (or None)."""
    subs = [w for w in words[1:] if not w.text.startswith("-")]
    if not subs:
        return None if any(w.text in ("--version", "-v", "-V", "--help", "-h") for w in words[1:]) else name
    sub = subs[0].text
    if sub not in allowed:
        return f"{name} {sub}"
    check = allowed[sub]
    return check(words) if check else None


def _npm(words):
    subs = [w.text for w in words[1:] if not w.text.startswith("-")]
    if (
        subs[:1] in (["test"], ["t"], ["ls"], ["list"], ["why"], ["outdated"], ["view"], ["info"])
        or subs[:1] == ["run"]
        and subs[1:2]
        and subs[1] in ("test", "lint", "check", "typecheck", "type-check")
    ):
        return None
    return _subcommand(words, {}, shell.name_of(words[0]))


def _make(words):
    targets = [w.text for w in words[1:] if not w.text.startswith("-") and "=" not in w.text]
    if _has_option(words[1:], ("-n", "--dry-run", "--just-print", "-q", "--question")):
        return None
    return None if targets and set(targets) <= {"test", "tests", "check", "lint", "typecheck", "verify"} else " ".join(["make", *targets])


RUNNERS = {  # tests, checks and linters a read-only caste may run: name → refusal check
    "pytest": lambda w: _has_option(w[1:], PYTEST_WRITES),
    "py.test": lambda w: _has_option(w[1:], PYTEST_WRITES),
    "unittest": None,
    "doctest": None,
    "mypy": None,
    "pyright": None,
    "flake8": None,
    "pyflakes": None,
    "pycodestyle": None,
    "pylint": None,
    "shellcheck": None,
    "bats": None,
    "mocha": None,
    "pydocstyle": None,
    "bandit": lambda w: _has_option(w[1:], ("-o", "--output")),
    "jest": lambda w: _has_option(w[1:], ("-u", "--updateSnapshot", "--ci=false")),
    "vitest": lambda w: _has_option(w[1:], ("-u", "--update")),
    "black": lambda w: _requires(w, ("--check", "--diff"), "black without --check"),
    "isort": lambda w: _requires(w, ("--check-only", "--check", "-c", "--diff"), "isort without --check"),
    "prettier": lambda w: _requires(w, ("--check", "-c", "--list-different", "-l"), "prettier without --check"),
    "rustfmt": lambda w: _requires(w, ("--check",), "rustfmt without --check"),
    "gofmt": lambda w: _has_option(w[1:], ("-w",)),
    "tsc": lambda w: _requires(w, ("--noEmit", "-noEmit", "--version", "-v"), "tsc without --noEmit"),
    "eslint": lambda w: _has_option(w[1:], ("--fix", "--fix-dry-run", "-o", "--output-file")),
    "ruff": lambda w: _subcommand(
        w,
        {
            "check": lambda x: _has_option(x[1:], ("--fix", "--unsafe-fixes", "--add-noqa", "-o", "--output-file")),
            "format": lambda x: _requires(x, ("--check", "--diff"), "ruff format without --check"),
            "version": None,
            "rule": None,
        },
        "ruff",
    ),
    "coverage": lambda w: _subcommand(w, {"run": None, "report": None, "debug": None}, "coverage"),
    "npm": _npm,
    "pnpm": _npm,
    "yarn": _npm,
    "go": lambda w: _subcommand(
        w,
        {
            "test": None,
            "vet": None,
            "list": None,
            "version": None,
            "doc": None,
            "run": None,
            "env": lambda x: _has_option(x[2:], ("-w", "-u")),
            "build": lambda x: None if any(a.text == "/dev/null" for a in x) else "go build without -o /dev/null",
        },
        "go",
    ),
    "cargo": lambda w: _subcommand(
        w,
        {
            "test": None,
            "check": None,
            "build": None,
            "run": None,
            "tree": None,
            "metadata": None,
            "doc": None,
            "bench": None,
            "version": None,
            "clippy": lambda x: _has_option(x[2:], ("--fix",)),
            "fmt": lambda x: _requires(x, ("--check",), "cargo fmt without --check"),
        },
        "cargo",
    ),
    "make": _make,
    "pip": lambda w: _subcommand(w, {"list": None, "show": None, "freeze": None, "check": None}, "pip"),
}
RUNNERS["pip3"] = RUNNERS["pip"]


def _interpreter(cmd, name, words):
    """node -e, perl -e, ruby -e …: the code must not write; perl/ruby -i edit in place."""
    if name in ("perl", "ruby") and _has_option(words[1:], ("-i",)):
        return f"{name} -i"
    how, what, option = code_source(cmd, name, words)
    if how == "stdin" and what is None:
        return name, FROM_A_PIPE
    if how not in ("code", "stdin"):
        return None
    form = f"{name} {option}" if how == "code" else f"{name} <<'EOF'"
    if name in ("perl", "ruby") and what is not None and "`" in what.text:
        return form, "runs code that runs commands (backquotes)"
    return _code_refusal(what, form)


def _wrappers_refusal(cmd, at, wrappers) -> tuple[str, str] | None:
    for wrapper in wrappers:
        if wrapper == "xargs":
            start = next(k for k, w in enumerate(cmd.words) if shell.name_of(w) == "xargs")
            for w in cmd.words[start + 1 : at]:
                if (
                    w.text.startswith("-")
                    and w.text.split("=", 1)[0] not in XARGS_OPTIONS
                    and not any(w.text.startswith(o) and len(o) == 2 for o in ("-n", "-L", "-P", "-d"))
                ):
                    return f"xargs {w.text}", "runs commands the guard cannot read"
            inner = shell.name_of(cmd.words[at]) if at < len(cmd.words) else ""
            if inner not in XARGS_SAFE:
                return f"xargs {inner}".strip(), "runs a command on input the guard cannot see: use grep -r, or find"
        elif wrapper not in SEEN_THROUGH:
            return wrapper, WRITERS.get(wrapper, "runs commands the guard cannot read")
    return None


def _redirects_refusal(cmd, research: str | None):
    for r in cmd.redirects:
        if r.op == "<<" and cmd.heredoc is not None and not cmd.heredoc.quoted:
            return "<<EOF", "lets the shell expand the body: quote the delimiter (<<'EOF')"
        if not r.writes:
            continue
        target = r.target
        if target is not None and target.static and DEV_FILES.fullmatch(target.text):
            continue
        if (
            research
            and target is not None
            and target.static
            and _inside(os.path.realpath(os.path.join(_project(), target.text)), [research])
        ):
            continue
        shown = f"{r.fd or ''}{r.op} {target.raw if target is not None else ''}".strip()
        return shown, "writes a file"
    return None


def _read_only_command(cmd, strict: bool, research: str | None):
    """(the form refused, why) for one command of a read-only caste, or None."""
    return _redirects_refusal(cmd, research) or _read_only_program(cmd, strict)


def _read_only_program(cmd, strict: bool):
    """(the form refused, why) for what one command runs, its redirections aside, or None."""
    at, wrappers, seen = shell.unwrap(cmd.words)
    for name, _ in cmd.assigns + seen["assigns"]:
        if name in ENV_REFUSED or name.startswith(ENV_REFUSED_PREFIXES):
            return f"{name}=", "changes what the command runs"
    if cmd.kind in ("assign", "unset", "test", "for", "group") or not cmd.words:
        return None
    why = _wrappers_refusal(cmd, at, wrappers)
    if why or at >= len(cmd.words):
        return why
    words = cmd.words[at:]
    if not words[0].static:
        return words[0].raw, "names the command at run time: write it out"
    name = shell.name_of(words[0])
    if strict and name not in SEARCH_COMMANDS:
        return name, "is not a search command"
    if name in WRITERS:
        return name, WRITERS[name]
    return _program_refusal(cmd, name, words, strict)


def _tool_refusal(name: str, words, strict: bool):
    """(the form refused, why) for the read tools whose options write or run (sed, awk, find,
    git, uniq, the READERS), None when allowed, False when `name` is none of them."""
    if name == "sed":
        form = sed_refusal(words, strict)
        return (form, "changes files or runs commands") if form else None
    if name in ("awk", "gawk", "mawk", "nawk"):
        form = awk_refusal(words)
        return (form, "writes files or runs commands") if form else None
    if name == "find":
        action = sorted(FIND_ACTIONS & {w.text for w in words})
        return (f"find {action[0]}", "changes files or runs commands") if action else None
    if name == "git":
        form = git_refusal(words, GIT_SEARCH if strict else GIT_READ)
        return (form, "changes the repository, or runs or writes something") if form else None
    if name == "uniq":
        return ("uniq INPUT OUTPUT", "writes a file") if len([w for w in words[1:] if not w.text.startswith("-")]) > 1 else None
    if name in READERS:
        option = _has_option(words[1:], READERS[name])
        return (f"{name} {option}", "writes a file or runs a command") if option else None
    return False


def _program_refusal(cmd, name: str, words, strict: bool):
    """(the form refused, why) for the program a read-only caste runs, or None."""
    found = _tool_refusal(name, words, strict)
    if found is not False:
        return found
    if name in shell.SHELLS:
        how, body = shell._shell_body(words, 0)
        if how == "c" and (body is None or not body.static):
            return f"{name} -c", "runs a command built at run time"
        if how == "stdin" and (cmd.heredoc is None or not cmd.heredoc.static) and cmd.herestring is None:
            return name, "runs commands from its input: run them directly"
        return None  # the body's commands are judged one by one; a script file is a program
    if PYTHON.match(name):
        form = _runner_python(cmd, words)
    elif name in INTERPRETERS:
        form = _interpreter(cmd, name, words)
    elif name in RUNNERS:
        form = check(words) if (check := RUNNERS[name]) else None
    else:
        form = False
    if form is not False:
        if not form or isinstance(form, tuple):
            return form
        return (form if form.startswith(name) else f"{name} {form}"), "writes files or runs commands"
    if "/" in words[0].text:
        return None  # the project's own program (a test, the app): running it is the check
    return name, "is not a command the guard knows to only read"


def read_only(script, strict: bool, research: str | None):
    """(the form refused, why) for a read-only caste's command, or None."""
    if script.errors:
        return "this command", "is not plain shell the guard can read: split it into simpler commands"
    if script.out_subst:
        return ">(…)", "writes through a process"
    if script.functions:
        return f"{script.functions[0]}() {{ … }}", "defines a function: run the commands directly"
    for cmd in script.commands:
        why = _read_only_command(cmd, strict, research)
        if why:
            return why
    return None


# ---------------------------------------------------------------- isolated builders


class Unreadable(Exception):
    """A state file the guard needs is there but cannot be read."""


def _read(path: str, limit: int) -> str:
    """A regular file's text (a FIFO or device is never waited on: OSError)."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, limit).decode("utf-8")
    finally:
        os.close(fd)


def _state(data_dir: str, name: str):
    path = os.path.join(data_dir, name)
    try:
        data = json.loads(_read(path, 64 << 20))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise Unreadable(f".aether/data/{name} ({type(exc).__name__})") from exc
    if not isinstance(data, dict):
        raise Unreadable(f".aether/data/{name} (not a JSON object)")
    return data


def _list(data: dict, key: str, name: str) -> list:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise Unreadable(f".aether/data/{name} (`{key}` is not a list)")
    return [v for v in value if isinstance(v, dict)]


def _project() -> str:
    return os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()


def _inside(path: str, roots: list) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
WORKING_COPY = re.compile(r"Start EVERY Bash command with `cd (\S+) && `")
SPAWN_BRIEF = re.compile(r"\[aether spawn \.aether/spawns/([A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,64})\.md\]")  # a brief's first line
ALLOWED_TOOLS = re.compile(r"^allowed-tools:(.*)$", re.M)
# parts of a command a slash command's Bash grant lets through beside its own prefixes (read-only)
GRANT_READ_ONLY = {"echo", "cat", "head", "tail", "true", "ls", "pwd", "wc", "grep"}
NAME = re.compile(r"[a-z][a-z-]{0,40}")  # a command's name


def _subagent_file(event: dict, suffix: str) -> str | None:
    """Claude Code's file for this subagent beside the session's transcript
    (`<session>/subagents/agent-<id>.meta.json` holds the `toolUseId` of the Agent call)."""
    transcript, agent = event.get("transcript_path"), event.get("agent_id")
    if not isinstance(transcript, str) or not transcript.endswith(".jsonl") or not isinstance(agent, str) or not AGENT_ID.fullmatch(agent):
        return None
    return os.path.join(transcript[: -len(".jsonl")], "subagents", f"agent-{agent}{suffix}")


def _spawned_by(event: dict) -> str | None:
    """The tool_use_id of the Agent call that started this ant."""
    path = _subagent_file(event, ".meta.json")
    try:
        meta = json.loads(_read(path or "", 65536))
    except (OSError, ValueError):
        return None
    value = meta.get("toolUseId") if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value else None


def _first_message(event: dict) -> str:
    """The ant's first message (its brief), from its transcript; "" when it cannot be read."""
    path = _subagent_file(event, ".jsonl")
    try:
        first = json.loads(_read(path or "", 4 << 20).split("\n", 1)[0])
    except (OSError, ValueError):
        return ""
    content = (first.get("message") or {}).get("content") if isinstance(first, dict) else None
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return content if isinstance(content, str) else ""


def _brief_copy(event: dict) -> str | None:
    """The working copy the ant's brief names (the first message of its transcript)."""
    found = WORKING_COPY.search(_first_message(event))
    return found.group(1) if found else None


def _command_grant(command: str) -> list:
    """The `allowed-tools` of the plugin's /ant:<command> (what the Queen's ants get in its turn)."""
    path = os.path.join(HERE, "..", ".claude", "commands", "ant", f"{command}.md")
    try:
        head = _read(path, 8192)
    except OSError:
        return []
    found = ALLOWED_TOOLS.search(head)
    return [t.strip() for t in found.group(1).split(",") if t.strip()] if found else []


def mod_grant(tool: str, event: dict, script=None) -> dict | None:
    """An ant the mod sent (not an Agent call in the Queen's turn) gets what the command's
    `allowed-tools` give the Queen's ants: the tools it names, and Bash whose every command
    starts with one of its `Bash(<prefix>:*)` (never `aether`). Anything else: no decision."""
    data_dir = os.environ.get("AETHER_DATA_DIR") or os.path.join(_project(), ".aether", "data")
    try:
        spawns = _state(data_dir, "spawns.json") or {}
        records = _list(spawns, "spawns", "spawns.json")
        runs = _list(spawns, "runs", "spawns.json")
    except Unreadable:
        return None
    # the ant's spawn: by its agent id (the mod's record), the Agent call that started it, or its brief
    agent, call = event.get("agent_id"), _spawned_by(event)
    rec = next((s for s in records if s.get("runtime") == "mod" and agent and s.get("agent_id") == agent), None)
    rec = rec or next((s for s in records if s.get("runtime") == "mod" and call and s.get("tool_use_id") == call), None)
    if rec is None and (found := SPAWN_BRIEF.search(_first_message(event))):
        rec = next((s for s in records if s.get("ref") == found.group(1)), None)
    run = next((r for r in runs if rec is not None and r.get("scope") == rec.get("scope")), None)
    if rec is None or run is None or rec.get("runtime") != "mod" or not NAME.fullmatch(str(run.get("command"))):
        return None
    grant = _command_grant(str(run["command"]))
    why = f"Aether: the grant of /ant:{run['command']} to its ants"
    project = os.path.realpath(_project())
    if tool != "Bash":  # a file tool, on a file inside the project only (Claude Code asks about the rest)
        raw = event.get("tool_input")
        tool_input = raw if isinstance(raw, dict) else {}
        path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
        within = bool(path) and _inside(os.path.realpath(os.path.join(project, os.path.expanduser(path))), [project])
        return {"permissionDecision": "allow", "permissionDecisionReason": why} if tool in grant and within else None
    prefixes = [g[len("Bash(") : -len(":*)")].split() for g in grant if g.startswith("Bash(") and g.endswith(":*)")]
    prefixes = [p for p in prefixes if p and p[0] != "aether"]
    commands = script.commands if script is not None else []
    if not commands or script.errors or script.background or script.out_subst:
        return None

    def inside(word: str) -> bool:
        return _inside(os.path.realpath(os.path.join(project, os.path.expanduser(word))), [project])

    for cmd in commands:
        words = cmd.texts()
        if cmd.assigns or not words or not all(w.static for w in cmd.words):
            return None
        reads = [r for r in cmd.redirects if r.op in ("<", "<&", "<>")]  # from a file (not a here-document)
        if any(r.writes for r in cmd.redirects) or any(r.target is None or not r.target.static or not inside(r.target.text) for r in reads):
            return None  # a write, or a read of a file outside the project
        if words[0] == "cd" and len(words) == 2 and inside(words[1]):
            continue  # as Claude Code lets a command's grant `cd` inside the project
        if any(words[: len(p)] == p for p in prefixes):
            continue  # the command's own grant (`Bash(python3:*)`): any arguments, as in its turn
        if words[0] not in GRANT_READ_ONLY:
            return None
        paths = [w for w in words[1:] if not w.startswith("-")][1 if words[0] == "grep" else 0 :]  # grep's first is its pattern
        if not all(inside(w) for w in paths):
            return None  # reading outside the project: Claude Code asks
    return {"permissionDecision": "allow", "permissionDecisionReason": why}


class Copy:
    """An isolated builder's working copy: `root` (real path), `rel` (as its brief names it),
    `project` (real path), `own` (its report file, which it may write in the main checkout)."""

    def __init__(self, project: str, record: dict, scope: str):
        self.project = os.path.realpath(project)
        self.rel = str(record.get("workdir") or record.get("path"))
        self.root = os.path.realpath(os.path.join(project, self.rel))
        self.own = {
            os.path.realpath(os.path.join(project, ".aether", "spawns", scope, f"{record.get('node')}{s}")) for s in (".report.md", ".md")
        }


def _checked(copy: Copy):
    """The copy, or the reason to refuse: a working copy replaced by a symbolic link (or gone, or
    out of the builders' folder) is no working copy — its link's target is not the builder's."""
    base = os.path.join(copy.project, ".aether", "worktrees")
    path = os.path.join(copy.project, copy.rel)
    parts = os.path.relpath(path, copy.project).split(os.sep)
    links = any(os.path.islink(os.path.join(copy.project, *parts[:i])) for i in range(1, len(parts) + 1))
    if links or ".." in parts or not os.path.isdir(path) or not _inside(copy.root, [os.path.realpath(base)]):
        return (
            f"Your working copy {copy.rel} is gone or was replaced by a symbolic link: stop, and say so in "
            f"your result block (the helper makes it again when the task is handed out)."
        )
    return copy


def builder_copy(event: dict, project: str):
    """The builder's working copy (a `Copy`), None when it has none, or the reason to refuse."""
    data_dir = os.environ.get("AETHER_DATA_DIR") or os.path.join(project, ".aether", "data")
    try:
        spawns = _state(data_dir, "spawns.json")
        if spawns is None:
            return None
        build = next((r for r in reversed(_list(spawns, "runs", "spawns.json")) if r.get("command") == "build"), None)
        if build is None or build.get("done"):
            return None
        records = _state(data_dir, "worktrees.json")
        if records is None:
            return None
        scope = build.get("scope")
        active = [w for w in _list(records, "worktrees", "worktrees.json") if w.get("status") == "active" and w.get("scope") == scope]
        spawned = _list(spawns, "spawns", "spawns.json")
    except Unreadable as exc:
        return (
            f"The guard cannot read {exc}, so it cannot tell whether you work in a worktree: stop, and say "
            f"so in your result block (the Queen runs `aether worktrees`)."
        )
    if not active:
        return None
    launched_by = _spawned_by(event)
    spawn = next((s for s in reversed(spawned) if launched_by and s.get("tool_use_id") == launched_by and s.get("scope") == scope), None)
    if spawn is not None:
        mine = next((w for w in active if w.get("node") == spawn.get("local")), None)
        return _checked(Copy(project, mine, scope)) if mine is not None else None
    named = _brief_copy(event)
    mine = next((w for w in active if named and named in (w.get("workdir"), w.get("path"))), None)
    if mine is not None:
        return _checked(Copy(project, mine, scope))
    return (
        "This build's builders each work in their own worktree, and the guard cannot tell which one is "
        "yours (no record of your spawn, no WORKING COPY in your brief): stop, and say so in your result block."
    )


def _path_outside(text: str, cwds: list, copy: Copy) -> bool:
    """A word that names a place in the project outside the working copy (relative to any cwd)."""
    if not text or not ("/" in text or text == ".." or text.startswith("../")):
        return False
    targets = [os.path.realpath(text)] if text.startswith("/") else [os.path.realpath(os.path.join(cwd, text)) for cwd in cwds]
    return any(_inside(t, [copy.project]) and not _inside(t, [copy.root]) and t not in copy.own for t in targets)


def _candidates(word, assignment: bool = False) -> list:
    text = word.text
    out = [text]
    if text.startswith("-") and "=" in text:
        out.append(text.split("=", 1)[1])
    if text.startswith("-") and len(text) > 2 and not text.startswith("--"):
        out.append(text[2:])  # -C.. -I../x
    if assignment or "=" in text:
        for part in text.split("=", 1)[-1].split(":"):
            out.append(part)
    return out


# Variables whose value the guard knows well enough for a path: numbers, the positional
# parameters (the words given to `sh -c` are checked themselves), the directory itself.
KNOWN_VALUES = {
    "?": "0",
    "#": "0",
    "$": "0",
    "!": "0",
    "-": "x",
    "@": "",
    "*": "",
    "PWD": ".",
    "RANDOM": "0",
    "LINENO": "0",
    "SECONDS": "0",
    "BASHPID": "0",
    "UID": "0",
    "EUID": "0",
    "PPID": "0",
    **{str(i): "" for i in range(10)},
}
REBINDERS = {"read", "mapfile", "readarray", "getopts", "let", "select"}  # give variables values the guard can't see
CODE_STRING = re.compile(r"""(['"])((?:\\.|(?!\1)[^\\\n])*)\1""")


def _bindings(script) -> dict:
    """The variables whose values the command gives them in plain words (none when a command
    may give one a value the guard cannot see: `read`, `printf -v`, `declare -n` …)."""
    for cmd in script.commands:
        texts = cmd.texts()
        name = cmd.name
        if name in REBINDERS or name == "printf" and "-v" in texts or name in DECLARERS and any(_short_in(t, "n") for t in texts[1:]):
            return {}
    return script.bindings


def _values(word, cmd, script, bindings) -> list | None:
    """Every text a word may stand for (at most 64), or None when a part of it cannot be known."""
    out = [""]
    for kind, value in word.segments:
        if kind == "text":
            options = [value]
        elif kind == "pwd":
            options = ["."]
        elif kind == "number":
            options = ["0"]
        elif kind == "var" and value in KNOWN_VALUES:
            options = [KNOWN_VALUES[value]]
        elif kind == "var" and bindings.get(value) and script.bound_at.get(value, cmd.start) < cmd.start:
            options = bindings[value]
        else:
            return None
        out = [a + b for a in out for b in options]
        if len(out) > 64:
            return None
    return out


CHAIN = {
    "program",
    "list",
    "command",
    "command_name",
    "word",
    "string",
    "string_content",
    "raw_string",
    "concatenation",
    "number",
    "&&",
    "redirected_statement",
    "file_redirect",
    "file_descriptor",
    ">",
    ">>",
    ">&",
    "&>",
    '"',
    "heredoc_redirect",
    "heredoc_start",
    "heredoc_body",
    "heredoc_end",
    "<<",
    "comment",
    "variable_assignment",
    "variable_name",
    "=",
    "simple_expansion",
    "$",
    "special_variable_name",
}


def _cwds(script, first, copy: Copy, start: str, hint: str):
    """[(command, the directories it may run in)] — all inside the copy — or the refusal. In one
    `a && b && c` chain each `cd` moves on; anywhere else (`;`, `||`, a subshell, a loop) a `cd`
    may or may not have run, so a later command may run in any directory named before it."""
    chain = script.node_types <= CHAIN and script.statements == 1 and all(c.depth == 0 for c in script.commands)
    cwds, out = [start], []
    for cmd in script.commands:
        out.append((cmd, list(cwds)))
        if cmd is first:
            continue
        at, _, seen = shell.unwrap(cmd.words)
        words = cmd.words[at:]
        name = shell.name_of(words[0]) if words else ""
        targets = [seen["chdir"]] if seen.get("chdir") is not None else []
        if name in ("cd", "pushd", "chdir"):
            args = [
                w
                for w in words[1:]
                if not (w.text.startswith("-") and w.text != "-" and len(w.text) > 1) or w.text.startswith(("-0", "-1", "-2"))
            ]
            if not args or args[0].text in ("-", "~") or args[0].text[:1] in "+-":
                return f"`{' '.join(w.raw for w in words)}` leaves your working copy — {hint}."
            targets.append(args[0])
        elif name == "popd":
            return f"`popd` leaves your working copy — {hint}."
        for target in targets:
            if not target.static:
                return f"`cd {target.raw}` goes where the guard cannot see — {hint}."
            new = [os.path.realpath(os.path.join(cwd, target.text)) for cwd in cwds]
            if not all(_inside(n, [copy.root]) for n in new):
                return f"`cd {target.raw}` leaves your working copy — {hint}."
            cwds = new if chain and name in ("cd", "pushd", "chdir") else cwds + new
    return out


def _builder_command(cmd, script, copy: Copy, cwds: list, hint: str) -> str | None:
    """Why an isolated builder's command leaves its working copy (None: it stays in it)."""
    at, _, seen = shell.unwrap(cmd.words)
    words = cmd.words[at:]
    name = shell.name_of(words[0]) if words else ""
    for key, _ in cmd.assigns + seen["assigns"]:
        if key in BUILDER_ENV_REFUSED or key.startswith("GIT_"):
            return f"`{key}=` changes where commands go — {hint}."
    if name in ("eval", "alias", "shopt", "enable") or seen.get("split"):
        return f"`{name or 'env -S'}` builds commands the guard cannot read: run them directly — {hint}."
    return _words_outside(cmd, script, words, name, copy, cwds, hint) or _builder_program(cmd, words, name, copy, cwds, hint)


def _words_outside(cmd, script, words, name: str, copy: Copy, cwds: list, hint: str) -> str | None:
    """A word, an assignment or a redirect target that names a place outside the working copy."""
    values = [v for _, v in cmd.assigns if v is not None]
    bindings = _bindings(script)
    linked = []  # `ln -s TARGET LINK`: a relative TARGET is read from LINK's folder (see _link_refusal)
    if name == "ln" and _has_option(words[1:], ("-s", "--symbolic")):
        linked = [w for w in words[1:] if not w.text.startswith("-")][:-1]
    for word in cmd.words + values + [r.target for r in cmd.redirects if r.target is not None and r.op != "<<<"]:
        if any(word is w for w in linked) and word.static and not word.text.startswith("/"):
            continue
        texts = _values(word, cmd, script, bindings)
        if texts is None:
            return f"`{word.raw}` expands at run time and may point outside your working copy: write the path out — {hint}."
        for text in texts:
            for candidate in _candidates(shell.Word(word.raw, text), assignment=word in values):
                if _path_outside(candidate, cwds, copy):
                    return f"`{word.raw}` is outside your working copy (the main checkout or another one) — {hint}."
    return None


def _builder_program(cmd, words, name: str, copy: Copy, cwds: list, hint: str) -> str | None:
    """What the program itself would do outside the copy: git's refs and settings, a shell or an
    interpreter whose code leaves it, a link that points out."""
    if name == "git":
        options, sub, _ = git_parts(words)
        if any(o in ("--git-dir", "--work-tree") for o, _ in options):
            return "Name no other git folder or work tree: your working copy is the repository you work in."
        form = git_refusal(words, GIT_BUILDER)
        if form:
            return (
                f"`{form}` changes the repository's refs or settings: the helper merges your changes after "
                f"the wave — don't commit, branch or push."
            )
    if name in shell.SHELLS:
        how, body = shell._shell_body(words, 0)
        if how == "c" and (body is None or not body.static) or how == "stdin" and cmd.heredoc is None and cmd.herestring is None:
            return f"`{name}` runs commands the guard cannot read: run them directly — {hint}."
    if PYTHON.match(name or "-") or name in INTERPRETERS:
        how, code, _ = code_source(cmd, name, words)
        if how == "stdin" and code is None:
            return f"`{name}` {FROM_A_PIPE} — {hint}."
        for found in CODE_STRING.finditer(code.text if how in ("code", "stdin") and code is not None else ""):
            if _path_outside(found.group(2), cwds, copy):
                return f"`{found.group(2)}` in the code is outside your working copy — {hint}."
    if name == "ln" and _has_option(words[1:], ("-s", "--symbolic")):
        return _link_refusal(words, cwds, copy, hint)
    return None


def _link_refusal(words, cwds: list, copy: Copy, hint: str) -> str | None:
    """`ln -s TARGET LINK`: a relative target is read from the link's folder, not from here."""
    names = [w for w in words[1:] if not w.text.startswith("-")]
    if len(names) < 2:
        return None
    link = names[-1].text
    bases = [os.path.join(cwd, folder) for cwd in cwds for folder in (os.path.dirname(link) or ".", link)]
    for target in names[:-1]:
        if not target.text.startswith("/") and _path_outside(target.text if "/" in target.text else target.text + "/", bases, copy):
            return f"`ln -s {target.raw}` points outside your working copy from {link} — {hint}."
    return None


def isolated_builder(tool: str, tool_input: dict, event: dict, script=None) -> str | None:
    """Why an isolated builder's call is refused (None: it stays in its working copy)."""
    project = _project()
    copy = builder_copy(event, project)
    if copy is None or isinstance(copy, str):
        return copy
    hint = f"your working copy is {copy.rel}: work there (read other files with the Read tool)"
    if tool in FILE_TOOLS:
        path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
        full = os.path.realpath(os.path.join(project, path))
        if full in copy.own and full.endswith(".report.md"):
            return None  # its report file (the brief names it) lives with the briefs, in the main checkout
        if not _inside(full, [copy.root]):
            return f"This build's builders each write in their own worktree: {path} is outside it — {hint}."
        if ".git" in os.path.relpath(full, copy.root).split(os.sep):
            return "A worktree's .git belongs to the helper: change the project's files only."
        return None
    command = str(tool_input.get("command") or "")
    script = script or shell.parse(command)
    start = f"start every Bash command with `cd {copy.rel} && ` (each command starts in the main checkout)"
    top = script.top()
    if script.errors:
        return f"This command is not plain shell the guard can read: split it into simpler commands, and {start}."
    first = top[0] if top else None
    target = first.words[1] if first is not None and first.name in ("cd", "pushd") and len(first.words) == 2 else None
    after = command.encode("utf-8", "surrogatepass")[first.stmt_end :].decode("utf-8", "replace").lstrip(" \t") if first is not None else ""
    if (
        target is None
        or first is None
        or not target.static
        or first.assigns
        or first.redirects
        and not all(not r.writes for r in first.redirects)
        or not (after == "" or after.startswith(("&&", ";", "||", "\n", ")")))
    ):
        return f"This build's builders each work in their own worktree: {start}."
    here = os.path.realpath(os.path.join(project, target.text))
    if not _inside(here, [copy.root]):
        return f"`cd {target.raw}` is not your working copy — {hint}."
    scope = script.scope_of(first)
    if scope is not None and any(not (scope[0] <= c.start and c.end <= scope[1]) for c in script.commands):
        return f"`cd {target.raw}` inside `( … )` does not move the commands after it: they would run in the main checkout — {start}."
    if "CLAUDE_PROJECT_DIR" in command:
        return f"`$CLAUDE_PROJECT_DIR` is the main checkout — {hint}."
    plan = _cwds(script, first, copy, here, hint)
    if isinstance(plan, str):
        return plan
    for cmd, cwds in plan:
        why = _builder_command(cmd, script, copy, cwds, hint)
        if why:
            return why
    return None


# ---------------------------------------------------------------- the colony's own files (every ant)

COLONY_ONLY = (
    "the colony's state, settings and briefs are written only by Aether (reading them is fine): change the "
    "project's files, and put what you found or what should change in your answer — the Queen records it"
)
REPORT_FILE = re.compile(r"spawns/[A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,64}\.report\.md")
CD_LIKE = ("cd", "pushd", "chdir")
PROC = ("/proc/", "/dev/fd/")  # a path through a process's folders: where it leads is not seen here
UNSEEN = "expands at run time in a command that names the colony's files (.aether/): write the path out"
GLOBS_CHANGED = ("shopt", "setopt", "globignore")  # dotglob, nocaseglob, extglob …: patterns not read here
# The patterns below are compiled on first use (re's cache), not at start-up.
BRACE_SEQUENCE = r"([0-9]+|[A-Za-z])\.\.([0-9]+|[A-Za-z])(?:\.\.-?([0-9]+))?"
WHOLE = {  # how a command changes a folder as a whole → what it does to one that holds the colony
    "removes": "removes the colony's own files (.aether/) with {}",
    "copies": "copies into {}, which holds the colony's own files (.aether/): copy into a subfolder, or name the files",
    "extracts": "extracts into {}, which holds the colony's own files (.aether/): extract into a subfolder (`tar -C dir`, `unzip -d dir`)",
}
COPIERS = {  # command → the options that copy a folder's contents (or a tree of paths) rather than the folder
    "cp": ("-T", "--no-target-directory", "--parents"),
    "mv": ("-T", "--no-target-directory"),
    "ln": ("-T", "--no-target-directory"),
    "install": ("-T", "--no-target-directory"),
    "scp": (),
    "rsync": ("-R", "--relative", "--files-from"),
    "ditto": (),
}
COPY_VALUES = {  # command → its options that take the next word as their value
    "cp": {"-S", "--suffix"},
    "mv": {"-S", "--suffix"},
    "ln": {"-S", "--suffix"},
    "install": {"-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"},
    "scp": {"-c", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-D", "-X"},
    "rsync": {"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--files-from", "--exclude-from", "--include-from"}
    | {"-T", "--temp-dir", "--log-file", "--partial-dir", "--backup-dir", "--link-dest", "--compare-dest", "--copy-dest"}
    | {"--chmod", "--chown", "--rsync-path", "--suffix", "--password-file", "--out-format", "--timeout", "--bwlimit"}
    | {"--max-size", "--min-size", "--port", "-B", "--block-size", "-M", "--remote-option", "--info", "--debug", "--iconv"},
}
RECURSIVE = {"cp": ("-r", "-R", "-a", "--recursive", "--archive"), "scp": ("-r",), "rsync": (), "ditto": ()}  # () always
CODE_RUNNERS = {"poetry", "uv", "uvx", "pipenv", "pdm", "hatch", "rye", "conda", "mamba", "micromamba", "pixi"}
CODE_RUNNERS |= {"npx", "pnpm", "yarn", "bun", "bunx", "npm", "tox", "nox", "direnv", "dotenv"}
CODE_OPTIONS = {"-c", "-e", "-E", "-r", "--eval", "-p", "--print", "--command", "--code", "--execute"}
AWKS = {"awk", "gawk", "mawk", "nawk"}
MAY_WRITE = (  # Python beyond CODE_WRITES: `Path(…).open(…)`, `open(p, m)` with a mode not written as a read
    r"""\.open\s*\(|\bopen\s*\((?:[^()]|\([^()]*\))*?,(?!\s*(?:mode\s*=\s*)?['"][rbtU]*['"]\s*[,)]"""
    r"""|\s*(?:encoding|errors|newline|buffering)\s*=)|(?<![\w.])(?:getattr|eval|compile|globals|vars)\s*\("""
)
OPEN_MODE = r"^\s*(?:\+?[<>]{1,2}&?|\|)\s*|\s*\|\s*$"  # Perl's `open(F, ">file")`, `"| cmd"`


class Colony:
    """The colony's own files, which no ant writes: the project's `.aether/` (and the data folder
    `AETHER_DATA_DIR` names, and the user's `~/.aether/`), but for the notes under
    `.aether/research/`, a builder's report file and, while a build's builders work in their own
    copies, `.aether/worktrees/` (each builder kept to its own by `isolated_builder`). A root's
    name is compared in any case (`.AETHER/` is `.aether/` on a case-insensitive disk); what
    follows it as written."""

    def __init__(self, caste: str, event: dict):
        self.project = os.path.realpath(_project())
        self.root = os.path.realpath(os.path.join(self.project, ".aether"))
        data, home = os.environ.get("AETHER_DATA_DIR"), os.environ.get("AETHER_HOME") or os.path.expanduser("~/.aether")
        self.roots = [self.root, os.path.realpath(home)] + ([os.path.realpath(data)] if data else [])
        self.caste, self.event, self.copy = caste, event, False  # the working copy: looked up when needed

    def under(self, full: str) -> str | None:
        """`full` spelled from the root it is under (`/p/.AETHER/x` → `/p/.aether/x`), or None."""
        for root in self.roots:
            n = len(root)
            if full[:n].lower() == root.lower() and full[n : n + 1] in ("", os.sep):
                return root + full[n:]
        return None

    def holds(self, full: str) -> bool:
        """A root is `full` or lies below it."""
        folder = full.lower().rstrip(os.sep) + os.sep
        return any((root.lower() + os.sep).startswith(folder) for root in self.roots)

    def owns(self, full: str) -> bool:
        """True when the real path `full` is the colony's own (no ant writes it)."""
        own = self.under(full)
        if own is None or _inside(own, [os.path.join(self.root, "research")]):
            return False
        if self.caste in WRITE_ANYWHERE and REPORT_FILE.fullmatch(os.path.relpath(own, self.root)):
            return False  # its report file (the brief names it); an isolated builder's: its own only
        if self.caste in WRITE_ANYWHERE and _inside(own, [os.path.join(self.root, "worktrees")]):
            if self.copy is False:
                self.copy = builder_copy(self.event, self.project)
            return self.copy is None  # a build's builders in their own copies: the rule of isolated builders holds them
        return True

    def refusal(self, what: str, full: str, whole: str = "") -> str | None:
        """Why writing `full` is refused, or None; `whole`: how the command changes it with all it
        holds (a key of WHOLE)."""
        owned = self.owns(full)
        if whole and not owned and self.holds(full):
            return f"{what} {WHOLE[whole].format(full)}: {COLONY_ONLY}."
        if not owned:
            return None
        shown = os.path.relpath(full, self.project) if _inside(full, [self.project]) else full
        return f"{what} is the colony's own ({shown}): {COLONY_ONLY}."


class PersonOnly(Colony):
    """What only a person's typed command writes, which no thread writes, the Queen's included:
    the prompt hook's tickets (`.aether/typed/`) and the Bug Bash state (`.aether/bugs/`)."""

    def __init__(self, event: dict):
        super().__init__("", event)
        self.roots = [os.path.join(self.root, "typed"), os.path.join(self.root, "bugs"), os.path.join(self.root, "config.yaml")]
        self.program = ""  # the command being judged (colony_bash sets it)

    def owns(self, full: str) -> bool:
        if self.program in REPLACERS and full.lower().rstrip(os.sep) == self.root.lower():
            return True  # `.aether` itself moved away, linked or copied over: what it holds with it
        return self.under(full) is not None


PERSON_ONLY = (
    "only Aether's helper writes the Bug Bash state, only the person edits `.aether/config.yaml`, and only a "
    "person's typed `/ant:bug approve <id>` approves"
)
REPLACERS = {"mv", "ln", "cp", "rsync", "install", "rm", "rmdir", "unlink", "tar", "unzip", "ditto", "rename"}


def _colony_file(caste: str, tool_input: dict, event: dict) -> str | None:
    """A file tool aimed at the colony's own files."""
    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
    if not path:
        return None
    return Colony(caste, event).refusal(path, os.path.realpath(os.path.join(_project(), os.path.expanduser(path))))


def _person_only_file(tool_input: dict, event: dict) -> str | None:
    """A main-thread file tool aimed at what only a person's typed command writes."""
    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
    if not path:
        return None
    why = PersonOnly(event).refusal(path, os.path.realpath(os.path.join(_project(), os.path.expanduser(path))))
    return why.replace(COLONY_ONLY, PERSON_ONLY) if why else None


def _pattern(text: str) -> bool:
    """`text` holds a pathname pattern (`*`, `?`, `[`)."""
    return "*" in text or "?" in text or "[" in text


def _brace_group(text: str) -> tuple | None:
    """(start, end, the words) of the first `{…}` bash expands in `text`: `{a,b}`, `{1..3}`, `{a..e}`."""
    for i, c in enumerate(text):
        if c != "{" or text[i - 1 : i] == "$":
            continue
        depth, commas = 0, []
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if text[j] == "," and depth == 1:
                commas.append(j)
            if depth == 0:
                break
        else:
            continue
        if commas:
            bounds = [i, *commas, j]
            return i, j, [text[a + 1 : b] for a, b in zip(bounds, bounds[1:], strict=False)]
        found = re.fullmatch(BRACE_SEQUENCE, text[i + 1 : j])
        if found:
            a, b, step = found.group(1), found.group(2), abs(int(found.group(3) or 1)) or 1
            if a.isdigit() != b.isdigit():
                continue
            x, y = (int(a), int(b)) if a.isdigit() else (ord(a), ord(b))
            if abs(x - y) // step > 64:
                return i, j, None
            items = range(x, y + (1 if y >= x else -1), step if y >= x else -step)
            return i, j, [str(k) if a.isdigit() else chr(k) for k in items]
    return None


def _braces(text: str) -> list | None:
    """The words bash's brace expansion makes of `text` (`.ae{t,}her` → .aether .aeher), None past
    64. Quotes are gone from `text`: a quoted brace is expanded too, which only adds words."""
    if "{" not in text:
        return [text]
    out, todo = [], [text]
    while todo:
        word = todo.pop()
        group = _brace_group(word)
        if group is None:
            out.append(word)
            continue
        i, j, items = group
        if items is None:
            return None
        todo += [word[:i] + item + word[j + 1 :] for item in reversed(items)]
        if len(out) + len(todo) > 64:
            return None
    return out


def _spells_colony(flat: str) -> bool:
    """The line (flattened: `_flat`) spells `.aether`: as written, in a brace expansion
    (`.ae{t,}her`), or as a pattern that matches it (`.ae*`, `.aeth?r`)."""
    if ".aether" in flat:
        return True
    if "{" not in flat and not _pattern(flat):
        return False
    import fnmatch  # noqa: PLC0415 — start-up: only a line with a brace or a pattern needs it

    for token in flat.split():
        if "{" not in token and not _pattern(token):
            continue
        words = _braces(token)
        if words is None:
            return True
        for word in words:
            if ".aether" in word:
                return True
            # a part like `.ae*` (not `.*` alone: every regex has one, and a pattern is expanded where it is a path)
            parts = [p for p in re.split(r"[/<>|;&()=:,]", word) if p[:1] == "." and _pattern(p) and p.strip(".*?[]")]
            if any(fnmatch.fnmatchcase(".aether", p) for p in parts):
                return True
    return False


def _cd_target(cmd):
    """The folder a `cd`, `pushd`, `chdir` or `env -C` goes to (a Word); False when it is not seen
    (`cd`, `cd -`, `pushd +1`, `popd`); None for a command that does not move."""
    at, _, seen = shell.unwrap(cmd.words)
    if seen.get("chdir") is not None:
        return seen["chdir"]
    words = cmd.words[at:]
    name = shell.name_of(words[0]) if words else ""
    if name == "popd":
        return False
    if name not in CD_LIKE:
        return None
    args, options = [], True
    for w in words[1:]:
        if options and w.text == "--":
            options = False
        elif not (options and w.text.startswith("-") and w.text[1:2].isalpha()):  # -P -L -e; `-` and `-1` are folders
            args.append(w)
    lost = args and args[0].static and (args[0].text in ("-", "~") or args[0].text[:1] in ("+", "-") and args[0].text[1:].isdigit())
    return args[0] if args and not lost else False


def _cdpath(script) -> list | None:
    """The folders a `CDPATH=` in the line gives `cd` to look in ([] without one; None: not seen)."""
    if "CDPATH" not in script.source:
        return []
    values = script.bindings.get("CDPATH")
    if not values:
        return None
    spelled = [_braces(v) for v in values]
    return None if any(s is None for s in spelled) else [e for s in spelled for v in s or [] for e in v.split(":")]


def _plain_cd(script, first) -> bool:
    """The line starts `cd X && …` (X written out, no pattern): what follows runs in X alone."""
    if first.name != "cd" or len(first.words) != 2 or first.redirects or first.assigns or first.depth:
        return False
    text = first.words[1].text
    if not first.words[1].static or _pattern(text) or "{" in text or "CDPATH" in script.source:
        return False
    after = script.source.encode("utf-8", "surrogatepass")[first.stmt_end :].decode("utf-8", "replace").lstrip(" \t")
    return after.startswith("&&") and script.scope_of(first) is None


def _colony_cwds(script, colony: Colony) -> tuple[list, bool]:
    """Every folder a command of the line may run in (the project, the session's folder, each `cd`
    target from each of those, patterns and braces expanded, `CDPATH=` followed; after a leading
    `cd X &&`, X alone), and whether one cannot be known (`cd $X`, `cd -`, `cd`, `popd`)."""
    start = colony.event.get("cwd")
    cwds = [colony.project] + ([os.path.realpath(start)] if isinstance(start, str) and start.startswith("/") else [])
    first = script.commands[0] if script.commands else None
    if first is not None and _plain_cd(script, first):
        cwds = [os.path.realpath(os.path.join(c, first.words[1].text)) for c in cwds]
    else:
        first = None  # `pushd X`, `cd -P X`, `cd X 2>/dev/null`, `CDPATH=… cd X`: judged with the others below
    cdpath = _cdpath(script)
    lost = False
    for cmd in script.commands:
        target = _cd_target(cmd) if cmd is not first else None
        if target is None:
            continue
        texts = _braces(target.text) if target is not False and target.static else None
        if texts is None:
            lost = True  # `cd`, `cd -`, `popd`, `cd $X`: the folder is not seen here
            continue
        new = []
        for text in texts:
            bases = cwds
            if not text.startswith(("/", "./", "../")) and text not in (".", ".."):
                if cdpath is None:
                    lost = True
                bases = cwds + [os.path.join(c, entry) for c in cwds for entry in cdpath or []]
            new += [os.path.realpath(p) for p in _colony_paths(text, bases)]
        cwds = list(dict.fromkeys(cwds + new))
        lost = lost or len(cwds) > 64
    return cwds, lost


def _join(folder, name: str):
    """The Word `folder/name`, its expansions kept (`$D/x`)."""
    return shell.Word(f"{folder.raw}/{name}", f"{folder.text}/{name}", folder.static, segments=[*folder.segments, ("text", "/" + name)])


def _option_value(args, i: int, short: str, long: str):
    """The value of `-C X`, `-CX`, `--directory=X`, `--directory X` at args[i] (a Word), or None."""
    text = args[i].text
    if text == short or long and text == long:
        return args[i + 1] if i + 1 < len(args) else None
    if long and text.startswith(long + "="):
        return shell.Word(text, text.split("=", 1)[1], args[i].static)
    if text.startswith(short) and len(text) > 2 and not text.startswith("--"):
        return shell.Word(text, text[2:], args[i].static)
    return None


def _landings(name: str, words) -> list:
    """(word, what, how) for where a copy, move or link lands: DEST/NAME for each source
    (`cp -r /tmp/x/.aether .` lands on `.aether`), and DEST itself as a whole when a recursive copy
    takes a folder's contents (`cp -r x/. .`, `rsync -a x/ .`, `cp -rT`, a source not seen)."""
    args, positional, dest, options, skip = words[1:], [], None, True, None
    values = COPY_VALUES.get(name, set())
    for i, w in enumerate(args):
        text = w.text
        if w is skip:
            continue
        if options and text == "--":
            options = False
        elif options and text.startswith("-") and text != "-":
            short = not text.startswith("--") and text[1:].isalpha()
            if name in ("cp", "mv", "ln", "install") and dest is None:  # -t DEST, -rt DEST, -tDEST, --target-directory=DEST
                cluster = short and text.endswith("t") and i + 1 < len(args)
                dest = args[i + 1] if cluster else _option_value(args, i, "-t", "--target-directory")
                skip = dest if cluster or text == "--target-directory" else skip
            if (text in values or short and f"-{text[-1]}" in values) and i + 1 < len(args):
                skip = args[i + 1]  # the option's value: `-S .bak`, `rsync -e ssh`
        else:
            positional.append(w)
    if dest is None:
        dest = positional.pop() if len(positional) > 1 else shell.Word(".", ".") if name == "ln" else None
    if dest is None:
        return []
    recursive = name in RECURSIVE and (not RECURSIVE[name] or bool(_has_option(args, RECURSIVE[name])))
    as_whole = bool(_has_option(args, COPIERS[name]))
    out = []
    for source in positional:
        what = f"`{name} … {source.raw} {dest.raw}`"
        texts = _braces(source.text) if source.static else None  # `{evil/.,x}`: each source as the shell spells it
        for text in texts or [""]:
            text = text.split(":", 1)[1] if name in ("rsync", "scp") and ":" in text.split("/", 1)[0] else text
            base = os.path.basename(text.rstrip("/"))
            if recursive and (as_whole or texts is None or text.endswith("/") or base in ("", ".", "..") or name == "ditto"):
                out.append((dest, what, "copies"))
            elif texts is not None:
                out.append((_join(dest, base), what, "copies" if recursive else ""))
            else:
                out.append((shell.Word(dest.raw, dest.text, False, segments=[("other", source.raw)]), what, ""))
    return out


def _extracts_into(cmd, name: str, words) -> list:
    """The folders an archive is extracted into ("/" when its paths are taken as written)."""
    args, here = words[1:], shell.Word(".", ".")
    texts = [w.text for w in args]
    if name in ("tar", "bsdtar", "gtar"):
        old = bool(texts) and re.fullmatch(r"[A-Za-z]+", texts[0]) is not None and "x" in texts[0]
        if not old and not _has_option(args, ("-x", "--extract", "--get")) or _has_option(args, ("-O", "--to-stdout", "--to-command")):
            return []
        if _has_option(args, ("-P", "--absolute-names")):
            return [shell.Word("/", "/")]
        dest = here
        for i in range(len(args)):
            folder = _option_value(args, i, "-C", "--directory")
            if folder is not None:
                dest = folder if folder.text.startswith("/") or not folder.static else _join(dest, folder.text)
        return [dest]
    if name == "unzip":
        if _has_option(args, ("-l", "-t", "-v", "-Z", "-p", "-c", "-z")):
            return []
        if _has_option(args, ("-:",)):
            return [shell.Word("/", "/")]
        return [next((d for i in range(len(args)) if (d := _option_value(args, i, "-d", "")) is not None), here)]
    if name in ("7z", "7za", "7zr", "7zz"):
        found = [shell.Word(w.raw, w.text[2:], w.static) for w in args if w.text.startswith("-o")]
        return (found or [here]) if texts[:1] in (["x"], ["e"]) else []
    if name == "cpio" and _has_option(args, ("-i", "--extract")):
        return [shell.Word("/", "/")] if not _has_option(args, ("--no-absolute-filenames",)) else [here]
    if name == "cpio" and _has_option(args, ("-p", "--pass-through")):
        return [w for w in args if not w.text.startswith("-")][-1:]
    if name == "jar" and texts and "x" in texts[0] and re.fullmatch(r"-?[a-zA-Z]+", texts[0]):
        return [here]
    if PYTHON.match(name):
        how, module, rest = code_source(cmd, name, words)
        if how == "module" and module in ("zipfile", "tarfile") and _has_option(rest, ("-e", "--extract")):
            operands = [w for w in rest if not w.text.startswith("-")]
            return [operands[1] if len(operands) > 1 else here]
    return []


def _git_moves(words, cwds: list, project: str) -> list:
    """(word, what, how, folders) for the git commands that take `.aether/` (ignored) away:
    `git clean -x` below where it runs, `git stash --all` the whole work tree."""
    options, sub, rest = git_parts(words)
    at = next((v for o, v in options if o == "-C"), ".")
    if sub == "clean" and _has_option(rest, ("-x", "-X")):
        return [(shell.Word(at, at), "`git clean -x` (.aether/ is ignored: it goes too)", "removes", cwds)]
    subs = [w.text for w in rest if not w.text.startswith("-")]
    if sub == "stash" and subs[:1] in ([], ["push"], ["save"]) and _has_option(rest, ("-a", "--all")):
        tops = [_git_top(os.path.realpath(os.path.join(c, at)), project) for c in cwds]
        return [(shell.Word(t, t), "`git stash --all` (.aether/ is ignored: it goes too)", "removes", [""]) for t in tops]
    return []


def _git_top(folder: str, project: str) -> str:
    """The work tree `folder` is in (the project when none is found)."""
    path = folder
    while not os.path.exists(os.path.join(path, ".git")):
        parent = os.path.dirname(path)
        if parent == path:
            return project
        path = parent
    return path


def _colony_targets(cmd, cwds: list, read_only: bool) -> list:
    """(word, what it is, how it changes a folder as a whole (a key of WHOLE, or ""), the folders it is
    read from) for every place a command may write: its write redirections' targets; every word of a
    command not known to only read (`cp`, `tee`, `sed -i`, `rm`, `git add` …; an `ln -s` target from
    the link's folder); where a copy lands, what an archive is extracted into; what `xargs` feeds it
    (unseen); what `git clean -x` and `git stash --all` take away."""
    out = [(r.target, f"`{r.fd or ''}{r.op} {r.target.raw}`", "", cwds) for r in cmd.redirects if r.writes and r.target is not None]
    if read_only:
        return out
    at, wrappers, _ = shell.unwrap(cmd.words)
    words = cmd.words[at:]
    name = shell.name_of(words[0]) if words else ""
    whole = "removes" if name == "rm" and _has_option(words[1:], ("-r", "-R", "--recursive")) else ""
    link = words[-1].text if name == "ln" and _has_option(words[1:], ("-s", "--symbolic")) else None
    linked = [w for w in words[1:-1] if not w.text.startswith("-")] if link else []
    folders = [os.path.join(c, f) for c in cwds for f in (os.path.dirname(link) or ".", link)] if link else cwds
    program = words[0] if words else None  # running it writes nothing; a `cd` moves (see _colony_cwds)
    if name not in CD_LIKE:
        out += [(w, f"`{w.raw}`", whole, folders if any(w is x for x in linked) else cwds) for w in cmd.words if w is not program]
    if "xargs" in wrappers:
        out.append((shell.Word("", "", False, segments=[("other", "")]), f"`xargs {name}`", "", cwds))
    if name in COPIERS:
        out += [(w, what, how, cwds) for w, what, how in _landings(name, words)]
    out += [(w, f"`{name} …` (an archive)", "extracts", cwds) for w in _extracts_into(cmd, name, words)]
    if name == "git":
        out += _git_moves(words, cwds, _project())
    return out


def _colony_paths(text: str, bases: list) -> list:
    """The real paths a path word may stand for, from each folder (a pattern as it expands now)."""
    bases = [""] if text.startswith("/") else bases
    if "/" not in text and text not in ("", ".", ".."):  # one name in a real folder: real unless it is a link
        out = [p if not os.path.islink(p := os.path.join(base, text)) else os.path.realpath(p) for base in bases]
    else:
        out = [os.path.realpath(os.path.join(base, text)) for base in bases]
    if _pattern(text):
        import glob  # noqa: PLC0415 — start-up: only a changing command with a pattern needs it

        out += [os.path.realpath(p) for base in bases for p in glob.glob(os.path.join(glob.escape(base), text))]
    return out


def _language(name: str) -> str:
    return "python" if PYTHON.match(name or "-") else name if name in INTERPRETERS or name in AWKS or name == "sed" else ""


def _colony_code(cmd, name: str, words, read_only: bool) -> tuple[str, str, list]:
    """(the program, its language, the code words) a command runs: an interpreter's -c/-e/-r code
    or here-document (through `poetry run`, `uv run`, `npx` … too; None when a pipe feeds it), awk's
    program, sed's scripts, the code option of a command not known to only read ("" language)."""
    if name in CODE_RUNNERS:
        at = next((k for k in range(1, len(words)) if _language(shell.name_of(words[k]))), None)
        if at is not None:
            name, words = shell.name_of(words[at]), words[at:]
    language = _language(name)
    if language == "python" or name in INTERPRETERS:
        how, code, _ = code_source(cmd, name, words)
        return name, language, [code] if how in ("code", "stdin") else []
    if language == "awk":
        program = awk_program(words)[0]
        return name, language, [program] if program is not None else []  # `awk -f file`: a program not seen
    if language == "sed":
        return name, language, sed_args(words)[0]
    if read_only or name in shell.SHELLS:
        return name, "", []
    return name, "", [w for o, w in zip(words, words[1:], strict=False) if o.text in CODE_OPTIONS and re.search(r"[\s(;]", w.text)]


def _code_writes(text: str, language: str) -> bool:
    """Code that may write files: Python's and Node's as CODE_WRITES reads them, awk's `print >`,
    sed's `w`; Perl's, Ruby's, PHP's and a language the guard does not know are not read here."""
    if language in ("python", "node", "nodejs"):
        return bool(code_writes(text) or language == "python" and re.search(MAY_WRITE, text))
    if language in AWKS:
        return bool(AWK_REFUSED.search(text))
    if language == "sed":
        return bool(sed_script(text))
    return True


def _colony_code_refusal(cmd, script, bindings, colony: Colony, cwds: list, read_only: bool, named: bool) -> str | None:
    """Code an ant runs that may write and names the colony's files: spelling `.aether`, or a string
    that resolves into them (a link, an absolute path, the data folder)."""
    at, _, _ = shell.unwrap(cmd.words)
    words = cmd.words[at:]
    name = shell.name_of(words[0]) if words else ""
    name, language, codes = _colony_code(cmd, name, words, read_only)
    for code in codes:
        if code is None:
            if named:
                return f"`{name}` {FROM_A_PIPE}, in a command that names the colony's files (.aether/) — {COLONY_ONLY}."
            continue
        for text in _values(code, cmd, script, bindings) or [code.text]:
            if not _code_writes(text, language):
                continue
            if ".aether" in _flat(text):
                return f"`{name}` runs code that may write and names the colony's files (.aether/) — {COLONY_ONLY}."
            for found in dict.fromkeys(re.sub(OPEN_MODE, "", m.group(2)) for m in CODE_STRING.finditer(text)):
                why = next((w for full in _colony_paths(found, cwds) if (w := colony.refusal(f"`{found}` in the code", full))), None)
                if why:
                    return why
    return None


def _home(word):
    """`~` and `~/x` with the user's folder written out (`cp -r x/. ~` copies over ~/.aether)."""
    if word.segments[:1] != [("other", "~")] or word.segments[1:2] and word.segments[1][1][:1] not in ("", "/"):
        return word
    return shell.Word(word.raw, word.text, False, segments=[("text", os.path.expanduser("~")), *word.segments[1:]])


def _spellings(texts: list, globs_changed: bool) -> list | None:
    """Every word the texts of a target may become (braces expanded), None when not seen."""
    out = []
    for text in texts:
        words = _braces(text)
        if words is None or globs_changed and _pattern(text):
            return None
        out += words
    return out


def colony_bash(caste: str, script, event: dict, colony: Colony | None = None) -> str | None:
    """Why an ant's command writes the colony's own files (None: it does not, as far as it shows).
    A path the guard cannot see (`$X`, `$(…)`, after `cd $X`) is refused only in a command that
    names the colony's files — spells `.aether` (in braces or a pattern too), or `cd`s into them:
    the one way to name them besides a link the guard resolves."""
    flat = _flat(script.source)
    globs_changed = any(k in flat for k in GLOBS_CHANGED)
    named = globs_changed or _spells_colony(flat)
    if script.errors:
        unreadable = "This command names the colony's files (.aether/) but is not plain shell the guard can read"
        return f"{unreadable}: split it into simpler commands — {COLONY_ONLY}." if named else None
    colony = colony or Colony(caste, event)
    cwds, lost = _colony_cwds(script, colony)
    named = named or any(colony.under(c) is not None for c in cwds)
    bindings = _bindings(script)
    for cmd in script.commands:
        read_only = _read_only_program(cmd, False) is None
        if isinstance(colony, PersonOnly):
            at, _, _ = shell.unwrap(cmd.words)
            colony.program = shell.name_of(cmd.words[at]) if at < len(cmd.words) else ""
        why = _colony_code_refusal(cmd, script, bindings, colony, cwds, read_only, named)
        if why:
            return why
        for word, what, whole, bases in _colony_targets(cmd, cwds, read_only):
            texts = _values(_home(word), cmd, script, bindings)
            spelled = _spellings(texts, globs_changed) if texts is not None else None
            if named and (spelled is None or any(t.startswith(PROC) or lost and not t.startswith("/") for t in spelled)):
                return f"{what} {UNSEEN} — {COLONY_ONLY}."
            fulls = [f for t in spelled or [] for c in _candidates(shell.Word(word.raw, t)) for f in _colony_paths(c, bases)]
            why = next((why for full in fulls if (why := colony.refusal(what, full, whole))), None)
            if why:
                return why
    return None


# ---------------------------------------------------------------- the decision


def runs_aether(script) -> bool:
    for cmd in script.commands:
        at, _, _ = shell.unwrap(cmd.words)
        if at < len(cmd.words) and shell.name_of(cmd.words[at]) == "aether":
            return True
    return False


def _ant_bash(caste: str, script, event: dict) -> str | None:
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
        return isolated_builder("Bash", event.get("tool_input") or {}, event, script)
    return None


def _ant_file(caste: str, tool: str, tool_input: dict, event: dict) -> str | None:
    own = _colony_file(caste, tool_input, event)
    if own:
        return own
    if caste in WRITE_ANYWHERE:
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
        why = colony_bash("", script, event, PersonOnly(event))
        return _deny(why.replace(COLONY_ONLY, PERSON_ONLY)) if why else queen(script)
    if not ours:
        return None  # not one of ours
    why = _ant_bash(caste, script, {**event, "tool_input": tool_input})
    return _deny(why) if why else mod_grant("Bash", event, script)


def main() -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        return 0  # not ours to judge
    try:
        decision = decide(event) if isinstance(event, dict) else None
    except Exception as exc:  # a bug here must not let an ant through
        ant = isinstance(event, dict) and str(event.get("agent_type") or "").startswith("ant:")
        decision = (
            _deny(f"Aether's guard failed on this command ({type(exc).__name__}: {exc}): stop, and say so in your result block.")
            if ant
            else None
        )
    if decision:
        json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
