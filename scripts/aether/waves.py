"""Waves: the Phase Lead's assignment plan becomes executable waves (plan-waves), the plan's
approval gate, the delegation tree as text, and the post-wave conflict check (wave-conflicts).

plan-waves, in order: dependencies (explicit between workers, and derived from PROJECT_PLAN's
task `depends_on`) become levels — a cycle is an error; within a level, workers that *write*
a common file are merged, transitively, into the one with the most file references (a merged
worker is a builder when castes differ); each level is cut into waves of at most the mode's
workers per wave (never more than its max running workers). Approval is judged after merging.
"""

from __future__ import annotations

from aether import clock, events, modes, store
from aether.castes import CASTES
from aether.errors import input_error, state_error
from aether.schemas import DONE_STATUSES

MAX_PLAN_REVISIONS = 3  # revised plans allowed while one awaits approval
MAX_PLAN_WORKERS = 500  # workers in one assignment plan
MAX_WORKER_TASKS = 200  # tasks of one worker
MAX_WORKER_FILES = 500  # writes + reads of one worker
# STANDARD mode approves a plan by itself only when it is this small and shares no file.
AUTO_APPROVE_MAX_TASKS = 4
AUTO_APPROVE_MAX_WORKERS = 2
AUTO_APPROVE_MAX_WAVES = 2


# ---------------------------------------------------------------- reading the plan


def _worker(raw, index: int) -> dict:
    from aether import spawning

    where = f"workers[{index}]"
    if not isinstance(raw, dict):
        raise input_error("invalid_plan", f"{where} must be an object with caste, tasks, writes, reads")
    caste = spawning.normalize_caste(raw.get("caste"))
    if caste is None:
        raise input_error("invalid_plan", f"{where}.caste is {raw.get('caste')!r}; use one of {', '.join(CASTES)}")
    label = raw.get("id", raw.get("name"))
    label = str(label).strip() if isinstance(label, (str, int)) and not isinstance(label, bool) and str(label).strip() else f"worker-{index + 1}"
    tasks = raw.get("tasks", raw.get("task_ids"))
    if isinstance(tasks, (str, int)) and not isinstance(tasks, bool):
        tasks = [tasks]
    if not isinstance(tasks, list) or not tasks:
        raise input_error("invalid_plan", f"{where}.tasks must be a non-empty array of task ids")
    if len(tasks) > MAX_WORKER_TASKS:
        raise input_error("too_many_items", f"{where} has {len(tasks)} tasks; the limit is {MAX_WORKER_TASKS}")
    task_ids = []
    for t in tasks:
        if isinstance(t, bool) or not isinstance(t, (str, int, float)) or not str(t).strip():
            raise input_error("invalid_plan", f"{where}.tasks holds {t!r}; task ids are strings like \"2.1\"")
        if str(t).strip() not in task_ids:
            task_ids.append(spawning.clip(str(t).strip(), 64))
    writes_raw = raw.get("writes", raw.get("files"))
    defects: list = []
    writes = _contained(spawning.str_list(writes_raw, f"{where}.writes", MAX_WORKER_FILES), f"{where}.writes",
                        defects)
    reads = _contained(spawning.str_list(raw.get("reads"), f"{where}.reads", MAX_WORKER_FILES), f"{where}.reads",
                       defects)
    writes = [p for p in dict.fromkeys(writes) if p]
    reads = [p for p in dict.fromkeys(reads) if p and p not in writes]
    deps = raw.get("depends_on", raw.get("after", []))
    if isinstance(deps, (str, int)) and not isinstance(deps, bool):
        deps = [deps]
    if not isinstance(deps, list):
        raise input_error("invalid_plan", f"{where}.depends_on must be an array of worker ids")
    return {"label": spawning.clip(label, 64), "caste": caste, "tasks": task_ids, "writes": writes, "reads": reads,
            "deps": [str(d).strip() for d in deps if isinstance(d, (str, int)) and not isinstance(d, bool)],
            "index": index, "defects": defects}


