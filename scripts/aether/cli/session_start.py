"""session-hook: Claude Code's SessionStart hook (hooks/session.sh)."""

from __future__ import annotations

import json
import sys

import click


@click.command("session-hook", hidden=True)
def session_hook():
    """Claude Code's SessionStart hook for /clear, compaction and --resume: a colony mid-build or
    mid-run gets a few lines of context. Never fails: any problem adds nothing."""
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        from aether.colony import session_start

        out = session_start.hook(payload if isinstance(payload, dict) else {})
    except Exception:  # noqa: BLE001 — a hook must never break the session's start
        out = None
    if out:
        sys.stdout.write(json.dumps(out, ensure_ascii=False))
