"""The critic's feedback (docs/decisions/refinement-loops.md): reading its score and sections, and what the Queen shows the
user when a loop stops for them (loop-present).

A critic writes `Overall Score`, `Assessment Summary`, `Detailed Feedback`, `Key Issues` and
`Recommendations`. The parser tolerates what models produce: `### Overall Score` with the number
on the next line, `Overall Score: 85/100`, `**Score:** 85%`, `Score 62.`, `8.5/10`; headings as
`#`s, bold lines or `Name:` lines; items as bullets, numbers or plain lines.

Every pattern here runs in time linear in the line's length (possessive quantifiers, or plain
string work where a pattern would backtrack): feedback is model output of any shape.
"""

from __future__ import annotations

from aether.core.exceptions import state_error
from aether.core.text import one_line
from aether.rules.critique import options, parse, recommend, stop_reason
from aether.state import store
from aether.steps import loops

# ---------------------------------------------------------------- loop-present


def present(loop_id: str, answer: str | None = None) -> dict:
    """loop-present: what the Queen shows the user when a loop asks for them."""

    loop = loops.find(store.read("loops"), loop_id)
    if loop["status"] != "awaiting_user":
        raise state_error(
            "not_awaiting_user",
            f"loop {loop_id} is {loop['status']}, not waiting for the user; "
            f"loop-present shows a loop after loop-decide answered user_input",
            status=loop["status"],
        )
    scores = [it["score"] for it in loop["iterations"]]
    score = scores[-1]
    previous = scores[-2] if len(scores) > 1 else None
    stop = stop_reason(loop)
    critic = next((f for f in reversed(loop["feedback"]) if f["kind"] == "critic"), None)
    parsed = (critic or {}).get("parsed") or {}
    if critic and not parsed:
        try:
            parsed = parse(critic["text"])
        except Exception:  # feedback stored before scores were parsed: show it as it is
            parsed = {}
    challenges = parsed.get("key_issues") or []
    option, why = recommend(score, loop["threshold"], stop, loop["round"])
    result = {
        "loop_id": loop["id"],
        "type": loop["type"],
        "status": loop["status"],
        "phase": loop.get("phase"),
        "iteration": len(loop["iterations"]),
        "round": loop["round"],
        "score": score,
        "previous_score": previous,
        "threshold": loop["threshold"],
        "gap": round(loop["threshold"] - score, 2),
        "stop_reason": stop,
        "reason": loop["iterations"][-1].get("reason"),
        "scores": scores,
        "challenges": challenges,
        "critic_summary": parsed.get("summary") or "",
        "critic_recommendations": parsed.get("recommendations") or [],
        "options": options(loop),
        "recommendation": {"option": option, "reason": why},
    }
    kind = {"plan": "Planning", "code": "Coding"}.get(loop["type"], loop["type"].capitalize())
    lines = [
        f"{kind} loop {loop['id']} needs your decision",
        f"  Iteration {result['iteration']} (round {loop['round']}): score {score:g}"
        + (f", previous {previous:g}" if previous is not None else "")
        + f", threshold {loop['threshold']:g}",
        "  Stopped: "
        + ("the iteration cap was reached" if stop == "cap" else "stagnation (under 5 points gained over the last 2 iterations)"),
    ]
    if result["critic_summary"]:
        lines.append(f"  Critic: {one_line(result['critic_summary'], 300)}")
    lines += ["", "Challenges (from the critic):"]
    lines += [f"  - {c}" for c in challenges] or ["  (the critic listed no key issues)"]
    lines += ["", "Options:"]
    for n, opt in enumerate(result["options"], start=1):
        mark = "  ← recommended" if opt["id"] == option else ""
        lines.append(f"  {n}. {opt['label']}{mark}")
        lines.append("     + " + "; ".join(opt["pros"]))
        lines.append("     − " + "; ".join(opt["cons"]))
    lines += [
        "",
        f"Recommendation: {next(o['label'] for o in result['options'] if o['id'] == option)} — {why}.",
        answer or f"Store the user's answer: aether feedback-store {loop['id']} - --kind user",
    ]
    result["text"] = "\n".join(lines)
    return result
