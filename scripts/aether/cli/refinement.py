"""The plan loop's drafts and the user-input presentation: plan-draft-store, plan-draft-get,
loop-present."""

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
    from aether.build import drafts

    return drafts.store_draft(loop_id.strip(), draft)


@command("plan-draft-get", text=True)
@click.argument("loop_id", type=TEXT)
@click.option("--iteration", type=click.IntRange(min=1), help="That iteration's draft (default: the latest).")
def plan_draft_get(loop_id, iteration):
    """The plan loop's latest draft (or --iteration N's): `plan` as JSON and `text` as an
    outline for the critic. `plan-load --from-loop LOOP_ID` stores it as the colony's plan."""
    from aether.build import drafts

    return drafts.get(loop_id.strip(), iteration)


@command("loop-present", display=True)
@click.argument("loop_id", type=TEXT)
def loop_present(loop_id):
    """What to show the user when a loop answered user_input: the state (type, iteration,
    current and previous score, threshold, why it stopped: cap or stagnation), the critic's key
    issues, the options with pros and cons (accept, another round with guidance, narrow the
    scope, stop) with the commands behind each, and a recommendation. Store the user's answer
    with `aether feedback-store LOOP_ID - --kind user`; the loop goes on."""
    from aether.build import critique

    return critique.present(loop_id.strip())
