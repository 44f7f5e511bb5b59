"""colony-init."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, command
from aether.rules import modes
from aether.state import learning

MODE = click.Choice(tuple(modes.PROFILES), case_sensitive=False)


@command(
    "colony-init",
    help=f"""Start a colony with GOAL (or `-` to read it from stdin): creates every state file,
    a session id, the mode and the INIT pheromone.

    Promoted global learnings (seen in {learning.PROMOTE_AT}+ projects) join as FEEDBACK signals (strength
    {learning.INIT_SIGNAL_STRENGTH:g}, source {learning.INIT_SIGNAL_SOURCE}), the {learning.INIT_SIGNAL_LIMIT}
    strongest at most; the result's
    `global_learnings_injected` counts them. With --detect the result also carries `complexity`
    (mode, signals, reasons).""",
)
@click.argument("goal", type=CONTENT)
@click.option("--mode", type=MODE, help=f"Colony mode (default {modes.DEFAULT_MODE}).")
@click.option("--force", is_flag=True, help="Start over even if a colony is active here.")
@click.option(
    "--detect", is_flag=True, help=f"Choose the mode by complexity detection (see complexity-detect) instead of {modes.DEFAULT_MODE}."
)
def colony_init(goal, mode, force, detect):
    from aether.colony import colony_init as colony

    return colony.init(goal, mode.upper() if mode else None, force, detect=detect)
