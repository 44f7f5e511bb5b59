"""The code loop's helper side (seed 004, phase 5): a code loop bound to the build, refine decisions
that plan refinement builders and a re-verification in the spawn tree, stagnation that asks the
user, a completing loop, and commits per iteration only when configured."""

import json
import os

import pytest

from helpers.colony import flat_plan, make_plan, ok, plan_waves, worker
from helpers.git import git

CRITIC_1 = """## Code Review

### Overall Score
70

### Assessment Summary
Division is not guarded.

### Key Issues
- src/a.py:3 divides by zero when the list is empty
- no test covers the empty list

### Recommendations
1. return 0 for an empty list
"""
PARTS_2 = {
    "tests": {"passed": 9, "failed": 1},
    "types": {"errors": 0},
    "lint": True,
    "coverage": 85,
    "plan_alignment": 1,
    "spec_alignment": None,
}  # 55 of 85 applicable points → 64.7


def write(project, rel, text="x = 1\n"):
    path = project.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run_node(project, node, payload, files=()):
    ok(project, "spawn-start", node)
    for f in files:
        write(project, f)
    return ok(project, "spawn-finish", node, "-", input=payload)


def full_build(project):
    """A FULL colony building phase 1 with two workers; returns the bound code loop's id."""
    ok(project, "colony-init", "Build a stats tool", "--mode", "FULL")
    ok(project, "plan-load", "-", input=flat_plan(2, phases=4))
    started = ok(project, "build-start", 1)
    loop = started["code_loop"]
    assert loop["threshold"] == 95 and loop["reused"] is False
    plan_waves(project, [worker("stats", ["1.1"], writes=["src/a.py"]), worker("cli", ["1.2"], writes=["src/b.py"])])
    for node, path in (("w1", "src/a.py"), ("w2", "src/b.py")):
        run_node(project, node, {"status": "completed", "files_created": [path]}, [path])
    return loop["loop_id"]


