"""A Bash command as the guard reads it, from tree-sitter-bash's syntax tree (the grammar Claude
Code itself judges Bash commands with): every simple command the line may run, wherever it
stands — a list, a pipeline, a subshell, a function body, `$(…)`, `<(…)`, an unquoted
here-document, an `sh -c '…'`, `eval '…'` or `trap '…'` body, a `find -exec` — with its words as
the shell would pass them (quotes removed, escapes decoded) when nothing in them expands, its
variable assignments, redirections and here-document.

`parse(text)` → `Script` (its classes, the quote helpers and `unwrap`: hooks/shell_words.py, which
the rules import without this parser). Nothing here decides anything: hooks/guard.py and
hooks/rails/ hold the rules.
"""

from __future__ import annotations

import os
import sys

from shell_words import (
    SHELLS,
    Command,
    Heredoc,
    Redirect,
    Script,
    Word,
    _ansi_c,
    _shell_body,
    _unescape,
    _unescape_double,
    name_of,
    unwrap,
)


def _extension(package: str):
    """`package._binding`, the compiled module, without running the package's `__init__`: those of
    tree_sitter and tree_sitter_bash import typing and importlib.resources, which would double the
    hook's start-up. Any surprise (another layout, another loader) falls back to the plain import."""
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec

    name = f"{package}._binding"
    for folder in sys.path:
        base = os.path.join(folder, package)
        for suffix in EXTENSION_SUFFIXES:
            path = os.path.join(base, "_binding" + suffix)
            if os.path.isfile(path):
                loader = ExtensionFileLoader(name, path)
                module = loader.create_module(ModuleSpec(name, loader, origin=path))
                loader.exec_module(module)
                return module
    raise ImportError(f"no compiled module for {package}")


def _parser():
    try:
        binding, grammar = _extension("tree_sitter"), _extension("tree_sitter_bash")
        return binding.Parser(binding.Language(grammar.language()))
    except Exception:  # noqa: BLE001 — anything odd: the packages as they mean to be imported
        import tree_sitter
        import tree_sitter_bash

        return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


_PARSER = _parser()


def parse(text: str) -> Script:
    script = Script(text)
    data = text.encode("utf-8", "surrogatepass")
    root = _PARSER.parse(data).root_node
    script.errors = root.has_error
    for node in _descendants(root):
        script.node_types.add(node.type)
        if node.type in SUBSHELLS:
            script.subshells.append((node.start_byte, node.end_byte))
        elif node.type == "pipeline":  # each stage in a subshell (a list is the grammar's misreading of `a && b 2>&1 | c`)
            script.subshells += [(c.start_byte, c.end_byte) for c in node.named_children if _stage(c)]
    script.statements = len([c for c in root.named_children if c.type != "comment"])
    _Walker(script, data).walk(root, 0)
    script.commands.sort(key=lambda c: (c.start, c.depth))
    for command in list(script.commands):
        _nested(script, command)
    script.commands.sort(key=lambda c: (c.start, c.depth))
    return script


# ---------------------------------------------------------------- the tree walk


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


SUBSHELLS = {"subshell", "command_substitution", "process_substitution"}
EXPANSIONS = {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}


