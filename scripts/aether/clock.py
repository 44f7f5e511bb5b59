"""Time and ids. `AETHER_NOW` (unix seconds or ISO 8601) pins the clock for tests and replays."""

from __future__ import annotations

import os
import time


def now() -> float:
    """Current unix time (float seconds)."""
    pinned = os.environ.get("AETHER_NOW")
    if pinned:
        try:
            return float(pinned)
        except ValueError:
            return parse_iso(pinned)
    return time.time()


def iso(ts: float | None = None) -> str:
    """UTC ISO 8601 with a `Z` suffix, whole seconds: `2026-02-04T10:00:00Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now() if ts is None else ts))


def parse_iso(text: str) -> float:
    """Unix time of an ISO 8601 timestamp, with or without fractions or an offset.

    A timestamp without an offset is taken as UTC. Raises ValueError on anything else.
    """
    from datetime import datetime, timezone

    if not isinstance(text, str):
        raise ValueError(f"not a timestamp: {text!r}")
    value = text.strip()
    if value.endswith(("z", "Z")):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


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
