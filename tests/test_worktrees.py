"""Same-wave builders in their own git worktrees: the order results merge in, a conflict as a
task failure retried on the merged state, the bookkeeping that leaves nothing behind and loses
nothing, the guard that keeps a builder in its working copy — in a real git repository."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from aether.core.exceptions import AetherError
from aether.rules import worktrees as worktree_rules

from helpers.colony import ok, tree
from helpers.git import git_output as git  # as git printed it
from helpers.worktrees import APP, LEAD, PLAN, block, done, edit, start_wave, workdir

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["merge-tree", "scratch worktree"])
def merging(request, monkeypatch):
    """Both ways a result merges: git's trees alone (git 2.38 or newer), and in a scratch worktree."""
    from aether.state import worktrees as wt

    monkeypatch.setattr(wt, "_merges_trees", lambda top: request.param == "merge-tree")
    return request.param


def leftovers(p) -> tuple:
    """(worktrees git knows besides the main one, aether/… branches)."""
    listed = [line for line in git(p.root, "worktree", "list", "--porcelain").splitlines() if line.startswith("worktree ")]
    return listed[1:], git(p.root, "branch", "--list", "aether/*").split()


# ---------------------------------------------------------------- the rules (pure)


def test_results_merge_in_wave_order_then_by_task_id():
    nodes = [
        {"id": "w3", "wave": 1, "tasks": ["1.10"], "seq": 1},
        {"id": "w1", "wave": 1, "tasks": ["1.2"], "seq": 3},
        {"id": "r1", "wave": 1, "tasks": ["1.2"], "seq": 5},
        {"id": "w9", "wave": 2, "tasks": ["2.1"], "seq": 0},
        {"id": "w2", "wave": 1, "tasks": ["1.9"], "seq": 2},
    ]
    assert [n["id"] for n in worktree_rules.order(nodes)] == ["w1", "r1", "w2", "w3", "w9"]


def test_a_conflict_is_a_failure_report_the_ladder_retries():
    report = worktree_rules.conflict_report(
        {"id": "w2", "tasks": ["1.2"], "caste": "builder"},
        [{"path": "app.py", "why": "both changed the same lines", "hunks": ["<<<<<<< project\nA\n=======\nB\n>>>>>>> w2"]}],
        "aether/b1-x/w2",
    )
    assert report["category"] == "merge_conflict" and report["files"] == ["app.py"]
    assert report["confidence"] >= 80 and report["fix_scope"] == "contained"
    assert "kept on aether/b1-x/w2" in report["error"] and ">>>>>>> w2" in report["error"]


# ---------------------------------------------------------------- whole waves in a real repository


def test_two_builders_changing_one_file_in_different_places_merge_cleanly(worktree_colony, merging):
    p = worktree_colony
    wave = start_wave(p)
    assert "Builders: isolation on" in p.load("spawns.json")["runs"][-1]["started_text"]
    # each builder has its own worktree, from the build's checkpoint: untracked files included
    w1, w2 = workdir(p, "w1"), workdir(p, "w2")
    assert w1 != w2 and (w1 / "notes.txt").exists() and (w2 / "app.py").read_text("utf-8") == APP
    brief = (p.root / wave["spawns"][0]["prompt"].split("Your brief is ")[1].split(" ")[0]).read_text("utf-8")
    assert "--- WORKING COPY ---" in brief and f"cd {tree(p)['nodes']['w1']['worktree']} && " in brief
    edit(p, "w1", "app.py", "return 1", "return 10")
    (w2 / "util.py").write_text("HELP = 1\n", "utf-8")
    edit(p, "w2", "app.py", "return 3", "return 30")  # a file it does not own, another part of it
    ok(p, "record", "w2", "-", input=done(created=["util.py"]))
    after = ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    assert [s["id"] for s in after["next"]["spawns"]] == ["v1"]  # merged, then the reviewer
    app = (p.root / "app.py").read_text("utf-8")
    assert "return 10" in app and "return 30" in app and (p.root / "util.py").read_text("utf-8") == "HELP = 1\n"
    nodes = tree(p)["nodes"]
    assert (nodes["w1"]["merge"], nodes["w2"]["merge"]) == ("merged", "merged")
    assert nodes["w2"]["files_modified"] == ["app.py"] and nodes["w2"]["files_created"] == ["util.py"]  # the diff's
    merged = [e["content"] for e in p.load("events.json")["events"] if e["type"] == "merged"]
    assert merged == ["w1: 1 file(s) merged into the project", "w2: 2 file(s) merged into the project"]  # in order
    assert leftovers(p) == ([], [])
    assert not (p.root / ".aether" / "worktrees").exists() or not any((p.root / ".aether" / "worktrees").rglob("*.py"))
    assert {w["node"]: w["status"] for w in p.load("worktrees.json")["worktrees"]} == {"w1": "merged", "w2": "merged"}
    assert git(p.root, "status", "--porcelain", "--", "app.py").startswith(" M")  # HEAD and the index untouched


