"""`aether next`, `aether record` and the Agent hooks under bad input: symbolic links and
tampered state that would lead out of the project, odd hook payloads, contradicting flags,
refused runs, deleted briefs and lessons given twice or half-valid. Each test is a defect found
and fixed (docs/decisions/the-helper-drives.md; the contract: a clear error, nothing lost, the
hooks never fail, nothing outside the project read or written)."""

import json
import os

import pytest

from helpers.colony import PHASE_PLAN, ok, write
from helpers.drive import ASSIGNMENT, approved_wave, context, drive, hook, result, scope_of, spawn_status, verification, with_tests


def wave(p):
    """The first wave handed out: w1 and w2 dispatched."""
    return approved_wave(p)


# ---------------------------------------------------------------- nothing outside the project is read or written


def test_the_pre_hook_never_reads_a_brief_through_a_symlink_out_of_the_project(drive_colony, tmp_path):
    p = drive_colony
    calls = wave(p)["spawns"]
    secret = tmp_path / "secret.txt"
    secret.write_text("THE SECRET OUTSIDE", "utf-8")
    folder = p.root / ".aether" / "spawns" / scope_of(p)
    (folder / "w1.md").unlink()
    (folder / "w1.md").symlink_to(secret)  # an ant with Write/Bash swapped its brief for a link
    out = hook(p, "pre", {"tool_input": calls[0], "tool_use_id": "t1"})
    assert out is None or "THE SECRET" not in json.dumps(out)
    # the whole spawns folder swapped for a link out of the project
    outside = tmp_path / "outside"
    (outside / scope_of(p)).mkdir(parents=True)
    (outside / scope_of(p) / "w2.md").write_text("OUTSIDE BRIEF", "utf-8")
    os.rename(p.root / ".aether" / "spawns", p.root / ".aether" / "spawns.moved")
    (p.root / ".aether" / "spawns").symlink_to(outside)
    out = hook(p, "pre", {"tool_input": calls[1], "tool_use_id": "t2"})
    assert out is None or "OUTSIDE BRIEF" not in json.dumps(out)


def test_an_answer_is_never_read_through_a_symlink_out_of_the_project(drive_colony, tmp_path, monkeypatch):
    p = drive_colony
    wave(p)
    secret = tmp_path / "secret.txt"
    secret.write_text("THE SECRET OUTSIDE", "utf-8")
    answer = p.root / ".aether" / "spawns" / scope_of(p) / "lead1.answer.md"
    answer.unlink()
    answer.symlink_to(secret)  # the watcher's or a scout's answer, read back for the score or research
    from aether.core import paths
    from aether.state import spawns as ledger

    monkeypatch.chdir(p.root)
    for fn in (paths.project_root, paths.data_dir, paths.home_dir):
        fn.cache_clear()
    assert ledger.read_answer(f"{scope_of(p)}/lead1") is None
    assert ledger.read_brief(f"{scope_of(p)}/w1") is not None  # a brief of ours is read as ever


def test_a_tampered_ledger_cannot_lead_the_helper_out_of_the_project(drive_colony, tmp_path):
    """spawns.json is a plain file a model can write: a scope with `..` must not become a path."""
    p = drive_colony
    wave(p)
    ledger = json.loads((p.data / "spawns.json").read_text("utf-8"))
    evil = "../../../evil"
    for s in ledger["spawns"]:
        if s["local"] == "w1":
            s.update(scope=evil, ref=f"{evil}/w1")
    ledger["runs"].append({**ledger["runs"][-1], "scope": evil})
    (p.data / "spawns.json").write_text(json.dumps(ledger), "utf-8")
    out = p.run("record", "w1", "-", input=result())
    assert out.error["code"] == "state_corrupt" and out.code == 2
    assert not (p.root / ".aether" / "spawns" / evil).exists()
    assert not (tmp_path / "evil").exists() and not (p.root.parent / "evil").exists()


def test_an_answer_path_that_is_a_directory_is_a_clear_error_and_the_spawn_stays_pending(drive_colony):
    p = drive_colony
    wave(p)
    (p.root / ".aether" / "spawns" / scope_of(p) / "w1.answer.md").mkdir()
    out = p.run("record", "w1", "-", input=result())
    assert out.error["code"] == "state_unwritable" and out.code == 2
    assert spawn_status(p, "w1") == "dispatched"


def test_a_spawn_whose_run_record_is_gone_is_a_clear_error(drive_colony):
    p = drive_colony
    wave(p)
    ledger = json.loads((p.data / "spawns.json").read_text("utf-8"))
    ledger["runs"] = []  # trimmed (40 runs kept) or removed by hand
    (p.data / "spawns.json").write_text(json.dumps(ledger), "utf-8")
    out = p.run("record", "w1", "-", input=result())
    assert out.error["code"] == "state_corrupt" and out.code == 2


# ---------------------------------------------------------------- the hooks: never fail, never lose an answer


def test_the_pre_hook_exits_0_when_the_tool_input_holds_a_lone_surrogate(drive_colony):
    p = drive_colony
    call = wave(p)["spawns"][0]
    payload = json.dumps({"tool_input": {**call, "description": "\ud800 w1"}, "tool_use_id": "t1"})
    out = hook(p, "pre", payload)
    assert out is None or out["hookSpecificOutput"]["updatedInput"]["prompt"].startswith("[aether spawn")


def test_a_string_tool_response_that_happens_to_be_json_is_the_answer(drive_colony):
    """A Phase Lead may answer with the bare assignment JSON; handed over as a string, it is the answer."""
    p = drive_colony
    call = ok(p, "next", "--build", "1")["spawns"][0]
    out = hook(p, "post", {"tool_input": call, "tool_response": json.dumps(ASSIGNMENT)})
    assert context(out).startswith("Aether recorded lead1 Phase Lead: 3 workers")
    assert spawn_status(p, "lead1") == "recorded"


