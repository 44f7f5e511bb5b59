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
def status():
    """The colony at a glance: goal, state, mode, phase progress, active signals, the spawn
    tree of the last build, recent events, open errors and the next step."""
    from aether.colony import status as status_mod

    return status_mod.overview()