class _Walker:
    def __init__(self, script: Script, data: bytes):
        self.script, self.data = script, data
        self.made: dict[tuple, Command] = {}  # (start, end) of a command node → its Command

    def gap(self, start: int, end: int, cmd: Command) -> None:
        """Text between two nodes that the grammar left out (`python3 - <<'EOF'` loses its `-`):
        plain words are the command's; anything else makes the script unreadable."""
        text = self.data[start:end].decode("utf-8", "replace").replace("\\\n", " ")
        for piece in text.split():
            if any(c in piece for c in "'\"$`\\;&|<>()"):
                self.script.errors = True
            else:
                cmd.words.append(Word(piece, piece))

    # -- words

    def word(self, node, depth: int) -> Word:
        parts: list[tuple] = []
        info: dict = {"static": True, "vars": set(), "substs": [], "tilde": False}
        self._word_parts(node, depth, parts, info)
        text = "".join(p[1] if p[0] == "text" else p[2] for p in parts)
        return Word(_text(node), text, info["static"], info["vars"], info["substs"], info["tilde"], [p[:2] for p in parts])

    def _word_parts(self, node, depth, parts, info):
        kind = node.type
        if kind == "word":
            raw = _text(node)
            if not parts and raw.startswith("~"):
                info["tilde"] = True
                info["static"] = False
                parts.append(("other", "~", "~"))
                raw = raw[1:]
            parts.append(("text", _unescape(raw)))
        elif kind in ("number", "variable_name", "extglob_pattern", "regex", "test_operator"):
            parts.append(("text", _text(node)))
        elif kind == "raw_string":
            parts.append(("text", _text(node)[1:-1]))
        elif kind == "ansi_c_string":
            parts.append(("text", _ansi_c(_text(node))))
        elif kind in ("string", "translated_string"):
            self._string(node, depth, parts, info)
        elif kind in ("concatenation", "brace_expression"):
            for child in node.children:
                self._word_parts(child, depth, parts, info)
        elif kind in EXPANSIONS:
            self._expansion(node, depth, info)
            parts.append(_segment(node) + (_text(node),))
        else:  # anything else in a word position: keep it as written, and look inside it
            info["static"] = False
            parts.append(("other", _text(node), _text(node)))
            self.walk(node, depth + 1)

    def _string(self, node, depth, parts, info):
        last = node.start_byte + (2 if _text(node).startswith('$"') else 1)
        for child in node.children:
            if child.type == '"' or child.type == '$"':
                continue
            if child.start_byte > last:  # text tree-sitter gives no node of its own
                parts.append(("text", _unescape_double(self.data[last : child.start_byte].decode("utf-8", "replace"))))
            if child.type == "string_content":
                parts.append(("text", _unescape_double(_text(child))))
            else:
                self._word_parts(child, depth, parts, info)
            last = child.end_byte
        end = node.end_byte - 1
        if end > last:
            parts.append(("text", _unescape_double(self.data[last:end].decode("utf-8", "replace"))))

    def _expansion(self, node, depth, info):
        info["static"] = False
        if node.type in ("command_substitution", "process_substitution"):
            body = [c for c in node.children if c.is_named]
            info["substs"].append(" ".join(_text(c) for c in body).strip())
            if node.type == "process_substitution" and _text(node).startswith(">("):
                self.script.out_subst = True
            for child in body:
                self.walk(child, depth + 1)
            return
        for child in _descendants(node):
            if child.type in ("variable_name", "special_variable_name"):
                info["vars"].add(_text(child))
            elif child.type in ("command_substitution", "process_substitution"):
                self._expansion(child, depth, info)

    # -- statements

    def walk(self, node, depth: int, in_function: bool = False) -> None:
        kind = node.type
        self.script.node_types.add(kind)
        if node.is_missing or kind == "ERROR":
            self.script.errors = True
        if kind == "command":
            self.command(node, depth, in_function)
        elif kind == "redirected_statement":
            self.redirected(node, depth, in_function)
        elif kind == "declaration_command":
            self.declaration(node, depth, in_function)
        elif kind == "unset_command":
            cmd = self._new("unset", node, depth, in_function)
            cmd.words = [
                self.word(c, depth) if c.type != "unset" else Word("unset", "unset")
                for c in node.children
                if c.is_named or c.type == "unset"
            ]
        elif kind in ("variable_assignment", "variable_assignments"):
            cmd = self._new("assign", node, depth, in_function)
            for child in [node] if kind == "variable_assignment" else node.named_children:
                if child.type == "variable_assignment":
                    cmd.assigns.append(self.assignment(child, depth))
        elif kind == "test_command":
            cmd = self._new("test", node, depth, in_function)
            cmd.words = [Word("[[", "[[")] + self.operands(node, depth)
        elif kind == "for_statement":
            self.for_loop(node, depth, in_function)
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            self.script.functions.append(_text(name) if name is not None else "?")
            for child in node.children:
                if child is not name:
                    self.walk(child, depth, True)
        elif kind == "&":
            self.script.background = True
        elif kind in EXPANSIONS or kind in ("string", "concatenation"):
            self.word(node, depth)  # a substitution outside a command (e.g. in a case value)
        else:
            for child in node.children:
                self.walk(child, depth, in_function)

    def operands(self, node, depth) -> list[Word]:
        """The words of a test (`[[ -f x ]]`), not looking into a word for more words."""
        out = []
        for child in node.children:
            if child.type in ("word", "string", "raw_string", "concatenation", "number", "ansi_c_string") or child.type in EXPANSIONS:
                out.append(self.word(child, depth))
            elif child.is_named:
                out += self.operands(child, depth)
        return out

    def _new(self, kind, node, depth, in_function) -> Command:
        cmd = Command(kind, depth, node.start_byte, node.end_byte, in_function=in_function)
        self.script.commands.append(cmd)
        self.made[(node.start_byte, node.end_byte, node.type)] = cmd
        return cmd

    def command(self, node, depth, in_function) -> Command:
        cmd = self._new("simple", node, depth, in_function)
        last = node.start_byte
        for child in node.children:
            if child.start_byte > last:
                self.gap(last, child.start_byte, cmd)
            last = max(last, child.end_byte)
            kind = child.type
            if kind == "variable_assignment":
                cmd.assigns.append(self.assignment(child, depth))
            elif kind == "command_name":
                cmd.words.append(self.word(child.children[0], depth) if child.children else Word("", ""))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child, cmd, depth, in_function)
            elif kind == "comment":
                continue
            elif child.is_named:
                cmd.words.append(self.word(child, depth))
        return cmd

    def assignment(self, node, depth) -> tuple[str, Word | None]:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        key = _text(name) if name is not None else _text(node).split("=", 1)[0]
        word = self.word(value, depth) if value is not None else Word("", "")
        appends = _text(node)[len(key) :].startswith("+=") or (name is not None and name.type != "variable_name")
        self.bind(key, [word.text] if word.static and not appends else None, node.start_byte)
        return key, word

    def bind(self, key: str, values: list | None, at: int) -> None:
        known = self.script.bindings.get(key, [])
        self.script.bindings[key] = None if known is None or values is None else known + values
        self.script.bound_at[key] = min(at, self.script.bound_at.get(key, at))

    def declaration(self, node, depth, in_function) -> None:
        cmd = self._new("declare", node, depth, in_function)
        for child in node.children:
            if child.type == "variable_assignment":
                key, value = self.assignment(child, depth)
                cmd.assigns.append((key, value))
                cmd.words.append(Word(_text(child), f"{key}={value.text if value else ''}", value is None or value.static))
            elif child.is_named:
                cmd.words.append(self.word(child, depth))
            else:  # the keyword: export, declare, local …
                cmd.words.append(Word(_text(child), _text(child)))

    def for_loop(self, node, depth, in_function) -> None:
        cmd = self._new("for", node, depth, in_function)
        variable = node.child_by_field_name("variable")
        values = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "value"]
        cmd.words = [Word("for", "for")] + [self.word(v, depth) for v in values]
        cmd.end = cmd.stmt_end = values[-1].end_byte if values else node.start_byte + 3
        if variable is not None:
            items = cmd.words[1:]
            self.bind(_text(variable), [w.text for w in items] if items and all(w.static for w in items) else None, node.start_byte)
        for child in node.children:
            if child.type in ("do_group", "compound_statement"):
                self.walk(child, depth, in_function)

    def redirected(self, node, depth, in_function) -> None:
        """A statement with redirections. The grammar hangs those written after the last command
        of a list or pipeline (`a && b > f`, `a && python3 - <<'EOF'`) on the whole: they are the
        last command's, as in bash; on a subshell or a group they apply to all of it."""
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")]
        target = None
        if body is not None and body.type == "command":
            target = self.command(body, depth, in_function)
        elif body is not None:
            self.walk(body, depth, in_function)
            last = _last_command(body)
            target = self.made.get((last.start_byte, last.end_byte, last.type)) if last is not None else None
            if target is None:
                target = self._new("group", node, depth, in_function)
        else:
            target = self._new("group", node, depth, in_function)
        target.stmt_end = node.end_byte
        end = body.end_byte if body is not None else node.start_byte
        for child in redirects:
            if child.start_byte > end:
                self.gap(end, child.start_byte, target)
            end = max(end, child.end_byte)
            self.redirect(child, target, depth, in_function)

    def redirect(self, node, cmd: Command, depth, in_function) -> None:
        kind = node.type
        if kind == "heredoc_redirect":
            self.heredoc(node, cmd, depth, in_function)
            return
        if kind == "herestring_redirect":
            words = [c for c in node.named_children if c.type != "file_descriptor"]
            cmd.herestring = self.word(words[0], depth) if words else Word("", "")
            cmd.redirects.append(Redirect("<<<", None, cmd.herestring))
            return
        fd = None
        op = ""
        targets = []
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if child.type == "file_descriptor":
                fd = _text(child)
            elif field == "destination" or (child.is_named and child.type != "ERROR"):
                targets.append(child)
            elif not child.is_named and child.type != "ERROR":
                op += _text(child)
            if child.type == "ERROR" or child.has_error:
                self.script.errors = True
        target = self.word(targets[0], depth) if targets else None
        cmd.redirects.append(Redirect(op or ">", fd, target))
        for extra in targets[1:]:  # `cmd 2>/dev/null more-args`: the words after the target are arguments
            cmd.words.append(self.word(extra, depth))

    def heredoc(self, node, cmd: Command, depth, in_function) -> None:
        start = body = None
        for child in node.children:
            if child.type == "heredoc_start":
                start = _text(child)
            elif child.type == "heredoc_body":
                body = child
            elif child.type in ("<<", "<<-", "heredoc_end"):
                continue
            elif child.type in ("file_redirect", "herestring_redirect"):
                self.redirect(child, cmd, depth, in_function)  # `cat <<'EOF' > f`: the grammar hangs `> f` here
            elif child.is_named or child.type in ("&&", "||", "|", ";", "|&"):
                self.walk(child, depth, in_function)  # `cmd <<'EOF' && next`: the rest of the line
        quoted = start is not None and any(q in start for q in "'\"\\")
        text = _text(body) if body is not None else ""
        dynamic = False
        if body is not None and not quoted:
            for child in body.children:
                if child.type in EXPANSIONS:
                    dynamic = True
                    self.word(child, depth)  # what it runs is a command too
        cmd.heredoc = Heredoc(text, quoted, not dynamic)
        cmd.redirects.append(Redirect("<<", None, None))


