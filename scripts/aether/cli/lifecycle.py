"""signals-suggest, continue-start and hygiene-check: the lifecycle answers around a phase."""

from __future__ import annotations

import click

from aether.cli.common import command


@command("signals-suggest", text=True)
def signals_suggest():
    """Should the Queen suggest /ant:focus or /ant:redirect before planning? `suggest` is true
    when the colony is PLANNING, or READY without a plan, and no FOCUS or REDIRECT signal is
    active. Answers {suggest, reason, state, active: {FOCUS, REDIRECT}, commands, text}."""
    from aether import lifecycle

    return lifecycle.suggest_signals()


@command("continue-start", text=True)
def continue_start():
    """What /ant:continue does now (READY or COMPLETED colony; read-only): the current phase's
    verification (completed? failed, skipped and flagged tasks, watcher or syntax check, code
    loop), whether to extract learnings now (the mode's cadence; never twice per phase), whether
    the archivist runs (FULL mode, every 3rd phase; its brief), whether advancing completes the
    colony, the mode profile, recovery options for a phase not completed, and `next` steps."""
    from aether import lifecycle

    return lifecycle.continue_start()


@command("hygiene-check", text=True)
@click.option("--phase", type=click.IntRange(min=1), help="After this phase (default: the current one).")
def hygiene_check(phase):
    """The archivist's answers: whether it runs after PHASE (FULL mode, every 3rd phase), the
    state files past their size limit (JSON over 256 KB, memory over its token budget, activity
    logs over 1 MB) with what to do, and the brief for the architect ant (report only)."""
    from aether import lifecycle

    return lifecycle.hygiene(phase)
