"""Same-wave builders in their own git worktrees, in real Claude Code against the scripted model,
in a git fixture project (STANDARD mode: isolation on by default).

- two builders of one wave change different parts of one file: both changes land, merged back
  in order, and no worktree or branch is left;
- two builders change the same lines: the later task fails with a conflict report, its retry
  runs on the merged state, and the build ends completed;
- a builder that writes outside its worktree is refused by the guard, and then works in it;
- a build killed mid-wave, resumed in a new session: the same worktrees go on, every change
  lands, nothing is left (worktrees 0, branches 0, changes lost 0).

No --allowedTools and no skip-permissions: the command's `allowed-tools` is the only grant.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from . import colony_script
from .colony_script import SMOKE_TEST, Queen, honest_watcher, is_ref, json_block, next_with, worker_result
from .fake_api import bash, say, subagent, tool, turn
from .harness import NOW, aether_ok, run_and_kill, state
from helpers.git import git_output as git  # as git printed it
from helpers.git import init_repo
from helpers.processes import SLEEP, alive, argv_of, descendants, is_sleeper

pytestmark = pytest.mark.e2e

APP = "def one():\n    return 1\n\n\ndef two():\n    return 2\n\n\ndef three():\n    return 3\n"
PLAN = {
    "goal": "A small app",
    "phases": [
        {
            "id": 1,
            "name": "Functions",
            "description": "app.py and util.py",
            "tasks": [
                {"id": "1.1", "description": "app.py: one() returns 10", "depends_on": []},
                {"id": "1.2", "description": "util.py, and three() returns 30 in app.py", "depends_on": []},
            ],
            "success_criteria": ["python3 -c 'import app, util' works"],
        }
    ],
}
LEAD = json_block(
    {
        "phase": 1,
        "workers": [
            {"id": "app", "caste": "builder", "tasks": ["1.1"], "writes": ["app.py"]},
            {"id": "util", "caste": "builder", "tasks": ["1.2"], "writes": ["util.py"]},
        ],
    },
    "Two builders, one file each.",
)
REVIEW = json_block({"findings": [], "summary": "both changes read well", "critical_count": 0})
VERIFIED = json_block(
    {
        "passed": True,
        "score": 95,
        "summary": "app and util import",
        "checks": [{"name": "imports", "passed": True, "detail": "import app, util"}],
    }
)
LESSONS = "- builders in their own worktrees may share a file safely\n"


def prepare(claude) -> Path:
    project = Path(claude.project)
    init_repo(project, {"app.py": APP, "tests/test_smoke.py": SMOKE_TEST}, "the app before the colony")
    aether_ok(claude, "colony-init", "-", input="A small app")
    aether_ok(claude, "plan-load", "-", input=json.dumps(PLAN))
    return project


def copy_of(request) -> str:
    """The working copy a builder's brief names (`cd <it> && …`)."""
    return re.search(r"Start EVERY Bash command with `cd (\S+) && `", request.first_user_text).group(1)


def write(project: Path, path: str, content: str):
    """A builder's Write into its own working copy."""
    return lambda r: tool("Write", file_path=f"{project}/{copy_of(r)}/{path}", content=content)


def replace_in_app(old: str, new: str):
    """A builder's Bash edit of app.py in its working copy (cd first, as the brief says)."""
    code = f"import pathlib; p = pathlib.Path('app.py'); p.write_text(p.read_text().replace({old!r}, {new!r}))"
    return lambda r: bash(f'cd {copy_of(r)} && python3 -c "{code}"', "edit app.py")


queen_reply = colony_script.queen_reply(LESSONS)


def queen(turns: int) -> list:
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    for _ in range(turns - 1):
        q.step(queen_reply)
    return q.steps


def ant(caste: str, local: str, *replies) -> list:
    return [subagent(f"ant:{caste}", is_ref(local), turn(n)).reply(reply) for n, reply in enumerate(replies, start=1)]


def checkers() -> list:
    return [*ant("route-setter", "lead1", say(LEAD)), *ant("watcher", "v1", say(REVIEW)), *honest_watcher(is_ref("watch1"), VERIFIED)]


def leftovers(project: Path) -> tuple:
    """(worktrees besides the main checkout, aether/… branches) — what the colony left behind."""
    listed = git(project, "worktree", "list", "--porcelain").count("worktree ")
    return listed - 1, git(project, "branch", "--list", "aether/*").split()


def shown(run) -> str:
    return run.main_turns[-1].reply[-1]["text"]


# ---------------------------------------------------------------- (1) one file, two parts, both land