def _stage(node) -> bool:
    """A pipeline's stage as bash reads it: a command or a compound one, redirected or not."""
    body = node.child_by_field_name("body") if node.type == "redirected_statement" else node
    return body is not None and body.type in ("command", "subshell", "compound_statement")


def _last_command(node):
    """The simple command a list or pipeline ends with (None for anything else)."""
    while node is not None and node.type in ("list", "pipeline", "redirected_statement", "negated_command"):
        named = [c for c in node.named_children if c.type not in ("file_redirect", "heredoc_redirect", "herestring_redirect", "comment")]
        node = node.child_by_field_name("body") if node.type == "redirected_statement" else (named[-1] if named else None)
    return node if node is not None and node.type == "command" else None


def _segment(node) -> tuple:
    """How an expansion's value is known: a plain variable, `$(pwd)`, a number, or not at all."""
    named = [c for c in node.named_children]
    if node.type == "simple_expansion" and len(named) == 1:
        return "var", _text(named[0])
    if (
        node.type == "expansion"
        and len(named) == 1
        and named[0].type in ("variable_name", "special_variable_name")
        and len(node.children) == 3
    ):
        return "var", _text(named[0])
    if node.type == "command_substitution" and _text(node).replace(" ", "") in ("$(pwd)", "`pwd`"):
        return "pwd", ""
    if node.type == "arithmetic_expansion":
        return "number", ""
    return "other", _text(node)


