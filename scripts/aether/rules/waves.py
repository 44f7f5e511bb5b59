"""Waves from the Phase Lead's assignment plan: workers read and checked, levels by
dependencies, same-file merges within a level, the approval rule per mode, and the delegation
tree as text (pure). See docs/decisions/waves-and-merging.md.
"""

from __future__ import annotations

from aether.core.castes import CASTES
from aether.core.exceptions import input_error
from aether.core.text import clip, one_line
from aether.core.vocabulary import DONE_STATUSES
from aether.rules import contracts, plans

MAX_PLAN_WORKERS = 500  # workers in one assignment plan


MAX_WORKER_TASKS = 200  # tasks of one worker


MAX_WORKER_FILES = 500  # writes + reads of one worker


# STANDARD mode approves a plan by itself only when it is this small and shares no file.
AUTO_APPROVE_MAX_TASKS = 4


AUTO_APPROVE_MAX_WORKERS = 2


AUTO_APPROVE_MAX_WAVES = 2


def _worker(raw, index: int, check_path=None) -> dict:
    """One worker of the plan, checked; its refused paths go in `defects` (see read_plan)."""
    where = f"workers[{index}]"
    if not isinstance(raw, dict):
        raise input_error("invalid_plan", f"{where} must be an object with caste, tasks, writes, reads")
    caste = contracts.normalize_caste(raw.get("caste"))
    if caste is None:
        raise input_error("invalid_plan", f"{where}.caste is {raw.get('caste')!r}; use one of {', '.join(CASTES)}")
    label = raw.get("id", raw.get("name"))
    label = (
        str(label).strip()
        if isinstance(label, (str, int)) and not isinstance(label, bool) and str(label).strip()
        else f"worker-{index + 1}"
    )  # noqa: E501
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
            raise input_error("invalid_plan", f'{where}.tasks holds {t!r}; task ids are strings like "2.1"')
        if str(t).strip() not in task_ids:
            task_ids.append(clip(str(t).strip(), 64))
    writes_raw = raw.get("writes", raw.get("files"))
    defects: list = []
    writes = _paths(contracts.str_list(writes_raw, f"{where}.writes", MAX_WORKER_FILES), f"{where}.writes", check_path, defects)
    reads = _paths(contracts.str_list(raw.get("reads"), f"{where}.reads", MAX_WORKER_FILES), f"{where}.reads", check_path, defects)
    writes = [p for p in dict.fromkeys(writes) if p]
    reads = [p for p in dict.fromkeys(reads) if p and p not in writes]
    deps = raw.get("depends_on", raw.get("after", []))
    if isinstance(deps, (str, int)) and not isinstance(deps, bool):
        deps = [deps]
    if not isinstance(deps, list):
        raise input_error("invalid_plan", f"{where}.depends_on must be an array of worker ids")
    return {
        "label": clip(label, 64),
        "caste": caste,
        "tasks": task_ids,
        "writes": writes,
        "reads": reads,
        "deps": [str(d).strip() for d in deps if isinstance(d, (str, int)) and not isinstance(d, bool)],
        "index": index,
        "defects": defects,
    }


def _paths(items: list, where: str, check_path, defects: list) -> list:
    """The paths a worker names, normalised; with `check_path(path, reads)` → (rel, why), each
    path it refuses becomes a defect the Phase Lead can correct."""
    if check_path is None:
        return [contracts.norm_path(p) for p in items]
    out = []
    for k, item in enumerate(items):
        rel, why = check_path(item, where.endswith(".reads"))
        if len(item) >= contracts.MAX_PATH:  # clipped on reading: the path asked for is longer
            rel, why = None, f"is longer than {contracts.MAX_PATH - 1} characters"
        if why:
            defects.append({"path": f"{where}[{k}]", "problem": f"{item[:200]!r} {why}"})
        else:
            out.append(rel)
    return out


