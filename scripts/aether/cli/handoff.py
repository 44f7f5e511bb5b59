"""colony-pause and colony-resume: the handoff between sessions."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, command


@command("colony-pause", text=True)
@click.option(
    "--note",
    type=CONTENT,
    help="What the next session must know that the state files do not say: decisions "
    "taken with the user, what was about to happen (text, or `-` for stdin).",
)
def colony_pause(note):
    """Save a handoff so a new session resumes exactly here (after /clear, compaction or a
    restart): goal, state, mode, current phase, the running build, active signals, open
    errors, recent events, the next command and the note. Replaces an earlier handoff;
    colony state is not changed. The file: .aether/data/handoff.json.

    \b
    Example:
      aether colony-pause --text --note - <<'EOF'
      The user wants SQLite, not Postgres; wave 2 of phase 3 was next.
      EOF
    """
    from aether.colony import handoff

    return handoff.pause(note)


@command("colony-resume", text=True)
def colony_resume():
    """Read the handoff back beside the live state: where the colony stands, the note left at
    the pause, what changed since, and the next command (computed from the state now).

    Works without a handoff too (then it shows the current state). A handoff left by an
    earlier colony is reported as `stale` and ignored. Marks the handoff resumed.
    """
    from aether.colony import handoff

    return handoff.resume()
