"""`--help` quotes the helper's numbers and lists from the modules that own them: change the
constant and the help follows (no copy of a limit in a help string), and every choice list
comes from its owner (castes, modes, signal types, state files)."""

from __future__ import annotations

import contextlib
import importlib

import pytest

from aether.colony import between_phases as lifecycle
from aether.colony import complexity
from aether.core import castes
from aether.rules import complexity as complexity_rules
from aether.rules import loops, modes, pheromones, review, spawn_tree
from aether.state import error_log, events, learning, memory, schemas
from aether.steps import waves

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def owned(cli_module: str, owner, name: str, value):
    """The CLI module rebuilt with owner.name = value; put back afterwards."""
    module = importlib.import_module(cli_module)
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield importlib.reload(module)
    finally:
        setattr(owner, name, saved)
        importlib.reload(module)


def help_of(project, *command) -> str:
    out = project.run(*command, "--help")
    assert out.code == 0, out.stderr
    return " ".join(out.stdout.split())


CASES = [
    # (CLI module, command, owner, constant, new value, what the help then says)
    ("aether.cli.loops", ["loop-init"], loops, "THRESHOLDS", {"plan": 81, "code": 97}, "(default: plan 81, code 97)"),
    ("aether.cli.loops", ["loop-decide"], loops, "MAX_ITERATIONS", 7, "iteration 7 of a round"),
    ("aether.cli.loops", ["loop-decide"], loops, "STAGNATION_MIN_GAIN", 9, "less than 9 points"),
    (
        "aether.cli.loops",
        ["loop-score"],
        loops,
        "SCORE_WEIGHTS",
        {"tests": 50, "lint": 50},
        "the code review score's weights: tests 50, lint 50.",
    ),
    ("aether.cli.loops", ["loop-score"], loops, "COVERAGE_TARGET", 70, "≥ 70 earns the points"),
    ("aether.cli.spawning", ["spawn-requests"], spawn_tree, "MAX_SUB_SPAWNS_PER_WORKER", 4, "(4 per worker"),
    ("aether.cli.spawning", ["spawn-requests"], spawn_tree, "MAX_SUB_SPAWNS_PER_WAVE", 6, "6 per wave)"),
    ("aether.cli.review", ["review-decide"], review, "MAX_WAVE_REBUILDS", 5, "fewer than 5 times"),
    ("aether.cli.review", ["review-decide"], review, "SEVERITIES", ("CRITICAL", "LOW"), '"CRITICAL|LOW"'),
    ("aether.cli.learning", ["learning-promote"], learning, "PROMOTE_AT", 4, "at 4 distinct projects"),
    ("aether.cli.learning", ["learning-promote"], learning, "CAP", 120, "keeps 120 learnings"),
    (
        "aether.cli.learning",
        ["learning-promote"],
        learning,
        "CATEGORIES",
        ("speed", "style", "safety"),
        "--category TEXT speed, style or safety.",
    ),
    ("aether.cli.learning", ["learning-inject"], learning, "INJECT_LIMIT", 12, "at most 12"),
    ("aether.cli.colony_init", ["colony-init"], learning, "INIT_SIGNAL_STRENGTH", 0.25, "(strength 0.25,"),
    ("aether.cli.colony_init", ["colony-init"], learning, "INIT_SIGNAL_LIMIT", 8, "the 8 strongest at most"),
    ("aether.cli.complexity", ["complexity-detect"], complexity_rules, "LIGHTWEIGHT_MAX_FILES", 21, "< 21 source files"),
    ("aether.cli.complexity", ["complexity-detect"], complexity, "WALK_FILE_LIMIT", 6000, "stops at 6000 files"),
    ("aether.cli.events", ["event-add"], events, "MAX_EVENTS", 77, "the newest 77 are kept"),
    ("aether.cli.events", ["event-add"], events, "MAX_EVENT_CONTENT", 3000, "up to 3000 characters"),
    ("aether.cli.events", ["activity-log-read"], events, "READ_LAST_MATCHES", 30, "its last 30 entries"),
    ("aether.cli.error_log", ["error-add"], error_log, "MAX_ERRORS", 33, "keeps the newest 33 errors"),
    ("aether.cli.error_log", ["error-pattern-check"], error_log, "PATTERN_THRESHOLD", 4, "Categories with 4 or more"),
    ("aether.cli.waves", ["plan-waves"], waves, "MAX_PLAN_REVISIONS", 9, "at most 9 revisions"),
    ("aether.cli.pheromones", ["pheromone-cleanup"], pheromones, "MIN_STRENGTH", 0.07, "weaker than 0.07"),
    ("aether.cli.pheromones", ["pheromone-decay"], pheromones, "EXPIRY_HALF_LIVES", 12, "past 12 half-lives"),
    ("aether.cli.pheromones", ["pheromone-validate"], pheromones, "MIN_CONTENT_LENGTH", 25, "at least 25 characters"),
    ("aether.cli.pheromones", ["pheromone-emit"], pheromones, "DEFAULTS", {"INIT": (1.0, None), "FOCUS": (0.6, 1800)}, "FOCUS 0.6."),
    ("aether.cli.memory", ["memory-compress"], memory, "MAX_PHASE_LEARNINGS", 25, "newest 25 phase learnings"),
    ("aether.cli.memory", ["decision-add"], memory, "MAX_DECISIONS", 35, "newest 35 are kept"),
    ("aether.cli.memory", ["learning-add"], memory, "MAX_PHASE_LEARNINGS", 25, "the newest 25 are kept"),
    ("aether.cli.between_phases", ["hygiene-check"], lifecycle, "STATE_FILE_LIMIT_BYTES", 300_000, "JSON over 300 KB"),
    ("aether.cli.between_phases", ["hygiene-check"], lifecycle, "LOG_FILE_LIMIT_BYTES", 2_000_000, "logs over 2 MB"),
]


