"""The helper drives the build (`aether next` / `aether record` and the hooks on Agent), proved in
real Claude Code against the scripted model.

- hooks absent, nothing lost: a plugin copy without the Agent hooks. Each ant gets only the
  short prompt naming its brief file, reads it and answers; the Queen pipes every answer to
  `aether record <id> -` and acts on the next action the last record prints, as the body says. Every spawn is
  recorded (via `queen`), every answer kept as it was, the build finishes (one worker failed
  and its retry recovered the task);
- killed mid-wave, resumed: `claude` is killed while the wave's ants are working (the
  PreToolUse hook had marked them `launched`); a NEW session's `/ant:build 1` gets the same
  unrecorded spawns back (same ids, same briefs, no new ones), they run once, are recorded and
  the build completes with consistent state;
- parallel hooks: four builders of one wave answer at the same moment; their PostToolUse hooks
  record all four (queued on the driver's lock), only the last one hands the Queen the next
  action, and the spawn tree holds the four completed workers.

No --allowedTools and no skip-permissions: the command's `allowed-tools` is the only grant.
State is prepared with the helper where the case does not need a slash command.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from .colony_script import (
    FOUR_ASSIGNMENT,
    FOUR_MODULES,
    FOUR_REVIEW,
    FOUR_VERIFIED,
    SLUG,
    Queen,
    agent_report,
    helper_result,
    honest_watcher,
    hook_lines,
    hook_says,
    is_ref,
    json_block,
    next_action,
    next_with,
    run_body,
    slug_assignment,
    slug_plan,
    spawn_next,
    with_tests,
    worker_result,
)
from .fake_api import Matcher, bash, say, subagent, tool, tool_result_contains, turn
from .harness import NOW, aether_ok, run_and_kill, state
from helpers.plugin import copy_plugin
from helpers.processes import SLEEP, alive, argv_of, descendants, is_sleeper

pytestmark = pytest.mark.e2e

# ---------------------------------------------------------------- helpers


def prepare(claude, goal: str, plan: dict, *init_args) -> None:
    """A colony with a plan, made by the helper (no /ant:init, no /ant:plan)."""
    aether_ok(claude, "colony-init", "-", *init_args, input=goal)
    aether_ok(claude, "plan-load", "-", input=json.dumps(plan))
    with_tests(claude.project)


def lead_planned(claude, assignment: dict) -> dict:
    """The build started and the Phase Lead's answer recorded, by the helper (as a Queen would)."""
    lead = aether_ok(claude, "next", "--build", "1")
    assert [s["id"] for s in lead["spawns"]] == ["lead1"], lead
    return aether_ok(claude, "record", "lead1", "-", input=json_block(assignment))


def ledger_of(claude) -> tuple[dict, dict]:
    """(the build's run record, {local: spawn record}) from spawns.json."""
    data = state(claude, "spawns.json")
    run = data["runs"][-1]
    return run, {s["local"]: s for s in data["spawns"] if s["scope"] == run["scope"]}


def answer_file(claude, run: dict, local: str) -> str:
    return (claude.project / ".aether" / "spawns" / run["scope"] / f"{local}.answer.md").read_text("utf-8")


def events_of(claude, kind: str) -> list[dict]:
    return [e for e in state(claude, "events.json")["events"] if e["type"] == kind]


def agent_descriptions(run) -> list[str]:
    return [c["input"]["description"].split()[0] for c in run.tool_calls("Agent")]


# ---------------------------------------------------------------- (1) hooks absent, nothing lost

SETTINGS = "SEPARATOR = '-'\n"
SETTINGS_CHECK = 'python3 -c "import slug.settings"'
W2_FAILED = {
    "status": "failed",
    "summary": "slug/settings.py is not there yet",
    "files_created": [],
    "files_modified": [],
    "failure": {
        "task": "1.2",
        "caste": "builder",
        "error": "ModuleNotFoundError: No module named 'slug'",
        "root_cause": "the settings module was never written",
        "suggested_fix": "write slug/settings.py with SEPARATOR = '-'",
        "confidence": 90,
        "fix_scope": "contained",
        "files": ["slug/settings.py"],
        "category": "missing_file",
    },
}