def test_full_build_whose_code_loop_stagnates_and_asks_the_user(project):
    loop = full_build(project)
    # iteration 1: the watcher's verification, as the critic's feedback; its score is read from it
    stored = ok(project, "feedback-store", loop, "-", input=CRITIC_1)
    assert stored["parsed"]["score"] == 70 and len(stored["parsed"]["key_issues"]) == 2
    first = ok(project, "loop-decide", loop)
    assert (first["decision"], first["score"], first["score_source"]) == ("refine", 70, "critic")
    ref = first["refinement"]
    assert ref["spawns"] == ["f1"] and ref["verify"] == "y1" and ref["wave"] == 2  # only src/a.py is named
    assert first["next"]["commands"] == ["aether spawn-start f1", "aether spawn-start y1"]
    tree = project.load("COLONY_STATE.json")["spawn_tree"]
    f1, y1 = tree["nodes"]["f1"], tree["nodes"]["y1"]
    assert (f1["role"], f1["caste"], f1["origin"], f1["tasks"]) == ("refine", "builder", "w1", ["1.1"])
    assert (y1["role"], y1["caste"], y1["waits_for"]) == ("verify", "watcher", ["f1"])
    assert tree["waves"][-1] == ["f1"]
    # the verification waits for the refinement, as a wave's barrier
    assert project.run("spawn-start", "y1").error["code"] == "spawn_waiting"
    brief = ok(project, "spawn-start", "f1")["text"]
    for piece in ("--- CODE LOOP REFINEMENT ---", "src/a.py:3 divides by zero", "return 0 for an empty list", "Files involved: src/a.py"):
        assert piece in brief, piece
    write(project, "src/a.py", "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0\n")
    ok(project, "spawn-finish", "f1", "-", input={"status": "completed", "files_modified": ["src/a.py"]})
    verify = ok(project, "spawn-start", "y1")
    assert verify["subagent_type"] == "ant:watcher" and '"score_parts"' in verify["text"]
    assert "execution" in verify["text"]  # FULL: the launch check
    answer = (
        "Ran everything.\n```json\n" + json.dumps({"status": "completed", "summary": "one test fails", "score_parts": PARTS_2}) + "\n```"
    )
    ok(project, "spawn-finish", "y1", "-", input=answer)
    # iteration 2: scored from the verify ant's whole answer
    second = ok(project, "loop-score", "-", "--loop", loop, input=answer)["loop"]
    assert (second["decision"], second["iteration"], second["score"]) == ("refine", 2, 64.7)
    assert second["refinement"]["spawns"] == ["f2", "f3"]  # no file named: every worker refines
    brief = ok(project, "spawn-start", "f2")["text"]
    assert "tests: 9 passed, 1 failed" in brief
    for node, path in (("f2", "src/a.py"), ("f3", "src/b.py")):
        if node != "f2":
            ok(project, "spawn-start", node)
        write(project, path, "y = 2\n")
        ok(project, "spawn-finish", node, "-", input={"status": "completed", "files_modified": [path]})
    run_node(project, second["refinement"]["verify"], {"status": "completed", "score_parts": PARTS_2})
    # iteration 3: 47.1, below iteration 1's 70 → stagnation asks the user
    third = ok(project, "loop-score", "-", "--loop", loop, input={"score_parts": {**PARTS_2, "coverage": 70}})["loop"]
    assert (third["decision"], third["score"]) == ("user_input", 47.1) and "stagnation" in third["reason"]
    assert third["refinement"] is None and third["next"]["command"] == f"aether loop-present {loop}"
    shown = project.run("loop-present", loop).stdout
    for piece in (
        "Coding loop",
        "Stopped: stagnation",
        "Challenges (from the critic):",
        "Options:",
        "Accept as is",
        "Narrow the scope",
        "Recommendation:",
        f"aether feedback-store {loop} - --kind user",
    ):
        assert piece in shown, piece
    present = ok(project, "loop-present", loop, "--json")
    assert present["stop_reason"] == "stagnation" and present["recommendation"]["option"] == "guide"
    assert [o["id"] for o in present["options"]] == ["accept", "guide", "narrow", "stop"]
    assert present["options"][0]["next"][-1] == "aether build-finish 1 --results -"
    assert project.run("loop-decide", loop, 80).error["code"] == "awaiting_user_feedback"
    resumed = ok(project, "feedback-store", loop, "-", "--kind", "user", input="Guard every division; skip the CLI polish.")
    assert resumed["resumed"] is True and resumed["status"] == "active"
    # every iteration is a checkpoint ref (no git here: none, and no commit)
    loops = project.load("loops.json")["loops"]
    assert [it["decision"] for it in loops[-1]["iterations"]] == ["refine", "refine", "user_input"]
    assert loops[-1]["phase"] == 1 and loops[-1]["iterations"][1]["parts"]["tests"]["earned"] == 0
    assert project.run("validate-state", "all").json["pass"] is True


