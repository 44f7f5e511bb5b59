"""What `aether help` and every `--help` teach: the commands grouped by who runs them and why,
and one example per command (shown at the end of its `--help`)."""

from __future__ import annotations

# (title, what the group is for, commands): what `aether help` shows — what a person runs, and
# what the slash commands and hooks run. Every other command is hidden (HIDDEN): the steps the
# helper now takes itself inside `aether next`, kept for tests and for recovery by hand
# (`aether <command> --help` still explains each). tests/test_help_texts.py checks the lists.
GROUPS = (
    (
        "Inspect and repair",
        "run these by hand: where the colony stands, and putting damage right",
        (
            "status",
            "watch",
            "evidence",
            "phase",
            "query",
            "validate-state",
            "state-restore",
            "activity-log-read",
            "error-summary",
            "completion-summary",
            "abort-report",
            "checkpoint-list",
            "checkpoint-restore",
            "build-abort",
            "worktrees",
            "memory-compress",
            "mode-profile",
            "uninstall",
            "help",
            "version",
        ),
    ),
    (
        "Steer",
        "signals and decisions that change what the colony does next",
        (
            "pheromone-emit",
            "pheromone-render",
            "pheromone-cleanup",
            "colony-pause",
            "colony-resume",
            "task-skip",
            "phase-skip",
            "decision-add",
            "run",
        ),
    ),
    ("Bug Bash", "one bug at a time; approving a fix plan is a person's act: `/ant:bug approve <id>`, typed in Claude Code", ("bug",)),
    (
        "The Queen's protocol",
        "the slash commands run these; `aether next` takes every other step itself",
        ("next", "record", "colony-init", "hygiene-check", "event-add"),
    ),
)


# The subcommands of the original `aether-utils.sh` that this helper replaces: most are now steps it
# takes itself, so `aether help` hides them; `aether help --all` lists them under their own heading,
# for whoever comes from the original.
ORIGINAL = (
    "pheromone-decay",
    "pheromone-effective",
    "pheromone-batch",
    "pheromone-cleanup",
    "pheromone-validate",
    "validate-state",
    "spawn-check",
    "memory-compress",
    "error-add",
    "error-pattern-check",
    "error-summary",
    "activity-log",
    "activity-log-init",
    "activity-log-read",
    "learning-promote",
    "learning-inject",
    "learning-load",
    "help",
    "version",
)
OTHER_STEPS = (
    "The helper's own steps",
    "hidden from `aether help`: `aether next` and the hooks run them; kept for the tests and recovery by hand",
)
ORIGINAL_TITLE = (
    "From the original aether-utils.sh",
    "its subcommands, kept under their names; those not listed above are steps the helper takes itself",
)


