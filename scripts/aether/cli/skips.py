"""task-skip and phase-skip."""

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
    from aether.steps import skips

    return skips.task_skip(task, reason, force)


@command("phase-skip", text=True)
@click.argument("phase", type=click.IntRange(min=1))
@click.option("--reason", type=CONTENT, required=True, help="Why (text, or `-` for stdin).")
def phase_skip(phase, reason):
    """Skip PHASE (the one next in line) and move on to the next phase; past the last one the
    colony is COMPLETED. Refused with `phase_required` (and `reasons`) when the phase is on a
    success criterion's path: one of its open tasks maps to a criterion, or a later task
    depends on one of its tasks."""
    from aether.steps import skips

    return skips.phase_skip(phase, reason)
