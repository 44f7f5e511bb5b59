"""The advisory review after a wave (docs/decisions/review-and-rebuilds.md): whether a reviewer runs (review-needed) and what
its findings mean (review-decide). The reviewer is a watcher ant in advisory mode; it never
blocks the build: a CRITICAL finding rebuilds the wave while it was rebuilt fewer than
MAX_WAVE_REBUILDS times (each rebuild is reviewed again), after that the build continues with
a warning that stays in the spawn tree.
"""

from __future__ import annotations

from aether.core import clock
from aether.core.exceptions import state_error
from aether.rules import contracts, modes, spawn_tree
from aether.rules.review import (
    KEPT_FINDINGS,
    MAX_WAVE_REBUILDS,
    SEVERITIES,
    SEVERITY_GUIDE,
    read_findings,
    render,
    rule,
)
from aether.state import events, store


def _wave_workers(tree: dict, wave: int) -> list:
    return [n for n in tree["nodes"].values() if n["wave"] == wave and n["role"] == "worker"]


def _latest_of(tree: dict, origin: str) -> dict:
    """The newest node of a worker's lineage (the worker itself, or its latest retry/rebuild)."""

    lineage = [
        n for n in tree["nodes"].values() if spawn_tree.origin_of(tree, n) == origin and n["role"] in ("worker",) + spawn_tree.RESPAWN_ROLES
    ]
    return max(lineage, key=lambda n: (n.get("seq", 0), n["role"] != "worker"))


def _reviewer_context(tree: dict, wave: int, round_: int) -> str:
    lines = [
        "--- ADVISORY REVIEWER ---",
        f"You review wave {wave} of {len(tree['waves'])} of phase {tree.get('phase')} (review round {round_}).",
        "Workers of this wave:",
    ]
    for w in _wave_workers(tree, wave):
        last = _latest_of(tree, w["id"])
        changed = last.get("files_created", []) + last.get("files_modified", [])
        lines.append(
            f"  - {w['id']} {w['caste']}: tasks {', '.join(map(str, w['tasks']))} — {last['status']}"
            + (f": {last.get('summary')}" if last.get("summary") else "")
            + (f" (files: {', '.join(changed[:10])})" if changed else "")
        )
    lines += [
        "Mission: read the changed files, check that the code runs and its tests pass, check quality, and list findings with a severity.",
        "You are ADVISORY: your findings are shown to the user and never block the build; only CRITICAL "
        "findings make the wave be rebuilt. Be brief — this runs after every wave.",
        SEVERITY_GUIDE,
    ]
    return "\n".join(lines)


@store.writes("colony", "events")
def _plan_review(files, wave: int) -> dict:
    """Plan the wave's reviewer spawn, or record why the wave gets none."""
    tree = spawn_tree.tree_of(files["colony"])
    spawn_tree.wave_index(tree, wave)
    rounds = tree.setdefault("reviews", {}).setdefault(str(wave), [])
    workers = _wave_workers(tree, wave)
    skip = None
    if not modes.profile(tree.get("mode")).get("reviewer"):
        skip = ("mode_has_no_reviewer", f"{tree.get('mode')} mode has no reviewer")
    elif len(workers) <= 1:
        skip = ("single_worker_wave", "a single-worker wave has no cross-worker interaction to review")
    if skip:
        tree.setdefault("review_skipped", {})[str(wave)] = skip[0]
        events.append(files["events"], "review_skipped", "queen", f"wave {wave}: reviewer skipped ({skip[1]})")
        return {"wave": wave, "needed": False, "skip": skip[0], "reason": skip[1], "text": f"Reviewer skipped ({skip[1]})."}
    round_ = len([r for r in rounds if "action" in r]) + 1
    busy = [
        n["id"] for n in tree["nodes"].values() if n["wave"] == wave and n["role"] != "reviewer" and n["status"] in ("planned", "running")
    ]
    if busy:
        raise state_error(
            "wave_unfinished",
            f"wave {wave} still has {', '.join(busy)} planned or running: review it once they ran and are recorded with spawn-finish",
            unfinished=busy,
        )
    existing = next((n for n in tree["nodes"].values() if n["role"] == "reviewer" and n["wave"] == wave and n.get("round") == round_), None)
    node = existing or spawn_tree.add_node(
        tree,
        "reviewer",
        "watcher",
        [t for w in workers for t in w["tasks"]],
        depth=1,
        parent=None,
        wave=wave,
        round=round_,
        context=_reviewer_context(tree, wave, round_),
    )
    if existing is None:
        events.append(files["events"], "review_planned", "queen", f"wave {wave}: reviewer {node['id']} (round {round_})")
    return {
        "wave": wave,
        "needed": True,
        "round": round_,
        "reason": f"{len(workers)} workers in this wave",
        "reviewer": {"id": node["id"], "caste": "watcher", "status": node["status"], "command": f"aether spawn-start {node['id']}"},
        "text": f"Wave {wave}: advisory review by {node['id']} (round {round_}).",
    }


