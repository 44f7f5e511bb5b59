#!/bin/sh
# A person's approval of a Bug Bash fix plan: `/ant:bug approve <id> [reason]` typed in Claude
# Code (UserPromptSubmit: Claude Code runs it for what the person submits, before any model turn,
# and never for a model's tool call; /ant:bug is not the model's to invoke). The hook's input is
# kept as a one-time ticket under .aether/typed/ that only `aether bug typed-approval` accepts;
# its answer blocks the prompt, so the person sees what happened and no model turn follows.
# Any other prompt passes without Python.
input=$(cat)
case $input in *'"prompt":"'*'/ant:bug'*'approve'*) ;; *) exit 0 ;; esac # the helper says if it is the command
dir=${CLAUDE_PROJECT_DIR:-$PWD}
cd "$dir" 2>/dev/null && [ -d .aether ] || exit 0 # no Bug Bash here: the command says so
umask 077
mkdir -p .aether/typed 2>/dev/null
ticket="$dir/.aether/typed/$$-$(date +%s).json"
printf '%s' "$input" > "$ticket.part" 2>/dev/null && mv -f "$ticket.part" "$ticket" 2>/dev/null
exec "$(dirname "$0")/../bin/aether" bug typed-approval "$ticket"
