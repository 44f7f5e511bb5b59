#!/bin/sh
# PreToolUse entry: most tool calls concern no rule of hooks/guard.py (the Queen's own calls,
# other plugins' agents), so they are let through here without starting Python (~3 ms instead
# of ~65 ms per call). guard.py judges the rest: a call from one of Aether's agents
# (`"agent_type": "ant:…"`), and any call that may step around the approval gate — checked on
# the text with quotes and backslashes removed (`app""rove`, `a\pprove` read as `approve`):
# `pprov`, Claude Code's variables, `unset`, or `aether`/`bug` with `$`, a `bug` subcommand,
# `env`, `eval` or a pseudo-terminal wrapper.
input=$(cat)
case $input in
  *'"agent_type"'*'"ant:'*) ;;
  *)
    case $input in  # quotes or backslashes in the call: read it without them (one `tr`)
      *\\* | *\'*) flat=$(printf '%s' "$input" | tr -d "\"'\\\\") ;;
      *) flat=$input ;;
    esac
    case $flat in
      *pprov* | *CLAUDE* | *unset* | *'$'*bug* | *bug*'$'*) ;;
      *aether*)
        case $flat in
          *bug* | *'$'* | *env\ * | *eval\ * | *script\ * | *expect\ * | *unbuffer* | *socat* | \
            *\ pty* | *pty.* | *ssh\ *) ;;
          *) exit 0 ;;
        esac ;;
      *) exit 0 ;;
    esac ;;
esac
printf '%s' "$input" | exec python3 "$(dirname "$0")/guard.py"
