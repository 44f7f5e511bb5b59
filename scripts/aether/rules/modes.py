"""What each colony mode means (docs/decisions/modes.md): the numbers and switches that CHANGE by
mode live here, in PROFILES. A limit that is the same in every mode lives with the policy it
belongs to: the failure ladder's in rules.failures (retries and debuggers), the reviewer's
rebuild cap in rules.review, the loops' iteration cap and thresholds in rules.loops, Bug Bash's
retries in bugs.pipeline.

`profile(mode)` is the raw table row; `describe(mode, …)` adds what a prompt branches on
directly (spawn the watcher? the reviewer? extract learnings now? run the archivist?), so no
prompt ever compares mode names.
"""

from __future__ import annotations

import copy

from aether.core.castes import SIGNAL_TYPES

DEFAULT_MODE = "STANDARD"

PROFILES: dict[str, dict] = {
    "LIGHTWEIGHT": {
        "phase_count": [2, 3],
        "workers_per_wave": 2,
        "workers_per_wave_range": [1, 2],
        "spawn_limits": {"max_depth": 2, "max_workers": 3},
        "reviewer": False,
        "watcher": "syntax",  # the helper checks syntax of changed files itself; no watcher spawn
        "learning": "project_end",
        "auto_signals": ["FEEDBACK"],
        "activity_log": "off",
        "archivist_every": None,  # no archivist
        "code_loop": False,
        "auto_approve": True,  # /ant:run --auto-approve may approve wave plans (this mode approves its own anyway)
        "isolation": False,  # builders share the working tree (waves of 1–2, a small project)
    },
    "STANDARD": {
        "phase_count": [3, 6],
        "workers_per_wave": 4,
        "workers_per_wave_range": [2, 4],
        "spawn_limits": {"max_depth": 3, "max_workers": 5},
        "reviewer": True,
        "watcher": "full",  # syntax, imports, tests
        "learning": "per_phase",
        "auto_signals": ["FEEDBACK", "REDIRECT"],
        "activity_log": "on",
        "archivist_every": None,
        "code_loop": False,
        "auto_approve": True,  # /ant:run --auto-approve may approve the wave plans this mode would ask about
        "isolation": True,  # each builder of a wave in its own git worktree, merged back in order
    },
    "FULL": {
        "phase_count": [4, 8],
        "workers_per_wave": 5,
        "workers_per_wave_range": [3, 5],
        "spawn_limits": {"max_depth": 3, "max_workers": 5},
        "reviewer": True,
        "watcher": "full+execution",  # plus a launch/execution check
        "learning": "per_phase+inter_phase",
        "auto_signals": ["INIT", "FOCUS", "REDIRECT", "FEEDBACK"],
        "activity_log": "detailed",
        "archivist_every": 3,  # the archivist (an architect ant) runs after every 3rd phase
        "code_loop": True,  # every build runs the code refinement loop (other modes: build-start --loop)
        "auto_approve": False,  # every wave plan is the user's to approve, even in /ant:run
        "isolation": True,
    },
}

# What the watcher verifies at each depth (the `syntax` depth is the helper's own check).
WATCHER_CHECKS = {
    "syntax": ["syntax"],
    "full": ["syntax", "imports", "tests"],
    "full+execution": ["syntax", "imports", "tests", "execution"],
}
# Learning cadence → the moments at which a phase's learnings are extracted.
# build: when a phase's build ends · continue: in /ant:continue, if the build did not ·
# between: cross-phase learnings while moving to the next phase · end: when the project completes.
LEARNING_MOMENTS = {
    "project_end": ("end",),
    "per_phase": ("build", "continue", "end"),
    "per_phase+inter_phase": ("build", "continue", "between", "end"),
}
WHEN = ("build", "continue", "between", "end")


def profile(mode: str | None) -> dict:
    """The profile of a mode (a colony without a mode behaves as STANDARD)."""
    return PROFILES.get(mode or DEFAULT_MODE, PROFILES[DEFAULT_MODE])


def learning_now(mode: str | None, when: str, last_phase: bool = False) -> tuple:
    """(extract now?, reason) for a moment of the lifecycle. In LIGHTWEIGHT the end of the
    last phase is the project's end."""
    cadence = profile(mode)["learning"]
    moments = LEARNING_MOMENTS[cadence]
    if when in moments:
        return True, f"{cadence}: learnings are extracted at `{when}`"
    if last_phase and "end" in moments and when in ("build", "continue"):
        return True, f"{cadence}: the last phase ends the project, so its learnings are extracted now"
    return False, f"{cadence}: no extraction at `{when}` (only at {', '.join(moments)})"


