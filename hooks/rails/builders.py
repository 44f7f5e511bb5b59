"""Rule 6, isolated builders: a builder of a build whose builders work in their own git worktrees
stays in its own working copy — Write/Edit only there, every Bash command starting with
`cd <it> &&`, no path, `cd`, option, body or code string reaching the main checkout or a
sibling's copy, no git command that moves refs or changes settings."""

from __future__ import annotations

import os
import re

from shell_words import SHELLS, Word, _shell_body, name_of, unwrap

from .reading import (
    CODE_STRING,
    FROM_A_PIPE,
    _bindings,
    _candidates,
    _has_option,
    _values,
    code_source,
    git_parts,
    git_refusal,
)
from .state import Unreadable, _brief_copy, _inside, _list, _project, _spawned_by, _state
from .tables import BUILDER_ENV_REFUSED, CHAIN, FILE_TOOLS, GIT_BUILDER, INTERPRETERS, PYTHON


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
    try:
        spawns = _state(project, "spawns.json")
        if spawns is None:
            return None
        build = next((r for r in reversed(_list(spawns, "runs", "spawns.json")) if r.get("command") == "build"), None)
        if build is None or build.get("done"):
            return None
        records = _state(project, "worktrees.json")
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
        at, _, seen = unwrap(cmd.words)
        words = cmd.words[at:]
        name = name_of(words[0]) if words else ""
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
    at, _, seen = unwrap(cmd.words)
    words = cmd.words[at:]
    name = name_of(words[0]) if words else ""
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
            for candidate in _candidates(Word(word.raw, text), assignment=word in values):
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
    if name in SHELLS:
        how, body = _shell_body(words, 0)
        if how == "c" and (body is None or not body.static) or how == "stdin" and cmd.heredoc is None and cmd.herestring is None:
            return f"`{name}` runs commands the guard cannot read: run them directly — {hint}."
    if PYTHON.match(name or "-") or name in INTERPRETERS:
        how, code, _ = code_source(cmd, name, words)
        if how == "stdin" and code is None:
            return f"`{name}` {FROM_A_PIPE} — {hint}."
        for found in re.finditer(CODE_STRING, code.text if how in ("code", "stdin") and code is not None else ""):
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
    if script is None:  # a file tool's call reaches here without one
        import shell

        script = shell.parse(command)
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
