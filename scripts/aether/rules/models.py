"""Which model each caste's ants run on (docs/decisions/spend-cap.md). Pure.

A spawn action sets the Agent call's `model` for a caste when the colony's mode (or the
project's `.aether/config.yaml`, `models:`) names one; `inherit` leaves it out, so the ant runs
on the session's model. Cheaper models go where the work allows — scouts, colonizers' maps, the
archivist's hygiene report; builders and the castes that judge (route-setter: plans; watcher:
reviews, critiques, verification) keep the session's model by default.
"""

from __future__ import annotations

from aether.core.castes import CASTES
from aether.core.exceptions import input_error

INHERIT = "inherit"
# The values Claude Code 2.1.328's Agent tool takes for `model`, and `inherit` (the session's).
CHOICES = (INHERIT, "sonnet", "opus", "haiku", "fable")
DEFAULTS = {
    "LIGHTWEIGHT": {"scout": "haiku", "colonizer": "haiku", "architect": "sonnet"},
    "STANDARD": {"scout": "haiku", "colonizer": "sonnet", "architect": "sonnet"},
    "FULL": {"scout": "sonnet"},
}


def check(caste: str, choice, where: str) -> str:
    if caste not in CASTES:
        raise input_error("invalid_config", f"{where}: {caste!r} is not a caste ({', '.join(CASTES)})", key=where)
    if not isinstance(choice, str) or choice.strip().lower() not in CHOICES:
        raise input_error(
            "invalid_config", f"{where}: the model of {caste} must be one of {', '.join(CHOICES)}, found {choice!r}", key=where
        )
    return choice.strip().lower()


def table(mode: str | None, configured: dict | None = None) -> dict:
    """{caste: choice} for every caste: the configured choice, else the mode's default, else inherit."""
    defaults = DEFAULTS.get(mode or "STANDARD", DEFAULTS["STANDARD"])
    return {c: (configured or {}).get(c) or defaults.get(c, INHERIT) for c in CASTES}


def for_agent(subagent_type: str, mode: str | None, configured: dict | None = None) -> str | None:
    """The Agent call's `model` for `ant:<caste>` (None: the session's model)."""
    caste = subagent_type.split(":", 1)[-1]
    if caste not in CASTES:
        return None
    choice = table(mode, configured)[caste]
    return None if choice == INHERIT else choice
