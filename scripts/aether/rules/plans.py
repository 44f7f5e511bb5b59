"""PROJECT_PLAN's rules: validating a plan a planner produced, and the look-ups of phases,
tasks and success criteria every command shares (pure: the plan is passed in).
"""

from __future__ import annotations

from aether.core import clock
from aether.core.exceptions import input_error, state_error
from aether.core.text import json_type

MAX_PHASES = 50


MAX_TASKS_PER_PHASE = 100


MAX_TEXT_LENGTH = 4000  # names, descriptions, criteria


MAX_ID_LENGTH = 32


TASKS_PER_PHASE = (3, 8)  # the planning guidance: outside this range is a warning, not a defect


MAX_DEFECTS_IN_MESSAGE = 3


# A task's `maps_to_criterion`: true when it directly serves a success criterion of its phase
# (a critical task: docs/decisions/failure-ladder.md), false for a supporting task. A task whose plan does not say counts
# as mapping to one: the failure ladder then flags it to the user instead of skipping it, and
# task-skip (without --force) and phase-skip refuse it. Unsure means the user decides.
CRITERION_FIELD = "maps_to_criterion"


UNSAID_MAPS_TO_CRITERION = True


def _text(defects: list, obj: dict, key: str, path: str, required: bool = True) -> None:
    if key not in obj or obj[key] is None:
        if required:
            defects.append({"path": f"{path}.{key}", "problem": "is missing (a non-empty string)"})
        return
    value = obj[key]
    if not isinstance(value, str):
        defects.append({"path": f"{path}.{key}", "problem": f"must be a string, found {json_type(value)}"})
    elif not value.strip():
        defects.append({"path": f"{path}.{key}", "problem": "is empty"})
    elif len(value) > MAX_TEXT_LENGTH:
        defects.append({"path": f"{path}.{key}", "problem": f"is {len(value)} characters; the limit is {MAX_TEXT_LENGTH}"})


def _phase_id(defects: list, phase: dict, path: str):
    value = phase.get("id")
    if "id" not in phase:
        defects.append({"path": f"{path}.id", "problem": "is missing (a whole number ≥ 1)"})
    elif isinstance(value, bool) or not isinstance(value, int):
        defects.append({"path": f"{path}.id", "problem": f"must be a whole number ≥ 1, found {json_type(value)}"})
    elif value < 1:
        defects.append({"path": f"{path}.id", "problem": f"must be ≥ 1, found {value}"})
    else:
        return value
    return None


def _task_id(defects: list, task: dict, path: str):
    value = task.get("id")
    if "id" not in task:
        defects.append({"path": f"{path}.id", "problem": 'is missing (a string like "1.1")'})
    elif not isinstance(value, str):
        defects.append({"path": f"{path}.id", "problem": f'must be a string like "1.1", found {json_type(value)}'})
    elif not value.strip() or value != value.strip() or len(value) > MAX_ID_LENGTH or any(c < " " for c in value):
        defects.append(
            {"path": f"{path}.id", "problem": f"must be 1–{MAX_ID_LENGTH} characters without spaces at the ends or control characters"}
        )
    else:
        return value
    return None


def _find_cycle(graph: dict) -> list | None:
    """A dependency cycle as [a, b, …, a], or None. Iterative DFS (plans can be long)."""
    state: dict = {}  # node → 1 visiting, 2 done
    for start in graph:
        if state.get(start):
            continue
        stack = [(start, iter(graph[start]))]
        trail = [start]
        state[start] = 1
        while stack:
            node, deps = stack[-1]
            for dep in deps:
                if dep not in graph:
                    continue
                if state.get(dep) == 1:
                    return trail[trail.index(dep) :] + [dep]
                if not state.get(dep):
                    state[dep] = 1
                    trail.append(dep)
                    stack.append((dep, iter(graph[dep])))
                    break
            else:
                state[node] = 2
                stack.pop()
                trail.pop()
    return None


class _TaskIndex:
    """What the walk over the phases found about their tasks. (A plain class: start-up time.)"""

    __slots__ = ("home", "order", "unsaid")

    def __init__(self) -> None:
        self.home: dict = {}  # task id → (phase index, path)
        self.order: list = []  # (phase index, task path, task)
        self.unsaid: list = []  # tasks that do not say whether they map to a success criterion


