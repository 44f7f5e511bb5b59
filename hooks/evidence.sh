#!/bin/sh
# PostToolUse and PostToolUseFailure on Bash and the file tools: what one of the colony's ants
# ran or wrote is kept as evidence (scripts/aether/state/evidence.py). Without starting Python
# for any other call: not an ant (`"agent_type": "ant:…"`), no project with a colony, or an ant
# whose log the mod writes itself.
input=$(cat)
case $input in
  *'"agent_type"'*'"ant:'*) ;;
  *) exit 0 ;;
esac
id=${input#*'"agent_id"'}
id=${id#*'"'}
id=${id%%'"'*}
case $id in '' | *[!A-Za-z0-9_-]*) exit 0 ;; esac
data=${AETHER_DATA_DIR:-${CLAUDE_PROJECT_DIR:-$PWD}/.aether/data}
[ -f "$data/spawns.json" ] || exit 0
log=$data/evidence/$id.jsonl
if [ -f "$log" ]; then
  IFS= read -r head <"$log" || exit 0
  case $head in *'"by":"mod"'* | *'"by": "mod"'*) exit 0 ;; esac
fi
here=${0%/*}
[ "$here" = "$0" ] && here=.
# Python starts without its `site` module when the venv's one site-packages is found (-S: ~1–2 ms
# less; see guard.sh), that folder after the standard library.
keep() { # $1: the Python; $2: its site-packages, or "" for its own
  printf '%s' "$input" | "$1" -I ${2:+-S} -c 'import sys; sys.path[:0] = sys.argv[1:2]; sys.path += [p for p in sys.argv[2:3] if p]; import evidence_hook; evidence_hook.main()' "$here" "$2" 2>/dev/null
  exit 0
}
site_of() { # into $site (no subshell)
  site=
  for found in "$1"/lib/python3*/site-packages; do
    [ -d "$found" ] || continue
    [ -z "$site" ] || { site=; return 0; }
    site=$found
  done
  if [ -n "$site" ] && [ -r "$1/pyvenv.cfg" ]; then
    while IFS= read -r line; do
      case $line in include-system-site-packages*true*) site= ;; esac
    done <"$1/pyvenv.cfg"
  fi
  return 0
}
for venv in "${AETHER_VENV:-}" "$here/../.venv"; do
  if [ -n "$venv" ] && [ -x "$venv/bin/python" ]; then site_of "$venv" && keep "$venv/bin/python" "$site"; fi
done
if [ -r "$here/../.venv-location" ]; then
  IFS= read -r venv <"$here/../.venv-location"
  if [ -n "$venv" ] && [ -x "$venv/bin/python" ]; then site_of "$venv" && keep "$venv/bin/python" "$site"; fi
fi
command -v python3 >/dev/null 2>&1 && keep python3 ""
exit 0