def test_a_completing_loop_and_the_build_records_it(project):
    project.run("colony-init", "Build a stats tool").json  # STANDARD: the loop only when asked
    project.run("plan-load", "-", input=json.dumps(flat_plan(2, phases=3))).json
    started = ok(project, "build-start", 1, "--loop")
    loop = started["code_loop"]["loop_id"]
    again = ok(project, "loop-init", "code", "--build")
    assert again["loop_id"] == loop and again["reused"] is True
    plan_waves(project, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"])])
    run_node(project, "w1", {"status": "completed", "files_created": ["a.py"]}, ["a.py"])
    run_node(project, "w2", {"status": "completed", "files_created": ["b.py"]}, ["b.py"])
    parts = {
        "tests": {"passed": 12, "failed": 0},
        "types": True,
        "lint": True,
        "coverage": 91,
        "plan_alignment": True,
        "spec_alignment": True,
    }
    done = ok(project, "loop-score", "-", "--loop", loop, input=parts)["loop"]
    assert done["decision"] == "complete" and done["refinement"] is None
    assert done["next"]["command"] == "aether build-finish 1 --results -"
    watcher = {"passed": True, "score": 100, "checks": [{"name": "tests", "passed": True, "detail": "12 passed"}]}
    finished = ok(
        project,
        "build-finish",
        1,
        "--results",
        "-",
        input={"tasks": [{"id": "1.1", "status": "completed"}, {"id": "1.2", "status": "completed"}], "watcher": watcher},
    )
    assert finished["code_loop"]["status"] == "complete" and finished["code_loop"]["final_score"] == 100
    record = project.load("phase_records.json")["records"][-1]
    assert record["phase"] == 1 and record["files_created"] == ["a.py", "b.py"]
    assert record["code_loop"]["parts"]["coverage"]["reason"] == "91% ≥ 80%"


def test_refine_without_a_running_build_only_warns(project):
    project.run("colony-init", "goal").json
    project.run("plan-load", "-", input=json.dumps(make_plan())).json
    assert project.run("loop-init", "code", "--build").error["code"] == "not_building"
    assert project.run("loop-init", "plan", "--build").error["code"] == "invalid_argument"
    ok(project, "build-start", 1, "--loop")
    loop = project.load("loops.json")["loops"][-1]["id"]
    ok(project, "build-abort", 1, "--reason", "stop")
    out = ok(project, "loop-decide", loop, 40)
    assert out["decision"] == "refine" and out["refinement"] is None and "no running build" in out["warnings"][0]


def test_score_from_the_critic_and_its_errors(project):
    loop = ok(project, "loop-init", "plan")["loop_id"]
    assert project.run("loop-decide", loop).error["code"] == "score_missing"
    err = project.run("feedback-store", loop, "-", input="Looks fine to me.").error
    assert err["code"] == "critic_score_missing" and "### Overall Score" in err["error"]
    ok(project, "feedback-store", loop, "-", input="**Score:** 85%")
    out = ok(project, "loop-decide", loop, 70)
    assert out["score"] == 70 and "differs from the critic's 85" in out["warnings"][0]
    assert out["next"]["command"] == f"aether plan-draft-get {loop}"


# ---------------------------------------------------------------- commits per iteration


@pytest.fixture
def repo(project):
    git(project.root, "init", "-q")
    git(project.root, "config", "user.name", "Dev")
    git(project.root, "config", "user.email", "dev@example.com")
    write(project, "app.py", "print('v1')\n")
    git(project.root, "add", "app.py")
    git(project.root, "commit", "-q", "-m", "initial")
    return project


def test_commits_are_off_by_default(repo):
    head = git(repo.root, "rev-parse", "HEAD")
    loop = ok(repo, "loop-init", "code")["loop_id"]
    write(repo, "app.py", "print('v2')\n")
    first = ok(repo, "loop-decide", loop, 50)
    assert first["commit"] is None and first["checkpoint"]["ref"].startswith("refs/aether/checkpoints/")
    assert git(repo.root, "rev-parse", "HEAD") == head
    assert git(repo.root, "status", "--porcelain", "app.py") == "M app.py"  # untouched working tree


def test_one_commit_per_iteration_when_configured(repo):
    (repo.root / ".aether" / "config.yaml").write_text("code_loop:\n  commit_iterations: true\n")
    head = git(repo.root, "rev-parse", "HEAD")
    loop = ok(repo, "loop-init", "code")["loop_id"]
    write(repo, "app.py", "print('v2')\n")
    ok(repo, "feedback-store", loop, "-", input="Overall Score: 60/100\n### Assessment Summary\nParser half done.\n")
    first = ok(repo, "loop-decide", loop)
    assert first["commit"]["message"] == "build iteration 1: Parser half done."
    write(repo, "lib.py", "y = 2\n")
    second = ok(repo, "loop-decide", loop, 70)
    assert second["commit"]["message"] == "build iteration 2: score 70"
    log = git(repo.root, "log", "--format=%s", f"{head}..HEAD").splitlines()
    assert log == ["build iteration 2: score 70", "build iteration 1: Parser half done."]
    assert git(repo.root, "log", "-1", "--format=%an") == "Dev"  # the user's identity, not Aether's
    files = git(repo.root, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert files == ["lib.py"] and not any(
        ".aether/data" in f for f in git(repo.root, "show", "--name-only", "--format=", "HEAD~1").splitlines()
    )
    iterations = repo.load("loops.json")["loops"][-1]["iterations"]
    assert [it["commit"] for it in iterations] == [first["commit"]["sha"], second["commit"]["sha"]]
    plan = ok(repo, "loop-init", "plan")["loop_id"]
    assert ok(repo, "loop-decide", plan, 50)["commit"] is None  # plan loops change no code


def test_bad_config_is_refused_before_anything_is_recorded(repo):
    (repo.root / ".aether" / "config.yaml").write_text("code_loop:\n  commit_iterations: sometimes\n")
    loop = ok(repo, "loop-init", "code")["loop_id"]
    err = repo.run("loop-decide", loop, 50).error
    assert err["code"] == "invalid_config" and err["key"] == "code_loop.commit_iterations"
    assert repo.load("loops.json")["loops"][-1]["iterations"] == []
    assert not (repo.root / ".aether" / "data" / "checkpoints.json").exists()
    (repo.root / ".aether" / "config.yaml").write_text("code_loop:\n  commit_every: true\n")
    assert repo.run("loop-decide", loop, 50).error["code"] == "invalid_config"
    (repo.root / ".aether" / "config.yaml").write_text("bug_bash:\n  min_test_cases: 2\n")  # other sections: fine
    assert ok(repo, "loop-decide", loop, 50)["commit"] is None


def test_outside_git_a_configured_commit_only_warns(project):
    (project.root / ".aether" / "config.yaml").write_text("code_loop:\n  commit_iterations: true\n")
    loop = ok(project, "loop-init", "code")["loop_id"]
    out = ok(project, "loop-decide", loop, 50)
    assert out["commit"] is None and any("not committed" in w for w in out["warnings"])
    assert os.path.exists(project.root / ".aether" / "data" / "loops.json")


# ---------------------------------------------------------------- refine → verify → score → finish


def verify_answer(parts, passed=True, findings=(), summary="checked"):
    """A verify ant's whole answer as its brief asks: the watcher report plus score_parts and findings."""
    return (
        "I ran the checks.\n```json\n"
        + json.dumps(
            {
                "passed": passed,
                "score": 90,
                "summary": summary,
                "checks": [{"name": "tests", "passed": passed, "detail": "ran pytest"}],
                "score_parts": parts,
                "findings": list(findings),
            }
        )
        + "\n```"
    )


FULL_PARTS = {
    "tests": {"passed": 10, "failed": 0},
    "types": {"errors": 0},
    "lint": {"errors": 0},
    "coverage": 90,
    "plan_alignment": 1,
    "spec_alignment": 1,
}


def test_a_refined_build_finishes_with_the_verify_ants_answer(project):
    loop = full_build(project)
    first = ok(
        project,
        "loop-score",
        "-",
        "--loop",
        loop,
        input=verify_answer(
            {**FULL_PARTS, "tests": {"passed": 9, "failed": 1}},
            passed=False,
            summary="the empty list crashes",
            findings=["src/a.py:3 ZeroDivisionError on an empty list", {"location": "src/a.py:3", "description": "no guard for len 0"}],
        ),
    )["loop"]
    assert first["decision"] == "refine" and first["refinement"]["spawns"] == ["f1"]  # only src/a.py is named
    # the verification's findings are the iteration's critic feedback: the refinement brief shows them
    critic = project.load("loops.json")["loops"][-1]["feedback"][-1]
    assert (critic["kind"], critic["iteration"], critic["source"]) == ("critic", 1, "loop-score")
    assert critic["parsed"]["key_issues"] == ["src/a.py:3 ZeroDivisionError on an empty list", "src/a.py:3 no guard for len 0"]
    brief = ok(project, "spawn-start", "f1")["text"]
    assert "src/a.py:3 ZeroDivisionError on an empty list" in brief and "Files involved: src/a.py" in brief
    write(project, "src/a.py", "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0\n")
    ok(project, "spawn-finish", "f1", "-", input={"status": "completed", "files_modified": ["src/a.py"]})
    # the re-verification asks for the same watcher report build-finish takes, plus the parts
    verify = ok(project, "spawn-start", "y1")["text"]
    for piece in ('"passed": true', '"checks": [', '"score_parts": {', '"findings": ['):
        assert piece in verify, piece
    answer = verify_answer(FULL_PARTS, summary="all checks pass")
    recorded = ok(project, "spawn-finish", "y1", "-", input=answer)  # no `status`: a report is a finished check
    assert (recorded["status"], recorded["role"]) == ("completed", "verify")
    second = ok(project, "loop-score", "-", "--loop", loop, input=answer)["loop"]
    assert (second["decision"], second["score"]) == ("complete", 100)
    done = ok(project, "build-finish", 1, "--watcher", "-", input=answer)
    assert done["phase_status"] == "completed" and done["watcher"]["summary"] == "all checks pass"
    assert done["code_loop"]["scores"] == [second["scores"][0], 100] and done["code_loop"]["status"] == "complete"
    assert done["tasks"]["completed"] == 2


def test_a_verification_without_findings_adds_no_feedback(project):
    loop = full_build(project)
    ok(project, "loop-score", "-", "--loop", loop, input={"score_parts": {**FULL_PARTS, "lint": {"errors": 3}}})
    assert project.load("loops.json")["loops"][-1]["feedback"] == []
    # the critic's own feedback for an iteration wins over the verification's findings
    ok(project, "feedback-store", loop, "-", input=CRITIC_1)
    ok(project, "loop-score", "-", "--loop", loop, input=verify_answer(FULL_PARTS | {"lint": False}, findings=["x.py:1 lint"]))
    feedback = project.load("loops.json")["loops"][-1]["feedback"]
    assert [(f["kind"], f["iteration"], f.get("source")) for f in feedback] == [("critic", 2, None)]


def stagnate(project, loop):
    """Three verifications that gain less than 5 points: the loop asks the user."""
    parts = {**FULL_PARTS, "lint": {"errors": 2}, "coverage": 50}
    for _ in range(3):
        out = ok(project, "loop-score", "-", "--loop", loop, input=verify_answer(parts, findings=["src/b.py:1 lint: unused import"]))[
            "loop"
        ]
        if out["decision"] != "refine":
            return out
        ref = out["refinement"]
        for node in ref["spawns"]:
            ok(project, "spawn-start", node)
            ok(project, "spawn-finish", node, "-", input={"status": "completed"})
        ok(project, "spawn-start", ref["verify"])
        ok(project, "spawn-finish", ref["verify"], "-", input=verify_answer(parts))
    raise AssertionError("the loop did not stop")


def test_the_users_answer_plans_the_next_round_of_a_stalled_code_loop(project):
    loop = full_build(project)
    stalled = stagnate(project, loop)
    assert stalled["decision"] == "user_input" and stalled["refinement"] is None
    assert "src/b.py:1 lint: unused import" in project.run("loop-present", loop).stdout  # the challenges
    # a plan loop or a loop not waiting cannot be refined this way; nothing is stored then
    plan = ok(project, "loop-init", "plan")["loop_id"]
    assert project.run("feedback-store", plan, "-", "--kind", "user", "--refine", input="more").error["code"] == "invalid_argument"
    assert (
        project.run("feedback-store", loop, "-", "--refine", input="Overall Score: 50").error["code"] == "invalid_argument"
    )  # critic feedback
    answer = "Another round: fix the lint in src/a.py first; coverage can wait for phase 2."
    out = ok(project, "feedback-store", loop, "-", "--kind", "user", "--refine", input=answer)
    assert out["resumed"] is True and out["status"] == "active" and out["round"] == 2
    ref = out["refinement"]
    assert ref["spawns"] == ["f3"] and out["next"]["commands"] == ["aether spawn-start f3", f"aether spawn-start {ref['verify']}"]
    tree = project.load("COLONY_STATE.json")["spawn_tree"]
    assert tree["nodes"]["f3"]["origin"] == "w1"  # src/a.py is named in the answer: only its worker refines
    assert tree["refinements"][str(ref["wave"])]["after"] == "user"
    brief = ok(project, "spawn-start", "f3")["text"]
    assert "The user's answer" in brief and answer in brief
    again = project.run("feedback-store", loop, "-", "--kind", "user", "--refine", input=answer).error
    assert again["code"] == "not_awaiting_user" and again["status"] == "active"
    loops = project.load("loops.json")["loops"]
    users = [f for f in loops[-2]["feedback"] if f["kind"] == "user"]
    assert [u["text"] for u in users] == [answer]
