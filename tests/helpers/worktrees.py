"""A colony in a git repository whose same-wave builders work in their own worktrees: the
project, the Phase Lead's two-builder plan, and a builder's work in its copy."""

from __future__ import annotations

import json
from pathlib import Path

from .colony import ok, tree
from .git import init_repo

APP = "def one():\n    return 1\n\n\ndef two():\n    return 2\n\n\ndef three():\n    return 3\n"


def block(data: dict) -> str:
    return "```json\n" + json.dumps(data) + "\n```"


PLAN = {
    "goal": "A small app",
    "phases": [
        {
            "id": 1,
            "name": "Functions",
            "description": "app and util",
            "tasks": [
                {"id": "1.1", "description": "app.py: one() returns 10", "depends_on": []},
                {"id": "1.2", "description": "util.py, and three() in app.py", "depends_on": []},
            ],
            "success_criteria": ["app imports"],
        },
        {
            "id": 2,
            "name": "More",
            "description": "later",
            "tasks": [{"id": "2.1", "description": "more.py", "depends_on": []}],
            "success_criteria": ["more imports"],
        },
    ],
}
LEAD = block(
    {
        "phase": 1,
        "workers": [
            {"id": "app", "caste": "builder", "tasks": ["1.1"], "writes": ["app.py"]},
            {"id": "util", "caste": "builder", "tasks": ["1.2"], "writes": ["util.py"]},
        ],
    }
)


def start_colony(project, monkeypatch):
    """app.py committed, notes.txt untracked, a colony with PLAN (the `worktree_colony` fixture)."""
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    (project.root / "notes.txt").write_text("untracked, made by the colony\n", "utf-8")
    init_repo(project.root, {"app.py": APP}, "base")
    ok(project, "colony-init", "A small app")
    ok(project, "plan-load", "-", input=json.dumps(PLAN))
    return project


def start_wave(p) -> dict:
    """The Phase Lead's LEAD recorded: w1 and w2 handed out, each in its worktree."""
    assert ok(p, "next", "--build", "1")["spawns"][0]["id"] == "lead1"
    wave = ok(p, "record", "lead1", "-", input=LEAD)["next"]
    assert [s["id"] for s in wave["spawns"]] == ["w1", "w2"], wave
    return wave


def workdir(p, spawn_id: str) -> Path:
    """A builder's working copy."""
    return p.root / tree(p)["nodes"][spawn_id]["worktree"]


def edit(p, spawn_id: str, path: str, old: str, new: str) -> None:
    """A builder's edit of `path` in its working copy."""
    f = workdir(p, spawn_id) / path
    f.write_text(f.read_text("utf-8").replace(old, new), "utf-8")


def done(**files) -> str:
    """A builder's answer: completed, with `created=[…]` and `modified=[…]`."""
    return block(
        {"status": "completed", "summary": "done", "files_created": files.get("created", []), "files_modified": files.get("modified", [])}
    )
