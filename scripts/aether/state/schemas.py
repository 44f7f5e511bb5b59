"""Every state file's schema: name, location, version, default content, upgrade and checks.

Files written by the original bash+jq Aether (v4.4) carry no `version` (global learnings carried `version: 1`); they
are upgraded in memory on read and written back in the current shape on the next write,
keeping every field they had.
"""

from __future__ import annotations

import copy

from aether.core.vocabulary import (
    FAILURE_ACTIONS,
    LOOP_STATUSES,
    STATUSES,
)
from aether.state.schema_checks import NUM, field_check, fill, records, strings
from aether.state.schema_colony import COLONY_DEFAULT, check_colony, upgrade_colony


class FileSpec:
    """One state file. (A plain class: dataclasses would cost start-up time on every call.)"""

    __slots__ = ("name", "filename", "version", "default", "validate", "upgrade", "scope", "missing_hint", "aliases", "compact")

    def __init__(
        self,
        name: str,
        filename: str,
        version: int,
        default,
        validate,
        upgrade=None,
        scope: str = "project",
        missing_hint: str = "",
        aliases=(),
        compact: bool = False,
    ):
        self.name = name  # short name used on the command line: `colony`, `pheromones`, …
        self.filename = filename
        self.version = version
        self.default = default  # () -> fresh content
        self.validate = validate  # (data) -> [problem, …]
        self.upgrade = upgrade or (lambda data: data)  # older schema → current, in memory
        self.scope = scope  # "project" (.aether/data) or "global" (~/.aether)
        self.missing_hint = missing_hint
        self.aliases = aliases
        self.compact = compact  # written without indentation: big log-like files encode ~4× faster


def _with_version(default: dict, version: int):

    def make() -> dict:
        data = copy.deepcopy(default)
        data["version"] = version
        return data

    return make


# ---------------------------------------------------------------- pheromones.json


def _check_signal(p: list, s: dict, where: str) -> None:
    field_check(p, s, "id", str, where)
    field_check(p, s, "type", str, where)
    field_check(p, s, "content", str, where)
    field_check(p, s, "strength", NUM, where)
    field_check(p, s, "half_life_seconds", NUM + (type(None),), where)
    field_check(p, s, "created_at", str, where)
    field_check(p, s, "source", (str, type(None)), where, required=False)
    field_check(p, s, "auto", bool, where, required=False)


def _check_pheromones(data: dict) -> list:
    p: list = []
    records(p, data, "signals", _check_signal)
    return p


# ---------------------------------------------------------------- PROJECT_PLAN.json


def _check_task(p: list, t: dict, where: str) -> None:
    field_check(p, t, "id", (str, int), where)
    field_check(p, t, "description", str, where)
    field_check(p, t, "status", str, where, required=False, choices=STATUSES)
    field_check(p, t, "depends_on", list, where, required=False)
    field_check(p, t, "maps_to_criterion", bool, where, required=False)


def _check_phase(p: list, ph: dict, where: str) -> None:
    field_check(p, ph, "id", int, where)
    field_check(p, ph, "name", str, where)
    field_check(p, ph, "description", str, where, required=False)
    field_check(p, ph, "status", str, where, required=False, choices=STATUSES)
    records(p, ph, "tasks", _check_task, where + ".")
    field_check(p, ph, "success_criteria", list, where, required=False)


def _check_plan(data: dict) -> list:
    p: list = []
    field_check(p, data, "goal", (str, type(None)), "PROJECT_PLAN", required=False)
    field_check(p, data, "generated_at", (str, type(None)), "PROJECT_PLAN", required=False)
    records(p, data, "phases", _check_phase)
    return p


# ---------------------------------------------------------------- errors.json


def _check_error(p: list, e: dict, where: str) -> None:
    field_check(p, e, "id", str, where)
    field_check(p, e, "category", str, where)
    field_check(p, e, "severity", str, where)
    field_check(p, e, "description", str, where)
    field_check(p, e, "timestamp", str, where)
    field_check(p, e, "phase", (int, type(None)), where, required=False)


def _check_errors(data: dict) -> list:
    p: list = []
    records(p, data, "errors", _check_error)
    records(p, data, "flagged_patterns", None)
    return p


# ---------------------------------------------------------------- memory.json


def _check_learning(p: list, entry: dict, where: str) -> None:
    field_check(p, entry, "phase", (int, type(None)), where, required=False)
    field_check(p, entry, "learnings", list, where)


def _check_decision(p: list, entry: dict, where: str) -> None:
    field_check(p, entry, "type", str, where, required=False)
    field_check(p, entry, "content", str, where)


