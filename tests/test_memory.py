import re

import pytest

from aether.state import memory


def entries(project, key):
    return project.load("memory.json")[key]


# ---------------------------------------------------------------- decisions


def test_decision_add_shape(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    decision = project.run(
        "decision-add", "Use SQLite for storage", "--type", "architecture", "--context", "single user, no server", "--phase", 2
    ).json
    assert re.match(r"^dec_1770199200_[0-9a-f]{4}$", decision["id"])
    assert decision == {
        "id": decision["id"],
        "type": "architecture",
        "content": "Use SQLite for storage",
        "context": "single user, no server",
        "phase": 2,
        "timestamp": "2026-02-04T10:00:00Z",
    }
    stored = project.load("memory.json")
    assert stored["version"] == 1 and stored["decisions"] == [decision]


def test_decision_defaults_and_phase_from_colony(project):
    first = project.run("decision-add", "no colony yet").json
    assert (first["type"], first["context"], first["phase"]) == ("general", None, None)
    project.run("colony-init", "a goal for the colony")
    assert project.run("decision-add", "inside a colony").json["phase"] == 0


def test_decision_content_round_trips_through_stdin(project):
    text = "Keep 'quotes' and \"doubles\"\nand a second line ✓\n"
    assert project.run("decision-add", "-", input=text).json["content"] == text
    assert entries(project, "decisions")[0]["content"] == text


def test_decisions_keep_the_newest_30(project):
    data = {"phase_learnings": [], "decisions": [], "patterns": []}
    for i in range(30):
        memory.append_decision(data, f"decision {i}")
    project.write("memory.json", data)
    project.run("decision-add", "the 31st")
    decisions = entries(project, "decisions")
    assert len(decisions) == 30
    assert decisions[0]["content"] == "decision 1" and decisions[-1]["content"] == "the 31st"


@pytest.mark.parametrize(
    "args,code",
    [
        (("  ",), "invalid_content"),
        (("x" * 4001,), "content_too_long"),
        (("ok", "--phase", "two"), "invalid_argument"),
        (("ok", "--type", "a\nb"), "invalid_argument"),
    ],
)
def test_decision_add_bad_input(project, args, code):
    assert project.run("decision-add", *args).error["code"] == code
    assert not project.file("memory.json").exists()


# ---------------------------------------------------------------- learnings


def test_learning_add_creates_the_phase_entry(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    entry = project.run(
        "learning-add", 3, "bcrypt 12 rounds is slow", "use explicit transactions", "--phase-name", "Auth", "--errors-encountered", 2
    ).json
    assert re.match(r"^learn_1770199200_[0-9a-f]{4}$", entry["id"])
    assert entry == {
        "id": entry["id"],
        "phase": 3,
        "phase_name": "Auth",
        "learnings": ["bcrypt 12 rounds is slow", "use explicit transactions"],
        "errors_encountered": 2,
        "timestamp": "2026-02-04T10:00:00Z",
    }
    assert entries(project, "phase_learnings") == [entry]


def test_second_extraction_is_refused_append_and_replace_allowed(project):
    project.run("learning-add", 1, "first")
    before = project.file("memory.json").read_bytes()
    err = project.run("learning-add", 1, "again").error
    assert err["code"] == "learnings_exist" and "--append" in err["error"]
    assert project.file("memory.json").read_bytes() == before
    appended = project.run("learning-add", 1, "second", "--append", "--errors-encountered", 4).json
    assert appended["learnings"] == ["first", "second"] and appended["errors_encountered"] == 4
    replaced = project.run("learning-add", 1, "only this", "--replace").json
    assert replaced["learnings"] == ["only this"] and replaced["errors_encountered"] == 4
    assert len(entries(project, "phase_learnings")) == 1


def test_learning_add_refusal_exits_2(project):
    project.run("learning-add", 1, "first")
    assert project.run("learning-add", 1, "again").code == 2


def test_each_line_splits_stdin_into_learnings(project):
    text = "- bcrypt is slow\n\n* pin the ORM version\n• ünïcode stays\nplain line\n"
    entry = project.run("learning-add", 2, "-", "--each-line", input=text).json
    assert entry["learnings"] == ["bcrypt is slow", "pin the ORM version", "ünïcode stays", "plain line"]


def test_without_each_line_stdin_is_one_learning(project):
    text = "one learning\nover two lines"
    assert project.run("learning-add", 2, "-", input=text).json["learnings"] == [text]


def test_phase_learnings_keep_the_newest_20(project):
    data = {"phase_learnings": [], "decisions": [], "patterns": []}
    for phase in range(20):
        memory.append_learnings(data, phase, f"P{phase}", [f"learning {phase}"])
    project.write("memory.json", data)
    project.run("learning-add", 20, "the 21st")
    stored = entries(project, "phase_learnings")
    assert len(stored) == 20
    assert [e["phase"] for e in stored] == list(range(1, 21))


@pytest.mark.parametrize(
    "args,code",
    [
        (("one", "x"), "invalid_argument"),
        (("-2", "x"), "usage_error"),
        (("1",), "invalid_argument"),
        (("1", "   "), "invalid_content"),
        (("1", "x" * 4001), "content_too_long"),
        (("1", "x", "--errors-encountered", "many"), "invalid_argument"),
    ],
)
def test_learning_add_bad_input(project, args, code):
    assert project.run("learning-add", *args).error["code"] == code
    assert not project.file("memory.json").exists()


def test_each_line_with_only_blank_lines_is_refused(project):
    err = project.run("learning-add", 1, "-", "--each-line", input="\n - \n\n").error
    assert err["code"] == "invalid_content"


def test_library_append_learnings_refuses_a_duplicate():
    data = {"phase_learnings": [], "decisions": [], "patterns": []}
    memory.append_learnings(data, 4, "Deploy", ["a"], 1)
    with pytest.raises(Exception) as exc:
        memory.append_learnings(data, 4, "Deploy", ["b"])
    assert exc.value.code == "learnings_exist" and exc.value.exit_code == 2
    assert memory.has_learnings(data, 4) and not memory.has_learnings(data, 5)
    entry = memory.append_learnings(data, 4, None, ["b"], on_exists="append")
    assert entry["learnings"] == ["a", "b"] and entry["errors_encountered"] == 1


# ---------------------------------------------------------------- memory-compress


def big_memory(learnings: int, decisions: int, words: int) -> dict:
    text = " ".join(["word"] * words)
    return {
        "phase_learnings": [
            {"id": f"l{i}", "phase": i, "phase_name": "p", "learnings": [text], "errors_encountered": 0, "timestamp": "t"}
            for i in range(learnings)
        ],
        "decisions": [
            {"id": f"d{i}", "type": "general", "content": text, "context": None, "phase": None, "timestamp": "t"} for i in range(decisions)
        ],
        "patterns": [],
    }


def test_compress_trims_to_the_caps(project):
    project.write("memory.json", big_memory(25, 35, 1))
    report = project.run("memory-compress").json
    # every record holds 5 single-word strings (id, phase_name or type, text, timestamp…)
    assert report["before"]["phase_learnings"] == 25 and report["before"]["decisions"] == 35
    assert report["after"]["phase_learnings"] == 20 and report["after"]["decisions"] == 30
    assert report["compressed"] is True and report["aggressive"] is False
    assert report["tokens"] == report["after"]["tokens"] == memory.estimate_tokens(project.load("memory.json"))
    stored = project.load("memory.json")
    assert stored["phase_learnings"][0]["id"] == "l5" and stored["decisions"][0]["id"] == "d5"


def test_compress_goes_further_above_the_threshold(project):
    project.write("memory.json", big_memory(25, 35, 100))
    report = project.run("memory-compress", 5000).json
    assert report["aggressive"] is True and report["threshold"] == 5000
    assert (report["after"]["phase_learnings"], report["after"]["decisions"]) == (10, 15)
    assert report["before"]["tokens"] > report["after"]["tokens"]
    stored = project.load("memory.json")
    assert [e["id"] for e in stored["phase_learnings"]] == [f"l{i}" for i in range(15, 25)]


def test_token_estimate_is_1_3_per_word():
    data = {"phase_learnings": [], "decisions": [{"content": "one two  three\nfour"}], "patterns": ["five"]}
    assert memory.estimate_tokens(data) == 6  # floor(5 × 1.3)


def test_compress_writes_nothing_when_nothing_is_dropped(project):
    project.write("memory.json", big_memory(3, 3, 2))
    before = project.file("memory.json").read_bytes()
    report = project.run("memory-compress").json
    assert report["compressed"] is False and report["before"] == report["after"]
    assert project.file("memory.json").read_bytes() == before


@pytest.mark.parametrize(
    "bad,code", [("-5", "usage_error"), ("nan", "invalid_argument"), ("1e3", "invalid_argument"), ("ten", "invalid_argument")]
)
def test_compress_bad_threshold(project, bad, code):
    assert project.run("memory-compress", bad).error["code"] == code
