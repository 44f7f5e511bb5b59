"""The build protocol as a state machine: from what state holds, the one next step (pure).

`next_build_step(view)` reads a view of the build (the spawn tree and the build's run record,
see steps/drive.py) and answers one step. Steps the helper does itself are carried out by the
driver, which asks again; steps for the Queen end its turn of the loop:

    helper: approve, abort, decide_failure, merge, conflicts, review, release, score, finish
    Queen:  spawn (a list sent in ONE message), ask, lessons (a judgment), done, stop

Order (docs/decisions/the-helper-drives.md): the Phase Lead's plan, the approval, then per wave —
spawns whose answers are missing, undecided failures, every planned spawn that may start
(workers, retries, debuggers, sub-spawns, reruns, rebuilds, reviewers in one message), the
merge of isolated builders' results, the conflict check, the review and its rebuilds — then the watcher, the code loop's score, the
finish and the phase's lessons. Everything is read from state, so a step asked twice is the
same step, and a build resumed after /clear or a killed session goes on where it stood.
"""

from __future__ import annotations

from aether.core.vocabulary import SPAWN_FINISHED
from aether.rules import worktrees as worktree_rules

MAX_LEAD_ATTEMPTS = 2  # Phase Lead plans tried before the build stops (a refused plan is sent back once)
MAX_WATCHERS = 2  # verifications in a row that leave a check unverified before the person is asked
MAX_SCORE_ATTEMPTS = 2  # verifications in a row the code loop cannot score before the person is asked


def _finished(tree: dict, ids) -> bool:
    return all(tree["nodes"].get(i, {}).get("status") in SPAWN_FINISHED for i in ids)


def _by_seq(nodes) -> list:
    return sorted(nodes, key=lambda n: (n.get("seq") or 0, n["id"]))


def ready(tree: dict, wave: int) -> list:
    """Planned spawns of a wave that may start now (those they wait for have finished)."""
    return [
        n["id"]
        for n in tree["nodes"].values()
        if n["wave"] == wave and n["status"] == "planned" and _finished(tree, n.get("waits_for", []))
    ]


def _review_step(tree: dict, wave: int) -> dict | None:
    """The wave's review: plan one (first round, or after a finished rebuild), else None."""
    key = str(wave)
    if key in tree.get("review_skipped", {}) or key in tree.get("refinements", {}):
        return None
    rounds = [r for r in tree.get("reviews", {}).get(key, []) if "action" in r]
    if rounds and rounds[-1]["action"] != "rebuild":
        return None
    return {"do": "review", "wave": wave}


def wave_step(tree: dict, wave: int, max_running: int) -> dict | None:
    """The next step inside one wave, or None when the wave is done."""
    starting = ready(tree, wave)
    if starting and worktree_rules.to_merge(tree, wave) and any(tree["nodes"][i].get("role") == "rerun" for i in starting):
        return {"do": "merge", "wave": wave}  # a rerun starts from the merged state: its first run's work, its helpers'
    if starting:
        return {"do": "spawn", "nodes": starting[: max(1, max_running)]}
    waiting = [n["id"] for n in tree["nodes"].values() if n["wave"] == wave and n["status"] == "planned"]
    if waiting:
        return {"do": "stop", "why": "blocked", "nodes": waiting}
    if worktree_rules.to_merge(tree, wave):  # isolated builders' results, merged back in order
        return {"do": "merge", "wave": wave}
    if str(wave) not in tree.get("conflicts", {}) and str(wave) not in tree.get("refinements", {}):
        return {"do": "conflicts", "wave": wave}
    return _review_step(tree, wave)


def tree_step(tree: dict) -> dict | None:
    """The next step of the waves (None when every wave is done)."""
    running = [n["id"] for n in _by_seq(tree["nodes"].values()) if n["status"] == "running"]
    if running:
        return {"do": "spawn", "nodes": running, "again": True}
    undecided = [n["id"] for n in _by_seq(tree["nodes"].values()) if n["status"] == "failed" and n.get("failure_decided") is False]
    if undecided:
        return {"do": "decide_failure", "node": undecided[0]}
    for wave in range(1, len(tree.get("waves", [])) + 1):
        step = wave_step(tree, wave, tree.get("max_workers", 1))
        if step:
            return step
    return None


