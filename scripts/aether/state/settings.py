"""The colony's own settings from `.aether/config.yaml`: `budget:` (the spend caps), `models:`
(the model per caste), `build:` (worktree isolation), `code_loop:` (a commit per iteration),
`verify:` (the commands the checks run), `run:` (a limit: stop or wait) and `deadlines:` (how
long an ant of each caste may run).
Defaults come from the mode (rules/spend.py, rules/models.py) and rules/deadlines.py; a run's own flags
(`/ant:run --budget …`) win over both.

```yaml
budget:
  run: 3M        # tokens one /ant:run may spend
  phase: 800k    # tokens one phase may spend in a run
models:
  scout: haiku   # inherit (the session's model), sonnet, opus, haiku, fable
  builder: inherit
build:
  isolation: auto  # on: each builder in its own git worktree; off: the shared tree; auto: the mode's
code_loop:
  commit_iterations: false  # true: a real commit `build iteration N: …` per code-loop iteration
run:
  on_limit: stop            # wait: /ant:run waits out a usage or rate limit and goes on (where the mod runs)
verify:
  tests: pytest -q          # the command the watcher runs for the tests (else found from the project's files)
  imports: python3 -c "import app"   # the import check (else the changed Python modules)
  launch: python3 -m app --help      # FULL mode's launch check (else the entry point found)
deadlines:
  builder: 45m              # how long one ant of a caste may run before it is stopped (30m, 1h30m, 90s)
```
"""

from __future__ import annotations

from aether.core.castes import CASTES
from aether.core.exceptions import input_error
from aether.rules import deadlines as deadline_rules
from aether.rules import models, modes, spend
from aether.state import config_file

BUDGET_KEYS = ("run", "phase")
CODE_LOOP = {"commit_iterations": False}  # the `code_loop:` settings and their defaults
BUILD_KEYS = ("isolation",)
RUN_KEYS = ("on_limit",)
ON_LIMIT = ("stop", "wait")  # what /ant:run does when a usage or rate limit holds its ants
ISOLATION = ("auto", "on", "off")  # auto: the mode's choice


def _unknown(section: str, key, known) -> None:
    import difflib  # noqa: PLC0415 — start-up: difflib only to name a misspelt setting

    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise input_error(
        "invalid_config",
        f"{section}.{key}: unknown setting in {config_file.path()}{hint}; known: {', '.join(known)}",
        key=f"{section}.{key}",
    )


def budget(mode: str | None) -> dict:
    """{run, phase, source: {run, phase}} — tokens; source says where each cap came from."""
    caps = spend.limits(mode)
    source = {k: f"{mode or 'STANDARD'} default" for k in BUDGET_KEYS}
    for key, value in config_file.section("budget").items():
        if key not in BUDGET_KEYS:
            _unknown("budget", key, BUDGET_KEYS)
        caps[key] = spend.parse_amount(value, f"budget.{key} in {config_file.CONFIG_FILE}")
        source[key] = config_file.CONFIG_FILE
    return {**caps, "source": source}


def model_table(mode: str | None) -> dict:
    """{caste: choice} with the configured choices over the mode's defaults."""
    configured = {}
    for caste, choice in config_file.section("models").items():
        if caste not in CASTES:
            _unknown("models", caste, CASTES)
        configured[caste] = models.check(caste, choice, f"models.{caste}")
    return models.table(mode, configured)


def isolation(mode: str | None) -> tuple:
    """(on?, where that came from): `build: isolation:` when it says on or off, else the mode's."""
    section = config_file.section("build")
    for key in section:
        if key not in BUILD_KEYS:
            _unknown("build", key, BUILD_KEYS)
    value = section.get("isolation", "auto")
    value = {True: "on", False: "off"}.get(value, value)  # YAML reads a bare on/off as a boolean
    if value not in ISOLATION:
        raise input_error(
            "invalid_config",
            f"build.isolation in {config_file.path()} must be one of {', '.join(ISOLATION)}, found {value!r}",
            key="build.isolation",
        )
    if value == "auto":
        return bool(modes.profile(mode)["isolation"]), f"{mode or modes.DEFAULT_MODE} mode"
    return value == "on", f"build.isolation: {value} in {config_file.CONFIG_FILE}"


def code_loop() -> dict:
    """`code_loop:` over its defaults (CODE_LOOP); an unknown key or a value that is not true or
    false is `invalid_config` naming the key."""
    settings = dict(CODE_LOOP)
    for key, value in config_file.section("code_loop").items():
        if key not in CODE_LOOP:
            _unknown("code_loop", key, tuple(CODE_LOOP))
        if not isinstance(value, bool):
            raise input_error("invalid_config", f"code_loop.{key}: must be true or false, found {value!r}", key=f"code_loop.{key}")
        settings[key] = value
    return settings


VERIFY_KEYS = ("tests", "imports", "launch")
MAX_VERIFY_COMMAND = 1000


def verify() -> dict:
    """`verify:` — {check: command} the project set; an unknown key, or a value that is not one
    line of text, is `invalid_config` naming the key."""
    out = {}
    for key, value in config_file.section("verify").items():
        if key not in VERIFY_KEYS:
            _unknown("verify", key, VERIFY_KEYS)
        if not isinstance(value, str) or not value.strip() or "\n" in value.strip() or len(value) > MAX_VERIFY_COMMAND:
            raise input_error(
                "invalid_config", f"verify.{key}: must be one command on one line, found {str(value)[:80]!r}", key=f"verify.{key}"
            )
        out[key] = value.strip()
    return out


def on_limit() -> str:
    """`run: on_limit:` — stop (the default) or wait."""
    section = config_file.section("run")
    for key in section:
        if key not in RUN_KEYS:
            _unknown("run", key, RUN_KEYS)
    value = section.get("on_limit", "stop")
    if value not in ON_LIMIT:
        raise input_error(
            "invalid_config",
            f"run.on_limit in {config_file.CONFIG_FILE} is one of {', '.join(ON_LIMIT)}, not {value!r}",
            key="run.on_limit",
        )
    return value


def deadlines() -> dict:
    """{caste: seconds} — `deadlines:` over the castes' defaults (rules/deadlines.py); an unknown
    caste or a value that is no duration is `invalid_config` naming the key."""
    configured = {}
    for caste, value in config_file.section("deadlines").items():
        if caste not in CASTES:
            _unknown("deadlines", caste, CASTES)
        configured[caste] = deadline_rules.parse(value, f"deadlines.{caste}", config_file.CONFIG_FILE)
    return deadline_rules.table(configured)
