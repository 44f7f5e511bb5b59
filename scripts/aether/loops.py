"""Refinement loops (seed 004): a producer and a critic iterate until the critic's score is good
enough, the loop stagnates, or it hits its iteration cap. State lives in loops.json, so a loop
survives /clear.

loop-decide, first match wins: `complete` (score ≥ the loop's threshold) > `user_input` (the
5th iteration of this round) > `user_input` (stagnation: s[n] − s[n−2] < 5) > `refine`.
A round starts at loop-init and again whenever the user answers (feedback-store --kind user
while the loop waits for them), which resets the cap and the stagnation window.
"""

from __future__ import annotations

from aether import clock, events, inputs, store
from aether.errors import input_error, state_error

THRESHOLDS = {"plan": 80, "code": 95}  # default passing score per loop type
SNAPSHOT_TYPES = ("code",)  # loop types whose iterations are kept as checkpoint refs
MAX_ITERATIONS = 5  # per round
STAGNATION_MIN_GAIN = 5  # points that must be gained …
STAGNATION_WINDOW = 2  # … over this many iterations
MAX_LOOPS = 50  # loops kept in loops.json (finished ones dropped first)
MAX_FEEDBACK = 50  # feedback entries kept per loop
MAX_FEEDBACK_LENGTH = 20000  # characters of one feedback text
FEEDBACK_KINDS = ("critic", "user")
# The code review score (seed 004): points per part; binary parts score all or nothing.
SCORE_WEIGHTS = {"tests": 30, "types": 15, "lint": 10, "coverage": 15, "plan_alignment": 15, "spec_alignment": 15}
COVERAGE_TARGET = 80  # percent


# ---------------------------------------------------------------- the rule (pure)


def rule(scores: list, threshold: float) -> tuple:
    """(decision, reason) for the scores of the current round, newest last."""
    n = len(scores)
    score = scores[-1]
    if score >= threshold:
        return "complete", f"score {score:g} ≥ threshold {threshold:g}"
    if n >= MAX_ITERATIONS:
        return "user_input", f"{n} iterations without reaching {threshold:g} (the cap is {MAX_ITERATIONS}): ask the user"
    if n > STAGNATION_WINDOW:
        gain = score - scores[-1 - STAGNATION_WINDOW]
        if gain < STAGNATION_MIN_GAIN:
            return "user_input", (f"stagnation: {gain:+g} points over the last {STAGNATION_WINDOW} iterations "
                                  f"(less than {STAGNATION_MIN_GAIN}): ask the user")
    return "refine", f"score {score:g} < threshold {threshold:g}: refine with the critic's feedback"


# ---------------------------------------------------------------- state helpers


def _find(data: dict, loop_id: str) -> dict:
    for loop in data["loops"]:
        if loop.get("id") == loop_id:
            return loop
    known = ", ".join(l.get("id", "?") for l in data["loops"][-5:]) or "none"
    raise input_error("unknown_loop", f"no loop {loop_id!r} (recent: {known}); start one with `aether loop-init`")


def _round_scores(loop: dict) -> list:
    return [it["score"] for it in loop["iterations"] if it.get("round") == loop["round"]]


def _summary(loop: dict) -> dict:
    return {"loop_id": loop["id"], "type": loop["type"], "status": loop["status"], "threshold": loop["threshold"],
            "round": loop["round"], "iterations": len(loop["iterations"]),
            "round_iterations": len(_round_scores(loop)), "max_iterations": MAX_ITERATIONS,
            "scores": [it["score"] for it in loop["iterations"]]}


def _trim(data: dict) -> None:
    loops = data["loops"]
    while len(loops) > MAX_LOOPS:
        done = next((i for i, l in enumerate(loops) if l.get("status") == "complete"), 0)
        loops.pop(done)


# ---------------------------------------------------------------- commands


find = _find  # public name for other modules (drafts, critique, code_loop)


def check_type(loop_type: str) -> str:
    name = loop_type.strip().lower()
    if not name or len(name) > 32 or not all(c.isalnum() or c in "-_" for c in name):
        raise input_error("invalid_loop_type", f"loop type {loop_type!r} must be a short name such as plan or code")
    return name


