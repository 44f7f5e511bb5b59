#!/bin/sh
# PreToolUse entry: most tool calls concern no rule of hooks/guard.py (the Queen's own calls
# other than `aether`, other plugins' agents), so they are let through here without starting
# Python (~3 ms instead of ~40 ms per call). The Queen's plain `aether <words>` call — only
# letters, digits, spaces and `._:/=,-`: no quote, escape, expansion or operator, so one simple
# command and nothing else — is allowed here too (rule 2 of guard.py; not `bug …` nor
# `uninstall`). guard.py judges the rest: a call from one of Aether's agents
# (`"agent_type": "ant:…"`), the Queen's other `aether …` calls, and any call that may step
# around the approval gate — checked on the text with quotes and backslashes removed
# (`app""rove`, `a\pprove` read as `approve`): `pprov`, Claude Code's variables, `unset`, or
# `aether`/`bug` with `$`, a `bug` subcommand, `env`, `eval` or a pseudo-terminal wrapper —
# and any call that names `typed`, `bugs`, `config.yaml`, a `hooks/` folder or `AETHER_BUG_` (what only
# the person writes or runs); in a project with Bug Bash state, every call of the Queen's thread.
# Under the mod, Claude Code's own process asks the guard that stays up for the session
# (`guard.sh --serve`, hooks/guard_serve.py) about every call this hook would see, and names it in
# AETHER_MOD_GUARD: "<the Claude Code's pid> <the guard's pid> <its socket>". While that guard runs
# for this Claude Code, the call was judged there: nothing is left to do here, not even reading stdin.
if [ -n "${AETHER_MOD_GUARD:-}" ] && [ -n "${CLAUDE_PID:-}" ]; then
  case $AETHER_MOD_GUARD in
    "$CLAUDE_PID "[1-9]*' '/*)
      served=${AETHER_MOD_GUARD#* }
      socket=${served#* }
      served=${served%% *}
      case $served in *[!0-9]*) ;; *) kill -0 "$served" 2>/dev/null && [ -S "$socket" ] && exit 0 ;; esac ;;
  esac
fi

# guard.py reads shell with tree-sitter-bash, installed in the helper's venv: found the way
# bin/aether finds it (AETHER_VENV, .venv beside the plugin, or the venv a marketplace install
# built, named in .venv-location). Without it, the system python3 runs guard.py, which refuses
# ants' calls (naming the missing install) and judges the rest as well as it can.
here=${0%/*}
[ "$here" = "$0" ] && here=.
root=$here/..
with_python() { # $1: what to run with the first Python found (returns only if none is)
  for venv in "${AETHER_VENV:-}" "$root/.venv"; do
    if [ -n "$venv" ] && [ -x "$venv/bin/python" ]; then site_of "$venv" && "$1" "$venv/bin/python" "$site"; fi
  done
  if [ -r "$root/.venv-location" ]; then
    IFS= read -r venv <"$root/.venv-location"
    if [ -n "$venv" ] && [ -x "$venv/bin/python" ] && { [ -e "$venv/.aether-ready" ] ||
        { [ ! -e "$venv/.aether-installing" ] && [ ! -e "$venv/.aether-failed" ]; }; }; then
      site_of "$venv" && "$1" "$venv/bin/python" "$site"
    fi
  fi
  if command -v python3 >/dev/null 2>&1; then "$1" python3 ""; fi
}
# Python starts without `site` where the venv's packages are certain (venv_site.sh). The modules
# are imported rather than run as scripts, so Python keeps their compiled form.
. "$here/venv_site.sh" # site_of
judge() { # $1: the Python; $2: its site-packages, or "" for its own
  printf '%s' "$input" | "$1" -I ${2:+-S} -c 'import sys; sys.path[:0] = sys.argv[1:2]; sys.path += [p for p in sys.argv[2:3] if p]; import guard; sys.exit(guard.main())' "$here" "$2"
  exit
}
serve() { # the guard that stays up takes this process's place: its parent is Claude Code
  exec "$1" -I ${2:+-S} -c 'import sys; sys.path[:0] = sys.argv[1:2]; sys.path += [p for p in sys.argv[2:3] if p]; import guard_serve; sys.exit(guard_serve.main())' "$here" "$2"
}
if [ "${1:-}" = --serve ]; then
  with_python serve
  printf '%s\n' '{"error": "no Python found for the guard"}' >&2
  exit 1
fi

input=$(cat)
ant=
case $input in
  *'"agent_type"'*'"ant:'*) ant=1 ;;
  *'"agent_type"'*) ;;
  *'"tool_name":"Bash"'*'"tool_input":{"command":"aether '*)
    command=${input#*'"tool_input":{"command":"'}
    command=${command%%'"'*}
    case $command in
      *[!A-Za-z0-9' '._:/=,-]* | *bug* | *uninstall* | *pprov* | *CLAUDE*) ;;
      'aether '[a-z]*)
        printf '%s\n' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "Aether'"'"'s own helper"}}'
        exit 0 ;;
    esac ;;
esac
bugbash= # a project with Bug Bash state: every call of the Queen's thread is judged
case $input in *'"agent_type"'*) ;; *) [ -d "${CLAUDE_PROJECT_DIR:-.}/.aether/bugs" ] && bugbash=1 ;; esac
case $input in
  *'"agent_type"'*'"ant:'*) ;;
  *)
    [ -n "$bugbash" ] ||
    case $input in  # quotes or backslashes in the call: read it without them (one `tr`)
      *\\* | *\'*) flat=$(printf '%s' "$input" | tr -d "\"'\\\\") ;;
      *) flat=$input ;;
    esac
    [ -n "$bugbash" ] ||
    case $flat in
      *pprov* | *CLAUDE* | *unset* | *'$'*bug* | *bug*'$'* | *'aether '* | *[Tt][Yy][Pp][Ee][Dd]* | *[Bb][Uu][Gg][Ss]* | \
        *hooks/* | *AETHER_BUG* | *config.yaml*) ;;
      *aether*)
        case $flat in
          *bug* | *'$'* | *env\ * | *eval\ * | *script\ * | *expect\ * | *unbuffer* | *socat* | \
            *\ pty* | *pty.* | *ssh\ *) ;;
          *) exit 0 ;;
        esac ;;
      *) exit 0 ;;
    esac ;;
esac

with_python judge
if [ -n "$ant" ]; then
  printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Aether'"'"'s guard cannot run: no Python found for it. Stop, and say in your result block that the user must install Python 3.11+ and run `make install` in the Aether plugin folder."}}'
fi
exit 0
