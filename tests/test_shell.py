"""hooks/shell.py: what tree-sitter-bash's tree says a command line does, as the guard reads it.
The forms below are the ones whose tree is not what one would guess: a redirection written after
a here-document is a child of the here-document's node, a `cd` inside `( … )` or a pipeline's
stage does not move the commands after it, and a brace expansion is left as written (the guard
expands it)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
import shell  # noqa: E402


def writes(command: str) -> list:
    """(fd, op, target) of every redirection that opens a file for writing, over every command."""
    script = shell.parse(command)
    return [(r.fd, r.op, r.target.text) for c in script.commands for r in c.redirects if r.writes and r.target is not None]


@pytest.mark.parametrize(
    "command, expected",
    [
        ("cat <<'EOF' > notes.txt\nx\nEOF", [(None, ">", "notes.txt")]),
        ("cat <<EOF >> notes.txt\nx\nEOF", [(None, ">>", "notes.txt")]),
        ("cat <<-'EOF' > notes.txt\n\tx\n\tEOF", [(None, ">", "notes.txt")]),
        ("python3 - <<'EOF' > out.txt\nprint(1)\nEOF", [(None, ">", "out.txt")]),
        ("cat <<'EOF' &> log\nx\nEOF", [(None, "&>", "log")]),
        ("cat <<'EOF' 3> f 2>&1 || true\nx\nEOF", [("3", ">", "f")]),
        ("cat <<'EOF' <<< y > f\nx\nEOF", [(None, ">", "f")]),
        ("ls && cat <<'EOF' > f && echo ok\nx\nEOF", [(None, ">", "f")]),
        ("cat <<'A' > a\nx\nA\ncat <<'B' >> b\ny\nB", [(None, ">", "a"), (None, ">>", "b")]),
        ("(cat <<'EOF' > f\nx\nEOF\n)", [(None, ">", "f")]),
        ("{ cat <<'EOF' > f\nx\nEOF\n}", [(None, ">", "f")]),
        ("echo $(cat <<'EOF' > f\nx\nEOF\n)", [(None, ">", "f")]),
        ("cat > f <<'EOF'\nx\nEOF", [(None, ">", "f")]),  # before the here-document: as always
        ("cat <<'EOF' | tee f\nx\nEOF", []),  # tee's file is an argument, not a redirection
        ("cat <<'EOF' && echo y > f\nx\nEOF", [(None, ">", "f")]),  # echo's, not cat's
    ],
)
def test_a_redirection_after_a_here_document_is_seen(command, expected):
    assert writes(command) == expected


def test_the_redirection_after_a_here_document_belongs_to_its_command():
    script = shell.parse("cd x && cat <<'EOF' > f && echo done\nx\nEOF")
    by_name = {c.name: c for c in script.commands}
    assert [r.target.text for r in by_name["cat"].redirects if r.target is not None] == ["f"]
    assert by_name["cat"].heredoc.body == "x\n" and by_name["echo"].redirects == []


@pytest.mark.parametrize(
    "command, inside",
    [
        ("(cd w) && echo x > f", {"cd": True, "echo": False}),
        ("(cd w && echo x > f)", {"cd": True, "echo": True}),
        ("echo $(cd w) > f", {"cd": True, "echo": False}),
        ("cd w | cat", {"cd": True, "cat": True}),
        ("cd w && echo x > f", {"cd": False, "echo": False}),
        ("{ cd w; } && echo x > f", {"cd": False, "echo": False}),
        # the grammar reads `a && b 2>&1 | c` as `(a && b 2>&1) | c`; bash as `a && (b 2>&1 | c)`
        ("cd w && python3 -m pytest -q 2>&1 | tail -20", {"cd": False, "python3": False, "tail": True}),
    ],
)
def test_a_subshell_is_where_a_cd_stops(command, inside):
    script = shell.parse(command)
    assert {c.name: script.scope_of(c) is not None for c in script.commands} == inside


@pytest.mark.parametrize(
    "command, text",
    [
        ("cp x {.aether,y}/config.yaml", "{.aether,y}/config.yaml"),
        ("touch .ae{t..t}her/c", ".ae{t..t}her/c"),
        ("rm {src,{.aether,x}}/c", "{src,{.aether,x}}/c"),
        ("echo > .ae{t,}her/c", ".ae{t,}her/c"),
    ],
)
def test_a_brace_expansion_is_left_as_written(command, text):
    """The guard expands braces itself (hooks/guard.py `_braces`): the word must reach it whole."""
    cmd = shell.parse(command).commands[0]
    words = [w for w in cmd.words[1:]] + [r.target for r in cmd.redirects if r.target is not None]
    assert [(w.text, w.static) for w in words if "{" in w.text] == [(text, True)]
