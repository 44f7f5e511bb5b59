"""Every stop of /ant:plan under the mod, in real Claude Code: `claude -p "/ant:plan"
--output-format json` ends with the stop's text for the person and its exit status, with no
Queen turn (docs/decisions/the-mod-runs-the-loop.md):

- a critic that never reaches 80: the loop asks the person (stagnation, or the iteration cap) — 11;
- a critic that gives no score, asked once more, gives none again — 14;
- a planner whose draft has more than 50 phases, or a task that depends on itself, twice — 14;
- a task notification of the last critic that comes after the stop starts no turn (dropped as the
  ants' hand-backs are): the person still reads the stop.
"""

from __future__ import annotations

import json

import pytest

from .colony_script import json_block
from .fake_api import first_user_contains, main, say, subagent
from .harness import NOW, REPO, aether_ok, state

pytestmark = pytest.mark.e2e

GOAL = "A tiny todo CLI"
AS_JSON = ["--output-format", "json"]  # exit statuses hold for text and json output (not stream-json)
LATE = REPO / "tests" / "e2e" / "fixtures" / "latenote"  # submits an ant's task notification once the command stopped


def draft(phases: int = 1, itself: bool = False) -> str:
    plan = {
        "goal": GOAL,
        "phases": [
            {
                "id": n,
                "name": f"Phase {n}",
                "description": "one step",
                "tasks": [{"id": f"{n}.1", "description": "the step", "depends_on": [f"{n}.1"] if itself else []}],
                "success_criteria": ["it works"],
            }
            for n in range(1, phases + 1)
        ],
    }
    return json_block(plan)


def critique(score: int | None, extra: str = "") -> str:
    head = f"### Overall Score\n{score}\n" if score is not None else ""
    return (
        f"## Planning Assessment\n{head}### Assessment Summary\nthin\n### Key Issues\n- no tests\n### Recommendations\n- add tests{extra}"
    )


def scout():
    return subagent("ant:scout").reply(say("Nothing to research for so small a goal."))


def planner(text: str):
    return subagent("ant:route-setter", first_user_contains("--- PLANNER ---")).reply(say(text))


def critic(text: str):
    return subagent("ant:watcher", first_user_contains("--- PLAN CRITIC ---")).reply(say(text))


def plan(claude, script, plugin_dirs=None):
    aether_ok(claude, "colony-init", "-", input=GOAL)
    return claude.run("/ant:plan", script, env=NOW, args=AS_JSON, check=False, plugin_dirs=plugin_dirs)


def no_plan_loaded(claude) -> bool:
    stored = claude.project / ".aether" / "data" / "PROJECT_PLAN.json"
    return not stored.exists() or not json.loads(stored.read_text("utf-8")).get("phases")


@pytest.mark.parametrize(
    "scores, why",
    [([50, 52, 53], "Stopped: stagnation"), ([10, 20, 30, 40, 50], "Stopped: the iteration cap was reached")],
    ids=["stagnation", "cap"],
)
def test_a_critic_that_never_reaches_80_asks_the_person_with_11(claude_mod, scores, why):
    script = [scout()]
    for score in scores:
        script += [planner(draft()), critic(critique(score))]
    run = plan(claude_mod, script)
    run.check(exit_code=11)
    assert run.main_turns == [], run.report()
    text = run.text
    assert "needs your decision" in text and why in text, text
    assert "Answer with /ant:plan <your guidance> for another round, or take the latest draft as it is with /ant:plan --accept." in text
    assert no_plan_loaded(claude_mod)


def test_a_critic_that_gives_no_score_twice_stops_with_14_and_says_what_was_wrong(claude_mod):
    run = plan(claude_mod, [scout(), planner(draft()), critic(critique(None)), critic(critique(None))])
    run.check(exit_code=14)
    assert run.main_turns == [], run.report()
    text = run.text
    assert "The plan loop stopped: Aether refused the critic's answer twice. No plan was loaded." in text, text
    assert "What was wrong: it gave no score Aether can read (an Overall Score from 0 to 100)." in text
    assert "To go on: run /ant:plan again" in text and "start it with" not in text
    # the critic asked again was told what to fix, in its own brief
    again = run.subagent_turns("ant:watcher")[1].first_user_text
    assert "Your last answer was refused" in again and "start it with a `### Overall Score` heading" in again
    assert "aether: stop (refused)" in run.stderr
    assert no_plan_loaded(claude_mod)


@pytest.mark.parametrize(
    "answer, wrong",
    [
        (draft(phases=51), "What was wrong: its last draft has 1 defect: phases: has 51 phases; the limit is 50."),
        (
            draft(itself=True),
            "What was wrong: its last draft has 1 defect: phases[0].tasks[0].depends_on[0]: a task cannot depend on itself.",
        ),
    ],
    ids=["51-phases", "depends-on-itself"],
)
def test_a_draft_refused_twice_stops_with_14_and_tells_the_person_how_to_go_on(claude_mod, answer, wrong):
    run = plan(claude_mod, [scout(), planner(answer), planner(answer)])
    run.check(exit_code=14)
    assert run.main_turns == [], run.report()
    text = run.text
    assert "The plan loop stopped: Aether refused the planner's draft twice. No plan was loaded." in text, text
    assert wrong in text
    assert "To go on: run /ant:plan again, or tell the planner what to do differently with /ant:plan <your guidance>" in text
    assert "fix them all" not in text and "store it again" not in text
    again = run.subagent_turns("ant:route-setter")[1].first_user_text  # the planner's brief keeps its instruction
    assert "Your last draft was refused — fix this and answer again:" in again and "fix them all and store it again" in again
    assert no_plan_loaded(claude_mod)


def test_a_late_task_notification_of_the_last_critic_starts_no_turn_after_the_stop(claude_mod):
    """The last critic's notification comes once the mod has stopped (the fixture plugin submits it
    then, as Claude Code writes one): the mod drops it — its answer came by turn.complete — so no
    Queen turn starts and the person reads the stop, with its exit status."""
    script = [scout(), planner(draft()), critic(critique(None)), critic(critique(None, "\nLATE-NOTIFICATION"))]
    script.append(main().reply(say("A turn of the main thread after the stop.")))  # what the defect led to
    run = plan(claude_mod, script, plugin_dirs=[REPO, LATE])
    run.check(exit_code=14, all_steps_used=False)
    assert run.main_turns == [], run.report()
    # -p prints the dropped prompt's reason last: the stop again, on one line
    said = "The plan loop stopped: Aether refused the critic's answer twice. No plan was loaded. What was wrong: it gave"
    assert run.text.startswith("Prompt dropped by a hook: ") and said in run.text and "To go on: run /ant:plan again" in run.text, run.text
    critics = [s for s in state(claude_mod, "spawns.json")["spawns"] if s["kind"] == "critic"]
    assert [(s["local"], s["status"], s["via"]) for s in critics] == [("critic1", "recorded", "mod"), ("critic1-2", "recorded", "mod")]
