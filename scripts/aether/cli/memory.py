"""memory.json subcommands: memory-compress, decision-add, learning-add."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command
from aether.state import memory


@command(
    "memory-compress",
    help=f"""Trim memory.json to the newest {memory.MAX_PHASE_LEARNINGS} phase learnings
    and {memory.MAX_DECISIONS} decisions; if the token estimate ({memory.TOKENS_PER_WORD} × words) is still
    above THRESHOLD (default {memory.DEFAULT_TOKEN_THRESHOLD}), to {memory.COMPRESSED_PHASE_LEARNINGS} and
    {memory.COMPRESSED_DECISIONS}.

    Answers {{compressed, aggressive, threshold, tokens, before, after}}; before and after
    give {{phase_learnings, decisions, tokens}}. Nothing is written when nothing is dropped.
    """,
)
@click.argument("threshold", required=False, default=memory.DEFAULT_TOKEN_THRESHOLD, type=click.IntRange(min=0))
def memory_compress(threshold):
    return memory.compress_file(threshold)


@command(
    "decision-add",
    help=f"""Record a decision with CONTENT (or `-` for stdin); answers it. The
    newest {memory.MAX_DECISIONS} are kept.""",
)
@click.argument("content", type=CONTENT)
@click.option("--type", "kind", type=TEXT, help=f"Kind of decision (default: {memory.DEFAULT_DECISION_TYPE}; e.g. mode, architecture).")
@click.option("--context", type=CONTENT, help="Why it was decided (`-` reads stdin).")
@click.option("--phase", type=click.IntRange(min=0), help="Phase number (default: the colony's current phase).")
def decision_add(content, kind, context, phase):
    return memory.add_decision(content, kind, context, phase)


@command(
    "learning-add",
    help=f"""Record the learnings of PHASE: each LEARNING argument is one (`-` reads stdin).

    A phase has one entry, written once: if it has learnings already the command is refused
    with `learnings_exist` (exit 2) unless --append or --replace. Answers the entry
    {{id, phase, phase_name, learnings, errors_encountered, timestamp}}; the newest
    {memory.MAX_PHASE_LEARNINGS} are kept.

    \b
    Example:
      aether learning-add 2 - --each-line --phase-name "Auth" <<'EOF'
      - bcrypt with 12 rounds is too slow for the login path
      - the ORM needs explicit transactions
      EOF
    """,
)
@click.argument("phase", type=click.IntRange(min=0))
@click.argument("learnings", metavar="LEARNING...", nargs=-1, required=True, type=CONTENT)
@click.option("--phase-name", type=TEXT, help="The phase's name.")
@click.option("--errors-encountered", type=click.IntRange(min=0), help="Errors met in the phase.")
@click.option("--each-line", is_flag=True, help="Each non-blank line of the text is one learning (leading - * • bullets dropped).")
@click.option("--append", is_flag=True, help="Add to the phase's existing learnings.")
@click.option("--replace", is_flag=True, help="Replace the phase's existing learnings.")
def learning_add(phase, learnings, phase_name, errors_encountered, each_line, append, replace):
    if append and replace:
        raise click.UsageError("--append and --replace exclude each other: give one of them")
    items = []
    for text in learnings:
        items.extend(memory.split_lines(text) if each_line else [text])
    mode = "append" if append else "replace" if replace else "refuse"
    return memory.add_learnings(phase, items, phase_name, errors_encountered, mode)