def validate(data) -> tuple[dict | None, list, list]:
    """Check a PROJECT_PLAN document. Returns (normalised plan or None, defects, warnings)."""
    if not isinstance(data, dict):
        return None, [{"path": "$", "problem": f"a plan must be a JSON object, found {json_type(data)}"}], []
    defects: list = []
    warnings: list = []
    phases = _check_top_level(defects, data)
    if phases is None:
        return None, defects, warnings
    index = _check_phases(defects, warnings, phases)
    _check_dependencies(defects, index)
    if defects:
        return None, defects, warnings
    if index.unsaid:
        warnings.append(_unsaid_warning(index.unsaid))
    return _normalise_plan(data, phases), [], warnings


def _check_top_level(defects: list, data: dict) -> list | None:
    """The plan's `goal` and `phases` array; returns the phases, or None when nothing more can be checked."""
    if data.get("goal") is not None:
        _text(defects, data, "goal", "$")
    phases = data.get("phases")
    if not isinstance(phases, list):
        defects.append({"path": "phases", "problem": "is missing or not an array of phases"})
        return None
    if not phases:
        defects.append({"path": "phases", "problem": "is empty; a plan needs at least one phase"})
    if len(phases) > MAX_PHASES:
        defects.append({"path": "phases", "problem": f"has {len(phases)} phases; the limit is {MAX_PHASES}"})
        return None
    return phases


def _check_phases(defects: list, warnings: list, phases: list) -> _TaskIndex:
    """Each phase's fields and each of its tasks (dependencies wait until every task id is known)."""
    phase_seen: dict = {}  # phase id → path
    index = _TaskIndex()
    for i, phase in enumerate(phases):
        path = f"phases[{i}]"
        if not isinstance(phase, dict):
            defects.append({"path": path, "problem": f"must be an object, found {json_type(phase)}"})
            continue
        _check_phase(defects, warnings, phase, path, phase_seen)
        for j, task in enumerate(_phase_tasks(defects, warnings, phase, path)):
            _check_task(defects, warnings, task, i, f"{path}.tasks[{j}]", index)
    return index


def _check_phase(defects: list, warnings: list, phase: dict, path: str, phase_seen: dict) -> None:
    """One phase's id (unique), name, description, status and success criteria."""
    pid = _phase_id(defects, phase, path)
    if pid is not None:
        if pid in phase_seen:
            defects.append({"path": f"{path}.id", "problem": f"phase id {pid} is also used by {phase_seen[pid]}"})
        else:
            phase_seen[pid] = path
    _text(defects, phase, "name", path)
    _text(defects, phase, "description", path)
    if "status" in phase and phase["status"] not in (None, "pending"):
        warnings.append(f"{path}.status {phase['status']!r} ignored: a loaded plan starts pending (builds record progress)")
    criteria = phase.get("success_criteria")
    if criteria is None:
        defects.append({"path": f"{path}.success_criteria", "problem": "is missing (a list of strings)"})
    elif not isinstance(criteria, list):
        defects.append({"path": f"{path}.success_criteria", "problem": f"must be a list of strings, found {json_type(criteria)}"})
    else:
        for k, item in enumerate(criteria):
            _criterion(defects, item, f"{path}.success_criteria[{k}]")


def _phase_tasks(defects: list, warnings: list, phase: dict, path: str) -> list:
    """A phase's `tasks` array; empty when it is missing or too long to check."""
    tasks = phase.get("tasks")
    if not isinstance(tasks, list):
        defects.append({"path": f"{path}.tasks", "problem": "is missing or not an array of tasks"})
        return []
    if not tasks:
        defects.append({"path": f"{path}.tasks", "problem": "is empty; a phase needs at least one task"})
    elif len(tasks) > MAX_TASKS_PER_PHASE:
        defects.append({"path": f"{path}.tasks", "problem": f"has {len(tasks)} tasks; the limit is {MAX_TASKS_PER_PHASE}"})
        return []
    elif not TASKS_PER_PHASE[0] <= len(tasks) <= TASKS_PER_PHASE[1]:
        warnings.append(f"{path} has {len(tasks)} tasks; phases usually have {TASKS_PER_PHASE[0]}–{TASKS_PER_PHASE[1]}")
    return tasks