def new_loop(data: dict, name: str, threshold: float, phase: int | None = None, session: str | None = None) -> dict:
    """Append a loop to loaded loops.json data (inside a store update). `phase`: a code loop
    bound to that phase's build (its refine decisions plan refinement spawns in the spawn tree)."""
    loop = {"id": clock.new_id("loop", {l.get("id") for l in data["loops"]}), "type": name,
            "threshold": threshold, "status": "active", "round": 1, "iterations": [], "feedback": [],
            "created_at": clock.iso(), "updated_at": clock.iso()}
    if phase is not None:
        loop["phase"] = phase
    if session:
        loop["session_id"] = session
    data["loops"].append(loop)
    _trim(data)
    return loop


def init(loop_type: str, threshold: float | None = None, build: bool = False) -> dict:
    """loop-init: start a refinement loop of a type (plan, code, or another with --threshold).
    build: bind a code loop to the running build (its refine decisions plan refinement spawns)."""
    name = check_type(loop_type)
    if threshold is None:
        if name not in THRESHOLDS:
            raise input_error("invalid_loop_type", f"loop type {name!r} has no default threshold "
                                                   f"({', '.join(f'{k} {v}' for k, v in THRESHOLDS.items())}); pass --threshold")
        threshold = THRESHOLDS[name]
    if not 0 < threshold <= 100:
        raise input_error("invalid_argument", f"threshold must be in (0, 100], got {threshold:g}")
    if build and name != "code":
        raise input_error("invalid_argument", "--build binds a code loop to the running build; use `loop-init code --build`")
    colony = store.read("colony")

    def change(files):
        data = files["loops"]
        phase = None
        if build:
            live = files["colony"]
            if live.get("state") != "EXECUTING":
                raise state_error("not_building", f"the colony is {live.get('state')}: a code loop is bound to a running "
                                                  f"build — run `aether build-start <phase>` first")
            phase = live.get("current_phase")
            bound = next((l for l in data["loops"] if l.get("phase") == phase and l.get("type") == "code"
                          and l.get("status") != "complete" and l.get("session_id") == live.get("session_id")), None)
            if bound is not None:
                return {**_summary(bound), "phase": phase, "reused": True}
        loop = new_loop(data, name, threshold, phase, colony.get("session_id"))
        events.append(files["events"], "loop_started", "queen", f"{name} loop {loop['id']} (threshold {threshold:g})"
                      + (f" bound to the build of phase {phase}" if phase is not None else ""))
        out = _summary(loop)
        if phase is not None:
            out.update(phase=phase, reused=False)
        return out

    return store.update_many(["loops", "events"] + (["colony"] if build else []), change)


def _critic_for(loop: dict, iteration: int) -> dict | None:
    """The newest critic feedback stored for an iteration."""
    return next((f for f in reversed(loop["feedback"]) if f["kind"] == "critic" and f.get("iteration") == iteration), None)


def review_of(answer) -> dict | None:
    """A verify ant's findings, as a critic's parsed feedback (summary, key issues), when its whole
    answer (with `score_parts`) carries a summary or findings; None otherwise."""
    from aether import critique

    if not isinstance(answer, dict) or not isinstance(answer.get("score_parts"), dict):
        return None
    items = []
    for item in answer.get("findings") if isinstance(answer.get("findings"), list) else []:
        if isinstance(item, dict):  # {location, description, …} as a reviewer writes them
            item = " ".join(str(item[k]) for k in ("location", "description", "recommendation") if item.get(k))
        if isinstance(item, str) and item.strip():
            items.append(critique._clip(item, critique.MAX_ITEM_TEXT))
    summary = answer.get("summary")
    summary = critique._clip(summary, critique.MAX_SUMMARY_TEXT) if isinstance(summary, str) and summary.strip() else ""
    if not items and not summary:
        return None
    return {"summary": summary, "key_issues": items[: critique.MAX_ITEMS], "recommendations": []}


