"""uninstall."""

from __future__ import annotations

import click

from aether.cli.common import command


@command("uninstall", display=True)
@click.option("--yes", is_flag=True, help="Remove them (without it, only list what would go).")
@click.option("--project", is_flag=True, help="Also remove this project's .aether/ (its colony state).")
def uninstall(yes, project):
    """List, and with --yes remove, what Aether keeps outside your projects: the global folder
    (~/.aether or AETHER_HOME: learnings shared across projects) and the helper's venvs in
    Claude Code's plugin data folder. `/plugin uninstall ant` removes the plugin itself, not
    these. Files Aether did not write are left in place; a project's .aether/ goes only with
    --project."""
    from aether.colony import uninstall as uninstall_mod

    return uninstall_mod.uninstall(yes=yes, project=project)