@pytest.mark.parametrize("cli_module,command,owner,name,value,says", CASES, ids=[f"{c[1][0]}-{c[3]}" for c in CASES])
def test_help_quotes_the_owning_constant(project, cli_module, command, owner, name, value, says):
    importlib.reload(importlib.import_module(cli_module))  # fresh commands, as the reloads below make
    before = help_of(project, *command)
    assert says not in before  # the case really changes the text
    with owned(cli_module, owner, name, value):
        assert says in help_of(project, *command)
    assert help_of(project, *command) == before


@pytest.mark.parametrize(
    "command,option,values",
    [
        (["colony-init"], "--mode", modes.PROFILES),
        (["mode-profile"], "--mode", modes.PROFILES),
        (["mode-profile"], "--when", modes.WHEN),
        (["pheromone-render"], "--caste", castes.CASTES),
        (["pheromone-emit"], "TYPE", castes.SIGNAL_TYPES),
        (["feedback-store"], "--kind", loops.FEEDBACK_KINDS),
    ],
)
def test_choices_come_from_their_owner(command, option, values):
    from aether.cli import COMMANDS

    module, attr = COMMANDS[command[0]].split(":")
    cmd = getattr(importlib.import_module(module), attr)
    (param,) = [p for p in cmd.params if option in (p.opts or []) or p.human_readable_name == option]
    assert [c.upper() for c in param.type.choices] == [v.upper() for v in values]


def test_query_and_validate_state_list_every_state_file(project):
    for command in (["query"], ["validate-state"]):
        text = help_of(project, *command)
        assert all(name in text for name in schemas.FILES), command


def test_phase_advance_says_who_moves_current_phase(project):
    text = help_of(project, "phase-advance")
    assert "The only command" not in text
    assert all(word in text for word in ("build-start", "phase-skip", "plan-load"))


# ---------------------------------------------------------------- help that teaches


def _example_argv(example: str) -> list:
    """The argv of an example's first line, without its comment, redirection or heredoc."""
    import shlex

    line = example.splitlines()[0].split("  #")[0]
    words = shlex.split(line)
    cut = next((i for i, w in enumerate(words) if w.startswith(("<", ">"))), len(words))
    return words[1:cut]


