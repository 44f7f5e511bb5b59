"""phase-advance (steps/phase_advance.py)."""

from __future__ import annotations

import click

from aether.cli.common import command

PHASE = click.IntRange(min=1)


@command("phase-advance", text=True)
def phase_advance():
    """Move to the next phase (the current one must be completed or skipped); past the last
    phase the colony is COMPLETED.

    current_phase moves forward only through this step of the helper: phase-advance takes it,
    build-start takes it once to enter the first phase (from 0), and phase-skip takes it past
    the phase it skips. plan-load may move it back when a replaced plan drops or reopens
    phases."""

    from aether.steps import phase_advance as pointer

    return pointer.phase_advance()
