"""The helper drives the build: `aether next` and `aether record` through a whole phase, the
hooks' payloads as Claude Code sends them, and every branch of the step rules."""

import json

from aether.rules import drive as rules

from helpers.colony import PHASE_PLAN, ok, write
from helpers.drive import (
    ASSIGNMENT,
    approved_wave,
    brief_at,
    drive,
    ran_checks,
    result,
    scope_of,
    to_verification,
    verification,
    watcher,
    with_tests,
)


def ids(action):
    return [s["id"] for s in action["spawns"]]


def test_a_phase_driven_by_next_and_record(drive_colony):
    p = drive_colony
    lead = ok(p, "next", "--build", "1")
    assert lead["action"] == "spawn" and ids(lead) == ["lead1"]
    call = lead["spawns"][0]
    assert call["subagent_type"] == "ant:route-setter" and len(call["prompt"]) < 150
    brief_path = p.root / call["prompt"].split("Your brief is ")[1].split(" ")[0]
    assert "--- PHASE LEAD ---" in brief_path.read_text("utf-8")
    # asked again: the same spawn, not a second one
    assert ids(ok(p, "next")) == ["lead1"]

    asked = ok(p, "record", "lead1", "-", input="```json\n" + json.dumps(ASSIGNMENT) + "\n```")
    assert asked["next"]["action"] == "ask" and asked["next"]["command"] == "/ant:build 1 --approve"
    assert ok(p, "next")["action"] == "ask"

    wave1 = ok(p, "next", "--build", "1", "--approve")
    assert ids(wave1) == ["w1", "w2"]
    write(p, "src/todo.py")
    first = ok(p, "record", "w1", "-", input=result(files_created=["src/todo.py"]))
    assert first["waiting"] == ["w2"] and "next" not in first
    # w2 claims a file it never wrote: failed, and the ladder retries it
    second = ok(p, "record", "w2", "-", input=result(files_created=["src/api.py"]))
    assert "claimed files do not hold" in second["line"]
    assert ids(second["next"]) == ["r1"]
    write(p, "src/api.py")
    after_retry = ok(p, "record", "r1", "-", input=result(files_created=["src/api.py"]))
    # conflicts checked, the reviewer planned: v1
    assert ids(after_retry["next"]) == ["v1"]
    reviewed = ok(p, "record", "v1", "-", input='```json\n{"findings": [], "summary": "fine"}\n```')
    assert "continue" in reviewed["line"] and ids(reviewed["next"]) == ["w3"]
    write(p, "src/cli.py")
    last = ok(p, "record", "w3", "-", input=result(files_created=["src/cli.py"]))
    assert ids(last["next"]) == ["watch1"]
    watcher = json.dumps(
        {"passed": True, "score": 90, "summary": "ok", "checks": [{"name": "tests", "passed": True, "detail": "4 passed"}]}
    )
    ref = f"{scope_of(p)}/watch1"
    ran_checks(p, ref, brief_at(p, ref))  # it ran what its brief names, and each exited 0
    finished = ok(p, "record", "watch1", "-", input="```json\n" + watcher + "\n```")
    assert "tests verified" in finished["line"] and "imports verified" in finished["line"]
    assert finished["next"]["action"] in ("lessons", "done")
    tree = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]
    assert tree["status"] == "finished" and tree["review_skipped"] == {"2": "single_worker_wave"}
    if finished["next"]["action"] == "lessons":
        done = ok(p, "record", "lessons", "-", input="- keep the store small\nglobal convention: return what you add\n")
        assert done["recorded"] == 2 and done["next"]["action"] == "done"
    assert ok(p, "next")["action"] == "done"
    ledger = json.loads((p.data / "spawns.json").read_text("utf-8"))
    assert {s["local"]: s["status"] for s in ledger["spawns"]} == {k: "recorded" for k in ("lead1", "w1", "w2", "r1", "v1", "w3", "watch1")}
    answer = p.root / ".aether" / "spawns" / ledger["runs"][-1]["scope"] / "w3.answer.md"
    assert answer.read_text("utf-8") == result(files_created=["src/cli.py"])