def _lead_step(run: dict) -> dict:
    refusals = run.get("lead_refusals", [])
    if len(refusals) >= MAX_LEAD_ATTEMPTS:
        return {"do": "stop", "why": "lead_refused", "refusals": refusals}
    return {"do": "spawn_lead", "attempt": len(refusals) + 1}


def _verification_step(run: dict) -> dict:
    """After the waves: the watcher (again while a check is unverified, then the person's word),
    the code loop's score of its answer (the watcher again when it holds none, then the person),
    the finish."""
    verify = run.get("verification") or {}
    if verify.get("spawn") and not verify.get("answered"):
        return {"do": "spawn_watcher"}
    if verify.get("unverified"):  # a check no run proved: one more watcher told what to run, then the person
        if verify.get("unverified_rounds", 0) < MAX_WATCHERS and not verify.get("weakened"):  # weakened: the person at once
            return {"do": "spawn_watcher"}
        return {"do": "ask", "why": "unverified"}
    loop = run.get("code_loop") or {}
    if loop.get("open") and verify.get("answered") and not verify.get("scored"):
        return {"do": "score"}
    unscored = verify.get("unscored", 0)
    if loop.get("open") and unscored:  # no score in the answer: asked again once, never a fix-up with nothing to fix
        return {"do": "spawn_watcher"} if unscored < MAX_SCORE_ATTEMPTS else {"do": "ask", "why": "unscored"}
    if loop.get("awaiting_user"):
        return {"do": "ask", "why": "code_loop"}
    return {"do": "finish"}


def next_build_step(view: dict) -> dict:
    """The build's next step. view: {building, tree, run, approve} — see steps/drive.py."""
    run = view.get("run") or {}
    if not view.get("building"):
        if run.get("finished") and run.get("lessons_due") and not run.get("lessons_done"):
            return {"do": "lessons"}
        return {"do": "done"}
    tree = view.get("tree")
    if tree is None:
        return _lead_step(run)
    if tree.get("status") == "aborted":
        return {"do": "abort"}
    if tree.get("status") == "awaiting_approval":
        return {"do": "approve"} if view.get("approve") else {"do": "ask", "why": "approval"}
    step = tree_step(tree)
    if step:
        return step
    if worktree_rules.release_due(tree):  # the waves are done: what is left of the worktrees goes
        return {"do": "release"}
    return _verification_step(run)


# ---------------------------------------------------------------- /ant:plan: scouts, then planner ↔ critic

MAX_ANSWER_ATTEMPTS = 2  # a planner's draft or a critic's score refused twice stops the plan run


def _research_step(research: dict | None) -> dict | None:
    if research is None:
        return {"do": "research_plan"}
    if research.get("tasks") and not research.get("recorded"):
        return {"do": "spawn_scouts"}
    if research.get("tasks") and not research.get("collected"):
        return {"do": "research_collect"}
    return None


def next_plan_step(view: dict) -> dict:
    """The plan run's next step. view: {started, research, loop, refusals, accepted, loaded} — see
    colony/plan_drive.py. Helper steps: plan_start, research_plan, research_collect, loop_init,
    decide, load; the Queen's: spawn_scouts, spawn_planner, spawn_critic, ask, done, stop."""
    if not view.get("started"):
        return {"do": "plan_start"}
    step = _research_step(view.get("research"))
    if step:
        return step
    loop = view.get("loop")
    if loop is None:
        return {"do": "loop_init"}
    if view.get("loaded"):
        return {"do": "done"}
    if loop["status"] == "complete" or view.get("accepted"):
        return {"do": "load"}
    if loop["status"] == "awaiting_user":
        return {"do": "ask"}
    if view.get("refusals", 0) >= MAX_ANSWER_ATTEMPTS:
        return {"do": "stop", "why": "refused"}
    if not loop.get("draft"):
        return {"do": "spawn_planner"}
    if not loop.get("critic"):
        return {"do": "spawn_critic"}
    return {"do": "decide"}


