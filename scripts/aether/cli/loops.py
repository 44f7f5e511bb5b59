"""Refinement loops: loop-init, loop-decide, loop-score, feedback-store, feedback-get."""

from __future__ import annotations

import click

from aether.cli.common import CONTENT, FILE_OR_STDIN, NUMBER, TEXT, command
from aether.rules import contracts
from aether.rules import loops as loops_rules

KIND = click.Choice(loops_rules.FEEDBACK_KINDS)

# `-1` reaches the argument's own check (a clear error) instead of being read as an option
NEGATIVE_OK = {"ignore_unknown_options": True}


@command(
    "loop-init",
    help=f"""Start a refinement loop of TYPE ({", ".join(loops_rules.THRESHOLDS)}) and return its loop_id.

    build-start makes the code loop itself in FULL mode or with --loop; `loop-init code
    --build` binds one to a build already running (an open loop of that phase is reused).""",
)
@click.argument("loop_type", metavar="TYPE", type=TEXT)
@click.option(
    "--threshold",
    type=NUMBER,
    help="Passing score (default: " + ", ".join(f"{kind} {score}" for kind, score in loops_rules.THRESHOLDS.items()) + ").",
)
@click.option("--build", is_flag=True, help="Bind a code loop to the running build: a refine decision then plans refinement spawns.")
def loop_init(loop_type, threshold, build):
    from aether.steps import loops

    return loops.init(loop_type, threshold, build)


@command(
    "loop-decide",
    context_settings=NEGATIVE_OK,
    help=f"""Record SCORE (0–100) for the loop's iteration;
    answers `refine`, `complete` or
    `user_input`, with the reason and `next` (what to run).

    Without SCORE, the score parsed from this iteration's critic feedback (feedback-store
    --kind critic) is used. complete: score ≥ threshold. user_input: iteration
    {loops_rules.MAX_ITERATIONS} of a round, or stagnation (less than {loops_rules.STAGNATION_MIN_GAIN} points gained over the last
    {loops_rules.STAGNATION_WINDOW} iterations); the loop then waits for `feedback-store LOOP_ID - --kind user`, which
    starts a new round. Otherwise refine: for a code loop bound to a build, the refinement spawns
    and the re-verification are planned in the spawn tree (`refinement`). A code loop's
    iteration is kept as a checkpoint ref, and committed as `build iteration N: …` when
    .aether/config.yaml says `code_loop: {{commit_iterations: true}}`.""",
)
@click.argument("loop_id", type=TEXT)
@click.argument("score", type=NUMBER, required=False)
def loop_decide(loop_id, score):
    from aether.steps import loops

    return loops.decide(loop_id.strip(), score)


_WEIGHTS = ", ".join(f"{part} {weight}" for part, weight in loops_rules.SCORE_WEIGHTS.items())


@command(
    "loop-score",
    text=True,
    help=f"""The code review score from its PARTS (a file or `-`),
    the code review score's weights: {_WEIGHTS}.

    \b
    PARTS: {{"tests": {{"passed": 12, "failed": 0}} | true | false,
            "types": {{"errors": 0}} | true | false,  "lint": (the same),
            "coverage": 84.5,                         (percent; ≥ {loops_rules.COVERAGE_TARGET} earns the points)
            "plan_alignment": 0.8, "spec_alignment": true}}   (true/false or a fraction 0–1)
    A part that does not apply is null (or left out): it leaves the denominator.
    A verify ant's whole answer works too (its ```json block's `score_parts`); with --loop, its
    `summary` and `findings` become the iteration's critic feedback (refinement briefs and
    loop-present show them).""",
)
@click.argument("parts", type=FILE_OR_STDIN)
@click.option("--loop", "loop_id", type=TEXT, help="Also run loop-decide for this loop with the score.")
def loop_score(parts, loop_id):

    from aether.steps import loops

    doc = contracts.extract_json(parts, "the score parts")
    if not loop_id:
        return loops_rules.score(doc)
    result = loops.score_answer(loop_id.strip(), doc)
    result["text"] += f"\nLoop {loop_id.strip()}: {result['loop']['decision']} — {result['loop']['reason']}"
    return result


@command("feedback-store")
@click.argument("loop_id", type=TEXT)
@click.argument("text", type=CONTENT)
@click.option("--kind", type=KIND, default="critic", show_default=True, help="Who gave the feedback.")
@click.option(
    "--refine",
    is_flag=True,
    help="The user's answer asks a code loop bound to the running build for another round: plan "
    "its refinement wave now (`refinement`, `next.commands`), the briefs quoting the answer.",
)
def feedback_store(loop_id, text, kind, refine):
    """Keep feedback TEXT (or `-` for stdin) for the loop. User feedback given while the loop
    waits for the user resumes it (a new round: cap and stagnation window reset).

    Critic feedback must carry its Overall Score (it is parsed and kept beside the text). With
    --refine (a code loop waiting for the user, bound to a running build), the refinement
    builders and the re-verification are planned at once, as a refine decision plans them."""
    from aether.steps import loops

    return loops.feedback_store(loop_id.strip(), text, kind, refine)


@command("feedback-get", text=True)
@click.argument("loop_id", type=TEXT)
@click.option("--kind", type=KIND, help="Only this kind.")
def feedback_get(loop_id, kind):
    """The loop's feedback (critic and user, per iteration) and, in `text`, the latest of
    each as a block for the next producer."""
    from aether.steps import loops

    return loops.feedback_get(loop_id.strip(), kind)
