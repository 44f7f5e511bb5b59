"""How the rules read a command's words: the line flattened as the shell may glue it, options,
what sed's script, awk's program, git's subcommand and an interpreter's code do, every value a
word may stand for, and the words a brace expansion makes. Shared by the rules; nothing here
decides."""

from __future__ import annotations

import re

from shell_words import Word

from .tables import (
    CODE_WRITES,
    DECLARERS,
    GIT_GLOBAL_WITH_VALUE,
    GIT_LISTING_FLAGS,
    GIT_LISTS,
    GIT_RUNS,
    GIT_SAFE_CONFIG,
    INTERPRETER_VALUES,
    INTERPRETERS,
    KNOWN_VALUES,
    PYTHON,
    REBINDERS,
)

# ---------------------------------------------------------------- the line, its words and options


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


# ---------------------------------------------------------------- sed's script


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
            scripts.append(Word(text, text.split("=", 1)[1], args[i].static))
        elif text in ("-l", "--line-length", "-f", "--file") or text.startswith("-") and text.endswith("f") and _short_in(text, "f"):
            i += 1
        elif not text.startswith("-") and not scripts:
            scripts.append(args[i])
            scripts.append(None)  # the first operand was the script: the rest are files
        i += 1
    return [s for s in scripts if s is not None], quiet, form


# ---------------------------------------------------------------- awk's program


AWK_REFUSED = r"system\s*\(|(?<!\|)\|(?!\|)|\|&|@(load|include)|\bprintf?\b[^;}\n]*>"  # compiled on first use


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


# ---------------------------------------------------------------- git's subcommand


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
        if option == "-c" and not re.match(GIT_SAFE_CONFIG, value):
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


# ---------------------------------------------------------------- an interpreter's code

FROM_A_PIPE = "reads code from a pipe the guard cannot see: give it with -c/-e or a quoted here-document"


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
        return "stdin", Word("", cmd.heredoc.body, cmd.heredoc.static), None
    if cmd.herestring is not None:
        return "stdin", cmd.herestring, None
    if any(r.op == "<" for r in cmd.redirects):
        return "file", None, None
    return "stdin", None, None


_CODE_WRITES_FOUND: dict = {}  # code → what of it writes: one search per code a call runs, whichever rule asks


def code_writes(text: str) -> str | None:
    """The first thing in `text` that writes files or runs commands (CODE_WRITES), or None."""
    if text not in _CODE_WRITES_FOUND:
        found = re.search(CODE_WRITES, text)
        _CODE_WRITES_FOUND.clear()  # one hook call runs through here: keep the newest only
        _CODE_WRITES_FOUND[text] = found.group(0).strip() if found else None
    return _CODE_WRITES_FOUND[text]


# ---------------------------------------------------------------- what a word may stand for


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


CODE_STRING = r"""(['"])((?:\\.|(?!\1)[^\\\n])*)\1"""  # a string in code; compiled on first use


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


# ---------------------------------------------------------------- braces and patterns

BRACE_SEQUENCE = r"([0-9]+|[A-Za-z])\.\.([0-9]+|[A-Za-z])(?:\.\.-?([0-9]+))?"  # compiled on first use


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