def test_a_merge_checks_nothing_out_with_git_2_38_or_newer(worktree_colony, monkeypatch):
    from aether.state import checkpoints
    from aether.state import worktrees as wt

    version = checkpoints.git_version(str(worktree_colony.root))
    if version is None or version < wt.MERGE_TREE_GIT:
        pytest.skip(f"git {version} merges in a scratch worktree (the tests with `merging` cover it)")
    p, made, real = worktree_colony, [], wt.create
    start_wave(p)
    monkeypatch.setattr(wt, "create", lambda r, rel, base: made.append(rel) or real(r, rel, base))
    edit(p, "w1", "app.py", "return 1", "return 10")
    edit(p, "w2", "app.py", "return 3", "return 30")
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    ok(p, "record", "w2", "-", input=done(modified=["app.py"]))
    app = (p.root / "app.py").read_text("utf-8")
    assert "return 10" in app and "return 30" in app
    assert made == [] and leftovers(p) == ([], [])  # no worktree made to merge


def test_a_conflict_fails_the_later_task_and_its_retry_runs_on_the_merged_state(worktree_colony, merging):
    p = worktree_colony
    start_wave(p)
    edit(p, "w1", "app.py", "return 2", "return 'one'")
    edit(p, "w2", "app.py", "return 2", "return 'two'")  # the same line: 1.2 merges after 1.1
    (workdir(p, "w2") / "util.py").write_text("HELP = 2\n", "utf-8")
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))
    retry = ok(p, "record", "w2", "-", input=done(created=["util.py"]))["next"]
    assert [s["id"] for s in retry["spawns"]] == ["r1"]
    w2 = tree(p)["nodes"]["w2"]
    assert w2["status"] == "failed" and w2["merge"] == "conflict"
    assert w2["failure"]["category"] == "merge_conflict" and "app.py" in w2["failure"]["error"]
    assert "<<<<<<<" in w2["failure"]["error"] and "return 'two'" in w2["failure"]["error"]
    assert (p.root / "app.py").read_text("utf-8").count("return 'one'") == 1
    assert "util.py" not in os.listdir(p.root)  # nothing of a conflicting result is half-applied
    kept_branch = next(w["branch"] for w in p.load("worktrees.json")["worktrees"] if w["status"] == "kept")
    assert kept_branch.startswith("aether/") and kept_branch in leftovers(p)[1]
    # the retry's working copy holds the merged state (w1's change), and its result merges
    r1 = workdir(p, "r1")
    assert "return 'one'" in (r1 / "app.py").read_text("utf-8")
    edit(p, "r1", "app.py", "return 'one'", "return 'one and two'")
    (r1 / "util.py").write_text("HELP = 2\n", "utf-8")
    after = ok(p, "record", "r1", "-", input=done(created=["util.py"], modified=["app.py"]))
    assert [s["id"] for s in after["next"]["spawns"]] == ["v1"]
    assert "return 'one and two'" in (p.root / "app.py").read_text("utf-8")
    # the task recovered: its kept result is superseded and let go; nothing is left
    assert leftovers(p) == ([], [])
    statuses = [(w["node"], w["status"]) for w in p.load("worktrees.json")["worktrees"]]
    assert statuses == [("w1", "merged"), ("w2", "dropped"), ("r1", "merged")]


