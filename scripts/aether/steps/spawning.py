"""The spawn tree (COLONY_STATE `spawn_tree`): limits, spawn-check, spawn-start/finish, and the
SPAWN REQUEST blocks workers write when they need help (docs/decisions/waves-and-merging.md).

The Queen is the only spawner. Every ant she runs is a node of the tree; a node is `planned`
(by plan-waves, failure-decide, spawn-requests or review), `running` (spawn-start) and then
`completed`, `failed` or `skipped` (spawn-finish, or an aborted wave). Active workers are the
running nodes. A spawn is allowed when its depth < the mode's max depth and fewer than the
mode's max workers are running.

Roles: `worker` (planned by plan-waves), `retry` and `debugger` (failure-decide), `sub_spawn`
(a SPAWN REQUEST), `rerun` (the requester again, after its blocking sub-spawns), `rebuild`
(review-decide), `reviewer` (review-needed), and the code loop's `refine` builders and `verify`
watcher (loop-decide on refine: a wave of their own). Re-spawns (retry, debugger, rerun,
rebuild) sit under the worker they repeat, at its depth; a sub-spawn sits one level below its
parent.
"""

from __future__ import annotations

import functools
import os
import time

from aether.core import clock, containment, inputs, paths
from aether.core.castes import CASTES
from aether.core.exceptions import input_error, state_error
from aether.core.text import clip, one_line
from aether.core.vocabulary import SPAWN_FINISHED  # node roles and statuses are listed in schemas.py
from aether.rules import contracts
from aether.rules import evidence as evidence_rules
from aether.rules import failures as failures_rules
from aether.rules.contracts import (
    _STATUS_WORDS,
    DEBUGGER_CONTRACT,
    MAX_REQUEST_BLOCKS,
    MAX_TEXT,
    RESULT_CONTRACT,
    REVIEWER_CONTRACT,
    extract_json,
    norm_path,
    normalize_caste,
    parse_requests,
    str_list,
    text_field,
)
from aether.rules.spawn_tree import (
    MAX_SUB_SPAWNS_PER_WAVE,
    MAX_SUB_SPAWNS_PER_WORKER,
    active_workers,
    add_node,
    limits,
    node_of,
    origin_of,
    release_caste,
    respawn,
    tree_of,
)
from aether.state import checkpoints, events, pheromones, store
from aether.steps import checks

OBSERVED_TAIL = 1500  # characters of a failing call's output kept in the failure report
MAX_FILES_PER_SPAWN = 50  # files named in a spawn's note of claims no call witnessed
MTIME_SLACK_SECONDS = 2  # a file touched this long before a spawn started still counts as touched


# ---------------------------------------------------------------- small helpers


# ---------------------------------------------------------------- the tree


# ---------------------------------------------------------------- spawn-check


def check(depth: int = 1) -> dict:
    """spawn-check: may an ant be spawned at DEPTH now?"""
    colony = store.read("colony", missing_ok=False)
    lim = limits(colony)
    active = active_workers(colony.get("spawn_tree"))
    result = {
        "pass": True,
        "active_workers": active,
        "max_workers": lim["max_workers"],
        "current_depth": depth,
        "max_depth": lim["max_depth"],
    }
    if depth >= lim["max_depth"]:
        result.update({"pass": False, "reason": f"depth {depth} is not below the max depth {lim['max_depth']}"})
    elif active >= lim["max_workers"]:
        result.update({"pass": False, "reason": f"{active} workers are running; the limit is {lim['max_workers']}"})
    return result


# ---------------------------------------------------------------- the brief a spawned ant gets


def _plan_phase(plan: dict, phase) -> dict:
    for item in plan.get("phases", []):
        if isinstance(item, dict) and item.get("id") == phase:
            return item
    return {}


def _task_lines(phase_info: dict, task_ids: list) -> list:
    described = {str(t.get("id")): t for t in phase_info.get("tasks", []) if isinstance(t, dict)}
    lines = []
    for task_id in task_ids:
        task = described.get(str(task_id))
        text = one_line(task.get("description", ""), 300) if task else "(not in PROJECT_PLAN)"
        lines.append(f"  - {task_id}: {text}")
    return lines


def verify_contract() -> str:
    """The re-verification's result block: the same watcher report as the first verification
    (build-finish takes it as `watcher`) with the parts loop-score scores and the findings."""

    return (
        "--- RESULT ---\nEnd your answer with this block (the helper scores it; "
        "passed: every check passed; a score part that does not apply to this project is null):\n"
        "```json\n" + contracts.SCORED_RESULT_BLOCK + "\n```"
    )


