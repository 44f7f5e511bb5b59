"""Rule 7 in Bash: a command an ant runs writes none of the colony's own files (colony.py) — no
redirection into them, no write form of a command not known to only read (paths resolved
through `..`, links, braces, patterns and the line's `cd`s, `pushd`s and `CDPATH=`), no copy or
extraction of a whole folder into one that holds them, no `git clean -x` or `git stash --all`,
no code (Perl, PHP, Ruby, awk, Python and Node that write) that names them. A path the guard
cannot see is refused in a command that names them."""

from __future__ import annotations

import os
import re

from shell_words import SHELLS, Word, name_of, unwrap

from .colony import COLONY_ONLY, Colony, PersonOnly
from .read_only import _read_only_program
from .reading import (
    AWK_REFUSED,
    CODE_STRING,
    FROM_A_PIPE,
    _bindings,
    _braces,
    _candidates,
    _flat,
    _has_option,
    _pattern,
    _values,
    awk_program,
    code_source,
    code_writes,
    git_parts,
    sed_args,
    sed_script,
)
from .state import _project
from .tables import AWKS, CODE_OPTIONS, CODE_RUNNERS, COPIERS, COPY_VALUES, INTERPRETERS, PYTHON, RECURSIVE

CD_LIKE = ("cd", "pushd", "chdir")
PROC = ("/proc/", "/dev/fd/")  # a path through a process's folders: where it leads is not seen here
UNSEEN = "expands at run time in a command that names the colony's files (.aether/): write the path out"
GLOBS_CHANGED = ("shopt", "setopt", "globignore")  # dotglob, nocaseglob, extglob …: patterns not read here
# The patterns below are compiled on first use (re's cache), not at start-up.
MAY_WRITE = (  # Python beyond CODE_WRITES: `Path(…).open(…)`, `open(p, m)` with a mode not written as a read
    r"""\.open\s*\(|\bopen\s*\((?:[^()]|\([^()]*\))*?,(?!\s*(?:mode\s*=\s*)?['"][rbtU]*['"]\s*[,)]"""
    r"""|\s*(?:encoding|errors|newline|buffering)\s*=)|(?<![\w.])(?:getattr|eval|compile|globals|vars)\s*\("""
)
OPEN_MODE = r"^\s*(?:\+?[<>]{1,2}&?|\|)\s*|\s*\|\s*$"  # Perl's `open(F, ">file")`, `"| cmd"`


# ---------------------------------------------------------------- the colony named


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


# ---------------------------------------------------------------- where the line's commands run


def _cd_target(cmd):
    """The folder a `cd`, `pushd`, `chdir` or `env -C` goes to (a Word); False when it is not seen
    (`cd`, `cd -`, `pushd +1`, `popd`); None for a command that does not move."""
    at, _, seen = unwrap(cmd.words)
    if seen.get("chdir") is not None:
        return seen["chdir"]
    words = cmd.words[at:]
    name = name_of(words[0]) if words else ""
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


# ---------------------------------------------------------------- where a command writes


def _join(folder, name: str):
    """The Word `folder/name`, its expansions kept (`$D/x`)."""
    return Word(f"{folder.raw}/{name}", f"{folder.text}/{name}", folder.static, segments=[*folder.segments, ("text", "/" + name)])


def _option_value(args, i: int, short: str, long: str):
    """The value of `-C X`, `-CX`, `--directory=X`, `--directory X` at args[i] (a Word), or None."""
    text = args[i].text
    if text == short or long and text == long:
        return args[i + 1] if i + 1 < len(args) else None
    if long and text.startswith(long + "="):
        return Word(text, text.split("=", 1)[1], args[i].static)
    if text.startswith(short) and len(text) > 2 and not text.startswith("--"):
        return Word(text, text[2:], args[i].static)
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
        dest = positional.pop() if len(positional) > 1 else Word(".", ".") if name == "ln" else None
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
                out.append((Word(dest.raw, dest.text, False, segments=[("other", source.raw)]), what, ""))
    return out