def test_an_aborted_build_keeps_a_finished_result_on_a_branch_and_removes_every_worktree(worktree_colony):
    p = worktree_colony
    start_wave(p)
    edit(p, "w1", "app.py", "return 1", "return 11")
    ok(p, "record", "w1", "-", input=done(modified=["app.py"]))  # w2 still out: nothing merged yet
    out = ok(p, "build-abort", "1", "--reason", "-", input="the user stops here\n")
    assert "Results not merged, kept on branches:" in out["text"]
    worktrees, branches = leftovers(p)
    assert worktrees == [] and len(branches) == 1 and branches[0].endswith("/w1")
    assert git(p.root, "show", f"{branches[0]}:app.py").count("return 11") == 1  # nothing lost
    assert (p.root / "app.py").read_text("utf-8") == APP  # and nothing applied behind the user's back
    listed = ok(p, "worktrees", "--json")
    assert [k["branch"] for k in listed["kept"]] == branches and listed["active"] == [] and listed["stale"] == []
    assert listed["kept"][0]["apply"] == f"git cherry-pick --no-commit {branches[0]}"
    assert branches[0] in ok(p, "status", "--json")["text"]
    ok(p, "worktrees", "--drop", branches[0], "--json")
    assert leftovers(p) == ([], [])
    assert p.run("worktrees", "--drop", "main").error["code"] == "unknown_branch"


def test_clean_removes_what_a_crash_left_and_never_the_users_own(worktree_colony):
    p = worktree_colony
    start_wave(p)
    mine = p.root.parent / "users-own-worktree"
    git(p.root, "worktree", "add", "-q", "--detach", str(mine), "HEAD")
    git(p.root, "branch", "aether-like")
    git(p.root, "branch", "aether/hand-made")
    # the build is still running: its worktrees are in use, not left over
    assert ok(p, "worktrees", "--json")["stale"] == []
    assert ok(p, "worktrees", "--clean", "--json")["removed"] == []
    # the colony moves on without that build (a crash, then /ant:build 1 --resume): its worktrees go
    ok(p, "next", "--build", "1", "--resume")
    listed = ok(p, "worktrees", "--json")
    assert listed["active"] == [] and listed["unrecorded_branches"] == ["aether/hand-made"]
    assert {w["status"] for w in p.load("worktrees.json")["worktrees"]} == {"discarded"}
    # a crash between git and the record: a worktree folder with no record
    git(p.root, "worktree", "add", "-q", "--detach", str(p.root / ".aether" / "worktrees" / "b0-dead" / "w9"), "HEAD")
    assert ok(p, "worktrees", "--json")["stale"] == [".aether/worktrees/b0-dead/w9"]
    assert ok(p, "worktrees", "--clean", "--json")["removed"] == [".aether/worktrees/b0-dead/w9"]
    kept = [line.split()[1] for line in git(p.root, "worktree", "list", "--porcelain").splitlines() if line.startswith("worktree ")]
    assert kept == [str(p.root), str(mine)]  # the user's worktree and branches are never touched
    assert sorted(git(p.root, "branch", "--format=%(refname:short)").split()) == [
        "aether-like",
        "aether/hand-made",
        git(p.root, "branch", "--show-current").strip(),
    ]


# ---------------------------------------------------------------- on or off


def test_isolation_is_off_outside_git_in_lightweight_with_submodules_and_by_setting(worktree_colony, monkeypatch):
    from aether.core import paths
    from aether.steps import isolation

    p = worktree_colony
    monkeypatch.chdir(p.root)  # the library called in this process: the project is the working directory
    for cached in (paths.project_root, paths.data_dir):
        cached.cache_clear()
    (p.root / ".aether" / "config.yaml").write_text("build:\n  isolation: off\n", "utf-8")
    assert isolation.decide("STANDARD", {"ref": "x"}, "b1-x") == {
        "on": False,
        "why": "off (build.isolation: off in config.yaml)",
        "scope": "b1-x",
        "warning": None,  # off by choice, with its checkpoint: no safety net missing
    }
    (p.root / ".aether" / "config.yaml").write_text("build:\n  isolation: sometimes\n", "utf-8")
    with pytest.raises(AetherError) as exc:
        isolation.decide("STANDARD", {"ref": "x"}, "b1-x")
    assert exc.value.code == "invalid_config"
    (p.root / ".aether" / "config.yaml").unlink()
    assert isolation.decide("LIGHTWEIGHT", {"ref": "x"}, "s")["why"] == "off (LIGHTWEIGHT mode)"
    assert isolation.decide("FULL", None, "s")["why"].startswith("off: the build has no checkpoint")
    (p.root / ".gitmodules").write_text("", "utf-8")
    assert "submodules" in isolation.decide("FULL", {"ref": "x"}, "s")["why"]