def _spawn_request_help(node: dict, tree: dict) -> str:
    if node["role"] in ("reviewer", "verify") or node["depth"] + 1 >= tree.get("max_depth", 3):
        return "You cannot request sub-spawns at this depth: finish the task yourself."
    return (
        f"Need help (research, another caste)? Add at most {MAX_SUB_SPAWNS_PER_WORKER} blocks like this "
        f"before your result; the Queen decides and spawns:\n"
        "--- SPAWN REQUEST ---\ncaste: scout\nreason: <why>\ncontext: <what that ant needs to know>\n"
        "blocking: true\n--- END SPAWN REQUEST ---"
    )


def brief(tree: dict, node: dict, plan: dict, pheromone_text: str) -> str:
    """The task text a spawned ant receives: who it is, its tasks and files, the role's own
    context, the active signals, and the block it must answer with."""
    phase_info = _plan_phase(plan, tree.get("phase"))
    waves = len(tree.get("waves", []))
    head = (
        f"You are {node['id']}, a {node['caste']} ant ({node['role'].replace('_', '-')}), depth "
        f"{node['depth']} of max {tree.get('max_depth')}, wave {node['wave']} of {waves}, phase "
        f"{tree.get('phase')}" + (f": {phase_info['name']}" if phase_info.get("name") else "") + "."
    )
    lines = ["--- TASK ---", head]
    if node["tasks"] and node["role"] != "reviewer":
        lines.append("Tasks of the ant you help:" if node["role"] == "sub_spawn" else "Tasks:")
        lines += _task_lines(phase_info, node["tasks"])
    if node.get("writes"):
        lines.append("Files you own (only you write them in this wave): " + ", ".join(node["writes"]))
    if node.get("reads"):
        lines.append("Files to read: " + ", ".join(node["reads"]))
    criteria = [one_line(c, 200) for c in phase_info.get("success_criteria", []) if isinstance(c, str)]
    if criteria and node["role"] != "sub_spawn":
        lines.append("Phase success criteria:")
        lines += [f"  - {c}" for c in criteria]
    if node.get("request"):
        req = node["request"]
        lines.append(f"Requested by {node['parent']}: {req.get('reason', '')}")
        if req.get("context"):
            lines.append("Context: " + req["context"])
    if node.get("waits_for"):
        found = [tree["nodes"][sid] for sid in node["waits_for"] if sid in tree["nodes"]]
        lines.append("Findings of the ants you asked for:")
        lines += [f"  - {s['id']} ({s['caste']}): {s.get('summary') or '(no summary)'}" for s in found]
    if node.get("context"):
        lines.append(node["context"])
    lines.append(pheromone_text)
    if node["role"] == "debugger":
        lines.append(DEBUGGER_CONTRACT)
    elif node["role"] == "reviewer":
        lines.append(REVIEWER_CONTRACT)
    elif node["role"] == "verify":
        mode = store.read("colony").get("mode")
        lines += checks.brief_lines(mode, checks.changed_files(tree))
        lines.append(verify_contract())
    else:
        lines.append(_spawn_request_help(node, tree))
        lines.append(RESULT_CONTRACT)
    return "\n".join(lines)


# ---------------------------------------------------------------- spawn-start


