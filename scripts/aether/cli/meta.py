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


def _summaries(every: bool = False) -> list[tuple[str, str, str]]:
    from aether.cli import COMMANDS, cli

    ctx = click.Context(cli, info_name="aether", **cli.context_settings)  # -h and --help, as when run
    rows = []
    for name in sorted(n for n in COMMANDS if every or not guide.hidden(n)):
        cmd = cli.get_command(ctx, name)
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        rows.append((name, usage, cmd.get_short_help_str(limit=80)))
    return rows


@command("help", display=True)
@click.option(
    "--all", "show_all", is_flag=True, help="Every command: also the original aether-utils.sh's and the steps `aether next` takes itself."
)
def help_cmd(show_all):
    """List the commands a person runs, and those the slash commands run, grouped by who runs them and
    why, with a one-line summary. The steps `aether next` takes itself are hidden (each still has its
    own `--help`); `--all` lists every command, the original aether-utils.sh's under their own heading."""
    rows = _summaries(show_all)
    width = max(len(name) for name, _, _ in rows)
    summary = {name: text for name, _, text in rows}
    lines = [DESCRIPTION, "", "Usage: aether [--pretty] COMMAND [ARGS]...  (aether COMMAND --help: details and an example)"]
    groups = []
    sections = [(title, why, list(names)) for title, why, names in guide.GROUPS]
    if show_all:
        shown = {n for _, _, names in guide.GROUPS for n in names}
        rest = sorted(n for n in summary if n not in shown)
        sections += [
            (*guide.ORIGINAL_TITLE, [n for n in guide.ORIGINAL if n in summary]),
            (*guide.OTHER_STEPS, [n for n in rest if n not in guide.ORIGINAL]),
        ]
    for title, why, names in sections:
        groups.append({"title": title, "why": why, "commands": names})
        lines += ["", f"{title}:", f"  ({why})"] + [f"  {name.ljust(width)}  {summary[name]}" for name in names]
    if not show_all:
        lines += ["", "aether help --all: every command, the original aether-utils.sh's under their own heading."]
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
