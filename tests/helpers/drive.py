"""The helper driving a build: `aether next`, `aether record` and the Agent hooks, with the
answers ants give (in-process, on the `project` fixture)."""

from __future__ import annotations

import itertools
import json
import re
import time

from .colony import PHASE_PLAN, ok, write

_agents = itertools.count(1)
CHECK_LINE = re.compile(r"^  - (imports|tests|launch): (?!checked by|nothing to check|cannot be run)(.+)$", re.M)

NOW = "2026-02-04T10:00:00Z"
# The Phase Lead's plan for PHASE_PLAN: two workers in wave 1, cli after api.
ASSIGNMENT = {
    "phase": 1,
    "workers": [
        {"id": "models", "caste": "builder", "tasks": ["1.1", "1.2"], "writes": ["src/todo.py"]},
        {"id": "api", "caste": "builder", "tasks": ["1.3"], "writes": ["src/api.py"]},
        {"id": "cli", "caste": "builder", "tasks": ["1.4"], "writes": ["src/cli.py"], "depends_on": ["api"]},
    ],
}


def with_tests(project):
    """The project has tests (a pytest file) and an entry point (`app/__main__.py`): its
    verification names `python3 -m pytest -q` and, in FULL mode, `python3 -m app --help`."""
    write(project, "tests/test_app.py", "app/__main__.py")
    return project


def named_checks(brief: str) -> dict:
    """{check: command} a verification brief names."""
    return dict(CHECK_LINE.findall(brief))


def ran(project, ref: str, calls: list):
    """What Claude Code's hooks keep of an ant's calls (hooks/evidence.sh): its log under
    .aether/data/evidence (the agent the spawn ran as noted on it, as the recording of its answer
    notes it), each call a Bash record {command, exit, tail} ended now."""
    ledger_file = project.data / "spawns.json"
    data = json.loads(ledger_file.read_text("utf-8"))
    spawn = next(s for s in data["spawns"] if s["ref"] == ref)
    agent = spawn.get("agent_id") or f"test{next(_agents)}"
    if spawn.get("agent_id") != agent:
        spawn["agent_id"] = agent
        ledger_file.write_text(json.dumps(data), "utf-8")
    folder = project.data / "evidence"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{agent}.jsonl"
    lines = [] if log.exists() else [{"spawn": ref, "agent_id": agent, "by": "hooks", "at": NOW}]
    for call in calls:
        lines.append({"at": NOW, "t": time.time(), "tool": "Bash", "cwd": str(project.root), "ms": 5, "tail": "", "exit": 0, **call})
    with log.open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(line) + "\n" for line in lines))


def ran_checks(project, ref: str, brief: str, exit: int = 0, tail: str = "2 passed in 0.01s"):
    """An honest watcher: every command its brief names, run as written."""
    ran(project, ref, [{"command": c, "exit": exit, "tail": tail} for c in named_checks(brief).values()])


def brief_at(project, ref: str) -> str:
    return (project.root / ".aether" / "spawns" / f"{ref}.md").read_text("utf-8")


def start_colony(project, monkeypatch):
    """A colony with PHASE_PLAN loaded, its clock pinned (the `drive_colony` fixture)."""
    monkeypatch.setenv("AETHER_NOW", NOW)
    with_tests(project)
    ok(project, "colony-init", "Build a todo API")
    ok(project, "plan-load", "-", input=json.dumps(PHASE_PLAN))
    return project


def result(**kw):
    """A worker's answer: prose, then its JSON block (completed, no files unless given)."""
    body = {"status": "completed", "summary": "done", "files_created": [], "files_modified": [], **kw}
    return "Work done.\n```json\n" + json.dumps(body) + "\n```"


def verification(spec, lint_errors, findings):
    """A verification with its score parts: 69, 72, 73.5 for spec 0.6, 0.8, 0.9 with a lint error; 100 at 1 and 0."""
    parts = {
        "tests": {"passed": 2, "failed": 0},
        "types": {"errors": 0},
        "lint": {"errors": lint_errors},
        "coverage": 90 if spec == 1 else 60,
        "plan_alignment": 1,
        "spec_alignment": spec,
    }
    doc = {
        "passed": True,
        "score": 80,
        "summary": "; ".join(findings) or "every check passes",
        "checks": [{"name": "tests", "passed": True, "detail": "2 passed"}],
        "score_parts": parts,
        "findings": findings,
    }
    return "```json\n" + json.dumps(doc) + "\n```"