@store.writes("colony", "events")
def _start_spawn(files, node_id: str, plan: dict, signals: str) -> dict:
    """Mark the planned spawn running, within the build's order and limits; returns its brief."""
    colony = files["colony"]
    tree = tree_of(colony)
    node = node_of(tree, node_id)
    if tree.get("status") == "awaiting_approval":
        raise state_error(
            "plan_not_approved", "the wave plan awaits the user's approval: /ant:build N --approve (`aether next --build N --approve`)"
        )
    if tree.get("status") in ("finished", "aborted"):
        raise state_error(f"build_{tree['status']}", f"this build is {tree['status']}; start a new one with /ant:build N")
    if node["status"] != "planned":
        raise state_error(
            "spawn_not_planned", f"{node_id} is {node['status']}, not planned; a failed spawn is repeated through failure-decide"
        )
    waiting = [sid for sid in node.get("waits_for", []) if tree["nodes"].get(sid, {}).get("status") not in SPAWN_FINISHED]
    if waiting:
        raise state_error("spawn_waiting", f"{node_id} re-runs its worker after {', '.join(waiting)}: finish those first")
    if node["role"] == "worker":
        for other in tree["nodes"].values():
            if other["role"] == "worker" and other["wave"] < node["wave"] and other["status"] not in SPAWN_FINISHED:
                raise state_error(
                    "earlier_wave_unfinished",
                    f"wave {other['wave']} is not finished ({other['id']} is {other['status']}); waves run in order",
                )
    lim = limits(colony)
    active = active_workers(tree)
    if node["depth"] >= lim["max_depth"]:
        raise state_error("spawn_limit", f"depth {node['depth']} is not below the max depth {lim['max_depth']}")
    if active >= lim["max_workers"]:
        raise state_error("spawn_limit", f"{active} ants are running; the limit is {lim['max_workers']}: record finished ones first")
    node["status"] = "running"
    node["started_at"] = clock.iso()
    node["started_epoch"] = round(time.time(), 3)
    tree["status"] = "running"
    colony["workers"][node["caste"]] = "active"
    events.append(
        files["events"],
        "spawn_started",
        "queen",
        f"{node_id} ({node['caste']}, {node['role']}) started for tasks {', '.join(map(str, node['tasks'])) or '-'}",
    )
    return {
        "id": node_id,
        "caste": node["caste"],
        "role": node["role"],
        "subagent_type": f"ant:{node['caste']}",
        "tasks": node["tasks"],
        "wave": node["wave"],
        "depth": node["depth"],
        "max_depth": lim["max_depth"],
        "active_workers": active + 1,
        "max_workers": lim["max_workers"],
        "text": brief(tree, node, plan, signals),
    }


def start(node_id: str) -> dict:
    """spawn-start: mark a planned spawn running (within the limits) and return its brief."""

    plan = store.read("plan")
    preview = store.read("colony", missing_ok=False).get("spawn_tree") or {}
    caste = (preview.get("nodes", {}).get(node_id) or {}).get("caste")
    signals = pheromones.render(caste if caste in CASTES else None)["text"]

    return _start_spawn(node_id, plan, signals)


# ---------------------------------------------------------------- spawn-finish


def _git_changed(root: str) -> set | None:
    """Paths git reports as changed or untracked (relative to root), None when unknown."""

    if not paths.in_git_repo():
        return None
    try:
        proc = checkpoints.git(["status", "--porcelain", "-z", "--untracked-files=all", "--", "."], root, check=False)
        prefix = checkpoints.git(["rev-parse", "--show-prefix"], root, check=False).stdout.strip()
    except Exception:  # git missing or broken: fall back to the filesystem check
        return None
    if proc.returncode != 0:
        return None
    changed = set()
    entries = proc.stdout.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        path = entry[3:]
        if entry[0] in "RC":  # a rename/copy carries the old path next
            i += 1
        if prefix and path.startswith(prefix):
            path = path[len(prefix) :]
        changed.add(norm_path(path))
    return changed


def verify_claims(paths_claimed: list, started_epoch: float | None, workdir: str | None = None) -> list:
    """Problems with a worker's claimed files: outside the project, missing, or (in git) not
    changed since the spawn started. [] when every claim holds. An isolated builder's claims are
    checked in its working copy (`workdir`, from the project), against that worktree's changes."""

    root = os.path.realpath(os.path.join(paths.project_root(), workdir or ""))
    changed = _git_changed(root) if paths_claimed else None

    problems = []
    for claim in paths_claimed:
        if inputs.path_problem(claim):  # a NUL character: names no file
            problems.append({"path": claim, "problem": "invalid_path"})
            continue
        full = os.path.realpath(os.path.join(root, claim))
        if containment.project_path(claim, root=root, protected=(), allow_absolute=True)[1] or (
            full != root and not full.startswith(root + os.sep)
        ):
            problems.append({"path": claim, "problem": "outside_project"})
            continue
        if not os.path.isfile(full):
            problems.append({"path": claim, "problem": "not_a_file" if os.path.exists(full) else "missing"})
            continue
        if changed is not None and started_epoch is not None:
            rel = norm_path(os.path.relpath(full, root))
            if rel not in changed and os.path.getmtime(full) < started_epoch - MTIME_SLACK_SECONDS:
                problems.append({"path": claim, "problem": "unchanged"})
    return problems


