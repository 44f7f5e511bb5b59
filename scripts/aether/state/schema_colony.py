"""COLONY_STATE.json's schema: its default, its checks — the spawn tree of a build, its nodes, their
failure reports, merges and approvals — and its upgrade from older shapes (state/schemas.py
registers it with the other files)."""

from __future__ import annotations

from aether.core.castes import CASTES
from aether.core.vocabulary import (
    COLONY_STATES,
    MODES,
    SPAWN_ROLES,
    SPAWN_STATUSES,
    TREE_STATUSES,
)
from aether.state.schema_checks import NUM, field_check, fill, is_a, records, strings

COLONY_DEFAULT: dict = {
    "goal": None,
    "state": "IDLE",
    "current_phase": 0,
    "mode": None,
    "mode_set_at": None,
    "mode_indicators": None,
    "session_id": None,
    "project_id": None,
    "initialized_at": None,
    "workers": {caste: "idle" for caste in CASTES},
    "spawn_outcomes": {caste: {"alpha": 1, "beta": 1, "total_spawns": 0, "successes": 0, "failures": 0} for caste in CASTES},
    "spawn_tree": None,
}


def check_colony(data: dict) -> list:
    p: list = []
    w = "COLONY_STATE"
    field_check(p, data, "goal", (str, type(None)), w)
    field_check(p, data, "state", str, w, choices=COLONY_STATES)
    field_check(p, data, "current_phase", int, w)
    if is_a(data.get("current_phase"), int) and data["current_phase"] < 0:
        p.append(f"{w}.current_phase must be ≥ 0")
    field_check(p, data, "mode", (str, type(None)), w, choices=MODES + (None,))
    field_check(p, data, "mode_set_at", (str, type(None)), w)
    field_check(p, data, "mode_indicators", (dict, type(None)), w)
    field_check(p, data, "session_id", (str, type(None)), w)
    field_check(p, data, "initialized_at", (str, type(None)), w)
    field_check(p, data, "workers", dict, w)
    for caste, status in (data.get("workers") or {}).items():
        if status not in ("idle", "active"):
            p.append(f"{w}.workers.{caste} is {status!r}, expected idle or active")
    field_check(p, data, "spawn_outcomes", dict, w)
    for caste, outcome in (data.get("spawn_outcomes") or {}).items():
        if not isinstance(outcome, dict):
            p.append(f"{w}.spawn_outcomes.{caste} must be an object")
            continue
        for key in ("alpha", "beta", "total_spawns", "successes", "failures"):
            field_check(p, outcome, key, NUM, f"{w}.spawn_outcomes.{caste}", required=False)
    field_check(p, data, "spawn_tree", (dict, type(None)), w)
    if isinstance(data.get("spawn_tree"), dict):
        _check_spawn_tree(p, data["spawn_tree"], f"{w}.spawn_tree")
    return p


# Optional spawn-node fields → the type the code relies on (checked whenever present).
_TEXT, _PATHS, _INT = "a string", "an array of strings", "an integer"
_NODE_OPTIONAL = {
    **dict.fromkeys(("origin", "lineage", "plan_id", "context", "summary", "started_at", "finished_at", "loop"), _TEXT),
    **dict.fromkeys(
        ("writes", "reads", "files_created", "files_modified", "depends_on", "waits_for", "merged_from", "unwitnessed"), _PATHS
    ),
    **dict.fromkeys(("seq", "round", "iteration"), _INT),
    "started_epoch": "a number or null",
    "failure_decided": "a boolean",
    "failure": "a failure report",
    "request": "an object",
    "report": "an object",
    "unverified": "an array",
}
_TREE_INTS = ("max_workers", "workers_per_wave", "seq")
_FAILURE_TEXT = ("task", "error", "root_cause", "suggested_fix", "fix_scope", "category", "caste")


def _int(value) -> bool:
    return type(value) is int


def _strings_problem(p: list, obj: dict, key: str, where: str) -> None:
    if key in obj and not strings(obj[key]):
        p.append(f"{where}.{key} must be an array of strings")


