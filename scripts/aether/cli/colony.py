"""Colony lifecycle subcommands."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command


@command("colony-init")
@click.argument("goal", type=CONTENT)
@click.option("--mode", type=click.Choice(["LIGHTWEIGHT", "STANDARD", "FULL"], case_sensitive=False),
              help="Colony mode (default STANDARD).")
@click.option("--force", is_flag=True, help="Start over even if a colony is active here.")
@click.option("--detect", is_flag=True,
              help="Choose the mode by complexity detection (see complexity-detect) instead of STANDARD.")
def colony_init(goal, mode, force, detect):
    """Start a colony with GOAL (or `-` to read it from stdin): creates every state file,
    a session id, the mode and the INIT pheromone.

    Promoted global learnings (seen in 3+ projects) join as FEEDBACK signals (strength 0.3,
    source auto:global), the 5 strongest at most; the result's `global_learnings_injected`
    counts them. With --detect the result also carries `complexity` (mode, signals, reasons).
    """
    from aether import colony

    return colony.init(goal, mode.upper() if mode else None, force, detect=detect)


@command("complexity-detect")
@click.argument("path", type=TEXT, required=False)
@click.option("--goal", type=CONTENT, help="The goal to judge (or `-` for stdin); default: the colony's goal.")
@click.option("--apply", "apply_", is_flag=True,
              help="Store the mode in COLONY_STATE and record the choice as a decision in "
                   "memory.json (needs a READY or PLANNING colony).")
def complexity_detect(path, goal, apply_):
    """Which mode suits the project at PATH (default: the project root), from its files and goal.

    \b
    LIGHTWEIGHT if ALL: one language at most, < 20 source files, no tests, no CI, goal < 50 words.
    FULL if ANY: several languages, > 50 source files, tests, CI, goal > 50 words or naming a
                 complex domain (authentication, database, API, payments, …).
    STANDARD otherwise.

    Dependencies, virtualenvs (any folder holding pyvenv.cfg), build outputs and tool
    folders (.git, .aether, .claude, node_modules, vendor, dist, build, target, …) are not
    counted; the walk stops at 5000 files (then `capped` is true). Result:
    {mode, signals:{source_files, files, languages, language_files, max_depth, has_tests,
    test_markers, has_ci, ci_markers, goal_words, complex_goal_terms, capped, …}, reasons}.
    """
    from aether import complexity, paths

    root = complexity.check_root(path if path else paths.project_root())
    tree = complexity.scan(root)
    if apply_:
        return complexity.apply(tree, goal)
    if goal is None:
        from aether import store

        goal = store.read("colony").get("goal")
    return complexity.assess(tree, goal)
