"""How the plugin's mod (hooks/mod.ts) serves a slash command, `aether mod serve`: by the helper's
text (no model request), by the mod's loop (colony/mod.py), or by the markdown command and the
model — and the command's arguments, read as the markdown command reads them. /ant:run's words
are `aether run`'s options: the CLI hands in its own parser for them (cli/mod.py), so that the
grammar lives once (docs/decisions/the-mod-runs-the-loop.md)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

from aether.colony import drive, handoff, status
from aether.colony import mod as mod_loop
from aether.core import paths
from aether.core.exceptions import AetherError, input_error
from aether.rules import drive as drive_rules
from aether.state import pheromones

# The commands the mod may serve: served by the helper's text (no model request), or by the loop.
TEXT_COMMANDS = ("status", "phase", "focus", "redirect", "feedback", "pause-colony", "resume-colony", "help")
LOOP_COMMANDS = ("build", "run", "plan", "colonize", "continue")
SIGNALS = {"focus": "FOCUS", "redirect": "REDIRECT", "feedback": "FEEDBACK"}
ANSWER = re.compile(r"(?:^|\s)--answer\s+(\S+)(?:\s+(.*\S))?\s*$", re.S)  # the words after it, as typed
PLAN_FLAGS = re.compile(r"(?:^|\s)--(force|accept)(?=\s|$)")
OFF_VALUES = ("prompts", "markdown", "off")  # AETHER_RUNTIME: the markdown commands serve everything


class Unparsed(Exception):
    """A slash command's words its grammar refuses: the grammar's own message."""


def _model(why: str) -> dict:
    return dict(zip(mod_loop.SERVED_MODEL, ("model", why), strict=True))


def _text(text: str, exit_code: int = drive_rules.EXIT_DONE) -> dict:
    return dict(zip(mod_loop.SERVED_TEXT, ("text", text, exit_code), strict=True))


def help_text() -> str:
    """The command reference /ant:help shows: the code block of the plugin's own help.md."""
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
    words = args.strip()
    if name == "status":
        return _model("a question for the model") if words else _text(status.overview()["text"])
    if name == "phase":
        which = words if words == "list" or words.isdigit() else ("list" if words else None)
        return _text(status.phase_view(which)["text"])
    if name == "help":
        return _text(help_text())
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


def _build_action(words: str) -> dict:
    """As build.md reads its words: the phase number, then --approve, --resume or --answer."""
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


def _run_action(words: str, parse_run: Callable[[str], dict], start_run: Callable[[dict], dict]) -> dict:
    """/ant:run: a stop or a dry run is the helper's text; any other run is driven by the mod,
    whose loop has a clock (it can wait out a limit)."""
    params = parse_run(words)
    if params.get("stop") or params.get("dry_run"):
        out = start_run(params)
        return {"action": "done", "text": out.get("text") or json.dumps(out, ensure_ascii=False), "command": None}
    return start_run({**params, "driver": "mod"})


def _loop_action(name: str, args: str, parse_run: Callable[[str], dict], start_run: Callable[[dict], dict]) -> dict:
    """The first action of a driven command, from its arguments as the markdown command reads them."""
    if name == "build":
        return _build_action(args.strip())
    if name == "plan":  # --force and --accept; every other word is guidance, as written
        flags = {m.group(1) for m in PLAN_FLAGS.finditer(args)}
        guidance = PLAN_FLAGS.sub(" ", args).strip() or None
        return drive.next_action(plan=True, guidance=guidance, force="force" in flags, accept="accept" in flags)
    if name == "colonize":
        return drive.next_action(colonize=True)
    if name == "continue":
        return drive.next_action(closing=True)
    return _run_action(args.strip(), parse_run, start_run)


def _serve(name: str, args: str, parse_run: Callable[[str], dict], start_run: Callable[[dict], dict]) -> dict:
    if (os.environ.get("AETHER_RUNTIME") or "").lower() in OFF_VALUES:
        return _model("AETHER_RUNTIME asks for the markdown commands")
    if name in TEXT_COMMANDS:
        return _serve_text(name, args)
    if name not in LOOP_COMMANDS:
        return _model("a command that needs the model")
    mod_loop.ingest_spool()  # answers the mod kept when the helper could not take them: recorded first
    try:
        action = _loop_action(name, args, parse_run, start_run)
    except Unparsed as exc:
        return _text(f"/ant:{name}: {exc}", drive_rules.EXIT_ERROR)
    action = mod_loop.for_mod(action)
    action["line"] = f"/ant:{name} runs in the plugin's mod (runtime mod: no Queen turns) — " + (action.get("line") or action["action"])
    return dict(zip(mod_loop.SERVED_LOOP, ("loop", mod_loop.RUNTIME, action, mod_loop.spool_dir()), strict=True))


def serve(name: str, args: str, parse_run: Callable[[str], dict], start_run: Callable[[dict], dict]) -> dict:
    """How the mod serves /ant:`name` with its words `args`. `parse_run` reads /ant:run's words
    as `aether run` parses them, `start_run` runs it (both raise Unparsed for words they refuse).
    A helper error is the command's answer, shown as the markdown command would show it."""
    try:
        return _serve(name, args, parse_run, start_run)
    except AetherError as exc:
        return _text(f"Aether: {exc.message}", drive_rules.EXIT_ERROR)