def _review_entry(loop: dict, review: dict, score) -> dict:
    """The critic feedback entry a scored verification leaves (seed 004's structure)."""
    text = "\n".join(["## Code Review", "### Overall Score", f"{score:g}", "### Assessment Summary",
                      review["summary"] or "(none)", "### Key Issues"]
                     + [f"- {i}" for i in review["key_issues"]] + ([] if review["key_issues"] else ["(none)"]))
    return {"kind": "critic", "iteration": len(loop["iterations"]) + 1, "round": loop["round"], "text": text,
            "timestamp": clock.iso(), "source": "loop-score",
            "parsed": {"score": score, "score_line": "loop-score", **review}}


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
    from aether import code_loop

    if score is not None and not 0 <= score <= 100:
        raise input_error("invalid_argument", f"score must be 0–100, got {score:g}")
    first = _find(store.read("loops"), loop_id)  # refuse early; every value written is read again under the lock
    snapshots = first["type"] in SNAPSHOT_TYPES
    settings = code_loop.config() if snapshots and first["status"] == "active" else None  # a bad config stops here
    bound = first["type"] == "code" and first.get("phase") is not None
    given = None if score is None else (int(score) if score == int(score) else round(score, 2))

    def change(files):
        loop = _find(files["loops"], loop_id)
        if loop["status"] == "complete":
            raise state_error("loop_complete", f"loop {loop_id} is complete; start a new one with `aether loop-init`")
        if loop["status"] == "awaiting_user":
            raise state_error("awaiting_user_feedback", f"loop {loop_id} waits for the user: store their answer with "
                                                        f"`aether feedback-store {loop_id} - --kind user` first")
        if loop["type"] != first["type"] or (loop["type"] == "code" and loop.get("phase") is not None) != bound:
            raise state_error("loop_changed", f"loop {loop_id} changed while this call waited; run it again")
        number = len(loop["iterations"]) + 1
        parsed = (_critic_for(loop, number) or {}).get("parsed") or {}
        warnings = []
        if given is None:
            if parsed.get("score") is None:
                raise input_error("score_missing", f"no score for iteration {number} of loop {loop_id}: give it "
                                                   f"(`aether loop-decide {loop_id} 85`) or store the critic's feedback "
                                                   f"with its Overall Score first (`aether feedback-store {loop_id} - "
                                                   f"--kind critic`)")
            value, source = parsed["score"], "critic"
            value = int(value) if value == int(value) else round(value, 2)
        else:
            value, source = given, "given"
            if parsed.get("score") is not None and parsed["score"] != value:
                warnings.append(f"the given score {value:g} differs from the critic's {parsed['score']:g}; "
                                f"{value:g} is recorded")
        if review and _critic_for(loop, number) is None:
            loop["feedback"].append(_review_entry(loop, review, value))
            del loop["feedback"][:-MAX_FEEDBACK]
        scores = _round_scores(loop) + [value]
        decision, reason = rule(scores, loop["threshold"])
        entry = {"iteration": number, "round": loop["round"], "score": value, "decision": decision,
                 "reason": reason, "timestamp": clock.iso(), "checkpoint": None}
        if parts:
            entry["parts"] = parts
        loop["iterations"].append(entry)
        loop["status"] = {"complete": "complete", "user_input": "awaiting_user"}.get(decision, "active")
        loop["updated_at"] = clock.iso()
        refinement = None
        if bound and decision == "refine":
            refinement, more = code_loop.plan_refinement(files["colony"], loop, entry)
            warnings.extend(more)
        events.append(files["events"], "loop_decided", "queen",
                      f"{loop['type']} loop {loop_id} iteration {number}: {value:g} → {decision}")
        out = {**_summary(loop), "decision": decision, "reason": reason, "score": value, "score_source": source,
               "iteration": number, "checkpoint": None, "commit": None, "warnings": warnings,
               "next": _next(loop, decision, refinement)}
        if loop["type"] == "code":
            out["phase"] = loop.get("phase")
            out["refinement"] = refinement
        phase = None
        if snapshots:  # the phase a snapshot is filed under
            phase = loop.get("phase") or (files["colony"] if bound else store.read("colony")).get("current_phase") or None
        return out, entry["timestamp"], phase, parsed.get("summary")

    names = ["loops", "events"] + (["colony"] if bound else [])
    out, stamp, phase, summary = store.update_many(names, change)
    if snapshots:
        _keep_iteration(loop_id, out, stamp, phase, summary, settings)
    return out