def archivist_due(mode: str | None, phase: int | None) -> tuple:
    """(run the archivist now?, reason) after `phase` completed."""
    every = profile(mode).get("archivist_every")
    if not every:
        return False, f"{mode or DEFAULT_MODE} mode has no archivist"
    if not phase or phase % every:
        return False, f"the archivist runs after every {every}th phase (phase {phase or 0} is not one)"
    return True, f"phase {phase} is a multiple of {every}: the archivist checks the colony's hygiene"


def describe(mode: str | None, *, when: str | None = None, phase: int | None = None, last_phase: bool = False) -> dict:
    """Every row of the mode table plus the booleans a prompt branches on."""

    name = mode if mode in PROFILES else DEFAULT_MODE
    out = copy.deepcopy(PROFILES[name])
    depth = out["watcher"]
    out["mode"] = name
    out["watcher_checks"] = list(WATCHER_CHECKS[depth])
    out["learning_moments"] = list(LEARNING_MOMENTS[out["learning"]])
    out["spawn_watcher"] = depth != "syntax"
    out["helper_syntax_check"] = depth == "syntax"
    out["execution_check"] = "execution" in WATCHER_CHECKS[depth]
    out["spawn_reviewer"] = bool(out["reviewer"])
    out["activity_log_enabled"] = out["activity_log"] != "off"
    out["detailed_activity"] = out["activity_log"] == "detailed"
    out["auto_emit"] = {t: t in out["auto_signals"] for t in SIGNAL_TYPES}
    if when is not None:
        now, why = learning_now(name, when, last_phase)
        out["when"] = when
        out["extract_learnings_now"] = now
        out["learning_reason"] = why
    else:
        out["extract_learnings_now"] = None
        out["learning_reason"] = "pass `when` (build, continue, between, end) to know"
    out["phase"] = phase
    out["run_archivist"], out["archivist_reason"] = archivist_due(name, phase)
    return out


def render(info: dict) -> str:
    """The mode table for one mode, as text."""
    lo, hi = info["phase_count"]
    wlo, whi = info["workers_per_wave_range"]
    lim = info["spawn_limits"]
    watcher = {
        "syntax": "syntax check of changed files, run by the helper (no watcher ant)",
        "full": "watcher ant: syntax, imports, tests",
        "full+execution": "watcher ant: syntax, imports, tests, and a launch/execution check",
    }[info["watcher"]]
    learning = {
        "project_end": "at the end of the project only",
        "per_phase": "per phase",
        "per_phase+inter_phase": "per phase, plus between phases",
    }[info["learning"]]
    activity = {"off": "off", "on": "on", "detailed": "on, detailed"}[info["activity_log"]]
    lines = [
        f"MODE {info['mode']}",
        f"  Phases planned       {lo}–{hi}",
        f"  Workers per wave     {wlo}–{whi} (at most {info['workers_per_wave']})",
        f"  Spawn limits         depth < {lim['max_depth']}, {lim['max_workers']} running workers",
        f"  Reviewer             {'after each multi-worker wave' if info['reviewer'] else 'none'}",
        f"  Watcher              {watcher}",
        f"  Learning extraction  {learning}",
        f"  Auto-emitted signals {', '.join(info['auto_signals'])}",
        f"  Activity log         {activity}",
        f"  Code loop            {'every build' if info['code_loop'] else 'when asked (build-start --loop)'}",
        "  Archivist            " + (f"after every {info['archivist_every']}th phase" if info["archivist_every"] else "none"),
        "  Autopilot approval   "
        + ("/ant:run --auto-approve may approve wave plans" if info["auto_approve"] else "the user approves every wave plan"),
        "  Builders             "
        + ("each in its own git worktree, merged back in order" if info["isolation"] else "in the shared working tree"),
    ]
    if info.get("when"):
        lines.append(f"  Learnings now ({info['when']}): {'yes' if info['extract_learnings_now'] else 'no'} — {info['learning_reason']}")
    if info.get("phase"):
        lines.append(f"  Archivist after phase {info['phase']}: {'yes' if info['run_archivist'] else 'no'}")
    return "\n".join(lines)
