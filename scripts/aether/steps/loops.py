"""Refinement loops (docs/decisions/refinement-loops.md): a producer and a critic iterate until the critic's score is good
enough, the loop stagnates, or it hits its iteration cap. State lives in loops.json, so a loop
survives /clear.

loop-decide, first match wins: `complete` (score ≥ the loop's threshold) > `user_input` (the
5th iteration of this round) > `user_input` (stagnation: s[n] − s[n−2] < 5) > `refine`.
A round starts at loop-init and again whenever the user answers (feedback-store --kind user
while the loop waits for them), which resets the cap and the stagnation window.
"""

from __future__ import annotations

import functools

from aether.core import clock, inputs
from aether.core.exceptions import AetherError, input_error, state_error
from aether.core.text import one_line
from aether.rules import critique as critique_rules
from aether.rules import loops as loops_rules
from aether.rules.loops import FEEDBACK_KINDS, MAX_ITERATIONS, THRESHOLDS, check_type, round_scores, rule
from aether.state import checkpoints, events, store
from aether.steps import code_loop

SNAPSHOT_TYPES = ("code",)  # loop types whose iterations are kept as checkpoint refs
MAX_LOOPS = 50  # loops kept in loops.json (finished ones dropped first)
MAX_FEEDBACK = 50  # feedback entries kept per loop
MAX_FEEDBACK_LENGTH = 20000  # characters of one feedback text


# ---------------------------------------------------------------- the rule (pure)


# ---------------------------------------------------------------- state helpers


def _find(data: dict, loop_id: str) -> dict:
    for loop in data["loops"]:
        if loop.get("id") == loop_id:
            return loop
    known = ", ".join(l.get("id", "?") for l in data["loops"][-5:]) or "none"
    raise input_error(
        "unknown_loop", f"no loop {loop_id!r} (recent: {known}); a plan loop starts with /ant:plan, a code loop with a FULL build"
    )


def _summary(loop: dict) -> dict:
    return {
        "loop_id": loop["id"],
        "type": loop["type"],
        "status": loop["status"],
        "threshold": loop["threshold"],
        "round": loop["round"],
        "iterations": len(loop["iterations"]),
        "round_iterations": len(round_scores(loop)),
        "max_iterations": MAX_ITERATIONS,
        "scores": [it["score"] for it in loop["iterations"]],
    }


def _trim(data: dict) -> None:
    loops = data["loops"]
    while len(loops) > MAX_LOOPS:
        done = next((i for i, l in enumerate(loops) if l.get("status") == "complete"), 0)
        loops.pop(done)


# ---------------------------------------------------------------- commands


find = _find  # public name for other modules (drafts, critique, code_loop)


def new_loop(data: dict, name: str, threshold: float, phase: int | None = None, session: str | None = None) -> dict:
    """Append a loop to loaded loops.json data (inside a store update). `phase`: a code loop
    bound to that phase's build (its refine decisions plan refinement spawns in the spawn tree)."""
    loop = {
        "id": clock.new_id("loop", {l.get("id") for l in data["loops"]}),
        "type": name,
        "threshold": threshold,
        "status": "active",
        "round": 1,
        "iterations": [],
        "feedback": [],
        "created_at": clock.iso(),
        "updated_at": clock.iso(),
    }
    if phase is not None:
        loop["phase"] = phase
    if session:
        loop["session_id"] = session
    data["loops"].append(loop)
    _trim(data)
    return loop


# not @store.writes: the files it locks depend on the call (colony for a loop bound to the build)
def _open_loop(files, name: str, threshold: float, build: bool, session: str | None) -> dict:
    """Start the loop, or reuse the open code loop already bound to the running build."""
    data = files["loops"]
    phase = None
    if build:
        live = files["colony"]
        if live.get("state") != "EXECUTING":
            raise state_error(
                "not_building",
                f"the colony is {live.get('state')}: a code loop is bound to a running "
                f"build — build one with /ant:build N (`aether next --build N`)",
            )
        phase = live.get("current_phase")
        bound = next(
            (
                l
                for l in data["loops"]
                if l.get("phase") == phase
                and l.get("type") == "code"
                and l.get("status") != "complete"
                and l.get("session_id") == live.get("session_id")
            ),
            None,
        )
        if bound is not None:
            return {**_summary(bound), "phase": phase, "reused": True}
    loop = new_loop(data, name, threshold, phase, session)
    events.append(
        files["events"],
        "loop_started",
        "queen",
        f"{name} loop {loop['id']} (threshold {threshold:g})" + (f" bound to the build of phase {phase}" if phase is not None else ""),
    )
    out = _summary(loop)
    if phase is not None:
        out.update(phase=phase, reused=False)
    return out