def _extracts_into(cmd, name: str, words) -> list:
    """The folders an archive is extracted into ("/" when its paths are taken as written)."""
    args, here = words[1:], Word(".", ".")
    texts = [w.text for w in args]
    if name in ("tar", "bsdtar", "gtar"):
        old = bool(texts) and re.fullmatch(r"[A-Za-z]+", texts[0]) is not None and "x" in texts[0]
        if not old and not _has_option(args, ("-x", "--extract", "--get")) or _has_option(args, ("-O", "--to-stdout", "--to-command")):
            return []
        if _has_option(args, ("-P", "--absolute-names")):
            return [Word("/", "/")]
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
            return [Word("/", "/")]
        return [next((d for i in range(len(args)) if (d := _option_value(args, i, "-d", "")) is not None), here)]
    if name in ("7z", "7za", "7zr", "7zz"):
        found = [Word(w.raw, w.text[2:], w.static) for w in args if w.text.startswith("-o")]
        return (found or [here]) if texts[:1] in (["x"], ["e"]) else []
    if name == "cpio" and _has_option(args, ("-i", "--extract")):
        return [Word("/", "/")] if not _has_option(args, ("--no-absolute-filenames",)) else [here]
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
        return [(Word(at, at), "`git clean -x` (.aether/ is ignored: it goes too)", "removes", cwds)]
    subs = [w.text for w in rest if not w.text.startswith("-")]
    if sub == "stash" and subs[:1] in ([], ["push"], ["save"]) and _has_option(rest, ("-a", "--all")):
        tops = [_git_top(os.path.realpath(os.path.join(c, at)), project) for c in cwds]
        return [(Word(t, t), "`git stash --all` (.aether/ is ignored: it goes too)", "removes", [""]) for t in tops]
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
    at, wrappers, _ = unwrap(cmd.words)
    words = cmd.words[at:]
    name = name_of(words[0]) if words else ""
    whole = "removes" if name == "rm" and _has_option(words[1:], ("-r", "-R", "--recursive")) else ""
    link = words[-1].text if name == "ln" and _has_option(words[1:], ("-s", "--symbolic")) else None
    linked = [w for w in words[1:-1] if not w.text.startswith("-")] if link else []
    folders = [os.path.join(c, f) for c in cwds for f in (os.path.dirname(link) or ".", link)] if link else cwds
    program = words[0] if words else None  # running it writes nothing; a `cd` moves (see _colony_cwds)
    if name not in CD_LIKE:
        out += [(w, f"`{w.raw}`", whole, folders if any(w is x for x in linked) else cwds) for w in cmd.words if w is not program]
    if "xargs" in wrappers:
        out.append((Word("", "", False, segments=[("other", "")]), f"`xargs {name}`", "", cwds))
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


# ---------------------------------------------------------------- code that names the colony's files


def _language(name: str) -> str:
    return "python" if PYTHON.match(name or "-") else name if name in INTERPRETERS or name in AWKS or name == "sed" else ""


def _colony_code(cmd, name: str, words, read_only: bool) -> tuple[str, str, list]:
    """(the program, its language, the code words) a command runs: an interpreter's -c/-e/-r code
    or here-document (through `poetry run`, `uv run`, `npx` … too; None when a pipe feeds it), awk's
    program, sed's scripts, the code option of a command not known to only read ("" language)."""
    if name in CODE_RUNNERS:
        at = next((k for k in range(1, len(words)) if _language(name_of(words[k]))), None)
        if at is not None:
            name, words = name_of(words[at]), words[at:]
    language = _language(name)
    if language == "python" or name in INTERPRETERS:
        how, code, _ = code_source(cmd, name, words)
        return name, language, [code] if how in ("code", "stdin") else []
    if language == "awk":
        program = awk_program(words)[0]
        return name, language, [program] if program is not None else []  # `awk -f file`: a program not seen
    if language == "sed":
        return name, language, sed_args(words)[0]
    if read_only or name in SHELLS:
        return name, "", []
    return name, "", [w for o, w in zip(words, words[1:], strict=False) if o.text in CODE_OPTIONS and re.search(r"[\s(;]", w.text)]


def _code_writes(text: str, language: str) -> bool:
    """Code that may write files: Python's and Node's as CODE_WRITES reads them, awk's `print >`,
    sed's `w`; Perl's, Ruby's, PHP's and a language the guard does not know are not read here."""
    if language in ("python", "node", "nodejs"):
        return bool(code_writes(text) or language == "python" and re.search(MAY_WRITE, text))
    if language in AWKS:
        return bool(re.search(AWK_REFUSED, text))
    if language == "sed":
        return bool(sed_script(text))
    return True


def _colony_code_refusal(cmd, script, bindings, colony: Colony, cwds: list, read_only: bool, named: bool) -> str | None:
    """Code an ant runs that may write and names the colony's files: spelling `.aether`, or a string
    that resolves into them (a link, an absolute path, the data folder)."""
    at, _, _ = unwrap(cmd.words)
    words = cmd.words[at:]
    name = name_of(words[0]) if words else ""
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
            for found in dict.fromkeys(re.sub(OPEN_MODE, "", m.group(2)) for m in re.finditer(CODE_STRING, text)):
                why = next((w for full in _colony_paths(found, cwds) if (w := colony.refusal(f"`{found}` in the code", full))), None)
                if why:
                    return why
    return None


# ---------------------------------------------------------------- the rule


def _home(word):
    """`~` and `~/x` with the user's folder written out (`cp -r x/. ~` copies over ~/.aether)."""
    if word.segments[:1] != [("other", "~")] or word.segments[1:2] and word.segments[1][1][:1] not in ("", "/"):
        return word
    return Word(word.raw, word.text, False, segments=[("text", os.path.expanduser("~")), *word.segments[1:]])


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
            at, _, _ = unwrap(cmd.words)
            colony.program = name_of(cmd.words[at]) if at < len(cmd.words) else ""
        why = _colony_code_refusal(cmd, script, bindings, colony, cwds, read_only, named)
        if why:
            return why
        for word, what, whole, bases in _colony_targets(cmd, cwds, read_only):
            texts = _values(_home(word), cmd, script, bindings)
            spelled = _spellings(texts, globs_changed) if texts is not None else None
            if named and (spelled is None or any(t.startswith(PROC) or lost and not t.startswith("/") for t in spelled)):
                return f"{what} {UNSEEN} — {COLONY_ONLY}."
            fulls = [f for t in spelled or [] for c in _candidates(Word(word.raw, t)) for f in _colony_paths(c, bases)]
            why = next((why for full in fulls if (why := colony.refusal(what, full, whole))), None)
            if why:
                return why
    return None