def test_the_hooks_expand_the_brief_and_record_the_answer(drive_colony):
    p = drive_colony
    lead = ok(p, "next", "--build", "1")["spawns"][0]
    tool_input = {
        "description": lead["description"],
        "prompt": lead["prompt"],
        "subagent_type": lead["subagent_type"],
        "run_in_background": False,
    }
    pre = p.run(
        "agent-hook",
        "pre",
        input=json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": tool_input, "tool_use_id": "t1"}),
    )
    expanded = json.loads(pre.stdout)["hookSpecificOutput"]["updatedInput"]
    assert expanded["prompt"].startswith("[aether spawn ") and "--- PHASE LEAD ---" in expanded["prompt"]
    response = {
        "status": "completed",
        "content": [{"type": "text", "text": json.dumps(ASSIGNMENT)}],
        "totalTokens": 1234,
        "totalDurationMs": 5000,
        "totalToolUseCount": 3,
        "usage": {"input_tokens": 1000, "output_tokens": 234},
    }
    post = p.run(
        "agent-hook",
        "post",
        input=json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Agent", "tool_input": expanded, "tool_response": response}),
    )
    context = json.loads(post.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Aether recorded lead1 Phase Lead: 3 workers in 2 waves")
    assert "Aether next: ask" in context
    spawn = json.loads((p.data / "spawns.json").read_text("utf-8"))["spawns"][0]
    assert spawn["usage"] == {"total_tokens": 1234, "duration_ms": 5000, "tool_uses": 3, "input_tokens": 1000, "output_tokens": 234}
    # a call that is not Aether's passes untouched
    assert p.run("agent-hook", "pre", input=json.dumps({"tool_input": {"prompt": "hello"}})).stdout == ""


def test_a_refused_plan_goes_back_to_the_lead_once(drive_colony):
    p = drive_colony
    ok(p, "next", "--build", "1")
    again = ok(p, "record", "lead1", "-", input="no plan here")
    assert ids(again["next"]) == ["lead2"]
    brief = (p.root / again["next"]["spawns"][0]["prompt"].split("Your brief is ")[1].split(" ")[0]).read_text("utf-8")
    assert "Your plan 1 was refused" in brief
    stopped = ok(p, "record", "lead2", "-", input="still none")
    assert stopped["next"]["action"] == "stop" and "--resume" in stopped["next"]["text"]


# ---------------------------------------------------------------- the rules, one branch each


def node(nid, wave=1, status="planned", role="worker", **kw):
    return nid, {"id": nid, "wave": wave, "status": status, "role": role, **kw}


def tree(*nodes, waves=1, **kw):
    return {"status": "running", "max_workers": 4, "waves": [[]] * waves, "nodes": dict(nodes), **kw}


def step(t, **run):
    return rules.next_build_step({"building": True, "tree": t, "run": {"verification": {}, **run}})


def test_rules_lead_approval_and_abort():
    assert step(None) == {"do": "spawn_lead", "attempt": 1}
    assert step(None, lead_refusals=["x", "y"])["do"] == "stop"
    assert step(tree(status="awaiting_approval"))["do"] == "ask"
    assert rules.next_build_step({"building": True, "tree": tree(status="awaiting_approval"), "approve": True, "run": {}}) == {
        "do": "approve"
    }
    assert step(tree(status="aborted")) == {"do": "abort"}


def test_rules_running_failures_and_ready_spawns():
    assert step(tree(node("w1", status="running"))) == {"do": "spawn", "nodes": ["w1"], "again": True}
    assert step(tree(node("w1", status="failed", failure_decided=False))) == {"do": "decide_failure", "node": "w1"}
    t = tree(
        node("w1", status="completed"), node("r1", role="retry"), node("s1", role="sub_spawn"), node("x1", role="rerun", waits_for=["s1"])
    )
    assert step(t) == {"do": "spawn", "nodes": ["r1", "s1"]}
    t = tree(node("w1", status="completed"), node("x1", role="rerun", waits_for=["s1"]), node("s1", status="skipped"))
    assert step(t) == {"do": "spawn", "nodes": ["x1"]}
    t = tree(*[node(f"w{i}") for i in range(6)])
    assert len(step(t)["nodes"]) == 4  # no more at once than may run


def test_rules_conflicts_review_and_rebuilds():
    done = node("w1", status="completed")
    assert step(tree(done)) == {"do": "conflicts", "wave": 1}
    checked = {"conflicts": {"1": []}}
    assert step(tree(done, **checked)) == {"do": "review", "wave": 1}
    assert step(tree(done, **checked, review_skipped={"1": "single_worker_wave"})) == {"do": "finish"}
    rebuild = {"reviews": {"1": [{"action": "rebuild"}]}}
    assert step(tree(done, node("b1", role="rebuild", status="completed"), **checked, **rebuild)) == {"do": "review", "wave": 1}
    passed = {"reviews": {"1": [{"action": "rebuild"}, {"action": "continue"}]}}
    assert step(tree(done, **checked, **passed)) == {"do": "finish"}
    assert step(tree(done, node("w2", wave=2), waves=2, **checked, **passed)) == {"do": "spawn", "nodes": ["w2"]}


def test_rules_verification_code_loop_and_the_end():
    done = tree(node("w1", status="completed"), conflicts={"1": []}, review_skipped={"1": "x"})
    assert step(done, verification={"spawn": True}) == {"do": "spawn_watcher"}
    answered = {"spawn": True, "answered": True}
    assert step(done, verification=answered, code_loop={"open": True}) == {"do": "score"}
    assert step(done, verification={**answered, "scored": True}, code_loop={"open": True, "awaiting_user": True}) == {
        "do": "ask",
        "why": "code_loop",
    }
    assert step(done, verification={**answered, "scored": True}) == {"do": "finish"}
    # an answer the loop could not score: the watcher once more, then the person
    unscored = {**answered, "scored": True, "unscored": 1}
    assert step(done, verification=unscored, code_loop={"open": True}) == {"do": "spawn_watcher"}
    unscored["unscored"] = rules.MAX_SCORE_ATTEMPTS
    assert step(done, verification=unscored, code_loop={"open": True}) == {"do": "ask", "why": "unscored"}
    assert rules.next_build_step({"building": False, "run": {"finished": True, "lessons_due": True}}) == {"do": "lessons"}
    assert rules.next_build_step({"building": False, "run": {"finished": True}}) == {"do": "done"}


def test_the_post_hook_keeps_the_ants_answer_without_claude_codes_notes(drive_colony):
    """Claude Code's Agent result may open with its own note (`<tools-used-before-summary>…`,
    counted in harnessNoteCount): the answer kept is the ant's report alone (seen in the e2e runs)."""
    p = drive_colony
    lead = ok(p, "next", "--build", "1")["spawns"][0]
    tool_input = {"description": lead["description"], "prompt": lead["prompt"], "subagent_type": lead["subagent_type"]}
    report = "Three workers.\n```json\n" + json.dumps(ASSIGNMENT) + "\n```"
    response = {
        "status": "completed",
        "toolsUsed": ["Read"],
        "harnessNoteCount": 1,
        "harnessTailCount": 0,
        "content": [
            {"type": "text", "text": "<tools-used-before-summary>Read</tools-used-before-summary>\n"},
            {"type": "text", "text": report},
        ],
        "totalTokens": 10,
    }
    post = p.run(
        "agent-hook",
        "post",
        input=json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Agent", "tool_input": tool_input, "tool_response": response}),
    )
    assert "Aether recorded lead1 Phase Lead: 3 workers" in json.loads(post.stdout)["hookSpecificOutput"]["additionalContext"]
    ledger = json.loads((p.data / "spawns.json").read_text("utf-8"))
    answer = p.root / ".aether" / "spawns" / ledger["runs"][-1]["scope"] / "lead1.answer.md"
    assert answer.read_text("utf-8") == report
    # without the counts, the note alone is still left out
    from aether.colony import handback

    bare = {
        "content": [
            {"type": "text", "text": "<tools-used-before-summary>Write, Bash</tools-used-before-summary>\n"},
            {"type": "text", "text": "done"},
        ]
    }
    assert handback.answer_of(bare)[0] == "done"
    assert handback.answer_of({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})[0] == "a\nb"


# ---------------------------------------------------------------- a code loop, driven (FULL mode)


def test_a_stalled_code_loop_asks_for_the_answer_command_and_the_finish_asks_lessons_once(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    p = with_tests(project)
    ok(p, "colony-init", "Build a todo API", "--mode", "FULL")
    ok(p, "plan-load", "-", input=json.dumps(PHASE_PLAN))
    ok(p, "next", "--build", "1")
    assert ok(p, "record", "lead1", "-", input="```json\n" + json.dumps(ASSIGNMENT) + "\n```")["next"]["action"] == "ask"
    finding = ["src/todo.py:1 F401 `os` imported but unused"]
    asked = drive(
        p,
        ok(p, "next", "--build", "1", "--approve"),
        [verification(0.6, 1, finding), verification(0.8, 1, finding), verification(0.9, 1, finding)],
    )
    # the loop stalled: the user is asked, and told only the way a driven build takes the answer
    assert asked["action"] == "ask" and "Stopped: stagnation" in asked["text"]
    assert "feedback-store" not in asked["text"]
    assert asked["text"].endswith("Answer with /ant:build 1 --answer <your choice, and guidance>.")
    refined = ok(p, "next", "--build", "1", "--answer", "refine", "-", input="drop the import in src/todo.py")
    assert refined["action"] == "spawn"
    lessons = drive(p, refined, [verification(1, 0, [])])
    # FULL learns at every build: the lessons action asks for them, so the finish text does not too
    assert lessons["action"] == "lessons"
    done = ok(p, "record", "lessons", "-", input="- drop unused imports before verifying\n")["next"]
    assert done["action"] == "done" and "Phase 1" in done["text"] and "COMPLETED" in done["text"]
    assert "learning-add" not in done["text"] and "Learnings:" not in done["text"]
    loop = json.loads((p.data / "loops.json").read_text("utf-8"))["loops"][-1]
    assert [(i["score"], i["decision"]) for i in loop["iterations"]] == [
        (69, "refine"),
        (72, "refine"),
        (73.5, "user_input"),
        (100, "complete"),
    ]


GARBAGE = "LGTM!!! Everything checks out, ship it. {not json"


def full_colony(p, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    with_tests(p)
    ok(p, "colony-init", "Build a todo API", "--mode", "FULL")
    ok(p, "plan-load", "-", input=json.dumps(PHASE_PLAN))
    return p


def build_state(p):
    loop = json.loads((p.data / "loops.json").read_text("utf-8"))["loops"][-1]
    tree = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]
    return loop, tree


def test_a_verification_the_code_loop_cannot_score_is_asked_again_and_a_good_answer_goes_on(project, monkeypatch):
    p = full_colony(project, monkeypatch)
    to_verification(p)
    again = watcher(p, "watch1", GARBAGE)["next"]  # its checks ran honestly; its answer is garbage
    # the watcher is asked again, told why: no builder is sent with nothing to fix
    assert again["action"] == "spawn" and ids(again) == ["watch2"]
    brief = brief_at(p, f"{scope_of(p)}/watch2")
    assert "--- VERIFICATION ---" in brief and "Your last answer was refused — the watcher's answer is not valid JSON" in brief
    loop, tree = build_state(p)
    assert loop["iterations"] == [] and "refinements" not in tree
    assert ok(p, "next")["spawns"][0]["id"] == "watch2"  # asked again: the same spawn
    # a good second answer: the loop scores it as always (here it completes)
    lessons = watcher(p, "watch2", verification(1, 0, []))["next"]
    assert lessons["action"] == "lessons"
    loop, tree = build_state(p)
    assert [(i["score"], i["decision"]) for i in loop["iterations"]] == [(100, "complete")] and tree["status"] == "finished"
    assert json.loads((p.data / "PROJECT_PLAN.json").read_text("utf-8"))["phases"][0]["status"] == "completed"


def test_a_verification_unscored_twice_asks_the_person(project, monkeypatch):
    p = full_colony(project, monkeypatch)
    to_verification(p)
    watcher(p, "watch1", GARBAGE)
    asked = watcher(p, "watch2", '```json\n["all good"]\n```')["next"]
    assert asked["action"] == "ask" and asked["why"] == "unscored"
    assert asked["command"] == "/ant:build 1 --answer <your choice, and guidance>"
    assert rules.exit_status("ask", asked["why"]) == rules.EXIT_STATUS["question"]
    text = asked["text"]
    assert text.startswith("Phase 1's code loop could not score its verification: watch1 and watch2 answered")
    assert "no builder was sent" in text and "must be a JSON object" in text and "✓ tests:" in text
    assert "Answer with /ant:build 1 --answer <your choice, and guidance>" in text
    for choice in ("refine <words>", "accept <why>", "stop <why>"):
        assert f"  {choice}" in text, choice
    assert {k: v for k, v in ok(p, "next").items() if k in asked} == asked  # asked again: the same question
    loop, tree = build_state(p)
    assert loop["iterations"] == [] and "refinements" not in tree
    assert all(n["role"] != "refine" for n in tree["nodes"].values())
    # refine: one more watcher, told the person's words (garbage again: the person again)
    more = ok(p, "next", "--build", "1", "--answer", "refine", "-", input="run the launch check too")
    assert ids(more) == ["watch3"]
    brief = brief_at(p, f"{scope_of(p)}/watch3")
    assert "The user asked for this verification: run the launch check too" in brief and "Your last answer was refused" in brief
    assert watcher(p, "watch3", GARBAGE)["next"]["why"] == "unscored"
    # accept: the build finishes on what the checks proved, the person's word recorded
    lessons = ok(p, "next", "--build", "1", "--answer", "accept", "-", input="the checks are green, good enough")
    assert lessons["action"] == "lessons"
    record = json.loads((p.data / "phase_records.json").read_text("utf-8"))["records"][-1]
    assert record["status"] == "completed" and record["watcher"]["passed"] is True
    assert "accepted by the user: the checks are green, good enough" in record["watcher"]["summary"]
    loop, _ = build_state(p)
    assert loop["iterations"] == []


def test_a_re_verification_without_a_score_is_asked_again_then_the_person_may_stop(project, monkeypatch):
    p = full_colony(project, monkeypatch)
    ok(p, "next", "--build", "1")
    ok(p, "record", "lead1", "-", input=json.dumps(ASSIGNMENT))
    finding = ["src/todo.py:1 F401 `os` imported but unused"]
    asked = drive(p, ok(p, "next", "--build", "1", "--approve"), [verification(0.6, 1, finding), GARBAGE, GARBAGE])
    # the refinement's verify ant y1 held no score: a watcher was asked again, then the person
    assert asked["action"] == "ask" and asked["why"] == "unscored" and "y1 and watch3 answered" in asked["text"]
    loop, tree = build_state(p)
    assert [(i["score"], i["decision"]) for i in loop["iterations"]] == [(69, "refine")] and list(tree["refinements"]) == ["3"]
    stopped = ok(p, "next", "--build", "1", "--answer", "stop", "-", input="re-plan it")
    assert stopped["action"] == "stop" and stopped["text"] == "Build of phase 1 stopped: re-plan it"


# ---------------------------------------------------------------- the failure ladder, abort and resume, through the driver


def failed(task, error, confidence=90, scope="contained", files=("src/api.py",), category="logic"):
    return (
        "```json\n"
        + json.dumps(
            {
                "status": "failed",
                "summary": error,
                "files_created": [],
                "files_modified": [],
                "failure": {
                    "task": task,
                    "error": error,
                    "root_cause": "?",
                    "suggested_fix": "fix it",
                    "confidence": confidence,
                    "fix_scope": scope,
                    "files": list(files),
                    "category": category,
                },
            }
        )
        + "\n```"
    )


def test_a_security_failure_aborts_the_phase_with_the_report(drive_colony):
    p = drive_colony
    approved_wave(p)
    write(p, "src/todo.py")
    ok(p, "record", "w1", "-", input=result(files_created=["src/todo.py"]))
    stopped = ok(p, "record", "w2", "-", input=failed("1.3", "SQL injection in the query", category="security"))
    action = stopped["next"]
    assert action["action"] == "stop" and action["why"] == "abort_phase"
    assert "AETHER BUILD ABORTED — phase 1" in action["text"] and "Recovery options:" in action["text"]
    colony_state = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))
    assert colony_state["state"] == "READY" and colony_state["spawn_tree"]["status"] == "aborted"
    # the same command again starts the phase over: a new run, a new Phase Lead
    again = ok(p, "next", "--build", "1")
    assert ids(again) == ["lead1"] and again["run"] != action["run"]


