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
# Python starts without `site` where the venv's packages are certain (venv_site.sh).
keep() { # $1: the Python; $2: its site-packages, or "" for its own
  printf '%s' "$input" | "$1" -I ${2:+-S} -c 'import sys; sys.path[:0] = sys.argv[1:2]; sys.path += [p for p in sys.argv[2:3] if p]; import evidence_hook; evidence_hook.main()' "$here" "$2" 2>/dev/null
  exit 0
}
. "$here/venv_site.sh" # site_of
for venv in "${AETHER_VENV:-}" "$here/../.venv"; do
  if [ -n "$venv" ] && [ -x "$venv/bin/python" ]; then site_of "$venv" && keep "$venv/bin/python" "$site"; fi
done
if [ -r "$here/../.venv-location" ]; then
  IFS= read -r venv <"$here/../.venv-location"
  if [ -n "$venv" ] && [ -x "$venv/bin/python" ]; then site_of "$venv" && keep "$venv/bin/python" "$site"; fi
fi
command -v python3 >/dev/null 2>&1 && keep python3 ""
exit 0