def _check_memory(data: dict) -> list:
    p: list = []
    records(p, data, "phase_learnings", _check_learning)
    records(p, data, "decisions", _check_decision)
    field_check(p, data, "patterns", list, "memory")
    return p


# ---------------------------------------------------------------- events.json


def _check_event(p: list, e: dict, where: str) -> None:
    for key in ("id", "type", "source", "content", "timestamp"):
        field_check(p, e, key, str, where)


def _check_events(data: dict) -> list:
    p: list = []
    records(p, data, "events", _check_event)
    return p


# ---------------------------------------------------------------- ~/.aether/learnings.json


def _check_global_learning(p: list, entry: dict, where: str) -> None:
    field_check(p, entry, "id", str, where)
    field_check(p, entry, "content", str, where)
    field_check(p, entry, "category", (str, type(None)), where, required=False)
    field_check(p, entry, "tags", list, where)
    field_check(p, entry, "source_projects", list, where)
    field_check(p, entry, "occurrence_count", int, where)
    field_check(p, entry, "promoted", bool, where)


def _check_global_learnings(data: dict) -> list:
    p: list = []
    records(p, data, "learnings", _check_global_learning)
    return p


def _upgrade_global_learnings(data: dict) -> dict:
    """The original Aether's entries (`source_project`, `promoted_at`) become promoted entries of schema 2."""
    data = fill(data, {"learnings": []})
    for entry in data["learnings"]:
        if not isinstance(entry, dict):
            continue
        if "source_projects" not in entry:
            source = entry.get("source_project")
            entry["source_projects"] = [source] if source else []
            entry.setdefault("promoted", True)  # the original only stored what it had promoted
            entry.setdefault("migrated_from", "v4.4")
        entry.setdefault("tags", [])
        entry.setdefault("category", None)
        entry.setdefault("occurrence_count", max(1, len(entry["source_projects"])))
        entry.setdefault("promoted", False)
        stamp = entry.get("promoted_at") or entry.get("first_seen")
        entry.setdefault("first_seen", stamp)
        entry.setdefault("last_seen", entry.get("first_seen"))
    return data


# ---------------------------------------------------------------- ~/.aether/projects.json


def _check_project(p: list, entry: dict, where: str) -> None:
    field_check(p, entry, "project_id", str, where, required=False)
    field_check(p, entry, "session_id", (str, type(None)), where, required=False)


def _check_projects(data: dict) -> list:
    p: list = []
    records(p, data, "projects", _check_project)
    return p


# ---------------------------------------------------------------- checkpoints.json


def _check_checkpoint(p: list, entry: dict, where: str) -> None:
    for key in ("ref", "commit", "tree", "created_at", "label"):
        field_check(p, entry, key, str, where)
    field_check(p, entry, "phase", (int, type(None)), where)
    field_check(p, entry, "parent", (str, type(None)), where, required=False)


def _check_checkpoints(data: dict) -> list:
    p: list = []
    records(p, data, "checkpoints", _check_checkpoint)
    return p


# ---------------------------------------------------------------- failures.json


def _check_failure(p: list, e: dict, where: str) -> None:
    # a tight loop: the history holds up to 1,000 entries and is checked on every read and write
    for key in ("id", "task", "error", "normalized_error", "reason", "timestamp"):
        if type(e.get(key)) is not str:
            field_check(p, e, key, str, where)
    if e.get("action") not in FAILURE_ACTIONS or type(e.get("files")) is not list:
        field_check(p, e, "files", list, where)
        field_check(p, e, "action", str, where, choices=FAILURE_ACTIONS)
    if not (e.get("build") is None or type(e["build"]) is str) or not (e.get("phase") is None or type(e["phase"]) is int):
        field_check(p, e, "build", (str, type(None)), where)
        field_check(p, e, "phase", (int, type(None)), where)


def _check_retry(p: list, e: dict, where: str) -> None:
    field_check(p, e, "task", str, where)
    field_check(p, e, "kind", str, where, choices=("retry", "debugger"))
    field_check(p, e, "result", str, where, choices=("pending", "recovered", "failed"))


def _check_friction(p: list, e: dict, where: str) -> None:
    field_check(p, e, "id", str, where)
    field_check(p, e, "task", str, where)
    field_check(p, e, "attempts", int, where)
    for key in ("root_cause", "resolution", "pattern", "build", "node"):
        field_check(p, e, key, (str, type(None)), where, required=False)
    field_check(p, e, "phase", (int, type(None)), where, required=False)


def _check_abort(p: list, e: dict, where: str) -> None:
    field_check(p, e, "phase", (int, type(None)), where)
    field_check(p, e, "task", str, where)
    field_check(p, e, "reason", str, where)
    field_check(p, e, "report", dict, where)