def approved_wave(p):
    """The Phase Lead's ASSIGNMENT recorded and approved: the first wave's spawns handed out."""
    ok(p, "next", "--build", "1")
    ok(p, "record", "lead1", "-", input=json.dumps(ASSIGNMENT))
    return ok(p, "next", "--build", "1", "--approve")


def drive(p, action, verifications):
    """Answer spawn actions until another comes: builders write their files, reviewers pass,
    the watcher and the loop's verify ants give the next verification."""
    while action["action"] == "spawn":
        nodes = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]["nodes"]
        for spawn in action["spawns"]:
            node = nodes.get(spawn["id"], {})
            if spawn["id"].startswith("watch") or node.get("role") == "verify":
                ref = f"{scope_of(p)}/{spawn['id']}"
                ran_checks(p, ref, brief_at(p, ref))
                answer = verifications.pop(0)
            elif node.get("role") == "reviewer":
                answer = '```json\n{"findings": [], "summary": "fine"}\n```'
            else:
                write(p, *node["writes"])
                answer = result(files_modified=node["writes"]) if node["role"] == "refine" else result(files_created=node["writes"])
            out = ok(p, "record", spawn["id"], "-", input=answer)
        action = out["next"]
    assert verifications == []
    return action


# ---------------------------------------------------------------- the spawns ledger and the hooks


def scope_of(p):
    """The scope (folder under .aether/spawns) of the latest run."""
    return json.loads((p.data / "spawns.json").read_text("utf-8"))["runs"][-1]["scope"]


def spawn_status(p, local):
    spawns = json.loads((p.data / "spawns.json").read_text("utf-8"))["spawns"]
    return [s["status"] for s in spawns if s["local"] == local][-1]


def hook(p, event, payload):
    """`aether agent-hook EVENT` with a payload: its JSON answer, or None (a hook never fails)."""
    out = p.run("agent-hook", event, input=payload if isinstance(payload, str) else json.dumps(payload))
    assert out.code == 0 and out.stderr == "", (out.code, out.stderr)
    return json.loads(out.stdout) if out.stdout else None


def context(out):
    """The context a hook's answer adds for the Queen."""
    return out["hookSpecificOutput"]["additionalContext"]


def spawns_of(project) -> dict:
    """spawns.json as it is now."""
    return json.loads((project.data / "spawns.json").read_text("utf-8"))


def spawn_rec(project, local: str) -> dict:
    """The newest spawn record with this local id."""
    return [s for s in spawns_of(project)["spawns"] if s["local"] == local][-1]


def failure_history(project) -> list:
    """failures.json's failure reports ([] before the first)."""
    path = project.data / "failures.json"
    return json.loads(path.read_text("utf-8"))["history"] if path.exists() else []


# ---------------------------------------------------------------- a build up to its verification

WATCHER_SAYS_PASS = (
    "```json\n"
    + json.dumps({"passed": True, "score": 95, "summary": "all good", "checks": [{"name": "tests", "passed": True, "detail": "all pass"}]})
    + "\n```"
)


def to_verification(p, started: bool = False) -> dict:
    """The build of phase 1 answered honestly up to its watcher: the action that spawns it
    (started: `aether next --build 1` ran already)."""
    if not started:
        ok(p, "next", "--build", "1")
    action = ok(p, "record", "lead1", "-", input="```json\n" + json.dumps(ASSIGNMENT) + "\n```")["next"]
    action = ok(p, "next", "--build", "1", "--approve")
    while action["action"] == "spawn" and not action["spawns"][0]["id"].startswith("watch"):
        nodes = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]["nodes"]
        for spawn in action["spawns"]:
            node = nodes[spawn["id"]]
            if node["role"] == "reviewer":
                out = ok(p, "record", spawn["id"], "-", input='```json\n{"findings": [], "summary": "fine"}\n```')
            else:
                write(p, *node["writes"])
                out = ok(p, "record", spawn["id"], "-", input=result(files_created=node["writes"]))
        action = out["next"]
    assert [s["id"] for s in action["spawns"]] == ["watch1"], action
    return action


def watcher(p, local: str, text: str = WATCHER_SAYS_PASS, **run) -> dict:
    """The watcher `local` answers (after running what `run` says: all its checks by default)."""
    ref = f"{scope_of(p)}/{local}"
    if run.get("checks", True):
        ran_checks(p, ref, brief_at(p, ref), run.get("exit", 0), run.get("tail", "4 passed in 0.02s"))
    for call in run.get("calls", []):
        ran(p, ref, [call])
    return ok(p, "record", local, "-", input=text)


def phase_record(p) -> dict:
    return json.loads((p.data / "phase_records.json").read_text("utf-8"))["records"][-1]
