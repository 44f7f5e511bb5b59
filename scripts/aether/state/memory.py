"""Project memory (memory.json): learnings per phase, decisions, and their compression.

One `phase_learnings` entry per phase: extracting a phase's learnings twice is refused
(`learnings_exist`) unless the caller asks to append to or replace the entry.
"""

from __future__ import annotations

import copy
import math

from aether.core import clock, inputs
from aether.core.exceptions import input_error, state_error
from aether.state import store

MAX_PHASE_LEARNINGS = 20  # entries kept in phase_learnings (oldest dropped)
MAX_DECISIONS = 30  # decisions kept (oldest dropped)
# memory-compress: past the token threshold, keep only these many
COMPRESSED_PHASE_LEARNINGS = 10
COMPRESSED_DECISIONS = 15
DEFAULT_TOKEN_THRESHOLD = 10000
TOKENS_PER_WORD = 1.3  # the token estimate: floor(1.3 × words in every string value)
MAX_TEXT_LENGTH = 4000  # one learning, or a decision's content/context
MAX_TYPE_LENGTH = 64
DEFAULT_DECISION_TYPE = "general"
ON_EXISTS = ("refuse", "append", "replace")  # what learning-add does with an existing entry


# ---------------------------------------------------------------- helpers


def _text(value, what: str, limit: int = MAX_TEXT_LENGTH) -> str:
    return inputs.require_text(value, what, limit, advice="say it shorter")


def _phase(phase, what: str = "phase"):
    if phase is None:
        return None
    if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
        raise input_error("invalid_argument", f"{what} must be a whole number ≥ 0, got {phase!r}")
    return phase


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def estimate_tokens(data: dict) -> int:
    """floor(1.3 × the number of words in every string value of memory.json)."""
    words = sum(len(text.split()) for text in _strings(data))
    return math.floor(words * TOKENS_PER_WORD)


def find_learnings(data: dict, phase: int) -> dict | None:
    """The phase_learnings entry of a phase, or None."""
    for entry in data.get("phase_learnings") or []:
        if isinstance(entry, dict) and entry.get("phase") == phase and not isinstance(entry.get("phase"), bool):
            return entry
    return None


def has_learnings(data: dict, phase: int) -> bool:
    """True when the phase's learnings were extracted already."""
    return find_learnings(data, phase) is not None


# ---------------------------------------------------------------- library (inside store updates)


def append_learnings(
    data: dict, phase: int, phase_name: str | None, learnings: list, errors_encountered: int | None = None, *, on_exists: str = "refuse"
) -> dict:
    """Record a phase's learnings in loaded memory.json data; returns the entry.

    One entry per phase. If the phase has one: `on_exists="refuse"` raises `learnings_exist`
    (exit 2), "append" adds the learnings to it, "replace" replaces its learnings. Keeps the
    newest 20 entries. `errors_encountered` None keeps the entry's count (0 for a new one).
    """
    phase = _phase(phase)
    if phase is None:
        raise input_error("invalid_argument", "a phase number is required for learnings")
    if on_exists not in ON_EXISTS:
        raise ValueError(f"on_exists must be one of {ON_EXISTS}")
    if not isinstance(learnings, list) or not learnings:
        raise input_error("invalid_content", "no learnings given")
    items = [_text(item, "a learning") for item in learnings]
    if errors_encountered is not None and (
        isinstance(errors_encountered, bool) or not isinstance(errors_encountered, int) or errors_encountered < 0
    ):
        raise input_error("invalid_argument", f"errors_encountered must be a whole number ≥ 0, got {errors_encountered!r}")
    if phase_name is not None and not isinstance(phase_name, str):
        raise input_error("invalid_argument", "phase_name must be text")
    entries = data.setdefault("phase_learnings", [])
    entry = find_learnings(data, phase)
    if entry is not None:
        if on_exists == "refuse":
            raise state_error(
                "learnings_exist",
                f"phase {phase} already has {len(entry.get('learnings') or [])} learning(s), "
                f"recorded {entry.get('timestamp')}: its learnings were extracted already. "
                f"Pass --append to add to them or --replace to overwrite them.",
                phase=phase,
                entry=entry.get("id"),
            )
        if on_exists == "append":
            current = raw if isinstance(raw := entry.get("learnings"), list) else []
            entry["learnings"] = current + items
        else:
            entry["learnings"] = items
        if phase_name:
            entry["phase_name"] = phase_name
        if errors_encountered is not None:
            entry["errors_encountered"] = errors_encountered
        entry["updated_at"] = clock.iso()
        return entry
    taken = {e.get("id") for e in entries if isinstance(e, dict)}
    entry = {
        "id": clock.new_id("learn", taken),
        "phase": phase,
        "phase_name": phase_name or None,
        "learnings": items,
        "errors_encountered": errors_encountered or 0,
        "timestamp": clock.iso(),
    }
    entries.append(entry)
    del entries[:-MAX_PHASE_LEARNINGS]
    return entry


