"""Research fan-out before planning (docs/decisions/refinement-loops.md): research requirements become scout tasks,
all spawned in ONE message; each scout writes a brief under `.aether/research/` and returns its
path; the planner gets the paths, never the contents.

The requirements are read by colony/requirements.py (an explicit list, or derived from the goal or
the colonizer's findings).
"""

from __future__ import annotations

import os
import re

from aether.colony import requirements
from aether.core import clock, containment, inputs, paths
from aether.core.exceptions import input_error, state_error
from aether.state import events, pheromones, store

RESEARCH_DIR = "research"  # under .aether/
MAX_TASKS = 8  # scouts in one message
MAX_PLANS = 10  # research.json keeps the newest plans
MAX_SLUG = 48
MAX_INPUT = 200_000  # characters of the list or findings
BRIEF_WORDS = 1500
SOURCES = ("list", "goal", "colonize")


# ---------------------------------------------------------------- slugs and briefs


def slug(text: str, taken: set) -> str:
    """A safe, unique file name stem: ASCII letters and digits joined by hyphens, at most
    MAX_SLUG characters (cut at a word), `-2`, `-3` … when taken."""
    import unicodedata  # noqa: PLC0415 — start-up: unicodedata only where text is normalised

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    base = ""
    for word in words:
        candidate = f"{base}-{word}" if base else word
        if len(candidate) > MAX_SLUG:
            break
        base = candidate
    base = base or (words[0][:MAX_SLUG] if words else "research")
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base[: MAX_SLUG - len(str(n)) - 1]}-{n}"
    taken.add(name)
    return name


def research_dir() -> str:
    return os.path.join(paths.aether_dir(), RESEARCH_DIR)


def _rel(path: str) -> str:
    return os.path.relpath(path, paths.project_root()).replace(os.sep, "/")


