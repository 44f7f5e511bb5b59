"""pheromones.json: emitting, cleaning up and rendering the stored signals (the numbers: rules.pheromones)."""

from __future__ import annotations

from aether.core import clock, inputs
from aether.core.castes import SIGNAL_TYPES
from aether.core.exceptions import input_error
from aether.core.text import one_line
from aether.rules.pheromones import (
    DEFAULTS,
    MAX_CONTENT_LENGTH,
    MIN_CONTENT_LENGTH,
    MIN_STRENGTH,
    current_strength,
    render_block,
)
from aether.state import store


@store.writes("pheromones")
def _drop_faded(data):
    """Keep the signals still at MIN_STRENGTH or above (and the malformed ones, counted)."""
    now = clock.now()
    kept, removed, invalid = [], 0, 0
    for signal in data["signals"]:
        try:
            strength = current_strength(signal, now)
        except (ValueError, TypeError):
            invalid += 1
            kept.append(signal)
            continue
        if strength < MIN_STRENGTH:
            removed += 1
        else:
            kept.append(signal)
    data["signals"] = kept
    return {"removed": removed, "remaining": len(kept), "invalid": invalid}


def cleanup() -> dict:
    """Drop expired or faded signals; malformed records are kept (and counted)."""
    return _drop_faded()


MAX_AUTO_TEXT = 300  # signals the helper emits itself stay short: every worker reads them
MAX_SIGNALS = 200  # signals kept: past it the faded go, then the weakest (never the one just emitted)


def append(data: dict, signal_type: str, content: str, strength: float, half_life, source: str | None, auto: bool) -> dict:
    """Append a new signal to loaded pheromones.json data (a fresh id among the stored ones)."""
    taken = {s.get("id") for s in data["signals"] if isinstance(s, dict)}
    signal = {
        "id": clock.new_id(signal_type.lower(), taken),
        "type": signal_type,
        "content": content,
        "strength": strength,
        "half_life_seconds": half_life,
        "created_at": clock.iso(),
        "source": source or "user",
        "auto": auto,
    }
    data["signals"].append(signal)
    _cap(data, signal)
    return signal


def _cap(data: dict, newest: dict) -> None:
    """At most MAX_SIGNALS stored: the faded ones go first, then the weakest now (the oldest of
    equals first); a malformed record counts as the weakest."""
    excess = len(data["signals"]) - MAX_SIGNALS
    if excess <= 0:
        return
    now = clock.now()

    def strength(signal) -> float:
        try:
            return current_strength(signal, now)
        except (ValueError, TypeError, AttributeError):
            return -1.0

    ranked = sorted((s for s in data["signals"] if s is not newest), key=strength)  # stable: older first among equals
    dropped = {id(s) for s in ranked[:excess]}
    data["signals"][:] = [s for s in data["signals"] if id(s) not in dropped]


def auto_signal(data: dict, signal_type: str, content: str, source: str) -> dict:
    """A signal the helper emits itself (a phase's FOCUS, a build's FEEDBACK or REDIRECT), with
    its type's default strength and half-life, on loaded pheromones.json data."""
    strength, half_life = DEFAULTS[signal_type]
    return append(data, signal_type, one_line(content, MAX_AUTO_TEXT), strength, half_life, source, True)


@store.writes("pheromones")
def _add_signal(data, signal_type, content, strength, half_life, source, auto):
    """Append a new signal and return it."""
    return append(data, signal_type, content, strength, half_life, source, auto)


def emit(
    signal_type: str,
    content: str,
    strength: float | None = None,
    half_life: float | None = None,
    source: str | None = None,
    auto: bool = False,
    never_decays: bool = False,
) -> dict:
    """Add a signal and return it. Defaults come from DEFAULTS by type."""
    signal_type = signal_type.upper()
    if signal_type not in DEFAULTS:
        raise input_error("invalid_signal_type", f"unknown signal type {signal_type!r}; use one of {', '.join(SIGNAL_TYPES)}")
    inputs.require_text(content, "signal content", MAX_CONTENT_LENGTH, advice="every worker reads every signal: say it shorter")
    default_strength, default_half_life = DEFAULTS[signal_type]
    if strength is None:
        strength = default_strength
    if not 0 < strength <= 1:
        raise input_error("invalid_argument", f"strength must be in (0, 1], got {strength:g}")
    if never_decays:
        half_life = None
    elif half_life is None:
        half_life = default_half_life
    elif half_life <= 0:
        raise input_error("invalid_argument", f"half-life must be > 0 seconds, got {half_life:g}")

    signal = _add_signal(signal_type, content, strength, half_life, source, auto)
    if len(content) < MIN_CONTENT_LENGTH:
        signal = dict(signal, warning=f"content is shorter than {MIN_CONTENT_LENGTH} characters; a specific signal steers workers better")
    return signal


def render(caste: str | None = None, now: float | None = None) -> dict:
    """The block the Queen shows and hands to workers: one line per active signal."""
    return render_block(store.read("pheromones")["signals"], caste, clock.now() if now is None else now)