def test_outside_git_the_builders_share_the_tree(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-02-04T10:00:00Z")
    ok(project, "colony-init", "A small app")
    ok(project, "plan-load", "-", input=json.dumps(PLAN))
    ok(project, "next", "--build", "1")
    wave = ok(project, "record", "lead1", "-", input=LEAD)["next"]
    assert all("worktree" not in n for n in tree(project)["nodes"].values())
    brief = (project.root / wave["spawns"][0]["prompt"].split("Your brief is ")[1].split(" ")[0]).read_text("utf-8")
    assert "WORKING COPY" not in brief
    assert "isolation off: the project is not in a git repository" in project.load("spawns.json")["runs"][-1]["started_text"]


# ---------------------------------------------------------------- the guard keeps a builder in its working copy


def _guard():
    """hooks/guard.py as the guard tests import it (so `guard_path` asks it over its socket too)."""
    if str(REPO / "hooks") not in sys.path:
        sys.path.insert(0, str(REPO / "hooks"))
    import guard

    return guard


def guarded(p, monkeypatch) -> tuple:
    """(the guard module, w1's guard: the reason it denies a call or None, w1's working copy) with
    a wave of two isolated builders out, w1 started as Claude Code starts an ant: the Agent call's
    PreToolUse hook records its tool_use_id, and Claude Code's file for the subagent names it."""
    wave = start_wave(p)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(p.root))
    call = {k: wave["spawns"][0][k] for k in ("description", "prompt", "subagent_type")}
    p.run(
        "agent-hook",
        "pre",
        input=json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": call, "tool_use_id": "toolu_w1"}),
    )
    session = p.root.parent / "claude-session"
    (session / "s1" / "subagents").mkdir(parents=True)
    (session / "s1" / "subagents" / "agent-a1.meta.json").write_text(json.dumps({"toolUseId": "toolu_w1"}))
    guard = _guard()

    def denied(tool, **tool_input):
        decision = guard.decide(
            {
                "agent_type": "ant:builder",
                "agent_id": "a1",
                "tool_name": tool,
                "transcript_path": str(session / "s1.jsonl"),
                "tool_input": tool_input,
            }
        )
        return decision["permissionDecisionReason"] if decision and decision["permissionDecision"] == "deny" else None

    return guard, denied, tree(p)["nodes"]["w1"]["worktree"]


@pytest.mark.usefixtures("guard_path")  # on both of the guard's paths
def test_the_guard_keeps_an_isolated_builder_in_its_worktree(worktree_colony, monkeypatch):
    p = worktree_colony
    guard, decide, mine = guarded(p, monkeypatch)
    scope = p.load("spawns.json")["runs"][-1]["scope"]
    assert decide("Write", file_path=str(p.root / mine / "app.py"), content="x") is None
    assert "outside it" in decide("Write", file_path=str(p.root / "app.py"), content="x")
    assert "outside it" in decide("Edit", file_path="app.py", old_string="a", new_string="b")
    assert decide("Write", file_path=str(p.root / f".aether/spawns/{scope}/w1.report.md"), content="notes") is None
    assert decide("Write", file_path=str(p.root / f".aether/spawns/{scope}/w2.report.md"), content="notes") is not None
    assert decide("Write", file_path=str(p.root / f".aether/spawns/{scope}/w1.md"), content="a brief") is not None
    assert decide("Bash", command=f"cd {mine} && python3 -m pytest -q") is None
    assert decide("Bash", command=f"cd {p.root / mine}; ls") is None
    assert f"start every Bash command with `cd {mine} && `" in decide("Bash", command="python3 -m pytest")
    assert decide("Bash", command=f"cd {p.root} && rm app.py") is not None
    assert decide("Bash", command="cd .aether/worktrees/elsewhere && ls") is not None
    sibling = tree(p)["nodes"]["w2"]["worktree"]
    assert decide("Bash", command=f"cd {sibling} && ls") is not None  # w2's copy is not w1's
    assert decide("Write", file_path=str(p.root / sibling / "app.py"), content="x") is not None
    # other castes and the Queen are not concerned; after the build, builders write anywhere again
    assert guard.decide({"tool_name": "Write", "tool_input": {"file_path": str(p.root / "app.py")}}) is None
    ok(p, "build-abort", "1", "--reason", "-", input="done with it\n")
    assert decide("Write", file_path=str(p.root / "app.py"), content="x") is None


