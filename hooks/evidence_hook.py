"""The evidence hook's Python side (hooks/evidence.sh): one ant's call, kept in its log.

Never fails the call: whatever goes wrong, the hook says nothing and exits 0 (a call not kept
leaves a check unverified, never passed)."""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
        if not os.environ.get("AETHER_DATA_DIR") and os.environ.get("CLAUDE_PROJECT_DIR"):
            os.chdir(os.environ["CLAUDE_PROJECT_DIR"])
        from aether.state import evidence

        payload = json.loads(sys.stdin.read())
        if isinstance(payload, dict) and str(payload.get("agent_type", "")).startswith("ant:"):
            evidence.keep_hook_call(payload)
    except Exception:  # noqa: BLE001 - a hook that fails must not fail the ant's call
        pass
