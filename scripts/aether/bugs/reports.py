"""What Bug Bash writes for people: the markdown reports in the bug's folder, the status
panel, the list table and the step summaries (the formats in docs/contracts.md)."""

from __future__ import annotations

from aether.bugs import phases
from aether.core.text import one_line
from aether.rules import runner_summary

PANEL_WIDTH = 70  # characters between the panel's borders
LIST_COLUMNS = (("ID", 22), ("Phase", 16), ("Created", 13), ("Cost", 8), ("Next", 10))


# ---------------------------------------------------------------- helpers


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that survives backticks inside the text."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def when(iso: str | None, date_only: bool = False) -> str:
    if not iso:
        return "-"
    text = iso.replace("T", " ").rstrip("Z")
    return text[:10] if date_only else text[:19]


def usd(value: float) -> str:
    return f"${value:.2f}"


def _bullets(items) -> list[str]:
    return [f"- {one_line(i, 500)}" for i in items] or ["- (none)"]


# ---------------------------------------------------------------- markdown reports


def report_md(state: dict) -> str:
    r = state["report"]
    lines = [
        f"# Bug report: {state['bug_id']}",
        "",
        f"- Created: {when(state['created_at'])} UTC",
        f"- Phase: {phases.label(state['phase'])}",
    ]
    if r.get("test_path"):
        lines.append(f"- Failing test: `{r['test_path']}`")
    if r.get("github_issue"):
        lines.append(f"- GitHub issue: #{r['github_issue']}")
    lines += ["", "## Description", "", r["description"]]
    if r.get("error_message"):
        lines += ["", "## Error", "", fence(r["error_message"])]
    if r.get("stack_trace"):
        lines += ["", "## Stack trace", "", fence(r["stack_trace"])]
    if r.get("steps_to_reproduce"):
        lines += ["", "## Steps to reproduce", ""]
        lines += [f"{i}. {s}" for i, s in enumerate(r["steps_to_reproduce"], 1)]
    return "\n".join(lines) + "\n"


def reproduction_md(state: dict) -> str:
    rep = state["reproduction"]
    verdict = "CONFIRMED" if rep["confirmed"] else "NOT REPRODUCED"
    lines = [
        f"# Reproduction: {state['bug_id']}",
        "",
        f"- Result: **{verdict}** ({rep['confidence']} confidence)",
        f"- Attempts: {rep['attempts']}",
    ]
    if rep.get("environment"):
        lines.append("- Environment: " + ", ".join(f"{k}={v}" for k, v in rep["environment"].items()))
    lines += ["", "## Steps", ""]
    lines += [f"{i}. {s}" for i, s in enumerate(rep["reproduction_steps"], 1)] or ["(none)"]
    lines += ["", "## Affected files", ""] + _bullets(f"`{f}`" for f in rep["affected_files"])
    for key, title in (("error_message", "Error"), ("stack_trace", "Stack trace"), ("test_output", "Test output")):
        if rep.get(key):
            lines += ["", f"## {title}", "", fence(rep[key])]
    for path, code in rep.get("related_code_snippets", {}).items():
        lines += ["", f"## `{path}`", "", fence(code)]
    if rep.get("notes"):
        lines += ["", "## Notes", "", rep["notes"]]
    run = rep.get("run")
    if run:  # the run Aether made itself, which decided the verdict
        said = ["", "The researcher said confirmed; this run did not show the bug."] if rep.get("claimed_confirmed") else []
        lines += ["", "## What Aether ran", "", f"`{run['shown']}` → {run_result(run)}", *said]
        lines += ["", fence(run.get("output_tail") or "(no output)")]
    return "\n".join(lines) + "\n"


def run_result(run: dict) -> str:
    """`exit 1 (1 ran: 1 failed)`, or how the run could not happen."""
    if run.get("exit_code") is None:
        return run.get("why") or run.get("error") or "did not run"
    if run.get("timed_out"):
        return f"timed out after {run.get('timeout_seconds')}s"
    return f"exit {run['exit_code']} ({runner_summary.short(run.get('counts')) or 'no runner summary'})"


def root_cause_md(state: dict) -> str:
    rc = state["root_cause"]
    where = rc["root_cause_file"] + (f":{rc['root_cause_line']}" if rc.get("root_cause_line") else "")
    lines = [
        f"# Root cause analysis: {state['bug_id']}",
        "",
        f"**{rc['summary']}**",
        "",
        f"- Location: `{where}`",
        f"- Confidence: {rc['confidence']}",
        "",
        "## Execution trace",
        "",
    ]
    lines += [f"{i}. {s}" for i, s in enumerate(rc["execution_trace"], 1)]
    lines += [
        "",
        "## The code",
        "",
        fence(rc["root_cause_code"]),
        "",
        "## Why it fails",
        "",
        rc["root_cause_explanation"],
        "",
        "## Why the tests missed it",
        "",
        rc["why_not_caught"],
    ]
    if rc.get("alternative_hypotheses"):
        lines += ["", "## Alternatives considered", ""] + _bullets(rc["alternative_hypotheses"])
    return "\n".join(lines) + "\n"


