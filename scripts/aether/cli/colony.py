"""Colony lifecycle subcommands."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, command


@command("colony-init")
@click.argument("goal", type=CONTENT)
@click.option("--mode", type=click.Choice(["LIGHTWEIGHT", "STANDARD", "FULL"], case_sensitive=False),
              help="Colony mode (default STANDARD).")
@click.option("--force", is_flag=True, help="Start over even if a colony is active here.")
def colony_init(goal, mode, force):
    """Start a colony with GOAL (or `-` to read it from stdin): creates every state file,
    a session id, the mode and the INIT pheromone."""
    from aether import colony

    return colony.init(goal, mode.upper() if mode else None, force)
