"""What a colony produced: a record per finished build (phase_records.json, written by
build-finish, since the spawn tree is replaced by the next build) and the completion summary
(docs/decisions/refinement-loops.md) that phase-advance shows when the last phase completes.
"""

from __future__ import annotations

from aether.core import clock, paths
from aether.core.exceptions import AetherError
from aether.core.vocabulary import NO_CODE_ROLES
from aether.rules import modes, spend
from aether.rules import plans as plans_rules
from aether.state import costs, memory, store

MAX_RECORDS = 200  # phase_records.json keeps the newest 200
MAX_FILES_PER_RECORD = 1000
FILES_SHOWN = 40  # files listed in the summary's text


# ---------------------------------------------------------------- build records


def tree_files(tree) -> tuple:
    """(created, modified) claimed by the completed spawns of a spawn tree."""
    created, modified = [], []
    nodes = tree.get("nodes") if isinstance(tree, dict) else None
    for node in (nodes or {}).values():
        if not isinstance(node, dict) or node.get("role") in NO_CODE_ROLES or node.get("status") != "completed":
            continue
        created += [f for f in node.get("files_created", []) if f not in created]
        modified += [f for f in node.get("files_modified", []) if f not in modified]
    return created, modified


def _loop_brief(loop: dict | None) -> dict | None:
    if not loop:
        return None
    its = loop.get("iterations") or []
    return {
        "loop_id": loop.get("id"),
        "status": loop.get("status"),
        "threshold": loop.get("threshold"),
        "iterations": len(its),
        "scores": [it.get("score") for it in its],
        "final_score": its[-1].get("score") if its else None,
        "parts": its[-1].get("parts") if its else None,
    }


def bound_loop(loops_data: dict, phase: int, session: str | None) -> dict | None:
    """The newest code loop bound to a phase's build in this colony."""
    found = [
        l
        for l in loops_data.get("loops", [])
        if isinstance(l, dict)
        and l.get("type") == "code"
        and l.get("phase") == phase
        and (session is None or l.get("session_id") in (None, session))
    ]
    return found[-1] if found else None


def record_build(data: dict, colony: dict, phase: dict, results: dict, syntax: dict | None, loop: dict | None) -> dict:
    """Append the record of a finished build to loaded phase_records.json data (inside
    build-finish's write); returns it."""

    tree = raw if isinstance(raw := colony.get("spawn_tree"), dict) else {}
    created, modified = [], []
    for o in results["tasks"]:
        created += [f for f in o["files_created"] if f not in created]
        modified += [f for f in o["files_modified"] if f not in modified]
    t_created, t_modified = tree_files(tree)
    created += [f for f in t_created if f not in created]
    modified += [f for f in t_modified if f not in modified and f not in created]
    modified = [f for f in modified if f not in created]
    watcher = results["watcher"]
    tasks = [t for t in phase.get("tasks") or [] if isinstance(t, dict)]
    record = {
        "phase": phase["id"],
        "name": phase.get("name"),
        "status": phase.get("status"),
        "session_id": colony.get("session_id"),
        "build_id": tree.get("id"),
        "mode": colony.get("mode"),
        "finished_at": clock.iso(),
        "tasks": plans_rules.task_counts(phase),
        "failed_tasks": [t.get("id") for t in tasks if t.get("status") == "failed"],
        "skipped_tasks": [t.get("id") for t in tasks if t.get("status") == "skipped"],
        "files_created": created[:MAX_FILES_PER_RECORD],
        "files_modified": modified[:MAX_FILES_PER_RECORD],
        "watcher": {k: watcher.get(k) for k in ("passed", "score", "summary", "checks")} if watcher else None,
        "syntax_check": syntax,
        "code_loop": _loop_brief(loop),
        "verification": _verification_brief(results.get("evidence")),
    }
    data["records"].append(record)
    del data["records"][:-MAX_RECORDS]
    return record


def _verification_brief(proof: dict | None) -> dict | None:
    """What the phase record keeps of the checks' verdicts (steps/checks.py): each check, how it
    was decided, the run that decided it (its output's end left in the run record)."""
    if not proof:
        return None
    kept = []
    for v in proof["checks"]:
        run = v.get("run") or {}
        kept.append(
            {
                "name": v["name"],
                "status": v["status"],
                "command": v.get("command"),
                "why": v.get("why"),
                "exit": run.get("exit"),
                "at": run.get("at"),
                **{k: v[k] for k in ("counts", "runner_changes", "files") if v.get(k)},
            }
        )
    return {"passed": proof["passed"], "checks": kept, "accepted": proof.get("accepted")}


def records_of(session: str | None) -> list:
    return [
        r for r in store.read("phase_records")["records"] if isinstance(r, dict) and (session is None or r.get("session_id") == session)
    ]


def latest_record(phase: int, session: str | None) -> dict | None:
    found = [r for r in records_of(session) if r.get("phase") == phase]
    return found[-1] if found else None


# ---------------------------------------------------------------- the summary