def init(loop_type: str, threshold: float | None = None, build: bool = False) -> dict:
    """loop-init: start a refinement loop of a type (plan, code, or another with --threshold).
    build: bind a code loop to the running build (its refine decisions plan refinement spawns)."""
    name = check_type(loop_type)
    if threshold is None:
        if name not in THRESHOLDS:
            raise input_error(
                "invalid_loop_type",
                f"loop type {name!r} has no default threshold ({', '.join(f'{k} {v}' for k, v in THRESHOLDS.items())}); pass --threshold",
            )
        threshold = THRESHOLDS[name]
    if not 0 < threshold <= 100:
        raise input_error("invalid_argument", f"threshold must be in (0, 100], got {threshold:g}")
    if build and name != "code":
        raise input_error("invalid_argument", "--build binds a code loop to the running build; use `loop-init code --build`")
    colony = store.read("colony")

    return store.update_many(
        ["loops", "events"] + (["colony"] if build else []),
        functools.partial(_open_loop, name=name, threshold=threshold, build=build, session=colony.get("session_id")),
    )


def _critic_for(loop: dict, iteration: int) -> dict | None:
    """The newest critic feedback stored for an iteration."""
    return next((f for f in reversed(loop["feedback"]) if f["kind"] == "critic" and f.get("iteration") == iteration), None)


def review_of(answer) -> dict | None:
    """A verify ant's findings, as a critic's parsed feedback (summary, key issues), when its whole
    answer (with `score_parts`) carries a summary or findings; None otherwise."""

    if not isinstance(answer, dict) or not isinstance(answer.get("score_parts"), dict):
        return None
    items = []
    for item in findings if isinstance(findings := answer.get("findings"), list) else []:
        if isinstance(item, dict):  # {location, description, …} as a reviewer writes them
            item = " ".join(str(item[k]) for k in ("location", "description", "recommendation") if item.get(k))
        if isinstance(item, str) and item.strip():
            items.append(one_line(item, critique_rules.MAX_ITEM_TEXT))
    summary = answer.get("summary")
    summary = one_line(summary, critique_rules.MAX_SUMMARY_TEXT) if isinstance(summary, str) and summary.strip() else ""
    if not items and not summary:
        return None
    return {"summary": summary, "key_issues": items[: critique_rules.MAX_ITEMS], "recommendations": []}


def _review_entry(loop: dict, review: dict, score) -> dict:
    """The critic feedback entry a scored verification leaves (the critic's structure)."""
    text = "\n".join(
        ["## Code Review", "### Overall Score", f"{score:g}", "### Assessment Summary", review["summary"] or "(none)", "### Key Issues"]
        + [f"- {i}" for i in review["key_issues"]]
        + ([] if review["key_issues"] else ["(none)"])
    )
    return {
        "kind": "critic",
        "iteration": len(loop["iterations"]) + 1,
        "round": loop["round"],
        "text": text,
        "timestamp": clock.iso(),
        "source": "loop-score",
        "parsed": {"score": score, "score_line": "loop-score", **review},
    }