def _descendants(node):
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        yield child
        stack.extend(reversed(child.children))


# ---------------------------------------------------------------- bodies other commands run

FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}


def _nested(script: Script, command: Command) -> None:
    """Parse the shell bodies a command runs (sh -c, su -c, eval, trap, find -exec, here-documents
    and here-strings fed to a shell) and add their commands, under `command`."""
    words = command.words
    if not words:
        return
    at, _, _ = unwrap(words)
    if at >= len(words):
        return
    name = name_of(words[at])
    bodies: list[Word] = []
    if name in SHELLS:
        how, body = _shell_body(words, at)
        if how == "c" and body is not None:
            bodies.append(body)
        elif how == "stdin" and command.heredoc is not None:
            bodies.append(Word(command.heredoc.body, command.heredoc.body, command.heredoc.static))
        elif how == "stdin" and command.herestring is not None:
            bodies.append(command.herestring)
    elif name in ("su", "runuser"):
        bodies += [words[i + 1] for i in range(at, len(words) - 1) if words[i].text in ("-c", "--command")]
    elif name == "eval":
        bodies.append(
            Word(
                " ".join(w.raw for w in words[at + 1 :]), " ".join(w.text for w in words[at + 1 :]), all(w.static for w in words[at + 1 :])
            )
        )
    elif name == "trap" and len(words) > at + 1 and not words[at + 1].text.startswith("-"):
        bodies.append(words[at + 1])
    elif name == "find":
        _find_exec(script, command, words[at:])
    for body in bodies:
        if not body.static:
            continue
        inner = parse(body.text)
        script.errors = script.errors or inner.errors
        script.out_subst = script.out_subst or inner.out_subst
        script.functions += inner.functions
        for key, values in inner.bindings.items():
            known = script.bindings.get(key, [])
            script.bindings[key] = None if known is None or values is None else known + values
            script.bound_at[key] = min(command.start, script.bound_at.get(key, command.start))
        for sub in inner.commands:
            sub.depth += command.depth + 1
            sub.parent = sub.parent or command
            sub.start = sub.end = sub.stmt_end = command.start
            script.commands.append(sub)


def _find_exec(script: Script, command: Command, words: list[Word]) -> None:
    i = 0
    while i < len(words):
        if words[i].text in FIND_EXEC:
            j = i + 1
            while j < len(words) and words[j].text not in (";", "+"):
                j += 1
            sub = Command("find-exec", command.depth + 1, command.start, command.start, parent=command)
            sub.words = words[i + 1 : j]
            if sub.words:
                script.commands.append(sub)
                _nested(script, sub)
            i = j
        i += 1
