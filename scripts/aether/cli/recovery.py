"""checkpoint-list, checkpoint-restore and friction-summary."""

from __future__ import annotations

import click

from aether.cli.common import TEXT, command


@command("checkpoint-list", text=True)
@click.option("--phase", type=click.IntRange(min=0), help="Only this phase's checkpoints.")
def checkpoint_list(phase):
    """The recorded git checkpoints (refs made by build-start and code loop iterations), newest first."""
    from aether.steps import recovery

    return recovery.checkpoint_list(phase)


@command("checkpoint-restore", text=True)
@click.argument("ref", type=TEXT, required=False)
@click.option("--phase", type=click.IntRange(min=1), help="The checkpoint the phase's latest build started from.")
@click.option(
    "--force", is_flag=True, help="Restore even over changes no checkpoint or commit holds (they are saved as a checkpoint first)."
)
def checkpoint_restore(ref, phase, force):
    """Put a checkpoint's files back in the working tree (HEAD, the index, branches and colony
    state untouched; files created since are removed). Restoring the start of a phase's build
    sets that phase's completed tasks back to pending. Refused while a build runs."""
    from aether.steps import recovery

    return recovery.checkpoint_restore(ref, phase, force)


@command("friction-summary", text=True)
def friction_summary():
    """Friction records (FR-NNN: tasks a retry or debugger recovered) read back: recurring root
    causes first, then the latest few; `text` is the block for the planner's brief."""
    from aether.steps import recovery

    return recovery.friction_summary()
