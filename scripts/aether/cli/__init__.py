"""The `aether` command: a click group that imports a subcommand's module only when it runs.

Every subcommand answers with one JSON envelope (see `aether.core.output`); this module turns
every failure — click usage errors included — into the error envelope and its exit code.
"""

from __future__ import annotations

import os
import sys

import click

from aether import __version__
from aether.core.exceptions import EXIT_INPUT, EXIT_INTERNAL, AetherError

# name → "module:attribute". Modules are imported lazily, so adding a command costs
# the other commands nothing at start-up.
COMMANDS = {
    # meta
    "help": "aether.cli.meta:help_cmd",
    "version": "aether.cli.meta:version_cmd",
    "self-check": "aether.cli.self_check:self_check",
    "uninstall": "aether.cli.uninstall:uninstall",
    "watch": "aether.cli.watch:watch",
    # pheromones
    "pheromone-decay": "aether.cli.pheromones:decay",
    "pheromone-effective": "aether.cli.pheromones:effective",
    "pheromone-batch": "aether.cli.pheromones:batch",
    "pheromone-cleanup": "aether.cli.pheromones:cleanup",
    "pheromone-validate": "aether.cli.pheromones:validate",
    "pheromone-emit": "aether.cli.pheromones:emit",
    "pheromone-render": "aether.cli.pheromones:render",
    # state files
    "validate-state": "aether.cli.inspect_state:validate_state",
    "state-restore": "aether.cli.inspect_state:state_restore",
    "query": "aether.cli.inspect_state:query",
    # errors.json
    "error-add": "aether.cli.error_log:error_add",
    "error-pattern-check": "aether.cli.error_log:error_pattern_check",
    "error-summary": "aether.cli.error_log:error_summary",
    # events.json and activity.log
    "event-add": "aether.cli.events:event_add",
    "activity-log": "aether.cli.events:activity_log",
    "activity-log-init": "aether.cli.events:activity_log_init",
    "activity-log-read": "aether.cli.events:activity_log_read",
    # memory.json
    "memory-compress": "aether.cli.memory:memory_compress",
    "decision-add": "aether.cli.memory:decision_add",
    "learning-add": "aether.cli.memory:learning_add",
    # global learnings (~/.aether)
    "learning-promote": "aether.cli.learning:learning_promote",
    "learning-inject": "aether.cli.learning:learning_inject",
    "learning-load": "aether.cli.learning:learning_load",
    "learning-init-global": "aether.cli.learning:learning_init_global",
    # colony
    "colony-init": "aether.cli.colony_init:colony_init",
    "complexity-detect": "aether.cli.complexity:complexity_detect",
    "colony-pause": "aether.cli.handoff:colony_pause",
    "colony-resume": "aether.cli.handoff:colony_resume",
    # spawning
    "spawn-check": "aether.cli.spawning:spawn_check",
    "spawn-start": "aether.cli.spawning:spawn_start",
    "spawn-finish": "aether.cli.spawning:spawn_finish",
    "spawn-requests": "aether.cli.spawning:spawn_requests",
    # plans, builds and phases
    "plan-start": "aether.cli.plans:plan_start",
    "plan-load": "aether.cli.plans:plan_load",
    "next": "aether.cli.drive:next_cmd",
    "record": "aether.cli.drive:record",
    "agent-hook": "aether.cli.drive:agent_hook",
    "mod": "aether.cli.mod:mod",
    "run": "aether.cli.autopilot:run_cmd",
    "session-hook": "aether.cli.session_start:session_hook",
    "build-start": "aether.cli.build_start:build_start",
    "build-finish": "aether.cli.build_finish:build_finish",
    "build-abort": "aether.cli.build_finish:build_abort",
    "phase-advance": "aether.cli.phase_advance:phase_advance",
    "verify-brief": "aether.cli.verification:verify_brief",
    "phase": "aether.cli.status:phase_show",
    "status": "aether.cli.status:status",
    "evidence": "aether.cli.evidence:evidence_cmd",
    # waves
    "plan-waves": "aether.cli.waves:plan_waves",
    "wave-conflicts": "aether.cli.waves:wave_conflicts",
    # failures
    "failure-decide": "aether.cli.failures:failure_decide",
    "friction-add": "aether.cli.failures:friction_add",
    "abort-report": "aether.cli.failures:abort_report",
    # review
    "review-needed": "aether.cli.review:review_needed",
    "review-decide": "aether.cli.review:review_decide",
    # refinement loops
    "loop-init": "aether.cli.loops:loop_init",
    "loop-decide": "aether.cli.loops:loop_decide",
    "loop-score": "aether.cli.loops:loop_score",
    "feedback-store": "aether.cli.loops:feedback_store",
    "feedback-get": "aether.cli.loops:feedback_get",
    # modes, lifecycle, research, recovery and completion
    "mode-profile": "aether.cli.modes:mode_profile",
    "syntax-check": "aether.cli.syntax_check:syntax_check",
    "signals-suggest": "aether.cli.between_phases:signals_suggest",
    "continue-start": "aether.cli.between_phases:continue_start",
    "hygiene-check": "aether.cli.between_phases:hygiene_check",
    "research-plan": "aether.cli.research:research_plan",
    "research-collect": "aether.cli.research:research_collect",
    "plan-draft-store": "aether.cli.drafts:plan_draft_store",
    "plan-draft-get": "aether.cli.drafts:plan_draft_get",
    "loop-present": "aether.cli.critique:loop_present",
    "task-skip": "aether.cli.skips:task_skip",
    "phase-skip": "aether.cli.skips:phase_skip",
    "checkpoint-list": "aether.cli.recovery:checkpoint_list",
    "checkpoint-restore": "aether.cli.recovery:checkpoint_restore",
    "worktrees": "aether.cli.worktrees:worktrees",
    "friction-summary": "aether.cli.recovery:friction_summary",
    "completion-summary": "aether.cli.completion:completion_summary",
    # bug bash
    "bug": "aether.cli.bug:bug",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):  # `aether --help`: what a person runs (cli/guide.py)
        from aether.cli import guide

        return sorted(name for name in COMMANDS if not guide.hidden(name))

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(__import__(module, fromlist=[attr]), attr)

    def resolve_command(self, ctx, args):
        name = args[0] if args else None
        if name and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, COMMANDS, n=3)
            hint = f" (did you mean: {', '.join(close)}?)" if close else ""
            raise AetherError(
                "unknown_command",
                f"unknown command {name!r}{hint}; `aether help` lists them all",
                EXIT_INPUT,
            )
        return super().resolve_command(ctx, args)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", prog_name="aether", message="%(prog)s %(version)s")
