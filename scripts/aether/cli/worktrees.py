"""worktrees: the builders' worktrees and kept results — list them, clean what a crash left."""

from __future__ import annotations

import click

from aether.cli.common import TEXT, command


@command("worktrees", display=True)
@click.option(
    "--clean",
    is_flag=True,
    help="Remove the worktrees no running build uses (a crash, an ended build); any work in them is kept on a branch first.",
)
@click.option("--drop", metavar="BRANCH", type=TEXT, help="Let go of one kept result (its aether/… branch): the only way one goes.")
def worktrees(clean, drop):
    """The git worktrees and branches the colony made for isolated builders: those in use, those
    a crash or an ended build left over, and results that could not be merged (kept on
    `aether/<build>/<node>` branches, with the commands to look at and apply them). Never lists
    or touches a worktree or branch the colony did not make."""
    from aether.steps import worktrees

    if clean and drop:
        raise click.UsageError("--clean and --drop go separately")
    if clean or drop:
        return worktrees.clean(drop)
    return worktrees.listing()