def _check_failures(data: dict) -> list:
    p: list = []
    records(p, data, "history", _check_failure)
    records(p, data, "retry_log", _check_retry)
    records(p, data, "friction", _check_friction)
    records(p, data, "aborts", _check_abort)
    field_check(p, data, "next_friction", int, "failures")
    return p


# ---------------------------------------------------------------- loops.json


def _check_iteration(p: list, e: dict, where: str) -> None:
    field_check(p, e, "score", NUM, where)
    field_check(p, e, "round", int, where)
    field_check(p, e, "decision", str, where, choices=("refine", "complete", "user_input"))
    field_check(p, e, "iteration", int, where, required=False)
    field_check(p, e, "checkpoint", (str, type(None)), where, required=False)
    field_check(p, e, "commit", str, where, required=False)
    field_check(p, e, "parts", dict, where, required=False)


def _check_feedback(p: list, e: dict, where: str) -> None:
    field_check(p, e, "kind", str, where, choices=("critic", "user"))
    field_check(p, e, "text", str, where)
    field_check(p, e, "iteration", int, where, required=False)
    field_check(p, e, "parsed", dict, where, required=False)
    parsed = e.get("parsed")
    if type(parsed) is dict:
        field_check(p, parsed, "score", NUM + (type(None),), where + ".parsed", required=False)
        for key in ("key_issues", "recommendations"):
            if key in parsed and not strings(parsed[key]):
                p.append(f"{where}.parsed.{key} must be an array of strings")
        field_check(p, parsed, "summary", (str, type(None)), where + ".parsed", required=False)


def _check_loop(p: list, loop: dict, where: str) -> None:
    field_check(p, loop, "id", str, where)
    field_check(p, loop, "type", str, where)
    field_check(p, loop, "threshold", NUM, where)
    field_check(p, loop, "status", str, where, choices=LOOP_STATUSES)
    field_check(p, loop, "round", int, where)
    field_check(p, loop, "phase", (int, type(None)), where, required=False)
    field_check(p, loop, "session_id", (str, type(None)), where, required=False)
    records(p, loop, "iterations", _check_iteration, where + ".")
    records(p, loop, "feedback", _check_feedback, where + ".")


def _check_loops(data: dict) -> list:
    p: list = []
    records(p, data, "loops", _check_loop)
    return p


# ---------------------------------------------------------------- handoff.json (colony-pause)

HANDOFF_DEFAULT = {"paused_at": None, "resumed_at": None, "session_id": None, "note": None, "snapshot": None}


def _check_handoff(data: dict) -> list:
    p: list = []
    for key in ("paused_at", "resumed_at", "session_id", "note"):
        field_check(p, data, key, (str, type(None)), "handoff")
    field_check(p, data, "snapshot", (dict, type(None)), "handoff")
    if data.get("paused_at") is not None and not isinstance(data.get("snapshot"), dict):
        p.append("handoff.snapshot must be an object when paused_at is set")
    return p


# ---------------------------------------------------------------- research.json, drafts.json, phase_records.json


def _check_research_task(p: list, t: dict, where: str) -> None:
    for key in ("id", "requirement", "slug", "brief_path", "status"):
        field_check(p, t, key, str, where)


def _check_research_plan(p: list, plan: dict, where: str) -> None:
    field_check(p, plan, "id", str, where)
    field_check(p, plan, "source", str, where)
    records(p, plan, "tasks", _check_research_task, where + ".")


def _check_research(data: dict) -> list:
    p: list = []
    records(p, data, "plans", _check_research_plan)
    return p


def _check_draft(p: list, d: dict, where: str) -> None:
    field_check(p, d, "iteration", int, where)
    field_check(p, d, "plan", dict, where)
    field_check(p, d, "stored_at", str, where)


def _check_draft_loop(p: list, entry: dict, where: str) -> None:
    field_check(p, entry, "loop_id", str, where)
    records(p, entry, "drafts", _check_draft, where + ".")


def _check_drafts(data: dict) -> list:
    p: list = []
    records(p, data, "loops", _check_draft_loop)
    return p


def _check_phase_record(p: list, r: dict, where: str) -> None:
    field_check(p, r, "phase", int, where)
    field_check(p, r, "status", str, where)
    field_check(p, r, "files_created", list, where)
    field_check(p, r, "files_modified", list, where)
    field_check(p, r, "finished_at", str, where)


def _check_phase_records(data: dict) -> list:
    p: list = []
    records(p, data, "records", _check_phase_record)
    return p


# ---------------------------------------------------------------- spawns.json (spawns by reference)


