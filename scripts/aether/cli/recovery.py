"""Recovery after a failed or aborted build: task-skip, phase-skip, checkpoint-list,
checkpoint-restore, friction-summary."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command


@command("task-skip", text=True)
@click.argument("task", type=TEXT)
@click.option("--reason", type=CONTENT, required=True, help="Why (text, or `-` for stdin).")
@click.option("--force", is_flag=True, help="Skip it even if it maps to a success criterion or open tasks depend on it.")
def task_skip(task, reason, force):
    """Mark TASK skipped so its phase can finish without it (READY colony). Refused with
    `task_required` when the plan says it maps to a success criterion or an open task depends
    on it, unless --force. Then /ant:build N builds what is left (or only verifies)."""
    from aether.build import recovery

    return recovery.task_skip(task, reason, force)


@command("phase-skip", text=True)
@click.argument("phase", type=click.IntRange(min=1))
@click.option("--reason", type=CONTENT, required=True, help="Why (text, or `-` for stdin).")
def phase_skip(phase, reason):
    """Skip PHASE (the one next in line) and move on to the next phase; past the last one the
    colony is COMPLETED. Refused with `phase_required` (and `reasons`) when the phase is on a
    success criterion's path: one of its open tasks maps to a criterion, or a later task
    depends on one of its tasks."""
    from aether.build import recovery

    return recovery.phase_skip(phase, reason)


@command("checkpoint-list", text=True)
@click.option("--phase", type=click.IntRange(min=0), help="Only this phase's checkpoints.")
def checkpoint_list(phase):
    """The recorded git checkpoints (refs made by build-start and code loop iterations), newest first."""
    from aether.build import recovery

    return recovery.checkpoint_list(phase)


@command("checkpoint-restore", text=True)
@click.argument("ref", type=TEXT, required=False)
@click.option("--phase", type=click.IntRange(min=1), help="The checkpoint the phase's latest build started from.")
@click.option("--force", is_flag=True, help="Restore even over changes no checkpoint or commit holds "
                                            "(they are saved as a checkpoint first).")
def checkpoint_restore(ref, phase, force):
    """Put a checkpoint's files back in the working tree (HEAD, the index, branches and colony
    state untouched; files created since are removed). Restoring the start of a phase's build
    sets that phase's completed tasks back to pending. Refused while a build runs."""
    from aether.build import recovery

    return recovery.checkpoint_restore(ref, phase, force)


@command("friction-summary", text=True)
def friction_summary():
    """Friction records (FR-NNN: tasks a retry or debugger recovered) read back: recurring root
    causes first, then the latest few; `text` is the block for the planner's brief."""
    from aether.build import recovery

    return recovery.friction_summary()
