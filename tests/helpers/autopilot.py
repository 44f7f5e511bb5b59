"""The autopilot driven by hand in tests: a colony of N small phases, the ants' answers (a lead's
plan, a builder's file, a common-cause failure), the PostToolUse hook as Claude Code runs it with
the captured payload's shape, and a Queen that answers until the run asks, stops or ends."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from .colony import ok
from .drive import ran_checks, with_tests

PAYLOAD = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "agent_post_tool_use.json").read_text("utf-8"))


def plan(n: int, criteria: bool = True, wide: int = 1, wide_phase: int = 1) -> dict:
    """n phases of one task each (`mods/m<phase>.py`); phase `wide_phase` has `wide` tasks."""
    phases = []
    for i in range(1, n + 1):
        tasks = []
        for j in range(1, (wide if i == wide_phase else 1) + 1):
            name = f"mods/m{i}.py" if j == 1 else f"mods/m{i}_{j}.py"
            tasks.append({"id": f"{i}.{j}", "description": name, "depends_on": []})
            if not criteria:
                tasks[-1]["maps_to_criterion"] = False
        phases.append({"id": i, "name": f"Module {i}", "description": f"m{i}", "tasks": tasks, "success_criteria": [f"m{i} imports"]})
    return {"goal": "Small modules", "phases": phases}


def colony_maker(project, monkeypatch):
    """`make(mode, phases, …)`: a colony of `plan(phases)` at NOW, ready for `aether run` (the `colony` fixtures)."""
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")

    def make(mode="LIGHTWEIGHT", phases=3, criteria=True, wide=1, wide_phase=1):
        with_tests(project)
        ok(project, "colony-init", "Small modules", "--mode", mode)
        ok(project, "plan-load", "-", input=json.dumps(plan(phases, criteria, wide, wide_phase)))
        return project

    return make


# ---------------------------------------------------------------- what the ants answer


def brief_of(project, spawn: dict) -> str:
    return (project.root / spawn["prompt"].split("Your brief is ")[1].split(" ")[0]).read_text("utf-8")


def ref_of(spawn: dict) -> str:
    return spawn["prompt"].split("Your brief is .aether/spawns/")[1].split(".md")[0]


def block(data: dict) -> str:
    return "```json\n" + json.dumps(data) + "\n```"


def lead_plan(phase: int, wide: int = 1) -> str:
    """One worker per task (a wide phase 1 has three: STANDARD asks the user about it)."""
    return block(
        {
            "phase": phase,
            "workers": [
                {
                    "id": f"w{j}",
                    "caste": "builder",
                    "tasks": [f"{phase}.{j}"],
                    "writes": [f"mods/m{phase}.py" if j == 1 else f"mods/m{phase}_{j}.py"],
                }
                for j in range(1, wide + 1)
            ],
        }
    )


WIDE = lead_plan(1, 3)


def built(project, brief: str) -> str:
    path = re.search(r"mods/m[\d_]+\.py", brief).group(0)
    (project.root / "mods").mkdir(exist_ok=True)
    (project.root / path).write_text("VALUE = 1\n", "utf-8")
    return block({"status": "completed", "summary": "written", "files_created": [path], "files_modified": []})


def failed(brief: str, error: str = "ImportError: cannot import name 'config' from 'mods'") -> str:
    """A failure whose error every task of the wave shares: a common cause."""
    task = re.search(r"mods/m(\d+)(?:_(\d+))?\.py", brief)
    task = f"{task.group(1)}.{task.group(2) or 1}"
    return block(
        {
            "status": "failed",
            "summary": "it does not import",
            "files_created": [],
            "files_modified": [],
            "failure": {
                "task": task,
                "error": error,
                "root_cause": "the shared config module is missing",
                "suggested_fix": "add mods/config.py",
                "confidence": 85,
                "fix_scope": "contained",
                "files": ["mods/config.py"],
                "category": "import",
            },
        }
    )


def answer(project, spawn: dict) -> str:
    brief = brief_of(project, spawn)
    if spawn["id"].startswith("lead"):
        return lead_plan(int(re.search(r"Phase (\d+):", brief).group(1)))
    if spawn["subagent_type"] == "ant:watcher":
        return block({"passed": True, "score": 90, "summary": "fine", "checks": [], "findings": []})
    if spawn["subagent_type"] == "ant:architect":
        return "Hygiene: nothing stale.\n" + block({"summary": "two stale files", "findings": []})
    return built(project, brief)


def post(project, spawn: dict, text: str, tokens: int = 10_000) -> str:
    """The PostToolUse hook as Claude Code runs it, with the captured payload's shape."""
    payload = copy.deepcopy(PAYLOAD)
    payload["tool_input"].update(prompt=spawn["prompt"], subagent_type=spawn["subagent_type"], description=spawn["description"])
    payload["tool_input"].pop("model", None)
    if spawn.get("model"):
        payload["tool_input"]["model"] = spawn["model"]
    response = payload["tool_response"]
    ledger = json.loads((project.data / "spawns.json").read_text("utf-8"))["spawns"]
    ran_as = next((x.get("agent_id") for x in ledger if x["ref"] == ref_of(spawn)), None)
    response["agentId"] = ran_as or "agent-" + ref_of(spawn).replace("/", "-")  # each ant its own agent
    response["content"] = [{"type": "text", "text": text}]
    response.update(totalTokens=tokens, totalDurationMs=4000, resolvedModel="claude-" + (spawn.get("model") or "opus-5-5"))
    response["usage"].update(input_tokens=tokens - 100, output_tokens=100)
    out = project.run("agent-hook", "post", input=json.dumps(payload))
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]


def drive(project, action: dict, answers=None, tokens: int = 10_000, limit: int = 60) -> tuple:
    """Act as the Queen until ask/done/stop: answer every spawn through the hook, write lessons.
    Returns (the final action, the ids spawned in order)."""
    spawned = []
    for _ in range(limit):
        if action["action"] == "spawn":
            for s in action["spawns"]:
                spawned.append(s["id"])
                if s["subagent_type"] == "ant:watcher":  # an honest watcher runs what its brief names
                    ran_checks(project, ref_of(s), brief_of(project, s))
                text = (answers or {}).get(s["id"], answer)
                post(project, s, text(project, s) if callable(text) else text, tokens)
            action = ok(project, "next")
        elif action["action"] == "lessons":
            action = ok(project, "record", "lessons", "-", input="- small modules build well\n")["next"]
        else:
            return action, spawned
    raise AssertionError("the run did not end")


def snapshot(p) -> dict:
    """The colony's state files as bytes: a refusal must leave them as they were."""
    return {f.name: f.read_bytes() for f in p.data.iterdir() if f.is_file() and f.suffix == ".json"}
