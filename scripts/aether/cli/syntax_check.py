"""syntax-check: the helper's own syntax check of changed files (the LIGHTWEIGHT watcher)."""

from __future__ import annotations

import click

from aether.cli.common import TEXT, command


@command("syntax-check", text=True)
@click.argument("files", nargs=-1, type=TEXT)
@click.option("--build", is_flag=True, help="Check the files the build's workers created or modified (spawn tree).")
def syntax_check(files, build):
    """Check the syntax of FILES (paths from the project root) and/or, with --build, of every
    file the build's completed spawns created or modified.

    \b
    Python: compile() in-process (nothing is imported or run) · JSON · TOML · YAML (with PyYAML)
    shell: bash -n · JavaScript (and TypeScript where node strips types): node --check
    Other files are `not_checked`; missing files and files outside the project are reported,
    not failed. Result: {files:[{path, language, status, error, line}], passed, checked, failed,
    not_checked, missing, outside_project, summary, text}. In LIGHTWEIGHT mode build-finish
    runs this check itself on the build's files.
    """
    from aether.steps import syntax_check as sc

    return sc.command(files, build)