# ---------------------------------------------------------------- what a builder may do to its copy, merged safely


def one_builder(p, work, record: str = "w1", claims=None) -> dict:
    """Start the wave, let `work(copy)` change w1's working copy, record w1 and w2 (unchanged)."""
    start_wave(p)
    work(workdir(p, "w1"))
    ok(p, "record", "w2", "-", input=done())
    return ok(p, "record", "w1", "-", input=claims or done())


def test_a_builder_that_breaks_its_copys_git_link_never_reaches_the_users_repository(worktree_colony):
    p = worktree_colony
    (p.root / "app.py").write_text(APP + "# the user's edit, not committed\n", "utf-8")

    def work(copy):
        (copy / "new.py").write_text("NEW = 1\n", "utf-8")
        (copy / ".git").unlink()  # gone: git must not fall back to the project's repository

    one_builder(p, work)
    assert (p.root / "new.py").read_text("utf-8") == "NEW = 1\n"
    assert "# the user's edit" in (p.root / "app.py").read_text("utf-8") and (p.root / "notes.txt").exists()
    assert git(p.root, "diff", "--cached", "--name-only") == ""  # the user's index untouched
    assert leftovers(p) == ([], [])


def test_odd_names_modes_and_shapes_merge_exactly(worktree_colony, merging):
    p = worktree_colony
    (p.root / ".gitattributes").write_text("*.crlf text eol=crlf\n", "utf-8")
    (p.root / "tool.sh").write_text("echo hi\n", "utf-8")
    (p.root / "win.crlf").write_bytes(b"one\r\ntwo\r\n")
    git(p.root, "add", ".gitattributes", "tool.sh", "win.crlf")
    git(p.root, "commit", "-q", "-m", "more")

    def work(copy):
        (copy / "a\nb.txt").write_text("A\n", "utf-8")  # a newline in a name
        (copy / "trailing .txt").write_text("T\n", "utf-8")
        (copy / "back\\slash.txt").write_text("B\n", "utf-8")
        (copy / "tool.sh").chmod(0o755)  # a mode change only
        (copy / "win.crlf").write_bytes(b"one\r\nTWO\r\n")
        (copy / "notes.txt").unlink()  # a file becomes a folder
        (copy / "notes.txt").mkdir()
        (copy / "notes.txt" / "inside.txt").write_text("I\n", "utf-8")
        (copy / "blob.bin").write_bytes(bytes(range(256)))

    one_builder(p, work)
    r = p.root
    assert (r / "a\nb.txt").read_text("utf-8") == "A\n" and (r / "trailing .txt").read_text("utf-8") == "T\n"
    assert (r / "back\\slash.txt").read_text("utf-8") == "B\n" and not (r / "back").exists()
    assert os.stat(r / "tool.sh").st_mode & 0o111 and (r / "tool.sh").read_text("utf-8") == "echo hi\n"
    assert (r / "win.crlf").read_bytes() == b"one\r\nTWO\r\n"  # line endings as the attributes say
    assert (r / "notes.txt" / "inside.txt").read_text("utf-8") == "I\n"
    assert (r / "blob.bin").read_bytes() == bytes(range(256))
    assert tree(p)["nodes"]["w1"]["merge"] == "merged"


def test_a_symbolic_link_from_a_builder_is_kept_not_followed(worktree_colony, tmp_path):
    p = worktree_colony
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n", "utf-8")
    one_builder(p, lambda copy: (copy / "link.txt").symlink_to(outside))
    w1 = tree(p)["nodes"]["w1"]
    assert w1["merge"] == "conflict" and "symbolic link" in w1["failure"]["error"]
    assert not os.path.lexists(p.root / "link.txt") and outside.read_text("utf-8") == "secret\n"