# ---------------------------------------------------------------- /ant:colonize: colonizers map the code


def next_colonize_step(view: dict) -> dict:
    """The colonize run's next step. view: {detected, colonizers: {local: status}, summarized}.
    Helper steps: detect (mode applied, colonizers planned), summarize (decisions and the
    event from the maps); the Queen's: spawn_colonizers, done."""
    if not view.get("detected"):
        return {"do": "detect"}
    colonizers = view.get("colonizers") or {}
    if any(status != "recorded" for status in colonizers.values()):
        return {"do": "spawn_colonizers"}
    if not view.get("summarized"):
        return {"do": "summarize"}
    return {"do": "done"}


# ---------------------------------------------------------------- after a phase: /ant:continue and the autopilot


def next_continue_step(view: dict) -> dict:
    """Closing the current phase. view: {state, done, advanced, lessons: {due, done}, archivist:
    {due, answered}} — see colony/continue_drive.py. Helper step: advance (phase-advance); the
    Queen's: lessons, spawn_archivist, done (the next phase, or the colony's summary), stop (the
    phase is not completed)."""
    lessons, archivist = view.get("lessons") or {}, view.get("archivist") or {}
    if view.get("advanced"):
        return {"do": "done"}
    if view.get("state") != "COMPLETED" and not view.get("done"):
        return {"do": "stop", "why": "not_built"}
    if lessons.get("due") and not lessons.get("done"):
        return {"do": "lessons"}
    if view.get("state") == "COMPLETED":
        return {"do": "done"}
    if archivist.get("due") and not archivist.get("answered"):
        return {"do": "spawn_archivist"}
    return {"do": "advance"}


# How a driven command ends, as the exit status of `claude -p "/ant:…"` where the mod serves it:
# 0 when it is done, one status per kind of stop (docs/decisions/the-mod-runs-the-loop.md).
EXIT_DONE = 0
EXIT_ERROR = 1  # the helper failed: its error is the text
CLAIMED = "claimed"  # the `why` of the stop a session gets while another holds the build (state/claim.py)
EXIT_STATUS = {
    "approval": 10,  # a wave plan awaits the person's approval
    "question": 11,  # a loop asks the person (the code loop, the plan loop)
    "abort": 12,  # the failure protocol aborted the phase, or it ended with failed tasks
    "cap": 13,  # the spend cap
    "stopped": 14,  # any other stop: asked to, blocked, a refused Phase Lead, no plan, an ant past its deadline
    "limit": 15,  # a usage or rate limit (or an overload) held the ants: nothing failed; the same command goes on
    "claimed": 16,  # another session holds the colony's build: this one started nothing
}
STOP_KIND = {
    "approval": "approval",
    "code_loop": "question",
    "unverified": "question",
    "unscored": "question",
    "abort_phase": "abort",
    "phase_failed": "abort",
    "budget": "cap",
    "limit": "limit",
    CLAIMED: "claimed",
    "deadline": "stopped",  # an ant stopped twice before it answered (rules/deadlines.py)
}
FAILED_OUTCOMES = ("failed",)  # a build that is done, its phase not completed: exit as an abort


def exit_status(action: str, why: str | None, outcome: str | None = None) -> int:
    """The exit status of an action that ends a driven command (`done`, `ask`, `stop`); `outcome`:
    the status of the phase a finished build leaves (a failed one is no success)."""
    if action == "done":
        return EXIT_STATUS["abort"] if outcome in FAILED_OUTCOMES else EXIT_DONE
    kind = STOP_KIND.get(why or "") or ("question" if action == "ask" else "stopped")
    return EXIT_STATUS[kind]
