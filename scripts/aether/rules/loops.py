"""The refinement loops' numbers and stop rule: thresholds, the iteration cap, stagnation, and
the code review score (pure). See docs/decisions/refinement-loops.md.
"""

from __future__ import annotations

import math

from aether.core.exceptions import input_error

THRESHOLDS = {"plan": 80, "code": 95}  # default passing score per loop type


MAX_ITERATIONS = 5  # per round


STAGNATION_MIN_GAIN = 5  # points that must be gained …


STAGNATION_WINDOW = 2  # … over this many iterations


# The code review score (docs/decisions/refinement-loops.md): points per part; binary parts score all or nothing.
SCORE_WEIGHTS = {"tests": 30, "types": 15, "lint": 10, "coverage": 15, "plan_alignment": 15, "spec_alignment": 15}


COVERAGE_TARGET = 80  # percent


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
            return "user_input", (
                f"stagnation: {gain:+g} points over the last {STAGNATION_WINDOW} iterations (less than {STAGNATION_MIN_GAIN}): ask the user"
            )
    return "refine", f"score {score:g} < threshold {threshold:g}: refine with the critic's feedback"


def round_scores(loop: dict) -> list:
    return [it["score"] for it in loop["iterations"] if it.get("round") == loop["round"]]


def check_type(loop_type: str) -> str:
    name = loop_type.strip().lower()
    if not name or len(name) > 32 or not all(c.isalnum() or c in "-_" for c in name):
        raise input_error("invalid_loop_type", f"loop type {loop_type!r} must be a short name such as plan or code")
    return name


def _clean_part(name: str, part):
    """(applies, earned fraction 0–1, reason) for one part."""

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
    raise input_error(
        "invalid_score",
        f'`{name}` is {part!r}: a number from 0 to 1, true or false, or {{"fraction": 0.8}} (docs/contracts.md, the loop scores)',
    )


def score(doc) -> dict:
    """loop-score: the code review score from its parts (docs/decisions/refinement-loops.md). Parts that do not
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


def _count(part, key: str, name: str):
    value = part.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise input_error("invalid_score", f"{name}.{key} must be a whole number ≥ 0, found {value!r}")
    return value


FEEDBACK_KINDS = ("critic", "user")
