"""Rule 3: only the Queen calls `aether` — an ant's command that runs it is denied."""

from __future__ import annotations

from shell_words import name_of, unwrap

ONLY_QUEEN = "Only the Queen runs `aether`. Finish your task and put what you found or did in your result block; the Queen records it."


def runs_aether(script) -> bool:
    for cmd in script.commands:
        at, _, _ = unwrap(cmd.words)
        if at < len(cmd.words) and name_of(cmd.words[at]) == "aether":
            return True
    return False
