"""failure-decide, friction-add and abort-report."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, FILE_OR_STDIN, TEXT, command

# `-1` reaches the argument's own check (a clear error) instead of being read as an option
NEGATIVE_OK = {"ignore_unknown_options": True}


@command("failure-decide", text=True)
@click.argument("report", type=FILE_OR_STDIN, required=False)
@click.option("--worker", type=TEXT, help="The failed spawn; without REPORT its recorded failure is used.")
@click.option(
    "--maps-to-criterion/--supporting",
    "maps",
    default=None,
    help="Whether the task maps to a phase success criterion (decides flag vs skip).",
)
def failure_decide(report, worker, maps):
    """One action for a failed task: retry, debug, flag, skip, abort_wave or abort_phase.

    REPORT (a file or `-`): {"task", "caste", "error", "root_cause", "suggested_fix",
    "confidence" (0–100), "fix_scope" ("contained" | "other_files"), "files", "category",
    "hypotheses"}. Usually: `aether failure-decide --worker w3` after spawn-finish recorded
    the failure. The phase's failure history is kept by the helper. retry/debug plan the next
    spawn (`next.spawn`: run spawn-start on it).
    """
    from aether.steps import failures

    return failures.failure_decide(report, worker.strip() if worker else None, maps)


@command("friction-add", text=True)
@click.argument("task", type=TEXT)
@click.argument("resolution", type=CONTENT, required=False)
@click.option("--pattern", type=TEXT, help="What the recovery suggests about a larger issue.")
def friction_add(task, resolution, pattern):
    """Record the friction record (FR-NNN) of TASK, which a retry or debugger recovered.

    spawn-finish records one by itself when a retry or debugger completes; this adds or
    completes it (RESOLUTION: what fixed it, or `-` for stdin).
    """
    from aether.steps import failures

    return failures.friction_add(task, resolution, pattern)


@command("abort-report", display=True, context_settings=NEGATIVE_OK)
@click.argument("phase", type=click.IntRange(min=0))
def abort_report(phase):
    """The report of PHASE's abort: reason, failure details, hypotheses, suggested fix with
    its confidence, recovery options, files touched and the last good checkpoint. Creates
    the abort tag (aether/phase-N-aborted) once, inside a git repository."""
    from aether.steps import failures

    return failures.abort_report(phase)
