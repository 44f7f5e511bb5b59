"""Global learnings (~/.aether/learnings.json) and the project index (~/.aether/projects.json).

A learning is promoted once it has been seen in PROMOTE_AT distinct projects; promoted
learnings are injected into new colonies as FEEDBACK signals. The store holds at most CAP
entries: a new one at the cap pushes out the non-promoted entry seen least recently.

Two learnings are the same when their normalised texts are equal (see `normalize`).
"""

from __future__ import annotations

from aether.core import clock, inputs, paths
from aether.core.exceptions import AetherError, input_error, state_error
from aether.rules import pheromones
from aether.state import store

CAP = 100  # entries in ~/.aether/learnings.json
PROMOTE_AT = 3  # distinct projects that make a learning promoted
CATEGORIES = ("performance", "security", "architecture", "convention", "tooling")
MAX_CONTENT_LENGTH = 1000  # a learning is a sentence or two; it becomes a signal's content
MAX_TAGS = 10
MAX_TAG_LENGTH = 40
MAX_SOURCE_LENGTH = 200  # a source project's id
MAX_SOURCE_PROJECTS = 50  # project ids kept per learning (the newest); occurrence_count keeps counting
MAX_PROJECTS = 200  # entries in ~/.aether/projects.json (the least recently active go first)

INIT_SIGNAL_LIMIT = 5  # promoted learnings colony-init turns into FEEDBACK signals
INIT_SIGNAL_STRENGTH = 0.3
INIT_SIGNAL_SOURCE = "auto:global"
INIT_SIGNAL_PREFIX = "Global learning: "
INJECT_LIMIT = 10  # learnings learning-inject returns

_TRAILING = ".,;:!?…。 \t\r\n\"'`)]}»”’"
_LEADING = "\"'`([{«“‘ \t\r\n"


# ---------------------------------------------------------------- input checks


def normalize(text: str) -> str:
    """The matching key of a learning: Unicode NFKC, case-folded, whitespace runs collapsed
    to one space, surrounding quotes/brackets and trailing punctuation dropped.

    Exact equality of keys, not substring containment: with substrings a short learning
    ("use 10 rounds") would absorb every longer one that happens to contain it, unrelated
    learnings would be counted as one and promoted without ever recurring, and the outcome
    would depend on which text arrived first.
    """
    import unicodedata  # noqa: PLC0415 — start-up: unicodedata only where text is normalised

    flat = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return flat.rstrip(_TRAILING).lstrip(_LEADING).rstrip(_TRAILING)


def check_content(content: str) -> str:
    content = inputs.require_text(
        content.strip(),
        "the learning",
        MAX_CONTENT_LENGTH,
        empty="the learning is empty; give the lesson as one or two sentences",
        advice="it becomes a signal every worker reads: say it shorter",
    )
    if not normalize(content):
        raise input_error("invalid_content", "the learning holds only punctuation; give the lesson itself")
    return content


def check_category(category: str | None) -> str | None:
    if category is None:
        return None
    value = category.strip().lower()
    if value not in CATEGORIES:
        raise input_error(
            "invalid_category",
            f"unknown category {category!r}; use one of {', '.join(CATEGORIES)} (or leave it out)",
        )
    return value


def parse_csv(text: str | None) -> list:
    """Comma-separated words → lower-case, trimmed, de-duplicated, non-empty."""
    if not text:
        return []
    out: list = []
    for part in text.split(","):
        word = " ".join(part.split()).casefold()
        if word and word not in out:
            out.append(word)
    return out


def parse_tags(text: str | None) -> list:
    tags = parse_csv(text)
    if len(tags) > MAX_TAGS:
        raise input_error("invalid_tags", f"{len(tags)} tags given; the limit is {MAX_TAGS}")
    for tag in tags:
        if len(tag) > MAX_TAG_LENGTH:
            raise input_error("invalid_tags", f"tag {tag[:50]!r}… is longer than {MAX_TAG_LENGTH} characters; tags are keywords")
    return tags


def parse_phase(text: str | None) -> int | None:
    """A source phase: a whole number ≥ 0, or empty/None for none."""
    if text is None or not text.strip():
        return None
    raw = text.strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
        raise input_error("invalid_argument", f"source_phase must be a phase number (0, 1, 2, …), got {text[:40]!r}")
    return int(raw)


def check_source(source: str | None) -> str | None:
    """A source project id given by the caller; None or blank means this project."""
    if source is None or not source.strip():
        return None
    source = source.strip()
    if len(source) > MAX_SOURCE_LENGTH or "\n" in source:
        raise input_error("invalid_argument", f"source_project must be one line of at most {MAX_SOURCE_LENGTH} characters")
    return source


