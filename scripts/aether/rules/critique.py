"""Reading a critic's answer (score, key issues, recommendations) and recommending what to
tell the user when a loop stops (pure). See docs/decisions/refinement-loops.md.
"""

from __future__ import annotations

import re

from aether.core.exceptions import input_error
from aether.core.text import one_line
from aether.rules import loops

SCORE_HEADING = "### Overall Score"  # what the critic is asked to write (the error names it)


SECTIONS = {  # heading words → section
    "assessment summary": "summary",
    "summary": "summary",
    "assessment": "summary",
    "detailed feedback": "detailed",
    "details": "detailed",
    "detailed assessment": "detailed",
    "key issues": "key_issues",
    "issues": "key_issues",
    "challenges": "key_issues",
    "problems": "key_issues",
    "main issues": "key_issues",
    "critical issues": "key_issues",
    "recommendations": "recommendations",
    "suggestions": "recommendations",
    "next steps": "recommendations",
}


MAX_ITEMS = 20  # key issues / recommendations kept


MAX_ITEM_TEXT = 500


MAX_SUMMARY_TEXT = 1000


# loop-present's recommendation rule (see `recommend`)
ACCEPT_WITHIN = 5  # points below the threshold: accepting is recommended


NARROW_BEYOND = 15  # points below the threshold after the user already guided a round: narrow


def _heading(line: str) -> str | None:
    """The section a heading-like line opens ("key_issues", …, "score"), else None."""

    text = line.strip()
    if not text:
        return None
    # Marks and punctuation never take part in the name: only its letters and spaces count.
    marked = text.startswith(("#", "**", "__")) or text.endswith(":")
    name = " ".join(re.sub(r"[^a-z ]+", " ", text.lower()).split())
    if name in ("overall score", "score", "overall", "quality score", "final score"):
        return "score" if marked or text.lower().startswith(("overall score", "score")) else None
    if marked and name in SECTIONS:
        return SECTIONS[name]
    return None


def _number(text: str):
    """A score 0–100 at the start of text: `85`, `85%`, `85/100`, `8.5/10`, `**85**`; None when absent
    (so `Score breakdown: tests 30` is no score)."""

    m = re.match(r"\s*+[*_`]*+\s*+(\d{1,3}(?:\.\d++)?)(?!\d)\s*+[*_`]*+\s*+(%|/\s*+(\d{1,3})|out of\s*+(\d{1,3}))?", text)
    if not m:
        return None
    value = float(m.group(1))
    scale = m.group(3) or m.group(4)
    if scale:
        scale = float(scale)
        if scale <= 0:
            return None
        value = value * 100 / scale
    if not 0 <= value <= 100:
        return None
    return int(value) if value == int(value) else round(value, 2)


def _score(lines: list):
    """(score, the line it came from) — `Overall Score` beats a bare `Score`; None when absent."""

    label = re.compile(
        r"^[\s>*\-+#_|]*+((?:overall|total|final|quality)\s++)?score\b\s*+(?:\*\*|__)?"
        r"\s*+(?:\([^)]*+\))?\s*+[:=—–-]?\s*+(?:\*\*|__)?\s*+(.*)$",
        re.I,
    )
    found = []
    for i, line in enumerate(lines):
        m = label.match(line)
        if not m:
            continue
        overall = bool(m.group(1))
        value = _number(m.group(2)) if m.group(2).strip() else None
        if value is None and _heading(line) == "score":  # the number sits on the next non-empty line
            nxt = next((l for l in lines[i + 1 :] if l.strip()), "")
            if _heading(nxt) is None:
                value = _number(nxt)
        if value is not None:
            found.append((not overall, i, value, line.strip()))
    if not found:
        return None, None
    found.sort()
    return found[0][2], found[0][3]


def _items(body: list) -> list:
    """List items of a section (bullets or numbers, continuation lines joined); its non-empty
    lines when it has no list."""

    bullet = re.compile(r"^\s*+(?:[-*+•]|\d{1,3}[.)])\s++(.*)$")
    items: list = []
    listed = any(bullet.match(line) for line in body)
    for line in body:
        m = bullet.match(line)
        if m:
            items.append(m.group(1).strip())
        elif line.strip() and listed and items:
            items[-1] += " " + line.strip()
        elif line.strip() and not listed:
            items.append(line.strip())
    cleaned = []
    for item in items:
        text = one_line(item.replace("**", "").replace("__", ""), MAX_ITEM_TEXT)
        if text and text not in cleaned:
            cleaned.append(text)
    return cleaned[:MAX_ITEMS]


