"""review-needed and review-decide."""

from __future__ import annotations

import click

from aether.cli.common import FILE_OR_STDIN, command
from aether.rules import review as review_rules

# `-1` reaches the argument's own check (a clear error) instead of being read as an option
NEGATIVE_OK = {"ignore_unknown_options": True}


@command("review-needed", text=True, context_settings=NEGATIVE_OK)
@click.argument("wave", type=click.IntRange(min=1))
def review_needed(wave):
    """Does WAVE get an advisory reviewer? No when the mode has none or the wave had a single
    worker (`skip` says which). Yes plans the reviewer spawn (`reviewer.id`: spawn-start it)."""
    from aether.steps import review

    return review.needed(wave)


@command(
    "review-decide",
    text=True,
    context_settings=NEGATIVE_OK,
    help=f"""Decide on the reviewer's FINDINGS
    (a file or `-`) for WAVE: `rebuild` (a CRITICAL
    finding, while the wave was rebuilt fewer than {review_rules.MAX_WAVE_REBUILDS} times; `rebuild` lists the spawns to
    start) or `continue` (with a lasting warning if CRITICAL findings remain).

    \b
    FINDINGS: {{"findings": [{{"severity": "{"|".join(review_rules.SEVERITIES)}", "description": "…",
               "location": "file:line", "recommendation": "…"}}], "summary": "…"}}""",
)
@click.argument("wave", type=click.IntRange(min=1))
@click.argument("findings", type=FILE_OR_STDIN)
def review_decide(wave, findings):
    from aether.steps import review

    return review.decide(wave, findings)
