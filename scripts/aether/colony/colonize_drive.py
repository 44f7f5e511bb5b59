"""The colonize protocol, driven: `aether next --colonize` and the colonizers' answers.

complexity-detect --apply sets the mode and plans the colonizers; they map the code in one
message; each answer (its ```json map) is kept, and the helper records every lens's summary as
a `codebase` decision and one `colonized` event — the Queen copies none of it. The done text
shows the map and, when the colony has no steering signal yet, the colonizers' suggested
signals as ready-to-run commands.
"""

from __future__ import annotations

from aether.colony import complexity, dispatch
from aether.core import paths
from aether.core.exceptions import AetherError, state_error
from aether.core.text import one_line
from aether.rules import contracts
from aether.rules import drive as drive_rules
from aether.state import events, memory, store
from aether.state import spawns as ledger

MAX_STEPS = 20
MAX_SHOWN_FINDINGS = 5  # per lens in the done text
SIGNAL_COMMANDS = {"FOCUS": "/ant:focus", "REDIRECT": "/ant:redirect", "FEEDBACK": "/ant:feedback"}


def colonize_run() -> dict:
    run = ledger.current_run(store.read("spawns"), "colonize")
    if run is None or run.get("done"):
        return dispatch.new_run("colonize", detected=None, maps={}, summarized=False)
    return run


def _view(run: dict) -> dict:
    spawned = {s["local"]: s["status"] for s in ledger.of_scope(store.read("spawns"), run["scope"])}
    colonizers = {c["local"]: spawned.get(c["local"], "planned") for c in (run.get("detected") or {}).get("colonizers", [])}
    return {"detected": bool(run.get("detected")), "colonizers": colonizers, "summarized": run.get("summarized")}


def _detect(run: dict) -> None:
    root = complexity.check_root(paths.project_root())
    out = complexity.apply(complexity.scan(root), None)
    run["detected"] = {
        "mode": out["mode"],
        "reasons": out["reasons"],
        "suggest_signals": out["suggest_signals"],
        "colonizers": [
            {"local": f"c{n}", "lens": c["lens"], "subagent_type": c["subagent_type"], "text": c["text"]}
            for n, c in enumerate(out["colonizers"], start=1)
        ],
    }


@store.writes("memory", "events")
def _record_maps(files, maps: dict, mode: str) -> None:
    """One `codebase` decision per lens, and the `colonized` event."""
    for lens, found in maps.items():
        memory.append_decision(files["memory"], f"{lens}: {found['summary']}", type="codebase")
    events.append(files["events"], "colonized", "queen", f"Mapped {', '.join(maps)} in {mode} mode")


def _in_order(run: dict) -> list:
    """The maps in the colonizers' order (c1, c2, …), whichever answered first."""
    return [run["maps"][c["local"]] for c in run["detected"]["colonizers"] if c["local"] in run["maps"]]


def _summarize(run: dict) -> None:
    maps = {m["lens"]: m for m in _in_order(run)}
    _record_maps(maps, run["detected"]["mode"])
    run["summarized"] = True


def apply(run: dict, record: dict, text: str) -> str:
    """Keep a colonizer's map (an unreadable one is kept as such, with its first line)."""
    lens = next(c["lens"] for c in run["detected"]["colonizers"] if c["local"] == record["local"])
    try:
        doc = contracts.extract_json(text, f"the {lens} map")
        doc = doc if isinstance(doc, dict) else {}
    except AetherError:
        doc = {"summary": f"(no map block) {one_line(text, 200)}"}
    found = {
        "lens": lens,
        "summary": one_line(str(doc.get("summary") or "(no summary)"), 400),
        "findings": [f for f in doc.get("findings") or [] if isinstance(f, dict)][:10],
        "signals": [
            s
            for s in doc.get("suggested_signals") or []
            if isinstance(s, dict) and s.get("type") in SIGNAL_COMMANDS and isinstance(s.get("content"), str)
        ][:5],
    }
    run["maps"][record["local"]] = found
    dispatch.save_run(run)
    return f"{record['local']} colonizer ({lens}): map kept"


def _done(run: dict) -> dict:
    detected = run["detected"]
    lines = [f"Mode: {detected['mode']} — " + "; ".join(detected["reasons"])]
    for found in _in_order(run):
        lines.append(f"{found['lens']}: {found['summary']}")
        lines += [
            f"  - {one_line(str(f.get('area', '')), 80)}: {one_line(str(f.get('note', '')), 160)}"
            for f in found["findings"][:MAX_SHOWN_FINDINGS]
        ]
    suggested = [s for found in _in_order(run) for s in found["signals"]]
    if detected["suggest_signals"] and suggested:
        lines.append("Steer the plan first (pick what fits), then /ant:plan:")
        lines += [f'  {SIGNAL_COMMANDS[s["type"]]} "{one_line(s["content"], 160)}"' for s in suggested]
    else:
        lines.append("Next: /ant:plan")
    run["done"] = True
    dispatch.save_run(run)
    return {"action": "done", "text": "\n".join(lines), "command": "/ant:plan"}


def advance(run: dict) -> dict:
    for _ in range(MAX_STEPS):
        run = ledger.run_of(store.read("spawns"), run["scope"]) or run
        step = drive_rules.next_colonize_step(_view(run))
        if step["do"] == "detect":
            try:
                _detect(run)
            except AetherError:  # refused before it began (a build is running …): no run left to capture `next`
                run["done"] = True
                dispatch.save_run(run)
                raise
            dispatch.save_run(run)
        elif step["do"] == "summarize":
            _summarize(run)
            dispatch.save_run(run)
        elif step["do"] == "spawn_colonizers":
            pending = _view(run)["colonizers"]
            items = [
                (c["local"], "colonizer", c["subagent_type"], c["text"])
                for c in run["detected"]["colonizers"]
                if pending.get(c["local"]) != "recorded"
            ]
            return {**dispatch.dispatch(run, items), "run": run["scope"]}
        else:
            return {**_done(run), "run": run["scope"]}
    raise state_error("drive_loop", f"colonize made no progress in {MAX_STEPS} steps; see `aether status`")