# A spawn by reference (state/spawns.py says what each means).
SPAWN_RECORD_STATUSES = ("dispatched", "launched", "background", "returned", "recorded")


def _check_spawn(p: list, s: dict, where: str) -> None:
    for key in ("ref", "scope", "local", "kind", "subagent_type"):
        field_check(p, s, key, str, where)
    field_check(p, s, "status", str, where, choices=SPAWN_RECORD_STATUSES)


def _check_autopilot(p: list, r: dict, where: str) -> None:
    """The fields an autopilot run (`command: run`) is driven by."""
    for key, fields in (("range", ("from", "to")), ("budget", ("run", "phase"))):
        field_check(p, r, key, dict, where)
        for name in fields if isinstance(r.get(key), dict) else ():
            field_check(p, r[key], name, int, f"{where}.{key}")
    field_check(p, r, "builds", dict, where)
    field_check(p, r, "skipped", list, where)
    field_check(p, r, "continues", dict, where, required=False)
    field_check(p, r, "stopped", (dict, type(None)), where)
    if isinstance(r.get("stopped"), dict):
        for key in ("why", "text", "command"):
            field_check(p, r["stopped"], key, str, f"{where}.stopped")
    field_check(p, r, "final", (dict, type(None)), where, required=False)
    if isinstance(r.get("final"), dict):
        field_check(p, r["final"], "text", str, f"{where}.final")
        field_check(p, r["final"], "command", (str, type(None)), f"{where}.final")


def _check_run(p: list, r: dict, where: str) -> None:
    for key in ("scope", "command"):
        field_check(p, r, key, str, where)
    field_check(p, r, "done", bool, where)
    field_check(p, r, "verify", (dict, type(None)), where, required=False)  # the commands a build fixed at its start
    _counts(p, r, [key for key in ("helper_ms", "helper_steps") if key in r], where)  # the helper's time for it
    if r.get("command") == "run":
        _check_autopilot(p, r, where)


def _check_claim(p: list, c: dict, where: str) -> None:
    """Who holds the colony's build (state/claim.py)."""
    field_check(p, c, "claude_pid", (int, type(None)), where)
    field_check(p, c, "claude_started", (str, type(None)), where)
    field_check(p, c, "since", str, where)
    for key in ("command", "run", "session_id", "process_started_at"):
        field_check(p, c, key, (str, type(None)), where, required=False)
    field_check(p, c, "phase", (int, type(None)), where, required=False)
    field_check(p, c, "took_over", (dict, type(None)), where, required=False)


def _check_spawns(data: dict) -> list:
    p: list = []
    records(p, data, "spawns", _check_spawn)
    records(p, data, "runs", _check_run)
    field_check(p, data, "claim", (dict, type(None)), "spawns", required=False)
    field_check(p, data, "reported", list, "spawns", required=False)  # archived runs whose report keeps its folder
    if isinstance(data.get("reported"), list) and not all(isinstance(s, str) for s in data["reported"]):
        p.append("spawns.reported holds something that is no run's scope")
    if isinstance(data.get("claim"), dict):
        _check_claim(p, data["claim"], "spawns.claim")
    return p


# ---------------------------------------------------------------- costs.json (what the ants spent)

_BUCKET_INTS = ("tokens", "duration_ms", "spawns")
MAX_COUNT = 10**15  # a running total above this is no count (it would not even fit a float exactly)


def _counts(p: list, obj: dict, keys, where: str) -> None:
    """Each obj[key] is a whole number from 0 to MAX_COUNT."""
    for key in keys:
        field_check(p, obj, key, int, where)
        value = obj.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_COUNT:
            p.append(f"{where}.{key} is {'negative' if value < 0 else 'larger than any real count'}")


def _objects(p: list, obj: dict, key: str, where: str, check) -> None:
    """obj[key] is an object whose values are objects, each checked."""
    field_check(p, obj, key, dict, where)
    for name, value in (obj.get(key) or {}).items() if isinstance(obj.get(key), dict) else ():
        if isinstance(value, dict):
            check(p, value, f"{where}.{key}.{name}")
        else:
            p.append(f"{where}.{key}.{name} must be an object")


def _check_model_line(p: list, m: dict, where: str) -> None:
    _counts(p, m, ("tokens", "spawns"), where)


def _check_caste_line(p: list, line: dict, where: str) -> None:
    _counts(p, line, (*_BUCKET_INTS, "metered"), where)
    _objects(p, line, "models", where, _check_model_line)


def _check_bucket(p: list, b: dict, where: str) -> None:
    _counts(p, b, (*_BUCKET_INTS, "unmetered"), where)
    _objects(p, b, "castes", where, _check_caste_line)