def _mapping(p: list, tree: dict, key: str, w: str, check) -> None:
    """tree[key], when present, is an object whose values pass check(value) -> bool."""
    value = tree.get(key)
    if value is None and key not in tree:
        return
    if type(value) is not dict:
        p.append(f"{w}.{key} must be an object")
        return
    for k, v in value.items():
        if not check(v):
            p.append(f"{w}.{key}.{k} has the wrong type ({type(v).__name__})")
            return


def _check_failure_report(p: list, report, where: str) -> None:
    if type(report) is not dict:
        p.append(f"{where} must be an object")
        return
    for key in _FAILURE_TEXT:
        if type(report.get(key)) is not str:
            field_check(p, report, key, str, where)
    field_check(p, report, "confidence", NUM, where)
    if not strings(report.get("files")):
        p.append(f"{where}.files must be an array of strings")
    field_check(p, report, "undiagnosable", bool, where)
    field_check(p, report, "hypotheses", list, where, required=False)
    field_check(p, report, "maps_to_criterion", (bool, type(None)), where, required=False)
    field_check(p, report, "attempt", (int, type(None)), where, required=False)
    field_check(p, report, "observed", dict, where, required=False)  # the failing call, from the evidence


def _check_node(p: list, node_id: str, node, w: str) -> None:
    where = f"{w}.nodes.{node_id}"
    if type(node) is not dict:
        p.append(f"{where} must be an object")
        return
    # fast path first: the usual node has every required field right
    if not (
        node.get("id") == node_id
        and node.get("caste") in CASTES
        and strings(node.get("tasks"))
        and _int(node.get("depth"))
        and node["depth"] >= 0
        and _int(node.get("wave"))
        and (node.get("parent") is None or type(node["parent"]) is str)
        and "parent" in node
        and strings(node.get("children"))
        and node.get("status") in SPAWN_STATUSES
        and node.get("role") in SPAWN_ROLES
    ):
        if node.get("id") != node_id:
            p.append(f"{where}.id must be {node_id!r} (the node's key), found {node.get('id')!r}")
        field_check(p, node, "caste", str, where, choices=CASTES)
        if not strings(node.get("tasks")):
            p.append(f"{where}.tasks must be an array of task ids (strings)")
        field_check(p, node, "depth", int, where)
        if _int(node.get("depth")) and node["depth"] < 0:
            p.append(f"{where}.depth must be ≥ 0")
        field_check(p, node, "parent", (str, type(None)), where)
        if not strings(node.get("children")):
            p.append(f"{where}.children must be an array of node ids")
        field_check(p, node, "status", str, where, choices=SPAWN_STATUSES)
        field_check(p, node, "wave", int, where)
        field_check(p, node, "role", str, where, choices=SPAWN_ROLES)
    if len(node) <= 9:  # the nine fields above: nothing optional to check
        return
    for key, value in node.items():
        kind = _NODE_OPTIONAL.get(key)
        if kind is None:
            continue
        t = type(value)
        if kind is _TEXT:
            ok = t is str
        elif kind is _PATHS:
            ok = strings(value)
        elif kind is _INT:
            ok = t is int
        elif key == "started_epoch":
            ok = value is None or is_a(value, NUM)
        elif key == "failure_decided":
            ok = t is bool
        elif key == "failure":
            _check_failure_report(p, value, f"{where}.failure")
            continue
        elif key == "request":
            ok = t is dict
            if ok:
                field_check(p, value, "reason", str, f"{where}.request", required=False)
                field_check(p, value, "context", str, f"{where}.request", required=False)
                field_check(p, value, "blocking", bool, f"{where}.request", required=False)
        elif key == "unverified":
            ok = t is list
        else:
            ok = t is dict
        if not ok:
            p.append(f"{where}.{key} must be {kind}")


def _check_spawn_request(p: list, r: dict, where: str) -> None:
    field_check(p, r, "parent", str, where)
    field_check(p, r, "status", str, where, choices=("queued", "ignored", "none"))
    if r.get("status") == "none":
        return
    for key in ("caste", "reason"):
        field_check(p, r, key, str, where)
    field_check(p, r, "context", str, where, required=False)
    field_check(p, r, "blocking", bool, where)
    if r.get("status") == "queued":
        field_check(p, r, "node", str, where)
        field_check(p, r, "rerun", (str, type(None)), where, required=False)
    elif r.get("status") == "ignored":
        field_check(p, r, "reason_ignored", str, where)


