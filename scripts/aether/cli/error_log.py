"""errors.json subcommands: error-add, error-pattern-check, error-summary."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command
from aether.state import error_log


@command(
    "error-add",
    help=f"""Record an error; answers its id (`err_<unix>_<hex>`).

    CATEGORY is a short label (stored lower-case, e.g. security, import, runtime);
    SEVERITY is {", ".join(error_log.SEVERITIES[:-1])} or {error_log.SEVERITIES[-1]} (any case); DESCRIPTION may be `-` for
    stdin; PHASE is the phase number. errors.json keeps the newest {error_log.MAX_ERRORS} errors; a category
    with {error_log.PATTERN_THRESHOLD} or more of them is added to flagged_patterns.""",
)
@click.argument("category", type=TEXT)
@click.argument("severity", type=TEXT)
@click.argument("description", type=CONTENT)
@click.argument("phase", required=False, type=click.IntRange(min=0))
@click.option("--task-id", type=TEXT, help="The task the error belongs to (e.g. 2.3).")
@click.option("--root-cause", type=CONTENT, help="What caused it, when known (`-` reads stdin).")
def error_add(category, severity, description, phase, task_id, root_cause):
    return error_log.add(category, severity, description, phase, task_id, root_cause)


@command(
    "error-pattern-check",
    help=f"Categories with {error_log.PATTERN_THRESHOLD} or more recorded errors: [{{category, count, first_seen, last_seen}}].",
)
def error_pattern_check():
    return error_log.pattern_check()


@command("error-summary")
def error_summary():
    """Counts of recorded errors: {total, by_category, by_severity}."""
    return error_log.summarize()