def read_plan(doc, plan_tasks: dict | None, check_path=None) -> tuple:
    """Validate an assignment plan; returns (workers, phase or None, warnings).

    plan_tasks: the phase's PROJECT_PLAN tasks {id: task} when known (ids are checked and their
    `depends_on` become dependencies between workers). check_path(path, reads) → (rel, why):
    the caller's path guard (plan-waves passes the project's); refused paths are defects."""
    raw_workers, phase = _plan_document(doc)
    workers = [_worker(raw, i, check_path) for i, raw in enumerate(raw_workers)]
    defects = [d for w in workers for d in w.pop("defects")]
    if defects:
        raise input_error("invalid_plan", plans.defect_message(defects, "the assignment plan has", "send it again"), defects=defects)
    by_label, owner = _index_workers(workers)
    warnings = [] if plan_tasks is None else _check_plan_tasks(owner, plan_tasks)
    for w in workers:
        w["deps"] = _worker_deps(w, by_label, owner, plan_tasks)
    return workers, phase, warnings


def _plan_document(doc) -> tuple:
    """The plan's raw `workers` array (a bare array counts as one) and its `phase` (or None)."""
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
    return raw_workers, phase


def _index_workers(workers: list) -> tuple[dict, dict]:
    """({label: worker}, {task id: label}); a label used twice or a task given to two workers is refused."""
    by_label: dict = {}
    owner: dict = {}
    for w in workers:
        if w["label"] in by_label:
            raise input_error("invalid_plan", f"two workers are called {w['label']!r}; worker ids must be unique")
        by_label[w["label"]] = w
        for t in w["tasks"]:
            if t in owner:
                raise input_error(
                    "task_assigned_twice", f"task {t} is assigned to both {owner[t]} and {w['label']}; give each task to one worker"
                )
            owner[t] = w["label"]
    return by_label, owner


def _check_plan_tasks(owner: dict, plan_tasks: dict) -> list:
    """Refuse tasks the phase does not have; returns a warning naming open tasks no worker took."""
    unknown = [t for t in owner if t not in plan_tasks]
    if unknown:
        raise input_error(
            "unknown_task",
            f"task(s) {', '.join(unknown[:10])} are not in this phase of PROJECT_PLAN (its tasks: {', '.join(list(plan_tasks)[:30])})",
        )
    missing = [t for t, task in plan_tasks.items() if t not in owner and task.get("status") not in DONE_STATUSES]
    return [f"tasks not assigned to any worker: {', '.join(missing)}"] if missing else []


def _worker_deps(w: dict, by_label: dict, owner: dict, plan_tasks: dict | None) -> list:
    """The workers `w` waits for: those it names, then the owners of its tasks' plan dependencies."""
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
    return deps


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
                cycle = path[path.index(nxt) :] + [nxt]
                raise input_error(
                    "dependency_cycle",
                    "the workers depend on each other in a circle: " + " → ".join(cycle) + "; break the cycle in the plan",
                )
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
        shared = sorted({p for m in members for p in m["writes"] if sum(1 for o in members if p in o["writes"]) > 1})
        merges.append(
            {"into": target["label"], "merged": merged["merged_from"], "files": shared, "tasks": merged["tasks"], "caste": merged["caste"]}
        )
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
    return {
        "required": False,
        "reason": f"{mode} mode approves a plan this small (≤ {AUTO_APPROVE_MAX_TASKS} tasks, "
        f"≤ {AUTO_APPROVE_MAX_WORKERS} workers, ≤ {AUTO_APPROVE_MAX_WAVES} waves, no shared files)",
    }


def schedule(workers: list, per_wave: int) -> tuple:
    """Levels → merged levels → waves of at most per_wave workers; returns (waves, merges)."""
    merges, waves = [], []
    for level in levels(workers):
        merged, level_merges = merge_level(level)
        merges += level_merges
        for i in range(0, len(merged), per_wave):
            waves.append(merged[i : i + per_wave])
    return waves, merges


def _node_line(node_id: str, node: dict) -> str:
    role = node.get("role") or "worker"
    tasks = node.get("tasks") if isinstance(node.get("tasks"), list) else []
    writes = node.get("writes") if isinstance(node.get("writes"), list) else []
    parts = [
        f"{node_id} {node.get('caste')}{'' if role == 'worker' else ' ' + str(role).replace('_', '-')} [{node.get('status') or 'planned'}]"
    ]
    if tasks and role in ("worker", "retry", "debugger", "rebuild", "rerun", "refine"):
        parts.append("tasks " + ", ".join(map(str, tasks)))
    if role == "worker" and writes:
        parts.append("writes " + ", ".join(map(str, writes[:4])) + (f" +{len(writes) - 4}" if len(writes) > 4 else ""))
    if isinstance(node.get("depends_on"), list) and node["depends_on"]:
        parts.append("after " + ", ".join(map(str, node["depends_on"])))
    if isinstance(node.get("request"), dict):
        parts.append(one_line(node["request"].get("reason", ""), 60))
    return " · ".join(parts)


