"""help and version."""

from __future__ import annotations

import click

from aether import __version__
from aether.cli import guide
from aether.cli.common import command

DESCRIPTION = (
    "Aether helper: the deterministic half of the ant colony (state files, pheromones, "
    "policies, rendering). The Queen calls it; it never guesses."
)


def _summaries() -> list[tuple[str, str, str]]:
    from aether.cli import COMMANDS, cli

    ctx = click.Context(cli, info_name="aether", **cli.context_settings)  # -h and --help, as when run
    rows = []
    for name in sorted(n for n in COMMANDS if not guide.hidden(n)):
        cmd = cli.get_command(ctx, name)
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        rows.append((name, usage, cmd.get_short_help_str(limit=80)))
    return rows


@command("help", display=True)
def help_cmd():
    """List the commands a person runs, and those the slash commands run, grouped by who runs them and
    why, with a one-line summary. The steps `aether next` takes itself are hidden (each still has its
    own `--help`)."""
    rows = _summaries()
    width = max(len(name) for name, _, _ in rows)
    summary = {name: text for name, _, text in rows}
    lines = [DESCRIPTION, "", "Usage: aether [--pretty] COMMAND [ARGS]...  (aether COMMAND --help: details and an example)"]
    groups = []
    for title, why, names in guide.GROUPS:
        groups.append({"title": title, "why": why, "commands": list(names)})
        lines += ["", f"{title}:", f"  ({why})"] + [f"  {name.ljust(width)}  {summary[name]}" for name in names]
    return {
        "commands": [name for name, _, _ in rows],
        "groups": groups,
        "description": DESCRIPTION,
        "usage": {name: f"aether {name} {usage}".rstrip() for name, usage, _ in rows},
        "text": "\n".join(lines),
    }


@command("version")
def version_cmd():
    """Print the helper's version."""
    return __version__