def test_every_command_has_a_group_place_and_an_example_that_parses(tmp_path, monkeypatch):
    import re

    import click

    from aether.cli import COMMANDS, cli
    from aether.cli.guide import EXAMPLES, GROUPS

    grouped = [name for _title, _why, names in GROUPS for name in names]
    assert len(grouped) == len(set(grouped)) and set(grouped) <= set(COMMANDS)
    assert set(EXAMPLES) == set(COMMANDS), "one example per command"
    root = click.Context(cli, info_name="aether", **cli.context_settings)
    for name, example in EXAMPLES.items():
        argv = _example_argv(example)
        assert argv[0] == name, example
        stand_in = tmp_path / "stdin.json"  # `-` would read stdin while parsing: a file stands in
        stand_in.write_text('{"phase": 1}')
        argv = [str(stand_in) if a == "-" else a for a in argv]
        monkeypatch.chdir(tmp_path)
        for word in argv:  # files an example names (a plan, an answer) exist for the parse
            if re.fullmatch(r"[\w.-]+\.(json|txt|md)", word):
                (tmp_path / word).write_text('{"phase": 1}')
        command = cli.get_command(root, name)
        command.make_context(name, argv[1:], parent=root)  # parses: options and arguments exist


def test_help_shows_what_a_person_runs_and_what_the_slash_commands_run(project):
    """The steps `aether next` takes itself are hidden from `aether help` and `aether --help`, and
    still answer `--help`; everything a prompt or hook runs is shown."""
    import re

    from aether.cli import COMMANDS, guide

    shown = set(project.run("help", "--json").json["commands"])
    listing = project.run("--help").stdout
    called = set()
    for path in [*(REPO / ".claude" / "commands" / "ant").glob("*.md"), *(REPO / "hooks").glob("*.sh")]:
        called |= set(re.findall(r"\baether ([a-z][a-z-]+)", path.read_text("utf-8")))
    called = {c for c in called if c in COMMANDS} - {"agent-hook", "session-hook"}  # the hooks' own entries
    assert called <= shown, f"prompts run hidden commands: {sorted(called - shown)}"
    for name in ("spawn-start", "plan-waves", "build-start", "phase-advance", "loop-decide", "continue-start"):
        assert guide.hidden(name) and name not in shown and f"  {name} " not in listing
        out = project.run(name, "--help")
        assert out.code == 0 and "Usage: aether " + name in out.stdout
    assert len(shown) <= 35 and "  status " in listing and "  next " in listing


def test_help_all_lists_every_command_and_the_originals_under_their_heading(project):
    from aether.cli import COMMANDS, guide

    every = project.run("help", "--all", "--json").json
    assert sorted(every["commands"]) == sorted(COMMANDS)
    listed = [n for g in every["groups"] for n in g["commands"]]
    assert set(listed) == set(COMMANDS)  # each under a heading
    original = next(g for g in every["groups"] if g["title"] == guide.ORIGINAL_TITLE[0])
    assert original["commands"] == list(guide.ORIGINAL) and {"pheromone-decay", "spawn-check", "learning-promote"} <= set(
        original["commands"]
    )
    text = project.run("help", "--all").stdout
    assert "From the original aether-utils.sh:" in text and "  pheromone-decay " in text and "  spawn-start " in text
    assert "aether help --all" in project.run("help").stdout and "  pheromone-decay " not in project.run("help").stdout


def test_no_hint_names_a_hidden_step(project):
    """Hints and errors name what a user runs now (/ant:build N, aether next --build N), not the
    steps `aether next` takes itself — except in the help of those steps."""
    import re

    from aether.cli import guide

    steps = sorted((n for n in guide.EXAMPLES if guide.hidden(n)), key=len, reverse=True)
    pattern = re.compile(r"`aether (" + "|".join(map(re.escape, steps)) + r")(?![\w-])")
    found = []
    for path in (REPO / "scripts" / "aether").rglob("*.py"):
        if path.parent.name == "cli":
            continue
        for i, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if (
                pattern.search(line) and not line.lstrip().startswith(("#", '"""')) and not line.rstrip().endswith("# by hand")
            ):  # a hidden step's answer, for its use by hand
                found.append(f"{path.relative_to(REPO)}:{i}: {line.strip()[:100]}")
    assert not found, "hints that name hidden steps:\n" + "\n".join(found)


def test_help_is_grouped_and_a_command_help_ends_with_its_example(project):
    text = project.run("help").stdout
    heads = [line for line in text.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert heads[:4] == ["Inspect and repair:", "Steer:", "Bug Bash:", "The Queen's protocol:"]
    assert text.index("  status ") < text.index("Steer:") < text.index("  pheromone-emit ")
    out = project.run("status", "--help").stdout
    assert "Example:" in out and out.rstrip().endswith("aether status")
