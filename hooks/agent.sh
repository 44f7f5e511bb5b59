#!/bin/sh
# The colony's hooks on its ants ($1: pre, post, failure, denied, start, stop or prompt; see
# hooks/hooks.json). Only what may concern a spawn goes to `aether agent-hook`, run in the
# session's project:
#   pre:                  an Agent call that names a brief (`.aether/spawns/…`) or a caste (`ant:…`)
#   post/failure/denied:  an Agent call that names a brief
#   start/stop:           the start or stop of one of the castes' ants
#   prompt:               a notification of Claude Code's that carries a background ant's answer
# and only in a project with a colony (start, stop, prompt); everything else passes without Python.
input=$(cat)
case $1 in
  pre) case $input in *'.aether/spawns/'* | *'"ant:'*) ;; *) exit 0 ;; esac ;;
  post | failure | denied) case $input in *'.aether/spawns/'*) ;; *) exit 0 ;; esac ;;
  start | stop) case $input in *'"ant:'*) ;; *) exit 0 ;; esac ;;
  prompt) case $input in *'<task-notification>'* | *'<agent-message from='*) ;; *) exit 0 ;; esac ;;
  *) exit 0 ;;
esac
dir=${CLAUDE_PROJECT_DIR:-$PWD}
case $1 in
  start | stop | prompt) [ -n "$AETHER_DATA_DIR" ] || [ -f "$dir/.aether/data/spawns.json" ] || exit 0 ;;
esac
cd "$dir" 2>/dev/null || exit 0
printf '%s' "$input" | exec "$(dirname "$0")/../bin/aether" agent-hook "$1"
