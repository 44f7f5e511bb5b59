"""complexity-detect."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command
from aether.colony import complexity as cx
from aether.rules import complexity, modes

MODE = click.Choice(tuple(modes.PROFILES), case_sensitive=False)


@command(
    "complexity-detect",
    help=f"""Which mode suits the project at PATH (default: the project root), from its files and goal.

    \b
    LIGHTWEIGHT if ALL: one language at most, < {complexity.LIGHTWEIGHT_MAX_FILES} source files, no tests, no CI,
                 goal < {complexity.GOAL_WORD_LIMIT} words.
    FULL if ANY: several languages, > {complexity.FULL_MIN_FILES} source files, tests, CI, goal > {complexity.GOAL_WORD_LIMIT} words or
                 naming a complex domain (authentication, database, API, payments, …).
    STANDARD otherwise.

    Dependencies, virtualenvs (any folder holding pyvenv.cfg), build outputs and tool
    folders (.git, node_modules, dist, …) are not counted; the walk stops at {cx.WALK_FILE_LIMIT} files
    (then `capped` is true). Result: {{mode, signals:{{source_files, files, languages,
    language_files, max_depth, has_tests, test_markers, has_ci, ci_markers, goal_words,
    complex_goal_terms, capped, …}}, reasons}}; with --apply also `colonizers`, the colonizer
    briefs /ant:colonize spawns.""",
)
@click.argument("path", type=TEXT, required=False)
@click.option("--goal", type=CONTENT, help="The goal to judge (or `-` for stdin); default: the colony's goal.")
@click.option(
    "--apply",
    "apply_",
    is_flag=True,
    help="Store the mode in COLONY_STATE and record the choice as a decision in memory.json (needs a READY or PLANNING colony).",
)
def complexity_detect(path, goal, apply_):
    from aether.core import paths

    root = cx.check_root(path if path else paths.project_root())
    tree = cx.scan(root)
    if apply_:
        return cx.apply(tree, goal)
    if goal is None:
        from aether.state import store

        goal = store.read("colony").get("goal")
    return complexity.assess(tree, goal)
