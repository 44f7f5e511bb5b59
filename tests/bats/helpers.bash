# Shared set-up for the shell-contract tests: a throwaway project and home, `aether` on PATH
# exactly as Claude Code puts the plugin's bin/ on the Bash tool's PATH.

REPO="$(cd "$(dirname "${BATS_TEST_FILENAME}")/../.." && pwd -P)"
PY="$REPO/.venv/bin/python"

setup() {
  export HOME="$BATS_TEST_TMPDIR/home"
  export AETHER_HOME="$HOME/.aether"
  unset AETHER_DATA_DIR AETHER_NOW AETHER_PRETTY AETHER_VENV
  mkdir -p "$HOME" "$BATS_TEST_TMPDIR/proj/.aether"
  cd "$BATS_TEST_TMPDIR/proj" || return 1
  PATH="$REPO/bin:$PATH"
}

# json EXPR [TEXT]: evaluate a Python expression on the JSON in TEXT (default: $output),
# bound to `j`; prints the value (strings raw, everything else as JSON).
json() {
  local expr="$1" text="${2-$output}"
  "$PY" -c '
import json, sys
j = json.loads(sys.stdin.read())
v = eval(sys.argv[1])
print(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False), end="")
' "$expr" <<<"$text"
}

# stored_content N: the content of the Nth stored signal, byte for byte.
stored_content() {
  "$PY" -c '
import json, sys
data = json.load(open(".aether/data/pheromones.json", encoding="utf-8"))
sys.stdout.write(data["signals"][int(sys.argv[1])]["content"])
' "$1"
}

# one_line TEXT: succeeds when TEXT is exactly one line.
one_line() {
  [ "$(printf '%s' "$1" | wc -l)" -eq 0 ] && [ -n "$1" ]
}
