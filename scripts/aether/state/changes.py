"""What a build changed since its checkpoint, by git: the files, and the lines it added and removed.

The working tree is snapshotted as a checkpoint is (a temporary index: untracked files in,
ignored files and the colony's own folder out) and compared with the checkpoint's tree, so a
change no ant reported (a script a builder ran, a file a hook wrote) is seen too. Every changed
file is listed; the lines are read for code and configuration only (a huge fixture or a
generated data file is named, never read), a bounded number per file. Outside git, or without
a checkpoint, nothing is known: None.
"""

from __future__ import annotations

import re

from aether.core.exceptions import AetherError
from aether.state import checkpoints

CODE_SUFFIXES = (".py", ".pyi", ".pth", ".js", ".cjs", ".mjs", ".jsx", ".ts", ".cts", ".mts", ".tsx", ".go", ".rs", ".toml", ".ini", ".cfg")
CONFIG_NAMES = frozenset({"package.json", "Makefile", "makefile", "GNUmakefile", ".mocharc.json", ".mocharc.yml", "go.mod"})
MAX_LINES = 4000  # of one file's added (or removed) lines kept
MAX_LINE = 400  # characters of a line kept
TREE_ID = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def _read_lines(name: str) -> bool:
    return name.endswith(CODE_SUFFIXES) or name.rsplit("/", 1)[-1] in CONFIG_NAMES


def since(tree: str | None) -> tuple | None:
    """({path relative to the project: [lines added]}, {path: [lines removed]}) of every file that
    differs from the checkpoint's tree (a file whose lines are not read: listed, no lines); None
    when git cannot say."""
    if not isinstance(tree, str) or not TREE_ID.match(tree):
        return None
    try:
        r = checkpoints.repo()
        if r is None:
            return None
        now = checkpoints.snapshot_tree(r)
        base = ["diff", "--no-color", "--no-ext-diff", "--no-renames", "--no-textconv", tree, now]
        names = checkpoints.git([*base, "--name-only", "-z", "--", "."], r.top, raw=True).stdout.split(b"\0")
        listed = [n.decode("utf-8", "replace") for n in names if n]
        specs = [f"*{suffix}" for suffix in CODE_SUFFIXES] + [f":(glob)**/{name}" for name in sorted(CONFIG_NAMES)]
        patch = checkpoints.git([*base, "-U0", "--", *specs], r.top, raw=True).stdout if any(map(_read_lines, listed)) else b""
    except AetherError:
        return None
    added: dict = {}
    gone: dict = {}
    for name in listed:
        if name.startswith(r.prefix):
            added[name[len(r.prefix) :]] = []
    current, in_hunks = None, False
    for raw in patch.split(b"\n"):
        line = raw.decode("utf-8", "replace")
        if line.startswith("diff --git "):
            current, in_hunks = None, False
        elif not in_hunks and line.startswith("+++ "):
            name = _name(raw[4:])
            current = name[len(r.prefix) :] if name is not None and name.startswith(r.prefix) else current
        elif not in_hunks and line.startswith("--- "):
            name = _name(raw[4:])
            current = name[len(r.prefix) :] if name is not None and name.startswith(r.prefix) else None
        elif line.startswith("@@"):
            in_hunks = True
        elif in_hunks and current is not None and line[:1] in ("+", "-"):
            kept = (added if line[0] == "+" else gone).setdefault(current, [])
            if len(kept) < MAX_LINES:
                kept.append(line[1:MAX_LINE])
    return added, gone


ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13}


def _name(field: bytes) -> str | None:
    """A file header's path (`a/x`, `b/x`, `"b/odd\\tname"` as git quotes it), None for /dev/null."""
    field = field.rstrip(b"\t")
    if field == b"/dev/null":
        return None
    if field[:1] == b'"' and field[-1:] == b'"':  # git quotes a name with odd characters: C escapes
        out, i, body = bytearray(), 0, field[1:-1]
        while i < len(body):
            if body[i] == 0x5C and i + 1 < len(body):  # a backslash
                nxt = body[i + 1]
                if 0x30 <= nxt <= 0x37 and i + 3 < len(body) + 0:  # \NNN: one byte, in octal
                    out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                    i += 4
                    continue
                out.append(ESCAPES.get(nxt, nxt))
                i += 2
                continue
            out.append(body[i])
            i += 1
        field = bytes(out)
    name = field.decode("utf-8", "replace")
    return name[2:] if name[:2] in ("a/", "b/") else name
