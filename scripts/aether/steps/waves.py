"""Waves: the Phase Lead's assignment plan becomes executable waves (plan-waves), the plan's
approval gate, the delegation tree as text, and the post-wave conflict check (wave-conflicts).

plan-waves, in order: dependencies (explicit between workers, and derived from PROJECT_PLAN's
task `depends_on`) become levels — a cycle is an error; within a level, workers that *write*
a common file are merged, transitively, into the one with the most file references (a merged
worker is a builder when castes differ); each level is cut into waves of at most the mode's
workers per wave (never more than its max running workers). Approval is judged after merging.
"""

from __future__ import annotations

from aether.core import clock, containment
from aether.core.exceptions import input_error, state_error
from aether.rules import contracts, modes, spawn_tree
from aether.rules.waves import approval, read_plan, render_tree, schedule, shared_files
from aether.state import events, store

MAX_PLAN_REVISIONS = 3  # revised plans allowed while one awaits approval


# ---------------------------------------------------------------- reading the plan


# ---------------------------------------------------------------- plan-waves


def _phase_of(colony: dict, plan: dict, asked) -> tuple:
    """The phase being built and its PROJECT_PLAN tasks ({id: task}, or None without a plan)."""
    phases = [p for p in plan.get("phases", []) if isinstance(p, dict)]
    running = [p["id"] for p in phases if p.get("status") == "in_progress"]
    if asked is not None and running and asked not in running:
        raise input_error("wrong_phase", f"the plan is for phase {asked}, but phase {running[0]} is being built")
    phase = asked if asked is not None else (running[0] if running else colony.get("current_phase") or None)
    if phase is None:
        raise state_error("no_phase", "no phase is being built: build one with /ant:build N (`aether next --build N`)")
    found = next((p for p in phases if p.get("id") == phase), None)
    if found is None:
        if phases:
            raise input_error("unknown_phase", f"phase {phase} is not in PROJECT_PLAN")
        return phase, None
    return phase, {str(t.get("id")): t for t in found.get("tasks", []) if isinstance(t, dict)}


def _check_path(path: str, reads: bool) -> tuple:
    """A worker's path must stay inside the project, off .git/ and .aether/ (reads may name
    research briefs): (relative path, None) or (None, why)."""
    return containment.project_path(path, allowed=(".aether/research/",) if reads else ())


@store.writes("colony", "events")
def _store_waves(files, doc) -> dict:
    """Turn the assignment plan into waves and store them as the build's spawn tree."""
    colony = files["colony"]
    project_plan = store.read("plan")  # under the colony lock: the plan's writers hold it too
    if colony.get("state") != "EXECUTING":
        raise state_error(
            "not_building",
            f"the colony is {colony.get('state')}: waves are planned during a "
            f"build — build one with /ant:build N (`aether next --build N`)",
        )
    phase, plan_tasks = _phase_of(colony, project_plan, doc.get("phase") if isinstance(doc, dict) else None)
    workers, _, warnings = read_plan(doc, plan_tasks, _check_path)
    mode = colony.get("mode") or modes.DEFAULT_MODE
    prof = modes.profile(mode)
    per_wave = min(prof["workers_per_wave"], prof["spawn_limits"]["max_workers"])
    wave_groups, merges = schedule(workers, per_wave)
    old = colony.get("spawn_tree") or None
    revision, build_id = 0, None
    if old and old.get("phase") == phase and old.get("status") in ("awaiting_approval", "approved", "running"):
        if any(n["status"] != "planned" for n in old.get("nodes", {}).values()):
            raise state_error("build_running", "waves of this build have started; a new plan needs a new build (/ant:build N --resume)")
        # a revision answers the user's review; replacing an approved, unstarted plan is a fresh one
        awaiting = old.get("status") == "awaiting_approval"
        revision = old.get("approval", {}).get("revision", 0) + 1 if awaiting else 0
        if revision > MAX_PLAN_REVISIONS:
            raise state_error(
                "revision_limit",
                f"the plan was revised {MAX_PLAN_REVISIONS} times already; approve "
                f"it with /ant:build N --approve, or start the build over with /ant:build N --resume",
            )
        build_id = old.get("id")
    merged_workers = [w for wave in wave_groups for w in wave]
    shared = shared_files(merged_workers)
    task_count = sum(len(w["tasks"]) for w in merged_workers)
    verdict = approval(mode, task_count, len(merged_workers), len(wave_groups), shared)
    tree = {
        "id": build_id or clock.new_id("build"),
        "phase": phase,
        "status": "awaiting_approval" if verdict["required"] else "approved",
        "mode": mode,
        "max_depth": prof["spawn_limits"]["max_depth"],
        "max_workers": prof["spawn_limits"]["max_workers"],
        "workers_per_wave": per_wave,
        "waves": [],
        "nodes": {},
        "spawn_requests": [],
        "merges": [],
        "approval": {
            **verdict,
            "revision": revision,
            "max_revisions": MAX_PLAN_REVISIONS,
            "approved_by": None if verdict["required"] else f"auto:{mode}",
        },
        "shared_files": shared,
        "rebuilds": {},
        "reviews": {},
        "conflicts": {},
        "seq": 0,
        "created_at": clock.iso(),
    }
    label_to_id = {}
    for number, wave in enumerate(wave_groups, start=1):
        ids = []
        for w in wave:
            node = spawn_tree.add_node(
                tree,
                "worker",
                w["caste"],
                w["tasks"],
                depth=1,
                parent=None,
                wave=number,
                plan_id=w["label"],
                writes=w["writes"],
                reads=w["reads"],
                merged_from=w.get("merged_from", []),
            )
            label_to_id[w["label"]] = node["id"]
            for other in w.get("merged_from", []):
                label_to_id[other] = node["id"]
            ids.append(node["id"])
        tree["waves"].append(ids)
    for wave in wave_groups:
        for w in wave:
            tree["nodes"][label_to_id[w["label"]]]["depends_on"] = sorted({label_to_id[d] for d in w["deps"]})
    tree["merges"] = [{**m, "into": label_to_id[m["into"]]} for m in merges]
    colony["spawn_tree"] = tree
    events.append(
        files["events"],
        "waves_planned",
        "queen",
        f"phase {phase}: {len(merged_workers)} workers in {len(wave_groups)} waves"
        + (f", {len(merges)} merge(s)" if merges else "")
        + ("; awaiting approval" if verdict["required"] else f"; {tree['approval']['approved_by']}"),
    )
    return _answer(tree, warnings)