def _brief(task: dict, count: int, goal: str | None, signals: str) -> str:
    lines = [
        "--- RESEARCH TASK ---",
        f"You are scout {task['id']} of {count}, researching before the colony plans" + (f" (goal: {goal})" if goal else "") + ".",
        f"Research: {task['requirement']}",
    ]
    if task["details"]:
        lines.append("Details:")
        lines += [f"  - {d}" for d in task["details"]]
    lines += [
        f"Write your findings as a markdown brief to: {task['brief_path']}",
        "  (create the folder if needed; replace the file if it exists; write nothing else and change no project file)",
        f"The brief (at most ~{BRIEF_WORDS} words): key findings and recommended practices, pitfalls, versions "
        "that matter, and sources — what a planner needs to decide.",
        signals,
        "Answer with a one-line summary, and the path on the last line exactly like this:",
        f"BRIEF: {task['brief_path']}",
        "--- END RESEARCH TASK ---",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- research-plan


@store.writes("research", "events")
def _store_plan(files, session, source, goal, tasks):
    """Add a research plan of TASKS (newest MAX_PLANS kept) and record the event."""
    data = files["research"]
    entry = {
        "id": clock.new_id("research", {p.get("id") for p in data["plans"]}),
        "session_id": session,
        "source": source,
        "goal": goal,
        "created_at": clock.iso(),
        "tasks": tasks,
    }
    data["plans"].append(entry)
    del data["plans"][:-MAX_PLANS]
    events.append(
        files["events"],
        "research_planned",
        "queen",
        f"{len(tasks)} research task(s) from the {source}: " + "; ".join(t["slug"] for t in tasks)[:500],
    )
    return entry


def plan(text: str | None, source: str | None) -> dict:
    """research-plan: requirements (a list, or derived from the goal / the colonizer's findings)
    become scout tasks with brief paths; stored in research.json and answered with each scout's
    rendered task."""

    colony = store.read("colony", missing_ok=False)
    goal = colony.get("goal")
    source = source or "list"
    if source not in SOURCES:
        raise input_error("invalid_argument", f"--from is one of {', '.join(SOURCES)}")
    if source == "goal":
        if text is not None and text.strip():
            raise input_error("usage_error", "--from goal reads the colony's goal; give no file")
        text = goal or ""
    elif text is None:
        raise input_error(
            "usage_error",
            "give the research list (a file or `-`), or --from goal"
            if source == "list"
            else "give the colonizer's findings (a file or `-`) with --from colonize",
        )
    inputs.check_size(text, MAX_INPUT, "the input")
    found = requirements.parse_list(text) if source == "list" else requirements.derive(text)
    warnings = []
    if not found:
        hint = (
            "write one requirement per line as `- …`, `1. …` or a `### …` heading, or derive them with `--from goal`"
            if source == "list"
            else "no clause names a technology or concern; give /ant:plan a list of what to research instead"
        )
        raise input_error("no_research_items", f"no research requirement found: {hint}")
    if len(found) > MAX_TASKS:
        if source == "list":
            raise input_error(
                "too_many_items",
                f"the list has {len(found)} requirements; at most {MAX_TASKS} scouts run in one message — merge or drop some",
            )
        warnings.append(f"{len(found)} requirements derived; the first {MAX_TASKS} become scout tasks")
        found = found[:MAX_TASKS]

    folder = containment.check_read(research_dir())  # briefs go inside the project only
    taken: set = set()
    tasks = []
    for n, item in enumerate(found, start=1):
        name = slug(item["requirement"], taken)
        tasks.append(
            {
                "id": f"r{n}",
                "requirement": item["requirement"],
                "details": item["details"],
                "slug": name,
                "brief_path": _rel(os.path.join(folder, f"{name}.md")),
                "status": "pending",
                "path": None,
            }
        )
    signals = pheromones.render("scout")["text"]

    entry = _store_plan(colony.get("session_id"), source, goal, tasks)
    out_tasks = [
        {
            **{k: t[k] for k in ("id", "requirement", "details", "slug", "brief_path")},
            "caste": "scout",
            "subagent_type": "ant:scout",
            "text": _brief(t, len(tasks), goal, signals),
        }
        for t in entry["tasks"]
    ]
    lines = [f"Research: {len(tasks)} scout(s) — spawn them all in ONE message (subagent_type ant:scout):"]
    lines += [f"  {t['id']} {t['requirement']} → {t['brief_path']}" for t in out_tasks]
    lines += [f"  warning: {w}" for w in warnings]
    lines.append("Then pass their answers to `aether research-collect -`.")  # by hand
    return {
        "id": entry["id"],
        "source": source,
        "count": len(out_tasks),
        "tasks": out_tasks,
        "warnings": warnings,
        "research_dir": _rel(folder),
        "next": {"command": "aether research-collect -", "reason": "record the brief paths the scouts return"},
        "text": "\n".join(lines),
    }


# ---------------------------------------------------------------- research-collect


def _current(data: dict, session: str | None) -> dict:
    found = [p for p in data["plans"] if isinstance(p, dict) and p.get("session_id") == session]
    if not found:
        raise state_error("no_research_plan", "no research is planned for this colony; /ant:plan plans it")
    return found[-1]


_PATH_STOPS = "`'\"<>()[]*"  # besides whitespace, these end a path in free text


def _md_paths(text: str) -> list:
    """Every `….md` path in free text: within each run of characters that are neither
    whitespace nor one of _PATH_STOPS, the run up to its last `.md` that ends a word.
    (Linear: a pattern doing the same backtracks quadratically over a long run.)"""

    found = []
    for m in re.finditer(r"[^\s`'\"<>()\[\]*]++", text):
        run = m.group(0)
        end = len(run)
        while True:
            at = run.rfind(".md", 1, end)  # at least one character before `.md`
            if at < 0:
                break
            nxt = run[at + 3 : at + 4]
            if not nxt or not (nxt.isalnum() or nxt == "_"):
                path = run[: at + 3].rstrip(".,;:")
                if path not in found:
                    found.append(path)
                break
            end = at + 2  # a later `.md` continues a word (`.mdx`): look further left
    return found


def _claims(text: str | None) -> list:
    """The brief paths in the scouts' answers: a JSON list or {task: path} object, or any text
    (`BRIEF: <path>` lines and any `….md` path)."""
    if text is None or not text.strip():
        return []
    inputs.check_size(text, MAX_INPUT, "the scouts' answers")
    try:
        doc = inputs.loads(text)
    except inputs.JSONRefused as exc:
        raise input_error("invalid_json", f"the scouts' answers are not valid JSON: {exc}") from None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("paths"), list):
        doc = doc["paths"]
    if isinstance(doc, list):
        return [p.strip() for p in doc if isinstance(p, str) and p.strip()]
    if isinstance(doc, dict):
        return [v.strip() for v in doc.values() if isinstance(v, str) and v.strip()]
    if doc is not None:
        raise input_error("invalid_json", "the paths must be a list of strings, an object {task: path}, or text")
    return _md_paths(text)