def test_two_builders_changing_one_file_in_different_places_both_land(claude):
    project = prepare(claude)
    builders = [
        *ant(
            "builder",
            "w1",
            write(project, "app.py", APP.replace("return 1", "return 10")),
            say(worker_result("one() returns 10", modified=["app.py"])),
        ),
        *ant(
            "builder",
            "w2",
            write(project, "util.py", "HELP = 'util'\n"),
            replace_in_app("return 3", "return 30"),
            say(worker_result("util.py, and three() in app.py", created=["util.py"], modified=["app.py"])),
        ),
    ]
    # next · lead · w1+w2 · v1 · watch1 · lessons · the summary
    run = claude.run("/ant:build 1", queen(7) + checkers() + builders, env=NOW, timeout=400)

    assert run.permission_denials == []
    assert [c["input"]["description"] for c in run.tool_calls("Agent")] == [
        "lead1 route-setter",
        "w1 builder",
        "w2 builder",
        "v1 watcher",
        "watch1 watcher",
    ]
    # each builder worked in its own worktree; the builder's Bash began with `cd` into it
    briefs = [t.first_user_text for t in run.subagent_turns("ant:builder")]
    assert briefs and all("--- WORKING COPY ---" in b for b in briefs)
    w2_bash = [c["input"]["command"] for c in run.tool_calls("Bash", main_only=False) if c["input"].get("description") == "edit app.py"]
    assert w2_bash and w2_bash[0].startswith("cd .aether/worktrees/b1-")
    # both changes are in the project; the user's HEAD and index untouched
    app = (project / "app.py").read_text("utf-8")
    assert "return 10" in app and "return 30" in app and (project / "util.py").read_text("utf-8") == "HELP = 'util'\n"
    assert git(project, "log", "--oneline").count("\n") == 1 and git(project, "diff", "--cached") == ""
    text = shown(run)
    assert "Merged back, in order:\n  w1 merged (1 file)\n  w2 merged (2 files)" in text
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    assert leftovers(project) == (0, [])
    assert aether_ok(claude, "validate-state", "all")["pass"] is True


# ---------------------------------------------------------------- (2) the same lines: conflict, retry, completed


def test_a_conflict_fails_the_later_task_whose_retry_on_the_merged_state_completes(claude):
    project = prepare(claude)
    builders = [
        *ant("builder", "w1", replace_in_app("return 2", "return 200"), say(worker_result("two() changed", modified=["app.py"]))),
        *ant(
            "builder",
            "w2",
            write(project, "util.py", "HELP = 'util'\n"),
            replace_in_app("return 2", "return 222"),
            say(worker_result("util.py; two() changed too", created=["util.py"], modified=["app.py"])),
        ),
        # the retry's working copy holds w1's change (the merged state): it builds on it
        *ant(
            "builder",
            "r1",
            lambda r: tool("Read", file_path=f"{project}/{copy_of(r)}/app.py"),
            write(project, "util.py", "HELP = 'util'\n"),
            replace_in_app("return 200", "return 200 + 22"),
            say(worker_result("util.py, and two() on top of w1's change", created=["util.py"], modified=["app.py"])),
        ),
    ]
    # next · lead · w1+w2 · r1 · v1 · watch1 · lessons · the summary
    run = claude.run("/ant:build 1", queen(8) + checkers() + builders, env=NOW, timeout=400)

    assert run.permission_denials == []
    assert [c["input"]["description"] for c in run.tool_calls("Agent")] == [
        "lead1 route-setter",
        "w1 builder",
        "w2 builder",
        "r1 builder",
        "v1 watcher",
        "watch1 watcher",
    ]
    r1_read = [t for t in run.subagent_turns("ant:builder") if t.tool_results() and "return 200" in t.tool_results()[0]["text"]]
    assert r1_read  # the retry saw the merged state
    r1_brief = next(
        t.first_user_text for t in run.subagent_turns("ant:builder") if "You are r1" in t.first_user_text or "/r1.md]" in t.first_user_text
    )
    assert "merge conflict" in r1_brief and "app.py" in r1_brief  # the conflict report reached the retry
    app = (project / "app.py").read_text("utf-8")
    assert "return 200 + 22" in app and "return 222" not in app and "<<<<<<<" not in app
    tree = state(claude, "COLONY_STATE.json")["spawn_tree"]
    assert (tree["nodes"]["w2"]["merge"], tree["nodes"]["w2"]["failure"]["category"]) == ("conflict", "merge_conflict")
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
    text = shown(run)
    assert "w2 conflicted in app.py → redone by r1 on the merged state" in text and "r1 merged (2 files)" in text
    assert leftovers(project) == (0, [])  # the conflicting result was superseded by r1's, and let go


