"""The autopilot's scripted colony: N phases of one module each, and the ants that build them
(a Phase Lead, a builder, a watcher per phase), shared by the autopilot's e2e tests under both
runtimes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from . import colony_script
from .colony_script import Queen, is_ref, json_block, run_body, worker_result
from .fake_api import say, subagent, tool, turn
from .harness import aether_ok

LESSONS = "- one small module per phase keeps each build short\n"
VERIFIED = json_block(
    {
        "passed": True,
        "score": 92,
        "summary": "the module imports",
        "checks": [{"name": "imports", "passed": True, "detail": "python3 -c 'import mods' ok"}],
    }
)
# usage of each ant's last turn (Claude Code's totalTokens = its input + output)
LEAD_USE, BUILD_USE, WATCH_USE = (
    {"input_tokens": 3000, "output_tokens": 200},
    {"input_tokens": 6000, "output_tokens": 400},
    {"input_tokens": 2500, "output_tokens": 100},
)


def plan(phases: int, wide_phase: int | None = None) -> dict:
    """`phases` phases of one module each (`mods/m<N>.py`); `wide_phase` has two."""
    out = []
    for i in range(1, phases + 1):
        names = [f"mods/m{i}.py"] + ([f"mods/m{i}_2.py"] if i == wide_phase else [])
        out.append(
            {
                "id": i,
                "name": f"Module {i}",
                "description": f"the module m{i}",
                "tasks": [
                    {"id": f"{i}.{j}", "description": f"write {n}", "depends_on": [], "maps_to_criterion": False}
                    for j, n in enumerate(names, start=1)
                ],
                "success_criteria": [f"mods.m{i} imports"],
            }
        )
    return {"goal": "Small modules", "phases": out}


def prepare(claude, phases: int, mode: str, wide_phase: int | None = None, config: str | None = None) -> Path:
    aether_ok(claude, "colony-init", "-", "--mode", mode, input="Small modules")
    aether_ok(claude, "plan-load", "-", input=json.dumps(plan(phases, wide_phase)))
    project = Path(claude.project)
    (project / "mods").mkdir(exist_ok=True)
    (project / "mods" / "__init__.py").write_text("", "utf-8")
    colony_script.with_tests(project)
    if config:
        (project / ".aether" / "config.yaml").write_text(config, "utf-8")
    return project


def brief_phase(request) -> int:
    return int(re.search(r"Phase (\d+):", request.first_user_text).group(1))


def brief_file(request) -> str:
    return re.search(r"mods/m\d+(?:_2)?\.py", request.first_user_text.split("--- TASK ---")[-1]).group(0)


def lead_answer(request) -> dict:
    phase = brief_phase(request)
    tasks = re.search(r"Tasks to assign: (.*)", request.first_user_text).group(1).split(", ")
    files = [f"mods/m{phase}.py" if t.endswith(".1") else f"mods/m{phase}_2.py" for t in tasks]
    return say(
        json_block(
            {
                "phase": phase,
                "workers": [
                    {"id": f"m{t.replace('.', '_')}", "caste": "builder", "tasks": [t], "writes": [f]} for t, f in zip(tasks, files)
                ],
            },
            "One builder per module.",
        )
    )


def leads(n: int) -> list:
    return [subagent("ant:route-setter", is_ref("lead1")).reply(lead_answer, usage=LEAD_USE) for _ in range(n)]


def builders(project: Path, local: str, n: int) -> list:
    """`n` runs of builder `local`: it writes its module, then answers."""
    write = lambda r: tool("Write", file_path=str(project / brief_file(r)), content="VALUE = 1\n")  # noqa: E731
    done = lambda r: say(worker_result(f"{brief_file(r)} written", created=[brief_file(r)]))  # noqa: E731
    steps = []
    for _ in range(n):
        steps += [
            subagent("ant:builder", is_ref(local), turn(1)).reply(write),
            subagent("ant:builder", is_ref(local), turn(2)).reply(done, usage=BUILD_USE),
        ]
    return steps


queen_reply = colony_script.queen_reply(LESSONS)


def queen(arguments: str, turns: int) -> list:
    q = Queen()
    q.step(lambda r: run_body(r, "aether run -", stdin=arguments))
    for _ in range(turns - 1):
        q.step(queen_reply)
    return q.steps


def shown(run) -> str:
    """The last text the Queen showed the user."""
    return run.main_turns[-1].reply[-1]["text"] if run.main_turns[-1].reply else ""


IMPORT_ERROR = "ImportError: cannot import name 'config' from 'mods'"


def failing(request):
    name = brief_file(request)
    task = "2.1" if name == "mods/m2.py" else "2.2"
    return say(
        json_block(
            {
                "status": "failed",
                "summary": f"{name} does not import",
                "files_created": [],
                "files_modified": [],
                "failure": {
                    "task": task,
                    "error": IMPORT_ERROR,
                    "root_cause": "mods/config.py is missing",
                    "suggested_fix": "add mods/config.py with the shared settings",
                    "confidence": 85,
                    "fix_scope": "contained",
                    "files": ["mods/config.py"],
                    "category": "import",
                },
            }
        )
    )
