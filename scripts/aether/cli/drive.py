"""next, record and agent-hook: the helper drives the build, the Queen spawns and judges."""

from __future__ import annotations

import json
import os
import sys

import click

from aether.cli.common import CONTENT, TEXT, command
from aether.core.text import one_line

PHASE = click.IntRange(min=1)


def _contradiction(phase, approve, resume, plan, colonize, force, answer, closing=False) -> str | None:
    """Flags that cannot go together, or go with a run not asked for (never silently ignored)."""
    if (phase is not None) + plan + colonize + closing > 1:
        return "--build, --plan, --colonize and --continue each go on with a different run: give one"
    with_build = [name for name, given in (("--approve", approve), ("--resume", resume), ("--answer", answer is not None)) if given]
    if with_build and phase is None:
        return f"{with_build[0]} goes with --build N"
    if len(with_build) > 1:
        return f"{' and '.join(with_build)} contradict each other: give one"
    if force and not plan:
        return "--force goes with --plan"
    return None


@command("next", text=True)
@click.option("--build", "phase", type=PHASE, help="The phase to build (started, or resumed where it stands).")
@click.option("--approve", is_flag=True, help="The user approves the wave plan that awaits approval.")
@click.option("--resume", is_flag=True, help="Start the phase's build over: a new Phase Lead plan.")
@click.option(
    "--plan",
    "plan",
    is_flag=True,
    help="Plan the colony: scouts, then planner and critic in a loop (WORDS: the user's guidance, `-` for stdin).",
)
@click.option(
    "--colonize",
    is_flag=True,
    help="Map the codebase: the mode from its complexity, colonizers in one message, their maps recorded as decisions.",
)
@click.option(
    "--continue",
    "closing",
    is_flag=True,
    help="Close the current phase (/ant:continue): its lessons when due, the archivist when due, phase-advance.",
)
@click.option("--accept", is_flag=True, help="With --plan: take the draft of a plan loop that asked you, as it is.")
@click.option("--force", is_flag=True, help="With --plan: replace a plan that has progress (completed phases kept).")
@click.option(
    "--answer", type=TEXT, help="The user's answer to a code loop that asked — refine, accept or stop — with their words (`-`: stdin)."
)
@click.argument("words", type=CONTENT, required=False)
def next_cmd(phase, approve, resume, plan, colonize, closing, accept, force, answer, words):
    """The one next thing the Queen does in the current build or plan run: `spawn` (Agent calls to send in
    ONE message), `ask` (show the text; the user answers with the command given), `lessons`
    (write them, record with `aether record lessons -`), `done` or `stop` (show the text). The
    helper runs every step that is its own on the way; asked twice, it answers the same."""
    from aether.colony import drive
    from aether.colony import mod as mod_loop

    contradiction = _contradiction(phase, approve, resume, plan, colonize, force, answer, closing)
    if contradiction:
        raise click.UsageError(contradiction)
    mod_loop.ingest_spool()  # answers the mod kept when its helper failed: recorded first, never run again
    if answer is not None:
        if phase is None or not words:
            raise click.UsageError("--answer needs --build N and the user's words (`-` for stdin)")
        result = drive.answer(phase, answer, words)
    else:
        if words and not plan:
            raise click.UsageError("WORDS go with --plan (guidance) or --answer")
        if accept and not plan:
            raise click.UsageError("--accept goes with --plan")
        result = drive.next_action(
            phase, approve=approve, resume=resume, plan=plan, guidance=words, force=force, colonize=colonize, accept=accept, closing=closing
        )
    result.setdefault("line", drive.action_line(result))
    return result


@command("record", text=True)
@click.argument("spawn_id", type=TEXT)
@click.argument("answer", type=CONTENT)
def record(spawn_id, answer):
    """Record SPAWN_ID's ANSWER (`-` for stdin), as the ant gave it — what the PostToolUse hook
    does when Claude Code's hooks run. `lessons` records the phase's lessons (one per line;
    `global <category>: …` promotes one across projects). After the last answer of a spawn
    action the result holds the next action (`next`)."""
    from aether.colony import drive

    result = drive.record(spawn_id, answer)
    if isinstance(result.get("next"), dict):
        result["text"] = drive.action_line(result["next"])
    return result


HOOK_LOCK_WAIT = 25  # seconds a hook waits for a state file's lock (a step holds it to its end); its timeout is 30 or more
HOOK_EVENTS = {
    "pre": "PreToolUse",
    "post": "PostToolUse",
    "failure": "PostToolUseFailure",
    "denied": "PermissionDenied",
    "start": "SubagentStart",
    "stop": "SubagentStop",
    "prompt": "UserPromptSubmit",
}


@click.command("agent-hook", hidden=True)
@click.argument("event", type=click.Choice(list(HOOK_EVENTS)))
def agent_hook(event):
    """Claude Code's hooks for the colony's ants (hooks/hooks.json): PreToolUse and PostToolUse(Failure)
    on Agent, SubagentStop, and UserPromptSubmit for the notifications that carry ants' answers.
    Never fails Claude Code's step: an error leaves it as it was and, where the Queen reads the
    hook's context, says so."""
    os.environ.setdefault("AETHER_LOCK_TIMEOUT", str(HOOK_LOCK_WAIT))
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        payload = payload if isinstance(payload, dict) else {}
        if event == "pre":  # before every ant: the spawn records only, none of the protocols
            from aether.colony import launch

            out = launch.pre_hook(payload)
        else:
            from aether.colony import handback

            out = {
                "post": handback.post_hook,
                "failure": handback.failure_hook,
                "denied": handback.failure_hook,
                "start": handback.start_hook,
                "stop": handback.stop_hook,
                "prompt": handback.prompt_hook,
            }[event](payload)
    except Exception as exc:  # noqa: BLE001 — a hook must never break Claude Code's step
        out = (
            None
            if event in ("pre", "start", "stop", "denied")
            else {
                "hookSpecificOutput": {
                    "hookEventName": HOOK_EVENTS[event],
                    "additionalContext": f"Aether could not record an answer ({type(exc).__name__}: "
                    f"{one_line(exc, 300)}); `aether next` says what to do.",
                }
            }
        )
    if out:
        text = json.dumps(out, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from the payload: escaped, still the same JSON
            text = json.dumps(out)
        sys.stdout.write(text)
