"""The phase's final verification (verify-brief): the watcher's brief after a build's waves.

The brief lists what the build changed (files its completed spawns reported and spawn-finish
verified), each task's outcome so far, the checks of the mode's watcher depth, the pheromone
block as the watcher senses it, and the result block build-finish takes as `watcher`. When a
code loop is bound to the build (FULL mode, or build-start --loop) the block also carries the
`score_parts` that `loop-score --loop` scores. A mode whose watcher is only a syntax check
(LIGHTWEIGHT) spawns no watcher: build-finish runs that check itself.
"""

from __future__ import annotations

from aether.core.exceptions import state_error
from aether.core.text import one_line
from aether.rules import lifecycle, modes
from aether.rules import loops as loops_rules
from aether.rules import plans as plans_rules
from aether.rules.contracts import RESULT_BLOCK, SCORED_RESULT_BLOCK
from aether.state import pheromones, store
from aether.steps import build_finish, checks, completion

MAX_LISTED_FILES = 200  # files named in a brief (the rest are counted)


def brief(phase_id: int, missing: dict | None = None, note: str | None = None) -> dict:
    """verify-brief N: what the final verification of the running build of phase N needs.
    missing: the last verification's verdicts, when it left checks unverified (this watcher is
    told exactly what no run proved)."""

    colony = store.read("colony")
    lifecycle.require_building(colony, phase_id, "verify-brief")
    phase = plans_rules.require_phase(store.read("plan"), phase_id)
    tree = colony.get("spawn_tree")
    if not isinstance(tree, dict) or tree.get("phase") != phase_id:
        raise state_error(
            "no_spawn_tree",
            f"phase {phase_id} has no wave plan yet: build it with /ant:build {phase_id} (`aether next --build {phase_id}`)",
        )
    mode = colony.get("mode") or modes.DEFAULT_MODE
    depth = modes.profile(mode)["watcher"]
    files = checks.changed_files(tree)
    loop = completion.bound_loop(store.read("loops"), phase_id, colony.get("session_id"))
    code_loop = (
        {"loop_id": loop["id"], "threshold": loop.get("threshold"), "command": f"aether loop-score - --loop {loop['id']}"}
        if loop and loop.get("status") != "complete"
        else None
    )
    base = {"phase": phase_id, "mode": mode, "depth": depth, "files": files, "code_loop": code_loop}
    if depth == "syntax":
        return {
            **base,
            "spawn": False,
            "subagent_type": None,
            "watcher": None,
            "text": "No watcher in this mode: build-finish checks the syntax of the build's files itself.",
        }
    outcomes = build_finish.task_outcomes(tree, phase)
    lines = [
        "--- VERIFICATION ---",
        f"You are the watcher verifying phase {phase_id}: {phase.get('name')} (mode {mode}, depth {depth}).",
        *checks.brief_lines(mode, files, missing),
        *([f"The user asked for this verification: {note}"] if note else []),
        "Read-only: report what fails, never fix it.",
    ]
    criteria = [c for c in phase.get("success_criteria") or [] if isinstance(c, str)]
    if criteria:
        lines.append("Phase success criteria (judge each):")
        lines += [f"  - {c}" for c in criteria]
    lines.append("Tasks:")
    descriptions = {t.get("id"): t.get("description") for t in phase.get("tasks") or [] if isinstance(t, dict)}
    for o in outcomes:
        lines.append(
            f"  - {o['id']}: {one_line(descriptions.get(o['id']) or '', 120)} — {o['status']}"
            + (f" ({o['worker_id']})" if o.get("worker_id") else "")
        )
    lines.append("Files changed by this build:" if files else "Files changed by this build: none reported")
    lines += [f"  - {f}" for f in files[:MAX_LISTED_FILES]]
    if len(files) > MAX_LISTED_FILES:
        lines.append(f"  … and {len(files) - MAX_LISTED_FILES} more")
    lines.append(pheromones.render("watcher")["text"])
    if code_loop:
        weights = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in loops_rules.SCORE_WEIGHTS.items())
        lines.append(
            f"Code loop {code_loop['loop_id']} scores this verification (it needs "
            f"{code_loop['threshold']:g}): fill `score_parts` honestly (weights: {weights}; coverage "
            f"counts from {loops_rules.COVERAGE_TARGET}%); a part that does not apply is null."
        )
    lines += [
        "--- RESULT ---",
        "End your answer with this block (passed: every check passed; score 0–100):",
        "```json",
        SCORED_RESULT_BLOCK if code_loop else RESULT_BLOCK,
        "```",
    ]
    return {**base, "spawn": True, "subagent_type": "ant:watcher", "watcher": None, "text": "\n".join(lines)}
