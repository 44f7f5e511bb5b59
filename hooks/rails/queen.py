"""Rule 2, the Queen's own helper: a main-thread command made only of `aether …` calls (fed by a
quoted here-document, or by `echo … |`) is allowed without a permission prompt; anything else
gets no decision. (hooks/guard.sh answers the plainest form itself.)"""

from __future__ import annotations

from .reading import _args
from .tables import QUEEN_SHAPES

HELPER_ALLOWED = "Aether's own helper"
HELPER_NOT_ALLOWED = {"uninstall"}  # removes what Aether keeps outside the project: the user says so


def _quiet(redirect) -> bool:
    """`2>&1`, `>/dev/null`, a quoted here-document or a static here-string: no file written, nothing run."""
    target = redirect.target
    if redirect.op == "<<":
        return True  # checked with the command's heredoc
    if redirect.op == "<<<":
        return target is not None and target.static
    if target is None or not target.static:
        return False
    return (redirect.op == ">&" and target.text in ("1", "2")) or (redirect.op in (">", ">>") and target.text == "/dev/null")


def queen(script) -> dict | None:
    """Allow a main-thread command made only of `aether …` calls (see rule 2), else no decision."""
    if (
        script.errors
        or script.functions
        or script.out_subst
        or script.background
        or not script.commands
        or not script.node_types <= QUEEN_SHAPES
    ):
        return None
    commands = script.commands
    for i, cmd in enumerate(commands):
        if cmd.depth or cmd.kind != "simple" or cmd.assigns or not all(w.static for w in cmd.words):
            return None
        if not all(_quiet(r) for r in cmd.redirects) or (cmd.heredoc and not cmd.heredoc.quoted):
            return None
        first = cmd.words[0].raw if cmd.words else ""
        if first == "aether":
            if [w.text for w in _args(cmd.words[1:])][:1] and _args(cmd.words[1:])[0].text in HELPER_NOT_ALLOWED:
                return None
            continue
        after = script.source.encode("utf-8", "surrogatepass")[cmd.stmt_end :].decode("utf-8", "replace").lstrip(" \t")
        feeds = after.startswith("|") and not after.startswith(("||", "|&"))
        if first != "echo" or cmd.redirects or not feeds or i + 1 >= len(commands):
            return None
    return {"permissionDecision": "allow", "permissionDecisionReason": HELPER_ALLOWED}
