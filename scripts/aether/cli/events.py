"""events.json and activity.log subcommands."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command
from aether.state import events


@command(
    "event-add",
    help=f"""Record an event of TYPE (one word, e.g. phase_started) from SOURCE with CONTENT
    (or `-` for stdin, up to {events.MAX_EVENT_CONTENT} characters). Answers the event; the newest {events.MAX_EVENTS} are
    kept.""",
)
@click.argument("event_type", metavar="TYPE", type=TEXT)
@click.argument("source", type=TEXT)
@click.argument("content", type=CONTENT)
def event_add(event_type, source, content):
    return events.add(event_type, source, content)


@command(
    "activity-log",
    help=f"""Append `[HH:MM:SS] ACTION caste: description` (UTC) to .aether/data/activity.log.

    ACTION is one word (stored upper-case: SPAWN, COMPLETE, ERROR…); CASTE a caste or worker
    name without `:`; DESCRIPTION may be `-` for stdin. A multi-line description is folded
    onto one line (line breaks become `{events.LINE_BREAK_MARK.strip()}`); past {events.MAX_ACTIVITY_DESCRIPTION} characters it is clipped.
    Answers "logged", or "skipped" when the colony's mode turns the activity log off (see
    mode-profile's `activity_log_enabled`).""",
)
@click.argument("action", type=TEXT)
@click.argument("caste", type=TEXT)
@click.argument("description", type=CONTENT)
def activity_log(action, caste, description):
    return "logged" if events.activity_log(action, caste, description) else "skipped"


@command("activity-log-init")
@click.argument("phase_num", type=click.IntRange(min=0))
@click.argument("phase_name", required=False, type=CONTENT)
def activity_log_init(phase_num, phase_name):
    """Start a phase in the activity log: copy a non-empty log to activity-phase-N.log
    (never overwriting: -2, -3… when it exists) and append a `# Phase N: name` header.

    Answers {archived, archive, header} (`skipped: true` when the mode turns the log off).
    """
    return events.activity_log_init(phase_num, phase_name)


@command(
    "activity-log-read",
    help=f"""The activity log as text; with CASTE, its last
    {events.READ_LAST_MATCHES} entries by that caste (a whole
    word of the caste field, any case). No log or no match answers "".""",
)
@click.argument("caste", required=False, type=TEXT)
def activity_log_read(caste):
    return events.activity_log_read(caste)
