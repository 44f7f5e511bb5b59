"""The helper drives /ant:plan: scouts, then planner ↔ critic until the loop completes, the plan
loaded — through `aether next --plan` and `aether record`, and the plan step rules."""

import json
import re

from aether.rules import drive as rules


def ok(project, *args, input=None):
    out = project.run(*args, input=input)
    assert out.code == 0, out.stderr
    return out.json


PLAN = {
    "goal": "Build a todo API",
    "phases": [
        {
            "id": 1,
            "name": "Core",
            "description": "store and API",
            "tasks": [
                {"id": "1.1", "description": "the store", "depends_on": []},
                {"id": "1.2", "description": "the API", "depends_on": ["1.1"]},
            ],
            "success_criteria": ["tests pass"],
        },
        {
            "id": 2,
            "name": "CLI",
            "description": "a command line",
            "tasks": [{"id": "2.1", "description": "the CLI", "depends_on": []}],
            "success_criteria": ["it runs"],
        },
    ],
}


def critique(score):
    return (
        f"## Planning Assessment\n### Overall Score\n{score}\n### Assessment Summary\nok\n"
        f"### Key Issues\n- more tests\n### Recommendations\n- add a test task"
    )


def ids(action):
    return [s["id"] for s in action["spawns"]]


def brief_of(project, action, n=0):
    path = re.search(r"(\.aether/spawns/\S+\.md)", action["spawns"][n]["prompt"]).group(1)
    return (project.root / path).read_text("utf-8")