def plugin_without_agent_hooks(dest: Path) -> Path:
    """The plugin as a user has it, but its hooks.json holds none of the hooks that carry spawns
    (an older or trimmed Claude Code setup): only the guard and the start-up hooks stay."""
    copy_plugin(dest, link_venv=True)  # the helper as installed (no venv build at start-up)
    hooks_file = dest / "hooks" / "hooks.json"
    config = json.loads(hooks_file.read_text("utf-8"))
    for event in list(config["hooks"]):
        kept = [h for h in config["hooks"][event] if "agent.sh" not in json.dumps(h)]
        if kept:
            config["hooks"][event] = kept
        else:
            del config["hooks"][event]
    hooks_file.write_text(json.dumps(config, indent=2), "utf-8")
    assert "agent-hook" not in hooks_file.read_text("utf-8")
    return dest


def named_brief(local: str) -> Matcher:
    """A subagent whose prompt is spawn `local`'s short prompt (the hook did not expand it)."""
    return Matcher(
        f"named_brief({local})",
        lambda r: re.search(
            rf"^You are {re.escape(local)}\. Your brief is \.aether/spawns/[\w-]+/{re.escape(local)}\.md - read it", r.first_user_text, re.M
        ),
    )


def brief_named(request) -> str:
    """The brief file a short prompt names (relative to the project)."""
    return re.search(r"Your brief is (\.aether/spawns/\S+\.md)", request.first_user_text).group(1)


def answers_by_spawn(request) -> dict:
    """{spawn id: the ant's answer} for the Agent results in the last message."""
    calls = {c["id"]: c["input"]["description"].split()[0] for c in request.tool_uses() if c["name"] == "Agent"}
    return {calls[t["tool_use_id"]]: agent_report(t["text"]) for t in request.tool_results()}


def record_each(request) -> list[dict]:
    """One `aether record <id> - <<'EOF'` per answer (the body's command, ids filled)."""
    return [run_body(request, "aether record <id> -", stdin=text, id=local) for local, text in sorted(answers_by_spawn(request).items())]


def test_without_the_agent_hooks_the_ants_read_their_briefs_and_the_queen_records(claude, tmp_path):
    plugin = plugin_without_agent_hooks(tmp_path / "plugin")
    prepare(claude, "A slug helper", slug_plan(), "--mode", "LIGHTWEIGHT")
    project = claude.project
    no_hook = ~hook_says("Aether")
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)  # lead1
    q.step(record_each, no_hook)
    q.step(spawn_next)  # w1, w2 (LIGHTWEIGHT approved the plan): the `next` the record printed
    q.step(record_each, no_hook)
    q.step(spawn_next)  # r1, w2's retry
    q.step(record_each, no_hook)
    q.step(lambda r: say(next_action(r)["text"]), tool_result_contains('"action":"done"'))

    def ant(caste, local, *turns):
        """The ant reads the brief its prompt names, then takes `turns` (replies) in order."""
        steps = [
            subagent(f"ant:{caste}", named_brief(local), turn(1)).reply(lambda r: tool("Read", file_path=str(project / brief_named(r))))
        ]
        for n, reply in enumerate(turns, start=2):
            also = [tool_result_contains("[aether spawn .aether/spawns/")] if n == 2 else []  # read it
            steps.append(subagent(f"ant:{caste}", named_brief(local), turn(n), *also).reply(reply))
        return steps

    answers = {
        "lead1": json_block(slug_assignment(), "Two independent builders."),
        "w1": worker_result("slugify() in slug/core.py", created=["slug/core.py", "slug/__init__.py"]),
        "w2": json_block(W2_FAILED, "The settings module does not import."),
        "r1": worker_result("slug/settings.py with the separator", created=["slug/settings.py"]),
    }
    ants = [
        *ant("route-setter", "lead1", say(answers["lead1"])),
        *ant(
            "builder",
            "w1",
            tool("Write", file_path=f"{project}/slug/core.py", content=SLUG),
            tool("Write", file_path=f"{project}/slug/__init__.py", content="from slug.core import slugify\n"),
            say(answers["w1"]),
        ),
        *ant("builder", "w2", bash(SETTINGS_CHECK), say(answers["w2"])),
        *ant(
            "builder",
            "r1",
            tool("Write", file_path=f"{project}/slug/settings.py", content=SETTINGS),
            bash(SETTINGS_CHECK),
            say(answers["r1"]),
        ),
    ]
    run = claude.run("/ant:build 1", q.steps + ants, plugin_dirs=[plugin], env=NOW, timeout=400)

    assert run.permission_denials == []
    assert "--plugin-dir" in run.argv and str(plugin) in run.argv
    # no hook on Agent ran: the ants got the short prompts and read the briefs themselves
    notes = [json.dumps(m) for t in run.main_turns for m in t.messages if m.get("role") == "system"]
    assert notes and not any("hook additional context" in n or "Aether recorded" in n for n in notes)
    calls = run.tool_calls("Agent")
    assert agent_descriptions(run) == ["lead1", "w1", "w2", "r1"]
    assert all(c["input"]["run_in_background"] is False and len(c["input"]["prompt"]) < 150 for c in calls)
    for call in calls:
        local = call["input"]["description"].split()[0]
        firsts = [t for t in run.subagent_turns() if t.first_user_text.endswith(call["input"]["prompt"])]
        assert firsts, local  # the subagent's task was the short prompt, unchanged
    # the Queen piped each answer, then asked `aether next`
    assert [c.split(" <<")[0] for c in run.bash_commands()] == [
        "aether next --build 1",
        "aether record lead1 -",
        "aether record w1 -",
        "aether record w2 -",
        "aether record r1 -",
    ]
    # every spawn recorded via the Queen, each answer kept as the ant gave it (the heredoc ends
    # it with a newline)
    build, spawns = ledger_of(claude)
    assert {k: (s["status"], s["via"], s["launched_at"]) for k, s in spawns.items()} == {k: ("recorded", "queen", None) for k in answers}
    for local, text in answers.items():
        assert answer_file(claude, build, local) == text + "\n", local
    assert "failed" in spawns["w2"]["outcome"] and "completed" in spawns["r1"]["outcome"]
    # the build finished: the retry recovered 1.2, the helper ran the syntax check
    assert build["finished"] is True and build["done"] is True
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert {n: (v["role"], v["status"]) for n, v in tree["nodes"].items()} == {
        "w1": ("worker", "completed"),
        "w2": ("worker", "failed"),
        "r1": ("retry", "completed"),
    }
    assert tree["status"] == "finished"
    phase = state(claude, "PROJECT_PLAN.json")["phases"][0]
    assert (phase["status"], [t["status"] for t in phase["tasks"]]) == ("completed", ["completed", "completed"])
    failures = state(claude, "failures.json")
    assert [(r["task"], r["kind"], r["result"]) for r in failures["retry_log"]] == [("1.2", "retry", "recovered")]
    assert aether_ok(claude, "next")["action"] == "done"


