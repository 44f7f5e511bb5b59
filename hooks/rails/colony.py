"""Rule 7, the colony's own files: no ant writes under `.aether/` (nor the `AETHER_DATA_DIR`
folder, nor `~/.aether/`) but a scout's notes, a builder's report file and an isolated builder's
own worktree. `Colony` says which files are the colony's, and refuses a file tool's write to
them; `PersonOnly`: what only a person's typed command writes (`.aether/typed/`,
`.aether/bugs/`), refused to every thread. A Bash command's writes: colony_bash.py."""

from __future__ import annotations

import os
import re

from .state import _inside, _project
from .tables import WRITE_ANYWHERE

COLONY_ONLY = (
    "the colony's state, settings and briefs are written only by Aether (reading them is fine): change the "
    "project's files, and put what you found or what should change in your answer — the Queen records it"
)
REPORT_FILE = r"spawns/[A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,64}\.report\.md"  # a pattern, compiled on first use
WHOLE = {  # how a command changes a folder as a whole → what it does to one that holds the colony
    "removes": "removes the colony's own files (.aether/) with {}",
    "copies": "copies into {}, which holds the colony's own files (.aether/): copy into a subfolder, or name the files",
    "extracts": "extracts into {}, which holds the colony's own files (.aether/): extract into a subfolder (`tar -C dir`, `unzip -d dir`)",
}


class Colony:
    """The colony's own files, which no ant writes: the project's `.aether/` (and the data folder
    `AETHER_DATA_DIR` names, and the user's `~/.aether/`), but for the notes under
    `.aether/research/`, a builder's report file and, while a build's builders work in their own
    copies, `.aether/worktrees/` (each builder kept to its own by `isolated_builder`). A root's
    name is compared in any case (`.AETHER/` is `.aether/` on a case-insensitive disk); what
    follows it as written."""

    def __init__(self, caste: str, event: dict):
        self.project = os.path.realpath(_project())
        self.root = os.path.realpath(os.path.join(self.project, ".aether"))
        data, home = os.environ.get("AETHER_DATA_DIR"), os.environ.get("AETHER_HOME") or os.path.expanduser("~/.aether")
        self.roots = [self.root, os.path.realpath(home)] + ([os.path.realpath(data)] if data else [])
        self.caste, self.event, self.copy = caste, event, False  # the working copy: looked up when needed

    def under(self, full: str) -> str | None:
        """`full` spelled from the root it is under (`/p/.AETHER/x` → `/p/.aether/x`), or None."""
        for root in self.roots:
            n = len(root)
            if full[:n].lower() == root.lower() and full[n : n + 1] in ("", os.sep):
                return root + full[n:]
        return None

    def holds(self, full: str) -> bool:
        """A root is `full` or lies below it."""
        folder = full.lower().rstrip(os.sep) + os.sep
        return any((root.lower() + os.sep).startswith(folder) for root in self.roots)

    def owns(self, full: str) -> bool:
        """True when the real path `full` is the colony's own (no ant writes it)."""
        own = self.under(full)
        if own is None or _inside(own, [os.path.join(self.root, "research")]):
            return False
        if self.caste in WRITE_ANYWHERE and re.fullmatch(REPORT_FILE, os.path.relpath(own, self.root)):
            return False  # its report file (the brief names it); an isolated builder's: its own only
        if self.caste in WRITE_ANYWHERE and _inside(own, [os.path.join(self.root, "worktrees")]):
            if self.copy is False:
                from .builders import builder_copy  # start-up: only a builder's call needs the rule

                self.copy = builder_copy(self.event, self.project)
            return self.copy is None  # a build's builders in their own copies: the rule of isolated builders holds them
        return True

    def refusal(self, what: str, full: str, whole: str = "") -> str | None:
        """Why writing `full` is refused, or None; `whole`: how the command changes it with all it
        holds (a key of WHOLE)."""
        owned = self.owns(full)
        if whole and not owned and self.holds(full):
            return f"{what} {WHOLE[whole].format(full)}: {COLONY_ONLY}."
        if not owned:
            return None
        shown = os.path.relpath(full, self.project) if _inside(full, [self.project]) else full
        return f"{what} is the colony's own ({shown}): {COLONY_ONLY}."


class PersonOnly(Colony):
    """What only the person writes, which no thread writes, the Queen's included: the prompt
    hook's tickets (`.aether/typed/`), the Bug Bash state (`.aether/bugs/`) and the settings
    (`.aether/config.yaml`); `.aether` itself moved away, linked or copied over with them."""

    def __init__(self, event: dict):
        super().__init__("", event)
        self.roots = [os.path.join(self.root, "typed"), os.path.join(self.root, "bugs"), os.path.join(self.root, "config.yaml")]
        self.program = ""  # the command being judged (colony_bash sets it)

    def owns(self, full: str) -> bool:
        if self.program in REPLACERS and full.lower().rstrip(os.sep) == self.root.lower():
            return True  # `.aether` itself moved away, linked or copied over: what it holds with it
        return self.under(full) is not None


PERSON_ONLY = (
    "only Aether's helper writes the Bug Bash state, only the person edits `.aether/config.yaml`, and only a "
    "person's typed `/ant:bug approve <id>` approves"
)
REPLACERS = {"mv", "ln", "cp", "rsync", "install", "rm", "rmdir", "unlink", "tar", "unzip", "ditto", "rename"}


def _colony_file(caste: str, tool_input: dict, event: dict) -> str | None:
    """A file tool aimed at the colony's own files."""
    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
    if not path:
        return None
    return Colony(caste, event).refusal(path, os.path.realpath(os.path.join(_project(), os.path.expanduser(path))))


def _person_only_file(tool_input: dict, event: dict) -> str | None:
    """A main-thread file tool aimed at what only a person's typed command writes."""
    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
    if not path:
        return None
    why = PersonOnly(event).refusal(path, os.path.realpath(os.path.join(_project(), os.path.expanduser(path))))
    return why.replace(COLONY_ONLY, PERSON_ONLY) if why else None
