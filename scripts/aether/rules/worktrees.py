"""Builders in their own worktrees, merged back: who is isolated, in which order results merge,
and a conflict as a task failure (docs/decisions/worktrees.md). Pure.
"""

from __future__ import annotations

import re

from aether.rules import failures

ISOLATED_CASTES = ("builder",)
# Roles that change code in a wave (refine: the code loop's, after the waves, stays in the tree).
ISOLATED_ROLES = ("worker", "retry", "debugger", "sub_spawn", "rerun", "rebuild")
# Roles that go on in the worktree of the task they continue. A rerun (after the help it asked
# for) and a rebuild (after the review) start from the merged state instead.
CONTINUING_ROLES = ("retry", "debugger")
HUNKS_SHOWN = 5  # conflict hunks in a report
HUNK_LINES = 24  # lines of one hunk in a report
CONFLICT_CONFIDENCE = 90  # a conflict is understood: redo the change on the merged state
MARKER = re.compile(r"^<{7} .*?^>{7}[^\n]*$", re.M | re.S)


def isolated(node: dict) -> bool:
    return node.get("caste") in ISOLATED_CASTES and node.get("role") in ISOLATED_ROLES


def task_key(task) -> tuple:
    """`1.10` after `1.9`: task ids compared part by part, numbers as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-_]", str(task)))


def order(nodes: list) -> list:
    """The merge order: wave, then the first task id, then when the node finished."""
    return sorted(
        nodes, key=lambda n: (n.get("wave") or 0, task_key((n.get("tasks") or [n.get("id")])[0]), n.get("seq") or 0, n.get("id") or "")
    )


def to_merge(tree: dict, wave: int) -> list:
    """The wave's finished results waiting for the merge, in merge order."""
    return order(
        [
            n
            for n in tree["nodes"].values()
            if n.get("wave") == wave and n.get("worktree") and n.get("status") == "completed" and not n.get("merge")
        ]
    )


def release_due(tree: dict) -> bool:
    """The waves of an isolated build are done and its worktrees not yet released (once a build)."""
    return not tree.get("worktrees_released") and any(n.get("worktree") for n in tree["nodes"].values())


def unreleased(tree: dict) -> list:
    """Runs whose worktree was never merged back (their task ended failed)."""
    return [
        n["id"] for n in tree["nodes"].values() if n.get("worktree") and not n.get("merge") and n.get("status") in ("failed", "skipped")
    ]


def hunks(merged: str) -> list:
    """The conflicting regions of a merge's output (`<<<<<<<` … `>>>>>>>`), each clipped."""
    out = []
    for found in MARKER.finditer(merged):
        lines = found.group(0).splitlines()
        if len(lines) > HUNK_LINES:
            lines = lines[: HUNK_LINES - 1] + [f"… ({len(lines) - HUNK_LINES + 1} more lines)"]
        out.append("\n".join(lines))
    return out


def conflict_report(node: dict, conflicts: list, branch: str | None) -> dict:
    """The failure report of a result that did not merge: conflicts [{path, why, hunks}]."""
    files = [c["path"] for c in conflicts]
    shown = [f"{c['path']}: {c['why']}" for c in conflicts[:10]]
    detail = []
    for c in conflicts:
        detail += [f"--- {c['path']}", *c.get("hunks", [])[:HUNKS_SHOWN]]
    kept = f" (the result is kept on {branch})" if branch else ""
    return failures.normalize_report(
        {
            "task": str((node.get("tasks") or [node.get("id")])[0]),
            "caste": node.get("caste"),
            "error": f"merge conflict: {'; '.join(shown)}{kept}\n" + "\n".join(detail),
            "root_cause": "another task of this wave, merged before it, changed the same file",
            "suggested_fix": "make this task's change again on top of the merged state (it is in the new working copy)",
            "confidence": CONFLICT_CONFIDENCE,
            "fix_scope": "contained",
            "files": files,
            "category": "merge_conflict",
        },
        lenient=True,
    )


def gone_report(node: dict) -> dict:
    """The failure report of a result whose worktree was gone before the merge (nothing to merge)."""
    return failures.normalize_report(
        {
            "task": str((node.get("tasks") or [node.get("id")])[0]),
            "caste": node.get("caste"),
            "error": "the builder's worktree was gone before its work could be merged",
            "root_cause": "the worktree was removed while the build ran",
            "suggested_fix": "do the task again",
            "confidence": CONFLICT_CONFIDENCE,
            "fix_scope": "contained",
            "files": [],
            "category": "worktree_gone",
        },
        lenient=True,
    )


def head_moved_report(node: dict, left: str, branch: str | None, put_back: list) -> dict:
    """The failure report of a result refused because its worktree's HEAD left the snapshot it was
    made from (a checkout, a commit …): its diff from that snapshot is not the builder's change, so
    nothing is merged. Retried like a conflict: the record ends, the retry starts on the merged state."""
    kept = f" (the result is kept on {branch})" if branch else ""
    moved = f"; {'; '.join(put_back)}" if put_back else ""
    return failures.normalize_report(
        {
            "task": str((node.get("tasks") or [node.get("id")])[0]),
            "caste": node.get("caste"),
            "error": f"not merged: its worktree's HEAD left the snapshot it was made from — {left}{kept}{moved}",
            "root_cause": "the builder ran git commands that move HEAD (checkout, switch, commit, reset) in its working copy",
            "suggested_fix": "do the task again in the new working copy and leave the changes uncommitted, on the HEAD it "
            "starts on: the helper merges them",
            "confidence": CONFLICT_CONFIDENCE,
            "fix_scope": "contained",
            "files": [],
            "category": "worktree_head_moved",
        },
        lenient=True,
    )
