"""loop-present: what the user sees when a loop asks them."""

from __future__ import annotations

import click

from aether.cli.common import TEXT, command


@command("loop-present", display=True)
@click.argument("loop_id", type=TEXT)
def loop_present(loop_id):
    """What to show the user when a loop answered user_input: the state (type, iteration,
    current and previous score, threshold, why it stopped: cap or stagnation), the critic's key
    issues, the options with pros and cons (accept, another round with guidance, narrow the
    scope, stop) with the commands behind each, and a recommendation. Store the user's answer
    with `aether feedback-store LOOP_ID - --kind user`; the loop goes on."""
    from aether.steps import critique

    return critique.present(loop_id.strip())
