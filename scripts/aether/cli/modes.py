"""mode-profile: what the colony's mode means, row by row."""

from __future__ import annotations

import click

from aether.cli.common import command
from aether.rules import modes


@command("mode-profile", text=True)
@click.option("--mode", type=click.Choice(tuple(modes.PROFILES), case_sensitive=False), help="This mode instead of the colony's.")
@click.option("--when", type=click.Choice(modes.WHEN), help="A moment of the lifecycle: answers extract_learnings_now for it.")
@click.option(
    "--phase", type=click.IntRange(min=1), help="The phase concerned (default: the current one): archivist and last-phase answers."
)
def mode_profile(mode, when, phase):
    """What the mode means (the colony's, or --mode): phase count, workers per wave, spawn
    limits, reviewer, watcher depth, learning cadence, auto-emitted signals, activity log,
    code loop, archivist — plus booleans to branch on: spawn_watcher, helper_syntax_check,
    spawn_reviewer, activity_log_enabled, detailed_activity, extract_learnings_now (with
    --when), run_archivist (for --phase or the current phase), auto_emit.{TYPE}."""
    from aether.colony import modes as colony_modes

    return colony_modes.answer(mode, when, phase)