def _check_merge(p: list, m: dict, where: str) -> None:
    field_check(p, m, "into", str, where)
    for key in ("merged", "files", "tasks"):
        if not strings(m.get(key)):
            p.append(f"{where}.{key} must be an array of strings")
    field_check(p, m, "caste", str, where, required=False)


def _check_approval(p: list, a, where: str) -> None:
    if type(a) is not dict:
        p.append(f"{where} must be an object")
        return
    field_check(p, a, "required", bool, where, required=False)
    field_check(p, a, "reason", str, where, required=False)
    field_check(p, a, "revision", int, where, required=False)
    field_check(p, a, "max_revisions", int, where, required=False)
    field_check(p, a, "approved_by", (str, type(None)), where, required=False)
    field_check(p, a, "approved_at", str, where, required=False)


def _review_rounds(value) -> bool:
    return type(value) is list and all(type(r) is dict and _int(r.get("round", 0)) for r in value)


def _check_spawn_tree(p: list, tree: dict, w: str) -> None:
    """The spawn tree written by plan-waves and the spawn commands (see docs/contracts.md): every
    field the code reads has its type checked, so a damaged tree is state_corrupt, never a crash.
    Validation runs on every read of COLONY_STATE: the usual node takes the fast path."""
    field_check(p, tree, "id", str, w, required=False)
    field_check(p, tree, "phase", (int, type(None)), w)
    field_check(p, tree, "status", str, w, choices=TREE_STATUSES)
    field_check(p, tree, "mode", (str, type(None)), w, required=False)
    field_check(p, tree, "max_depth", int, w)
    for key in _TREE_INTS:
        if key in tree and not (_int(tree[key]) and tree[key] >= 0):
            p.append(f"{w}.{key} must be a whole number ≥ 0")
    nodes = tree.get("nodes")
    if type(nodes) is not dict:
        field_check(p, tree, "nodes", dict, w)
        nodes = {}
    for node_id, node in nodes.items():
        _check_node(p, node_id, node, w)
    waves = tree.get("waves")
    if type(waves) is not list:
        field_check(p, tree, "waves", list, w)
    else:
        for i, wave in enumerate(waves):
            if not strings(wave):
                p.append(f"{w}.waves[{i}] must be an array of node ids")
            elif any(nid not in nodes for nid in wave):
                p.append(f"{w}.waves[{i}] names a node the tree does not have")
    records(p, tree, "spawn_requests", _check_spawn_request, w + ".")
    if "merges" in tree:
        records(p, tree, "merges", _check_merge, w + ".")
    if "approval" in tree:
        _check_approval(p, tree["approval"], f"{w}.approval")
    _mapping(p, tree, "counters", w, _int)
    _mapping(p, tree, "rebuilds", w, _int)
    _mapping(p, tree, "reviews", w, _review_rounds)
    _mapping(p, tree, "conflicts", w, lambda v: type(v) is list)
    _mapping(p, tree, "failed_tasks", w, lambda v: type(v) is str)
    _mapping(p, tree, "refinements", w, lambda v: type(v) is dict)
    for key in ("shared_files",):
        _strings_problem(p, tree, key, w)
    if "aborted_waves" in tree and not (type(tree["aborted_waves"]) is list and all(_int(x) for x in tree["aborted_waves"])):
        p.append(f"{w}.aborted_waves must be an array of wave numbers")
    if "warnings" in tree and type(tree["warnings"]) is not list:
        p.append(f"{w}.warnings must be an array")
    field_check(p, tree, "created_at", str, w, required=False)


def upgrade_colony(data: dict) -> dict:
    data = fill(data, COLONY_DEFAULT)
    for caste in CASTES:
        data["workers"].setdefault(caste, "idle")
        data["spawn_outcomes"].setdefault(caste, dict(COLONY_DEFAULT["spawn_outcomes"][caste]))
    if data.get("spawn_tree") == {}:
        data["spawn_tree"] = None
    tree = data.get("spawn_tree")
    if isinstance(tree, dict) and not isinstance(tree.get("nodes"), dict):
        data["legacy_spawn_tree"] = tree  # an older tree shape: kept aside, never executed
        data["spawn_tree"] = None
    return data