def test_a_rerun_starts_from_the_merged_state_with_what_its_helper_made(worktree_colony):
    p = worktree_colony
    start_wave(p)
    (workdir(p, "w1") / "part.py").write_text("PART = 1\n", "utf-8")
    request = (
        "--- SPAWN REQUEST ---\ncaste: builder\nreason: a helper module first\ncontext: helper.py\n"
        "blocking: true\n--- END SPAWN REQUEST ---\n"
    )
    ok(p, "record", "w2", "-", input=done())
    helper = ok(p, "record", "w1", "-", input=request + done(created=["part.py"]))["next"]
    (helper_id,) = [s["id"] for s in helper["spawns"]]
    (workdir(p, helper_id) / "helper.py").write_text("HELP = 1\n", "utf-8")
    rerun = ok(p, "record", helper_id, "-", input=done(created=["helper.py"]))["next"]
    (rerun_id,) = [s["id"] for s in rerun["spawns"]]
    copy = workdir(p, rerun_id)
    assert (copy / "helper.py").exists() and (copy / "part.py").exists()  # merged before it started
    assert (p.root / "helper.py").exists() and (p.root / "part.py").exists()


def test_two_conflicts_in_one_wave_are_retried_not_an_abort(worktree_colony, merging):
    p = worktree_colony
    start_wave(p)
    (workdir(p, "w1") / "requirements.txt").write_text("one\n", "utf-8")
    (workdir(p, "w2") / "requirements.txt").write_text("two\n", "utf-8")
    ok(p, "record", "w1", "-", input=done(created=["requirements.txt"]))
    after = ok(p, "record", "w2", "-", input=done(created=["requirements.txt"]))["next"]
    assert after["action"] == "spawn" and [s["id"] for s in after["spawns"]] == ["r1"]  # a retry, not abort_phase
    failure = tree(p)["nodes"]["w2"]["failure"]
    assert failure["category"] == "merge_conflict" and "added twice" in failure["error"] and "=======" in failure["error"]


def test_a_worktree_gone_before_the_merge_fails_its_task_for_a_retry(worktree_colony):
    import shutil

    p = worktree_colony
    start_wave(p)
    ok(p, "record", "w2", "-", input=done())
    shutil.rmtree(workdir(p, "w1"))
    after = ok(p, "record", "w1", "-", input=done())["next"]
    assert [s["id"] for s in after["spawns"]] == ["r1"]
    assert tree(p)["nodes"]["w1"]["failure"]["category"] == "worktree_gone"


def test_a_symbolic_link_for_the_builders_folder_is_refused_and_nothing_outside_is_removed(worktree_colony, tmp_path):
    p = worktree_colony
    photos = tmp_path / "photos" / "2024"
    photos.mkdir(parents=True)
    (photos / "a.jpg").write_text("jpg", "utf-8")
    (p.root / ".aether" / "worktrees").symlink_to(tmp_path / "photos")
    assert p.run("worktrees", "--clean", "--json").error["code"] == "path_is_symlink"
    assert (photos / "a.jpg").exists()


@pytest.mark.usefixtures("guard_path")  # on both of the guard's paths
def test_the_guard_reads_every_command_of_a_builder_not_only_its_first_word(worktree_colony, monkeypatch):
    p = worktree_colony
    guard, decide, mine = guarded(p, monkeypatch)

    def refused(command):
        return decide("Bash", command=command)

    for bad in (
        f"cd {mine} && echo x > {p.root}/app.py",
        f"cd {mine} && cd ../../../.. && rm app.py",
        f"cd {mine} && git -C {p.root} checkout -- app.py",
        f"cd {mine} && git --git-dir={p.root}/.git status",
    ):
        assert refused(bad), bad
    for good in (
        f"cd {mine} || exit 1",
        f"# run the tests\ncd {mine} && python3 -m pytest -q",
        f"(cd {mine} && ls)",
        f"cd {mine} && python3 /usr/lib/python3/dist-packages/x.py",
        f"cd {mine} && cat {p.root / mine}/app.py",
    ):
        assert refused(good) is None, good
    assert decide("Write", file_path=str(p.root / mine / ".git"), content="gitdir: /x")


def test_the_end_of_the_waves_sweeps_a_folder_a_crash_left_after_its_merge(worktree_colony):
    p = worktree_colony
    start_wave(p)
    stray = p.root / ".aether" / "worktrees" / "b0-old" / "w7"
    git(p.root, "worktree", "add", "-q", "--detach", str(stray), "HEAD")  # merged, then killed before removal
    for spawn_id in ("w1", "w2"):
        ok(p, "record", spawn_id, "-", input=done())
    ok(p, "record", "v1", "-", input=block({"findings": [], "summary": "fine"}))  # the waves are done
    assert not stray.exists() and leftovers(p) == ([], [])