def _check_task(defects: list, warnings: list, task, i: int, tpath: str, index: _TaskIndex) -> None:
    """One task's id (unique in the plan), description, CRITERION_FIELD and status; indexes it."""
    if not isinstance(task, dict):
        defects.append({"path": tpath, "problem": f"must be an object, found {json_type(task)}"})
        return
    tid = _task_id(defects, task, tpath)
    if tid is not None:
        if tid in index.home:
            defects.append({"path": f"{tpath}.id", "problem": f"task id {tid!r} is also used by {index.home[tid][1]}"})
        else:
            index.home[tid] = (i, tpath)
    _text(defects, task, "description", tpath)
    said = task.get(CRITERION_FIELD)
    if said is None:
        index.unsaid.append(tid or tpath)
    elif not isinstance(said, bool):
        defects.append(
            {
                "path": f"{tpath}.{CRITERION_FIELD}",
                "problem": f"must be true (the task directly serves a success criterion) or "
                f"false (a supporting task), found {json_type(said)}",
            }
        )
    if "status" in task and task["status"] not in (None, "pending"):
        warnings.append(f"{tpath}.status {task['status']!r} ignored: a loaded plan starts pending")
    index.order.append((i, tpath, task))


def _check_dependencies(defects: list, index: _TaskIndex) -> None:
    """Every task's `depends_on`, then cycles. Needs every id first: a task may depend on one listed
    after it in its phase."""
    graph: dict = {}  # task id → the ids it depends on
    for i, tpath, task in index.order:
        _check_depends_on(defects, graph, index.home, i, tpath, task)
    cycle = _find_cycle(graph)
    if cycle:
        where = index.home[cycle[0]][1].rsplit(".tasks[", 1)[0] + ".tasks"
        defects.append({"path": where, "problem": "dependency cycle: " + " → ".join(cycle)})


def _check_depends_on(defects: list, graph: dict, home: dict, i: int, tpath: str, task: dict) -> None:
    """One task's `depends_on` (a list of distinct task ids); adds its edges to the graph."""
    deps = task.get("depends_on", [])
    tid = task.get("id") if isinstance(task.get("id"), str) else None
    if deps is None:
        deps = []
    if not isinstance(deps, list):
        defects.append({"path": f"{tpath}.depends_on", "problem": f"must be a list of task ids, found {json_type(deps)}"})
        return
    seen_deps = set()
    for k, dep in enumerate(deps):
        dpath = f"{tpath}.depends_on[{k}]"
        if not isinstance(dep, str):
            defects.append({"path": dpath, "problem": f'must be a task id string like "1.1", found {json_type(dep)}'})
            continue
        if dep in seen_deps:
            defects.append({"path": dpath, "problem": f"{dep!r} is listed twice"})
            continue
        seen_deps.add(dep)
        problem = _dependency_problem(dep, tid, i, home)
        if problem is not None:
            defects.append({"path": dpath, "problem": problem})
        elif tid is not None:
            graph.setdefault(tid, []).append(dep)
    if tid is not None:
        graph.setdefault(tid, [])


def _dependency_problem(dep: str, tid: str | None, i: int, home: dict) -> str | None:
    """What is wrong with task `tid` (of phase index i) depending on `dep`, or None."""
    if dep == tid:
        return "a task cannot depend on itself"
    if dep not in home:
        return f"depends on {dep!r}, which no task of the plan has as id"
    if home[dep][0] > i:
        return (
            f"depends on {dep!r}, which is in a later phase ({home[dep][1].split('.')[0]}); "
            f"a task may only depend on tasks of its own or an earlier phase"
        )
    return None


def _unsaid_warning(unsaid: list) -> str:
    """The warning naming the tasks that do not say CRITERION_FIELD (the first ten)."""
    shown = ", ".join(map(str, unsaid[:10])) + (f" (+{len(unsaid) - 10} more)" if len(unsaid) > 10 else "")
    return (
        f"task(s) {shown} do not say `{CRITERION_FIELD}`: they count as mapping to a success "
        f"criterion (a failure is flagged to the user, never skipped)"
    )


def _normalise_plan(data: dict, phases: list) -> dict:
    """The plan as stored: every phase and task pending, plus the extra top-level fields the planner added."""
    plan = {
        "goal": data.get("goal"),
        "generated_at": clock.iso(),
        "phases": [_normalise_phase(phase) for phase in phases],
    }
    for key, value in data.items():
        if key not in plan and key not in ("version",):
            plan[key] = value
    return plan