def _children(node_id: str, node: dict, nodes: dict) -> list:
    """A node's children: those it lists, then any that name it as parent (a damaged tree)."""
    listed = children if isinstance(children := node.get("children"), list) else []
    found = [k for k in listed if k in nodes]
    return found + [k for k, n in nodes.items() if n.get("parent") == node_id and k not in found]


def _header(tree: dict, nodes: dict) -> str:
    workers = sum(1 for n in nodes.values() if n.get("role") in (None, "worker"))
    waves = raw if isinstance(raw := tree.get("waves"), list) else []
    return (
        f"Phase {tree.get('phase')} spawn tree — {tree.get('mode')}, {workers} workers in {len(waves)} waves "
        f"(≤ {tree.get('workers_per_wave')} per wave), {tree.get('status')}"
    )


def _footer(tree: dict) -> list:
    lines = []
    for m in merges if isinstance(merges := tree.get("merges"), list) else []:
        if isinstance(m, dict):
            lines.append(
                f"Merged {', '.join(map(str, m.get('merged', [])))} into {m.get('into')} "
                f"(same file: {', '.join(map(str, m.get('files', [])))})"
            )
    approval_info = raw if isinstance(raw := tree.get("approval"), dict) else {}
    if approval_info:
        who = approval_info.get("approved_by")
        state = f"approved by {who}" if who else "needs the user's approval"
        lines.append(
            f"Approval: {state} — {approval_info.get('reason')} "
            f"(revision {approval_info.get('revision', 0)} of max {approval_info.get('max_revisions')})"
        )
    return lines


def _wave_note(tree: dict, number: int) -> str:
    if number in (tree.get("aborted_waves") or []):
        return " (aborted)"
    rebuilds = raw if isinstance(raw := tree.get("rebuilds"), dict) else {}
    return f" (rebuilt {rebuilds[str(number)]}×)" if rebuilds.get(str(number)) else ""


def render_tree(tree) -> str:
    """The delegation tree as text: the Queen shows it as is, and `status` shows it for any tree,
    a damaged one included (each node once, whatever its links say)."""
    if not isinstance(tree, dict) or not tree:
        return "No spawn tree."
    raw = tree.get("nodes")
    nodes = {str(k): n for k, n in raw.items() if isinstance(n, dict)} if isinstance(raw, dict) else {}
    lines = [_header(tree, nodes), "Queen"]
    seen: set = set()

    def walk(node_id: str, prefix: str, last: bool) -> None:
        seen.add(node_id)
        lines.append(f"{prefix}{'└─ ' if last else '├─ '}{_node_line(node_id, nodes[node_id])}")
        kids = [k for k in _children(node_id, nodes[node_id], nodes) if k not in seen]
        for i, kid in enumerate(kids):
            if kid not in seen:
                walk(kid, prefix + ("   " if last else "│  "), i == len(kids) - 1)

    waves = [w for w in raw_waves if isinstance(w, list)] if isinstance(raw_waves := tree.get("waves"), list) else []
    groups = []
    for number, ids in enumerate(waves, start=1):
        extra = [k for k, n in nodes.items() if n.get("wave") == number and n.get("parent") is None and k not in ids]
        groups.append((f"Wave {number}{_wave_note(tree, number)}", [k for k in ids if k in nodes] + extra))
    reached, queue = set(), [r for _, roots in groups for r in roots]
    while queue:
        node_id = queue.pop()
        if node_id not in reached:
            reached.add(node_id)
            queue += _children(node_id, nodes[node_id], nodes)
    groups.append(("Outside the waves", sorted(k for k in nodes if k not in reached)))
    groups = [(title, roots) for title, roots in groups if roots]
    for g, (title, roots) in enumerate(groups):
        last_group = g == len(groups) - 1
        lines.append(f"{'└─ ' if last_group else '├─ '}{title}")
        roots = [r for r in roots if r not in seen]
        for i, nid in enumerate(roots):
            if nid not in seen:
                walk(nid, "   " if last_group else "│  ", i == len(roots) - 1)
    return "\n".join(lines + _footer(tree))
