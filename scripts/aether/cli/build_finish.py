"""build-finish and build-abort (steps/build_finish.py)."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, FILE_OR_STDIN, command
from aether.rules import contracts

PHASE = click.IntRange(min=1)


@command("build-finish", text=True)
@click.argument("phase", type=PHASE)
@click.option(
    "--results", "results", type=FILE_OR_STDIN, help="The build results as JSON (a file, or `-` for stdin): see docs/contracts.md."
)
@click.option(
    "--watcher",
    "watcher",
    type=FILE_OR_STDIN,
    help="Instead of --results: the watcher's whole answer (a file or `-`); its ```json block is the "
    "watcher report and each task's outcome is read from the spawn tree.",
)
def build_finish(phase, results, watcher):
    """Record the outcome of PHASE's build: task and phase status, errors, the event, spawn
    outcomes per caste, and the automatic FEEDBACK/REDIRECT signals; returns the summary.

    Without --results the tasks' outcomes come from the spawn tree: `--watcher -` takes the
    watcher's answer as it is; with neither option there is no watcher report (a mode whose
    watcher is a syntax check: the helper checks the build's files itself)."""

    if results is not None and watcher is not None:
        from aether.core.exceptions import input_error

        raise input_error(
            "invalid_argument",
            "give --results or --watcher, not both: --watcher is the watcher's answer alone, the tasks then come from the spawn tree",
        )
    if watcher is not None:
        report = contracts.extract_json(watcher, "the watcher's answer")
        results = {"watcher": report}
    from aether.steps import build_finish as finish

    result = finish.finish(phase, results if results is not None else {})
    if isinstance(result.get("learnings"), dict):
        from aether.colony import between_phases as lifecycle

        result["learnings"].update(lifecycle.promotion())
    return result


@command("build-abort", text=True)
@click.argument("phase", type=PHASE)
@click.option("--reason", type=CONTENT, required=True, help="Why (text, or `-` for stdin).")
def build_abort(phase, reason):
    """Give up the running build of PHASE: the phase is marked failed and the colony is READY; a
    late answer of one of its ants is kept and changes nothing, and any work in its builders'
    worktrees is kept on branches (named, with the commands to apply it). Run again after a kill,
    it finishes what the first left. Rebuild it later with `/ant:build PHASE`; `abort-report
    PHASE` writes the report."""
    from aether.colony import build_drive

    return build_drive.abort(phase, reason)