def _criterion(defects: list, value, path: str) -> None:
    if not isinstance(value, str):
        defects.append({"path": path, "problem": f"must be a string, found {json_type(value)}"})
    elif not value.strip():
        defects.append({"path": path, "problem": "is empty"})
    elif len(value) > MAX_TEXT_LENGTH:
        defects.append({"path": path, "problem": f"is {len(value)} characters; the limit is {MAX_TEXT_LENGTH}"})


def _normalise_phase(phase: dict) -> dict:
    out = dict(phase)
    out["status"] = "pending"
    out["tasks"] = []
    for task in phase["tasks"]:
        item = dict(task)
        item["status"] = "pending"
        item["depends_on"] = list(task.get("depends_on") or [])
        if item.get(CRITERION_FIELD) is None:
            item.pop(CRITERION_FIELD, None)  # null says nothing
        out["tasks"].append(item)
    out["success_criteria"] = list(phase["success_criteria"])
    return out


def defect_message(defects: list, subject: str = "the plan has", retry: str = "load it again") -> str:
    """One line naming the first defects; the full list goes in the envelope's `defects`."""
    shown = "; ".join(f"{d['path']}: {d['problem']}" for d in defects[:MAX_DEFECTS_IN_MESSAGE])
    more = f" (+{len(defects) - MAX_DEFECTS_IN_MESSAGE} more in `defects`)" if len(defects) > MAX_DEFECTS_IN_MESSAGE else ""
    noun = "defect" if len(defects) == 1 else "defects"
    return f"{subject} {len(defects)} {noun}: {shown}{more}; fix them all and {retry}"


def phases(plan: dict) -> list:
    return [p for p in plan.get("phases") or [] if isinstance(p, dict)]


def find_phase(plan: dict, phase_id: int) -> dict | None:
    for phase in phases(plan):
        if phase.get("id") == phase_id and not isinstance(phase.get("id"), bool):
            return phase
    return None


def require_plan(plan: dict) -> list:
    """The plan's phases, or `plan_missing` when no plan is loaded."""
    items = phases(plan)
    if not items:
        raise state_error("plan_missing", "no plan is loaded; make one with /ant:plan (`aether next --plan`)")
    return items


def require_phase(plan: dict, phase_id: int) -> dict:
    items = require_plan(plan)
    phase = find_phase(plan, phase_id)
    if phase is None:
        ids = ", ".join(str(p.get("id")) for p in items)
        raise input_error("unknown_phase", f"the plan has no phase {phase_id} (phases: {ids}); `aether phase list` shows them")
    return phase


def find_task(plan: dict, task_id, phase_id=None) -> dict | None:
    """A task by id (of phase `phase_id` when given)."""
    wanted = str(task_id)
    for phase in phases(plan):
        if phase_id is not None and phase.get("id") != phase_id:
            continue
        for task in phase.get("tasks") or []:
            if isinstance(task, dict) and str(task.get("id")) == wanted:
                return task
    return None


def criterion_said(task) -> bool | None:
    """What the plan says about a task mapping to a success criterion (None: it does not say)."""
    said = task.get(CRITERION_FIELD) if isinstance(task, dict) else None
    return said if isinstance(said, bool) else None


def maps_to_criterion(task, said: bool | None = None) -> bool:
    """Does a task map to a success criterion of its phase (critical) or only support one?
    `said`, when given (a failure report's field, failure-decide --maps-to-criterion/--supporting),
    wins over the plan; when nobody says, UNSAID_MAPS_TO_CRITERION. The one rule failures.py
    (flag or skip) and recovery.py (task-skip, phase-skip) both follow."""
    if isinstance(said, bool):
        return said
    known = criterion_said(task)
    return UNSAID_MAPS_TO_CRITERION if known is None else known


def task_counts(phase: dict) -> dict:
    counts = {"total": 0, "pending": 0, "in_progress": 0, "completed": 0, "failed": 0, "skipped": 0}
    for task in phase.get("tasks") or []:
        if isinstance(task, dict):
            counts["total"] += 1
            status = task.get("status") or "pending"
            counts[status] = counts.get(status, 0) + 1
    return counts