def _contained(items: list, where: str, defects: list) -> list:
    """Paths inside the project, relative, not under .git/ or .aether/ (reads may name research
    briefs); each other path becomes a defect the Phase Lead can correct."""
    from aether import containment, spawning

    out = []
    reads = where.endswith(".reads")
    for k, item in enumerate(items):
        rel, why = containment.project_path(item, allowed=(".aether/research/",) if reads else ())
        if len(item) >= spawning.MAX_PATH:  # clipped on reading: the path asked for is longer
            rel, why = None, f"is longer than {spawning.MAX_PATH - 1} characters"
        if why:
            defects.append({"path": f"{where}[{k}]", "problem": f"{item[:200]!r} {why}"})
        else:
            out.append(rel)
    return out


def read_plan(doc, plan_tasks: dict | None) -> tuple:
    """Validate an assignment plan; returns (workers, phase or None, warnings).

    plan_tasks: the phase's PROJECT_PLAN tasks {id: task} when known (ids are checked and their
    `depends_on` become dependencies between workers)."""
    if isinstance(doc, list):
        doc = {"workers": doc}
    if not isinstance(doc, dict):
        raise input_error("invalid_plan", "the assignment plan must be a JSON object with a `workers` array")
    raw_workers = doc.get("workers")
    if not isinstance(raw_workers, list) or not raw_workers:
        raise input_error("invalid_plan", "the assignment plan needs a non-empty `workers` array")
    if len(raw_workers) > MAX_PLAN_WORKERS:
        raise input_error("too_many_items", f"the plan has {len(raw_workers)} workers; the limit is {MAX_PLAN_WORKERS}")
    phase = doc.get("phase")
    if phase is not None and (isinstance(phase, bool) or not isinstance(phase, int)):
        raise input_error("invalid_plan", f"`phase` must be a phase number, found {phase!r}")
    workers = [_worker(raw, i) for i, raw in enumerate(raw_workers)]
    defects = [d for w in workers for d in w.pop("defects")]
    if defects:
        from aether import plans

        raise input_error("invalid_plan", plans.defect_message(defects, "the assignment plan has",
                                                               "send it again"), defects=defects)
    by_label, owner = {}, {}
    for w in workers:
        if w["label"] in by_label:
            raise input_error("invalid_plan", f"two workers are called {w['label']!r}; worker ids must be unique")
        by_label[w["label"]] = w
        for t in w["tasks"]:
            if t in owner:
                raise input_error("task_assigned_twice", f"task {t} is assigned to both {owner[t]} and {w['label']}; "
                                                         f"give each task to one worker")
            owner[t] = w["label"]
    warnings = []
    if plan_tasks is not None:
        unknown = [t for t in owner if t not in plan_tasks]
        if unknown:
            raise input_error("unknown_task", f"task(s) {', '.join(unknown[:10])} are not in this phase of PROJECT_PLAN "
                                              f"(its tasks: {', '.join(list(plan_tasks)[:30])})")
        missing = [t for t, task in plan_tasks.items() if t not in owner and task.get("status") not in DONE_STATUSES]
        if missing:
            warnings.append(f"tasks not assigned to any worker: {', '.join(missing)}")
    for w in workers:
        deps = []
        for d in w["deps"]:
            if d not in by_label:
                raise input_error("unknown_dependency", f"{w['label']} depends on {d!r}, which is no worker of this plan")
            if d != w["label"] and d not in deps:
                deps.append(d)
        if plan_tasks is not None:
            for t in w["tasks"]:
                for dep_task in plan_tasks[t].get("depends_on") or []:
                    other = owner.get(str(dep_task))
                    if other and other != w["label"] and other not in deps:
                        deps.append(other)
        w["deps"] = deps
    return workers, phase, warnings


