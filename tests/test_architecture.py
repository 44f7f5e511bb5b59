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
    files = re.findall(r"`([^`]+\.(?:py|sh|md))`", answer)  # .json: a state file of a project, not ours
    assert files, f"{question!r} names no file"
    for name in files:
        assert _exists(name), f"{question!r}: {name} does not exist"
    first = Path(files[0]).stem
    assert _words(first.replace("_", " ")) & _words(question), f"{question!r} is answered by {files[0]}, whose name says nothing of it"