def _payload(text: str, node: dict) -> dict:
    data = extract_json(text, f"the result of {node['id']}")
    if isinstance(data, list) and node["role"] == "reviewer":
        data = {"findings": data}
    if not isinstance(data, dict):
        raise input_error("invalid_report", f"the result of {node['id']} must be a JSON object")
    status_raw = data.get("status")
    status = _STATUS_WORDS.get(status_raw.strip().lower()) if isinstance(status_raw, str) else None
    if node["role"] == "debugger":
        fixed = data.get("fix_applied")
        verification = data.get("verification")
        verdict = verification.get("status") if isinstance(verification, dict) else verification
        passed = isinstance(verdict, str) and _STATUS_WORDS.get(verdict.strip().lower()) == "completed"
        diagnosis = text_field(data, "diagnosis", f"{node['id']} result")
        if fixed is True and (verdict is None or passed) and "UNDIAGNOSABLE" not in diagnosis.upper():
            status = status or "completed"
        elif fixed is not None or verdict is not None:
            status = "failed"
    if node["role"] in ("reviewer", "verify") and status is None:
        status = "completed"  # a review or a watcher report has no status: the ant did its check
    if status is None:
        raise input_error("invalid_report", f'the result of {node["id"]} needs "status": "completed" or "failed" (found {status_raw!r})')
    data["status"] = status
    return data


def _failure_from(node: dict, data: dict, problems: list, contradiction: dict | None = None) -> dict:
    """The failure report stored on a failed node (the worker's own, or one made up from what is known)."""

    report = data.get("failure") if isinstance(data.get("failure"), dict) else None

    def false_claim(error: str, cause: str, fix: str, files: list) -> dict:  # a claim the evidence refutes: certain, contained
        task = str(node["tasks"][0]) if node["tasks"] else node["id"]
        return {"task": task, "error": error, "root_cause": cause, "suggested_fix": fix, "confidence": 100, "fix_scope": "contained"} | {
            "files": files,
            "category": "unverified_claim",
        }

    if contradiction:
        report = false_claim(
            f"claimed the tests pass, but `{contradiction['command']}` exited {contradiction['exit']}: {contradiction['error']}",
            "the worker's own last test run failed",
            "make that test run pass before reporting the task completed",
            [],
        )
    elif problems:
        listed = ", ".join(f"{p['path']} ({p['problem']})" for p in problems[:10])
        report = false_claim(
            f"claimed files do not hold: {listed}",
            "the worker reported files it did not create or change",
            "create or change the listed files as the task requires, and report only real changes",
            [p["path"] for p in problems],
        )
    elif report is None:
        diagnosis = data.get("diagnosis") if node["role"] == "debugger" else None
        report = {
            "task": str(node["tasks"][0]) if node["tasks"] else node["id"],
            "error": clip(
                diagnosis or data.get("summary") or data.get("error") or "the worker reported a failure without a failure report", MAX_TEXT
            ),  # noqa: E501
            "root_cause": clip(diagnosis or "", MAX_TEXT),
            "suggested_fix": "",
            "confidence": 0,
            "fix_scope": "unknown",
            "files": [],
            "category": "unknown",
        }
        if isinstance(diagnosis, str) and "UNDIAGNOSABLE" in diagnosis.upper():
            report["undiagnosable"] = True
    report = dict(report)
    report.setdefault("task", str(node["tasks"][0]) if node["tasks"] else node["id"])
    report.setdefault("caste", node["caste"])
    return failures_rules.normalize_report(report, lenient=True)


class _Relock(Exception):
    """The node changed between the first look and the lock in a way that needs more files locked."""


def _checked_answer(checked: dict, text: str, node: dict) -> tuple:
    """(answer, created, modified, problems) for the node as given; kept in `checked` and reused
    while the node is unchanged."""
    key = (node["role"], node.get("started_epoch"), node.get("worktree"))
    if key not in checked:
        data = _payload(text, node)
        created = [norm_path(p) for p in str_list(data.get("files_created"), "files_created")]
        modified = [norm_path(p) for p in str_list(data.get("files_modified"), "files_modified")]
        claims = list(dict.fromkeys(created + modified))
        problems = verify_claims(claims, node.get("started_epoch"), node.get("worktree")) if data["status"] == "completed" else []
        checked[key] = (data, created, modified, problems)
    return checked[key]


