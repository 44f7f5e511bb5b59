"""build-start, build-finish, build-abort and phase-advance."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, FILE_OR_STDIN, command
from aether.rules import contracts

PHASE = click.IntRange(min=1)


@command("build-start", text=True)
@click.argument("phase", type=PHASE)
@click.option("--resume", is_flag=True,
              help="Rebuild a failed phase, or take over a build interrupted in EXECUTING.")
@click.option("--approve", is_flag=True,
              help="The user approves the wave plan of PHASE's running build (it awaits approval): "
                   "answers that plan, as `plan-waves --approve` does.")
@click.option("--loop", is_flag=True,
              help="Bind a code refinement loop to this build (FULL mode always does).")
def build_start(phase, resume, approve, loop):
    """Start building PHASE: marks it in progress, EXECUTING, makes a git checkpoint (a ref
    under refs/aether/checkpoints/, never a commit on a branch), and returns the phase, its
    tasks, the mode profile and the pheromone block.

    A caste's own view of the signals: `aether pheromone-render --caste <caste>`.
    `/ant:build N --approve` reaches `--approve`: the build goes on with its approved waves.
    In FULL mode, or with --loop, a code loop is bound to the build (`code_loop`): score the
    verification with `aether loop-score - --loop LOOP_ID` after the waves."""
    from aether.steps import builds

    if approve and resume:
        from aether.core.exceptions import input_error

        raise input_error("invalid_argument", "--approve and --resume exclude each other: --approve goes on "
                                              "with the planned waves, --resume plans the build again")
    if approve:
        return builds.approve(phase)
    return builds.start(phase, resume, loop)


@command("build-finish", text=True)
@click.argument("phase", type=PHASE)
@click.option("--results", "results", type=FILE_OR_STDIN,
              help="The build results as JSON (a file, or `-` for stdin): see docs/contracts.md.")
@click.option("--watcher", "watcher", type=FILE_OR_STDIN,
              help="Instead of --results: the watcher's whole answer (a file or `-`); its ```json block is the "
                   "watcher report and each task's outcome is read from the spawn tree.")
def build_finish(phase, results, watcher):
    """Record the outcome of PHASE's build: task and phase status, errors, the event, spawn
    outcomes per caste, and the automatic FEEDBACK/REDIRECT signals; returns the summary.

    Without --results the tasks' outcomes come from the spawn tree: `--watcher -` takes the
    watcher's answer as it is; with neither option there is no watcher report (a mode whose
    watcher is a syntax check: the helper checks the build's files itself)."""
    from aether.steps import builds

    if results is not None and watcher is not None:
        from aether.core.exceptions import input_error

        raise input_error("invalid_argument", "give --results or --watcher, not both: --watcher is the watcher's "
                                              "answer alone, the tasks then come from the spawn tree")
    if watcher is not None:

        report = contracts.extract_json(watcher, "the watcher's answer")
        results = {"watcher": report}
    result = builds.finish(phase, results if results is not None else {})
    if isinstance(result.get("learnings"), dict):
        from aether.colony import between_phases as lifecycle

        result["learnings"].update(lifecycle.promotion())
    return result


@command("build-abort", text=True)
@click.argument("phase", type=PHASE)
@click.option("--reason", type=CONTENT, required=True, help="Why (text, or `-` for stdin).")
def build_abort(phase, reason):
    """Give up the running build of PHASE: the phase is marked failed and the colony is READY; a
    late answer of one of its ants is kept and changes nothing. Rebuild it later with
    `/ant:build PHASE`; `abort-report PHASE` writes the report."""
    from aether.colony import build_drive

    return build_drive.abort(phase, reason)


@command("phase-advance", text=True)
def phase_advance():
    """Move to the next phase (the current one must be completed or skipped); past the last
    phase the colony is COMPLETED.

    current_phase moves forward only through this step of the helper: phase-advance takes it,
    build-start takes it once to enter the first phase (from 0), and phase-skip takes it past
    the phase it skips. plan-load may move it back when a replaced plan drops or reopens
    phases."""
    from aether.steps import builds

    return builds.phase_advance()