def _check_holder(key: str):
    def check(p: list, h: dict, where: str) -> None:
        field_check(p, h, key, (str, type(None)), where)
        _objects(p, h, "phases", where, _check_bucket)

    return check


def _check_costs(data: dict) -> list:
    p: list = []
    records(p, data, "colonies", _check_holder("session_id"))
    records(p, data, "runs", _check_holder("scope"))
    return p


# ---------------------------------------------------------------- worktrees.json (the builders' worktrees)

WORKTREE_STATUSES = ("active", "passed", "merged", "kept", "discarded", "dropped")


def _check_worktree(p: list, w: dict, where: str) -> None:
    for key in ("scope", "node", "path", "base", "created_at"):
        field_check(p, w, key, str, where)
    field_check(p, w, "status", str, where, choices=WORKTREE_STATUSES)
    for key in ("branch", "result", "ended_at", "why", "gitdir", "workdir"):
        field_check(p, w, key, (str, type(None)), where, required=False)
    field_check(p, w, "unsaved", bool, where, required=False)  # a result a build's end could not keep


def _check_worktrees(data: dict) -> list:
    p: list = []
    records(p, data, "worktrees", _check_worktree)
    return p


# ---------------------------------------------------------------- registry


def _spec(name, filename, version, default, check, upgrade=None, **kw) -> FileSpec:
    def up(data: dict) -> dict:
        data = fill(data, default)
        return upgrade(data) if upgrade else data

    return FileSpec(
        name=name, filename=filename, version=version, default=_with_version(default, version), validate=check, upgrade=up, **kw
    )


_NO_COLONY = "; start a colony with `aether colony-init` (or /ant:init in Claude Code)"

FILES: dict[str, FileSpec] = {
    spec.name: spec
    for spec in (
        _spec("colony", "COLONY_STATE.json", 1, COLONY_DEFAULT, check_colony, upgrade_colony, missing_hint=_NO_COLONY),
        _spec("pheromones", "pheromones.json", 1, {"signals": []}, _check_pheromones),
        _spec(
            "plan",
            "PROJECT_PLAN.json",
            1,
            {"goal": None, "generated_at": None, "phases": []},
            _check_plan,
            missing_hint="; make one with /ant:plan (`aether next --plan`)",
        ),
        _spec("errors", "errors.json", 1, {"errors": [], "flagged_patterns": []}, _check_errors),
        _spec("memory", "memory.json", 1, {"phase_learnings": [], "decisions": [], "patterns": []}, _check_memory),
        _spec("events", "events.json", 1, {"events": []}, _check_events),
        _spec("learnings", "learnings.json", 2, {"learnings": []}, _check_global_learnings, _upgrade_global_learnings, scope="global"),
        _spec("projects", "projects.json", 1, {"projects": []}, _check_projects, scope="global"),
        _spec("checkpoints", "checkpoints.json", 1, {"checkpoints": []}, _check_checkpoints),
        _spec(
            "failures",
            "failures.json",
            1,
            {"history": [], "retry_log": [], "friction": [], "aborts": [], "next_friction": 1},
            _check_failures,
            compact=True,
        ),
        _spec("loops", "loops.json", 1, {"loops": []}, _check_loops),
        _spec("handoff", "handoff.json", 1, HANDOFF_DEFAULT, _check_handoff),
        _spec("research", "research.json", 1, {"plans": []}, _check_research),
        _spec("drafts", "drafts.json", 1, {"loops": []}, _check_drafts),
        _spec("phase_records", "phase_records.json", 1, {"records": []}, _check_phase_records, compact=True),
        _spec("spawns", "spawns.json", 1, {"spawns": [], "runs": [], "claim": None}, _check_spawns, compact=True),
        _spec("costs", "costs.json", 1, {"colonies": [], "runs": []}, _check_costs, compact=True),
        _spec("worktrees", "worktrees.json", 1, {"worktrees": []}, _check_worktrees),
    )
}

# The files `validate-state all` checks, in order.
PROJECT_FILES = (
    "colony",
    "pheromones",
    "plan",
    "errors",
    "memory",
    "events",
    "checkpoints",
    "failures",
    "loops",
    "handoff",
    "research",
    "drafts",
    "phase_records",
    "spawns",
    "costs",
    "worktrees",
)


def lookup(name: str) -> FileSpec | None:
    """A spec by short name, file name (`COLONY_STATE.json`) or a path ending in one."""
    if name in FILES:
        return FILES[name]
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    for spec in FILES.values():
        if base in (spec.filename, spec.filename.lower()) or base in spec.aliases:
            return spec
    return None
