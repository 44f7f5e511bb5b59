"""uninstall: what Aether put outside the project, listed, and removed when the user says so.

Outside a project Aether keeps two things: the global folder (`~/.aether`, or AETHER_HOME:
learnings shared across projects and the projects that gave them) and, for a marketplace
install, the helper's venvs in the plugin's data folder (`<data>/venvs/<version>-<hash>`,
built by the SessionStart hook). `/plugin uninstall` removes the plugin's files, not these.

Only what is recognisably Aether's is removed: in the global folder the files Aether writes
(anything else is listed and left), in the data folder the venvs that carry Aether's install
markers. A project's `.aether/` is removed only with `--project`, and only that project's.
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from aether.core import paths

# Files Aether writes in the global folder (with their locks, backups and kept damaged copies).
GLOBAL_FILES = re.compile(r"^(learnings|projects)\.json(\.lock|\.\d+|\.replaced-.+|\.tmp\..+)?$")
GLOBAL_DIRS = (".backups",)
VENV_MARKERS = (".aether-ready", ".aether-installing")  # hooks/bootstrap.py writes them
DATA_ROOT = os.path.join("~", ".claude", "plugins", "data")


def _size(path: str) -> int:
    if os.path.islink(path) or not os.path.isdir(path):
        return os.lstat(path).st_size if os.path.lexists(path) else 0
    total = 0
    for folder, _dirs, files in os.walk(path):
        total += sum(os.lstat(os.path.join(folder, f)).st_size for f in files)
    return total


def _global_items(folder: str) -> tuple[list, list]:
    """(Aether's entries, other entries) of the global folder."""
    ours: list = []
    other: list = []
    if not os.path.isdir(folder) or os.path.islink(folder):
        return ours, other
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        mine = GLOBAL_FILES.match(name) or (name in GLOBAL_DIRS and os.path.isdir(path) and not os.path.islink(path))
        (ours if mine else other).append(path)
    return ours, other


def _venv_folders() -> list:
    """Folders holding the helper's venvs: the one this helper runs from, CLAUDE_PLUGIN_DATA's,
    and those under Claude Code's plugin data folder."""
    found = []
    running = os.path.dirname(os.path.realpath(sys.prefix))
    if os.path.basename(running) == "venvs":
        found.append(running)
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if data:
        found.append(os.path.join(data, "venvs"))
    root = os.path.expanduser(DATA_ROOT)
    if os.path.isdir(root):
        found += [os.path.join(root, name, "venvs") for name in sorted(os.listdir(root))]
    return [f for f in dict.fromkeys(os.path.realpath(f) for f in found) if os.path.isdir(f)]


def _venvs() -> list:
    return [
        os.path.join(folder, name)
        for folder in _venv_folders()
        for name in sorted(os.listdir(folder))
        if any(os.path.lexists(os.path.join(folder, name, m)) for m in VENV_MARKERS) and not os.path.islink(os.path.join(folder, name))
    ]


def inventory(project: bool = False) -> dict:
    """What `uninstall` would remove, and what it would leave."""
    home = paths.home_dir()
    ours, other = _global_items(home)
    items = [{"path": p, "what": "global learnings and project index", "bytes": _size(p)} for p in ours]
    items += [{"path": p, "what": "the helper's venv (plugin data)", "bytes": _size(p)} for p in _venvs()]
    if project:
        folder = os.path.join(paths.project_root(), ".aether")
        if os.path.isdir(folder) and not os.path.islink(folder):
            items.append({"path": folder, "what": "this project's colony state", "bytes": _size(folder)})
    return {
        "remove": items,
        "kept": [{"path": p, "why": "not a file Aether writes"} for p in other],
        "global_dir": home,
        "total_bytes": sum(i["bytes"] for i in items),
    }


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def uninstall(yes: bool = False, project: bool = False) -> dict:
    """Remove what `inventory` lists (only with `yes`); empty folders Aether made go too."""
    plan = inventory(project)
    removed = []
    if yes:
        for item in plan["remove"]:
            if os.path.lexists(item["path"]):
                _remove(item["path"])
                removed.append(item["path"])
        venv_dirs = {os.path.dirname(v) for v in removed if os.path.basename(os.path.dirname(v)) == "venvs"}
        for folder in [plan["global_dir"], *venv_dirs, *(os.path.dirname(v) for v in venv_dirs)]:
            try:
                os.rmdir(folder)  # only when empty
            except OSError:
                pass
    plan.update(removed=removed, done=yes, text=render(plan, yes))
    return plan


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def render(plan: dict, done: bool) -> str:
    lines = ["Removed:" if done else "Would remove (run again with --yes to remove):"]
    lines += [f"  {i['path']}  ({i['what']}, {_human(i['bytes'])})" for i in plan["remove"]] or ["  (nothing)"]
    if plan["kept"]:
        lines += ["Left in place:"] + [f"  {k['path']}  ({k['why']})" for k in plan["kept"]]
    if not done:
        lines.append("A project's own .aether/ stays unless you add --project (in that project).")
    return "\n".join(lines)
