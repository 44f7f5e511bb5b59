"""spawn-* subcommands: limits, starting and finishing spawns, SPAWN REQUEST blocks."""

from __future__ import annotations

import click

from aether.cli.common import FILE_OR_STDIN, TEXT, command
from aether.rules import spawn_tree

# `-1` reaches the argument's own check (a clear error) instead of being read as an option
NEGATIVE_OK = {"ignore_unknown_options": True}


@command("spawn-check", context_settings=NEGATIVE_OK)
@click.argument("depth", type=click.IntRange(min=1), default=1, required=False)
def spawn_check(depth):
    """May an ant be spawned at DEPTH (default 1) now?

    Passes when DEPTH is below the mode's max depth and fewer than its max workers are
    running (the running nodes of the spawn tree). Answers
    {pass, active_workers, max_workers, current_depth, max_depth[, reason]}.
    """
    from aether.steps import spawning

    return spawning.check(depth)


@command("spawn-start", text=True)
@click.argument("spawn_id", metavar="ID", type=TEXT)
def spawn_start(spawn_id):
    """Mark spawn ID (from plan-waves, failure-decide, spawn-requests, review-needed or
    review-decide) running and return its brief.

    Refuses past the mode's limits (max depth, max running workers), before the plan is
    approved, before earlier waves finished, and before a re-run's sub-spawns finished.
    Pass `text` to the Agent call as the prompt, with `subagent_type`.
    """
    from aether.steps import spawning

    return spawning.start(spawn_id.strip())


@command("spawn-finish")
@click.argument("spawn_id", metavar="ID", type=TEXT)
@click.argument("result", type=FILE_OR_STDIN)
def spawn_finish(spawn_id, result):
    """Record the RESULT (a file or `-`) of running spawn ID: its JSON result block (or the
    whole answer holding a ```json block).

    Claimed files_created/files_modified are checked: each must exist inside the project and,
    in a git repository, be changed (git status) or touched since the spawn started. A claim
    that does not hold makes the spawn failed. A failed spawn keeps its failure report for
    `aether failure-decide --worker ID`.
    """
    from aether.steps import spawning

    return spawning.finish(spawn_id.strip(), result)


@command(
    "spawn-requests",
    help=f"""Read the SPAWN REQUEST blocks in OUTPUT (the worker's answer: a file or `-`).

    Each request needs a known caste and a reason; it is honoured when its depth stays
    below the max depth and the caps hold ({spawn_tree.MAX_SUB_SPAWNS_PER_WORKER} per worker,
    {spawn_tree.MAX_SUB_SPAWNS_PER_WAVE} per wave). Honoured
    requests become planned spawns (`queue`); a blocking one also plans a re-run of PARENT_ID
    after it (`reruns`). Ignored requests are recorded with the reason.""",
)
@click.argument("parent_id", metavar="PARENT_ID", type=TEXT)
@click.argument("output", type=FILE_OR_STDIN)
def spawn_requests(parent_id, output):
    from aether.steps import spawning

    return spawning.requests(parent_id.strip(), output)
