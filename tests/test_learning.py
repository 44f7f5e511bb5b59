"""Global learnings: promotion across projects, matching, the cap, v4.4 files, inject, the index."""

import json

import pytest

from aether.state import learning


def global_file(project, name="learnings.json"):
    return project.global_dir / name


def load_global(project, name="learnings.json"):
    return json.loads(global_file(project, name).read_text(encoding="utf-8"))


def write_global(project, data, name="learnings.json"):
    path = global_file(project, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def entry(i, promoted=False, last_seen="2026-01-01T00:00:00Z", **extra):
    base = {
        "id": f"global_1_{i:04x}",
        "content": f"learning number {i}",
        "category": None,
        "tags": [],
        "source_projects": [f"p{i}"],
        "occurrence_count": 3 if promoted else 1,
        "promoted": promoted,
        "first_seen": last_seen,
        "last_seen": last_seen,
    }
    base.update(extra)
    return base


def git_project(tmp_path, name, remote=None):
    """A folder that is its own git project, with an origin remote when given."""
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if remote:
        config += f'[remote "origin"]\n\turl = {remote}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    (root / ".git" / "config").write_text(config, encoding="utf-8")
    return root


# ---------------------------------------------------------------- promotion


def test_promotion_across_three_named_projects(project):
    content = "bcrypt with 12 rounds adds 800 ms per login; use 10"
    counts = []
    for source in ("alpha", "beta", "gamma"):
        result = project.run("learning-promote", content, source, 2, "auth,bcrypt", "--category", "performance").json
        counts.append((result["stored"], result["count"], result["promoted"]))
    assert counts == [(True, 1, False), (True, 2, False), (True, 3, True)]
    assert result["cap"] == 100 and result["newly_promoted"] is True
    stored = load_global(project)
    assert stored["version"] == 2
    (item,) = stored["learnings"]
    assert item["source_projects"] == ["alpha", "beta", "gamma"]
    assert item["occurrence_count"] == 3 and item["promoted"] is True and item["promoted_at"]
    assert item["category"] == "performance" and item["tags"] == ["auth", "bcrypt"]
    assert item["id"].startswith("global_")


def test_promotion_across_project_dirs_uses_project_id(project, tmp_path):
    """Without source_project, the project is its git remote (or its path): two clones of the
    same remote are one project; three different remotes promote."""
    lesson = "Pin the database driver version"
    a = git_project(tmp_path, "a", "git@example.com:team/a.git")
    a_clone = git_project(tmp_path, "a-clone", "git@example.com:team/a.git")
    b = git_project(tmp_path, "b", "https://example.com/team/b.git")
    c = git_project(tmp_path, "c")  # no remote: identified by its path

    first = project.run("learning-promote", lesson, cwd=a).json
    again = project.run("learning-promote", lesson.upper() + ".", cwd=a_clone).json
    assert (first["count"], again["count"], again["stored"]) == (1, 1, False)
    assert again["project_id"] == first["project_id"]
    second = project.run("learning-promote", lesson, cwd=b).json
    third = project.run("learning-promote", lesson, cwd=c).json
    assert (second["count"], second["promoted"]) == (2, False)
    assert (third["count"], third["promoted"]) == (3, True)
    ids = {first["project_id"], second["project_id"], third["project_id"]}
    assert len(ids) == 3 and all(i.startswith("proj_") for i in ids)


def test_same_project_repeated_never_promotes(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-01T00:00:00Z")
    first = project.run("learning-promote", "Run migrations in a transaction").json
    for stamp in ("2026-02-02T00:00:00Z", "2026-02-03T00:00:00Z", "2026-02-04T00:00:00Z"):
        monkeypatch.setenv("AETHER_NOW", stamp)
        result = project.run("learning-promote", "run migrations in a transaction!").json
        assert (result["stored"], result["count"], result["promoted"]) == (False, 1, False)
        assert result["id"] == first["id"]
    (item,) = load_global(project)["learnings"]
    assert item["first_seen"] == "2026-02-01T00:00:00Z" and item["last_seen"] == "2026-02-04T00:00:00Z"
    assert item["occurrence_count"] == 1 and len(item["source_projects"]) == 1
    assert project.run("learning-load").json["learnings"] == []


def test_normalisation_matches_variants_but_not_substrings(project):
    base = project.run("learning-promote", "Use bcrypt 10 rounds.", "p1").json
    variant = project.run("learning-promote", '  "USE   bcrypt\n10 rounds"!! ', "p2").json
    assert variant["id"] == base["id"] and variant["count"] == 2
    # A substring is a different learning (plain containment would have merged these).
    shorter = project.run("learning-promote", "bcrypt 10 rounds", "p3").json
    longer = project.run("learning-promote", "Use bcrypt 10 rounds on the CI runners", "p3").json
    assert len({base["id"], shorter["id"], longer["id"]}) == 3
    assert shorter["count"] == longer["count"] == 1
    assert learning.normalize("Ｆｕｌｌｗｉｄｔｈ  Text…") == learning.normalize("fullwidth text")


def test_content_round_trips_exactly_through_stdin(project):
    content = 'It\'s "quoted" $(rm -rf /) `x` \\ back\nline two ünïcødé 🐜'
    result = project.run("learning-promote", "-", "p1", input=content + "\n").json
    (item,) = load_global(project)["learnings"]
    assert item["content"] == content and item["id"] == result["id"]


def test_tags_merge_and_category_fills_in(project):
    project.run("learning-promote", "Cache the token", "p1", "", "Auth, cache")
    project.run("learning-promote", "cache the token", "p2", 4, "cache,JWT", "--category", "Security")
    (item,) = load_global(project)["learnings"]
    assert item["tags"] == ["auth", "cache", "jwt"]
    assert item["category"] == "security"
    assert item["source_phase"] is None  # first sighting had no phase


@pytest.mark.parametrize(
    "args,code",
    [
        (("",), "invalid_content"),
        (("  \n ",), "invalid_content"),
        (("...!",), "invalid_content"),
        (("x" * 1001,), "content_too_long"),
        (("ok lesson", "p", "three"), "invalid_argument"),
        (("ok lesson", "p", "--", "-1"), "invalid_argument"),
        (("ok lesson", "p", "1.5"), "invalid_argument"),
        (("ok lesson", "x" * 201), "invalid_argument"),
        (("ok lesson", "p", "1", ",".join(f"t{i}" for i in range(11))), "invalid_tags"),
        (("ok lesson", "p", "1", "y" * 41), "invalid_tags"),
        (("ok lesson", "--category", "testing"), "invalid_category"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(project, args, code):
    err = project.run("learning-promote", *args).error
    assert err["code"] == code
    assert not global_file(project).exists() and not global_file(project, "projects.json").exists()


def test_bad_utf8_on_stdin(project):
    assert project.run("learning-promote", "-", input=b"\xff\xfe bad").error["code"] == "invalid_utf8"


# ---------------------------------------------------------------- the cap


def test_cap_rotates_out_the_least_recently_seen_non_promoted(project, monkeypatch):
    entries = [entry(i, last_seen=f"2026-01-{1 + i // 10:02d}T00:{i % 60:02d}:00Z") for i in range(100)]
    entries[0]["promoted"] = True  # the oldest is promoted: it stays
    entries[0]["occurrence_count"] = 3
    entries[57]["last_seen"] = "2025-06-01T00:00:00Z"  # the stalest non-promoted one
    write_global(project, {"version": 2, "learnings": entries})
    monkeypatch.setenv("AETHER_NOW", "2026-03-01T00:00:00Z")
    result = project.run("learning-promote", "A brand new lesson", "p-new").json
    assert result["rotated_out"] == [entries[57]["id"]]
    assert result["total"] == 100 and result["stored"] is True
    ids = [e["id"] for e in load_global(project)["learnings"]]
    assert len(ids) == 100 and entries[0]["id"] in ids and entries[57]["id"] not in ids
    assert ids[-1] == result["id"]
    # A learning that matches an existing one never rotates anything out.
    again = project.run("learning-promote", "learning number 1", "p-other").json
    assert again["rotated_out"] == [] and again["count"] == 2 and again["total"] == 100


def test_cap_refuses_when_all_are_promoted(project):
    path = write_global(project, {"version": 2, "learnings": [entry(i, promoted=True) for i in range(100)]})
    before = path.read_bytes()
    err = project.run("learning-promote", "One more lesson", "p").error
    assert err["code"] == "global_learnings_full" and err["cap"] == 100
    assert "by hand" in err["error"]
    assert path.read_bytes() == before
    assert not global_file(project, "projects.json").exists()
    # Seeing an existing learning again still works at the cap.
    assert project.run("learning-promote", "learning number 5", "p").json["count"] == 4


def test_oversized_store_is_brought_back_to_the_cap(project):
    write_global(project, {"version": 2, "learnings": [entry(i) for i in range(103)]})
    result = project.run("learning-promote", "fresh lesson", "p").json
    assert len(result["rotated_out"]) == 4 and result["total"] == 100


# ---------------------------------------------------------------- v4.4 files and corruption


V44 = {
    "version": 1,
    "learnings": [
        {
            "id": "global_1738000000_ab12",
            "content": "Validate webhook signatures before parsing",
            "source_project": "session_1738000000_x1",
            "source_phase": 2,
            "tags": ["security", "webhooks"],
            "promoted_at": "2025-01-27T18:00:00Z",
        },
        {
            "id": "global_1738000500_cd34",
            "content": "Keep fixtures small",
            "source_project": "session_x2",
            "source_phase": 1,
            "tags": [],
            "promoted_at": "2025-01-28T10:00:00Z",
        },
    ],
}


def test_v44_learnings_load_as_promoted_and_survive_a_write(project):
    write_global(project, V44)
    loaded = project.run("learning-load").json
    assert loaded["count"] == 2 and loaded["total"] == 2
    assert {e["id"] for e in loaded["learnings"]} == {"global_1738000000_ab12", "global_1738000500_cd34"}
    assert all(e["promoted"] is True for e in loaded["learnings"])

    project.run("learning-promote", "A new lesson", "p-new")
    again = project.run("learning-promote", "validate webhook signatures before parsing.", "p-new").json
    assert again["id"] == "global_1738000000_ab12" and again["count"] == 2 and again["promoted"] is True
    stored = load_global(project)
    assert stored["version"] == 2
    old = {e["id"]: e for e in stored["learnings"]}["global_1738000000_ab12"]
    assert old["source_project"] == "session_1738000000_x1" and old["source_phase"] == 2
    assert old["promoted_at"] == "2025-01-27T18:00:00Z" and old["tags"] == ["security", "webhooks"]
    assert old["source_projects"] == ["session_1738000000_x1", "p-new"]
    assert [e["id"] for e in project.run("learning-load").json["learnings"]][0] == "global_1738000000_ab12"


def test_corrupt_global_file_is_reported_and_kept(project):
    path = write_global(project, {"version": 2, "learnings": [{"id": 3}]})
    before = path.read_bytes()
    for args in (("learning-promote", "lesson", "p"), ("learning-load",), ("learning-inject", "x"), ("learning-init-global",)):
        err = project.run(*args).error
        assert err["code"] == "state_corrupt", args
    path.write_text("{not json", encoding="utf-8")
    assert project.run("learning-load").error["code"] == "state_corrupt"
    path.write_bytes(before)
    assert path.read_bytes() == before


# ---------------------------------------------------------------- load, init-global, inject


def test_load_returns_promoted_only_strongest_first(project):
    write_global(
        project,
        {
            "version": 2,
            "learnings": [
                entry(1),
                entry(2, promoted=True, occurrence_count=3),
                entry(3, promoted=True, occurrence_count=7),
                entry(4, promoted=True, occurrence_count=3, last_seen="2026-05-01T00:00:00Z"),
            ],
        },
    )
    loaded = project.run("learning-load").json
    assert [e["id"] for e in loaded["learnings"]] == ["global_1_0003", "global_1_0004", "global_1_0002"]
    assert (loaded["count"], loaded["total"]) == (3, 4)


def test_load_without_a_global_store(project):
    assert project.run("learning-load").json == {"learnings": [], "count": 0, "total": 0}
    assert not project.global_dir.exists()


def test_init_global_creates_once(project):
    first = project.run("learning-init-global").json
    assert first["created"] is True and first["path"] == str(global_file(project))
    assert load_global(project) == {"learnings": [], "version": 2}
    project.run("learning-promote", "keep me", "p")
    assert project.run("learning-init-global").json["created"] is False
    assert len(load_global(project)["learnings"]) == 1


def test_inject_matches_tags_or_category_case_insensitively(project):
    write_global(
        project,
        {
            "version": 2,
            "learnings": [
                entry(1, tags=["Auth", "jwt"]),
                entry(2, category="security"),
                entry(3, tags=["perf"], promoted=True),
                entry(4, tags=["authentication"]),  # "auth" is a keyword, not a substring
                entry(5, category="performance", promoted=True, occurrence_count=5),
            ],
        },
    )
    result = project.run("learning-inject", " AUTH , Security,perf").json
    assert result["keywords"] == ["auth", "security", "perf"]
    assert [e["id"] for e in result["learnings"]] == ["global_1_0003", "global_1_0001", "global_1_0002"]
    assert result["count"] == result["matched"] == 3
    assert "learning number 3" in result["text"] and "promoted" in result["text"]
    text = project.run("learning-inject", "performance", "--text").stdout
    assert text.startswith("GLOBAL LEARNINGS") and "[performance] learning number 5" in text
    none = project.run("learning-inject", "kubernetes").json
    assert none["learnings"] == [] and "(none)" in none["text"]


def test_inject_limit_and_empty_keywords(project):
    write_global(project, {"version": 2, "learnings": [entry(i, tags=["db"]) for i in range(15)]})
    result = project.run("learning-inject", "db").json
    assert result["count"] == learning.INJECT_LIMIT and result["matched"] == 15
    assert project.run("learning-inject", " , ,").error["code"] == "invalid_argument"


# ---------------------------------------------------------------- projects.json


def test_projects_index_records_colony_details(project):
    project.run("colony-init", "Build a REST API for notes", "--mode", "FULL")
    plan = project.load("PROJECT_PLAN.json")
    plan["phases"] = [
        {"id": 1, "name": "one", "status": "completed", "tasks": []},
        {"id": 2, "name": "two", "status": "completed", "tasks": []},
        {"id": 3, "name": "three", "status": "pending", "tasks": []},
    ]
    project.write("PROJECT_PLAN.json", plan)
    colony = project.load("COLONY_STATE.json")
    first = project.run("learning-promote", "first lesson").json
    project.run("learning-promote", "first lesson")  # not new to the project: not counted again
    project.run("learning-promote", "second lesson")
    project.run("learning-promote", "lesson from elsewhere", "other-project")
    index = load_global(project, "projects.json")
    assert index["version"] == 1
    rows = {p["project_id"]: p for p in index["projects"]}
    mine = rows[first["project_id"]]
    assert first["project_id"] == colony["project_id"]
    assert mine["goal"] == "Build a REST API for notes" and mine["mode"] == "FULL"
    assert mine["session_id"] == colony["session_id"]
    assert mine["phases_completed"] == 2 and mine["learnings_promoted"] == 2
    other = rows["other-project"]
    assert other["goal"] is None and other["learnings_promoted"] == 1


def test_corrupt_colony_state_only_warns(project):
    project.write("COLONY_STATE.json", "{broken")
    result = project.run("learning-promote", "lesson", "").json
    assert result["stored"] is True and "warnings" in result
    assert "corrupt" in result["warnings"][0]


def test_through_the_launcher(project):
    result = project.sh("learning-promote", "-", "", "1", "ci", input="Cache pip downloads in CI\n")
    assert result.json["count"] == 1
    assert project.sh("learning-inject", "ci").json["count"] == 1
