"""evidence."""

from __future__ import annotations

import click

from aether.cli.common import TEXT, command


@command("evidence", display=True)
@click.argument("spawn", required=False, type=TEXT)
def evidence_cmd(spawn):
    """What the colony's ants really ran and wrote, as Claude Code reported it: without SPAWN, the
    latest build or run's ants with their calls counted and the checks' verdicts; with SPAWN (a
    spawn id such as `w1`, or a ref `b-1a2b/w1`), each of its calls — the command or file, its exit
    status, its duration and the end of its output."""
    from aether.steps import checks

    return checks.report(spawn)
