"""plan-waves and wave-conflicts."""

from __future__ import annotations

import click

from aether.cli.common import FILE_OR_STDIN, command
from aether.steps import waves

# `-1` reaches the argument's own check (a clear error) instead of being read as an option
NEGATIVE_OK = {"ignore_unknown_options": True}


@command(
    "plan-waves",
    text=True,
    help=f"""Turn the Phase Lead's assignment PLAN (a file or `-`) into waves and store the spawn tree.

    \b
    PLAN: {{"phase": 2, "workers": [{{"id": "a", "caste": "builder", "tasks": ["2.1"],
           "writes": ["src/x.py"], "reads": [], "depends_on": []}}, …]}}

    Same-file writers of a wave are merged; dependencies become wave order (a cycle is an
    error); waves hold at most the mode's workers per wave. `approval.required` says whether
    the user must approve (then show `text`, and run `aether plan-waves --approve`, or send a
    revised plan: at most {waves.MAX_PLAN_REVISIONS} revisions).""",
)
@click.argument("plan", type=FILE_OR_STDIN, required=False)
@click.option("--approve", is_flag=True, help="The user approved the plan that awaits approval.")
def plan_waves(plan, approve):
    from aether.core.exceptions import input_error

    if approve:
        if plan is not None:
            raise input_error("usage_error", "--approve takes no plan")
        return waves.approve()
    if plan is None:
        raise input_error("usage_error", "give the assignment plan (a file or `-`), or --approve")
    return waves.plan(plan)


@command("wave-conflicts", text=True, context_settings=NEGATIVE_OK)
@click.argument("wave", type=click.IntRange(min=1))
def wave_conflicts(wave):
    """Files that two workers of WAVE report as created or modified (a retry or rebuild of a
    worker counts as that worker)."""
    return waves.conflicts(wave)
