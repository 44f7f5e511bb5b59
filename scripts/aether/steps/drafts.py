"""The plan loop's drafts (docs/decisions/refinement-loops.md): the planner's PROJECT_PLAN of each iteration, stored
by the helper so the critic, the next planner iteration and a resumed session read the same
draft; `plan-load --from-loop` stores the latest one as the colony's plan.

drafts.json: `{loops: [{loop_id, drafts: [{iteration, round, plan, warnings, stored_at}]}]}`,
the drafts of the newest MAX_LOOPS plan loops, MAX_DRAFTS_PER_LOOP each.
"""

from __future__ import annotations

import json

from aether.core import clock, inputs
from aether.core.exceptions import input_error, state_error
from aether.rules import contracts
from aether.rules import plans as plans_rules
from aether.state import events, store
from aether.steps import loops

MAX_LOOPS = 5  # plan loops whose drafts are kept (the oldest dropped)
MAX_DRAFTS_PER_LOOP = 10
MAX_DRAFT_CHARACTERS = 300_000  # one draft, as JSON


def _loop(loop_id: str) -> dict:

    loop = loops.find(store.read("loops"), loop_id)
    if loop["type"] != "plan":
        raise input_error("wrong_loop_type", f"loop {loop_id} is a {loop['type']} loop; drafts belong to plan loops (/ant:plan runs one)")
    return loop


def _entry(data: dict, loop_id: str) -> dict | None:
    return next((e for e in data["loops"] if e.get("loop_id") == loop_id), None)


@store.writes("drafts", "events")
def _keep_draft(files, loop_id: str, loop: dict, iteration: int, plan: dict, warnings: list) -> dict:
    """Keep the draft as the loop's draft for `iteration` (replacing one stored for it) and log it."""
    data = files["drafts"]
    entry = _entry(data, loop_id)
    if entry is None:
        entry = {"loop_id": loop_id, "drafts": []}
        data["loops"].append(entry)
        del data["loops"][:-MAX_LOOPS]
    replaced = any(d.get("iteration") == iteration for d in entry["drafts"])
    entry["drafts"] = [d for d in entry["drafts"] if d.get("iteration") != iteration]
    entry["drafts"].append({"iteration": iteration, "round": loop["round"], "plan": plan, "warnings": warnings, "stored_at": clock.iso()})
    del entry["drafts"][:-MAX_DRAFTS_PER_LOOP]
    events.append(
        files["events"],
        "plan_draft_stored",
        "queen",
        f"plan loop {loop_id}: draft for iteration {iteration}" + (" (replaced)" if replaced else ""),
    )
    critic = f"`aether feedback-store {loop_id} - --kind critic`"  # by hand
    return {
        "loop_id": loop_id,
        "iteration": iteration,
        "round": loop["round"],
        "replaced": replaced,
        "phases": len(plan["phases"]),
        "tasks": sum(len(p["tasks"]) for p in plan["phases"]),
        "warnings": warnings,
        "drafts": [d["iteration"] for d in entry["drafts"]],
        "next": {
            "command": f"aether plan-draft-get {loop_id}",
            "reason": f"the critic reads this draft, then its feedback goes to {critic}",
        },
    }


def store_draft(loop_id: str, text: str) -> dict:
    """plan-draft-store: validate a planner's draft as a PROJECT_PLAN and keep it for the
    iteration about to be scored (a second draft for that iteration replaces the first)."""

    doc = contracts.extract_json(text, "the plan draft")
    plan, defects, warnings = plans_rules.validate(doc)
    if defects:
        raise input_error("invalid_plan", plans_rules.defect_message(defects, "the draft has", "store it again"), defects=defects)
    inputs.check_size(json.dumps(plan, ensure_ascii=False), MAX_DRAFT_CHARACTERS, "the draft as JSON")
    loop = _loop(loop_id)
    if loop["status"] == "complete":
        raise state_error("loop_complete", f"loop {loop_id} is complete; load its latest draft with /ant:plan --accept")
    iteration = len(loop["iterations"]) + 1

    return _keep_draft(loop_id, loop, iteration, plan, warnings)


def get(loop_id: str, iteration: int | None = None) -> dict:
    """The loop's latest draft (or that of ITERATION)."""
    _loop(loop_id)
    entry = _entry(store.read("drafts"), loop_id)
    drafts = entry["drafts"] if entry else []
    if not drafts:
        raise state_error(
            "no_draft", f"loop {loop_id} has no stored draft yet: the planner's draft comes first (/ant:plan hands the planner out)"
        )
    if iteration is None:
        draft = drafts[-1]
    else:
        draft = next((d for d in drafts if d.get("iteration") == iteration), None)
        if draft is None:
            raise input_error(
                "unknown_iteration",
                f"loop {loop_id} has no draft for iteration {iteration} (drafts: {', '.join(str(d['iteration']) for d in drafts)})",
            )
    return {
        "loop_id": loop_id,
        "iteration": draft["iteration"],
        "round": draft.get("round"),
        "plan": draft["plan"],
        "warnings": draft.get("warnings", []),
        "stored_at": draft["stored_at"],
        "drafts": [d["iteration"] for d in drafts],
        "text": render(loop_id, draft),
    }


def render(loop_id: str, draft: dict) -> str:
    """A draft as an outline the critic (and the user) can read."""
    plan = draft["plan"]
    phases = plan.get("phases", [])
    lines = [
        f"PLAN DRAFT — loop {loop_id}, iteration {draft['iteration']}: {len(phases)} phases, "
        f"{sum(len(p.get('tasks', [])) for p in phases)} tasks"
    ]
    if plan.get("goal"):
        lines.append(f"Goal: {plan['goal']}")
    for phase in phases:
        lines += ["", f"Phase {phase['id']}: {phase['name']}", f"  {phase.get('description', '')}"]
        for task in phase.get("tasks", []):
            deps = task.get("depends_on") or []
            lines.append(f"  - {task['id']} {task['description']}" + (f" (after {', '.join(deps)})" if deps else ""))
        for criterion in phase.get("success_criteria", []):
            lines.append(f"  ✓ {criterion}")
    return "\n".join(lines)


def plan_of(loop_id: str, iteration: int | None = None) -> tuple:
    """(the draft's PROJECT_PLAN, its iteration) for plan-load --from-loop."""
    found = get(loop_id, iteration)
    return found["plan"], found["iteration"]
