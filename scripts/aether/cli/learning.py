"""Global learnings subcommands (~/.aether/learnings.json, AETHER_HOME overrides)."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command
from aether.state import learning


@command(
    "learning-promote",
    help=f"""Record that a project learned CONTENT (or `-` to read it from stdin).

    SOURCE_PROJECT defaults to this project's id (a hash of its git remote, else of its
    path); pass "" to keep the default and still give SOURCE_PHASE (a phase number) and
    TAGS_CSV (comma-separated keywords that learning-inject matches).

    A learning matches a stored one when both read the same after case-folding, Unicode
    normalisation, collapsing whitespace and dropping trailing punctuation. (Not substring
    containment: a short learning would absorb every longer one containing it and be promoted
    without ever recurring.) A project counts once per learning; at {learning.PROMOTE_AT} distinct projects
    the learning is promoted and every new colony receives it as a FEEDBACK signal. The store
    keeps {learning.CAP} learnings: a new one at the cap replaces the non-promoted learning seen least
    recently.

    \b
    Result: {{stored, promoted, newly_promoted, id, count, cap, total, project_id, rotated_out}}
    stored: false when this project had already contributed the learning.

    \b
    Example:
      aether learning-promote - "" 3 "auth,bcrypt" --category performance <<'EOF'
      bcrypt with 12 rounds adds 800 ms to each login; 10 rounds is enough
      EOF""",
)
@click.argument("content", type=CONTENT)
@click.argument("source_project", type=TEXT, required=False)
@click.argument("source_phase", type=TEXT, required=False)
@click.argument("tags_csv", type=TEXT, required=False)
@click.option("--category", type=TEXT, help=", ".join(learning.CATEGORIES[:-1]) + f" or {learning.CATEGORIES[-1]}.")
def learning_promote(content, source_project, source_phase, tags_csv, category):
    return learning.promote(
        content,
        source_project=source_project,
        source_phase=learning.parse_phase(source_phase),
        tags=learning.parse_tags(tags_csv),
        category=category,
    )


@command("learning-load")
def learning_load():
    """The promoted global learnings, strongest first: {learnings, count, total}."""
    return learning.load()


@command("learning-init-global")
def learning_init_global():
    """Create the global folder and an empty learnings.json when missing: {created, path}."""
    return learning.init_global()


@command(
    "learning-inject",
    text=True,
    help=f"""Global learnings whose tags or category equal one of KEYWORDS_CSV (comma-separated,
    case-insensitive): promoted ones first, at most {learning.INJECT_LIMIT}.

    The result's `text` is the block to hand to workers (--text prints only it).""",
)
@click.argument("keywords_csv", type=CONTENT)
def learning_inject(keywords_csv):
    return learning.inject(keywords_csv)
