"""Bug Bash settings: `bug_bash:` in the project's `.aether/config.yaml`, then `AETHER_BUG_*`.

Keys, defaults and checks are those of the Bug Bash design (docs/decisions/bug-bash-gate.md),
plus what Aether adds: configurable cost limits, the verification command and its timeout. An unknown
key or a bad value is an error that names the key (or the environment variable).
"""

from __future__ import annotations

import math
import os
import shlex

from aether.core.exceptions import input_error
from aether.state import config_file

SECTION = "bug_bash"

DEFAULTS = {
    # reproduction
    "max_reproduction_attempts": 3,
    "reproduction_timeout_seconds": 300,
    # analysis
    "max_analysis_attempts": 2,
    "analysis_timeout_seconds": 300,
    # planning
    "planning_timeout_seconds": 300,
    "min_test_cases": 2,
    # approval (`auto_approve_low_risk` is read only to say that it no longer approves)
    "auto_approve_low_risk": False,
    "require_approval_reason": False,
    # storage (relative paths are taken from the project root)
    "storage_path": ".aether/bugs",
    # agents
    "agent_model": "claude-sonnet-4-20250514",
    "agent_temperature": 0.2,
    # costs (USD; exceeding one stops the pipeline)
    "max_phase_cost_usd": 0.50,
    "max_total_cost_usd": 2.00,
    # verification: null runs `<project python> -m pytest`; else a command (string or list)
    "test_command": None,
    "verification_timeout_seconds": 300,
}

# key → (type, minimum or None)
_INT, _FLOAT, _BOOL, _STR = "integer", "number", "boolean", "string"
TYPES = {
    "max_reproduction_attempts": (_INT, 1),
    "reproduction_timeout_seconds": (_INT, 30),
    "max_analysis_attempts": (_INT, 1),
    "analysis_timeout_seconds": (_INT, 1),
    "planning_timeout_seconds": (_INT, 1),
    "min_test_cases": (_INT, 1),
    "auto_approve_low_risk": (_BOOL, None),
    "require_approval_reason": (_BOOL, None),
    "storage_path": (_STR, None),
    "agent_model": (_STR, None),
    "agent_temperature": (_FLOAT, 0),
    "max_phase_cost_usd": (_FLOAT, 0),
    "max_total_cost_usd": (_FLOAT, 0),
    "test_command": ("command", None),
    "verification_timeout_seconds": (_INT, 1),
}
MAX_TEMPERATURE = 1
# The Bug Researcher runs each reproduction command with the Bash tool, which waits at most
# this long (Claude Code refuses a larger `timeout`): a reproduction timeout cannot exceed it.
BASH_TIMEOUT_MAX_MS = 600_000
MAXIMA = {  # key → largest value
    "reproduction_timeout_seconds": BASH_TIMEOUT_MAX_MS // 1000,
    "agent_temperature": MAX_TEMPERATURE,
}

# environment variable → key (the design's SWARM_BUG_* names, as AETHER_BUG_*)
ENV_OVERRIDES = {
    "AETHER_BUG_MAX_REPRO_ATTEMPTS": "max_reproduction_attempts",
    "AETHER_BUG_STORAGE_PATH": "storage_path",
    "AETHER_BUG_AGENT_MODEL": "agent_model",
}
# A setting that handed the person's approval to a rule: a file or a variable a model can write
# cannot stand for a person, so it is kept readable (old configs load) and approves nothing.
AUTO_APPROVE_IGNORED = (
    "bug_bash.auto_approve_low_risk is set, but nothing approves a fix plan by rule: "
    "a person types `/ant:bug approve <id>` (the plan's LOW-risk assessment is shown to help them)"
)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _bad(where: str, message: str):
    return input_error("invalid_config", f"{where}: {message}", key=where)


def _check(key: str, value, where: str):
    """The value converted to its key's type; raises `invalid_config` naming `where`."""

    kind, minimum = TYPES[key]
    if kind == _BOOL:
        if not isinstance(value, bool):
            raise _bad(where, f"must be true or false, found {value!r}")
        return value
    if kind == _STR:
        if not isinstance(value, str) or not value.strip():
            raise _bad(where, f"must be a non-empty string, found {value!r}")
        return value.strip()
    if kind == "command":
        if value is None:
            return None
        if isinstance(value, str):
            try:
                parts = shlex.split(value)
            except ValueError as exc:
                raise _bad(where, f"cannot be split into words ({exc})") from None
        elif isinstance(value, list) and all(isinstance(p, str) for p in value):
            parts = list(value)
        else:
            raise _bad(where, f"must be a command string or a list of strings, found {value!r}")
        if not parts or not parts[0].strip():
            raise _bad(where, "is empty; remove it to use the project's pytest")
        return parts
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(where, f"must be a {kind}, found {value!r}")
    if kind == _INT and (not isinstance(value, int) and not float(value).is_integer()):
        raise _bad(where, f"must be a whole number, found {value!r}")
    if not math.isfinite(value):
        raise _bad(where, f"must be a finite number, found {value!r}")
    value = int(value) if kind == _INT else float(value)
    if minimum is not None and value < minimum:
        raise _bad(where, f"must be >= {minimum}, found {value}")
    maximum = MAXIMA.get(key)
    if maximum is not None and value > maximum:
        why = " (the Bug Researcher's Bash tool waits at most that long)" if key == "reproduction_timeout_seconds" else ""
        raise _bad(where, f"must be between {minimum} and {maximum}{why}, found {value}")
    return value


def _from_env(var: str, key: str, raw: str):
    kind = TYPES[key][0]
    text = raw.strip()
    if kind == _BOOL:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise _bad(var, f"must be true or false, found {raw!r}")
    if kind == _INT:
        try:
            return int(text)
        except ValueError:
            raise _bad(var, f"must be a whole number, found {raw!r}") from None
    return raw


def config_path() -> str:

    return config_file.path()


def load(path: str | None = None) -> dict:
    """The effective settings: defaults ← config.yaml's `bug_bash:` ← AETHER_BUG_* variables."""
    path = path or config_path()
    settings = dict(DEFAULTS)
    for key, value in config_file.section(SECTION, path).items():
        if key not in DEFAULTS:
            import difflib  # noqa: PLC0415 — start-up: difflib only where text is compared

            close = difflib.get_close_matches(str(key), DEFAULTS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise _bad(f"{SECTION}.{key}", f"unknown setting in {path}{hint}; known: " + ", ".join(DEFAULTS))
        settings[key] = _check(key, value, f"{SECTION}.{key}")
    for var, key in ENV_OVERRIDES.items():
        raw = os.environ.get(var)
        if raw is not None and raw != "":
            settings[key] = _check(key, _from_env(var, key, raw), var)
    return settings
