"""research-plan and research-collect: the scouts' fan-out before planning."""

from __future__ import annotations

import click

from aether.cli.common import FILE_OR_STDIN, command
from aether.colony import research


@command(
    "research-plan",
    text=True,
    help=f"""Turn research requirements into scout tasks, each with a brief path under
    .aether/{research.RESEARCH_DIR}/<slug>.md, to spawn all in ONE message.

    \b
    A list may be bulleted (- * + •), numbered (1. 1)) or headed (### …); nested items become
    the requirement's details; a section whose heading mentions "research" is used when present.
    Derived requirements: one per clause (sentences cut at , and ;) that names a technology or
    a concern (auth, database, performance, …). At most {research.MAX_TASKS} tasks. Each task's `text` is the
    scout's prompt (subagent_type ant:scout). Input longer than
    {research.MAX_INPUT:,} characters is refused (`content_too_long`).""",
)
@click.argument("source_text", metavar="[FILE|-]", type=FILE_OR_STDIN, required=False)
@click.option(
    "--from",
    "source",
    type=click.Choice(research.SOURCES),
    default="list",
    show_default=True,
    help="list: FILE is a markdown list of requirements; goal: derive them from the colony's goal; "
    "colonize: derive them from the colonizer's findings in FILE.",
)
def research_plan(source_text, source):
    return research.plan(source_text, source)


@command(
    "research-collect",
    text=True,
    help=f"""Record the brief paths the scouts returned (their answers as text, a JSON list, or
    {{task: path}}); without input, look where each brief was asked to be written. Each brief
    must lie inside .aether/{research.RESEARCH_DIR}/ and be non-empty. Answers the `paths` for the planner
    (paths, not contents), `missing`, `rejected`, `complete`, and `text`: the planner's block.
    Answers longer than {research.MAX_INPUT:,} characters are refused (`content_too_long`).""",
)
@click.argument("answers", metavar="[FILE|-]", type=FILE_OR_STDIN, required=False)
def research_collect(answers):
    return research.collect(answers)
