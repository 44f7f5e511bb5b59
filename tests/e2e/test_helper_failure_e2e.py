"""A helper that fails mid-wave loses nothing — in real Claude Code under the mod. The plugin's
`bin/aether` is replaced by a launcher that answers garbage (no JSON envelope, exit 0) for the
`aether mod …` calls the test names, as a crash, a stray print or a broken install would:

- one `mod wait` answers garbage mid-wave: the loop asks again, and the build ends as if nothing
  happened — each ant ran once, each answer recorded once;
- the helper goes on failing from the moment the wave is launched: the loop does not abandon the
  running ants (`claude -p` waits for them, their answers kept on disk), then ends saying what
  happened and what to run; once the helper works again, the same command records the kept
  answers first and no finished ant runs again.
"""

from __future__ import annotations

import os
import stat

import pytest

from .colony_script import is_ref, two_modules_wave, worker_result
from .fake_api import say, subagent, tool, turn
from .harness import NOW, REPO, ClaudeCode, state
from helpers.plugin import copy_plugin

pytestmark = pytest.mark.e2e

ANT_SECONDS = 3.0
LESSONS = "- a helper that fails loses no answer\n"

# The plugin copy's bin/aether: `aether mod <step>` answers garbage when the fault folder says so —
# `fail-<step>-<n>` for its n-th call, `broken` for every `mod wait` and `mod answer` (made by the
# launcher itself once `mod launched` has been called `launched-breaks` times).
FAULTY = r"""#!/bin/sh
faults="$AETHER_FAULTS"
if [ "$1" = mod ] && [ -n "$faults" ]; then
  n=$(cat "$faults/$2.count" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$faults/$2.count"
  if [ -e "$faults/fail-$2-$n" ] || { [ -e "$faults/broken" ] && { [ "$2" = wait ] || [ "$2" = answer ]; }; }; then
    echo "Traceback (most recent call last): something printed instead of an answer"
    exit 0
  fi
  if [ "$2" = launched ] && [ "$n" = "$(cat "$faults/launched-breaks" 2>/dev/null)" ]; then
    "$AETHER_REAL" "$@"; status=$?; touch "$faults/broken"; exit $status
  fi
fi
exec "$AETHER_REAL" "$@"
"""


def _faulty_plugin(tmp_path):
    plugin = copy_plugin(tmp_path / "plugin", link_venv=True)
    launcher = plugin / "bin" / "aether"
    launcher.write_text(FAULTY, "utf-8")
    launcher.chmod(launcher.stat().st_mode | stat.S_IEXEC)
    faults = tmp_path / "faults"
    faults.mkdir()
    return plugin, faults


def _builders(claude) -> list:
    steps = []
    for i, name in ((1, "a"), (2, "b")):
        path = f"mods/{name}.py"
        steps += [
            subagent("ant:builder", is_ref(f"w{i}"), turn(1)).reply(
                tool("Write", file_path=f"{claude.project}/{path}", content="VALUE = 1\n")
            ),
            subagent("ant:builder", is_ref(f"w{i}"), turn(2)).reply(
                say(worker_result(f"{path} written", created=[path])), delay=ANT_SECONDS
            ),
        ]
    return steps


def _env(faults) -> dict:
    return {**NOW, "AETHER_FAULTS": str(faults), "AETHER_REAL": str(REPO / "bin" / "aether")}


@pytest.fixture
def faulty(claude_bin, tmp_path, _isolated_home):
    plugin, faults = _faulty_plugin(tmp_path)
    claude = ClaudeCode(claude_bin, tmp_path, home=_isolated_home, plugin_dirs=[plugin], runtime="mod")
    two_modules_wave(claude)
    return claude, faults


def test_garbage_from_one_wait_mid_wave_is_asked_again_and_nothing_runs_twice(faulty):
    claude, faults = faulty
    (faults / "fail-wait-1").touch()  # the first wait of the wave: both ants still running
    script = _builders(claude) + [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))]
    run = claude.run("/ant:build 1 --approve", script, env=_env(faults), timeout=300)
    assert run.code == 0 and run.main_turns == [], run.report()
    assert int((faults / "wait.count").read_text()) >= 2  # the garbage was met, and the loop asked again
    assert len(run.subagent_turns("ant:builder")) == 4  # two turns each: each ant ran once
    spawns = {s["local"]: s for s in state(claude, "spawns.json")["spawns"]}
    assert {k: (spawns[k]["status"], spawns[k]["via"]) for k in ("w1", "w2")} == {k: ("recorded", "mod") for k in ("w1", "w2")}
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"


def test_a_helper_that_keeps_failing_abandons_no_ant_and_the_next_command_runs_no_finished_ant_again(faulty):
    claude, faults = faulty
    (faults / "launched-breaks").write_text("1")  # broken from the moment the wave is launched
    as_json = ["--output-format", "json"]  # a command's exit status holds for text and json output
    broken = claude.run("/ant:build 1 --approve", _builders(claude), env=_env(faults), args=as_json, timeout=300, check=False)
    broken.check(exit_code=1)
    assert "the helper failed" in broken.text and "nothing finished runs again" in broken.text, broken.text
    assert "/ant:build 1" in broken.text
    # -p did not end while the ants ran: both answered before it ended, and their answers are kept
    finals = [t for t in broken.subagent_turns("ant:builder") if t.answered_at is not None and len(t.messages) > 2]
    assert len(finals) == 2, broken.report()
    spool = claude.project / ".aether" / "data" / "spool"
    assert sorted(p.suffix for p in spool.iterdir()) == [".json", ".json"]
    assert {s["local"]: s["status"] for s in state(claude, "spawns.json")["spawns"]} == {
        "lead1": "recorded",
        "w1": "launched",
        "w2": "launched",
    }

    os.remove(faults / "broken")  # the helper works again
    again = claude.run("/ant:build 1", [subagent("ant:architect", is_ref("lessons")).reply(say(LESSONS))], env=_env(faults), timeout=300)
    assert again.code == 0 and again.subagent_turns("ant:builder") == [], again.report()  # no finished ant ran again
    spawns = {s["local"]: s for s in state(claude, "spawns.json")["spawns"]}
    assert {k: (spawns[k]["status"], spawns[k]["via"]) for k in ("w1", "w2")} == {k: ("recorded", "mod") for k in ("w1", "w2")}
    assert all(spawns[k]["usage"]["total_tokens"] > 0 for k in ("w1", "w2"))  # their spend counted
    assert list(spool.iterdir()) == []
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
