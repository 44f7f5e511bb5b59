"""build-start (steps/build_start.py)."""

from __future__ import annotations

import click

from aether.cli.common import command

PHASE = click.IntRange(min=1)


@command("build-start", text=True)
@click.argument("phase", type=PHASE)
@click.option("--resume", is_flag=True, help="Rebuild a failed phase, or take over a build interrupted in EXECUTING.")
@click.option(
    "--approve",
    is_flag=True,
    help="The user approves the wave plan of PHASE's running build (it awaits approval): "
    "answers that plan, as `plan-waves --approve` does.",
)
@click.option("--loop", is_flag=True, help="Bind a code refinement loop to this build (FULL mode always does).")
def build_start(phase, resume, approve, loop):
    """Start building PHASE: marks it in progress, EXECUTING, makes a git checkpoint (a ref
    under refs/aether/checkpoints/, never a commit on a branch), and returns the phase, its
    tasks, the mode profile and the pheromone block.

    A caste's own view of the signals: `aether pheromone-render --caste <caste>`.
    `/ant:build N --approve` reaches `--approve`: the build goes on with its approved waves.
    In FULL mode, or with --loop, a code loop is bound to the build (`code_loop`): score the
    verification with `aether loop-score - --loop LOOP_ID` after the waves."""
    from aether.steps import build_start

    if approve and resume:
        from aether.core.exceptions import input_error

        raise input_error(
            "invalid_argument",
            "--approve and --resume exclude each other: --approve goes on with the planned waves, --resume plans the build again",
        )
    if approve:
        return build_start.approve(phase)
    return build_start.start(phase, resume, loop)
