"""A Bash command line as hooks/shell.py reads it — its `Script`, `Command`s, `Word`s,
`Redirect`s and here-documents — with the quote helpers that give a word its value and `unwrap`,
which finds the command that `env`, `sudo`, `timeout` … run. No parser here: the guard's rules
import this on every call; hooks/shell.py (tree-sitter-bash) is imported only to read a command.
"""

from __future__ import annotations

import codecs
import os

SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "fish", "busybox"}
# Commands that run the command after their own options (`env X=1 cmd`, `timeout 5 cmd`):
# name → (options that take a value, positional words before the command).
WRAPPERS = {
    "env": ({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, 0),
    "sudo": (
        {
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
        },
        0,
    ),
    "doas": ({"-u", "-C"}, 0),
    "runuser": ({"-u", "-g", "-G", "--user", "--group"}, 0),
    "nohup": (set(), 0),
    "time": ({"-f", "-o", "--format", "--output"}, 0),
    "timeout": ({"-s", "-k", "--signal", "--kill-after"}, 1),
    "nice": ({"-n", "--adjustment"}, 0),
    "ionice": ({"-c", "-n", "-p", "-t", "--class", "--classdata"}, 0),
    "chrt": (set(), 1),
    "taskset": (set(), 1),
    "stdbuf": ({"-i", "-o", "-e"}, 0),
    "setsid": (set(), 0),
    "xargs": (
        {
            "-a",
            "-d",
            "-E",
            "-e",
            "-I",
            "-i",
            "-L",
            "-l",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        },
        0,
    ),
    "command": (set(), 0),
    "builtin": (set(), 0),
    "exec": ({"-a"}, 0),
    "coproc": (set(), 0),
    "unbuffer": (set(), 0),
    "flock": ({"-w", "-E", "--timeout", "--conflict-exit-code"}, 1),
}


def name_of(word: Word | None) -> str:
    """The program a command word names (`/usr/bin/git` → `git`), or "" when it expands."""
    return os.path.basename(word.text) if word is not None and word.static else ""


class Word:
    """One shell word: `text` is its value (quotes removed, escapes decoded; an expansion is
    kept as written); `static` when nothing in it expands at run time. `segments` spell it as
    ("text", s), ("var", name) for a plain `$X`/`${X}`, ("pwd", "") for `$(pwd)`, ("number", raw)
    for `$((…))`, ("other", raw) for any other expansion (and a leading `~`)."""

    __slots__ = ("raw", "text", "static", "vars", "substs", "tilde", "segments")

    def __init__(self, raw: str, text: str, static: bool = True, vars_=(), substs=(), tilde=False, segments=None):
        self.raw, self.text, self.static = raw, text, static
        self.vars, self.substs, self.tilde = set(vars_), list(substs), tilde
        self.segments = segments if segments is not None else [("text", text)]

    def __repr__(self):
        return f"Word({self.text!r}{'' if self.static else ', dynamic'})"


class Redirect:
    """`op` as written (`>`, `>>`, `&>`, `>|`, `>&`, `<`, `<&`, `<<<` …), `fd` (or None), `target`."""

    __slots__ = ("op", "fd", "target")

    def __init__(self, op: str, fd: str | None, target: Word | None):
        self.op, self.fd, self.target = op, fd, target

    @property
    def writes(self) -> bool:
        """Opens a file for writing (not a copy of a descriptor: `2>&1`, `>&-`)."""
        if self.op in ("<", "<&", "<<<", "<<", "<<-"):
            return False
        target = self.target
        return not (self.op == ">&" and target is not None and target.static and (target.text.isdigit() or target.text == "-"))


class Heredoc:
    __slots__ = ("body", "quoted", "static")

    def __init__(self, body: str, quoted: bool, static: bool):
        self.body, self.quoted, self.static = body, quoted, static


class Command:
    """A simple command: `words` (the name first), `assigns` ([(name, value Word or None)]),
    `redirects`, `heredoc`, `herestring`. `kind`: simple, declare (export/declare/local/…),
    unset, test, for, assign (assignments alone), group (a redirection on a compound command),
    find-exec (the command of a find -exec). `depth`: 0 at the top, more inside a substitution
    or a body another command runs; `parent`: that command."""

    __slots__ = (
        "words",
        "assigns",
        "redirects",
        "heredoc",
        "herestring",
        "kind",
        "depth",
        "parent",
        "start",
        "end",
        "stmt_end",
        "in_function",
    )

    def __init__(self, kind="simple", depth=0, start=0, end=0, parent=None, in_function=False):
        self.words: list[Word] = []
        self.assigns: list[tuple[str, Word | None]] = []
        self.redirects: list[Redirect] = []
        self.heredoc: Heredoc | None = None
        self.herestring: Word | None = None
        self.kind, self.depth, self.parent = kind, depth, parent
        self.start, self.end, self.stmt_end = start, end, end
        self.in_function = in_function

    @property
    def name(self) -> str:
        return name_of(self.words[0]) if self.words else ""

    def texts(self) -> list[str]:
        return [w.text for w in self.words]

    def __repr__(self):
        return f"Command({self.kind}, {self.texts()!r})"


class Script:
    """What `parse` found: `commands` in source order, the functions defined, whether an output
    process substitution `>(…)` or a background `&` appears, whether the parser found errors,
    `bindings` (variable → the static words it is given, None when it is given anything else),
    `bound_at` (where it is first given one: a use before that is the environment's value) and
    `subshells` (the spans of `( … )`, `$( … )`, `<( … )` and a pipeline's stages: a `cd` inside
    one does not move the commands after it)."""

    def __init__(self, source: str):
        self.source = source
        self.commands: list[Command] = []
        self.functions: list[str] = []
        self.out_subst = False
        self.background = False
        self.errors = False
        self.bindings: dict[str, list | None] = {}
        self.bound_at: dict[str, int] = {}  # variable → where it is first given a value
        self.node_types: set[str] = set()
        self.statements = 0
        self.subshells: list[tuple[int, int]] = []

    def top(self) -> list[Command]:
        return [c for c in self.commands if c.depth == 0]

    def scope_of(self, cmd: Command) -> tuple[int, int] | None:
        """The span of the innermost subshell `cmd` runs in (None: the command line's own shell)."""
        spans = [s for s in self.subshells if s[0] <= cmd.start and cmd.end <= s[1]]
        return min(spans, key=lambda s: s[1] - s[0]) if spans else None


# ---------------------------------------------------------------- a word's value: quotes and escapes


def _unescape(raw: str) -> str:
    """An unquoted word's backslashes: `a\\pprove` → `approve`, a backslash-newline is nothing."""
    out, i = [], 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


def _unescape_double(raw: str) -> str:
    """Inside double quotes a backslash escapes only $ ` " \\ and a newline."""
    out, i = [], 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


def _ansi_c(raw: str) -> str:
    """`$'\\x61b'` → `ab`."""
    body = raw[2:-1] if raw.startswith("$'") and raw.endswith("'") else raw
    try:
        return codecs.decode(body.replace("\\e", "\\x1b").replace("\\E", "\\x1b"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


# ---------------------------------------------------------------- the command a wrapper runs, a shell's body


def unwrap(words: list[Word]) -> tuple[int, list[str], dict]:
    """(index of the command the wrappers run, the wrappers' names, what they set: `chdir` (a
    Word), `assigns` ([(name, Word)]), `split` (env -S), `xargs`, `unset` ([names])) —
    `sudo env X=1 timeout 5 cmd` → the index of `cmd`."""
    i, names = 0, []
    seen: dict = {"assigns": [], "unset": []}
    while i < len(words):
        name = name_of(words[i])
        if name not in WRAPPERS:
            break
        names.append(name)
        with_value, positional = WRAPPERS[name]
        i += 1
        while i < len(words):
            text = words[i].text
            if text == "--":
                i += 1
                break
            if name == "env" and "=" in text and text.split("=", 1)[0].isidentifier():
                seen["assigns"].append((text.split("=", 1)[0], words[i]))
                i += 1
                continue
            if not text.startswith("-") or text == "-" and name != "env":
                break
            if text in with_value and i + 1 < len(words):
                if name == "env" and text in ("-C", "--chdir"):
                    seen["chdir"] = words[i + 1]
                if name == "env" and text in ("-u", "--unset"):
                    seen["unset"].append(words[i + 1].text)
                if name == "env" and text in ("-S", "--split-string"):
                    seen["split"] = True
                i += 2
                continue
            if name == "env" and text.startswith(("--chdir=", "-C")) and len(text) > 2:
                seen["chdir"] = Word(text, text.split("=", 1)[-1] if "=" in text else text[2:], words[i].static)
            if name == "env" and text.startswith(("--unset=", "-u")) and len(text) > 2:
                seen["unset"].append(text.split("=", 1)[-1] if "=" in text else text[2:])
            if name == "env" and text.startswith(("-S", "--split-string")):
                seen["split"] = True
            if name == "env" and text in ("-i", "-", "--ignore-environment"):
                seen["clear"] = True
            i += 1
        if name == "xargs":
            seen["xargs"] = True
        i += positional if name != "taskset" or not any(w.text == "-p" for w in words[:i]) else 0
    return i, names, seen


def _shell_body(words: list[Word], at: int) -> tuple[str, Word | None]:
    """For `sh [options] …` at `at`: ("c", the -c body), ("file", the script), or ("stdin", None)."""
    i = at + 1
    with_c = False
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            with_c = with_c or (not text.startswith("--") and "c" in text[1:])
            i += 1
            continue
        break
    if with_c:
        return "c", words[i] if i < len(words) else None
    return ("file", words[i]) if i < len(words) else ("stdin", None)
