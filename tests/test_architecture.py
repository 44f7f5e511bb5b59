"""docs/architecture.md's "Where is …" table answers each question with a file whose name says
it: one step from the question to the file, and every file it names exists."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TABLE = (REPO / "docs" / "architecture.md").read_text("utf-8").split("## Where is …", 1)[1].split("\n## ", 1)[0]
ROWS = [
    tuple(cell.strip() for cell in line.strip("|").split("|", 1))
    for line in TABLE.splitlines()
    if line.startswith("| ") and not line.startswith("| question")
]


def _exists(name: str) -> bool:
    """A path the table names: from the repository, or from scripts/aether/ (`rules/x.py`), or a
    sibling module named alone (`build_drive.py`, beside the row's first file)."""
    return any((base / name).exists() for base in (REPO, REPO / "scripts" / "aether")) or any((REPO / "scripts" / "aether").rglob(name))


def _words(text: str) -> set:
    return {w.rstrip("s").lower() for w in re.findall(r"[A-Za-z]+", text) if len(w) > 2}


def test_the_table_is_there():
    assert len(ROWS) >= 20


@pytest.mark.parametrize("question,answer", ROWS, ids=[q[:40] for q, _ in ROWS])
def test_each_question_is_answered_by_a_file_named_for_it(question, answer):
    files = re.findall(r"`([^`]+\.(?:py|sh|ts|md))`", answer)  # .json: a state file of a project, not ours
    assert files, f"{question!r} names no file"
    for name in files:
        assert _exists(name), f"{question!r}: {name} does not exist"
    first = Path(files[0]).stem
    assert _words(first.replace("_", " ")) & _words(question), f"{question!r} is answered by {files[0]}, whose name says nothing of it"


def _named() -> set:
    """The files the rows name, resolved as `_exists` reads them (a sibling module named alone:
    beside the row's first file)."""
    helper = REPO / "scripts" / "aether"
    out = set()
    for _q, answer in ROWS:
        names = re.findall(r"`([^`]+\.(?:py|sh|ts))`", answer)
        first = next((b / names[0] for b in (REPO, helper) if names and (b / names[0]).exists()), None)
        for name in names:
            for path in (REPO / name, helper / name, *([first.parent / name] if first else [])):
                if path.exists():
                    out.add(path.resolve())
    return out


def test_every_room_is_on_the_map():
    """Every module of the helper and every hook is named by a row, so a new room is never missed;
    a command module `cli/<name>.py` is found through the library module of its name."""
    named = _named()
    helper = REPO / "scripts" / "aether"
    rooms = [p for p in helper.rglob("*.py") if "__pycache__" not in p.parts and p.name != "__init__.py"]
    rooms += [
        p
        for p in (REPO / "hooks").rglob("*")
        if p.suffix in (".py", ".sh", ".ts") and "__pycache__" not in p.parts and p.name != "__init__.py"
    ]
    library = {p.name for p in rooms if p.parent.name != "cli" and p.resolve() in named}
    missing = [str(p.relative_to(REPO)) for p in rooms if p.resolve() not in named and not (p.parent.name == "cli" and p.name in library)]
    assert not missing, "rooms named by no row of docs/architecture.md's “Where is …”: " + ", ".join(sorted(missing))