def _keep_iteration(loop_id: str, out: dict, stamp: str, phase, summary, settings: dict | None) -> None:
    """A code loop keeps each decided iteration's code as a checkpoint ref (and, when configured, a
    commit): made once, by the call that recorded the iteration, then attached to it."""
    from aether import checkpoints, code_loop
    from aether.errors import AetherError

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

    def attach(files):
        loop = next((l for l in files["loops"]["loops"] if l.get("id") == loop_id), None)
        entry = next((it for it in (loop or {}).get("iterations", [])
                      if it.get("iteration") == number and it.get("timestamp") == stamp), None)
        if entry is not None:
            if record:
                entry["checkpoint"] = record["ref"]
            if commit:
                entry["commit"] = commit["sha"]
        return checkpoints.remember(files["checkpoints"], record) if record else []

    try:
        dropped = store.update_many(["loops", "checkpoints"] if record else ["loops"], attach)
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
        return {"command": f"aether loop-present {lid}", "reason": "show the user where the loop stands and store "
                                                                   f"their answer with `aether feedback-store {lid} - --kind user`"}
    if loop["type"] == "plan":
        if decision == "complete":
            return {"command": f"aether plan-load --from-loop {lid}", "reason": "the plan passed the critic: store it"}
        return {"command": f"aether plan-draft-get {lid}",
                "reason": "spawn the planner again with the critic's feedback (`aether feedback-get " + lid + "`)"}
    phase = loop.get("phase")
    if decision == "complete":
        return {"command": f"aether build-finish {phase} --results -" if phase else None,
                "reason": "the code passed its verification: finish the build"}
    if refinement:
        return {"commands": [f"aether spawn-start {sid}" for sid in refinement["spawns"]]
                + [f"aether spawn-start {refinement['verify']}"],
                "reason": "run the refinement wave (one message), record each with spawn-finish, then the "
                          "re-verification; score it with `aether loop-score - --loop " + lid + "`"}
    return {"command": None, "reason": "give the findings back to the builders, verify again, then score it"}


def feedback_store(loop_id: str, text: str, kind: str, refine: bool = False) -> dict:
    """feedback-store: keep critic or user feedback for the loop's current iteration. Critic
    feedback must carry its score (see critique.parse); its score, summary, key issues and
    recommendations are stored parsed beside the text. `refine` (the user's answer asks a code
    loop bound to a running build for another round): plan the refinement wave at once, its
    briefs carrying the answer, as a refine decision would (`refinement`, `next.commands`)."""
    from aether import code_loop, critique

    if kind not in FEEDBACK_KINDS:
        raise input_error("invalid_argument", f"kind must be one of {', '.join(FEEDBACK_KINDS)}")
    inputs.require_text(text, "the feedback", MAX_FEEDBACK_LENGTH)
    if refine:
        before = _find(store.read("loops"), loop_id)
        if kind != "user" or before["type"] != "code" or before.get("phase") is None:
            raise input_error("invalid_argument", "--refine goes with the user's answer (--kind user) to a code loop "
                                                  "bound to a build; a plan loop's next round is the planner again")

    def change(files):
        loop = _find(files["loops"], loop_id)
        if loop["status"] == "complete":
            raise state_error("loop_complete", f"loop {loop_id} is complete; feedback would never be read")
        if refine and loop["status"] != "awaiting_user":
            raise state_error("not_awaiting_user", f"loop {loop_id} is {loop['status']}, not waiting for the user: its "
                                                   f"next refinement comes from `aether loop-decide` (or loop-score "
                                                   f"--loop); store the answer without --refine", status=loop["status"])
        parsed = critique.parse(text) if kind == "critic" else None
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
        events.append(files["events"], "loop_feedback", kind, f"{kind} feedback for loop {loop_id}"
                      + (f" (round {loop['round']} starts)" if resumed else ""))
        out = {**_summary(loop), "stored": {k: entry[k] for k in ("kind", "iteration", "round")}, "resumed": resumed}
        if parsed is not None:
            out["parsed"] = parsed
        if refine:
            refinement, warnings = code_loop.plan_refinement(files["colony"], loop, loop["iterations"][-1], user=text)
            out.update(phase=loop.get("phase"), refinement=refinement, warnings=warnings,
                       next=_next(loop, "refine", refinement))
        return out

    return store.update_many(["loops", "events"] + (["colony"] if refine else []), change)