# ---------------------------------------------------------------- ordering


def _stamp(entry: dict) -> float:
    for key in ("last_seen", "first_seen", "promoted_at"):
        try:
            return clock.parse_iso(entry.get(key))
        except (TypeError, ValueError):
            continue
    return float("-inf")


def _count(entry: dict) -> int:
    value = entry.get("occurrence_count")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def ranked(entries: list) -> list:
    """Strongest first: most projects, then most recently seen."""
    return sorted(entries, key=lambda e: (-_count(e), -_stamp(e)))


def _make_room(entries: list) -> list:
    """Remove the least recently seen non-promoted entries until one more fits; returns their ids."""
    removed = []
    while len(entries) >= CAP:
        candidates = [(_stamp(e), i) for i, e in enumerate(entries) if e.get("promoted") is not True]
        if not candidates:
            raise state_error(
                "global_learnings_full",
                f"the global store holds {len(entries)} learnings, all promoted (cap {CAP}); "
                f"nothing can rotate out. Remove learnings you no longer trust from "
                f"{store.path_of(store.spec_for('learnings'))} by hand, then promote again",
                cap=CAP,
            )
        _, index = min(candidates)
        removed.append(entries.pop(index).get("id"))
    return removed


# ---------------------------------------------------------------- the project index


def _colony_facts(project: str, warnings: list) -> dict | None:
    """goal, mode, session and completed phases of the current project, when PROJECT is it."""

    try:
        colony = store.read("colony")
    except AetherError as exc:
        warnings.append(f"project details not recorded: {exc.message}")
        return None
    if not colony.get("goal"):
        return None
    if project not in (paths.project_id(), colony.get("project_id"), colony.get("session_id")):
        return None
    facts = {"session_id": colony.get("session_id"), "goal": colony.get("goal"), "mode": colony.get("mode")}
    try:
        plan = store.read("plan")
    except AetherError as exc:
        warnings.append(f"phases_completed not recorded: {exc.message}")
    else:
        facts["phases_completed"] = sum(
            1 for phase in plan.get("phases") or [] if isinstance(phase, dict) and phase.get("status") == "completed"
        )
    return facts


def _record_project(data: dict, project: str, facts: dict | None, contributed: bool, now: str) -> dict:
    projects = data["projects"]
    entry = next((p for p in projects if isinstance(p, dict) and p.get("project_id") == project), None)
    if entry is None:
        entry = {
            "project_id": project,
            "session_id": None,
            "goal": None,
            "mode": None,
            "phases_completed": 0,
            "learnings_promoted": 0,
            "last_active": now,
        }
        projects.append(entry)
    if facts:
        entry.update(facts)
    if contributed:
        previous = entry.get("learnings_promoted")
        entry["learnings_promoted"] = (previous if isinstance(previous, int) else 0) + 1
    entry["last_active"] = now
    while len(projects) > MAX_PROJECTS:
        stalest = min(
            (p for p in projects if p is not entry),
            key=lambda p: _stamp({"last_seen": p.get("last_active")}) if isinstance(p, dict) else float("-inf"),
        )
        projects.remove(stalest)
    return entry


# ---------------------------------------------------------------- commands


@store.writes("learnings", "projects")
def _add_sighting(files, content, category, tags, project, source_phase, key, facts, warnings):
    """Add or count a sighting of the learning KEY in PROJECT (promoting it at PROMOTE_AT) and index the project."""
    entries = files["learnings"]["learnings"]
    now = clock.iso()
    entry = next((e for e in entries if isinstance(e.get("content"), str) and normalize(e["content"]) == key), None)
    rotated: list = []
    if entry is None:
        rotated = _make_room(entries)
        entry = {
            "id": clock.new_id("global", {e.get("id") for e in entries}),
            "content": content,
            "category": category,
            "tags": tags,
            "source_projects": [project],
            "source_phase": source_phase,
            "occurrence_count": 1,
            "promoted": False,
            "first_seen": now,
            "last_seen": now,
        }
        entries.append(entry)
        stored = True
    else:
        sources = entry["source_projects"]
        stored = project not in sources
        if stored:
            sources.append(project)
            del sources[:-MAX_SOURCE_PROJECTS]
            entry["occurrence_count"] = _count(entry) + 1
        entry["last_seen"] = now
        if category and not entry.get("category"):
            entry["category"] = category
        known = {str(t).casefold() for t in entry["tags"]}
        entry["tags"].extend(t for t in tags if t not in known)
    newly_promoted = False
    if entry["promoted"] is not True and _count(entry) >= PROMOTE_AT:
        entry["promoted"] = True
        entry["promoted_at"] = now
        newly_promoted = True
    _record_project(files["projects"], project, facts, stored, now)
    result = {
        "stored": stored,
        "promoted": entry["promoted"],
        "newly_promoted": newly_promoted,
        "id": entry["id"],
        "count": _count(entry),
        "cap": CAP,
        "total": len(entries),
        "project_id": project,
        "rotated_out": rotated,
    }
    if warnings:
        result["warnings"] = warnings
    return result