def needed(wave: int) -> dict:
    """review-needed: does this wave get a reviewer? If so, the reviewer spawn is planned."""

    return _plan_review(wave)


@store.writes("colony", "events")
def _decide_review(files, wave: int, findings: list, summary: str, claimed, counts: dict) -> dict:
    """Close the wave's review round: record the findings and plan the rebuilds the rule asks for."""
    colony = files["colony"]
    tree = spawn_tree.tree_of(colony)
    spawn_tree.wave_index(tree, wave)
    rounds = tree.setdefault("reviews", {}).setdefault(str(wave), [])
    round_ = len([r for r in rounds if "action" in r]) + 1
    waiting = [
        n["id"] for n in tree["nodes"].values() if n["role"] == "rebuild" and n["wave"] == wave and n["status"] in ("planned", "running")
    ]
    if waiting:
        raise state_error(
            "rebuild_unfinished",
            f"wave {wave} is being rebuilt ({', '.join(waiting)} not finished): "
            f"finish the rebuild, then review it again (review-needed {wave})",
        )
    for node in tree["nodes"].values():
        if node["role"] == "reviewer" and node["wave"] == wave and node["status"] == "running":
            tree["seq"] = tree.get("seq", 0) + 1
            node.update(status="completed", finished_at=clock.iso(), seq=tree["seq"], summary=summary)
            spawn_tree.release_caste(colony, tree, node["caste"])
    rebuilds = tree.setdefault("rebuilds", {}).get(str(wave), 0)
    action, reason = rule(counts["CRITICAL"], rebuilds)
    warnings = []
    if claimed is not None and claimed != counts["CRITICAL"]:
        warnings.append(f"the reviewer said critical_count {claimed}, its findings hold {counts['CRITICAL']}")
    result = {
        "wave": wave,
        "round": round_,
        "action": action,
        "reason": reason,
        "critical_count": counts["CRITICAL"],
        "counts": counts,
        "rebuilds": rebuilds,
        "max_rebuilds": MAX_WAVE_REBUILDS,
        "rebuild": [],
        "warning": None,
        "warnings": warnings,
        "findings": findings,
    }
    if action == "rebuild":
        tree["rebuilds"][str(wave)] = rebuilds + 1
        result["rebuilds"] = rebuilds + 1
        block = "\n".join(
            [
                "--- REBUILD ---",
                f"The reviewer found CRITICAL issues after wave {wave} (rebuild {rebuilds + 1} of "
                f"{MAX_WAVE_REBUILDS}). Fix these and keep the rest of your work:",
            ]
            + [
                f"  - {f['description']}"
                + (f" ({f['location']})" if f["location"] else "")
                + (f" → {f['recommendation']}" if f["recommendation"] else "")
                for f in findings
                if f["severity"] == "CRITICAL"
            ]
            + ["--- END REBUILD ---"]
        )
        for worker in _wave_workers(tree, wave):
            if worker["status"] == "skipped":
                continue
            node = spawn_tree.respawn(tree, _latest_of(tree, worker["id"]), "rebuild", block)
            result["rebuild"].append(node["id"])
    elif counts["CRITICAL"]:
        result["warning"] = f"wave {wave}: {counts['CRITICAL']} CRITICAL finding(s) left unresolved after {MAX_WAVE_REBUILDS} rebuilds"
        tree.setdefault("warnings", []).append({"wave": wave, "warning": result["warning"], "timestamp": clock.iso()})
    rounds.append(
        {
            "round": round_,
            "action": action,
            "counts": counts,
            "summary": summary,
            "findings": findings[:KEPT_FINDINGS],
            "rebuild": result["rebuild"],
            "timestamp": clock.iso(),
        }
    )
    events.append(
        files["events"],
        "review_decided",
        "reviewer",
        f"wave {wave} round {round_}: {action} ({counts['CRITICAL']} critical, {counts['HIGH']} high)",
    )
    result["text"] = render(wave, round_, findings, summary, action, reason) + (
        f"\nWARNING: {result['warning']}" if result["warning"] else ""
    )
    return result


def decide(wave: int, text: str) -> dict:
    """review-decide: the reviewer's findings → `rebuild` or `continue`, with the findings block."""

    findings, summary, claimed = read_findings(contracts.extract_json(text, "the review"))
    counts = {s: sum(1 for f in findings if f["severity"] == s) for s in SEVERITIES}

    return _decide_review(wave, findings, summary, claimed, counts)
