"""run: the autopilot — phase after phase until COMPLETED or a stop point."""

from __future__ import annotations

import click

from aether.cli.common import TEXT, command, read_stdin, unmark

PHASE = click.IntRange(min=1)
RANGE = ("from_phase", "to_phase", "only", "max_phases")


def _options(params: dict) -> dict:
    words = " ".join(params.get("words") or ()) or None
    return {
        "from": params.get("from_phase"),
        "to": params.get("to_phase"),
        "only": params.get("only"),
        "max_phases": params.get("max_phases"),
        "budget": params.get("budget"),
        "phase_budget": params.get("phase_budget"),
        "auto_approve": params.get("auto_approve"),
        "approve": params.get("approve"),
        "answer": params.get("answer"),
        "words": words,
        "wait_limits": params.get("wait"),
        "driver": params.get("driver"),
    }


def _check(params: dict) -> None:
    given = [name for name in ("stop", "dry_run", "approve", "answer") if params.get(name) not in (None, False)]
    if len(given) > 1:
        raise click.UsageError(f"--{given[0].replace('_', '-')} and --{given[1].replace('_', '-')} go separately")
    if params.get("stop") and any(params.get(k) not in (None, False) for k in (*RANGE, "budget", "phase_budget", "auto_approve", "wait")):
        raise click.UsageError("--stop takes no other option: it asks the running run to stop")
    if params.get("words") and params.get("answer") is None:
        raise click.UsageError(
            f"unexpected words {' '.join(params['words'])!r}: words go with --answer (`aether run --help` lists the options)"
        )
    if params.get("answer") is not None and not params.get("words"):
        raise click.UsageError("--answer needs the user's words after the choice (`-` for stdin)")


def run_with(params: dict) -> dict:
    from aether.colony import autopilot, drive
    from aether.colony import mod as mod_loop

    _check(params)
    if params.get("words") == ("-",):
        params["words"] = (read_stdin("the answer"),)
    options = _options(params)
    if params.get("stop"):
        return autopilot.request_stop()
    if params.get("dry_run"):
        from aether.colony import dry_run

        return dry_run.dry_run(options)
    mod_loop.ingest_spool()  # answers the mod kept when its helper failed: recorded first, never run again
    result = autopilot.start(options)
    result.setdefault("line", drive.action_line(result))
    return result


@command("run", text=True)
@click.option(
    "--from",
    "from_phase",
    type=PHASE,
    help="Start at this phase (earlier open phases are skipped, when they may be: `phase-skip`'s rules).",
)
@click.option("--to", "to_phase", type=PHASE, help="Stop after this phase (default: the plan's last).")
@click.option("--only", type=PHASE, help="Build this one phase.")
@click.option("--max-phases", type=click.IntRange(min=1), help="Build at most this many phases.")
@click.option(
    "--budget",
    metavar="TOKENS",
    help="This run's spend cap, e.g. 2M or 800k (default: the mode's, or `budget: run:` in .aether/config.yaml).",
)
@click.option("--phase-budget", metavar="TOKENS", help="What one phase may spend in this run, e.g. 500k.")
@click.option("--auto-approve", is_flag=True, help="Let the run approve wave plans (not in FULL mode).")
@click.option(
    "--wait",
    is_flag=True,
    help="When a usage or rate limit holds the ants, wait until it lifts and go on (where the plugin's mod runs the "
    "loop; default: stop). `run: on_limit: wait` in .aether/config.yaml says the same.",
)
@click.option("--approve", is_flag=True, help="Approve the wave plan the run stopped for, and go on.")
@click.option(
    "--answer",
    type=click.Choice(["refine", "accept", "stop"]),
    help="Answer the code loop the run stopped for; the user's words follow (`-`: stdin).",
)
@click.option("--dry-run", is_flag=True, help="Show the phases, tasks, castes and an estimate; change nothing.")
@click.option("--stop", is_flag=True, help="Ask the running run to stop at its next wave boundary (any terminal).")
@click.argument("words", nargs=-1, type=TEXT)
def run_cmd(**params):
    """Build phase after phase, unattended, until the colony is COMPLETED or a stop point: a wave
    plan to approve, a code loop's question, an abort from the failure protocol, failed tasks,
    the spend cap, or --stop. Answers the same actions as `aether next` (spawn, lessons, ask,
    done, stop); every stop says why, what was done, what it cost and the one command that
    continues. Without range options it goes on with the run that stopped. `aether run -` reads
    the options as one line from stdin (what /ant:run passes)."""
    if params.get("words") == ("-",) and not any(v not in (None, False, ()) for k, v in params.items() if k != "words"):
        from aether.colony.autopilot import split_arguments

        ctx = click.get_current_context()
        args = split_arguments(read_stdin("the /ant:run arguments"))
        sub = ctx.command.make_context("run", args, parent=ctx.parent)
        params = {k: unmark(v) for k, v in sub.params.items() if k not in ("as_json", "text_only")}
        return run_with(params)
    return run_with(params)