def _check_brief(path: str) -> tuple:
    """(project-relative path, problem or None) of a returned brief path."""

    if inputs.path_problem(path):  # a NUL character: names no file
        return path, "invalid_path"

    root = os.path.realpath(paths.project_root())
    folder = os.path.realpath(research_dir())
    full = os.path.realpath(path if os.path.isabs(path) else os.path.join(root, path))
    rel = os.path.relpath(full, root).replace(os.sep, "/")
    if not full.startswith(folder + os.sep) or not containment.inside(folder, root):
        return rel, "outside_research_dir"  # the research folder itself may be a link leading out
    if not os.path.exists(full):
        return rel, "missing"
    if not os.path.isfile(full):
        return rel, "not_a_file"
    try:
        head = containment.read_bytes(full, 65536)
    except OSError:
        return rel, "unreadable"
    if not head.strip():
        return rel, "empty"
    return rel, None


@store.writes("research", "events")
def _record_briefs(files, session, plan_id, verdicts, extras):
    """Mark each task of plan PLAN_ID collected or invalid by VERDICTS; refused if replanned since."""
    current = _current(files["research"], session)
    if current["id"] != plan_id:
        raise state_error("research_replanned", "the research was planned again meanwhile; collect its briefs")
    for task in current["tasks"]:
        rel, problem = verdicts[task["id"]]
        task["status"] = "collected" if problem is None else "invalid"
        task["path"] = rel if problem is None else None
        task["problem"] = problem
    current["collected_at"] = clock.iso()
    current["extra"] = extras
    got = sum(1 for t in current["tasks"] if t["status"] == "collected")
    events.append(files["events"], "research_collected", "queen", f"{got}/{len(current['tasks'])} research brief(s)")
    return current


def collect(text: str | None) -> dict:
    """research-collect: record the brief paths scouts returned (or, without input, look for
    each task's brief where it was asked to be), check each lies inside .aether/research/ and is
    non-empty, and answer the paths for the planner."""
    colony = store.read("colony", missing_ok=False)
    claims = _claims(text)
    seen = _current(store.read("research"), colony.get("session_id"))
    by_path = {t["brief_path"]: t for t in seen["tasks"]}
    by_name = {os.path.basename(t["brief_path"]): t for t in seen["tasks"]}
    verdicts: dict = {}
    rejected, extras = [], []
    for claim in claims:
        rel, problem = _check_brief(claim)
        task = by_path.get(rel) or by_name.get(os.path.basename(rel))
        if problem:
            rejected.append({"path": claim, "problem": problem, "task": task["id"] if task else None})
            continue
        if task is None:
            if rel not in extras:
                extras.append(rel)
        else:
            verdicts[task["id"]] = (rel, None)
    for task in seen["tasks"]:
        if task["id"] not in verdicts:
            rel, problem = _check_brief(task["brief_path"])  # the scout may have written it without saying so
            verdicts[task["id"]] = (rel, problem)

    entry = _record_briefs(colony.get("session_id"), seen["id"], verdicts, extras)
    collected = [
        {"task": t["id"], "path": t["path"], "requirement": t["requirement"]} for t in entry["tasks"] if t["status"] == "collected"
    ]
    missing = [
        {"task": t["id"], "requirement": t["requirement"], "brief_path": t["brief_path"], "problem": t["problem"]}
        for t in entry["tasks"]
        if t["status"] != "collected"
    ]
    found_paths = [c["path"] for c in collected] + extras
    lines = ["RESEARCH BRIEFS (read these files; their contents are not pasted here)"]
    lines += [f"  - {c['path']} — {c['requirement']}" for c in collected]
    lines += [f"  - {p} — (returned by a scout)" for p in extras]
    if not found_paths:
        lines.append("  (none)")
    if rejected:
        lines.append("Rejected: " + "; ".join(f"{r['path']} ({r['problem']})" for r in rejected))
    if missing:
        lines.append("Missing: " + "; ".join(f"{m['task']} ({m['requirement'][:60]}): {m['problem']}" for m in missing))
    return {
        "plan_id": entry["id"],
        "paths": found_paths,
        "collected": collected,
        "missing": missing,
        "rejected": rejected,
        "complete": not missing,
        "text": "\n".join(lines),
    }
