"""`aether bug …`: the Bug Bash pipeline (the library is `aether.bugs`)."""

from __future__ import annotations

import click

from aether.bugs import phases
from aether.cli.common import CONTENT, FILE_OR_STDIN, TEXT, command, example_epilog, read_stdin
from aether.core.exceptions import AetherError, input_error


class BugGroup(click.Group):
    """Keeps the Bug Bash exit codes: storage failures (lock timeout, corrupt state) exit 5."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except AetherError as exc:
            from aether.bugs.exit_codes import BUG_EXIT_STORAGE, STORAGE_CODES

            if exc.code in STORAGE_CODES:
                exc.exit_code = BUG_EXIT_STORAGE
            raise


@click.group("bug", cls=BugGroup, epilog=example_epilog("bug"))
def bug():
    """Bug Bash: reproduce a bug, find its root cause, plan a fix, approve it, fix and verify.

    \b
    Phases: CREATED → REPRODUCING → REPRODUCED → ANALYZING → ANALYZED → PLANNING → PLANNED
            → APPROVED → IMPLEMENTING → VERIFYING → FIXED | BLOCKED;
            NOT_REPRODUCIBLE and WONT_FIX end an investigation; BLOCKED can be retried.
    Typical flow:
      aether bug init "Login fails with special characters" --test tests/test_auth.py
      aether bug analyze <id>            (then record each agent's result:)
      aether bug record <id> reproduction|root-cause|fix-plan -  < result.json
      aether bug status <id>             (review)
      /ant:bug approve <id> [reason]     (typed by a person in Claude Code)
      aether bug fix <id> [--dry-run]

    \b
    Exit codes: 0 ok · 1 invalid arguments or bug not found · 2 id exists, wrong phase,
    not approved, reason missing · 3 not reproducible, implementation failed · 4 agent
    result rejected, verification failed · 5 lock timeout or corrupt state · 6 cost limit.
    State lives in <project>/.aether/bugs/<id>/; settings in .aether/config.yaml (bug_bash:).
    """


def _text_or_file(value):
    """--stack-trace: the text itself, @FILE to read a file, or - for stdin."""
    if value is None:
        return None
    if value == "-":
        return read_stdin("--stack-trace")
    if value.startswith("@"):
        return FILE_OR_STDIN.convert(value[1:], None, None)
    return value


# --report's keys, one per option (values are strings; github_issue a number).
REPORT_KEYS = ("description", "id", "test", "github_issue", "error", "stack_trace")


def _report_fields(text: str) -> dict:
    """--report: the whole bug report as one JSON object, so that free text (a description, an
    error message, a stack trace) reaches the helper on stdin instead of a command line."""
    from aether.bugs.pipeline import parse_answer

    doc, error = parse_answer(text)
    if error:
        raise input_error("invalid_json", f"--report is {error}")
    keys = ", ".join(REPORT_KEYS)
    if not isinstance(doc, dict):
        raise input_error("invalid_argument", f"--report must be a JSON object with the keys {keys}")
    unknown = sorted(set(doc) - set(REPORT_KEYS))
    if unknown:
        raise input_error("invalid_argument", f"--report has unknown key(s) {', '.join(unknown)}; use {keys}")
    for key, value in doc.items():
        if key != "github_issue" and value is not None and not isinstance(value, str):
            raise input_error("invalid_argument", f"--report: {key} must be a string or null, found {type(value).__name__}")
    if doc.get("stack_trace") == "-":
        raise input_error("invalid_argument", "--report: stack_trace cannot be - (stdin holds the report); give the text itself or @FILE")
    return doc


@command("init", text=True)
@click.argument("description", type=CONTENT, required=False)
@click.option("--id", "bug_id", type=TEXT, help="Bug id, a slug like `pwd-special-chars` (default: made from the description).")
@click.option("--test", "test_path", type=TEXT, help="Path of the failing test (e.g. tests/test_auth.py::test_login).")
@click.option("--github-issue", type=click.IntRange(min=1), help="GitHub issue number.")
@click.option("--error", type=CONTENT, help="The error message (or - for stdin).")
@click.option("--stack-trace", type=TEXT, help="The stack trace: text, @FILE to read a file, or - for stdin.")
@click.option(
    "--report",
    "report",
    metavar="FILE|-",
    type=FILE_OR_STDIN,
    help="The whole report as a JSON object instead of DESCRIPTION and the options: "
    '{"description", "id", "test", "github_issue", "error", "stack_trace"} '
    "(only description is required).",
)
def init_cmd(description, bug_id, test_path, github_issue, error, stack_trace, report):
    """Start a bug investigation from DESCRIPTION (or - for stdin). Exit 2 if the id exists.

    \b
    Free text is safest on stdin, as one JSON object (alone, or in a ```json block):
      aether bug init --report - <<'EOF'
      {"description": "Login fails with p@ss!", "test": "tests/test_auth.py",
       "error": "Invalid credentials"}
      EOF
    """
    from aether.bugs import pipeline

    if report is not None:
        given = [
            name
            for name, value in (
                ("DESCRIPTION", description),
                ("--id", bug_id),
                ("--test", test_path),
                ("--github-issue", github_issue),
                ("--error", error),
                ("--stack-trace", stack_trace),
            )
            if value is not None
        ]
        if given:
            raise input_error("usage_error", f"--report holds the whole report: drop {', '.join(given)} (or put them in the JSON object)")
        doc = _report_fields(report)
        description, bug_id, test_path = doc.get("description"), doc.get("id"), doc.get("test")
        github_issue, error, stack_trace = doc.get("github_issue"), doc.get("error"), doc.get("stack_trace")
        if description is None:
            raise input_error("invalid_argument", "--report: description is required")
    elif description is None:
        raise input_error("usage_error", "give DESCRIPTION (or - to read it from stdin), or --report with the report as a JSON object")
    return pipeline.init(description, bug_id, test_path, github_issue, error, _text_or_file(stack_trace))


@command("analyze", text=True)
@click.argument("bug_id", type=TEXT)
@click.option("--stop-at", type=click.Choice(phases.STOP_AT), help="Stop after this step: reproduce (REPRODUCED) or analyze (ANALYZED).")
@click.option("--retry", is_flag=True, help="Investigate a BLOCKED bug again from REPRODUCING.")
def analyze_cmd(bug_id, stop_at, retry):
    """Start (CREATED), continue (REPRODUCED, ANALYZED), resume or retry (BLOCKED) the
    investigation; the answer's agent_step names the agent to run and how to record its result.

    Without --stop-at the pipeline runs to PLANNED. Exit 3 for a NOT_REPRODUCIBLE bug.
    """
    from aether.bugs import pipeline

    return pipeline.analyze(bug_id, stop_at, retry)


@command("record", text=True)
@click.argument("bug_id", type=TEXT)
@click.argument("kind", type=click.Choice(["reproduction", "root-cause", "fix-plan"]))
@click.argument("source", metavar="FILE|-", type=FILE_OR_STDIN)
def record_cmd(bug_id, kind, source):
    """Record an agent's result (a JSON document, or the agent's answer holding a ```json
    block, from FILE or stdin) after checking its contract (docs/contracts.md, "Bug Bash"). A rejected result exits 4 with the list of
    defects to hand back to the agent; an accepted one moves the bug on and writes its report.
    """
    from aether.bugs import pipeline

    return pipeline.record(bug_id, kind, source)


@command("status", display=True)
@click.argument("bug_id", type=TEXT, required=False)
def status_cmd(bug_id):
    """Show one bug's status panel (or, without BUG_ID, the list of bugs)."""
    from aether.bugs import pipeline

    return pipeline.status(bug_id)


@command("list", display=True)
@click.option("--phase", type=TEXT, help="Only bugs in this phase (e.g. planned).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="Show at most this many bugs (newest first).")
def list_cmd(phase, limit):
    """List the bug investigations of this project, newest first."""
    from aether.bugs import pipeline

    return pipeline.list_bugs(phase, limit)


@command("approve", text=True)
@click.argument("bug_id", type=TEXT)
def approve_cmd(bug_id):
    """Say how a fix plan is approved: by a person typing `/ant:bug approve <id> [reason]` in
    Claude Code. This command never approves (exit 2, `approval_requires_human`): anything a
    command can do, a model with Bash could do too."""
    from aether.bugs import approving

    return approving.approve(bug_id)


@click.command("typed-approval", hidden=True)
@click.argument("ticket", type=TEXT)
def typed_approval_cmd(ticket):
    """The prompt hook's step (hooks/approve.sh): approve what the person typed, as the ticket
    says. Prints the hook's answer — the prompt blocked, with what happened as its reason, so no
    model turn follows — and exits 0 whatever happened."""
    import json
    import sys

    from aether.bugs import approving

    try:
        done = approving.typed_approval(ticket)
        if done is None:
            return  # not the approve command: no answer, the prompt goes on
        text = done["text"]
    except AetherError as exc:
        text = f"✗ Not approved: {exc.message}"
    except Exception as exc:  # noqa: BLE001 — the person is told; a hook must not fail silently
        text = f"✗ Not approved: the helper failed ({type(exc).__name__}: {exc})"
    sys.stdout.write(json.dumps({"decision": "block", "reason": text}, ensure_ascii=False) + "\n")


@command("reject", text=True)
@click.argument("bug_id", type=TEXT)
@click.option("--reason", type=CONTENT, help="Why the bug will not be fixed (required; - for stdin).")
def reject_cmd(bug_id, reason):
    """Close a PLANNED or NOT_REPRODUCIBLE bug as WONT_FIX. Exit 2 without a reason."""
    from aether.bugs import approving

    return approving.reject(bug_id, reason)


@command("fix", text=True)
@click.argument("bug_id", type=TEXT)
@click.option("--dry-run", is_flag=True, help="Show the diffs of the plan and change nothing.")
def fix_cmd(bug_id, dry_run):
    """Apply the APPROVED fix plan, write its tests to tests/test_bug_<id>.py, run them, and
    end FIXED (exit 0) or BLOCKED (exit 4, with the rollback command). Exit 2 when not
    approved or the plan changed since approval, 3 when the plan no longer applies (nothing
    is changed then)."""
    from aether.bugs import fixing

    return fixing.fix(bug_id, dry_run)


@command("rollback", text=True)
@click.argument("bug_id", type=TEXT)
@click.option("--force", is_flag=True, help="Roll back even files edited since the fix.")
def rollback_cmd(bug_id, force):
    """Put back the files changed by the last fix of a bug that is not FIXED (typically
    BLOCKED): modified and deleted files get their old content, created files are removed."""
    from aether.bugs import fixing

    return fixing.rollback(bug_id, force)


@command("cost", text=True)
@click.argument("bug_id", type=TEXT)
@click.option("--agent", required=True, type=TEXT, help="The agent that ran (e.g. bug-researcher).")
@click.option("--input-tokens", required=True, type=click.IntRange(min=0), help="Input tokens used.")
@click.option("--output-tokens", required=True, type=click.IntRange(min=0), help="Output tokens used.")
@click.option("--model", type=TEXT, help="Model id or alias (default: bug_bash.agent_model).")
@click.option("--phase", type=TEXT, help="Phase the agent ran in (default: the bug's phase).")
def cost_cmd(bug_id, agent, input_tokens, output_tokens, model, phase):
    """Record an agent run's token usage and its price. Exit 6 when the bug is now over
    its per-phase or total cost limit (the pipeline stops until the limit is raised)."""
    from aether.bugs import pipeline

    return pipeline.cost(bug_id, agent, input_tokens, output_tokens, model, phase)


@command("history")
@click.argument("bug_id", type=TEXT)
def history_cmd(bug_id):
    """Every phase transition of a bug, from its append-only log."""
    from aether.bugs import pipeline

    return pipeline.history(bug_id)


@command("restore", text=False)
@click.argument("bug_id", type=TEXT)
@click.option(
    "--file",
    "which",
    type=click.Choice(["state", "rollback"]),
    default="state",
    show_default=True,
    help="Which of the bug's files to restore.",
)
@click.option("--force", is_flag=True, help="Restore even though the current file is valid.")
def restore_cmd(bug_id, which, force):
    """Bring back the newest valid backup of a bug's corrupt state file."""
    from aether.bugs import pipeline

    return pipeline.restore(bug_id, force, which)


for _cmd in (
    init_cmd,
    analyze_cmd,
    record_cmd,
    status_cmd,
    list_cmd,
    approve_cmd,
    typed_approval_cmd,
    reject_cmd,
    fix_cmd,
    rollback_cmd,
    cost_cmd,
    history_cmd,
    restore_cmd,
):
    bug.add_command(_cmd)
