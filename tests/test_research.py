"""Research fan-out (seed 004, phase 3): research-plan parses bulleted, numbered and headed lists
(nested, with blank lines) or derives requirements from the goal or colonize findings; each is a
scout task with a safe, unique brief path; research-collect checks the returned paths."""

import json

import pytest

from aether.colony import requirements, research

SPEC = """# Technical spec

## Architecture
Three services.

- not a research item: it sits outside the research section

### Research Requirements

- FastAPI async best practices and error handling patterns
  - dependency injection
  - background tasks

* PostgreSQL schema design for
  high-concurrency applications
1. React state management with Redux Toolkit

## Testing
- pytest everywhere
"""


@pytest.fixture
def colony(project):
    project.run("colony-init", "Build a todo API with FastAPI and PostgreSQL, with JWT authentication; deploy it with Docker.").json
    return project


def plan(project, text, *extra):
    return project.run("research-plan", "-", *extra, input=text)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("- one topic here\n- two topic here\n", ["one topic here", "two topic here"]),
        ("1. first thing\n2) second thing\n\n\n3. third thing\n", ["first thing", "second thing", "third thing"]),
        ("### Alpha caching\nwhy it matters\n\n### Beta queues\n", ["Alpha caching", "Beta queues"]),
        ("**Auth flows**\n- [ ] OAuth2 refresh tokens\n- [x] session cookies\n", ["OAuth2 refresh tokens", "session cookies"]),
        ("-   spaced   out   item  \n\t- tabbed nested item\n", ["spaced out item"]),
        ("- dup item\n- DUP item\n- other\n", ["dup item", "other"]),
    ],
)
def test_list_formats(text, expected):
    assert [r["requirement"] for r in requirements.parse_list(text)] == expected


def test_a_research_section_with_nesting_continuations_and_blank_lines():
    found = requirements.parse_list(SPEC)
    assert [r["requirement"] for r in found] == [
        "FastAPI async best practices and error handling patterns",
        "PostgreSQL schema design for high-concurrency applications",
        "React state management with Redux Toolkit",
    ]
    assert found[0]["details"] == ["dependency injection", "background tasks"]


def test_headings_give_details_when_there_is_no_list():
    found = requirements.parse_list("## Caching layer\nRedis or memcached?\nTTL policy\n## Rate limiting\n")
    assert found == [
        {"requirement": "Caching layer", "details": ["Redis or memcached?", "TTL policy"]},
        {"requirement": "Rate limiting", "details": []},
    ]


def test_derived_requirements_name_a_technology_or_concern():
    goal = "Build a todo API with FastAPI and PostgreSQL, with JWT authentication. Make it nice for people. Deploy it with Docker."
    assert [r["requirement"] for r in requirements.derive(goal)] == [
        "Build a todo API with FastAPI and PostgreSQL",
        "with JWT authentication",
        "Deploy it with Docker",
    ]
    assert requirements.derive("Make something lovely for my friends.") == []
    assert requirements.names_topic("use Next.js with GraphQL and OAuth2") == ["Next.js", "GraphQL", "OAuth2"]


def test_slugs_are_safe_and_unique():
    taken = set()
    names = [research.slug(t, taken) for t in ("Ünïcödé façade — design!", "../../etc/passwd", "", "Ünïcödé façade design", "x" * 200)]
    assert names[0] == "unicode-facade-design" and names[1] == "etc-passwd" and names[2] == "research"
    assert names[3] == "unicode-facade-design-2"
    assert len(names[4]) <= research.MAX_SLUG
    assert all(set(n) <= set("abcdefghijklmnopqrstuvwxyz0123456789-") for n in names)


def test_plan_from_a_list_renders_one_brief_per_scout(colony):
    out = plan(colony, SPEC).json
    assert out["count"] == 3 and out["source"] == "list"
    t = out["tasks"]
    assert [x["id"] for x in t] == ["r1", "r2", "r3"]
    assert t[0]["brief_path"] == ".aether/research/fastapi-async-best-practices-and-error-handling.md"
    assert all(x["subagent_type"] == "ant:scout" for x in t)
    assert "ONE message" in out["text"]
    brief = t[0]["text"]
    for piece in (
        "Research: FastAPI async best practices",
        "  - dependency injection",
        f"BRIEF: {t[0]['brief_path']}",
        "ACTIVE PHEROMONES (as sensed by scout)",
        "scout r1 of 3",
    ):
        assert piece in brief
    stored = colony.load("research.json")
    assert stored["version"] == 1 and [x["status"] for x in stored["plans"][-1]["tasks"]] == ["pending"] * 3