def promote(
    content: str, source_project: str | None = None, source_phase: int | None = None, tags: list | None = None, category: str | None = None
) -> dict:
    """learning-promote: add a sighting of a learning in a project (see the module docstring)."""
    content = check_content(content)
    category = check_category(category)
    tags = list(tags or [])
    project = check_source(source_project) or paths.project_id()
    key = normalize(content)
    warnings: list = []
    facts = _colony_facts(project, warnings)
    return _add_sighting(content, category, tags, project, source_phase, key, facts, warnings)


def load() -> dict:
    """learning-load: the promoted learnings, strongest first."""
    entries = store.read("learnings")["learnings"]
    promoted = ranked([e for e in entries if e.get("promoted") is True])
    return {"learnings": promoted, "count": len(promoted), "total": len(entries)}


def init_global() -> dict:
    """learning-init-global: create ~/.aether/learnings.json when missing."""
    path = store.path_of(store.spec_for("learnings"))
    if store.exists("learnings"):
        store.read("learnings")  # an unreadable or corrupt file is reported, not hidden
        return {"created": False, "path": path}
    store.update("learnings", lambda data: None)
    return {"created": True, "path": path}


def _line(entry: dict) -> str:
    count = _count(entry)
    label = entry.get("category") or "general"
    state = ", promoted" if entry.get("promoted") is True else ""
    text = " ".join(str(entry.get("content")).split())
    return f"  - [{label}] {text}  ({count} project{'s' if count != 1 else ''}{state})"


def inject(keywords_csv: str) -> dict:
    """learning-inject: global learnings whose tags or category equal one of the keywords."""
    keywords = parse_csv(keywords_csv)
    if not keywords:
        raise input_error("invalid_argument", "no keywords given; pass comma-separated words, e.g. `security,auth`")
    wanted = set(keywords)
    entries = store.read("learnings")["learnings"]
    matches = []
    for entry in entries:
        labels = {str(t).casefold() for t in entry.get("tags") or []}
        if isinstance(entry.get("category"), str):
            labels.add(entry["category"].casefold())
        if labels & wanted:
            matches.append(entry)
    # promoted first, then most projects, then most recently seen
    chosen = sorted(matches, key=lambda e: (e.get("promoted") is not True, -_count(e), -_stamp(e)))[:INJECT_LIMIT]
    header = f"GLOBAL LEARNINGS (tags or category: {', '.join(keywords)})"
    text = header + "\n" + ("\n".join(_line(e) for e in chosen) if chosen else "  (none)")
    return {"keywords": keywords, "learnings": chosen, "count": len(chosen), "matched": len(matches), "text": text}


# ---------------------------------------------------------------- colony-init


def for_init() -> tuple:
    """The promoted learnings a new colony receives (at most INIT_SIGNAL_LIMIT, strongest
    first) and a warning when the global store cannot be read (the colony starts anyway)."""

    try:
        entries = store.read("learnings")["learnings"]
    except AetherError as exc:
        return [], f"global learnings not injected: {exc.message}"
    promoted = ranked([e for e in entries if e.get("promoted") is True and isinstance(e.get("content"), str) and e["content"].strip()])
    return promoted[:INIT_SIGNAL_LIMIT], None


def feedback_signal(entry: dict, now: str, taken: set) -> dict:
    """The FEEDBACK signal colony-init emits for a promoted learning."""

    content = INIT_SIGNAL_PREFIX + " ".join(entry["content"].split())
    if len(content) > pheromones.MAX_CONTENT_LENGTH:
        content = content[: pheromones.MAX_CONTENT_LENGTH - 1] + "…"
    signal_id = clock.new_id("feedback", taken)
    taken.add(signal_id)
    return {
        "id": signal_id,
        "type": "FEEDBACK",
        "content": content,
        "strength": INIT_SIGNAL_STRENGTH,
        "half_life_seconds": pheromones.DEFAULTS["FEEDBACK"][1],
        "created_at": now,
        "source": INIT_SIGNAL_SOURCE,
        "auto": True,
        "learning_id": entry.get("id"),
    }
