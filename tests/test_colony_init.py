"""colony-init's use of complexity detection (--detect) and of promoted global learnings."""

import json

from aether.state import learning


def write_global(project, learnings):
    project.global_dir.mkdir(parents=True, exist_ok=True)
    path = project.global_dir / "learnings.json"
    path.write_text(json.dumps({"version": 2, "learnings": learnings}), encoding="utf-8")
    return path


def entry(i, promoted=True, count=3, last_seen="2026-01-01T00:00:00Z"):
    return {
        "id": f"global_1_{i:04x}",
        "content": f"lesson {i}: keep it simple",
        "category": "convention",
        "tags": [],
        "source_projects": [f"p{j}" for j in range(count)],
        "occurrence_count": count,
        "promoted": promoted,
        "first_seen": last_seen,
        "last_seen": last_seen,
    }


def feedback(project):
    return [s for s in project.load("pheromones.json")["signals"] if s["type"] == "FEEDBACK"]


def test_default_mode_and_nothing_to_inject(project):
    result = project.run("colony-init", "Build a notes app").json
    assert result["mode"] == "STANDARD" and result["global_learnings_injected"] == 0
    assert "complexity" not in result and "warnings" not in result
    assert feedback(project) == []
    assert project.load("COLONY_STATE.json")["mode_indicators"] is None


def test_promoted_learnings_become_feedback_signals(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    learnings = [entry(i, count=3 + i) for i in range(7)] + [entry(20, promoted=False, count=2), entry(21, promoted=False, count=1)]
    write_global(project, learnings)
    result = project.run("colony-init", "Build a notes app").json
    assert result["global_learnings_injected"] == learning.INIT_SIGNAL_LIMIT == 5
    signals = feedback(project)
    # the strongest five (most projects), strongest first
    assert [s["learning_id"] for s in signals] == [f"global_1_{i:04x}" for i in (6, 5, 4, 3, 2)]
    for s in signals:
        assert (s["strength"], s["source"], s["auto"]) == (0.3, "auto:global", True)
        assert s["half_life_seconds"] == 21600 and s["created_at"] == "2026-02-04T10:00:00Z"
        assert s["content"].startswith("Global learning: lesson ")
        assert s["id"].startswith("feedback_")
    assert len({s["id"] for s in project.load("pheromones.json")["signals"]}) == 6  # INIT + 5, unique ids
    # Re-initialising starts from fresh signals: no duplicates.
    again = project.run("colony-init", "Another goal", "--force").json
    assert again["global_learnings_injected"] == 5 and len(feedback(project)) == 5


def test_learnings_promoted_in_three_projects_reach_a_fourth(project, tmp_path):
    lesson = "Validate every webhook signature before parsing the body"
    for name in ("one", "two", "three"):
        other = tmp_path / name
        other.mkdir()
        assert project.run("learning-promote", lesson, cwd=other).json["stored"] is True
    project.run("learning-promote", "only seen once", cwd=tmp_path / "one")
    result = project.run("colony-init", "Build the billing service").json
    assert result["global_learnings_injected"] == 1
    (signal,) = feedback(project)
    assert signal["content"] == "Global learning: " + lesson
    shown = project.run("pheromone-render", "--caste", "watcher").stdout
    assert "FEEDBACK" in shown and "webhook signature" in shown


def test_corrupt_global_store_does_not_block_a_colony(project):
    path = project.global_dir / "learnings.json"
    project.global_dir.mkdir(parents=True)
    path.write_text("{oops", encoding="utf-8")
    result = project.run("colony-init", "Build a notes app").json
    assert result["state"] == "READY" and result["global_learnings_injected"] == 0
    assert "global learnings not injected" in result["warnings"][0]
    assert path.read_text(encoding="utf-8") == "{oops"


def test_detect_chooses_lightweight_for_a_small_project(project):
    (project.root / "main.py").write_text("print(1)\n", encoding="utf-8")
    venv = project.root / ".venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    for i in range(60):
        (venv / f"m{i}.py").write_text("", encoding="utf-8")
    result = project.run("colony-init", "a tiny dice roller", "--detect").json
    assert result["mode"] == "LIGHTWEIGHT"
    assert result["complexity"]["mode"] == "LIGHTWEIGHT"
    colony = project.load("COLONY_STATE.json")
    assert colony["mode"] == "LIGHTWEIGHT"
    assert colony["mode_indicators"]["source_files"] == 1
    assert colony["mode_indicators"]["goal_words"] == 4
    (decision,) = project.load("memory.json")["decisions"]
    assert decision["type"] == "mode" and "LIGHTWEIGHT" in decision["content"] and decision["phase"] == 0


def test_detect_judges_the_new_goal(project):
    (project.root / "main.py").write_text("", encoding="utf-8")
    result = project.run("colony-init", "-", "--detect", input="Add OAuth authentication\n").json
    assert result["mode"] == "FULL"
    assert result["complexity"]["signals"]["complex_goal_terms"] == ["oauth", "authentication"]


def test_detect_excludes_mode(project):
    err = project.run("colony-init", "a goal", "--detect", "--mode", "FULL").error
    assert err["code"] == "invalid_argument"
    assert not project.file("COLONY_STATE.json").exists()


def test_through_the_launcher(project):
    write_global(project, [entry(1)])
    result = project.sh("colony-init", "-", "--detect", input="a small script\n")
    assert result.json["mode"] == "LIGHTWEIGHT" and result.json["global_learnings_injected"] == 1
