"""The shell commands a prompt file (a slash command's body, an agent) tells its reader to run,
found the way tests/test_prompts.py documents: ```bash lines, inline `aether …` spans and
`` !`…` `` lines."""

from __future__ import annotations

import re

SHELL_INFOS = {"bash", "sh", "shell"}  # a fenced block with one of these info strings holds commands


class Snippet:
    """A shell command a prompt tells the Queen to run: where it is and how it is written."""

    def __init__(self, pos: int, text: str, kind: str):
        self.pos, self.text, self.kind = pos, text, kind  # kind: inline | block | bang

    def __repr__(self):
        return f"{self.kind}:{self.text!r}"


HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
FENCE = re.compile(r"^\s*(`{3,})\s*([\w+-]*)\s*$")
AETHER_WORD = re.compile(r"(?:^|[\s;&|/=(])aether\s+[a-z]")  # `aether x` as a command word


def shell_snippets(body: str) -> list[Snippet]:
    """Every shell command in a body: ```bash lines (heredoc bodies skipped, a heredoc kept
    with its command), inline `aether …` spans and `` !`…` `` lines."""
    found, pos, fence, info, heredoc_end, current, indent = [], 0, None, "", None, None, 0
    prose = []
    for line in body.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        stripped = line.strip()
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence, info = match.group(1), match.group(2).lower()
                indent = len(line) - len(line.lstrip(" "))
                continue
            prose.append((start, line))
            continue
        if heredoc_end is not None:  # the block's own indentation is not part of the text
            body_line = line.rstrip("\n")
            current.text += "\n" + body_line[min(indent, len(body_line) - len(body_line.lstrip(" "))) :]
            if stripped == heredoc_end:
                heredoc_end = None
            continue
        if match and match.group(1) == fence and not match.group(2):
            fence = None
            continue
        if info in SHELL_INFOS and stripped and not stripped.startswith("#"):
            current = Snippet(start, stripped, "block")
            found.append(current)
            doc = HEREDOC.search(stripped)
            if doc:
                heredoc_end = doc.group(2)
    for start, line in prose:
        for bang in re.finditer(r"!`([^`]+)`", line):
            found.append(Snippet(start + bang.start(), bang.group(1), "bang"))
        for span in re.finditer(r"(?<![!`])`([^`\n]+)`", line):
            if AETHER_WORD.search(span.group(1)):
                found.append(Snippet(start + span.start(), span.group(1), "inline"))
    return sorted(found, key=lambda s: s.pos)
