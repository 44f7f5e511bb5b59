"""spawn-check, spawn-start, spawn-finish (claims checked against the filesystem and git) and
SPAWN REQUEST blocks in every formatting models produce."""

import json
import os
import subprocess
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aether.core import vocabulary
from aether.rules import contracts, spawn_tree
from aether.steps import spawning

from helpers.colony import plan_waves, run_worker, start_build, tree, worker

REQUEST = "--- SPAWN REQUEST ---\ncaste: scout\nreason: need the OAuth2 library docs\ncontext: which flow fits\nblocking: true\n--- END SPAWN REQUEST ---\n"


def two_workers(project, mode="STANDARD"):
    start_build(project, mode=mode)
    plan_waves(project, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"])])
    return project


# ---------------------------------------------------------------- spawn-check


def test_spawn_check_without_a_build(project):
    assert project.run("spawn-check").error["code"] == "state_missing"
    project.run("colony-init", "Build a todo API").json
    assert project.run("spawn-check").json == {"pass": True, "active_workers": 0, "max_workers": 5, "current_depth": 1, "max_depth": 3}


@pytest.mark.parametrize(
    "mode,depth,ok",
    [("STANDARD", 2, True), ("STANDARD", 3, False), ("LIGHTWEIGHT", 1, True), ("LIGHTWEIGHT", 2, False), ("FULL", 3, False)],
)
def test_spawn_check_depth(project, mode, depth, ok):
    project.run("colony-init", "Build a todo API", "--mode", mode).json
    result = project.run("spawn-check", depth).json
    assert result["pass"] is ok and result["current_depth"] == depth
    assert ("reason" in result) is (not ok)


def test_spawn_check_rejects_bad_depth(project):
    project.run("colony-init", "Build a todo API").json
    for bad in ("0", "-1", "x", "1.5"):
        assert project.run("spawn-check", bad).error["code"] == "invalid_argument"


def test_spawn_check_counts_running_nodes(project):
    start_build(project, mode="FULL")
    plan_waves(project, [worker(f"w{i}", [f"1.{i}"], writes=[f"{i}.py"]) for i in range(1, 6)])
    for i in range(1, 6):
        assert project.run("spawn-start", f"w{i}").json["active_workers"] == i
    result = project.run("spawn-check").json
    assert result["pass"] is False and result["active_workers"] == 5 and "running" in result["reason"]


# ---------------------------------------------------------------- spawn-start


def test_spawn_start_marks_running_and_returns_the_brief(project):
    two_workers(project)
    project.run("pheromone-emit", "REDIRECT", "never store passwords in plain text").json
    result = project.run("spawn-start", "w1").json
    assert (result["subagent_type"], result["role"], result["depth"], result["active_workers"]) == ("ant:builder", "worker", 1, 1)
    text = result["text"]
    assert "You are w1, a builder ant" in text and "  - 1.1: task 1.1" in text
    assert "Files you own (only you write them in this wave): a.py" in text
    assert "REDIRECT" in text and "PRIORITIZE" in text  # the builder's view of the signals
    assert "--- SPAWN REQUEST ---" in text and '"files_created"' in text
    state = project.load("COLONY_STATE.json")
    assert state["spawn_tree"]["nodes"]["w1"]["status"] == "running"
    assert state["spawn_tree"]["status"] == "running"
    assert state["workers"]["builder"] == "active"
    assert project.run("spawn-start", "w1", "--text").error["code"] == "spawn_not_planned"


def test_spawn_start_errors(project):
    project.run("colony-init", "Build a todo API").json
    assert project.run("spawn-start", "w1").error["code"] == "no_spawn_tree"
    project.run(
        "plan-load",
        "-",
        input=json.dumps(
            {
                "goal": "g",
                "phases": [
                    {
                        "id": 1,
                        "name": "P",
                        "description": "d",
                        "tasks": [
                            {"id": "1.1", "description": "t", "depends_on": []},
                            {"id": "1.2", "description": "t2", "depends_on": ["1.1"]},
                        ],
                        "success_criteria": ["c"],
                    }
                ],
            }
        ),
    ).json
    project.run("build-start", 1).json
    plan_waves(project, [worker("a", ["1.1"]), worker("b", ["1.2"])])
    assert project.run("spawn-start", "ghost").error["code"] == "unknown_worker"
    assert project.run("spawn-start", "w2").error["code"] == "earlier_wave_unfinished"


def test_worker_limit_holds_with_sub_spawns(project):
    start_build(project, mode="FULL")
    plan_waves(project, [worker(f"w{i}", [f"1.{i}"], writes=[f"{i}.py"]) for i in range(1, 6)])
    for i in range(1, 6):
        project.run("spawn-start", f"w{i}").json
    run = project.run("spawn-finish", "w1", "-", input='{"status": "completed"}').json
    assert run["active_workers"] == 4
    queue = project.run("spawn-requests", "w1", "-", input=REQUEST + REQUEST.replace("scout", "architect")).json["queue"]
    assert [q["id"] for q in queue] == ["s1", "s2"]
    assert project.run("spawn-start", "s1").json["active_workers"] == 5
    err = project.run("spawn-start", "s2").error
    assert err["code"] == "spawn_limit" and "5 ants are running" in err["error"]
    assert tree(project)["nodes"]["s2"]["status"] == "planned"


# ---------------------------------------------------------------- spawn-finish


def test_finish_accepts_an_answer_with_a_fenced_result(project):
    two_workers(project)
    project.run("spawn-start", "w1").json
    (project.root / "a.py").write_text("print('hi')\n")
    answer = 'I did it.\n\n```json\n{"status": "done", "summary": "wrote a.py", "files_created": ["./a.py"]}\n```\n'
    result = project.run("spawn-finish", "w1", "-", input=answer).json
    assert result["status"] == "completed" and result["verified"]
    node = tree(project)["nodes"]["w1"]
    assert node["files_created"] == ["a.py"] and node["summary"] == "wrote a.py" and node["seq"] == 1
    assert project.load("COLONY_STATE.json")["workers"]["builder"] == "idle"


def test_claims_that_do_not_hold_fail_the_spawn(project, tmp_path):
    two_workers(project)
    (project.root / "src").mkdir()
    project.run("spawn-start", "w1").json
    outside = tmp_path / "outside.py"
    outside.write_text("x")
    result = project.run(
        "spawn-finish",
        "w1",
        "-",
        input=json.dumps({"status": "completed", "files_created": ["a.py", "../outside.py", str(outside), "src"]}),
    ).json
    assert result["status"] == "failed" and result["verified"] is False
    assert {(p["path"], p["problem"]) for p in result["unverified"]} == {
        ("a.py", "missing"),
        ("../outside.py", "outside_project"),
        (str(outside), "outside_project"),
        ("src", "not_a_file"),
    }
    failure = tree(project)["nodes"]["w1"]["failure"]
    assert failure["category"] == "unverified_claim" and failure["task"] == "1.1"
    decided = project.run("failure-decide", "--worker", "w1").json
    assert decided["action"] == "retry"  # the fix (really do the work) is certain and contained


def test_claims_are_checked_against_git(project):
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    (project.root / "old.py").write_text("old\n")
    (project.root / "tracked.py").write_text("v1\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "add", "old.py", "tracked.py"], cwd=project.root, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project.root, check=True, env=env)
    past = time.time() - 3600
    os.utime(project.root / "old.py", (past, past))
    two_workers(project)
    project.run("spawn-start", "w1").json
    (project.root / "tracked.py").write_text("v2\n")
    (project.root / "new.py").write_text("new\n")
    result = project.run(
        "spawn-finish",
        "w1",
        "-",
        input=json.dumps({"status": "completed", "files_created": ["new.py"], "files_modified": ["tracked.py", "old.py"]}),
    ).json
    assert result["unverified"] == [{"path": "old.py", "problem": "unchanged"}]
    assert result["status"] == "failed"


@pytest.mark.parametrize(
    "payload,code",
    [
        ("no json here", "invalid_json"),
        ('{"summary": "no status"}', "invalid_report"),
        ('{"status": "maybe"}', "invalid_report"),
        ("[1, 2]", "invalid_report"),
        ('{"status": "completed", "files_created": "a.py"}', None),  # one string is a list of one
        ('{"status": "completed", "files_created": [{"p": 1}]}', "invalid_report"),
    ],
)
def test_finish_payload_errors(project, payload, code):
    two_workers(project)
    project.run("spawn-start", "w1").json
    (project.root / "a.py").write_text("x")
    result = project.run("spawn-finish", "w1", "-", input=payload)
    if code is None:
        assert result.json["status"] == "completed"
    else:
        assert result.error["code"] == code
        assert tree(project)["nodes"]["w1"]["status"] == "running"  # nothing half-written


def test_finish_needs_a_running_spawn(project):
    two_workers(project)
    assert project.run("spawn-finish", "w1", "-", input='{"status": "completed"}').error["code"] == "spawn_not_running"


def test_a_debugger_result_is_read_from_its_own_fields(project):
    two_workers(project)
    run_worker(project, "w1", "failed", failure={"task": "1.1", "error": "boom", "confidence": 10, "fix_scope": "contained"})
    assert project.run("failure-decide", "--worker", "w1").json["action"] == "debug"
    project.run("spawn-start", "d1").json
    result = project.run(
        "spawn-finish",
        "d1",
        "-",
        input=json.dumps({"diagnosis": "UNDIAGNOSABLE: flaky", "fix_applied": False, "verification": {"status": "fail"}}),
    ).json
    assert result["status"] == "failed"
    assert tree(project)["nodes"]["d1"]["failure"]["undiagnosable"] is True


# ---------------------------------------------------------------- SPAWN REQUEST formats


FORMATS = {
    "plain": REQUEST,
    "fenced": "Result below.\n```\n" + REQUEST + "```\n",
    "bold_keys_colon_inside": "--- SPAWN REQUEST ---\n**caste:** scout\n**reason:** need the OAuth2 library docs\n**context:** which flow fits\n**blocking:** true\n--- END SPAWN REQUEST ---",
    "bold_keys_colon_outside": "**SPAWN REQUEST**\n- **caste**: `scout`\n- **reason**: need the OAuth2 library docs\n- **context**: which flow fits\n- **blocking**: **true**\n**END SPAWN REQUEST**",
    "crlf": REQUEST.replace("\n", "\r\n"),
    "extra_spaces": "   ---   SPAWN REQUEST   ---  \n   caste  :   scout  \n reason :  need the OAuth2 library docs  \n context:which flow fits\n blocking :true\n  --- END SPAWN REQUEST ---  ",
    "missing_end_line": '--- SPAWN REQUEST ---\ncaste: scout\nreason: need the OAuth2 library docs\ncontext: which flow fits\nblocking: true\n\nThat is all from me.\n```json\n{"status": "completed"}\n```',
    "heading": "### Spawn Request\nCaste: Scout\nReason: need the OAuth2 library docs\nContext: which flow fits\nBlocking: yes\n",
    "equals": "--- SPAWN_REQUEST ---\ncaste = ant:scout\nreason = need the OAuth2 library docs\ncontext = which flow fits\nblocking = true\n--- END_SPAWN_REQUEST ---",
    "multiline_context": "--- SPAWN REQUEST ---\ncaste: scout-ant\nreason: need the OAuth2 library docs\ncontext: which flow\n  fits\nblocking: true\n--- END SPAWN REQUEST ---",
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_spawn_request_formats(name):
    blocks = contracts.parse_requests(FORMATS[name])
    assert len(blocks) == 1, blocks
    block = blocks[0]
    assert contracts.normalize_caste(block["caste"]) == "scout"
    assert block["reason"] == "need the OAuth2 library docs"
    assert " ".join(block["context"].split()) == "which flow fits"
    assert spawning._blocking(block.get("blocking")) is True


def test_several_blocks_and_none():
    text = REQUEST + "\nmore prose\n" + REQUEST.replace("scout", "architect").replace("blocking: true", "blocking: false")
    blocks = contracts.parse_requests(text)
    assert [b["caste"] for b in blocks] == ["scout", "architect"]
    assert spawning._blocking(blocks[1]["blocking"]) is False
    assert contracts.parse_requests("I mention a spawn request in prose only.\ncaste: scout") == []
    assert contracts.parse_requests("") == []


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_parser_never_crashes(text):
    for block in contracts.parse_requests(text):
        assert isinstance(block, dict) and all(isinstance(v, str) for v in block.values())


# ---------------------------------------------------------------- spawn-requests


def test_requests_are_validated_and_capped(project):
    two_workers(project)
    run_worker(project, "w1", created=["a.py"])
    output = (
        REQUEST.replace("scout", "dragon")
        + REQUEST.replace("reason: need the OAuth2 library docs\n", "")
        + REQUEST
        + REQUEST.replace("scout", "Architect")
        + REQUEST.replace("scout", "watcher")
    )
    result = project.run("spawn-requests", "w1", "-", input=output).json
    assert [(q["id"], q["caste"]) for q in result["queue"]] == [("s1", "scout"), ("s2", "architect")]
    reasons = [i["ignored_because"] for i in result["ignored"]]
    assert reasons[0].startswith("unknown caste 'dragon'") and reasons[1] == "no reason given"
    assert "cap per worker" in reasons[2]
    assert result["reruns"] == ["x1"]
    t = tree(project)
    assert t["nodes"]["s1"]["depth"] == 2 and t["nodes"]["s1"]["parent"] == "w1"
    assert t["nodes"]["w1"]["children"] == ["s1", "s2", "x1"]
    assert t["nodes"]["x1"]["waits_for"] == ["s1", "s2"] and t["nodes"]["x1"]["depth"] == 1
    assert len(t["spawn_requests"]) == 5
    again = project.run("spawn-requests", "w1", "-", input=output).json
    assert again["already_recorded"] and [q["id"] for q in again["queue"]] == ["s1", "s2"]
    assert len(tree(project)["spawn_requests"]) == 5


def test_a_flood_of_requests_is_read_up_to_the_block_cap(project):
    two_workers(project)
    run_worker(project, "w1", created=["a.py"])
    flood = REQUEST.replace("caste: scout", "caste: nobody") * 5000
    result = project.run("spawn-requests", "w1", "-", input=flood).json
    assert result["dropped"] == 5000 - contracts.MAX_REQUEST_BLOCKS
    assert len(result["ignored"]) == contracts.MAX_REQUEST_BLOCKS
    assert len(tree(project)["spawn_requests"]) == contracts.MAX_REQUEST_BLOCKS


def test_wave_cap_and_rerun_waits_for_its_sub_spawns(project):
    two_workers(project)
    run_worker(project, "w1", created=["a.py"])
    run_worker(project, "w2", created=["b.py"])
    first = project.run("spawn-requests", "w1", "-", input=REQUEST).json
    second = project.run("spawn-requests", "w2", "-", input=REQUEST + REQUEST).json
    assert len(first["queue"]) == 1 and len(second["queue"]) == 1
    assert "cap per wave" in second["ignored"][0]["ignored_because"]
    assert project.run("spawn-start", "x1").error["code"] == "spawn_waiting"
    run_worker(project, "s1")
    rerun = project.run("spawn-start", "x1").json
    assert "Findings of the ants you asked for:" in rerun["text"] and "s1 (scout): s1 completed" in rerun["text"]


def test_depth_limits_sub_spawns(project):
    two_workers(project)
    run_worker(project, "w1", created=["a.py"])
    project.run("spawn-requests", "w1", "-", input=REQUEST.replace("blocking: true", "blocking: false")).json
    run_worker(project, "s1")
    deeper = project.run("spawn-requests", "s1", "-", input=REQUEST).json
    assert deeper["queue"] == [] and "depth 3 is not below the max depth 3" in deeper["ignored"][0]["ignored_because"]


def test_lightweight_allows_no_sub_spawns(project):
    two_workers(project, mode="LIGHTWEIGHT")
    run_worker(project, "w1", created=["a.py"])
    result = project.run("spawn-requests", "w1", "-", input=REQUEST).json
    assert result["queue"] == [] and "max depth 2" in result["ignored"][0]["ignored_because"]


def test_requests_need_a_finished_parent(project):
    two_workers(project)
    assert project.run("spawn-requests", "w1", "-", input=REQUEST).error["code"] == "spawn_not_finished"
    assert project.run("spawn-requests", "nobody", "-", input=REQUEST).error["code"] == "unknown_worker"


# ---------------------------------------------------------------- limits never exceeded


OPS = st.lists(
    st.tuples(st.sampled_from(["start", "finish_ok", "finish_fail", "request", "decide"]), st.integers(0, 30)), min_size=1, max_size=25
)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["LIGHTWEIGHT", "STANDARD", "FULL"]), OPS)
def test_no_sequence_of_calls_exceeds_depth_or_worker_limits(tmp_path_factory, mode, ops):
    from conftest import Project

    root = tmp_path_factory.mktemp("p")
    (root / ".aether").mkdir()
    project = Project(root, root / "home")
    start_build(project, mode=mode)
    plan_waves(project, [worker(f"w{i}", [f"1.{i}"], writes=[f"{i}.py"]) for i in range(1, 7)])
    from aether.rules import modes

    limits = modes.profile(mode)["spawn_limits"]
    for op, pick in ops:
        nodes = tree(project)["nodes"]
        ids = sorted(nodes)
        target = ids[pick % len(ids)]
        if op == "start":
            project.run("spawn-start", target)
        elif op.startswith("finish"):
            status = "completed" if op == "finish_ok" else "failed"
            project.run("spawn-finish", target, "-", input=json.dumps({"status": status}))
        elif op == "request":
            project.run("spawn-requests", target, "-", input=REQUEST * 3)
        else:
            project.run("failure-decide", "--worker", target)
        nodes = tree(project)["nodes"].values()
        assert sum(1 for n in nodes if n["status"] == "running") <= limits["max_workers"]
        assert all(n["depth"] < limits["max_depth"] for n in nodes)
        per_wave = {}
        for n in nodes:
            if n["role"] == "sub_spawn":
                per_wave[n["wave"]] = per_wave.get(n["wave"], 0) + 1
        assert all(v <= spawn_tree.MAX_SUB_SPAWNS_PER_WAVE for v in per_wave.values())


def test_an_old_shaped_spawn_tree_is_set_aside_not_corrupt(project):
    project.run("colony-init", "Build a todo API").json
    colony = project.load("COLONY_STATE.json")
    old = {
        "root": "phase_lead",
        "waves": [{"id": 1, "workers": [{"caste": "builder", "tasks": ["3.1"], "depth": 1}]}],
        "active_depth": 0,
        "max_depth": 3,
        "spawn_requests": [],
    }
    colony["spawn_tree"] = old
    project.write("COLONY_STATE.json", colony)
    assert project.run("spawn-check").json["active_workers"] == 0
    project.run("event-add", "x", "y", "z").json
    project.run("pheromone-emit", "FOCUS", "anything long enough to pass").json
    assert project.run("spawn-start", "w1").error["code"] == "no_spawn_tree"


def test_a_broken_spawn_tree_is_reported_as_corrupt(project):
    project.run("colony-init", "Build a todo API").json
    colony = project.load("COLONY_STATE.json")
    colony["spawn_tree"] = {
        "phase": 1,
        "status": "running",
        "max_depth": 3,
        "waves": [],
        "spawn_requests": [],
        "nodes": {"w1": {"caste": "dragon", "depth": "one"}},
    }
    project.write("COLONY_STATE.json", colony)
    err = project.run("spawn-check").error
    assert err["code"] == "state_corrupt" and "spawn_tree.nodes.w1.caste" in err["error"]


def test_spawn_vocabularies_have_one_definition():
    """Roles, statuses and the roles that write no code are listed once (schemas.py) and used as is."""
    from aether.core import castes
    from aether.rules import modes
    from aether.steps import completion, syntax_check

    assert set(spawn_tree.ROLE_PREFIX) == set(vocabulary.SPAWN_ROLES)  # every role has an id prefix
    assert set(spawn_tree.RESPAWN_ROLES) < set(vocabulary.SPAWN_ROLES)
    assert set(vocabulary.SPAWN_FINISHED) < set(vocabulary.SPAWN_STATUSES)
    assert completion.NO_CODE_ROLES is syntax_check.NO_CODE_ROLES is vocabulary.NO_CODE_ROLES
    assert modes.SIGNAL_TYPES is castes.SIGNAL_TYPES
    for name in ("ROLES", "NODE_STATUSES", "FINISHED", "TREE_STATUSES"):
        assert not hasattr(spawning, name), name
