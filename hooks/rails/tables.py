"""The guard's tables: the castes, and the command names, options and variables its rules check
a command against. Plain data (a few patterns compiled once); the rules beside it read them."""

from __future__ import annotations

import re

# ---------------------------------------------------------------- castes and tools

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

# ---------------------------------------------------------------- the approval gate (approval.py)

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

# ---------------------------------------------------------------- what read-only castes run (read_only.py)

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
DEV_FILES = r"/dev/(null|stdout|stderr|tty|fd/[0-9]+)"  # a pattern, compiled on first use (re's cache)
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
GIT_SAFE_CONFIG = (  # a pattern, compiled on first use (re's cache): only `git -c` needs it
    r"(?i)(color\.[\w.-]+|core\.quotepath|diff\.noprefix|log\.[\w.-]+|column\.ui|"
    r"advice\.[\w.-]+|i18n\.[\w.-]+|pager\.\w+=false)(=.*)?$"
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

# ---------------------------------------------------------------- the Queen's own helper calls (queen.py): her command's tree

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

# ---------------------------------------------------------------- a mod ant's grant (mod_grant.py)

# parts of a command a slash command's Bash grant lets through beside its own prefixes (read-only)
GRANT_READ_ONLY = {"echo", "cat", "head", "tail", "true", "ls", "pwd", "wc", "grep"}

# ---------------------------------------------------------------- what a word may stand for (reading.py), a `cd` chain (builders.py)

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

# ---------------------------------------------------------------- the colony's own files (colony.py)

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