def append_decision(
    data: dict, content: str, type: str = DEFAULT_DECISION_TYPE, context: str | None = None, phase: int | None = None
) -> dict:
    """Record a decision in loaded memory.json data; returns it. Keeps the newest 30."""
    content = _text(content, "the decision")
    kind = (type or DEFAULT_DECISION_TYPE).strip() if isinstance(type, str) else ""
    if not kind or len(kind) > MAX_TYPE_LENGTH or any(ch < " " for ch in kind):
        raise input_error("invalid_argument", f"the decision type must be a one-line label up to {MAX_TYPE_LENGTH} characters")
    if context is not None:
        context = _text(context, "the decision context") if context.strip() else None
    phase = _phase(phase)
    decisions = data.setdefault("decisions", [])
    taken = {d.get("id") for d in decisions if isinstance(d, dict)}
    decision = {
        "id": clock.new_id("dec", taken),
        "type": kind,
        "content": content,
        "context": context,
        "phase": phase,
        "timestamp": clock.iso(),
    }
    decisions.append(decision)
    del decisions[:-MAX_DECISIONS]
    return decision


def compress(data: dict, threshold: int = DEFAULT_TOKEN_THRESHOLD) -> dict:
    """Trim loaded memory.json data in place: the newest 20 learnings entries and 30
    decisions; if the estimate still exceeds `threshold` tokens, the newest 10 and 15."""
    learnings, decisions = data.setdefault("phase_learnings", []), data.setdefault("decisions", [])
    before = {"phase_learnings": len(learnings), "decisions": len(decisions), "tokens": estimate_tokens(data)}
    del learnings[:-MAX_PHASE_LEARNINGS]
    del decisions[:-MAX_DECISIONS]
    aggressive = estimate_tokens(data) > threshold
    if aggressive:
        del learnings[:-COMPRESSED_PHASE_LEARNINGS]
        del decisions[:-COMPRESSED_DECISIONS]
    after = {"phase_learnings": len(learnings), "decisions": len(decisions), "tokens": estimate_tokens(data)}
    return {
        "compressed": after["phase_learnings"] < before["phase_learnings"] or after["decisions"] < before["decisions"],
        "aggressive": aggressive,
        "threshold": threshold,
        "tokens": after["tokens"],
        "before": before,
        "after": after,
    }


# ---------------------------------------------------------------- commands


def compress_file(threshold: int = DEFAULT_TOKEN_THRESHOLD) -> dict:
    """memory-compress: writes only when something is dropped."""

    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
        raise input_error("invalid_argument", f"threshold must be a whole number ≥ 0, got {threshold!r}")
    report = compress(copy.deepcopy(store.read("memory")), threshold)
    if not report["compressed"]:
        return report
    return store.update("memory", lambda data: compress(data, threshold))


def current_phase() -> int | None:
    """The colony's current phase, or None without an active colony."""
    colony = store.read("colony")
    if colony.get("state") in (None, "IDLE"):
        return None
    phase = colony.get("current_phase")
    return phase if isinstance(phase, int) and not isinstance(phase, bool) else None


def add_decision(content: str, type: str | None = None, context: str | None = None, phase: int | None = None) -> dict:
    """decision-add: the phase defaults to the colony's current phase."""
    _text(content, "the decision")
    if phase is None:
        phase = current_phase()
    return store.update("memory", lambda data: append_decision(data, content, type or DEFAULT_DECISION_TYPE, context, phase))


def split_lines(text: str) -> list:
    """One learning per non-blank line; a leading `- `, `* ` or `• ` bullet is dropped."""
    items = []
    for line in text.splitlines():
        line = line.strip()
        for bullet in ("-", "*", "•"):
            if line == bullet or line.startswith(bullet + " "):
                line = line[len(bullet) :].strip()
                break
        if line:
            items.append(line)
    return items


def add_learnings(
    phase: int, learnings: list, phase_name: str | None = None, errors_encountered: int | None = None, on_exists: str = "refuse"
) -> dict:
    """learning-add: record learnings for a phase (see append_learnings)."""
    for item in learnings:
        _text(item, "a learning")
    return store.update(
        "memory",
        lambda data: append_learnings(data, phase, phase_name, learnings, errors_encountered, on_exists=on_exists),
    )
