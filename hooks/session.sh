#!/bin/sh
# SessionStart entry for /clear, compaction and --resume. A colony mid-build or mid-run gets a few
# lines of context from `aether session-hook` (where it stands, the one command that continues); a
# project without a colony passes here without starting Python. Never fails the session's start.
input=$(cat)
dir=${CLAUDE_PROJECT_DIR:-$PWD}
if [ -z "$AETHER_DATA_DIR" ] && [ ! -f "$dir/.aether/data/COLONY_STATE.json" ]; then
  exit 0
fi
cd "$dir" 2>/dev/null || exit 0
printf '%s' "$input" | "$(dirname "$0")/../bin/aether" session-hook 2>/dev/null
exit 0