def plan(text: str) -> dict:
    """plan-waves: turn the Phase Lead's assignment plan into waves and store the spawn tree."""

    doc = contracts.extract_json(text, "the assignment plan")

    return _store_waves(doc)


@store.writes("colony", "events")
def _approve_waves(files, by: str) -> dict:
    """Mark the wave plan that awaits approval approved (again: the same answer). by: `user`, or
    `auto:run` when an autopilot run approves it with the user's --auto-approve."""
    tree = spawn_tree.tree_of(files["colony"])
    if tree.get("status") != "awaiting_approval":
        if tree.get("status") in ("approved", "running"):
            return _answer(tree, [])
        raise state_error("nothing_to_approve", f"the spawn tree is {tree.get('status')}; there is no plan to approve")
    tree["status"] = "approved"
    tree["approval"]["approved_by"] = by
    tree["approval"]["approved_at"] = clock.iso()
    events.append(
        files["events"], "plan_approved", by, f"phase {tree['phase']} wave plan approved (revision {tree['approval'].get('revision', 0)})"
    )
    return _answer(tree, [])


def approve(by: str = "user") -> dict:
    """plan-waves --approve: the user approved the plan that awaits approval."""

    return _approve_waves(by)


def _answer(tree: dict, warnings: list) -> dict:
    nodes = tree["nodes"]
    waves = [
        {
            "wave": i,
            "workers": [
                {k: nodes[nid].get(k) for k in ("id", "caste", "tasks", "writes", "reads", "depends_on", "plan_id")} for nid in ids
            ],
        }
        for i, ids in enumerate(tree["waves"], start=1)
    ]
    return {
        "build": tree["id"],
        "phase": tree["phase"],
        "status": tree["status"],
        "mode": tree["mode"],
        "waves": waves,
        "merges": tree.get("merges", []),
        "shared_files": tree.get("shared_files", []),
        "approval": tree["approval"],
        "limits": {"workers_per_wave": tree["workers_per_wave"], "max_workers": tree["max_workers"], "max_depth": tree["max_depth"]},
        "warnings": warnings,
        "text": render_tree(tree),
    }


# ---------------------------------------------------------------- rendering


# ---------------------------------------------------------------- wave-conflicts


@store.writes("colony", "events")
def _record_conflicts(files, wave: int) -> dict:
    """Find and keep the files two workers of the wave both changed."""
    tree = spawn_tree.tree_of(files["colony"])
    spawn_tree.wave_index(tree, wave)
    touched: dict = {}
    unfinished = []
    for node in tree["nodes"].values():
        if node["wave"] != wave or node["role"] == "reviewer":
            continue
        if node["status"] in ("planned", "running"):
            unfinished.append(node["id"])
        owner = spawn_tree.origin_of(tree, node)
        for path in node.get("files_created", []) + node.get("files_modified", []):
            touched.setdefault(path, {}).setdefault(owner, None)
    found = [{"file": path, "workers": list(owners)} for path, owners in sorted(touched.items()) if len(owners) > 1]
    tree.setdefault("conflicts", {})[str(wave)] = found
    events.append(
        files["events"],
        "wave_conflicts",
        "queen",
        f"wave {wave}: " + (f"{len(found)} file(s) touched by two workers" if found else "no conflicts"),
    )
    if found:
        text = f"Wave {wave}: {len(found)} file(s) changed by more than one worker —\n" + "\n".join(
            f"  - {c['file']}: {', '.join(c['workers'])}" for c in found
        )
    else:
        text = f"Wave {wave}: no file was changed by two workers."
    return {"wave": wave, "conflicts": found, "clean": not found, "unfinished": unfinished, "text": text}


def conflicts(wave: int) -> dict:
    """wave-conflicts: files that two workers of the wave report as created or modified."""

    return _record_conflicts(wave)