def levels(workers: list) -> list:
    """Dependency levels (longest path from a worker without dependencies); a cycle is an error."""
    by_label = {w["label"]: w for w in workers}
    level: dict = {}
    state: dict = {}
    for start in workers:
        if start["label"] in level:
            continue
        stack = [(start["label"], iter(start["deps"]))]
        state[start["label"]] = "visiting"
        path = [start["label"]]
        while stack:
            label, deps = stack[-1]
            nxt = next(deps, None)
            if nxt is None:
                stack.pop()
                path.pop()
                level[label] = 1 + max((level[d] for d in by_label[label]["deps"]), default=0)
                state[label] = "done"
                continue
            if state.get(nxt) == "visiting":
                cycle = path[path.index(nxt):] + [nxt]
                raise input_error("dependency_cycle", "the workers depend on each other in a circle: "
                                  + " → ".join(cycle) + "; break the cycle in the plan")
            if state.get(nxt) != "done":
                state[nxt] = "visiting"
                path.append(nxt)
                stack.append((nxt, iter(by_label[nxt]["deps"])))
    grouped: dict = {}
    for w in workers:
        grouped.setdefault(level[w["label"]], []).append(w)
    return [grouped[k] for k in sorted(grouped)]


def merge_level(workers: list) -> tuple:
    """Merge workers of one level that write a common file (transitively); returns (workers, merges)."""
    parent = list(range(len(workers)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    writer: dict = {}
    for i, w in enumerate(workers):
        for path in w["writes"]:
            if path in writer:
                a, b = find(writer[path]), find(i)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                writer[path] = i
    groups: dict = {}
    for i in range(len(workers)):
        groups.setdefault(find(i), []).append(workers[i])
    out, merges = [], []
    for root in sorted(groups):
        members = groups[root]
        if len(members) == 1:
            out.append(members[0])
            continue
        target = max(members, key=lambda w: (len(set(w["writes"]) | set(w["reads"])), -w["index"]))
        labels = {m["label"] for m in members}
        merged = dict(target)
        merged["tasks"] = [t for m in [target] + [m for m in members if m is not target] for t in m["tasks"]]
        merged["writes"] = list(dict.fromkeys(p for m in members for p in m["writes"]))
        merged["reads"] = [p for p in dict.fromkeys(p for m in members for p in m["reads"]) if p not in merged["writes"]]
        merged["deps"] = list(dict.fromkeys(d for m in members for d in m["deps"] if d not in labels))
        castes = {m["caste"] for m in members}
        merged["caste"] = target["caste"] if len(castes) == 1 else "builder"
        merged["merged_from"] = sorted(labels - {target["label"]}, key=lambda l: next(m["index"] for m in members if m["label"] == l))
        shared = sorted({p for m in members for p in m["writes"]
                         if sum(1 for o in members if p in o["writes"]) > 1})
        merges.append({"into": target["label"], "merged": merged["merged_from"], "files": shared,
                       "tasks": merged["tasks"], "caste": merged["caste"]})
        out.append(merged)
    out.sort(key=lambda w: w["index"])
    return out, merges


def shared_files(workers: list) -> list:
    """Files one worker writes and another one reads or writes (anywhere in the plan)."""
    refs: dict = {}
    for w in workers:
        for p in w["writes"]:
            refs.setdefault(p, [set(), set()])[0].add(w["label"])
        for p in w["reads"]:
            refs.setdefault(p, [set(), set()])[1].add(w["label"])
    return sorted(p for p, (writers, readers) in refs.items() if writers and len(writers | readers) > 1)


def approval(mode: str, tasks: int, workers: int, waves: int, shared: list) -> dict:
    """Does the user approve this plan, or is it approved by the mode's rule?"""
    if mode == "LIGHTWEIGHT":
        return {"required": False, "reason": "LIGHTWEIGHT mode approves its plans"}
    if mode == "FULL":
        return {"required": True, "reason": "FULL mode always asks the user"}
    too_big = []
    if tasks > AUTO_APPROVE_MAX_TASKS:
        too_big.append(f"{tasks} tasks > {AUTO_APPROVE_MAX_TASKS}")
    if workers > AUTO_APPROVE_MAX_WORKERS:
        too_big.append(f"{workers} workers > {AUTO_APPROVE_MAX_WORKERS}")
    if waves > AUTO_APPROVE_MAX_WAVES:
        too_big.append(f"{waves} waves > {AUTO_APPROVE_MAX_WAVES}")
    if shared:
        too_big.append(f"shared files: {', '.join(shared[:5])}")
    if too_big:
        return {"required": True, "reason": f"{mode} mode asks the user: " + "; ".join(too_big)}
    return {"required": False, "reason": f"{mode} mode approves a plan this small (≤ {AUTO_APPROVE_MAX_TASKS} tasks, "
                                         f"≤ {AUTO_APPROVE_MAX_WORKERS} workers, ≤ {AUTO_APPROVE_MAX_WAVES} waves, no shared files)"}


def schedule(workers: list, per_wave: int) -> tuple:
    """Levels → merged levels → waves of at most per_wave workers; returns (waves, merges)."""
    merges, waves = [], []
    for level in levels(workers):
        merged, level_merges = merge_level(level)
        merges += level_merges
        for i in range(0, len(merged), per_wave):
            waves.append(merged[i:i + per_wave])
    return waves, merges


# ---------------------------------------------------------------- plan-waves


def _phase_of(colony: dict, plan: dict, asked) -> tuple:
    """The phase being built and its PROJECT_PLAN tasks ({id: task}, or None without a plan)."""
    phases = [p for p in plan.get("phases", []) if isinstance(p, dict)]
    running = [p["id"] for p in phases if p.get("status") == "in_progress"]
    if asked is not None and running and asked not in running:
        raise input_error("wrong_phase", f"the plan is for phase {asked}, but phase {running[0]} is being built")
    phase = asked if asked is not None else (running[0] if running else colony.get("current_phase") or None)
    if phase is None:
        raise state_error("no_phase", "no phase is being built: run `aether build-start <phase>` first")
    found = next((p for p in phases if p.get("id") == phase), None)
    if found is None:
        if phases:
            raise input_error("unknown_phase", f"phase {phase} is not in PROJECT_PLAN")
        return phase, None
    return phase, {str(t.get("id")): t for t in found.get("tasks", []) if isinstance(t, dict)}


def plan(text: str) -> dict:
    """plan-waves: turn the Phase Lead's assignment plan into waves and store the spawn tree."""
    from aether import spawning

    doc = spawning.extract_json(text, "the assignment plan")

    def change(files):
        colony = files["colony"]
        project_plan = store.read("plan")  # under the colony lock: the plan's writers hold it too
        if colony.get("state") != "EXECUTING":
            raise state_error("not_building", f"the colony is {colony.get('state')}: waves are planned during a "
                                              f"build — run `aether build-start <phase>` first")
        phase, plan_tasks = _phase_of(colony, project_plan, doc.get("phase") if isinstance(doc, dict) else None)
        workers, _, warnings = read_plan(doc, plan_tasks)
        mode = colony.get("mode") or modes.DEFAULT_MODE
        prof = modes.profile(mode)
        per_wave = min(prof["workers_per_wave"], prof["spawn_limits"]["max_workers"])
        wave_groups, merges = schedule(workers, per_wave)
        old = colony.get("spawn_tree") or None
        revision, build_id = 0, None
        if old and old.get("phase") == phase and old.get("status") in ("awaiting_approval", "approved", "running"):
            if any(n["status"] != "planned" for n in old.get("nodes", {}).values()):
                raise state_error("build_running", "waves of this build have started; a new plan needs a new build "
                                                   "(`aether build-abort`, then `aether build-start`)")
            # a revision answers the user's review; replacing an approved, unstarted plan is a fresh one
            awaiting = old.get("status") == "awaiting_approval"
            revision = old.get("approval", {}).get("revision", 0) + 1 if awaiting else 0
            if revision > MAX_PLAN_REVISIONS:
                raise state_error("revision_limit", f"the plan was revised {MAX_PLAN_REVISIONS} times already; approve "
                                                    f"it with `aether plan-waves --approve`, or abort the build")
            build_id = old.get("id")
        merged_workers = [w for wave in wave_groups for w in wave]
        shared = shared_files(merged_workers)
        task_count = sum(len(w["tasks"]) for w in merged_workers)
        verdict = approval(mode, task_count, len(merged_workers), len(wave_groups), shared)
        tree = {"id": build_id or clock.new_id("build"), "phase": phase,
                "status": "awaiting_approval" if verdict["required"] else "approved", "mode": mode,
                "max_depth": prof["spawn_limits"]["max_depth"], "max_workers": prof["spawn_limits"]["max_workers"],
                "workers_per_wave": per_wave, "waves": [], "nodes": {}, "spawn_requests": [], "merges": [],
                "approval": {**verdict, "revision": revision, "max_revisions": MAX_PLAN_REVISIONS,
                             "approved_by": None if verdict["required"] else f"auto:{mode}"},
                "shared_files": shared, "rebuilds": {}, "reviews": {}, "conflicts": {}, "seq": 0,
                "created_at": clock.iso()}
        label_to_id = {}
        for number, wave in enumerate(wave_groups, start=1):
            ids = []
            for w in wave:
                node = spawning.add_node(tree, "worker", w["caste"], w["tasks"], depth=1, parent=None, wave=number,
                                         plan_id=w["label"], writes=w["writes"], reads=w["reads"],
                                         merged_from=w.get("merged_from", []))
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
        events.append(files["events"], "waves_planned", "queen",
                      f"phase {phase}: {len(merged_workers)} workers in {len(wave_groups)} waves"
                      + (f", {len(merges)} merge(s)" if merges else "")
                      + ("; awaiting approval" if verdict["required"] else f"; {tree['approval']['approved_by']}"))
        return _answer(tree, warnings)

    return store.update_many(["colony", "events"], change)


def approve() -> dict:
    """plan-waves --approve: the user approved the plan that awaits approval."""
    from aether import spawning

    def change(files):
        tree = spawning.tree_of(files["colony"])
        if tree.get("status") != "awaiting_approval":
            if tree.get("status") in ("approved", "running"):
                return _answer(tree, [])
            raise state_error("nothing_to_approve", f"the spawn tree is {tree.get('status')}; there is no plan to approve")
        tree["status"] = "approved"
        tree["approval"]["approved_by"] = "user"
        tree["approval"]["approved_at"] = clock.iso()
        events.append(files["events"], "plan_approved", "user",
                      f"phase {tree['phase']} wave plan approved (revision {tree['approval'].get('revision', 0)})")
        return _answer(tree, [])

    return store.update_many(["colony", "events"], change)


def _answer(tree: dict, warnings: list) -> dict:
    nodes = tree["nodes"]
    waves = [{"wave": i, "workers": [{k: nodes[nid].get(k) for k in ("id", "caste", "tasks", "writes", "reads", "depends_on", "plan_id")}
                                     for nid in ids]} for i, ids in enumerate(tree["waves"], start=1)]
    return {"build": tree["id"], "phase": tree["phase"], "status": tree["status"], "mode": tree["mode"],
            "waves": waves, "merges": tree.get("merges", []), "shared_files": tree.get("shared_files", []),
            "approval": tree["approval"], "limits": {"workers_per_wave": tree["workers_per_wave"],
                                                     "max_workers": tree["max_workers"], "max_depth": tree["max_depth"]},
            "warnings": warnings, "text": render_tree(tree)}


# ---------------------------------------------------------------- rendering


def _node_line(node: dict) -> str:
    from aether import spawning

    role = "" if node["role"] == "worker" else f" {node['role'].replace('_', '-')}"
    parts = [f"{node['id']} {node['caste']}{role} [{node['status']}]"]
    if node["tasks"] and node["role"] in ("worker", "retry", "debugger", "rebuild", "rerun", "refine"):
        parts.append("tasks " + ", ".join(map(str, node["tasks"])))
    if node["role"] == "worker" and node.get("writes"):
        shown = node["writes"][:4]
        parts.append("writes " + ", ".join(shown) + (f" +{len(node['writes']) - 4}" if len(node["writes"]) > 4 else ""))
    if node.get("depends_on"):
        parts.append("after " + ", ".join(node["depends_on"]))
    if node.get("request"):
        parts.append(spawning.one_line(node["request"].get("reason", ""), 60))
    return " · ".join(parts)


def render_tree(tree: dict) -> str:
    """The delegation tree as text (the Queen shows it as is)."""
    if not tree:
        return "No spawn tree."
    nodes = tree.get("nodes", {})
    workers = sum(1 for n in nodes.values() if n.get("role") == "worker")
    approval_info = tree.get("approval", {})
    lines = [f"Phase {tree.get('phase')} spawn tree — {tree.get('mode')}, {workers} workers in "
             f"{len(tree.get('waves', []))} waves (≤ {tree.get('workers_per_wave')} per wave), {tree.get('status')}",
             "Queen"]

    def walk(node_id: str, prefix: str, last: bool):
        node = nodes[node_id]
        lines.append(f"{prefix}{'└─ ' if last else '├─ '}{_node_line(node)}")
        kids = [k for k in node.get("children", []) if k in nodes]
        for i, kid in enumerate(kids):
            walk(kid, prefix + ("   " if last else "│  "), i == len(kids) - 1)

    waves = tree.get("waves", [])
    for number, ids in enumerate(waves, start=1):
        last_wave = number == len(waves)
        extra = [n["id"] for n in nodes.values() if n.get("wave") == number and n.get("parent") is None and n["id"] not in ids]
        roots = list(ids) + extra
        note = ""
        if number in tree.get("aborted_waves", []):
            note = " (aborted)"
        elif tree.get("rebuilds", {}).get(str(number)):
            note = f" (rebuilt {tree['rebuilds'][str(number)]}×)"
        lines.append(f"{'└─ ' if last_wave else '├─ '}Wave {number}{note}")
        for i, nid in enumerate(roots):
            walk(nid, "   " if last_wave else "│  ", i == len(roots) - 1)
    for m in tree.get("merges", []):
        lines.append(f"Merged {', '.join(m['merged'])} into {m['into']} (same file: {', '.join(m['files'])})")
    if approval_info:
        who = approval_info.get("approved_by")
        state = f"approved by {who}" if who else "needs the user's approval"
        lines.append(f"Approval: {state} — {approval_info.get('reason')} "
                     f"(revision {approval_info.get('revision', 0)} of max {approval_info.get('max_revisions')})")
    return "\n".join(lines)


# ---------------------------------------------------------------- wave-conflicts


def conflicts(wave: int) -> dict:
    """wave-conflicts: files that two workers of the wave report as created or modified."""
    from aether import spawning

    def change(files):
        tree = spawning.tree_of(files["colony"])
        spawning.wave_index(tree, wave)
        touched: dict = {}
        unfinished = []
        for node in tree["nodes"].values():
            if node["wave"] != wave or node["role"] == "reviewer":
                continue
            if node["status"] in ("planned", "running"):
                unfinished.append(node["id"])
            owner = spawning.origin_of(tree, node)
            for path in node.get("files_created", []) + node.get("files_modified", []):
                touched.setdefault(path, {}).setdefault(owner, None)
        found = [{"file": path, "workers": list(owners)} for path, owners in sorted(touched.items()) if len(owners) > 1]
        tree.setdefault("conflicts", {})[str(wave)] = found
        events.append(files["events"], "wave_conflicts", "queen",
                      f"wave {wave}: " + (f"{len(found)} file(s) touched by two workers" if found else "no conflicts"))
        if found:
            text = f"Wave {wave}: {len(found)} file(s) changed by more than one worker —\n" + "\n".join(
                f"  - {c['file']}: {', '.join(c['workers'])}" for c in found)
        else:
            text = f"Wave {wave}: no file was changed by two workers."
        return {"wave": wave, "conflicts": found, "clean": not found, "unfinished": unfinished, "text": text}

    return store.update_many(["colony", "events"], change)
