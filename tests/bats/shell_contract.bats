#!/usr/bin/env bats
# The shell contract: `aether` called exactly the way the slash commands call it.

bats_require_minimum_version 1.5.0
load helpers

@test "aether is on PATH and answers with one JSON line on stdout" {
  run --separate-stderr aether version
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  one_line "$output"
  [ "$(json 'j["ok"]')" = "true" ]
}

@test "a quoted heredoc keeps quotes, \$(), backticks and backslashes exactly" {
  run --separate-stderr aether pheromone-emit FOCUS - <<'EOF'
don't "break" on $(rm -rf /) or `whoami` or ${HOME} or \n or \\ or a tab	here
and a second line with ünïcødé 🐜
EOF
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  one_line "$output"
  cat >expected.txt <<'EOF'
don't "break" on $(rm -rf /) or `whoami` or ${HOME} or \n or \\ or a tab	here
and a second line with ünïcødé 🐜
EOF
  # byte for byte, the heredoc's final newline included: in the answer and in the file
  [ "$(json 'j["result"]["content"] == open("expected.txt", encoding="utf-8").read()')" = "true" ]
  [ "$(json 'j["result"]["content"].count(chr(10))')" = "2" ]
  [ "$(stored_content 0)" = "$(cat expected.txt)" ]
  [ "$(json 'j["result"]["type"]')" = "FOCUS" ]
}

@test "echo piped into aether with -" {
  run --separate-stderr bash -c 'echo "avoid global state; use \"dependency injection\"" | aether pheromone-emit REDIRECT -'
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  [ "$(json 'j["result"]["content"]')" = 'avoid global state; use "dependency injection"' ]
  [ "$(json 'j["result"]["content"].endswith(chr(10))')" = "true" ]
  [ "$(json 'j["result"]["strength"]')" = "0.9" ]
}

@test "chained calls with && run in order" {
  run --separate-stderr bash -c 'aether pheromone-emit FOCUS "first signal, long enough" && aether pheromone-emit FOCUS "second signal, long enough" && aether pheromone-batch'
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 3 ]
  last=$(printf '%s\n' "$output" | tail -n 1)
  [ "$(json '[s["content"] for s in j["result"]]' "$last")" = '["first signal, long enough", "second signal, long enough"]' ]
}

@test "bad input: nothing on stdout, one JSON error on stderr, exit 1" {
  run --separate-stderr aether pheromone-emit SMELL "a signal of an unknown type"
  [ "$status" -eq 1 ]
  [ -z "$output" ]
  one_line "$stderr"
  [ "$(json 'j["ok"]' "$stderr")" = "false" ]
  [ "$(json 'j["code"]' "$stderr")" = "invalid_argument" ]
  [ ! -e .aether/data/pheromones.json ]
}

@test "click's own usage errors are envelopes too" {
  run --separate-stderr aether pheromone-emit FOCUS "some content here" --no-such-option
  [ "$status" -eq 1 ]
  [ -z "$output" ]
  [ "$(json 'j["code"]' "$stderr")" = "usage_error" ]
}

@test "unknown command suggests the right one" {
  run --separate-stderr aether pheromone-emitt FOCUS x
  [ "$status" -eq 1 ]
  [ -z "$output" ]
  [ "$(json 'j["code"]' "$stderr")" = "unknown_command" ]
  [[ "$(json 'j["error"]' "$stderr")" == *pheromone-emit* ]]
}

@test "state problem: exit 2 and the file is left alone" {
  mkdir -p .aether/data
  printf '{"signals": [' > .aether/data/pheromones.json
  run --separate-stderr aether pheromone-emit FOCUS "this must not be written"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [ "$(json 'j["code"]' "$stderr")" = "state_corrupt" ]
  [ "$(cat .aether/data/pheromones.json)" = '{"signals": [' ]
}

@test "empty stdin is refused" {
  run --separate-stderr aether pheromone-emit FOCUS - </dev/null
  [ "$status" -eq 1 ]
  [ "$(json 'j["code"]' "$stderr")" = "invalid_content" ]
}

@test "content larger than an argv string can be goes through stdin" {
  run --separate-stderr bash -c "\"$PY\" -c 'print(\"x\" * 300000, end=\"\")' | aether pheromone-validate -"
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  [ "$(json 'j["result"]["length"]')" = "300000" ]
}

@test "display commands print text; --json gives the envelope" {
  aether pheromone-emit REDIRECT "never use global mutable state" >/dev/null
  run --separate-stderr aether pheromone-render
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  [[ "$output" == "ACTIVE PHEROMONES"* ]]
  [[ "$output" == *"never use global mutable state"* ]]
  run --separate-stderr aether pheromone-render --json
  [ "$status" -eq 0 ]
  [ "$(json 'j["result"]["signals"][0]["type"]')" = "REDIRECT" ]
}