def test_plan_from_the_goal_and_from_colonize_findings(colony):
    out = colony.run("research-plan", "--from", "goal").json
    assert out["source"] == "goal" and [x["requirement"] for x in out["tasks"]][-1] == "deploy it with Docker"
    findings = "Found a Flask app.\nTests use pytest with 40% coverage; no CI.\nNothing else of note."
    got = colony.run("research-plan", "-", "--from", "colonize", input=findings).json
    assert [x["requirement"] for x in got["tasks"]] == ["Found a Flask app", "Tests use pytest with 40% coverage, no CI"]


def test_bad_inputs(colony, project):
    assert plan(colony, "just prose, no list at all").error["code"] == "no_research_items"
    too_many = "\n".join(f"- topic number {i}" for i in range(9))
    assert plan(colony, too_many).error["code"] == "too_many_items"
    assert colony.run("research-plan").error["code"] == "usage_error"
    assert colony.run("research-plan", "-", "--from", "goal", input="- x").error["code"] == "usage_error"
    assert colony.run("research-plan", "-", "--from", "colonize", input="nothing here at all").error["code"] == "no_research_items"
    assert plan(colony, "- " + "x" * 200001).error["code"] == "content_too_long"
    assert not colony.file("research.json").exists()


def test_needs_a_colony(project):
    assert project.run("research-plan", "-", input="- FastAPI").error["code"] == "state_missing"


def test_derived_lists_are_capped_not_refused(colony):
    text = " ".join(f"Use Redis{i} for caching layer {i}." for i in range(12))
    out = colony.run("research-plan", "-", "--from", "colonize", input=text).json
    assert out["count"] == research.MAX_TASKS and out["warnings"]


def test_collect_checks_each_returned_path(colony, tmp_path):
    tasks = plan(colony, SPEC).json["tasks"]
    folder = colony.root / ".aether" / "research"
    folder.mkdir(parents=True)
    (colony.root / tasks[0]["brief_path"]).write_text("# FastAPI\n- use lifespan events\n")
    (colony.root / tasks[1]["brief_path"]).write_text("   \n\n")  # empty
    secret = tmp_path / "secret.md"
    secret.write_text("not a brief")
    (folder / "escape.md").symlink_to(secret)
    answers = (
        f"Done.\nBRIEF: {tasks[0]['brief_path']}\n"
        f"BRIEF: {tasks[1]['brief_path']}\n"
        "BRIEF: .aether/research/escape.md\n"
        "BRIEF: ../../etc/notes.md\n"
    )
    out = colony.run("research-collect", "-", input=answers).json
    assert out["paths"] == [tasks[0]["brief_path"]] and out["complete"] is False
    assert {r["problem"] for r in out["rejected"]} == {"empty", "outside_research_dir"}
    assert {m["task"]: m["problem"] for m in out["missing"]} == {"r2": "empty", "r3": "missing"}
    assert out["text"].startswith("RESEARCH BRIEFS") and "use lifespan" not in out["text"]  # paths, not contents
    # the scouts finish; a bare collect looks where each brief was asked to be
    (colony.root / tasks[1]["brief_path"]).write_text("# schema\n")
    (colony.root / tasks[2]["brief_path"]).write_text("# redux\n")
    done = colony.run("research-collect").json
    assert done["complete"] is True and done["paths"] == [t["brief_path"] for t in tasks]
    stored = colony.load("research.json")["plans"][-1]
    assert [t["status"] for t in stored["tasks"]] == ["collected"] * 3


def test_collect_accepts_json_and_extra_briefs(colony):
    tasks = plan(colony, "- Redis caching\n").json["tasks"]
    folder = colony.root / ".aether" / "research"
    folder.mkdir(parents=True)
    (colony.root / tasks[0]["brief_path"]).write_text("# redis\n")
    (folder / "bonus.md").write_text("# extra\n")
    out = colony.run("research-collect", "-", input=json.dumps({"r1": tasks[0]["brief_path"], "r9": ".aether/research/bonus.md"})).json
    assert out["paths"] == [tasks[0]["brief_path"], ".aether/research/bonus.md"] and out["complete"]
    assert colony.run("research-collect", "-", input="[1, 2]").json["paths"] == [
        tasks[0]["brief_path"],
    ]
    assert colony.run("research-collect", "-", input='"just a string"').error["code"] == "invalid_json"


def test_collect_without_a_plan(colony):
    assert colony.run("research-collect").error["code"] == "no_research_plan"