# not @store.writes: failures.json is locked only for a retry or debugger (see finish)
def _finish_spawn(files, node_id: str, text: str, checked: dict) -> dict:
    """Record the running spawn's result (its unverified claims fail it) and free its caste."""
    colony = files["colony"]
    tree = tree_of(colony)
    node = node_of(tree, node_id)
    if node["status"] != "running":
        raise state_error(
            "spawn_not_running", f"{node_id} is {node['status']}, not running: it must be started first (`aether next` hands it out)"
        )
    recovery = node["role"] in ("retry", "debugger")
    if recovery and "failures" not in files:
        raise _Relock()
    data, created, modified, problems = _checked_answer(checked, text, node)
    status = "failed" if problems else data["status"]
    calls = checked.get("calls") or []
    summary = data.get("summary") or data.get("diagnosis") or ""
    contradiction = None
    if status == "completed" and calls and node["role"] not in ("reviewer", "verify"):
        contradiction = evidence_rules.test_claim_contradicted(str(summary), calls, checked.get("test_command"))
        status = "failed" if contradiction else status
    tree["seq"] = tree.get("seq", 0) + 1
    node.update(
        status=status,
        finished_at=clock.iso(),
        seq=tree["seq"],
        summary=one_line(summary, 500),
        files_created=created,
        files_modified=modified,
    )
    if problems:
        node["unverified"] = problems
    if status == "failed":
        node["failure"] = _failure_from(node, data, problems, contradiction)
        node["failure_decided"] = False
        observed = contradiction or evidence_rules.observed_failure(calls)
        if observed:  # what really failed, from the ant's own calls: the breakers and the next briefs read it
            node["failure"]["observed"] = {**observed, "tail": observed["tail"][-OBSERVED_TAIL:]}
    elif calls and not node.get("worktree"):
        unseen = evidence_rules.unwitnessed(created + modified, calls)
        if unseen:  # claimed, and no call of the ant wrote or named it: kept as a note, not a failure
            node["unwitnessed"] = unseen[:MAX_FILES_PER_SPAWN]
    if node["role"] == "reviewer":
        node["report"] = {"summary": one_line(data.get("summary", ""), 500)}
    release_caste(colony, tree, node["caste"])
    result = {
        "id": node_id,
        "status": status,
        "role": node["role"],
        "verified": not problems,
        "unverified": problems,
        "active_workers": active_workers(tree),
    }
    if recovery:
        result["friction"] = failures_rules.record_recovery(files["failures"], tree, node, status, data)
    if status == "failed":
        result["next"] = f"aether failure-decide --worker {node_id}"
    events.append(
        files["events"],
        "spawn_finished",
        node_id,
        f"{node_id} ({node['caste']}, {node['role']}) {status}" + (f": claims not verified ({len(problems)})" if problems else ""),
    )
    return result


def finish(node_id: str, text: str, calls: list | None = None, test_command: str | None = None) -> dict:
    """spawn-finish: record a running spawn's result, checking its claimed files.

    The answer is read and its claims checked ahead, against the node as first seen; under the
    lock, the node as it is then decides, and anything that depended on a changed node (how the
    answer reads for its role, the claims against its start time) is done again there."""
    preview = store.read("colony", missing_ok=False).get("spawn_tree") or {}
    seen = (preview.get("nodes") or {}).get(node_id)
    if seen is None:
        seen = node_of(tree_of({"spawn_tree": preview}), node_id)  # raises: no such spawn
    checked: dict = {"calls": calls or [], "test_command": test_command}

    _checked_answer(checked, text, seen)  # a bad answer is refused before any lock is taken

    names = ["colony", "events"] + (["failures"] if seen["role"] in ("retry", "debugger") else [])
    record = functools.partial(_finish_spawn, node_id=node_id, text=text, checked=checked)
    try:
        return store.update_many(names, record)
    except _Relock:  # nothing was written: lock failures.json too
        return store.update_many(["colony", "events", "failures"], record)


# ---------------------------------------------------------------- SPAWN REQUEST blocks


def _blocking(value: str | None) -> bool:
    if value is None:
        return False
    return value.strip().strip("*_`'\".").lower() in ("true", "yes", "y", "1", "blocking", "required")


