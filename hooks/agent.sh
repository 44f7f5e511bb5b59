#!/bin/sh
# PreToolUse/PostToolUse entry for Agent calls ($1: pre or post). Only an Agent call that names
# one of Aether's brief files (`.aether/spawns/…`) concerns the helper: it goes to
# `aether agent-hook`; every other Agent call (the user's own, other plugins') passes here
# without starting Python.
input=$(cat)
case $input in
  *'.aether/spawns/'*) printf '%s' "$input" | exec "$(dirname "$0")/../bin/aether" agent-hook "$1" ;;
esac
exit 0
