"""Rules 4 and 5, read-only castes (and the Bug Bash researcher): every write form is refused,
and so are the options that run other commands; known read commands, tests and checks and the
project's own programs run. The Bug Bash analyzer and planner (`strict`): search commands only."""

from __future__ import annotations

import os
import re

from shell_words import SHELLS, Word, _shell_body, name_of, unwrap

from .reading import (
    AWK_REFUSED,
    FROM_A_PIPE,
    _has_option,
    awk_program,
    code_source,
    code_writes,
    git_refusal,
    sed_args,
    sed_script,
)
from .state import _inside, _project
from .tables import (
    DEV_FILES,
    ENV_REFUSED,
    ENV_REFUSED_PREFIXES,
    FIND_ACTIONS,
    GIT_READ,
    GIT_SEARCH,
    INTERPRETERS,
    PYTEST_WRITES,
    PYTHON,
    READERS,
    SEARCH_COMMANDS,
    SEEN_THROUGH,
    WRITE_MODULES,
    WRITERS,
    XARGS_OPTIONS,
    XARGS_SAFE,
)


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


def awk_refusal(words) -> str | None:
    program, option = awk_program(words)
    if option:
        return f"awk {option}"
    if program is None or not program.static:
        return "awk with a program built at run time"
    return "awk system(), | or print >" if re.search(AWK_REFUSED, program.text) else None


def _runner_python(cmd, words):
    """python: code given with -c or on stdin must not write; `-m` modules that write are refused."""
    how, what, rest = code_source(cmd, "python", words)
    if how == "module":
        if what.split(".")[0] in WRITE_MODULES or what in WRITE_MODULES:
            return f"python -m {what}"
        return check([Word(what, what), *rest]) if (check := RUNNERS.get(what)) else None
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
    return _subcommand(words, {}, name_of(words[0]))


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
            start = next(k for k, w in enumerate(cmd.words) if name_of(w) == "xargs")
            for w in cmd.words[start + 1 : at]:
                if (
                    w.text.startswith("-")
                    and w.text.split("=", 1)[0] not in XARGS_OPTIONS
                    and not any(w.text.startswith(o) and len(o) == 2 for o in ("-n", "-L", "-P", "-d"))
                ):
                    return f"xargs {w.text}", "runs commands the guard cannot read"
            inner = name_of(cmd.words[at]) if at < len(cmd.words) else ""
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
        if target is not None and target.static and re.fullmatch(DEV_FILES, target.text):
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
    at, wrappers, seen = unwrap(cmd.words)
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
    name = name_of(words[0])
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
    if name in SHELLS:
        how, body = _shell_body(words, 0)
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
