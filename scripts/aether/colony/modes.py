"""mode-profile: what the colony's mode means now (the table itself: rules.modes)."""

from __future__ import annotations

from aether.rules.modes import describe, render
from aether.state import store


def answer(mode: str | None = None, when: str | None = None, phase: int | None = None) -> dict:
    """mode-profile: the profile of MODE, else of the colony's mode (STANDARD without a colony).
    `phase` (default: the colony's current phase) decides the archivist and whether the phase
    is the plan's last (LIGHTWEIGHT extracts learnings at the end of the last phase)."""

    colony = store.read("colony")
    source = "argument"
    if mode is None:
        mode = colony.get("mode")
        source = "colony" if mode else "default"
    mode = mode.upper() if isinstance(mode, str) else None
    if phase is None:
        phase = colony.get("current_phase") or None
    last = False
    if phase:
        items = [p for p in store.read("plan").get("phases") or [] if isinstance(p, dict)]
        last = bool(items) and items[-1].get("id") == phase
    info = describe(mode, when=when, phase=phase, last_phase=last)
    info["source"] = source
    info["last_phase"] = last
    info["text"] = render(info)
    return info