def test_a_content_block_whose_text_is_not_text_is_skipped(drive_colony):
    p = drive_colony
    call = ok(p, "next", "--build", "1")["spawns"][0]
    response = {
        "content": [
            {"type": "text", "text": 5},
            {"type": "image", "source": {}},
            "x",
            None,
            {"type": "text", "text": json.dumps(ASSIGNMENT)},
        ]
    }
    out = hook(p, "post", {"tool_input": call, "tool_response": response})
    assert context(out).startswith("Aether recorded lead1 Phase Lead: 3 workers")


# ---------------------------------------------------------------- next: refused runs and contradicting flags


@pytest.mark.parametrize("refused", [("next", "--plan"), ("next", "--colonize")])
def test_a_refused_plan_or_colonize_leaves_next_where_the_build_stands(drive_colony, refused):
    p = drive_colony
    handed = wave(p)
    out = p.run(*refused)
    assert out.code == 2 and out.error["code"] in ("invalid_transition", "colony_executing")
    again = ok(p, "next")  # after /clear: where the build stands, not the refused run
    assert again["action"] == "spawn" and again["spawns"] == handed["spawns"]


@pytest.mark.parametrize(
    "args",
    [
        ("--resume",),
        ("--approve",),
        ("--plan", "--build", "1"),
        ("--colonize", "--plan"),
        ("--colonize", "--build", "1"),
        ("--build", "1", "--approve", "--resume"),
        ("--force",),
        ("--build", "1", "--force"),
        ("--build", "1", "--approve", "--answer", "refine", "more"),
    ],
)
def test_contradicting_next_flags_are_usage_errors_that_change_nothing(drive_colony, args):
    p = drive_colony
    handed = wave(p)
    before = (p.data / "spawns.json").read_text("utf-8")
    out = p.run("next", *args)
    assert out.code == 1 and out.error["code"] == "usage_error"
    assert (p.data / "spawns.json").read_text("utf-8") == before
    assert ok(p, "next")["spawns"] == handed["spawns"]


# ---------------------------------------------------------------- a deleted brief, handed out again


def test_a_deleted_brief_is_written_again_when_its_spawn_is_handed_out_again(drive_colony):
    p = drive_colony
    handed = wave(p)
    brief = p.root / ".aether" / "spawns" / scope_of(p) / "w1.md"
    text = brief.read_text("utf-8")
    brief.unlink()
    again = ok(p, "next")
    assert again["spawns"] == handed["spawns"]
    assert brief.read_text("utf-8") == text
    expanded = hook(p, "pre", {"tool_input": again["spawns"][0], "tool_use_id": "t1"})
    assert expanded["hookSpecificOutput"]["updatedInput"]["prompt"] == text


# ---------------------------------------------------------------- the phase's lessons


@pytest.fixture
def lessons_due(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = with_tests(project)
    ok(p, "colony-init", "Build a todo API", "--mode", "FULL")
    ok(p, "plan-load", "-", input=json.dumps(PHASE_PLAN))
    ok(p, "next", "--build", "1")
    ok(p, "record", "lead1", "-", input="```json\n" + json.dumps(ASSIGNMENT) + "\n```")
    action = drive(p, ok(p, "next", "--build", "1", "--approve"), [verification(1, 0, [])])
    assert action["action"] == "lessons"
    return p


def learnings(p):
    memory = json.loads((p.data / "memory.json").read_text("utf-8"))
    return [line for entry in memory.get("phase_learnings", []) for line in entry["learnings"]]


def test_lessons_recorded_twice_are_kept_once(lessons_due):
    p = lessons_due
    assert ok(p, "record", "lessons", "-", input="- keep the store small\n")["next"]["action"] == "done"
    again = p.run("record", "lessons", "-", input="- keep the store small\n")
    assert again.error["code"] == "no_lessons_due"
    assert learnings(p) == ["keep the store small"]


@pytest.mark.parametrize("bad", ["global convention:", "global convention: " + "x" * 2000, "global convention: ..."])
def test_a_bad_global_lesson_is_refused_before_anything_is_written(lessons_due, bad):
    p = lessons_due
    out = p.run("record", "lessons", "-", input=f"- a plain lesson\n{bad}\n")
    assert out.code == 1 and out.error["code"] in ("invalid_content", "content_too_long", "text_too_long")
    assert learnings(p) == []
    assert ok(p, "next")["action"] == "lessons"  # still due: nothing half-done
    assert ok(p, "record", "lessons", "-", input="- a plain lesson\n")["recorded"] == 1
    assert learnings(p) == ["a plain lesson"]


# ---------------------------------------------------------------- a record killed half-way


def test_an_answer_recorded_in_the_tree_but_not_in_the_ledger_is_recorded_again_without_harm(drive_colony):
    """Killed after spawn-finish wrote the tree, before the ledger's mark: the hook (or the Queen)
    records it again, and the build goes on instead of failing with spawn_not_running."""
    p = drive_colony
    wave(p)
    write(p, "src/todo.py", "src/api.py")
    answer = result(files_created=["src/todo.py"])
    ok(p, "spawn-finish", "w1", "-", input=answer)  # the first half of `record w1`, then the kill
    ok(p, "record", "w2", "-", input=result(files_created=["src/api.py"]))
    again = ok(p, "record", "w1", "-", input=answer)
    assert again["already_recorded"] is False and again["waiting"] == []
    assert again["next"]["action"] == "spawn" and [s["id"] for s in again["next"]["spawns"]] == ["v1"]
    assert spawn_status(p, "w1") == "recorded"