def fix_plan_md(state: dict, plan_hash: str) -> str:
    plan = state["fix_plan"]
    lines = [
        f"# Fix plan: {state['bug_id']}",
        "",
        f"**{plan['summary']}**",
        "",
        f"- Risk: {plan['risk_level'].upper()} — {one_line(plan['risk_explanation'], 300)}",
        f"- Changes: {len(plan['changes'])}; tests: {len(plan['test_cases'])}",
    ]
    if plan.get("scope"):
        lines.append(f"- Scope: {plan['scope']}")
    if plan.get("estimated_effort"):
        lines.append(f"- Estimated effort: {plan['estimated_effort']}")
    lines.append(f"- Plan SHA-256: `{plan_hash}` (an approval is bound to this hash)")
    for i, ch in enumerate(plan["changes"], 1):
        lines += ["", f"## Change {i}: {ch['change_type']} `{ch['file_path']}`", "", ch["explanation"]]
        if ch.get("current_code"):
            lines += ["", "Current code:", "", fence(ch["current_code"])]
        if ch.get("proposed_code"):
            lines += ["", "Proposed code:", "", fence(ch["proposed_code"])]
    lines += ["", "## Tests", ""]
    for t in plan["test_cases"]:
        lines.append(f"- `{t['name']}` ({t['category']}): {one_line(t['description'], 300)}")
    if plan.get("side_effects"):
        lines += ["", "## Side effects", ""] + _bullets(plan["side_effects"])
    lines += ["", "## Rollback plan", "", plan["rollback_plan"]]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- panels


def panel(title: str, rows: list[str], width: int = PANEL_WIDTH) -> str:
    head = f" {title} "
    if len(head) > width - 2:
        head = head[: width - 3] + "… "
    left = (width - len(head)) // 2
    top = "╭" + "─" * left + head + "─" * (width - left - len(head)) + "╮"
    body = []
    for row in rows:
        text = row if len(row) <= width - 2 else row[: width - 3] + "…"
        body.append("│ " + text.ljust(width - 2) + " │")
    return "\n".join([top, *body, "╰" + "─" * width + "╯"])


def status_summary(state: dict, cost_usd: float) -> dict:
    """The status JSON (phase in capitals), plus next steps and the approval."""
    rep, rc, plan = state.get("reproduction"), state.get("root_cause"), state.get("fix_plan")
    bug_id, phase = state["bug_id"], state["phase"]
    return {
        "bug_id": bug_id,
        "phase": phases.label(phase),
        "created_at": state["created_at"],
        "updated_at": state["updated_at"],
        "cost_usd": round(cost_usd, 6),
        "stop_at": state.get("stop_at"),
        "reproduction": None
        if rep is None
        else {
            "confirmed": rep["confirmed"],
            "confidence": rep["confidence"],
            "steps": len(rep["reproduction_steps"]),
            "affected_files": len(rep["affected_files"]),
            "run": _run_summary(rep.get("run")),
        },
        "root_cause": None
        if rc is None
        else {"file": rc["root_cause_file"], "line": rc.get("root_cause_line"), "summary": rc["summary"], "confidence": rc["confidence"]},
        "fix_plan": None
        if plan is None
        else {
            "summary": plan["summary"],
            "files_changed": len({c["file_path"] for c in plan["changes"]}),
            "test_cases": len(plan["test_cases"]),
            "risk_level": plan["risk_level"],
        },
        "approval": state.get("approval_record"),
        "implementation": _implementation_summary(state.get("implementation")),
        "blocked_reason": state.get("blocked_reason"),
        "rejection": state.get("rejection"),
        "next": phases.legal_commands(phase, bug_id),
    }


def _run_summary(run):
    if not run:
        return None
    return {
        "command": run.get("command"),
        "shown": run.get("shown"),
        "exit_code": run.get("exit_code"),
        "counts": run.get("counts"),
        "outcome": run.get("outcome"),
        "result": run_result(run),
    }