@click.option("--pretty", is_flag=True, help="Indent JSON output (also: AETHER_PRETTY=1, or a terminal).")
def cli(pretty: bool) -> None:
    """Aether's helper: state, pheromones, policies and rendering for the ant colony.

    Every command prints one JSON envelope: {"ok":true,"result":…} on stdout, or
    {"ok":false,"error":…,"code":…} on stderr with a non-zero exit (1: bad input,
    2: state problem, 3: internal error). Display commands (status, help, …) print
    text unless given --json. Free text can be passed as `-` and sent on stdin.

    State lives in <project>/.aether/data (the nearest folder holding .aether/, else the
    git top level, else the working directory; AETHER_DATA_DIR overrides) and in
    ~/.aether (AETHER_HOME overrides).
    """
    if pretty:
        from aether.core import output

        output.set_pretty(True)


def _fail(exc: AetherError) -> int:
    from aether.core import output

    output.failure(exc.envelope())
    return exc.exit_code


def main(argv=None) -> None:
    """Console entry point: run the CLI, never let a traceback escape."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        cli.main(args=args, prog_name="aether", standalone_mode=False)
        code = 0
    except AetherError as exc:
        code = _fail(exc)
    except click.exceptions.Exit as exc:  # --help, --version
        code = exc.exit_code
    except click.BadParameter as exc:
        code = _fail(AetherError("invalid_argument", exc.format_message().replace("\ue000", ""), EXIT_INPUT))
    except click.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `aether`: show the help
            from aether.core import output

            assert exc.ctx is not None  # click raises it with the group's context
            output.write(sys.stdout, exc.ctx.get_help())
            sys.exit(0)
        message = exc.format_message().replace("\ue000", "")  # common.LITERAL
        if isinstance(exc, click.NoSuchOption):
            message = message.rstrip(".") + ("; text that starts with `-` goes after `--` (`-- '-x'`) or on stdin as `-`")
        if exc.ctx is not None and exc.ctx.command_path != "aether":
            message += f" (see `{exc.ctx.command_path} --help`)"
        code = _fail(AetherError("usage_error", message, EXIT_INPUT))
    except click.ClickException as exc:
        code = _fail(AetherError("usage_error", exc.format_message(), EXIT_INPUT))
    except (click.Abort, KeyboardInterrupt):
        code = _fail(AetherError("interrupted", "interrupted", 130))
    except BrokenPipeError:
        # The reader went away (e.g. `aether status | head -1`): stop quietly.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        code = 0
    except RecursionError:
        code = _fail(AetherError("input_too_deep", "input is nested too deeply to process", EXIT_INPUT))
    except MemoryError:
        code = _fail(AetherError("input_too_large", "input is too large to process", EXIT_INPUT))
    except Exception as exc:  # a bug in the helper: report it, never a traceback
        if os.environ.get("AETHER_DEBUG"):
            import traceback

            traceback.print_exc()
        code = _fail(
            AetherError(
                "internal_error",
                f"internal error ({type(exc).__name__}: {exc}); please report it with the "
                f"command that caused it (AETHER_DEBUG=1 prints the traceback)",
                EXIT_INTERNAL,
            )
        )
    sys.exit(code)