def test_a_plan_driven_from_research_to_loaded(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = project
    ok(p, "colony-init", "Build a todo API")
    scouts = ok(p, "next", "--plan", "-", input="- REST frameworks for Python\n- JSON storage\n")
    assert ids(scouts) == ["scout-r1", "scout-r2"]
    assert ids(ok(p, "next")) == ["scout-r1", "scout-r2"]  # asked again: the same spawns
    for n, sid in enumerate(ids(scouts)):
        brief = brief_of(p, scouts, n)
        path = re.search(r"^BRIEF: (\S+)$", brief, re.M).group(1)
        (p.root / path).parent.mkdir(parents=True, exist_ok=True)
        (p.root / path).write_text("# findings\n", "utf-8")
        out = ok(p, "record", sid, "-", input=f"Done.\nBRIEF: {path}\n")
    planner = out["next"]
    assert ids(planner) == ["planner1"]
    first = brief_of(p, planner)
    assert "--- PLANNER ---" in first and "RESEARCH BRIEFS" in first and "# findings" not in first
    refused = ok(p, "record", "planner1", "-", input="no plan")
    assert ids(refused["next"]) == ["planner1-2"] and "refused" in brief_of(p, refused["next"])
    critic = ok(p, "record", "planner1-2", "-", input="```json\n" + json.dumps(PLAN) + "\n```")["next"]
    assert ids(critic) == ["critic1"] and "--- PLAN CRITIC ---" in brief_of(p, critic)
    again = ok(p, "record", "critic1", "-", input=critique(70))["next"]
    assert ids(again) == ["planner2"] and "LOOP FEEDBACK" in brief_of(p, again)
    ok(p, "record", "planner2", "-", input=json.dumps(PLAN))
    done = ok(p, "record", "critic2", "-", input=critique(90))["next"]
    assert done["action"] == "done" and done["command"] == "/ant:build 1"
    stored = json.loads((p.data / "PROJECT_PLAN.json").read_text("utf-8"))
    assert [ph["name"] for ph in stored["phases"]] == ["Core", "CLI"]
    loop = json.loads((p.data / "loops.json").read_text("utf-8"))["loops"][-1]
    assert [i["score"] for i in loop["iterations"]] == [70, 90] and loop["status"] == "complete"


def test_the_code_loops_setting_leaves_the_plan_loop_working(project, monkeypatch):
    """`code_loop:` in .aether/config.yaml, as the refinement-loops decision documents it: the plan
    loop (which reads config.yaml through the one reader) takes the file as valid."""
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = project
    ok(p, "colony-init", "Build a todo API")
    (p.root / ".aether" / "config.yaml").write_text("code_loop:\n  commit_iterations: true\nbudget:\n  run: 2M\n")
    scouts = ok(p, "next", "--plan", "-", input="- REST frameworks for Python\n")
    assert ids(scouts) == ["scout-r1"]
    from aether.state import settings

    monkeypatch.chdir(p.root)
    assert settings.code_loop() == {"commit_iterations": True}
    (p.root / ".aether" / "config.yaml").write_text("code_loop:\n  commit_iteration: true\n")
    err = None
    from aether.core.exceptions import AetherError

    try:
        settings.code_loop()
    except AetherError as exc:
        err = exc
    assert err.code == "invalid_config" and "did you mean commit_iterations?" in err.message
    (p.root / ".aether" / "config.yaml").write_text("code_loops:\n  commit_iterations: true\n")
    err = p.run("next", "--plan").error
    assert err["code"] == "invalid_config" and "did you mean code_loop?" in err["error"]


def test_plan_rules_one_branch_each():
    step = rules.next_plan_step
    assert step({}) == {"do": "plan_start"}
    assert step({"started": True}) == {"do": "research_plan"}
    assert step({"started": True, "research": {"tasks": ["r1"]}}) == {"do": "spawn_scouts"}
    assert step({"started": True, "research": {"tasks": ["r1"], "recorded": True}}) == {"do": "research_collect"}
    base = {"started": True, "research": {"tasks": [], "collected": True}}
    assert step(base) == {"do": "loop_init"}
    active = {"status": "active"}
    assert step({**base, "loop": active}) == {"do": "spawn_planner"}
    assert step({**base, "loop": {**active, "draft": True}}) == {"do": "spawn_critic"}
    assert step({**base, "loop": {**active, "draft": True, "critic": True}}) == {"do": "decide"}
    assert step({**base, "loop": active, "refusals": 2}) == {"do": "stop", "why": "refused"}
    assert step({**base, "loop": {"status": "awaiting_user"}}) == {"do": "ask"}
    assert step({**base, "loop": {"status": "complete"}}) == {"do": "load"}
    assert step({**base, "loop": {"status": "complete"}, "loaded": True}) == {"do": "done"}


def test_colonize_records_the_maps_itself(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = project
    ok(p, "colony-init", "Tidy a small app")
    for i in range(20):
        (p.root / f"mod{i:02}.py").write_text(f"X = {i}\n", "utf-8")
    (p.root / "tests").mkdir()
    (p.root / "tests" / "test_x.py").write_text("def test_x():\n    assert True\n", "utf-8")
    action = ok(p, "next", "--colonize")
    assert action["action"] == "spawn" and all(s["subagent_type"] == "ant:colonizer" for s in action["spawns"])
    spawned = ids(action)
    maps = {
        sid: {
            "status": "completed",
            "lens": "x",
            "summary": f"summary of {sid}",
            "findings": [{"area": "mod00.py", "note": "a constant"}],
            "suggested_signals": [{"type": "FOCUS", "content": f"keep {sid} small"}],
        }
        for sid in spawned
    }
    for sid in spawned[:-1]:
        assert "next" not in ok(p, "record", sid, "-", input="```json\n" + json.dumps(maps[sid]) + "\n```")
    done = ok(p, "record", spawned[-1], "-", input="no json at all")["next"]
    assert done["action"] == "done" and done["command"] == "/ant:plan"
    assert all(f"summary of {sid}" in done["text"] for sid in spawned[:-1])
    assert '/ant:focus "keep' in done["text"]  # no steering signal yet: the suggestions, ready to run
    decisions = json.loads((p.data / "memory.json").read_text("utf-8"))["decisions"]
    codebase = [d["content"] for d in decisions if d["type"] == "codebase"]
    assert len(codebase) == len(spawned) and codebase[-1].endswith("(no map block) no json at all")
    events = [e["type"] for e in json.loads((p.data / "events.json").read_text("utf-8"))["events"]]
    assert events.count("colonized") == 1


def test_colonize_rules():
    step = rules.next_colonize_step
    assert step({}) == {"do": "detect"}
    assert step({"detected": True, "colonizers": {"c1": "dispatched"}}) == {"do": "spawn_colonizers"}
    assert step({"detected": True, "colonizers": {"c1": "recorded"}}) == {"do": "summarize"}
    assert step({"detected": True, "colonizers": {"c1": "recorded"}, "summarized": True}) == {"do": "done"}


def test_a_stalled_plan_loop_asks_and_accept_loads_the_draft(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = project
    ok(p, "colony-init", "Build a todo API")
    assert p.run("next", "--plan", "--accept").code == 2  # nothing asked yet
    action = ok(p, "next", "--plan")
    while action["action"] == "spawn" and ids(action)[0].startswith("scout"):
        for sid in ids(action):
            action = ok(p, "record", sid, "-", input="nothing found")["next"] or action
    for score in (60, 62, 63):  # stagnation: under 5 points in two rounds
        action = ok(p, "record", ids(action)[0], "-", input=json.dumps(PLAN))["next"]
        action = ok(p, "record", ids(action)[0], "-", input=critique(score))["next"]
    assert action["action"] == "ask" and "/ant:plan --accept" in action["text"]
    assert "aether feedback-store" not in action["text"]
    done = ok(p, "next", "--plan", "--accept")
    assert done["action"] == "done" and done["command"] == "/ant:build 1"
    assert [ph["name"] for ph in json.loads((p.data / "PROJECT_PLAN.json").read_text("utf-8"))["phases"]] == ["Core", "CLI"]


def _to_the_planner(p):
    ok(p, "colony-init", "Build a todo API")
    action = ok(p, "next", "--plan")
    while ids(action)[0].startswith("scout"):
        for sid in ids(action):
            action = ok(p, "record", sid, "-", input="nothing found")["next"] or action
    return action


def _stop_of(p, answers):
    """The action after each answer in turn (a refused answer is asked for once more)."""
    action = _to_the_planner(p)
    for text in answers:
        action = ok(p, "record", ids(action)[0], "-", input=text)["next"]
    return action


def _with(phases=None, task=None):
    plan = json.loads(json.dumps(PLAN))
    if phases:
        plan["phases"] = [{**plan["phases"][1], "id": n, "name": f"Phase {n}"} for n in range(1, phases + 1)]
    if task:
        plan["phases"][0]["tasks"][0].update(task)
    return json.dumps(plan)


def test_a_draft_refused_twice_tells_the_person_what_was_wrong_and_how_to_go_on(project, monkeypatch):
    """The planner's brief says what to fix; the stop's text is the person's: what was wrong, how to go on."""
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = project
    over = _with(phases=51)
    action = _to_the_planner(p)
    again = ok(p, "record", ids(action)[0], "-", input=over)["next"]
    assert "fix them all and store it again" in brief_of(p, again)  # the planner's own instruction stays
    stop = ok(p, "record", ids(again)[0], "-", input=over)["next"]
    assert (stop["action"], stop["why"], stop["command"]) == ("stop", "refused", "/ant:plan")
    text = stop["text"]
    assert "fix them all" not in text and "store it again" not in text, text
    assert "The plan loop stopped: Aether refused the planner's draft twice" in text
    assert "What was wrong: its last draft has 1 defect: phases: has 51 phases; the limit is 50." in text
    assert "No plan was loaded" in text and "run /ant:plan again" in text and "/ant:plan <" in text
    assert not (p.data / "PROJECT_PLAN.json").exists() or not json.loads((p.data / "PROJECT_PLAN.json").read_text("utf-8")).get("phases")


def test_a_task_that_depends_on_itself_stops_the_loop_with_the_persons_text(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    itself = _with(task={"depends_on": ["1.1"]})
    stop = _stop_of(project, [itself, itself])
    assert stop["action"] == "stop" and "fix them all" not in stop["text"]
    assert "phases[0].tasks[0].depends_on[0]: a task cannot depend on itself." in stop["text"], stop["text"]


def test_a_critic_without_a_score_twice_stops_the_loop_with_the_persons_text(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = project
    action = _to_the_planner(p)
    critic = ok(p, "record", ids(action)[0], "-", input=json.dumps(PLAN))["next"]
    again = ok(p, "record", ids(critic)[0], "-", input="Looks fine to me.")["next"]
    assert ids(again) == ["critic1-2"] and "start it with a `### Overall Score` heading" in brief_of(p, again)
    stop = ok(p, "record", "critic1-2", "-", input="Still fine.")["next"]
    assert (stop["action"], stop["why"]) == ("stop", "refused")
    text = stop["text"]
    assert "The plan loop stopped: Aether refused the critic's answer twice" in text and "start it with" not in text, text
    assert "What was wrong: it gave no score Aether can read (an Overall Score from 0 to 100)." in text
    assert "run /ant:plan again" in text
