"""`aether mod …`: what the plugin's mod (hooks/mod.ts) asks the helper — JSON in on stdin, the
envelope out. `serve` says how a slash command is served (colony/mod_serve.py: by the helper's
text, by the mod's loop, or by the markdown command and the model); `launched`, `answer` and
`wait` are the loop's steps (colony/mod.py). A person never runs these."""

from __future__ import annotations

import contextlib
import json

import click

from aether.cli.common import command, example_epilog, read_stdin
from aether.core.exceptions import input_error


def _payload(what: str) -> dict:
    raw = read_stdin(what)
    try:
        data = json.loads(raw or "{}")
    except (ValueError, RecursionError):
        raise input_error("invalid_json", f"{what} is not JSON") from None
    if not isinstance(data, dict):
        raise input_error("invalid_json", f"{what} must be a JSON object")
    return data


def _str(data: dict, key: str, default: str | None = None) -> str | None:
    value = data.get(key, default)
    if value is not None and not isinstance(value, str):
        raise input_error("invalid_input", f"{key} must be a string")
    return value


@click.group("mod", hidden=True, epilog=example_epilog("mod"))
def mod():
    """The mod's calls (hooks/mod.ts, where Claude Code loads plugin code): JSON on stdin."""


# ---------------------------------------------------------------- serve


@contextlib.contextmanager
def _refused():
    """click's refusal of /ant:run's words, as the serve logic hears it."""
    from aether.colony.mod_serve import Unparsed

    try:
        yield
    except click.UsageError as exc:
        raise Unparsed(exc.format_message()) from None


def _parse_run(words: str) -> dict:
    """/ant:run's words as `aether run` parses them: its options are the grammar."""
    from aether.cli.autopilot import run_cmd
    from aether.colony.autopilot import split_arguments

    args = split_arguments(words)
    with _refused():
        if any(a in ("--help", "-h") for a in args[: args.index("--") if "--" in args else len(args)]):
            raise click.UsageError("/ant:run --help is `/ant:help`; the options are in README and `aether run --help`")
        ctx = run_cmd.make_context("run", args)
    return {k: v for k, v in ctx.params.items() if k not in ("as_json", "text_only")}


def _start_run(params: dict) -> dict:
    from aether.cli.autopilot import run_with

    with _refused():
        return run_with(params)


@command("serve")
def serve_cmd():
    """How the mod serves a slash command. stdin: {"command": "build", "args": "1 --approve"}."""
    from aether.colony import mod_serve

    data = _payload("the command")
    name = (_str(data, "command") or "").removeprefix("ant:")
    args = _str(data, "args", "") or ""
    return mod_serve.serve(name, args, _parse_run, _start_run)


# ---------------------------------------------------------------- the loop's steps


@command("launched")
def launched_cmd():
    """The mod sent these spawns. stdin: {"spawns": [{"ref": "b1/w1", "agent_id": "…"} or {"ref", "why"}]}
    (an agent id: it runs; a why: Claude Code refused to start it)."""
    from aether.colony import mod as mod_loop

    data = _payload("the spawns")
    items = data.get("spawns")
    mod_loop.ingest_spool()
    if not isinstance(items, list) or not all(
        isinstance(i, dict)
        and isinstance(i.get("ref"), str)
        and isinstance(i.get("agent_id", ""), (str, type(None)))
        and isinstance(i.get("why", ""), (str, type(None)))
        for i in items
    ):
        raise input_error("invalid_input", "spawns must be a list of {ref, agent_id} or {ref, why}, each a string")
    return mod_loop.launched(items, _str(data, "call"))


@command("answer")
def answer_cmd():
    """An ant's answer from the mod. stdin: {"ref", "agent_id", "text", "usage", "duration_ms", "reason", "calls",
    "error", "rate_limits", "status"} (an ant that ended on an API error: its last message, the session's rate-limit
    windows; an aborted one: its agent's status in Claude Code's list)."""
    from aether.colony import mod as mod_loop

    return mod_loop.take(_payload("the answer"))


@command("wait")
def wait_cmd():
    """Block until these ants answered (at most `seconds`), then the next action (a wait names in
    `stop` the agents past their deadline to stop). stdin: {"refs", "scope", "seconds", "statuses",
    "calls", "stopped": [{"agent_id", "ok", "text"}] (what the mod's stops did)}."""
    from aether.colony import mod as mod_loop

    data = _payload("the wait")
    refs = data.get("refs") or []
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise input_error("invalid_input", "refs must be a list of spawn refs")
    seconds = data.get("seconds", mod_loop.WAIT_SECONDS)
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        raise input_error("invalid_input", "seconds must be a number")
    statuses = data.get("statuses") or {}
    if not isinstance(statuses, dict) or not all(isinstance(v, (str, type(None))) for v in statuses.values()):
        raise input_error("invalid_input", "statuses must map agent ids to Claude Code's status (or null)")
    calls = data.get("calls") or {}
    if not isinstance(calls, dict):
        raise input_error("invalid_input", "calls must map agent ids to lists of calls")
    stopped = data.get("stopped") or []
    if not isinstance(stopped, list) or not all(
        isinstance(i, dict) and isinstance(i.get("agent_id"), str) and isinstance(i.get("ok"), bool) for i in stopped
    ):
        raise input_error("invalid_input", "stopped must be a list of {agent_id, ok, text}: what the mod's stops did")
    mod_loop.keep_calls({str(k): mod_loop.calls_of(v, f"calls.{k}") for k, v in calls.items()})
    mod_loop.ingest_spool()
    return mod_loop.wait(refs, float(seconds), _str(data, "scope"), statuses, stopped, _str(data, "call"))


@command("progress")
def progress_cmd():
    """The status band's line."""
    from aether.colony import mod as mod_loop

    return {"progress": mod_loop.progress()}


for _cmd in (serve_cmd, launched_cmd, answer_cmd, wait_cmd, progress_cmd):
    mod.add_command(_cmd)
