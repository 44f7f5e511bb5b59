"""The spawn tree's rules: node ids and roles, limits on depth and running workers, re-spawns
and sub-spawns, and the look-ups every build command shares (pure: the tree is passed in).

The Queen is the only spawner. Every ant she runs is a node; a node is `planned`, then `running`
(spawn-start), then `completed`, `failed` or `skipped`. Re-spawns (retry, debugger, rerun,
rebuild) sit under the worker they repeat, at its depth; a sub-spawn sits one level below its
parent. See docs/decisions/waves-and-merging.md.
"""

from __future__ import annotations

from aether.core.exceptions import input_error, state_error
from aether.core.vocabulary import SPAWN_FINISHED
from aether.rules import modes

MAX_SUB_SPAWNS_PER_WORKER = 2  # SPAWN REQUESTs honoured per worker (its retries included)


MAX_SUB_SPAWNS_PER_WAVE = 2  # SPAWN REQUESTs honoured per wave


RESPAWN_ROLES = ("retry", "debugger", "rerun", "rebuild")  # the same worker again


ROLE_PREFIX = {
    "worker": "w",
    "retry": "r",
    "debugger": "d",
    "sub_spawn": "s",
    "rerun": "x",
    "rebuild": "b",
    "reviewer": "v",
    "refine": "f",
    "verify": "y",
}


def limits(colony: dict) -> dict:
    """Spawn limits: the tree's (fixed when it was planned), else the colony mode's."""
    tree = colony.get("spawn_tree") or {}
    prof = modes.profile(colony.get("mode"))
    return {
        "max_depth": tree.get("max_depth", prof["spawn_limits"]["max_depth"]),
        "max_workers": tree.get("max_workers", prof["spawn_limits"]["max_workers"]),
        "workers_per_wave": tree.get("workers_per_wave", prof["workers_per_wave"]),
    }


def active_workers(tree: dict | None) -> int:
    if not tree:
        return 0
    return sum(1 for node in tree.get("nodes", {}).values() if node.get("status") == "running")


def tree_of(colony: dict) -> dict:
    tree = colony.get("spawn_tree")
    if not tree or not isinstance(tree.get("nodes"), dict):
        raise state_error("no_spawn_tree", "no build is planned: build the phase with /ant:build N (`aether next --build N`)")
    return tree


def node_of(tree: dict, node_id: str) -> dict:
    node = tree["nodes"].get(node_id)
    if node is None:
        known = ", ".join(list(tree["nodes"])[:20]) or "none"
        raise input_error("unknown_worker", f"no spawn {node_id!r} in the spawn tree (known: {known})")
    return node


def wave_index(tree: dict, wave) -> int:
    """Validate a wave number (1-based) against the tree."""
    count = len(tree.get("waves", []))
    if isinstance(wave, bool) or not isinstance(wave, int) or not 1 <= wave <= count:
        raise input_error("unknown_wave", f"wave {wave!r} does not exist; this build has waves 1–{count}")
    return wave


def origin_of(tree: dict, node: dict) -> str:
    """The planned worker a node repeats (itself for workers, sub-spawns and reviewers)."""
    return node.get("origin") or node["id"]


def add_node(tree: dict, role: str, caste: str, tasks: list, *, depth: int, parent: str | None, wave: int, **extra) -> dict:
    """Create a planned node (ids: w1, r1, d1, s1, x1, b1, v1 … per role)."""
    prefix = ROLE_PREFIX[role]
    counters = tree.setdefault("counters", {})
    n = counters.get(prefix, 0)
    while True:
        n += 1
        node_id = f"{prefix}{n}"
        if node_id not in tree["nodes"]:
            break
    counters[prefix] = n
    node = {
        "id": node_id,
        "caste": caste,
        "tasks": list(tasks),
        "depth": depth,
        "parent": parent,
        "children": [],
        "status": "planned",
        "wave": wave,
        "role": role,
    }
    node.update(extra)
    tree["nodes"][node_id] = node
    if parent is not None and parent in tree["nodes"]:
        tree["nodes"][parent]["children"].append(node_id)
    return node


def respawn(tree: dict, failed: dict, role: str, context: str, caste: str | None = None, **extra) -> dict:
    """Plan the same worker again (retry, debugger, rebuild, rerun) under the node it repeats."""
    origin = origin_of(tree, failed)
    base = tree["nodes"].get(origin, failed)
    return add_node(
        tree,
        role,
        caste or failed["caste"],
        failed["tasks"],
        depth=failed["depth"],
        parent=failed["id"],
        wave=failed["wave"],
        origin=origin,
        writes=list(base.get("writes", [])),
        reads=list(base.get("reads", [])),
        context=context,
        **extra,
    )


def release_caste(colony: dict, tree: dict, caste: str) -> None:
    """COLONY_STATE `workers`: a caste is idle again once none of its spawns runs."""
    if not any(n["status"] == "running" and n["caste"] == caste for n in tree["nodes"].values()):
        colony["workers"][caste] = "idle"


def waves_done(tree: dict) -> tuple:
    """(waves whose every spawn has finished, waves) of a spawn tree."""
    waves = tree.get("waves") or []
    nodes = tree.get("nodes") or {}
    done = sum(1 for ids in waves if ids and all(nodes.get(i, {}).get("status") in SPAWN_FINISHED for i in ids))
    return done, len(waves)