# One example per command: the first word is the command itself.
EXAMPLES = {
    "help": "aether help",
    "version": "aether version",
    "self-check": "aether self-check           # every module of the helper imports (an install's check)",
    "watch": "aether watch               # in a second terminal while a colony builds",
    "evidence": "aether evidence w1          # what ant w1 of the latest build ran and wrote",
    "uninstall": "aether uninstall            # lists what would go; --yes removes it",
    "pheromone-decay": "aether pheromone-decay 0.7 1800 3600",
    "pheromone-effective": "aether pheromone-effective 0.9 0.7",
    "pheromone-batch": "aether pheromone-batch",
    "pheromone-cleanup": "aether pheromone-cleanup",
    "pheromone-validate": "aether pheromone-validate 'input validation on every endpoint'",
    "pheromone-emit": "aether pheromone-emit FOCUS - <<'EOF'\n  input validation on every endpoint\n  EOF",
    "pheromone-render": "aether pheromone-render --caste builder",
    "validate-state": "aether validate-state all",
    "state-restore": "aether state-restore pheromones",
    "query": "aether query 'signals[].content' --file pheromones",
    "error-add": "aether error-add runtime high 'the importer crashes on empty files' 2",
    "error-pattern-check": "aether error-pattern-check",
    "error-summary": "aether error-summary",
    "event-add": "aether event-add phase_started queen 'phase 2 started'",
    "activity-log": "aether activity-log BUILD builder 'wrote src/api.py'",
    "activity-log-init": "aether activity-log-init 2 'REST endpoints'",
    "activity-log-read": "aether activity-log-read builder",
    "memory-compress": "aether memory-compress",
    "decision-add": "aether decision-add 'use SQLite for the first release'",
    "learning-add": "aether learning-add 2 - --each-line --phase-name 'REST endpoints' < lessons.txt",
    "learning-promote": "aether learning-promote - --category tooling <<'EOF'\n  pin the test runner's version\n  EOF",
    "learning-inject": "aether learning-inject security,performance",
    "learning-load": "aether learning-load",
    "learning-init-global": "aether learning-init-global",
    "colony-init": "aether colony-init 'Build a todo REST API with tests'",
    "complexity-detect": "aether complexity-detect --apply",
    "colony-pause": "aether colony-pause --note - <<'EOF'\n  halfway through phase 2\n  EOF",
    "colony-resume": "aether colony-resume",
    "next": "aether next --build 2          # then act on result.action; `aether next` goes on",
    "record": "aether record w1 - < answer.txt   # only when Claude Code's Agent hooks are off",
    "agent-hook": "aether agent-hook post < hook-input.json   # Claude Code runs this (hooks/hooks.json)",
    "mod": "aether mod serve < command.json   # the plugin's mod runs this (hooks/mod.ts)",
    "session-hook": "aether session-hook < hook-input.json   # Claude Code runs this (hooks/session.sh)",
    "worktrees": "aether worktrees              # --clean removes what a crash left; --drop BRANCH a kept result",
    "run": "aether run --dry-run --text    # what /ant:run would build and spend; `aether run --stop` stops it",
    "spawn-check": "aether spawn-check 2",
    "spawn-start": "aether spawn-start w1",
    "spawn-finish": "aether spawn-finish w1 - < answer.txt",
    "spawn-requests": "aether spawn-requests w1 - < answer.txt",
    "plan-start": "aether plan-start",
    "plan-load": "aether plan-load PROJECT_PLAN.json",
    "build-start": "aether build-start 1",
    "build-finish": "aether build-finish 1 --watcher - < watcher.txt",
    "build-abort": "aether build-abort 1 --reason - <<'EOF'\n  a common cause broke three tasks\n  EOF",
    "phase-advance": "aether phase-advance",
    "verify-brief": "aether verify-brief 1",
    "phase": "aether phase list",
    "status": "aether status",
    "plan-waves": "aether plan-waves - < lead-plan.json",
    "wave-conflicts": "aether wave-conflicts 1",
    "failure-decide": "aether failure-decide --worker w3",
    "friction-add": "aether friction-add 1.3 'retried with the fixed import'",
    "abort-report": "aether abort-report 2",
    "review-needed": "aether review-needed 1",
    "review-decide": "aether review-decide 1 - < findings.json",
    "loop-init": "aether loop-init plan",
    "loop-decide": "aether loop-decide loop_1770000000_a1b2 85",
    "loop-score": "aether loop-score - < parts.json",
    "feedback-store": "aether feedback-store loop_1770000000_a1b2 - --kind critic < critique.md",
    "feedback-get": "aether feedback-get loop_1770000000_a1b2",
    "mode-profile": "aether mode-profile --mode FULL",
    "syntax-check": "aether syntax-check src/api.py src/db.py",
    "signals-suggest": "aether signals-suggest",
    "continue-start": "aether continue-start",
    "hygiene-check": "aether hygiene-check",
    "research-plan": "aether research-plan - < requirements.md",
    "research-collect": "aether research-collect - < scout-answers.txt",
    "plan-draft-store": "aether plan-draft-store loop_1770000000_a1b2 - < draft.json",
    "plan-draft-get": "aether plan-draft-get loop_1770000000_a1b2",
    "loop-present": "aether loop-present loop_1770000000_a1b2",
    "task-skip": "aether task-skip 1.3 --reason 'done by hand'",
    "phase-skip": "aether phase-skip 2 --reason 'out of scope for now'",
    "checkpoint-list": "aether checkpoint-list",
    "checkpoint-restore": "aether checkpoint-restore --phase 2",
    "friction-summary": "aether friction-summary",
    "completion-summary": "aether completion-summary",
    "bug": "aether bug init 'Login fails with special characters' --test tests/test_auth.py",
}


def group_of(name: str) -> str | None:
    """The help group a command is shown in, or None: hidden."""
    return next((title for title, _why, names in GROUPS if name in names), None)


def hidden(name: str) -> bool:
    return group_of(name) is None
