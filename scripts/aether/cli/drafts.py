"""plan-draft-store and plan-draft-get: the plan loop's drafts."""

from __future__ import annotations

import click

from aether.cli.common import FILE_OR_STDIN, TEXT, command


@command("plan-draft-store", text=True)
@click.argument("loop_id", type=TEXT)
@click.argument("draft", type=FILE_OR_STDIN)
def plan_draft_store(loop_id, draft):
    """Validate the planner's DRAFT (a PROJECT_PLAN as JSON, or an answer holding a ```json
    block; a file or `-`) and keep it for the plan loop's iteration about to be scored (a second
    draft for that iteration replaces the first). Defects come back like plan-load's."""
    from aether.steps import drafts

    return drafts.store_draft(loop_id.strip(), draft)


@command("plan-draft-get", text=True)
@click.argument("loop_id", type=TEXT)
@click.option("--iteration", type=click.IntRange(min=1), help="That iteration's draft (default: the latest).")
def plan_draft_get(loop_id, iteration):
    """The plan loop's latest draft (or --iteration N's): `plan` as JSON and `text` as an
    outline for the critic. `plan-load --from-loop LOOP_ID` stores it as the colony's plan."""
    from aether.steps import drafts

    return drafts.get(loop_id.strip(), iteration)