def parse(text: str) -> dict:
    """The critic's feedback as {score, score_line, summary, key_issues, recommendations};
    raises `critic_score_missing` when no score can be read."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    score, score_line = _score(lines)
    if score is None:
        raise input_error(
            "critic_score_missing",
            f"the critic's feedback has no score I can read: start it with a `{SCORE_HEADING}` heading "
            f"followed by a number from 0 to 100 (e.g. `{SCORE_HEADING}` then `85`, or `Overall Score: 85/100`)",
            expected_heading=SCORE_HEADING,
        )
    sections: dict = {}
    current = None
    for line in lines:
        name = _heading(line)
        if name is not None:
            current = name
            sections.setdefault(name, [])
            continue
        if current is not None:
            sections[current].append(line)
    summary_lines = [l.strip() for l in sections.get("summary", []) if l.strip()]
    return {
        "score": score,
        "score_line": one_line(score_line, 200),
        "summary": one_line(" ".join(summary_lines), MAX_SUMMARY_TEXT) if summary_lines else "",
        "key_issues": _items(sections.get("key_issues", [])),
        "recommendations": _items(sections.get("recommendations", [])),
    }


def stop_reason(loop: dict) -> str:

    last = loop["iterations"][-1] if loop["iterations"] else {}
    round_scores = [it["score"] for it in loop["iterations"] if it.get("round") == last.get("round")]
    return "cap" if len(round_scores) >= loops.MAX_ITERATIONS else "stagnation"


def recommend(score, threshold, stop: str, round_: int) -> tuple:
    """The option loop-present recommends, first match wins:
    1. the score is within ACCEPT_WITHIN points of the threshold → accept;
    2. the user already guided a round (round ≥ 2) or the cap was hit, and the score is more than
       NARROW_BEYOND points short → narrow the scope;
    3. otherwise → another round with the user's guidance.
    Stopping is never recommended: it is the user's call."""
    gap = threshold - score
    if gap <= ACCEPT_WITHIN:
        return "accept", f"the score is {gap:g} point(s) short of {threshold:g}: close enough to accept"
    if (round_ >= 2 or stop == "cap") and gap > NARROW_BEYOND:
        why = "your guidance did not close the gap" if round_ >= 2 else "five iterations did not close the gap"
        return "narrow", f"{why} ({gap:g} points short): a smaller scope can reach the threshold"
    return "guide", (
        f"the loop {'stagnated' if stop == 'stagnation' else 'hit its iteration cap'} {gap:g} points short: "
        f"your guidance is what breaks a plateau"
    )


def options(loop: dict) -> list:
    lid = loop["id"]
    store_user = f"aether feedback-store {lid} - --kind user"
    if loop["type"] == "plan":
        accept_next = [f"aether plan-load --from-loop {lid}"]
        stop_next = ["(nothing: the latest draft stays stored; `aether plan-draft-get " + lid + "` shows it)"]  # by hand
        accept_cons = ["the critic's key issues stay in the plan"]
    else:
        phase = loop.get("phase")
        accept_next = [f"aether build-finish {phase} --results -" if phase else "aether build-finish N --results -"]
        stop_next = [f"aether build-abort {phase} --reason -" if phase else "aether build-abort N --reason -"]
        accept_cons = ["the code ships below the loop's threshold; the open findings stay"]
    return [
        {
            "id": "accept",
            "label": "Accept as is",
            "pros": ["no more iterations: move on now", "the work so far is kept (and checkpointed)"],
            "cons": accept_cons,
            "next": [store_user] + accept_next,
        },
        {
            "id": "guide",
            "label": "Another round with your guidance",
            "pros": ["your answer targets what the critic keeps finding", "the iteration cap and the stagnation window restart"],
            "cons": ["more time and tokens", "the loop already stalled without new input"],
            "next": [store_user],
        },
        {
            "id": "narrow",
            "label": "Narrow the scope",
            "pros": ["a smaller target can reach the threshold", "the dropped parts can come back in a later phase"],
            "cons": ["something the goal asked for is postponed or dropped"],
            "next": [store_user],
        },
        {
            "id": "stop",
            "label": "Stop here",
            "pros": ["nothing more is spent", "you can take over by hand"],
            "cons": ["the loop ends below its threshold"],
            "next": [store_user] + stop_next,
        },
    ]
