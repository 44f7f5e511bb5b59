"""Spawns by reference, the writing side: run records, dispatched spawns and their marks, and
the spawn action the Queen gets (short prompts naming brief files). See state/spawns.py."""

from __future__ import annotations

import json

from aether.core import clock
from aether.rules import models
from aether.state import costs, settings, store
from aether.state import spawns as ledger

WRITERS = ("ant:builder",)  # castes that write files get a report file for their narrative


@store.writes("spawns")
def save_run(data, run: dict) -> None:
    """Keep the run record as the driver left it."""
    found = ledger.run_of(data, run["scope"])
    if found is None:
        data["runs"].append(run)
    else:
        found.clear()
        found.update(run)


@store.writes("spawns")
def new_run(data, command: str, **fields) -> dict:
    return dict(ledger.new_run(data, command, **fields))


@store.writes("spawns")
def add_spawn(data, scope: str, local: str, kind: str, subagent_type: str, description: str, action: str,
              **extra) -> dict:
    """A dispatched spawn's record (a spawn handed out again joins the new action, and the run
    that hands it out)."""
    record = ledger.add(data, scope, local, kind, subagent_type, description, action)
    record.update(action=action, **extra)
    return dict(record)


@store.writes("spawns", "costs")
def mark_recorded(files, ref: str, line: str, via: str, usage: dict | None) -> list:
    """The spawn's answer is recorded, and what it spent added to costs.json in the same change;
    returns the spawns of its action still unrecorded."""
    data = files["spawns"]
    rec = ledger.find(data, ref)
    rec.update(status="recorded", recorded_at=clock.iso(), outcome=line, via=via, usage=usage or rec.get("usage"))
    usage = rec["usage"] or {}
    costs.add(files["costs"], store.read("colony").get("session_id"), rec.get("autopilot"),
              rec.get("cost_key") or "unknown", rec["subagent_type"].split(":", 1)[-1], usage,
              usage.get("model") or rec.get("model"))
    return [s["local"] for s in ledger.of_scope(data, rec["scope"])
            if s.get("action") == rec["action"] and s["status"] != "recorded"]


def cost_key(run: dict) -> str:
    """The costs.json phase a run's spawns count for: its phase, else its command (plan, colonize)."""
    phase = run.get("phase")
    return str(phase) if isinstance(phase, int) and not isinstance(phase, bool) else run["command"]


def dispatch(run: dict, items: list, phase_key: str | None = None, table: dict | None = None) -> dict:
    """Spawn action: brief files written, one record per spawn; items: (local, kind, type, text|None).
    Each spawn gets its caste's model (settings.model_table) and counts its cost for `phase_key`
    (default: the run's phase) and for the autopilot run driving it."""
    table = table or settings.model_table(store.read("colony").get("mode"))
    autopilot = run["scope"] if run["command"] == "run" else run.get("parent")
    run["actions"] = run.get("actions", 0) + 1
    action = f"a{run['actions']}"
    save_run(run)
    out = []
    for local, kind, subagent_type, text in items:
        ref = f"{run['scope']}/{local}"
        if text is not None:
            report = ledger.report_rel(ref)
            tail = f"Your report file (narrative, evidence, logs): {report}\n" if subagent_type in WRITERS else ""
            ledger.write_brief(run["scope"], local, f"[aether spawn {ledger.brief_rel(run['scope'], local)}]\n{text}\n{tail}")
        description = f"{local} {subagent_type.split(':', 1)[-1]}"
        model = models.for_agent(subagent_type, None, table)
        add_spawn(run["scope"], local, kind, subagent_type, description, action, model=model, autopilot=autopilot,
                  cost_key=phase_key or cost_key(run))
        call = {"id": local, "subagent_type": subagent_type, "description": description,
                "prompt": ledger.prompt_for(ref, local)}
        if model:
            call["model"] = model
        out.append(call)
    names = ", ".join(s["description"] for s in out)
    return {"action": "spawn", "spawns": out,
            "text": f"Spawn {len(out)} ant(s) in ONE message: {names}.",
            "command": "aether record <id> - <<'EOF'"}  # only when no hook recorded the answers


def action_line(action: dict) -> str:
    """The next action in one line for the Queen (the hook's context, `aether next --text`)."""
    if action["action"] == "spawn":
        calls = [{k: s[k] for k in ("subagent_type", "description", "prompt", "model") if k in s}
                 for s in action["spawns"]]
        return ("Aether next: spawn in ONE message, each with run_in_background false: "
                + json.dumps(calls, ensure_ascii=False))
    if action["action"] == "lessons":
        return f"Aether next: lessons — {action['text']} Record them with: {action['command']}"
    return f"Aether next: {action['action']} — show the user this text:\n{action['text']}"