def test_a_debugger_that_cannot_diagnose_skips_the_task_and_the_build_goes_on(drive_colony):
    p = drive_colony
    approved_wave(p)
    write(p, "src/todo.py")
    ok(p, "record", "w1", "-", input=result(files_created=["src/todo.py"]))
    debug = ok(p, "record", "w2", "-", input=failed("1.3", "KeyError: 'id'", confidence=40))["next"]
    assert ids(debug) == ["d1"]
    undiagnosable = "```json\n" + json.dumps({"status": "failed", "diagnosis": "UNDIAGNOSABLE: no idea", "fix_applied": False}) + "\n```"
    after = ok(p, "record", "d1", "-", input=undiagnosable)["next"]
    assert ids(after) == ["v1"]  # the task is failed, the wave goes on to its review
    tree = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]
    assert tree["failed_tasks"] == {"1.3": "skip"} or tree["failed_tasks"] == {"1.3": "flag"}


def test_a_spawn_launched_but_never_recorded_is_handed_out_again(drive_colony):
    p = drive_colony
    wave = approved_wave(p)
    for spawn in wave["spawns"]:  # the PreToolUse hook put the briefs in; then the session died
        pre = p.run(
            "agent-hook",
            "pre",
            input=json.dumps(
                {
                    "tool_input": {"prompt": spawn["prompt"], "description": spawn["description"], "subagent_type": spawn["subagent_type"]},
                    "tool_use_id": "t-" + spawn["id"],
                }
            ),
        )
        assert json.loads(pre.stdout)["hookSpecificOutput"]["updatedInput"]["prompt"].startswith("[aether spawn")
    ledger = json.loads((p.data / "spawns.json").read_text("utf-8"))
    assert [s["status"] for s in ledger["spawns"] if s["local"] in ("w1", "w2")] == ["launched", "launched"]
    again = ok(p, "next")  # a new session: the same spawns, same briefs, nothing new planned
    assert again["spawns"] == wave["spawns"]
    tree = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]
    assert sorted(tree["nodes"]) == ["w1", "w2", "w3"]
    write(p, "src/todo.py")
    ok(p, "record", "w1", "-", input=result(files_created=["src/todo.py"]))
    assert ok(p, "record", "w1", "-", input="anything")["already_recorded"] is True