# not @store.writes: the files it locks depend on the call (colony for a loop bound to a build)
def _decide_iteration(
    files, loop_id: str, first: dict, bound: bool, snapshots: bool, given, parts: dict | None, review: dict | None
) -> tuple:
    """Record this iteration's score and decision; (answer, its timestamp, snapshot phase, critic summary)."""
    loop = _find(files["loops"], loop_id)
    if loop["status"] == "complete":
        raise state_error(
            "loop_complete",
            f"loop {loop_id} is complete; a new plan loop starts with /ant:plan --force, a new code loop with the next FULL build",
        )
    if loop["status"] == "awaiting_user":
        raise state_error(
            "awaiting_user_feedback",
            f"loop {loop_id} waits for the user: their answer comes with /ant:build N --answer … (a code loop) or /ant:plan <guidance>",
        )
    if loop["type"] != first["type"] or (loop["type"] == "code" and loop.get("phase") is not None) != bound:
        raise state_error("loop_changed", f"loop {loop_id} changed while this call waited; run it again")
    number = len(loop["iterations"]) + 1
    parsed = (_critic_for(loop, number) or {}).get("parsed") or {}
    warnings = []
    if given is None:
        if parsed.get("score") is None:
            raise input_error(
                "score_missing",
                f"no score for iteration {number} of loop {loop_id}: give it "
                f"(`aether loop-decide {loop_id} 85`) or store the critic's feedback "  # by hand
                f"with its Overall Score first (`aether feedback-store {loop_id} - "  # by hand
                f"--kind critic`)",
            )
        value, source = parsed["score"], "critic"
        value = int(value) if value == int(value) else round(value, 2)
    else:
        value, source = given, "given"
        if parsed.get("score") is not None and parsed["score"] != value:
            warnings.append(f"the given score {value:g} differs from the critic's {parsed['score']:g}; {value:g} is recorded")
    if review and _critic_for(loop, number) is None:
        loop["feedback"].append(_review_entry(loop, review, value))
        del loop["feedback"][:-MAX_FEEDBACK]
    scores = round_scores(loop) + [value]
    decision, reason = rule(scores, loop["threshold"])
    entry = {
        "iteration": number,
        "round": loop["round"],
        "score": value,
        "decision": decision,
        "reason": reason,
        "timestamp": clock.iso(),
        "checkpoint": None,
    }
    if parts:
        entry["parts"] = parts
    loop["iterations"].append(entry)
    loop["status"] = {"complete": "complete", "user_input": "awaiting_user"}.get(decision, "active")
    loop["updated_at"] = clock.iso()
    refinement = None
    if bound and decision == "refine":
        refinement, more = code_loop.plan_refinement(files["colony"], loop, entry)
        warnings.extend(more)
    events.append(files["events"], "loop_decided", "queen", f"{loop['type']} loop {loop_id} iteration {number}: {value:g} → {decision}")
    out = {
        **_summary(loop),
        "decision": decision,
        "reason": reason,
        "score": value,
        "score_source": source,
        "iteration": number,
        "checkpoint": None,
        "commit": None,
        "warnings": warnings,
        "next": _next(loop, decision, refinement),
    }
    if loop["type"] == "code":
        out["phase"] = loop.get("phase")
        out["refinement"] = refinement
    phase = None
    if snapshots:  # the phase a snapshot is filed under
        phase = loop.get("phase") or (files["colony"] if bound else store.read("colony")).get("current_phase") or None
    return out, entry["timestamp"], phase, parsed.get("summary")


def decide(loop_id: str, score: float | None = None, parts: dict | None = None, review: dict | None = None) -> dict:
    """loop-decide: record this iteration's score and answer refine / complete / user_input.
    Without a score, the score parsed from this iteration's critic feedback is used. `review`
    (loop-score of a verify ant's whole answer, see review_of) is kept as this iteration's critic
    feedback unless the critic's feedback was stored already, so refinement briefs and
    loop-present show what still fails.

    The decision is made inside the locked update from what the loop holds then, so concurrent
    calls never record one critic score twice (the second finds no score: `score_missing`). A
    code loop's snapshot (and opt-in commit) of the iteration follows the decision, labelled with
    what it recorded, and is attached to that iteration in a second locked update."""

    if score is not None and not 0 <= score <= 100:
        raise input_error("invalid_argument", f"score must be 0–100, got {score:g}")
    first = _find(store.read("loops"), loop_id)  # refuse early; every value written is read again under the lock
    snapshots = first["type"] in SNAPSHOT_TYPES
    settings = code_loop.config() if snapshots and first["status"] == "active" else None  # a bad config stops here
    bound = first["type"] == "code" and first.get("phase") is not None
    given = None if score is None else (int(score) if score == int(score) else round(score, 2))

    names = ["loops", "events"] + (["colony"] if bound else [])
    out, stamp, phase, summary = store.update_many(
        names,
        functools.partial(
            _decide_iteration, loop_id=loop_id, first=first, bound=bound, snapshots=snapshots, given=given, parts=parts, review=review
        ),
    )
    if snapshots:
        _keep_iteration(loop_id, out, stamp, phase, summary, settings)
    return out