# ---------------------------------------------------------------- (2) killed mid-wave, resumed


def test_a_build_killed_mid_wave_resumes_in_a_new_session_with_the_same_spawns(claude):
    prepare(claude, "A slug helper", slug_plan(), "--mode", "LIGHTWEIGHT")
    lead_planned(claude, slug_assignment())
    project = claude.project

    # the first session: the wave's two ants start working and hang
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)
    hanging = [subagent("ant:builder", is_ref(local), turn(1)).reply(bash(SLEEP, "wait for the build server")) for local in ("w1", "w2")]

    sleepers: set = set()

    def both_working(pid: int) -> bool:
        """Both spawns marked `launched` by the PreToolUse hook, and both ants inside their Bash call."""
        spawns = state(claude, "spawns.json")["spawns"] if (project / ".aether/data/spawns.json").exists() else []
        launched = {s["local"] for s in spawns if s["status"] == "launched"}
        sleepers.update(p for p in descendants(pid) if is_sleeper(argv_of(p)))
        return launched >= {"w1", "w2"} and len(sleepers) >= 2

    killed = run_and_kill(claude, "/ant:build 1", q.steps + hanging, both_working, env=NOW)
    assert killed.code != 0 and not killed.result  # it never finished
    assert len(sleepers) == 2 and not any(alive(p) for p in sleepers)  # the ants died with it
    first_calls = {c["input"]["description"].split()[0]: c for c in killed.tool_calls("Agent")}
    assert sorted(first_calls) == ["w1", "w2"]
    build, spawns = ledger_of(claude)
    assert {k: s["status"] for k, s in spawns.items()} == {"lead1": "recorded", "w1": "launched", "w2": "launched"}
    first_tool_ids = {k: spawns[k]["tool_use_id"] for k in ("w1", "w2")}
    assert first_tool_ids == {k: c["id"] for k, c in first_calls.items()}
    nodes = state(claude, "COLONY_STATE.json")["spawn_tree"]["nodes"]
    assert {n: v["status"] for n, v in nodes.items()} == {"w1": "running", "w2": "running"}

    # a NEW session (no --continue): the same spawns are handed out again, and run once
    answers = {
        "w1": worker_result("slugify() in slug/core.py", created=["slug/core.py", "slug/__init__.py"]),
        "w2": worker_result("the separator setting", created=["slug/settings.py"]),
    }
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(spawn_next)
    q.step(lambda r: say(next_action(r)["text"]), hook_says("Aether next: done"))
    ants = [
        subagent("ant:builder", is_ref("w1"), turn(1)).reply(tool("Write", file_path=f"{project}/slug/core.py", content=SLUG)),
        subagent("ant:builder", is_ref("w1"), turn(2)).reply(
            tool("Write", file_path=f"{project}/slug/__init__.py", content="from slug.core import slugify\n")
        ),
        subagent("ant:builder", is_ref("w1"), turn(3)).reply(say(answers["w1"])),
        subagent("ant:builder", is_ref("w2"), turn(1)).reply(tool("Write", file_path=f"{project}/slug/settings.py", content=SETTINGS)),
        subagent("ant:builder", is_ref("w2"), turn(2)).reply(say(answers["w2"])),
    ]
    resumed = claude.run("/ant:build 1", q.steps + ants, env=NOW, timeout=300)

    assert resumed.permission_denials == []
    again = json.loads(resumed.tool_result(resumed.tool_calls("Bash")[0])["text"].strip().splitlines()[-1])["result"]
    assert again["action"] == "spawn" and again["run"] == build["scope"]
    assert [(s["id"], s["prompt"]) for s in again["spawns"]] == [(k, first_calls[k]["input"]["prompt"]) for k in ("w1", "w2")]
    assert agent_descriptions(resumed) == ["w1", "w2"]
    # each ran once more and was recorded once, by the hook, with this session's tool call
    build, spawns = ledger_of(claude)
    assert sorted(spawns) == ["lead1", "w1", "w2"]
    second_calls = {c["input"]["description"].split()[0]: c["id"] for c in resumed.tool_calls("Agent")}
    for local in ("w1", "w2"):
        assert (spawns[local]["status"], spawns[local]["via"]) == ("recorded", "hook")
        assert spawns[local]["tool_use_id"] == second_calls[local] != first_tool_ids[local]
        assert answer_file(claude, build, local) == answers[local]  # as the ant gave it
    assert len(resumed.subagent_turns()) == 5  # w1's three turns, w2's two: nothing ran twice
    for kind in ("spawn_started", "spawn_finished"):  # started by the first session, finished by the second
        assert sorted(e["content"].split()[0] for e in events_of(claude, kind)) == ["w1", "w2"], kind
    assert not any("recorded before" in line for r in resumed.main_turns for line in hook_lines(r))
    # the build is complete and the state holds together
    assert build["done"] is True and build["finished"] is True
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert tree["status"] == "finished"
    assert {n: v["status"] for n, v in tree["nodes"].items()} == {"w1": "completed", "w2": "completed"}
    phase = state(claude, "PROJECT_PLAN.json")["phases"][0]
    assert (phase["status"], [t["status"] for t in phase["tasks"]]) == ("completed", ["completed", "completed"])
    valid = aether_ok(claude, "validate-state", "all")
    assert valid["pass"] is True, valid
    assert aether_ok(claude, "next")["action"] == "done"
    # an answer piped again (a Queen who did not see the hook's line) is not recorded twice
    twice = aether_ok(claude, "record", "w1", "-", input="a second answer")
    assert twice["already_recorded"] is True and answer_file(claude, build, "w1") == answers["w1"]


