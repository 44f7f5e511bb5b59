"""memory.json subcommands: memory-compress, decision-add, learning-add."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, TEXT, command


@command("memory-compress")
@click.argument("threshold", required=False, default=10000, type=click.IntRange(min=0))
def memory_compress(threshold):
    """Trim memory.json to the newest 20 phase learnings and 30 decisions; if the token
    estimate (1.3 × words) is still above THRESHOLD (default 10000), to 10 and 15.

    Answers {compressed, aggressive, threshold, tokens, before, after}; before and after
    give {phase_learnings, decisions, tokens}. Nothing is written when nothing is dropped.
    """
    from aether import memory

    return memory.compress_file(threshold)


@command("decision-add")
@click.argument("content", type=CONTENT)
@click.option("--type", "kind", type=TEXT, help="Kind of decision (default: general; e.g. mode, architecture).")
@click.option("--context", type=CONTENT, help="Why it was decided (`-` reads stdin).")
@click.option("--phase", type=click.IntRange(min=0), help="Phase number (default: the colony's current phase).")
def decision_add(content, kind, context, phase):
    """Record a decision with CONTENT (or `-` for stdin); answers it. The newest 30 are kept."""
    from aether import memory

    return memory.add_decision(content, kind, context, phase)


@command("learning-add")
@click.argument("phase", type=click.IntRange(min=0))
@click.argument("learnings", metavar="LEARNING...", nargs=-1, required=True, type=CONTENT)
@click.option("--phase-name", type=TEXT, help="The phase's name.")
@click.option("--errors-encountered", type=click.IntRange(min=0), help="Errors met in the phase.")
@click.option("--each-line", is_flag=True,
              help="Each non-blank line of the text is one learning (leading - * • bullets dropped).")
@click.option("--append", "mode", flag_value="append", help="Add to the phase's existing learnings.")
@click.option("--replace", "mode", flag_value="replace", help="Replace the phase's existing learnings.")
def learning_add(phase, learnings, phase_name, errors_encountered, each_line, mode):
    """Record the learnings of PHASE: each LEARNING argument is one (`-` reads stdin).

    A phase has one entry, written once: if it has learnings already the command is refused
    with `learnings_exist` (exit 2) unless --append or --replace. Answers the entry
    {id, phase, phase_name, learnings, errors_encountered, timestamp}; the newest 20 are kept.

    \b
    Example:
      aether learning-add 2 - --each-line --phase-name "Auth" <<'EOF'
      - bcrypt with 12 rounds is too slow for the login path
      - the ORM needs explicit transactions
      EOF
    """
    from aether import memory

    items = []
    for text in learnings:
        items.extend(memory.split_lines(text) if each_line else [text])
    return memory.add_learnings(phase, items, phase_name, errors_encountered, mode or "refuse")