def score_answer(loop_id: str, doc: dict) -> dict:
    """loop-score --loop: a verify ant's scored answer (its `score_parts`, findings) scored and
    decided for the loop; answers the score and the loop's decision."""
    result = loops_rules.score(doc)
    kept = {k: {"earned": v["earned"], "weight": v["weight"], "reason": v["reason"]} for k, v in result["parts"].items() if v["applies"]}
    result["loop"] = decide(loop_id, result["score"], kept, review_of(doc))
    return result


# not @store.writes: the files it locks depend on the call (checkpoints only with a checkpoint)
def _attach_iteration(files, loop_id: str, number: int, stamp: str, record: dict | None, commit: dict | None) -> list:
    """Attach the checkpoint and commit to the iteration they keep; returns the checkpoints dropped."""
    loop = next((l for l in files["loops"]["loops"] if l.get("id") == loop_id), None)
    entry = next((it for it in (loop or {}).get("iterations", []) if it.get("iteration") == number and it.get("timestamp") == stamp), None)
    if entry is not None:
        if record:
            entry["checkpoint"] = record["ref"]
        if commit:
            entry["commit"] = commit["sha"]
    return checkpoints.remember(files["checkpoints"], record) if record else []


def _keep_iteration(loop_id: str, out: dict, stamp: str, phase, summary, settings: dict | None) -> None:
    """A code loop keeps each decided iteration's code as a checkpoint ref (and, when configured, a
    commit): made once, by the call that recorded the iteration, then attached to it."""

    number, score = out["iteration"], out["score"]
    try:
        record = checkpoints.snapshot(f"code loop iteration {number} (score {score:g})", phase)
    except AetherError as exc:
        record = None
        out["warnings"].append(f"no checkpoint for this iteration: {exc.message}")
    commit = None
    if settings is None:  # the loop was not active at the first look (the user answered since)
        try:
            settings = code_loop.config()
        except AetherError as exc:
            out["warnings"].append(f"iteration not committed: {exc.message}")
    if settings is not None:
        commit, more = code_loop.commit_iteration(number, summary or f"score {score:g}", settings)
        out["warnings"].extend(more)
    if record is None and commit is None:
        return

    try:
        dropped = store.update_many(
            ["loops", "checkpoints"] if record else ["loops"],
            functools.partial(_attach_iteration, loop_id=loop_id, number=number, stamp=stamp, record=record, commit=commit),
        )
    except AetherError as exc:
        if record:
            checkpoints.forget([record])
        out["warnings"].append(f"the iteration's checkpoint was not recorded: {exc.message}")
        return
    checkpoints.forget(dropped)
    out["checkpoint"], out["commit"] = record, commit


def _next(loop: dict, decision: str, refinement: dict | None) -> dict:
    """What the Queen does after a decision: {command(s), reason}."""
    lid = loop["id"]
    if decision == "user_input":
        store_user = f"`aether feedback-store {lid} - --kind user`"  # by hand
        return {
            "command": f"aether loop-present {lid}",
            "reason": f"show the user where the loop stands and store their answer with {store_user}",
        }
    if loop["type"] == "plan":
        if decision == "complete":
            return {"command": f"aether plan-load --from-loop {lid}", "reason": "the plan passed the critic: store it"}
        feedback = f"`aether feedback-get {lid}`"  # by hand
        return {"command": f"aether plan-draft-get {lid}", "reason": f"spawn the planner again with the critic's feedback ({feedback})"}
    phase = loop.get("phase")
    if decision == "complete":
        return {
            "command": f"aether build-finish {phase} --results -" if phase else None,
            "reason": "the code passed its verification: finish the build",
        }
    if refinement:
        score = f"score it with `aether loop-score - --loop {lid}`"  # by hand
        return {
            "commands": [f"aether spawn-start {sid}" for sid in refinement["spawns"]] + [f"aether spawn-start {refinement['verify']}"],
            "reason": f"run the refinement wave (one message), record each with spawn-finish, then the re-verification; {score}",
        }
    return {"command": None, "reason": "give the findings back to the builders, verify again, then score it"}