# ---------------------------------------------------------------- (3) parallel hooks

# four small modules, then two more phases
WIDE_PLAN = {
    **FOUR_MODULES,
    "phases": FOUR_MODULES["phases"]
    + [
        {
            "id": 2,
            "name": "Glue",
            "description": "one module that uses them",
            "tasks": [{"id": "2.1", "description": "mods/all.py", "depends_on": []}],
            "success_criteria": ["it imports"],
        },
        {
            "id": 3,
            "name": "Docs",
            "description": "a README",
            "tasks": [{"id": "3.1", "description": "README.md", "depends_on": []}],
            "success_criteria": ["it exists"],
        },
    ],
}
LESSONS = "- independent modules build well in one wave\n"


def test_four_hooks_recording_at_once_hand_the_next_action_out_once(claude):
    prepare(claude, "Four small modules", WIDE_PLAN)
    asked = lead_planned(claude, FOUR_ASSIGNMENT)
    assert asked["next"]["action"] == "ask"  # 4 workers: STANDARD asks the user
    project = claude.project
    wave = [f"w{i}" for i in range(1, 5)]
    together = threading.Barrier(len(wave), timeout=60)

    def at_once(text):
        def reply(request):
            try:
                together.wait()  # the four answers leave the model at the same moment
            except threading.BrokenBarrierError:
                pass
            return say(text)

        return reply

    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", "--approve", N=1))
    q.step(spawn_next)  # the wave of four
    q.step(spawn_next, hook_says("Aether next: spawn"))  # the reviewer
    q.step(spawn_next, hook_says("Aether next: spawn"))  # the watcher
    q.step(lambda r: bash(f"aether record lessons - <<'EOF'\n{LESSONS}EOF"), hook_says("Aether next: lessons"))
    q.step(lambda r: say(helper_result(r)["next"]["text"]))
    ants = []
    for i, local in enumerate(wave, start=1):
        ants += [
            subagent("ant:builder", is_ref(local), turn(1)).reply(
                tool("Write", file_path=f"{project}/mods/m{i}.py", content=f"VALUE = {i}\n")
            ),
            subagent("ant:builder", is_ref(local), turn(2)).reply(at_once(worker_result(f"mods/m{i}.py", created=[f"mods/m{i}.py"]))),
        ]
    ants += [
        subagent("ant:watcher", is_ref("v1")).reply(say(FOUR_REVIEW)),
        *honest_watcher(is_ref("watch1"), FOUR_VERIFIED),
    ]
    (project / "mods").mkdir()
    (project / "mods" / "__init__.py").write_text("", "utf-8")
    run = claude.run("/ant:build 1 --approve", q.steps + ants, env=NOW, timeout=400)

    assert run.permission_denials == []
    assert agent_descriptions(run) == [*wave, "v1", "watch1"]
    # the four answers left the model together; their four hooks recorded all four
    finals = [t for t in run.subagent_turns("ant:builder") if any(m.get("role") == "assistant" for m in t.messages)]
    assert len(finals) == 4 and max(t.received_at for t in finals) < min(t.answered_at for t in finals)
    after_wave = run.main_turns[2]
    lines = hook_lines(after_wave)
    recorded = [line for line in lines if line.startswith("Aether recorded ")]
    assert sorted(recorded) == [f"Aether recorded {w} builder: completed" for w in wave], lines
    waiting = sorted(len(line[len("(waiting for ") : -1].split(", ")) for line in lines if line.startswith("(waiting for "))
    assert waiting == [1, 2, 3], lines  # one after the other, each saw the ones still out
    nexts = [line for line in lines if line.startswith("Aether next: ")]
    assert len(nexts) == 1 and "v1 watcher" in nexts[0], lines
    # spawns.json: four recorded by hooks; the next action (the reviewer) dispatched once
    build, spawns = ledger_of(claude)
    assert {w: (spawns[w]["status"], spawns[w]["via"]) for w in wave} == {w: ("recorded", "hook") for w in wave}
    assert len({spawns[w]["action"] for w in wave}) == 1
    assert sorted(spawns) == sorted(["lead1", *wave, "v1", "watch1"])
    actions = [spawns[k]["action"] for k in ("lead1", "w1", "v1", "watch1")]
    assert actions == ["a1", "a2", "a3", "a4"] and build["actions"] == 4, (actions, build)
    for i, w in enumerate(wave, start=1):
        assert answer_file(claude, build, w) == worker_result(f"mods/m{i}.py", created=[f"mods/m{i}.py"])
    # the tree: the four workers completed (then the reviewer), the build finished
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert {n: (v["role"], v["status"]) for n, v in tree["nodes"].items() if v["role"] == "worker"} == {
        w: ("worker", "completed") for w in wave
    }
    assert tree["waves"][0] == wave and tree["status"] == "finished"
    assert sorted(e["content"].split()[0] for e in events_of(claude, "spawn_finished")) == wave  # once each
    assert [r["action"] for r in tree["reviews"]["1"]] == ["continue"]  # v1's review, recorded once
    phase = state(claude, "PROJECT_PLAN.json")["phases"][0]
    assert (phase["status"], [t["status"] for t in phase["tasks"]]) == ("completed", ["completed"] * 4)
    assert aether_ok(claude, "validate-state", "all")["pass"] is True
