"""verify-brief: the final verification of a running build."""

from __future__ import annotations

import click

from aether.cli.common import command

PHASE = click.IntRange(min=1)


@command("verify-brief", text=True)
@click.argument("phase", type=PHASE)
def verify_brief(phase):
    """The final verification of PHASE's running build, after its waves: with `spawn` true,
    the watcher's brief (`text`, for an ant:watcher Agent call; with a code loop bound to the
    build its block also asks for `score_parts`, scored by `code_loop.command`). With `spawn`
    false (the mode's watcher is a syntax check) build-finish checks the syntax itself."""
    from aether.steps import verification

    return verification.brief(phase)
