#!/bin/sh
# PreToolUse entry: most tool calls concern no rule of hooks/guard.py (the Queen's own calls,
# other plugins' agents), so they are let through here without starting Python (~3 ms instead
# of ~65 ms per call). guard.py judges the rest: a call from one of Aether's agents
# (`"agent_type": "ant:…"`) and any call that mentions `approve`.
input=$(cat)
case $input in
  *'"agent_type"'*'"ant:'* | *approve*) ;;
  *) exit 0 ;;
esac
printf '%s' "$input" | exec python3 "$(dirname "$0")/guard.py"
