"""`aether status --timeline`: the newest run drawn as a timeline (rules/timeline.py draws it),
in the terminal and, with `--svg`, as a picture under `.aether/reports/` (an SVG and a page that
shows it)."""

from __future__ import annotations

import os

from aether.core import clock, containment, paths
from aether.core.exceptions import state_error
from aether.rules import timeline
from aether.state import atomic_files, evidence, store
from aether.state import spawns as ledger
from aether.steps import checks

REPORTS = "reports"  # under .aether/


def _newest_run(data: dict) -> dict | None:
    """The newest run that handed out an ant (a build, a plan, a colonize run)."""
    return next((r for r in reversed(data["runs"]) if ledger.of_scope(data, r["scope"])), None)


def _title(run: dict) -> str:
    command = str(run.get("command"))
    what = {"build": f"build of phase {run.get('phase')}", "plan": "plan", "colonize": "colonize"}.get(command, command)
    return f"{what} ({run['scope']}{', running' if not run.get('done') else ''})"


def view(picture: bool = False) -> dict:
    """{run, ants, merges, helper, text, files}: the newest run's timeline (files: the SVG and the page
    written; helper: {ms, steps} of the helper's steps for the run, when recorded)."""
    data = store.read("spawns")
    run = _newest_run(data)
    if run is None:
        return {
            "run": None,
            "ants": [],
            "merges": [],
            "helper": None,
            "files": [],
            "text": "No run has handed out an ant yet: nothing to draw.",
        }
    tree = store.read("colony").get("spawn_tree") or {}
    same_build = run.get("command") == "build" and tree.get("phase") == run.get("phase") and isinstance(tree.get("nodes"), dict)
    nodes = tree["nodes"] if same_build else {}
    now = clock.now()
    ants = timeline.rows(ledger.of_scope(data, run["scope"]), nodes, hooks=_hook_time(data, run["scope"]))
    merged = timeline.merges(nodes)
    title = _title(run)
    helper = timeline.helper_time(run)
    text = timeline.text(title, ants, merged, now, helper)
    files = []
    if picture:
        picture_svg = timeline.svg(title, ants, merged, now, helper)
        files = [
            _write(f"timeline-{run['scope']}.svg", picture_svg),
            _write(f"timeline-{run['scope']}.html", timeline.html(title, picture_svg)),
        ]
        text += "\nPicture: " + " and ".join(files)
    said = dict(zip(("ms", "steps"), helper, strict=True)) if helper else None
    return {"run": run["scope"], "ants": ants, "merges": merged, "helper": said, "files": files, "text": text}


def _hook_time(data: dict, scope: str) -> dict:
    """{ref: (ms, calls)}: the time each ant's calls spent in PreToolUse hooks, where the mod measured it."""
    out = {}
    for ref, calls in evidence.of_scope(scope, checks.owners(data)).items():
        times = [c["hooks_ms"] for c in calls if isinstance(c.get("hooks_ms"), int)]
        if times:
            out[ref] = (sum(times), len(times))
    return out


def _write(name: str, content: str) -> str:
    """A report file under .aether/reports/ (never through a link); its path from the project.
    `name` holds a run's scope, read from a state file: a scope that could name a path is refused."""
    if not ledger.NAME.fullmatch(name.removeprefix("timeline-").rsplit(".", 1)[0]):
        raise state_error("state_corrupt", f"spawns.json names a run {name!r} that is no scope of Aether's: nothing written")
    path = os.path.join(paths.aether_dir(), REPORTS, name)
    try:
        containment.make_dirs(os.path.dirname(path))
        if os.path.lexists(path):
            containment.check_write(path)
        atomic_files.write_text_atomic(path, content)
    except OSError as exc:
        raise state_error("state_unwritable", f"cannot write {path}: {exc.strerror or exc}", file=path) from None
    return os.path.relpath(path, paths.project_root()).replace(os.sep, "/")
