"""status and phase: the colony and its phases at a glance."""

from __future__ import annotations

import click

from aether.cli.common import command

PHASE = click.IntRange(min=1)


@command("phase", display=True)
@click.argument("which", required=False, metavar="[N|list]")
def phase_show(which):
    """Show phase N (tasks with status, success criteria), or `list` for every phase.
    Without an argument: the current phase (the list before the first build)."""
    from aether.colony import status

    return status.phase_view(which)


@command("status", display=True)
@click.option(
    "--timeline",
    is_flag=True,
    help="Draw the newest run as a timeline: each ant's start and end by wave, its model and tokens, the merges.",
)
@click.option("--svg", is_flag=True, help="With --timeline: also write it as a picture, .aether/reports/timeline-<run>.svg and .html.")
def status(timeline, svg):
    """The colony at a glance: goal, state, mode, phase progress, active signals, the spawn
    tree of the last build, recent events, open errors and the next step. `--timeline` shows
    where the newest run's time went instead."""
    if svg and not timeline:
        raise click.UsageError("--svg draws the timeline: give --timeline too")
    if timeline:
        from aether.colony import timeline as timeline_mod

        return timeline_mod.view(picture=svg)
    from aether.colony import status as status_mod

    return status_mod.overview()