# not @store.writes: the files it locks depend on the call (colony with `refine`)
def _store_feedback(files, loop_id: str, text: str, kind: str, refine: bool) -> dict:
    """Keep the feedback for the loop's iteration; a user's answer starts the next round."""
    loop = _find(files["loops"], loop_id)
    if loop["status"] == "complete":
        raise state_error("loop_complete", f"loop {loop_id} is complete; feedback would never be read")
    if refine and loop["status"] != "awaiting_user":
        raise state_error(
            "not_awaiting_user",
            f"loop {loop_id} is {loop['status']}, not waiting for the user: its "
            f"next refinement comes from `aether loop-decide` (or loop-score "  # by hand
            f"--loop); store the answer without --refine",
            status=loop["status"],
        )
    parsed = critique_rules.parse(text) if kind == "critic" else None
    # critic feedback assesses the iteration about to be scored; user feedback answers the last one
    iteration = len(loop["iterations"]) + (1 if kind == "critic" else 0)
    entry = {"kind": kind, "iteration": iteration, "round": loop["round"], "text": text, "timestamp": clock.iso()}
    if parsed is not None:
        entry["parsed"] = parsed
    loop["feedback"].append(entry)
    del loop["feedback"][:-MAX_FEEDBACK]
    resumed = False
    if kind == "user" and loop["status"] == "awaiting_user":
        loop["status"], loop["round"], resumed = "active", loop["round"] + 1, True
    loop["updated_at"] = clock.iso()
    events.append(
        files["events"],
        "loop_feedback",
        kind,
        f"{kind} feedback for loop {loop_id}" + (f" (round {loop['round']} starts)" if resumed else ""),
    )
    out = {**_summary(loop), "stored": {k: entry[k] for k in ("kind", "iteration", "round")}, "resumed": resumed}
    if parsed is not None:
        out["parsed"] = parsed
    if refine:
        refinement, warnings = code_loop.plan_refinement(files["colony"], loop, loop["iterations"][-1], user=text)
        out.update(phase=loop.get("phase"), refinement=refinement, warnings=warnings, next=_next(loop, "refine", refinement))
    return out


def feedback_store(loop_id: str, text: str, kind: str, refine: bool = False) -> dict:
    """feedback-store: keep critic or user feedback for the loop's current iteration. Critic
    feedback must carry its score (see critique_rules.parse); its score, summary, key issues and
    recommendations are stored parsed beside the text. `refine` (the user's answer asks a code
    loop bound to a running build for another round): plan the refinement wave at once, its
    briefs carrying the answer, as a refine decision would (`refinement`, `next.commands`)."""

    if kind not in FEEDBACK_KINDS:
        raise input_error("invalid_argument", f"kind must be one of {', '.join(FEEDBACK_KINDS)}")
    inputs.require_text(text, "the feedback", MAX_FEEDBACK_LENGTH)
    if refine:
        before = _find(store.read("loops"), loop_id)
        if kind != "user" or before["type"] != "code" or before.get("phase") is None:
            raise input_error(
                "invalid_argument",
                "--refine goes with the user's answer (--kind user) to a code loop "
                "bound to a build; a plan loop's next round is the planner again",
            )

    return store.update_many(
        ["loops", "events"] + (["colony"] if refine else []),
        functools.partial(_store_feedback, loop_id=loop_id, text=text, kind=kind, refine=refine),
    )


def feedback_get(loop_id: str, kind: str | None = None) -> dict:
    """feedback-get: the loop's feedback, newest last, and a block for the next producer."""
    loop = _find(store.read("loops"), loop_id)
    items = [f for f in loop["feedback"] if kind is None or f["kind"] == kind]
    latest = {k: next((f for f in reversed(loop["feedback"]) if f["kind"] == k), None) for k in FEEDBACK_KINDS}
    lines = [f"--- LOOP FEEDBACK ({loop['type']} loop {loop_id}, iteration {len(loop['iterations'])}) ---"]
    for k in FEEDBACK_KINDS:
        last = latest[k]
        if (kind is None or kind == k) and last:
            lines += [f"Latest {k} feedback (iteration {last['iteration']}):", last["text"].rstrip()]
    if len(lines) == 1:
        lines.append("(no feedback yet)")
    return {**_summary(loop), "feedback": items, "latest_critic": latest["critic"], "latest_user": latest["user"], "text": "\n".join(lines)}


# ---------------------------------------------------------------- loop-score