def _tests_and_coverage(record: dict) -> tuple:
    """(test results, coverage) of a build as text, from its code loop's last score or its watcher."""
    tests = coverage = None
    proof = record.get("verification") or {}
    for check in proof.get("checks") or []:  # what the tests run showed, before anyone's words
        if check.get("name") == "tests" and check.get("command"):
            exit_ = "" if check.get("exit") is None else f" → exit {check['exit']}"
            tests = f"{check['command']}{exit_} ({check['status'].replace('_', ' ')})"
    parts = ((record.get("code_loop") or {}).get("parts")) or {}
    if tests is None and isinstance(parts.get("tests"), dict):
        tests = parts["tests"].get("reason")
    if isinstance(parts.get("coverage"), dict):
        coverage = parts["coverage"].get("reason")
    watcher = record.get("watcher") or {}
    for check in watcher.get("checks") or []:
        if not isinstance(check, dict):
            continue
        name = str(check.get("name") or "").lower()
        detail = check.get("detail") or ("passed" if check.get("passed") else "failed")
        if tests is None and "test" in name:
            tests = detail
        if coverage is None and "cover" in name:
            coverage = detail
    syntax = record.get("syntax_check")
    if tests is None and syntax:
        tests = f"not run (syntax check: {syntax.get('summary')})"
    return tests, coverage


def _session_loops(colony: dict) -> list:
    session, since = colony.get("session_id"), colony.get("initialized_at") or ""
    out = []
    for loop in store.read("loops").get("loops", []):
        if not isinstance(loop, dict):
            continue
        mine = loop.get("session_id") == session if loop.get("session_id") else str(loop.get("created_at") or "") >= since
        if mine:
            out.append(loop)
    return out


def _promoted(colony: dict) -> list:

    project = colony.get("project_id") or paths.project_id()
    try:
        entries = store.read("learnings").get("learnings", [])
    except AetherError:
        return []
    return [
        {"id": e.get("id"), "content": e.get("content"), "projects": e.get("occurrence_count")}
        for e in entries
        if isinstance(e, dict) and e.get("promoted") and project in (e.get("source_projects") or [])
    ]


def summary() -> dict:
    """completion-summary: the colony's outcome — loops (planning and coding scores, iterations),
    phases, files, tests and coverage when known, learnings, next steps."""

    colony = store.read("colony", missing_ok=False)
    plan = store.read("plan")
    session = colony.get("session_id")
    records = records_of(session)
    latest = {}
    for r in records:
        latest[r.get("phase")] = r
    phases = []
    created, modified = [], []
    for phase in plans_rules.phases(plan):
        rec = latest.get(phase.get("id")) or {}
        tests, coverage = _tests_and_coverage(rec) if rec else (None, None)
        loop = rec.get("code_loop") if rec else None
        phases.append(
            {
                "id": phase.get("id"),
                "name": phase.get("name"),
                "status": phase.get("status") or "pending",
                "tasks": plans_rules.task_counts(phase),
                "files_created": len(rec.get("files_created", [])),
                "files_modified": len(rec.get("files_modified", [])),
                "tests": tests,
                "coverage": coverage,
                "watcher_score": (rec.get("watcher") or {}).get("score"),
                "code_score": loop.get("final_score") if loop else None,
                "verification": rec.get("verification"),
            }
        )
        for r in records:
            if r.get("phase") == phase.get("id"):
                created += [f for f in r.get("files_created", []) if f not in created]
                modified += [f for f in r.get("files_modified", []) if f not in modified]
    modified = [f for f in modified if f not in created]
    loops = []
    for loop in _session_loops(colony):
        its = loop.get("iterations") or []
        loops.append(
            {
                "loop_id": loop.get("id"),
                "type": loop.get("type"),
                "phase": loop.get("phase"),
                "status": loop.get("status"),
                "threshold": loop.get("threshold"),
                "iterations": len(its),
                "rounds": loop.get("round"),
                "scores": [it.get("score") for it in its],
                "final_score": its[-1].get("score") if its else None,
            }
        )
    plan_loops = [l for l in loops if l["type"] == "plan" and l["iterations"]]
    code_loops = [l for l in loops if l["type"] == "code" and l["iterations"]]
    planning = (
        {"score": plan_loops[-1]["final_score"], "iterations": sum(l["iterations"] for l in plan_loops), "loops": len(plan_loops)}
        if plan_loops
        else None
    )
    coding = (
        {
            "scores": {str(l["phase"]): l["final_score"] for l in code_loops if l["phase"] is not None},
            "iterations": sum(l["iterations"] for l in code_loops),
            "loops": len(code_loops),
        }
        if code_loops
        else None
    )
    mem = store.read("memory")
    extracted = sorted(
        {
            number
            for e in mem.get("phase_learnings", [])
            if isinstance(e, dict)
            and str(e.get("timestamp") or "") >= str(colony.get("initialized_at") or "")
            and isinstance(number := e.get("phase"), int)
        }
    )
    promoted = _promoted(colony)
    complete = colony.get("state") == "COMPLETED"
    last = phases[-1]["id"] if phases else None
    steps = ["Review the changes (git status, git diff) and push them when you are satisfied."]
    learn, _ = modes.learning_now(colony.get("mode"), "end")
    if complete and learn and last is not None and not memory.has_learnings(mem, last):
        steps.append(
            f"Record the project's learnings: aether learning-add {last} - --each-line "
            f"(then share lasting ones with aether learning-promote -)."
        )
    steps += ['Start a new goal with /ant:init "<goal>", or extend this one with /ant:plan.']
    spent = costs.colony_spend(session)
    total = spent["total"]
    cost = {
        "tokens": total["tokens"],
        "spawns": total["spawns"],
        "duration_ms": total["duration_ms"],
        "unmetered": total["unmetered"],
        "phases": {k: b["tokens"] for k, b in spent["phases"].items()},
        "castes": total["castes"],
    }
    result = {
        "complete": complete,
        "goal": colony.get("goal"),
        "mode": colony.get("mode"),
        "state": colony.get("state"),
        "phases": phases,
        "planning": planning,
        "coding": coding,
        "loops": loops,
        "cost": cost,
        "files": {"created": created, "modified": modified},
        "learnings": {"phases_extracted": extracted, "promoted": promoted, "promoted_count": len(promoted)},
        "next_steps": steps,
    }
    result["text"] = render(result)
    return result