def _implementation_summary(impl):
    if not impl:
        return None
    keys = ("success", "files_changed", "tests_passed", "tests_failed", "error", "rollback", "broken_tests", "already_failing")
    out = {k: impl.get(k) for k in keys if k in impl}
    for key in ("suite", "baseline"):
        if impl.get(key):
            out[key] = _run_summary(impl[key])
    return out


def status_text(summary: dict) -> str:
    phase = summary["phase"]
    note = phases.PHASE_NOTE.get(phase.lower())
    rows = [
        f"Phase: {phase}" + (f" ({note})" if note else ""),
        f"Created: {when(summary['created_at'])}",
        f"Cost: {usd(summary['cost_usd'])}",
    ]
    if summary["stop_at"]:
        rows.append(f"Stops at: {summary['stop_at']}")
    rep = summary["reproduction"]
    if rep:
        verdict = "CONFIRMED" if rep["confirmed"] else "NOT REPRODUCED"
        rows += [
            "",
            f"Reproduction: {verdict} ({rep['confidence']} confidence)",
            f"  Steps: {rep['steps']}",
            f"  Affected files: {rep['affected_files']}",
        ]
        if rep.get("run"):
            rows += [f"  Reproduced by: {rep['run']['shown']}", f"    → {rep['run']['result']}"]
    rc = summary["root_cause"]
    if rc:
        where = rc["file"] + (f":{rc['line']}" if rc["line"] else "")
        rows += ["", f"Root Cause: {where}", f"  {rc['summary']}", f"  Confidence: {rc['confidence']}"]
    plan = summary["fix_plan"]
    if plan:
        rows += [
            "",
            "Fix Plan:",
            f"  Summary: {plan['summary']}",
            f"  Files: {plan['files_changed']} change{'s' if plan['files_changed'] != 1 else ''}",
            f"  Tests: {plan['test_cases']} new test case{'s' if plan['test_cases'] != 1 else ''}",
            f"  Risk: {plan['risk_level'].upper()}",
        ]
    approval = summary["approval"]
    if approval:
        rows += [
            "",
            f"Approved by {approval['approved_by']} at {when(approval['approved_at'])}"
            + (f" (given via {approval['given_via']})" if approval.get("given_via") else ""),
        ]
    impl = summary["implementation"]
    if impl and "tests_passed" in impl:
        rows.append(f"Verification: {impl['tests_passed']} passed, {impl['tests_failed']} failed")
    for key, label in (("baseline", "before the fix"), ("suite", "after the fix")):
        if impl and impl.get(key):
            rows.append(f"  Whole suite {label}: {impl[key]['result']}")
    for key, label in (("broken_tests", "Broken by the fix"), ("already_failing", "Already failing before the fix")):
        if impl and impl.get(key):
            rows.append(f"  {label}: {', '.join(impl[key])}")
    if summary["blocked_reason"]:
        rows += ["", f"Blocked: {summary['blocked_reason']}"]
    if summary["rejection"]:
        rows += ["", f"Won't fix: {one_line(summary['rejection'].get('reason', ''), 60)}"]
    rows += ["", "Next: " + (summary["next"][0] if summary["next"] else "-")]
    return panel(f"Bug: {summary['bug_id']}", rows)


def list_text(rows: list[dict], total: int) -> str:
    widths = [w for _, w in LIST_COLUMNS]
    widths[0] = max([widths[0]] + [len(r["bug_id"]) for r in rows])
    inner = sum(widths) + len(widths) - 1

    def line(cells):
        return " ".join(str(c)[:w].ljust(w) for c, w in zip(cells, widths))

    body = [line(name for name, _ in LIST_COLUMNS)]
    sep = "├" + "─" * (inner + 2) + "┤"
    table_rows = []
    for r in rows:
        if r.get("error"):
            table_rows.append(line([r["bug_id"], "CORRUPT", "-", "-", "restore"]))
        else:
            table_rows.append(line([r["bug_id"], r["phase"], when(r["created_at"], True), usd(r["cost_usd"]), r["next"]]))
    text = panel("Bug Investigations", body, inner + 2).splitlines()
    text = [text[0], text[1], sep] + ["│ " + t.ljust(inner) + " │" for t in table_rows] + [text[-1]]
    shown = len(rows)
    tail = f"{total} bug{'s' if total != 1 else ''} found"
    if shown < total:
        tail += f" ({shown} shown)"
    return "\n".join(text) + f"\n\n{tail}. Use `aether bug status <id>` for details."


def next_steps(commands: list[tuple[str, str]]) -> list[str]:
    if not commands:
        return []
    width = max(len(c) for c, _ in commands)
    return ["", "Next steps:"] + [f"  {c.ljust(width)}" + (f"  # {why}" if why else "") for c, why in commands]
