#!/bin/sh
# The colony's hooks on its ants ($1: pre, post, failure, denied, start, stop or prompt; see
# hooks/hooks.json). Only what may concern a spawn goes to `aether agent-hook`, run in the
# session's project:
#   pre:                  an Agent call that names a brief (`.aether/spawns/…`) or a caste (`ant:…`)
#   post/failure/denied:  an Agent call that names a brief, not one of the mod's
#   start:                the start of one of the castes' ants whose transcript is there to read
#   stop:                 the stop of one of the castes' ants, not one of the mod's
#   prompt:               a notification of Claude Code's that carries a background ant's answer
# and only in a project with a colony (start, stop, prompt); everything else passes without Python.
# The mod's ants (hooks/mod.ts) answer through the mod: Claude Code gives a plugin's Agent call an
# id of its own (`toolu_plugin_…`, never a model's), kept in the ant's `.meta.json` beside its
# transcript. Their pre still runs the helper: it marks the spawn running before the ant starts.
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

# A top-level string of the hook's JSON, when it has no escape in it (else nothing: Python reads it).
field() {
  printf '%s' "$input" | sed -n "s/.*\"$1\":\"\([^\"\\\\]*\)\".*/\1/p"
}
case $1 in
  post | failure | denied) case $input in *'"tool_use_id":"toolu_plugin_'*) exit 0 ;; esac ;;
  start) # the helper reads the ant's brief from its transcript: none yet, nothing to mark
    transcript=$(field transcript_path) agent=$(field agent_id)
    case $transcript in *.jsonl) [ -z "$agent" ] || [ -f "${transcript%.jsonl}/subagents/agent-$agent.jsonl" ] || exit 0 ;; esac ;;
  stop)
    transcript=$(field agent_transcript_path)
    case $transcript in
      *.jsonl) if [ -f "${transcript%.jsonl}.meta.json" ]; then
          meta=$(cat "${transcript%.jsonl}.meta.json" 2>/dev/null)
          case $meta in *'"toolUseId":"toolu_plugin_'*) exit 0 ;; esac
        fi ;;
    esac ;;
esac
cd "$dir" 2>/dev/null || exit 0
printf '%s' "$input" | exec "$(dirname "$0")/../bin/aether" agent-hook "$1"
