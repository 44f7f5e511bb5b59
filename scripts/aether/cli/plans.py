"""plan-start and plan-load."""

from __future__ import annotations

import click

from aether.cli.common import FILE_OR_STDIN, command

PHASE = click.IntRange(min=1)


@command("plan-start", text=True)
def plan_start():
    """Enter PLANNING (from READY, or COMPLETED to extend the plan; again from PLANNING is fine).

    Returns what the planner needs: goal, mode, the phase-count range of the mode, the phases
    already completed, the pheromone block, and whether to suggest /ant:focus first."""
    from aether.steps import plans

    return plans.start()


@command("plan-load", text=True)
@click.argument("plan", type=FILE_OR_STDIN, required=False)
@click.option("--force", is_flag=True, help="Replace a plan that has completed phases (those whose id is in the new plan are kept).")
@click.option("--from-loop", "loop_id", help="Load the plan loop's latest stored draft instead of PLAN.")
@click.option("--iteration", type=click.IntRange(min=1), help="With --from-loop: that iteration's draft.")
def plan_load(plan, force, loop_id, iteration):
    """Validate a PROJECT_PLAN (a file, or `-` for stdin) and store it; the colony becomes READY.

    Every defect is reported at once in `defects` ([{path, problem}]). Statuses start pending.
    A phase count outside the mode's range is a warning, not an error. `--from-loop LOOP_ID`
    loads the plan loop's latest draft (plan-draft-store) instead; the answer then has
    `from_loop: {loop_id, iteration}`."""
    from aether.core.exceptions import input_error
    from aether.steps import plans

    if (plan is None) == (loop_id is None):
        raise input_error("usage_error", "give the plan (a file or `-`) or --from-loop LOOP_ID, not both")
    if iteration is not None and loop_id is None:
        raise input_error("usage_error", "--iteration goes with --from-loop")
    if loop_id is None:
        return plans.load(plan, force)
    from aether.steps import drafts

    draft, number = drafts.plan_of(loop_id.strip(), iteration)
    result = plans.load(draft, force)
    result["from_loop"] = {"loop_id": loop_id.strip(), "iteration": number}
    return result