@store.writes("colony", "events")
def _plan_requests(files, parent_id: str, parsed: list, dropped: int) -> dict:
    """Plan the accepted SPAWN REQUEST blocks (and a re-run after blocking ones), record the ignored ones."""
    colony = files["colony"]
    tree = tree_of(colony)
    parent = node_of(tree, parent_id)
    if parent["status"] not in SPAWN_FINISHED:
        raise state_error("spawn_not_finished", f"{parent_id} is {parent['status']}: record its result first")
    lim = limits(colony)
    log = tree.setdefault("spawn_requests", [])
    if any(r.get("parent") == parent_id for r in log):
        done = [r for r in log if r.get("parent") == parent_id]
        return _requests_result(tree, parent_id, done, already=True)
    lineage = origin_of(tree, parent)
    per_worker = sum(1 for n in tree["nodes"].values() if n["role"] == "sub_spawn" and n.get("lineage") == lineage)
    per_wave = sum(1 for n in tree["nodes"].values() if n["role"] == "sub_spawn" and n["wave"] == parent["wave"])
    recorded, blocking_ids = [], []
    for block in parsed:
        caste = normalize_caste(block.get("caste"))
        entry = {
            "parent": parent_id,
            "caste": caste or block.get("caste", ""),
            "reason": clip(block.get("reason", ""), MAX_TEXT),
            "context": clip(block.get("context", ""), MAX_TEXT),
            "blocking": _blocking(block.get("blocking")),
            "status": "ignored",
            "timestamp": clock.iso(),
        }
        depth = parent["depth"] + 1
        if caste is None:
            entry["reason_ignored"] = f"unknown caste {block.get('caste')!r}; castes: {', '.join(CASTES)}"
        elif not entry["reason"]:
            entry["reason_ignored"] = "no reason given"
        elif parent["role"] in ("reviewer", "verify"):
            entry["reason_ignored"] = f"a {parent['role']} ant does not delegate"
        elif depth >= lim["max_depth"]:
            entry["reason_ignored"] = f"depth {depth} is not below the max depth {lim['max_depth']}"
        elif per_worker >= MAX_SUB_SPAWNS_PER_WORKER:
            entry["reason_ignored"] = f"{lineage} already has {MAX_SUB_SPAWNS_PER_WORKER} sub-spawns (the cap per worker)"
        elif per_wave >= MAX_SUB_SPAWNS_PER_WAVE:
            entry["reason_ignored"] = f"wave {parent['wave']} already has {MAX_SUB_SPAWNS_PER_WAVE} sub-spawns (the cap per wave)"
        else:
            node = add_node(
                tree,
                "sub_spawn",
                caste,
                parent["tasks"],
                depth=depth,
                parent=parent_id,
                wave=parent["wave"],
                lineage=lineage,
                request={"reason": entry["reason"], "context": entry["context"], "blocking": entry["blocking"]},
            )
            entry.update(status="queued", node=node["id"])
            per_worker += 1
            per_wave += 1
            if entry["blocking"]:
                blocking_ids.append(node["id"])
        log.append(entry)
        recorded.append(entry)
    if not parsed:
        entry = {"parent": parent_id, "status": "none", "timestamp": clock.iso()}
        log.append(entry)
        recorded.append(entry)
    if blocking_ids:
        rerun = respawn(tree, parent, "rerun", "", waits_for=blocking_ids)
        for entry in recorded:
            if entry.get("node") in blocking_ids:
                entry["rerun"] = rerun["id"]
    queued = sum(1 for e in recorded if e["status"] == "queued")
    ignored = sum(1 for e in recorded if e["status"] == "ignored")
    if parsed:
        events.append(files["events"], "spawn_requests", parent_id, f"{parent_id}: {queued} sub-spawn(s) queued, {ignored} ignored")
    result = _requests_result(tree, parent_id, recorded, already=False)
    if dropped:
        result["dropped"] = dropped
    return result


def requests(parent_id: str, text: str) -> dict:
    """spawn-requests: validate a worker's SPAWN REQUEST blocks, plan the accepted ones (and,
    for blocking ones, a re-run of the requester after them), record the ignored ones."""
    parsed = parse_requests(text)
    dropped = max(0, len(parsed) - MAX_REQUEST_BLOCKS)
    parsed = parsed[:MAX_REQUEST_BLOCKS]

    return _plan_requests(parent_id, parsed, dropped)


def _requests_result(tree: dict, parent_id: str, entries: list, already: bool) -> dict:
    queue = [
        {"id": e["node"], "caste": e["caste"], "reason": e["reason"], "blocking": e["blocking"], "rerun": e.get("rerun")}
        for e in entries
        if e.get("status") == "queued"
    ]
    ignored = [
        {"caste": e["caste"], "reason": e["reason"], "ignored_because": e["reason_ignored"]}
        for e in entries
        if e.get("status") == "ignored"
    ]
    reruns = sorted({q["rerun"] for q in queue if q["rerun"]})
    return {"parent": parent_id, "queue": queue, "ignored": ignored, "reruns": reruns, "already_recorded": already}