def feedback_get(loop_id: str, kind: str | None = None) -> dict:
    """feedback-get: the loop's feedback, newest last, and a block for the next producer."""
    loop = _find(store.read("loops"), loop_id)
    items = [f for f in loop["feedback"] if kind is None or f["kind"] == kind]
    latest = {k: next((f for f in reversed(loop["feedback"]) if f["kind"] == k), None) for k in FEEDBACK_KINDS}
    lines = [f"--- LOOP FEEDBACK ({loop['type']} loop {loop_id}, iteration {len(loop['iterations'])}) ---"]
    for k in FEEDBACK_KINDS:
        if (kind is None or kind == k) and latest[k]:
            lines += [f"Latest {k} feedback (iteration {latest[k]['iteration']}):", latest[k]["text"].rstrip()]
    if len(lines) == 1:
        lines.append("(no feedback yet)")
    return {**_summary(loop), "feedback": items, "latest_critic": latest["critic"], "latest_user": latest["user"],
            "text": "\n".join(lines)}


# ---------------------------------------------------------------- loop-score


def _count(part, key: str, name: str):
    value = part.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise input_error("invalid_score", f"{name}.{key} must be a whole number ≥ 0, found {value!r}")
    return value


def _clean_part(name: str, part):
    """(applies, earned fraction 0–1, reason) for one part."""
    import math

    if part is None or (isinstance(part, str) and part.strip().lower() in ("n/a", "na", "none", "not_applicable")):
        return False, 0.0, "does not apply"
    if isinstance(part, dict) and part.get("applies") is False:
        return False, 0.0, "does not apply"
    if name == "tests":
        if isinstance(part, bool):
            return True, float(part), "all tests pass" if part else "tests fail"
        if isinstance(part, dict):
            passed, failed = _count(part, "passed", name), _count(part, "failed", name)
            if passed + failed == 0:
                return True, 0.0, "no tests ran"
            return True, float(failed == 0), f"{passed} passed, {failed} failed"
    elif name in ("types", "lint"):
        if isinstance(part, bool):
            return True, float(part), "clean" if part else "errors"
        if isinstance(part, dict):
            errors = _count(part, "errors", name)
            return True, float(errors == 0), "clean" if errors == 0 else f"{errors} error(s)"
        if isinstance(part, int) and part >= 0:
            return True, float(part == 0), "clean" if part == 0 else f"{part} error(s)"
    elif name == "coverage":
        value = part.get("percent") if isinstance(part, dict) else part
        if not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 100:
            ok = value >= COVERAGE_TARGET
            return True, float(ok), f"{value:g}% {'≥' if ok else '<'} {COVERAGE_TARGET}%"
    else:  # plan_alignment, spec_alignment: a judgment, true/false or a fraction 0–1
        value = part.get("fraction") if isinstance(part, dict) else part
        if isinstance(value, bool):
            return True, float(value), "aligned" if value else "not aligned"
        if isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 1:
            return True, float(value), f"{value:.0%} aligned"
    raise input_error("invalid_score", f"`{name}` is {part!r}; see `aether loop-score --help` for what each part takes")


def score(doc) -> dict:
    """loop-score: the code review score from its parts (seed 004's weights). Parts that do not
    apply are left out of the denominator, so they cost nothing."""
    if isinstance(doc, dict) and isinstance(doc.get("score_parts"), dict):
        doc = doc["score_parts"]  # a verify ant's whole result
    if not isinstance(doc, dict):
        raise input_error("invalid_score", "the score parts must be a JSON object")
    unknown = sorted(set(doc) - set(SCORE_WEIGHTS) - {"loop_id"})
    if unknown:
        raise input_error("invalid_score", f"unknown part(s) {', '.join(unknown)}; parts: {', '.join(SCORE_WEIGHTS)}")
    parts, earned, possible = {}, 0.0, 0
    for name, weight in SCORE_WEIGHTS.items():
        applies, fraction, reason = _clean_part(name, doc.get(name))
        got = round(weight * fraction, 2) if applies else 0
        parts[name] = {"weight": weight, "applies": applies, "earned": got, "reason": reason}
        if applies:
            earned += got
            possible += weight
    if possible == 0:
        raise input_error("invalid_score", "no part applies; give at least one of " + ", ".join(SCORE_WEIGHTS))
    total = round(100 * earned / possible, 1)
    lines = [f"Code review score: {total:g}/100 ({earned:g} of {possible} applicable points)"]
    for name, p in parts.items():
        lines.append(f"  {name:<15} {p['earned'] if p['applies'] else '-':>5} / {p['weight']:<3} {p['reason']}")
    return {"score": total, "earned": round(earned, 2), "possible": possible, "parts": parts, "text": "\n".join(lines)}