def render(s: dict) -> str:
    done = sum(1 for p in s["phases"] if p["status"] == "completed")
    head = "COLONY COMPLETE" if s["complete"] else f"COLONY SUMMARY ({s['state']})"
    lines = [f"{head} · {s['mode'] or 'STANDARD'}", f"Goal: {s['goal']}", f"Phases: {done}/{len(s['phases'])} completed"]
    for p in s["phases"]:
        extra = []
        if p["tests"]:
            extra.append(f"tests {p['tests']}")
        if p["coverage"]:
            extra.append(f"coverage {p['coverage']}")
        if p["code_score"] is not None:
            extra.append(f"code score {p['code_score']:g}")
        elif p["watcher_score"] is not None:
            extra.append(f"watcher score {p['watcher_score']:g}")
        lines.append(
            f"  {p['id']:>2} {p['name']} — {p['status']}, {p['tasks']['completed']}/{p['tasks']['total']} tasks, "
            f"{p['files_created']} created, {p['files_modified']} modified" + (f" · {' · '.join(extra)}" if extra else "")
        )
        if p.get("verification"):
            said = ", ".join(f"{c['name']} {c['status'].replace('_', ' ')}" for c in p["verification"]["checks"])
            lines.append(f"     checks by what ran: {said}")
    if s["planning"]:
        lines.append(f"Planning: score {s['planning']['score']:g} after {s['planning']['iterations']} iteration(s)")
    else:
        lines.append("Planning: no plan loop ran")
    if s["coding"]:
        scores = ", ".join(f"phase {k}: {v:g}" for k, v in s["coding"]["scores"].items() if v is not None)
        lines.append(
            f"Coding: {s['coding']['iterations']} iteration(s) in {s['coding']['loops']} code loop(s)" + (f" ({scores})" if scores else "")
        )
    else:
        lines.append("Coding: no code loop ran")
    for loop in s["loops"]:
        if loop["iterations"]:
            lines.append(
                f"  {loop['type']} loop {loop['loop_id']}"
                + (f" (phase {loop['phase']})" if loop["phase"] else "")
                + f": {' → '.join(f'{x:g}' for x in loop['scores'])} ({loop['status']}, threshold {loop['threshold']:g})"
            )
    files = s["files"]
    lines.append(f"Files: {len(files['created'])} created, {len(files['modified'])} modified")
    for f in files["created"][:FILES_SHOWN]:
        lines.append(f"  + {f}")
    for f in files["modified"][: max(0, FILES_SHOWN - len(files["created"]))]:
        lines.append(f"  ~ {f}")
    hidden = len(files["created"]) + len(files["modified"]) - FILES_SHOWN
    if hidden > 0:
        lines.append(f"  … and {hidden} more")
    cost = s.get("cost")
    if cost and cost["spawns"]:
        lines.append(
            f"Cost: {spend.fmt(cost['tokens'])} tokens in {cost['spawns']} spawns, "
            f"{round(cost['duration_ms'] / 1000)} s of agent time"
            + (f" ({cost['unmetered']} without usage, not counted)" if cost["unmetered"] else "")
        )
        lines.append("  by phase: " + spend.render_phases(cost["phases"]))
        lines += spend.render_bucket({"castes": cost["castes"]})
    learn = s["learnings"]
    lines.append(f"Learnings: extracted for {len(learn['phases_extracted'])} phase(s); {learn['promoted_count']} promoted across projects")
    for entry in learn["promoted"][:5]:
        lines.append(f"  ★ {entry['content']}")
    lines.append("Next steps:")
    lines += [f"  - {step}" for step in s["next_steps"]]
    return "\n".join(lines)
