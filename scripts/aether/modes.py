"""What each colony mode means (seed 001, "What Changes Per Mode"). The one place for these numbers."""

from __future__ import annotations

DEFAULT_MODE = "STANDARD"

PROFILES = {
    "LIGHTWEIGHT": {
        "phase_count": [2, 3],
        "workers_per_wave": 2,
        "spawn_limits": {"max_depth": 2, "max_workers": 3},
        "reviewer": False,
        "watcher": "syntax",  # the helper checks syntax of changed files itself; no watcher spawn
        "learning": "project_end",
        "auto_signals": ["FEEDBACK"],
        "activity_log": "off",
    },
    "STANDARD": {
        "phase_count": [3, 6],
        "workers_per_wave": 4,
        "spawn_limits": {"max_depth": 3, "max_workers": 5},
        "reviewer": True,
        "watcher": "full",  # syntax, imports, tests
        "learning": "per_phase",
        "auto_signals": ["FEEDBACK", "REDIRECT"],
        "activity_log": "on",
    },
    "FULL": {
        "phase_count": [4, 8],
        "workers_per_wave": 5,
        "spawn_limits": {"max_depth": 3, "max_workers": 5},
        "reviewer": True,
        "watcher": "full+execution",  # plus a launch/execution check
        "learning": "per_phase+inter_phase",
        "auto_signals": ["INIT", "FOCUS", "REDIRECT", "FEEDBACK"],
        "activity_log": "detailed",
    },
}


def profile(mode: str | None) -> dict:
    """The profile of a mode (a colony without a mode behaves as STANDARD)."""
    return PROFILES.get(mode or DEFAULT_MODE, PROFILES[DEFAULT_MODE])
