"""events.json and activity.log subcommands."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command


@command("event-add")
@click.argument("event_type", metavar="TYPE", type=TEXT)
@click.argument("source", type=TEXT)
@click.argument("content", type=CONTENT)
def event_add(event_type, source, content):
    """Record an event of TYPE (one word, e.g. phase_started) from SOURCE with CONTENT
    (or `-` for stdin, up to 4000 characters). Answers the event; the newest 100 are kept."""
    from aether import events

    return events.add(event_type, source, content)


@command("activity-log")
@click.argument("action", type=TEXT)
@click.argument("caste", type=TEXT)
@click.argument("description", type=CONTENT)
def activity_log(action, caste, description):
    """Append `[HH:MM:SS] ACTION caste: description` (UTC) to .aether/data/activity.log.

    ACTION is one word (stored upper-case: SPAWN, COMPLETE, ERROR…); CASTE a caste or worker
    name without `:`; DESCRIPTION may be `-` for stdin. A multi-line description is folded
    onto one line (line breaks become ` ⏎ `); past 1000 characters it is clipped. Answers
    "logged", or "skipped" when the colony's mode turns the activity log off (LIGHTWEIGHT).
    """
    from aether import events

    return "logged" if events.activity_log(action, caste, description) else "skipped"


@command("activity-log-init")
@click.argument("phase_num", type=click.IntRange(min=0))
@click.argument("phase_name", required=False, type=CONTENT)
def activity_log_init(phase_num, phase_name):
    """Start a phase in the activity log: copy a non-empty log to activity-phase-N.log
    (never overwriting: -2, -3… when it exists) and append a `# Phase N: name` header.

    Answers {archived, archive, header} (`skipped: true` in LIGHTWEIGHT mode).
    """
    from aether import events

    return events.activity_log_init(phase_num, phase_name)


@command("activity-log-read")
@click.argument("caste", required=False, type=TEXT)
def activity_log_read(caste):
    """The activity log as text; with CASTE, its last 20 entries by that caste (a whole
    word of the caste field, any case). No log or no match answers ""."""
    from aether import events

    return events.activity_log_read(caste)
