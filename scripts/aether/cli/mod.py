"""`aether mod …`: what the plugin's mod (hooks/mod.ts) asks the helper — JSON in on stdin, the
envelope out. `serve` says how a slash command is served (by the helper's text, by the mod's
loop, or by the markdown command and the model); `launched`, `answer` and `wait` are the
loop's steps (colony/mod.py). A person never runs these."""

from __future__ import annotations

import json
import os
import re

import click

from aether.cli.common import command, example_epilog, read_stdin
from aether.core.exceptions import AetherError, input_error
from aether.rules import drive as drive_rules

# The commands the mod may serve: served by the helper's text (no model request), or by the loop.
TEXT_COMMANDS = ("status", "phase", "focus", "redirect", "feedback", "pause-colony", "resume-colony", "help")
LOOP_COMMANDS = ("build", "run", "plan", "colonize", "continue")
SIGNALS = {"focus": "FOCUS", "redirect": "REDIRECT", "feedback": "FEEDBACK"}
ANSWER = re.compile(r"(?:^|\s)--answer\s+(\S+)(?:\s+(.*\S))?\s*$", re.S)  # the words after it, as typed
PLAN_FLAGS = re.compile(r"(?:^|\s)--(force|accept)(?=\s|$)")
OFF_VALUES = ("prompts", "markdown", "off")  # AETHER_RUNTIME: the markdown commands serve everything


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


def _model(why: str) -> dict:
    return {"serve": "model", "why": why}


def _text(text: str, exit_code: int = drive_rules.EXIT_DONE) -> dict:
    return {"serve": "text", "text": text, "exit_code": exit_code}


def _help_text() -> str:
    """The command reference /ant:help shows: the code block of the plugin's own help.md."""
    from aether.core import paths

    try:
        with open(paths.plugin_file(".claude", "commands", "ant", "help.md"), encoding="utf-8") as fh:
            body = fh.read()
    except OSError as exc:
        raise input_error("help_missing", f"the plugin's help.md cannot be read ({exc.strerror or exc})") from None
    found = re.search(r"```\n(.*?)```", body, re.S)
    if found is None:
        raise input_error("help_missing", "help.md holds no command reference")
    return found.group(1).rstrip("\n")


def _serve_text(name: str, args: str) -> dict:
    from aether.colony import handoff, status
    from aether.state import pheromones

    words = args.strip()
    if name == "status":
        return _model("a question for the model") if words else _text(status.overview()["text"])
    if name == "phase":
        which = words if words == "list" or words.isdigit() else ("list" if words else None)
        return _text(status.phase_view(which)["text"])
    if name == "help":
        return _text(_help_text())
    if name in SIGNALS:
        if not words:
            return _model("no text: the model asks for it")
        if len(words) >= 2 and words[0] == words[-1] and words[0] in "\"'":
            words = words[1:-1]
        out = pheromones.emit(SIGNALS[name], words, None, None, None, False, False)
        lines = [f"Warning: {out['warning']}", ""] if out.get("warning") else []
        return _text("\n".join(lines + [pheromones.render(None)["text"]]))
    if name == "pause-colony":
        out = handoff.pause(words or None)
        return _text(out["text"] + "\n\nYou can now /clear or end the session; /ant:resume-colony goes on.")
    return _text(handoff.resume()["text"])


def _loop_action(name: str, args: str) -> dict:
    """The first action of a driven command, from its arguments as the markdown command reads them."""
    from aether.colony import drive

    words = args.strip()
    if name == "build":  # as build.md reads them: the phase number, then --approve, --resume or --answer
        found = ANSWER.search(words)
        head = words[: found.start()] if found else words
        parts = head.split()
        phases = [p for p in parts if p.isdigit() and int(p) >= 1]
        if not phases:
            raise input_error("invalid_arguments", "Run /ant:build <phase>.")
        flags = {p for p in parts if p not in phases[:1]}
        if found:
            if flags:
                raise input_error("invalid_arguments", f"/ant:build {phases[0]} --answer takes no other option: got {words!r}")
            choice = found.group(1) if found.group(1) in ("accept", "stop") else "refine"
            typed = found.group(1) + (" " + found.group(2) if found.group(2) else "")  # the words after --answer, as typed
            return drive.answer(int(phases[0]), choice, typed)
        if flags - {"--approve", "--resume"} or len(flags) > 1:
            raise input_error("invalid_arguments", f"/ant:build takes a phase and one of --approve, --resume, --answer: got {words!r}")
        return drive.next_action(int(phases[0]), approve="--approve" in flags, resume="--resume" in flags)
    if name == "plan":  # --force and --accept; every other word is guidance, as written
        flags = {m.group(1) for m in PLAN_FLAGS.finditer(args)}
        guidance = PLAN_FLAGS.sub(" ", args).strip() or None
        return drive.next_action(plan=True, guidance=guidance, force="force" in flags, accept="accept" in flags)
    if name == "colonize":
        return drive.next_action(colonize=True)
    if name == "continue":
        return drive.next_action(closing=True)
    return _run_action(words)


def _run_action(words: str) -> dict:
    from aether.cli.autopilot import run_cmd, run_with
    from aether.colony.autopilot import split_arguments

    args = split_arguments(words)
    if any(a in ("--help", "-h") for a in args[: args.index("--") if "--" in args else len(args)]):
        raise click.UsageError("/ant:run --help is `/ant:help`; the options are in README and `aether run --help`")
    ctx = run_cmd.make_context("run", args)
    params = {k: v for k, v in ctx.params.items() if k not in ("as_json", "text_only")}
    if params.get("stop") or params.get("dry_run"):
        out = run_with(params)
        return {"action": "done", "text": out.get("text") or json.dumps(out, ensure_ascii=False), "command": None}
    return run_with({**params, "driver": "mod"})  # the mod's loop has a clock: it can wait out a limit


def serve(name: str, args: str) -> dict:
    from aether.colony import mod as mod_loop

    if (os.environ.get("AETHER_RUNTIME") or "").lower() in OFF_VALUES:
        return _model("AETHER_RUNTIME asks for the markdown commands")
    if name in TEXT_COMMANDS:
        return _serve_text(name, args)
    if name not in LOOP_COMMANDS:
        return _model("a command that needs the model")
    mod_loop.ingest_spool()  # answers the mod kept when the helper could not take them: recorded first
    try:
        action = _loop_action(name, args)
    except click.UsageError as exc:
        return _text(f"/ant:{name}: {exc.format_message()}", drive_rules.EXIT_ERROR)
    action = mod_loop.for_mod(action)
    action["line"] = f"/ant:{name} runs in the plugin's mod (runtime mod: no Queen turns) — " + (action.get("line") or action["action"])
    return {"serve": "loop", "runtime": mod_loop.RUNTIME, "action": action, "spool": mod_loop.spool_dir()}


@command("serve")
def serve_cmd():
    """How the mod serves a slash command. stdin: {"command": "build", "args": "1 --approve"}."""
    data = _payload("the command")
    name = (_str(data, "command") or "").removeprefix("ant:")
    args = _str(data, "args", "") or ""
    try:
        return serve(name, args)
    except AetherError as exc:  # the command's answer: the helper's error, shown as the markdown command would
        return _text(f"Aether: {exc.message}", drive_rules.EXIT_ERROR)


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