def test_an_unknown_spawn_and_a_bad_answer_are_clear_errors(drive_colony):
    p = drive_colony
    approved_wave(p)
    out = p.run("record", "w9", "-", input="x")
    assert out.code == 1 and json.loads(out.stderr)["code"] == "unknown_spawn"
    # an answer without a result block fails the spawn (the ladder decides), it is not lost
    nxt = ok(p, "record", "w1", "-", input="I did it, trust me")
    spawns = json.loads((p.data / "spawns.json").read_text("utf-8"))["spawns"]
    assert [s["status"] for s in spawns if s["local"] == "w1"] == ["recorded"]
    tree = json.loads((p.data / "COLONY_STATE.json").read_text("utf-8"))["spawn_tree"]
    assert tree["nodes"]["w1"]["status"] == "failed" and tree["nodes"]["w1"]["failure"]["category"] == "invalid_report"
    assert nxt["waiting"] == ["w2"]


def test_the_agent_hook_entry_skips_python_for_agent_calls_that_are_not_aethers(drive_colony, tmp_path):
    import subprocess
    from pathlib import Path

    entry = Path(__file__).resolve().parents[1] / "hooks" / "agent.sh"
    missing = tmp_path / "no-such-aether"  # a launcher that cannot run: the fast path never reaches it
    other = json.dumps({"tool_input": {"prompt": "find the config loader", "subagent_type": "Explore"}})
    for event in ("pre", "post"):
        proc = subprocess.run(
            ["sh", str(entry), event], input=other, capture_output=True, text=True, env={"PATH": f"{missing}:/usr/bin:/bin"}
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    lead = ok(drive_colony, "next", "--build", "1")["spawns"][0]
    ours = json.dumps(
        {
            "tool_input": {"prompt": lead["prompt"], "description": lead["description"], "subagent_type": lead["subagent_type"]},
            "tool_use_id": "t9",
        }
    )
    proc = subprocess.run(["sh", str(entry), "pre"], input=ours, capture_output=True, text=True, cwd=drive_colony.root)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["updatedInput"]["prompt"].startswith("[aether spawn")
