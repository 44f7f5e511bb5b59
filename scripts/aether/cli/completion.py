"""completion-summary: what the colony produced."""

from __future__ import annotations

from aether.cli.common import command


@command("completion-summary", display=True)
def completion_summary():
    """The colony's summary (shown when the last phase completes; any time after the first
    build): planning and coding scores and the iterations of each loop, phases with their
    status, files created and modified, test results and coverage when known, learnings
    promoted across projects, and the next steps."""
    from aether.steps import completion

    return completion.summary()
