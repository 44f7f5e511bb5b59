"""signals-suggest, continue-start and hygiene-check: the lifecycle answers around a phase."""

from __future__ import annotations

import click

from aether.cli.common import command
from aether.colony import between_phases as lifecycle


def _size(n: int) -> str:
    return f"{n // 1_000_000} MB" if n % 1_000_000 == 0 else f"{n // 1000} KB"


@command("signals-suggest", text=True)
def signals_suggest():
    """Should the Queen suggest /ant:focus or /ant:redirect before planning? `suggest` is true
    when the colony is PLANNING, or READY without a plan, and no FOCUS or REDIRECT signal is
    active. Answers {suggest, reason, state, active: {FOCUS, REDIRECT}, commands, text}."""
    return lifecycle.suggest_signals()


@command("continue-start", text=True)
def continue_start():
    """What /ant:continue does now (READY or COMPLETED colony; read-only): the current phase's
    verification (completed? failed, skipped and flagged tasks, watcher or syntax check, code
    loop), whether to extract learnings now (the mode's cadence; never twice per phase; with the
    categories learning-promote takes), whether the archivist runs (the mode's cadence; its
    brief), whether advancing completes the colony, the mode profile, recovery options for a
    phase not completed, and `next` steps."""
    return lifecycle.continue_start()


@command(
    "hygiene-check",
    text=True,
    help=f"""The archivist's answers: whether it runs after PHASE (the mode's cadence), the
    state files past their size limit (JSON over {_size(lifecycle.STATE_FILE_LIMIT_BYTES)}, memory over its token budget,
    activity logs over {_size(lifecycle.LOG_FILE_LIMIT_BYTES)}) with what to do, and the brief for the architect ant
    (report only).""",
)
@click.option("--phase", type=click.IntRange(min=1), help="After this phase (default: the current one).")
def hygiene_check(phase):
    return lifecycle.hygiene(phase)
