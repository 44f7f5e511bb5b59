"""Pheromone signals as numbers: defaults per type, exponential decay, caste sensitivity, the bar."""

from __future__ import annotations

import math

from aether.core import clock, inputs
from aether.core.castes import SENSITIVITY
from aether.core.exceptions import input_error
from aether.core.text import one_line

# type → (strength, half-life in seconds; None never decays)
DEFAULTS = {
    "INIT": (1.0, None),
    "FOCUS": (0.7, 3600),
    "REDIRECT": (0.9, 86400),
    "FEEDBACK": (0.5, 21600),
}


EXPIRY_HALF_LIVES = 10  # past this many half-lives a signal is gone


MIN_STRENGTH = 0.05  # below this a signal is gone


MIN_CONTENT_LENGTH = 20  # shorter content is allowed but flagged by pheromone-validate


MAX_CONTENT_LENGTH = 2000  # every worker reads every signal: keep them short


BAR_WIDTH = 20
MAX_SHOWN = 25  # signals in a block every brief carries: the strongest; the rest are counted


# effective strength thresholds for a caste: > 0.5 PRIORITIZE, ≥ 0.3 NOTE, else IGNORE
PRIORITIZE_ABOVE = 0.5


NOTE_FROM = 0.3


def decay(strength: float, elapsed: float, half_life: float | None) -> float:
    """s·e^(−ln2·t/h), 6 decimals. Negative elapsed counts as 0 (never above s);
    past 10 half-lives it is 0; half_life None never decays."""
    if half_life is None:
        return round(strength, 6)
    if elapsed < 0:
        elapsed = 0.0
    if elapsed > EXPIRY_HALF_LIVES * half_life:
        return 0.0
    return round(min(strength, strength * math.exp(-math.log(2) * elapsed / half_life)), 6)


def effective(sensitivity: float, strength: float) -> float:
    """sensitivity × strength, 6 decimals; an input error when the product is not finite."""
    value = sensitivity * strength
    if not math.isfinite(value):
        raise input_error(
            "invalid_argument",
            f"sensitivity × strength is not a finite number ({sensitivity:g} × "
            f"{strength:g}); sensitivities and strengths lie between 0 and 1",
        )
    return round(value, 6)


def action_for(effective_strength: float) -> str:
    if effective_strength > PRIORITIZE_ABOVE:
        return "PRIORITIZE"
    if effective_strength >= NOTE_FROM:
        return "NOTE"
    return "IGNORE"


def check_content(content: str) -> dict:
    """pheromone-validate's answer: {pass, reason, length, min_length, max_length}."""
    length = len(content)
    if inputs.is_blank(content):  # zero-width spaces and the like show nothing either
        reason = "empty"
    elif length < MIN_CONTENT_LENGTH:
        reason = "too_short"
    elif length > MAX_CONTENT_LENGTH:
        reason = "too_long"  # pheromone-emit refuses it
    else:
        reason = None
    return {"pass": reason is None, "reason": reason, "length": length, "min_length": MIN_CONTENT_LENGTH, "max_length": MAX_CONTENT_LENGTH}


def current_strength(signal: dict, now: float) -> float:
    """Strength of a stored signal now. Raises ValueError for a malformed record."""
    strength = signal.get("strength")
    half_life = signal.get("half_life_seconds")
    if isinstance(strength, bool) or not isinstance(strength, (int, float)):
        raise ValueError("strength is not a number")
    if half_life is not None and (isinstance(half_life, bool) or not isinstance(half_life, (int, float)) or half_life <= 0):
        raise ValueError("half_life_seconds is not a positive number or null")
    if half_life is None:
        return float(strength)
    created = clock.parse_iso(signal.get("created_at"))
    return decay(float(strength), now - created, float(half_life))


def batch(signals: list, now: float | None = None) -> list:
    """Every signal with `current_strength` (3 decimals); a malformed one gets
    `current_strength: null` and an `error`, and the others are unaffected."""
    now = clock.now() if now is None else now
    out = []
    for signal in signals:
        item = dict(signal)
        try:
            item["current_strength"] = round(current_strength(signal, now), 3)
        except (ValueError, TypeError) as exc:
            item["current_strength"] = None
            item["error"] = str(exc) or type(exc).__name__
        out.append(item)
    return out


def _bar(strength: float) -> str:
    filled = max(0, min(BAR_WIDTH, round(strength * BAR_WIDTH)))
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def render_block(signals: list, caste: str | None, now: float) -> dict:
    """The block the Queen shows and hands to workers: one line per active signal, the strongest
    MAX_SHOWN of them (the rest counted); `signals` lists every active one."""
    if caste is not None and caste not in SENSITIVITY:
        raise input_error("invalid_caste", f"unknown caste {caste!r}; use one of {', '.join(SENSITIVITY)}")
    rows, lines = [], []
    active = [item for item in batch(signals, now) if item.get("current_strength") is not None and item["current_strength"] >= MIN_STRENGTH]
    shown = {id(item) for item in sorted(active, key=lambda item: -item["current_strength"])[:MAX_SHOWN]}  # the strongest
    for item in active:
        strength = item["current_strength"]
        row = {"id": item.get("id"), "type": item.get("type"), "content": item.get("content"), "current_strength": strength}
        line = f"  {str(item.get('type')):<9} {_bar(strength)} {strength:.2f}"
        if caste is not None:
            sensitivity = SENSITIVITY[caste].get(item.get("type"), 0.0)
            eff = effective(sensitivity, strength)
            row["effective"] = round(eff, 3)
            row["action"] = action_for(eff)
            line += f" → {eff:.2f} {row['action']:<10}"
        rows.append(row)
        if id(item) in shown:
            lines.append(f"{line}  {one_line(str(item.get('content')))}")
    header = "ACTIVE PHEROMONES" + (f" (as sensed by {caste})" if caste else "")
    not_shown = len(active) - len(shown)
    if not_shown:
        lines.append(f"  … and {not_shown} weaker signal(s) not shown")
    text = header + "\n" + ("\n".join(lines) if lines else "  (none)")
    return {"signals": rows, "caste": caste, "text": text, "not_shown": not_shown}
