"""The project's settings file, `.aether/config.yaml`: one mapping of sections (`bug_bash:`,
`budget:`, `models:`, `build:`, `code_loop:`, `verify:`, `run:`, `deadlines:`), each owned by the module that reads it, all read
here and nowhere else. Read-only: the user edits it.

PyYAML is imported only when the file exists, so a project without one pays nothing.
"""

from __future__ import annotations

import os

from aether.core import containment, paths
from aether.core.exceptions import input_error

CONFIG_FILE = "config.yaml"  # in the project's .aether/
SECTIONS = ("bug_bash", "budget", "models", "build", "code_loop", "verify", "run", "deadlines")  # owners: bugs/config.py, state/settings.py


def path() -> str:
    return os.path.join(paths.aether_dir(), CONFIG_FILE)


def section(name: str, file: str | None = None) -> dict:
    """The mapping under `name:` ({} when the file or the section is absent); `invalid_config` (1)
    when the file is unreadable, not UTF-8, not YAML, not a mapping, or the section is no mapping."""
    file = file or path()
    containment.check_read(file, exit_code=1)
    try:
        raw = containment.read_bytes(file)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise input_error("invalid_config", f"cannot read {file}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise input_error("invalid_config", f"{file} is not valid UTF-8") from None
    import yaml  # noqa: PLC0415 — start-up: PyYAML (~15 ms) only when a config file exists

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise input_error("invalid_config", f"{file} is not valid YAML: {exc}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise input_error("invalid_config", f"{file} must be a mapping of sections")
    for key in doc:
        if key not in SECTIONS:  # a misspelt section would be ignored silently
            import difflib  # noqa: PLC0415 — start-up: difflib only to name a misspelt section

            close = difflib.get_close_matches(str(key), SECTIONS, n=1)
            raise input_error(
                "invalid_config",
                f"{file}: unknown section {str(key)[:40]!r}"
                + (f" (did you mean {close[0]}?)" if close else "")
                + f"; known: {', '.join(SECTIONS)}",
                key=str(key)[:40],
            )
    found = doc.get(name)
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise input_error("invalid_config", f"{name}: in {file} must be a mapping of settings", key=name)
    return found
