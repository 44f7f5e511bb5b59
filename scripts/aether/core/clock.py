"""Time and ids. `AETHER_NOW` (unix seconds or ISO 8601) pins the clock for tests and replays."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from aether.core.exceptions import input_error

# AETHER_NOW must lie in [0, MAX_PINNED): from 1970 up to the year 10000 (ISO has 4 digits)
MAX_PINNED = 253_402_300_800


_idle = 0.0  # seconds this process slept waiting for something (`idle`)


def idle(seconds: float) -> None:
    """Sleep, counted as time this process waited, not worked (the helper's time on the timeline
    leaves it out)."""
    global _idle  # noqa: PLW0603 — one count per process
    started = time.monotonic()
    time.sleep(seconds)
    _idle += time.monotonic() - started


def idled() -> float:
    """Seconds this process has slept in `idle`."""
    return _idle


def now() -> float:
    """Current unix time (float seconds); AETHER_NOW pins it (a bad value is an input error)."""
    pinned = os.environ.get("AETHER_NOW")
    if pinned:
        return _pinned(pinned)
    return time.time()


def _pinned(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        try:
            value = parse_iso(raw)
        except (ValueError, OverflowError):
            value = None
    if value is None or not 0 <= value < MAX_PINNED:  # also false for NaN
        raise input_error(
            "invalid_environment",
            f"AETHER_NOW must be unix seconds or an ISO 8601 time between 1970 and "
            f"the year 9999, got {raw[:60]!r}; unset it to use the real clock",
        )
    return value


def iso(ts: float | None = None) -> str:
    """UTC ISO 8601 with a `Z` suffix, whole seconds: `2026-02-04T10:00:00Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now() if ts is None else ts))


def parse_iso(text: object) -> float:
    """Unix time of an ISO 8601 timestamp, with or without fractions or an offset.

    A timestamp without an offset is taken as UTC. Raises ValueError on anything else.
    """

    if not isinstance(text, str):
        raise ValueError(f"not a timestamp: {text!r}")
    value = text.strip()
    if value.endswith(("z", "Z")):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def elapsed(seconds: float) -> str:
    """A duration as the live views show it: `42s`, `3m05s`."""
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def hex_bits(nbytes: int = 2) -> str:
    """Random hex digits for ids (2 bytes → 4 digits)."""
    return os.urandom(nbytes).hex()


def new_id(prefix: str, taken=(), nbytes: int = 2) -> str:
    """`<prefix>_<unix>_<hex>`, re-drawn until it is not in `taken`."""
    stamp = int(now())
    while True:
        candidate = f"{prefix}_{stamp}_{hex_bits(nbytes)}"
        if candidate not in taken:
            return candidate