# ---------------------------------------------------------------- (3) a write outside the worktree is refused


def test_a_builder_writing_outside_its_worktree_is_refused_then_works_in_it(claude):
    project = prepare(claude)
    builders = [
        *ant(
            "builder",
            "w1",
            tool("Write", file_path=f"{project}/app.py", content="broken\n"),
            write(project, "app.py", APP.replace("return 1", "return 10")),
            say(worker_result("one() returns 10", modified=["app.py"])),
        ),
        *ant(
            "builder",
            "w2",
            bash("python3 -c \"open('util.py', 'w').write('X = 1')\"", "write util.py here"),
            write(project, "util.py", "HELP = 'util'\n"),
            say(worker_result("util.py", created=["util.py"])),
        ),
    ]
    run = claude.run("/ant:build 1", queen(7) + checkers() + builders, env=NOW, timeout=400)

    refused = [r for r in run.subagent_turns("ant:builder") if r.tool_results() and r.tool_results()[0]["is_error"]]
    reasons = " ".join(r.tool_results()[0]["text"] for r in refused)
    assert len(refused) == 2 and "outside it" in reasons and "start every Bash command with" in reasons
    assert not (project / "util.py").read_text("utf-8").startswith("X")  # the refused Bash wrote nothing here
    assert (project / "app.py").read_text("utf-8") == APP.replace("return 1", "return 10")  # via the merge only
    assert leftovers(project) == (0, [])


# ---------------------------------------------------------------- (4) killed mid-wave, resumed


def test_a_build_killed_mid_wave_resumes_and_leaves_nothing_and_loses_nothing(claude):
    project = prepare(claude)
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    q.step(queen_reply)  # lead1
    q.step(queen_reply)  # w1 + w2: they write part of their work, then hang
    hanging = [
        *ant(
            "builder",
            "w1",
            write(project, "app.py", APP.replace("return 1", "return 10")),
            lambda r: bash(f"cd {copy_of(r)} && {SLEEP}", "wait for the build server"),
        ),
        *ant("builder", "w2", lambda r: bash(f"cd {copy_of(r)} && {SLEEP}", "wait for the build server")),
    ]
    sleepers: set = set()

    def working(pid: int) -> bool:
        sleepers.update(p for p in descendants(pid) if is_sleeper(argv_of(p)))
        return len(sleepers) >= 2

    killed = run_and_kill(claude, "/ant:build 1", q.steps + [*ant("route-setter", "lead1", say(LEAD))] + hanging, working, env=NOW)
    assert killed.code != 0 and not any(alive(p) for p in sleepers)
    assert leftovers(project)[0] == 2  # the wave's two worktrees, w1's half-done work in one

    # a NEW session: the same spawns, in the same worktrees, finish; their work lands
    builders = [
        *ant(
            "builder",
            "w1",
            lambda r: tool("Read", file_path=f"{project}/{copy_of(r)}/app.py"),
            say(worker_result("one() returns 10", modified=["app.py"])),
        ),
        *ant(
            "builder",
            "w2",
            write(project, "util.py", "HELP = 'util'\n"),
            replace_in_app("return 3", "return 30"),
            say(worker_result("util.py, three() returns 30", created=["util.py"], modified=["app.py"])),
        ),
    ]
    q = Queen()
    q.step(lambda r: next_with(r, "aether next --build <N>", N=1))
    for _ in range(5):  # w1+w2 · v1 · watch1 · lessons · the summary
        q.step(queen_reply)
    resumed = claude.run(
        "/ant:build 1",
        q.steps + builders + [*ant("watcher", "v1", say(REVIEW)), *honest_watcher(is_ref("watch1"), VERIFIED)],
        env=NOW,
        timeout=400,
    )
    assert resumed.permission_denials == []
    w1_read = [t for t in resumed.subagent_turns("ant:builder") if t.tool_results() and "return 10" in t.tool_results()[0]["text"]]
    assert w1_read  # w1's worktree still held what it wrote before the kill
    app = (project / "app.py").read_text("utf-8")
    changes_lost = ["return 10" not in app, "return 30" not in app, not (project / "util.py").exists()]
    worktrees_left, branches_left = leftovers(project)
    assert (worktrees_left, len(branches_left), sum(changes_lost)) == (0, 0, 0)
    assert aether_ok(claude, "worktrees", "--json")["stale"] == []
    assert state(claude, "PROJECT_PLAN.json")["phases"][0]["status"] == "completed"