@test "a reader that stops early does not turn into an error" {
  for i in 1 2 3; do aether pheromone-emit FOCUS "signal number $i, long enough" >/dev/null; done
  run --separate-stderr bash -c 'set -o pipefail; aether pheromone-render | head -n 1'
  [ "$status" -eq 0 ]
  [ "$output" = "ACTIVE PHEROMONES" ]
  [ -z "$stderr" ]
}

@test "the working directory's subfolders find the project" {
  mkdir -p src/deep/er
  aether pheromone-emit FOCUS "emitted from the project root" >/dev/null
  cd src/deep/er
  run --separate-stderr aether pheromone-batch
  [ "$status" -eq 0 ]
  [ "$(json 'len(j["result"])')" = "1" ]
  [ ! -e .aether ]
}

@test "the launcher without a venv answers not_installed" {
  mkdir -p "$BATS_TEST_TMPDIR/bare/bin"
  cp "$REPO/bin/aether" "$BATS_TEST_TMPDIR/bare/bin/aether"
  run --separate-stderr "$BATS_TEST_TMPDIR/bare/bin/aether" status
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [ "$(json 'j["code"]' "$stderr")" = "not_installed" ]
  [[ "$(json 'j["error"]' "$stderr")" == *"make install"* ]]
}

@test "the build loop: next hands out a spawn by reference, record takes its answer in a heredoc" {
  aether colony-init - <<<"A todo CLI" >/dev/null
  aether plan-load - >/dev/null <<'EOF'
{"goal": "A todo CLI", "phases": [{"id": 1, "name": "Core", "description": "the store",
 "tasks": [{"id": "1.1", "description": "store", "depends_on": []}], "success_criteria": ["runs"]}]}
EOF
  run --separate-stderr aether next --build 1
  [ "$status" -eq 0 ]
  one_line "$output"
  [ "$(json 'j["result"]["action"]')" = "spawn" ]
  [ "$(json 'j["result"]["spawns"][0]["id"]')" = "lead1" ]
  brief="$(json 'j["result"]["spawns"][0]["prompt"].split("Your brief is ")[1].split(" ")[0]')"
  grep -q -- '--- PHASE LEAD ---' "$brief"
  # an answer with quotes, $() and backticks reaches the helper exactly, and is kept as given
  run --separate-stderr aether record lead1 - <<'EOF'
Here's the plan; don't run $(rm -rf /) or `whoami`:
```json
{"phase": 1, "workers": [{"id": "store", "caste": "builder", "tasks": ["1.1"], "writes": ["store.py"]}]}
```
EOF
  [ "$status" -eq 0 ]
  [ "$(json 'j["result"]["next"]["action"]')" = "spawn" ]
  grep -qF 'don'"'"'t run $(rm -rf /) or `whoami`' .aether/spawns/*/lead1.answer.md
}

@test "the Agent hooks never fail the call: bad input is let through" {
  run --separate-stderr aether agent-hook pre <<<"not json"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  run --separate-stderr aether agent-hook post <<<'{"tool_input": {"prompt": "Your brief is .aether/spawns/x/y.md"}, "tool_response": {"content": [{"type": "text", "text": "hi"}]}}'
  [ "$status" -eq 0 ]
  [ "$(json 'j["hookSpecificOutput"]["hookEventName"]')" = "PostToolUse" ]
}

@test "the autopilot takes /ant:run's arguments in a quoted heredoc, as one line" {
  aether colony-init - <<<"A todo CLI" >/dev/null
  aether plan-load - >/dev/null <<'EOF'
{"goal": "A todo CLI", "phases": [{"id": 1, "name": "Core", "description": "the store",
 "tasks": [{"id": "1.1", "description": "store", "depends_on": []}], "success_criteria": ["runs"]},
 {"id": 2, "name": "CLI", "description": "the command line",
 "tasks": [{"id": "2.1", "description": "cli", "depends_on": []}], "success_criteria": ["runs"]}]}
EOF
  run --separate-stderr aether run - <<'EOF'
--dry-run --to 1 --budget 2M
EOF
  [ "$status" -eq 0 ]
  one_line "$output"
  [ "$(json 'j["result"]["dry_run"]')" = "true" ]
  [ "$(json 'j["result"]["range"]["to"]')" = "1" ]
  [ "$(json 'j["result"]["caps"]["run"]')" = "2000000" ]
  # no arguments at all (an empty $ARGUMENTS): a run from where the colony stands
  run --separate-stderr aether run - <<'EOF'

EOF
  [ "$status" -eq 0 ]
  [ "$(json 'j["result"]["action"]')" = "spawn" ]
  [ "$(json 'j["result"]["autopilot"][:2]')" = "r-" ]
  # words that are not options: one error envelope, nothing else
  run --separate-stderr aether run - <<'EOF'
please build it all; don't stop
EOF
  [ "$status" -eq 1 ]
  [ -z "$output" ]
  [ "$(printf '%s' "$stderr" | python3 -c 'import json,sys; print(json.load(sys.stdin)["code"])')" = "usage_error" ]
}
