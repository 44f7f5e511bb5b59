"""pheromone-* subcommands."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, NUMBER, TEXT, FiniteFloat, command
from aether.core import castes
from aether.rules import pheromones
from aether.state import pheromones as pheromone_file

NON_NEGATIVE = FiniteFloat(minimum=0)
POSITIVE = FiniteFloat(minimum=0)


@command(
    "pheromone-decay",
    context_settings={"ignore_unknown_options": True},
    help=f"""Strength of a signal after ELAPSED_SECONDS: s·e^(−ln2·t/h), 6 decimals.

    Negative elapsed time counts as 0; past {pheromones.EXPIRY_HALF_LIVES} half-lives the strength is 0.
    """,
)
@click.argument("strength", type=NON_NEGATIVE)
@click.argument("elapsed_seconds", type=NUMBER)
@click.argument("half_life", type=NON_NEGATIVE)
def decay(strength, elapsed_seconds, half_life):
    from aether.core.exceptions import input_error

    if half_life <= 0:
        raise input_error("invalid_argument", f"half_life must be > 0, got {half_life:g}")
    return {"strength": pheromones.decay(strength, elapsed_seconds, half_life)}


@command("pheromone-effective")
@click.argument("sensitivity", type=NON_NEGATIVE)
@click.argument("strength", type=NON_NEGATIVE)
def effective(sensitivity, strength):
    """Effective signal for a caste: SENSITIVITY × STRENGTH, 6 decimals."""
    return {"effective_signal": pheromones.effective(sensitivity, strength)}


@command("pheromone-batch")
def batch():
    """Every stored signal with its current_strength now (3 decimals).

    A signal with a malformed field gets current_strength null and an `error`;
    the others are unaffected.
    """
    from aether.state import store

    return pheromones.batch(store.read("pheromones")["signals"])


@command(
    "pheromone-cleanup",
    help=f"""Remove signals past {pheromones.EXPIRY_HALF_LIVES} half-lives or weaker than
    {pheromones.MIN_STRENGTH}.""",
)
def cleanup():
    return pheromone_file.cleanup()


@command(
    "pheromone-validate",
    help=f"""Check signal CONTENT (or `-` for stdin): not empty, at least
    {pheromones.MIN_CONTENT_LENGTH} characters, at most {pheromones.MAX_CONTENT_LENGTH:,}.""",
)
@click.argument("content", type=CONTENT)
def validate(content):
    return pheromones.check_content(content)


@command("pheromone-emit")
@click.argument("signal_type", metavar="TYPE", type=click.Choice(castes.SIGNAL_TYPES, case_sensitive=False))
@click.argument("content", type=CONTENT)
@click.option(
    "--strength",
    type=NUMBER,
    help="Initial strength in (0, 1]. Default per type: " + ", ".join(f"{t} {s}" for t, (s, _h) in pheromones.DEFAULTS.items()) + ".",
)
@click.option(
    "--half-life",
    type=POSITIVE,
    help="Half-life in seconds. Default per type: "
    + ", ".join(f"{t} {'never' if h is None else h}" for t, (_s, h) in pheromones.DEFAULTS.items())
    + ".",
)
@click.option("--never-decays", is_flag=True, help="The signal keeps its strength (half_life_seconds null).")
@click.option("--source", type=TEXT, help="Who emitted it (default: user).")
@click.option("--auto", is_flag=True, help="Mark the signal as emitted automatically by the colony.")
def emit(signal_type, content, strength, half_life, never_decays, source, auto):
    """Add a pheromone signal of TYPE with CONTENT (or `-` to read it from stdin).

    \b
    Example:
      aether pheromone-emit FOCUS - <<'EOF'
      security of the auth module
      EOF
    """
    return pheromone_file.emit(signal_type, content, strength, half_life, source, auto, never_decays)


@command("pheromone-render", display=True)
@click.option("--caste", type=click.Choice(castes.CASTES), help="Show the effective strength and PRIORITIZE/NOTE/IGNORE for this caste.")
def render(caste):
    """The active signals as the block the Queen shows and gives to workers."""
    return pheromone_file.render(caste)
