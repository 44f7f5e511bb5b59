"""State file subcommands: validate-state, state-restore, query."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command
from aether.state import inspect_state, schemas

NAMES = ", ".join(schemas.FILES)  # every state file the helper knows


@command(
    "validate-state",
    help=f"""Check a state file against its schema: TARGET is one of {NAMES} (or its
    file name, e.g. COLONY_STATE.json), or `all` for every project state file.

    Answers {{file, path, checks:[{{check, pass, detail?}}], pass}}; `all` answers
    {{pass, files:[…]}}. An unparsable or invalid file is a failed check, not an error; a
    damaged file's report names the backup `aether state-restore` would bring back. A
    missing file is reported (`missing: true`); it fails only for the colony state.""",
)
@click.argument("target", type=TEXT)
def validate_state(target):
    return inspect_state.validate(target)


@command("state-restore")
@click.argument("file", type=TEXT)
@click.option("--force", is_flag=True, help="Restore even though the current file is valid (undoes its last write).")
def state_restore(file, force):
    """Bring back the newest valid backup of FILE (colony, errors, COLONY_STATE.json, …).

    Refuses a file that is valid unless --force; the replaced content is kept in
    .backups/ as `<file>.replaced-<time>-<hex>`.
    """
    from aether.state import store

    return store.restore(file, force=force)


@command(
    "query",
    help=f"""Evaluate a JMESPath EXPRESSION (or `-` for stdin) over a state file; read-only.

    An expression longer than {inspect_state.MAX_QUERY_LENGTH:,} characters is refused
    (`content_too_long`).

    \b
    Examples:
      aether query state
      aether query "signals[?type=='FOCUS'].content" --file pheromones
      aether query "length(errors)" --file errors
    """,
)
@click.argument("expression", type=CONTENT)
@click.option("--file", "name", default="colony", show_default=True, type=TEXT, help=f"State file to query: {NAMES} (or its file name).")
def query(expression, name):
    return inspect_state.query(expression, name)
