"""The README's command reference, generated from the registry (what `aether help` lists).

    .venv/bin/python tests/readme_reference.py                  # print the table
    .venv/bin/python tests/readme_reference.py --write README.md  # replace it in the README

The table sits between `<!-- commands:start -->` and `<!-- commands:end -->`;
tests/test_cli_contract.py checks that it names exactly the registered commands.
"""

from __future__ import annotations

import sys

START, END = "<!-- commands:start -->", "<!-- commands:end -->"


def rows() -> list[str]:
    """One table per group of `aether help` (who runs the commands, and what for)."""
    import click

    from aether.cli import COMMANDS, cli, guide

    ctx = click.Context(cli, info_name="aether", **cli.context_settings)
    hidden = sorted(n for n in COMMANDS if guide.hidden(n))
    lines = []
    for title, why, names in guide.GROUPS:
        lines += [f"**{title}** — {why}", "", "| command | arguments | what it does |", "|---|---|---|"]
        for name in names:
            cmd = cli.get_command(ctx, name)
            usage = " ".join(p for p in cmd.collect_usage_pieces(ctx) if p != "[OPTIONS]").replace("|", "\\|")
            summary = cmd.get_short_help_str(limit=110).replace("|", "\\|")
            lines.append(f"| `{name}` | {f'`{usage}`' if usage else ''} | {summary} |")
        lines.append("")
    original = [n for n in guide.ORIGINAL if guide.hidden(n)]
    lines += [
        f"**{guide.ORIGINAL_TITLE[0]}**, hidden from `aether help` (the helper runs them itself; "
        "`aether help --all` lists them): " + ", ".join(f"`{n}`" for n in original) + ".",
        "",
        f"**{guide.OTHER_STEPS[0]}** — {guide.OTHER_STEPS[1]} (each has its own `--help`): "
        + ", ".join(f"`{n}`" for n in hidden if n not in original)
        + ".",
    ]
    return lines


def write(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    table = "\n".join(rows())
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}{START}\n{table}\n{END}{tail}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"] and len(sys.argv) == 3:
        write(sys.argv[2])
    else:
        print("\n".join(rows()))
