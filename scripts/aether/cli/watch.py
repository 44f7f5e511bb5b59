"""watch."""

from __future__ import annotations

import sys

import click

from aether.cli.common import command


@command("watch", display=True)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1, max=60),
    default=0.5,
    show_default=True,
    help="Seconds between checks for a changed state file.",
)
def watch(interval):
    """A live view of the colony for a second terminal: status, the running spawns with their
    elapsed time, recent failures and decisions, redrawn when a state file changes; Ctrl-C
    quits. Without a terminal (a pipe, a file) it prints one frame and ends."""
    from aether.colony import watch as watch_mod

    if not sys.stdout.isatty():
        return {"text": watch_mod.frame()}
    watch_mod.run(sys.stdout, interval)
    return {"text": ""}
