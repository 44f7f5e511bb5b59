"""The Bug Bash pipeline: what each `aether bug …` command does to a bug.

The Queen drives it: `init` → `analyze` (→ REPRODUCING) → the Bug Researcher's result through
`record … reproduction` (→ REPRODUCED → ANALYZING, unless stopped at reproduce) → the Root
Cause Analyzer's through `record … root-cause` (→ ANALYZED → PLANNING, unless stopped at
analyze) → the Fix Planner's through `record … fix-plan` (→ PLANNED) → a person runs
`approve` (→ APPROVED) → `fix` (→ IMPLEMENTING → VERIFYING → FIXED or BLOCKED). Each answer
says what comes next (`agent_step` for the agent to run, `next` for the commands).
"""

from __future__ import annotations

import functools
import os
import re

from aether.bugs import approval, config, costs, fixer, models, phases, reports, runs, storage
from aether.bugs.exit_codes import (
    BUG_EXIT_AGENT,
    BUG_EXIT_FAILED,
    BUG_EXIT_INPUT,
    BUG_EXIT_PHASE,
    BUG_EXIT_STORAGE,
    bug_error,
    not_found,
)
from aether.core import clock, inputs, paths
from aether.core.exceptions import AetherError
from aether.state import store

RECORD_KINDS = {  # record kind → (phase it belongs to, state field, agent)
    "reproduction": ("reproducing", "reproduction", "bug-researcher"),
    "root-cause": ("analyzing", "root_cause", "root-cause-analyzer"),
    "fix-plan": ("planning", "fix_plan", "fix-planner"),
}
PLAN_OUTPUT_ATTEMPTS = 3  # the Fix Planner's output: the first try and 2 retries (docs/decisions/bug-bash-gate.md)
RETRY_BACKOFF_SECONDS = 5.0  # before the n-th retry: 5 · 2^(n−1) seconds (docs/decisions/bug-bash-gate.md)
MAX_ARCHIVED_ATTEMPTS = 10  # a retried bug keeps its newest earlier investigations
MAX_TESTS_KEPT = 200  # per verification run, in the state
MAX_AGENT_NAME = 64
AUTO_ID_TRIES = 100
REPORT_FILES = {
    "report": "report.md",
    "reproduction": "reproduction.md",
    "root_cause": "root-cause-analysis.md",
    "fix_plan": "fix-plan.md",
    "test_cases": "test-cases.py",
}


def _root() -> str:

    return paths.project_root()


def _rel(cfg: dict, bug_id: str, name: str = "") -> str:
    path = storage.bug_dir(cfg, bug_id)
    return storage.display_path(os.path.join(path, name)) if name else storage.display_path(path) + "/"


def agent_step(state: dict, cfg: dict) -> dict | None:
    """What the Queen runs next when the bug waits for an agent (None otherwise)."""
    bug_id, phase = state["bug_id"], state["phase"]
    steps = {
        "reproducing": ("reproduction", "reproduce", cfg["max_reproduction_attempts"], cfg["reproduction_timeout_seconds"], ["report"]),
        "analyzing": ("root-cause", "analyze", cfg["max_analysis_attempts"], cfg["analysis_timeout_seconds"], ["report", "reproduction"]),
        "planning": ("fix-plan", "plan", PLAN_OUTPUT_ATTEMPTS, cfg["planning_timeout_seconds"], ["report", "reproduction", "root_cause"]),
    }
    if phase not in steps:
        return None
    kind, step, attempts, timeout, reads = steps[phase]
    out = {
        "step": step,
        "agent": RECORD_KINDS[kind][2],
        "record": f"aether bug record {bug_id} {kind} -",
        "reads": [_rel(cfg, bug_id, REPORT_FILES[r]) for r in reads],
        "max_attempts": attempts,
        "timeout_seconds": timeout,
        "model": cfg["agent_model"],
        "temperature": cfg["agent_temperature"],
    }
    if kind == "reproduction":  # the researcher's Bash `timeout` for each reproduction command
        out["bash_timeout_ms"] = min(timeout * 1000, config.BASH_TIMEOUT_MAX_MS)
    if kind == "fix-plan":
        out["min_test_cases"] = cfg["min_test_cases"]
    return out


def _answer(state: dict, cfg: dict, **extra) -> dict:
    """The common part of every answer about one bug."""
    out = {
        "bug_id": state["bug_id"],
        "phase": phases.label(state["phase"]),
        "stop_at": state.get("stop_at"),
        "agent_step": agent_step(state, cfg),
        "next": phases.legal_commands(state["phase"], state["bug_id"]),
        "cost_usd": costs.totals(state)["total_usd"],
    }
    out.update(extra)
    return out


# ---------------------------------------------------------------- init


def _auto_id(cfg: dict, description: str, attempt: int) -> str:
    base = storage.slugify(description) or f"bug-{int(clock.now())}"
    return base if attempt == 0 else f"{base[: storage.MAX_ID_LENGTH - 4]}-{attempt + 1}"


def _create(state, bug_id, report):
    """Start a new bug BUG_ID in CREATED with REPORT; `bug_exists` if the id is taken."""
    if state.get("bug_id") is not None:
        raise bug_error(
            "bug_exists",
            f"bug {bug_id!r} already exists ({phases.label(state['phase'])}); pick another --id, or see `aether bug status {bug_id}`",
            BUG_EXIT_PHASE,
            bug_id=bug_id,
        )
    now = clock.iso()
    state.update(bug_id=bug_id, phase="created", created_at=now, updated_at=now, report=report)


def init(
    description: str,
    bug_id: str | None = None,
    test_path: str | None = None,
    github_issue: int | None = None,
    error: str | None = None,
    stack_trace: str | None = None,
) -> dict:
    """Create a bug investigation in CREATED (`bug_exists`, exit 2, if the id is taken)."""
    cfg = config.load()
    report, defects = models.check_report(
        {
            "description": description,
            "test_path": test_path,
            "github_issue": github_issue,
            "error_message": error,
            "stack_trace": stack_trace,
        }
    )
    if defects:
        raise bug_error("invalid_argument", "invalid bug report: " + "; ".join(defects), BUG_EXIT_INPUT, defects=defects)
    if report["test_path"]:
        report["test_path"] = report["test_path"].strip()
    explicit = bug_id is not None
    if explicit:
        storage.check_id(bug_id)

    for attempt in range(1 if explicit else AUTO_ID_TRIES):
        candidate = bug_id if bug_id is not None else _auto_id(cfg, report["description"], attempt)
        if not explicit and storage.exists(cfg, candidate):
            continue

        try:
            storage.update(cfg, candidate, functools.partial(_create, bug_id=candidate, report=report), create=True)
        except Exception as exc:
            if not explicit and getattr(exc, "code", None) == "bug_exists":
                continue
            raise
        bug_id = candidate
        break
    else:
        raise bug_error("bug_exists", "could not find a free id; pass --id", BUG_EXIT_PHASE)

    state = storage.load(cfg, bug_id)
    bdir = storage.bug_dir(cfg, bug_id)
    storage.write_text(os.path.join(bdir, REPORT_FILES["report"]), reports.report_md(state))
    location = _rel(cfg, bug_id)
    text = "\n".join(
        [f"Created bug investigation: {bug_id}", f"Location: {location}"] + reports.next_steps([(f"aether bug analyze {bug_id}", "")])
    )
    return _answer(state, cfg, location=location, text=text)


# ---------------------------------------------------------------- analyze


def _archive(state: dict) -> None:
    keep = ("reproduction", "root_cause", "fix_plan", "implementation", "approval_record", "blocked_reason")
    state["previous_attempts"].append({"archived_at": clock.iso(), **{k: state.get(k) for k in keep}})
    del state["previous_attempts"][:-MAX_ARCHIVED_ATTEMPTS]
    for k in keep:
        state[k] = None
    state["agent_rejections"] = {}


def _advance(state, cfg, stop_at, retry, command):
    """Start, continue, retry or re-stop the investigation; the action taken (see `analyze`)."""
    phase = state["phase"]
    passed = {"analyzing": ("reproduce",), "analyzed": ("reproduce",), "planning": ("reproduce", "analyze")}
    if retry and phase != "blocked":
        raise phases.refuse(state, command, why="--retry restarts a BLOCKED bug")
    if phase == "blocked" and not retry:
        raise phases.refuse(state, command, why="a BLOCKED bug restarts with --retry")
    if phase == "not_reproducible":
        raise phases.not_reproducible(state)
    if phase not in ("created", "reproduced", "analyzed", "blocked", "reproducing", "analyzing", "planning"):
        raise phases.refuse(state, command)
    if stop_at in passed.get(phase, ()):
        raise phases.refuse(state, f"bug analyze --stop-at {stop_at}", why=f"the bug is already past {stop_at}")
    costs.check(state, cfg)
    action = "resumed"
    if phase == "blocked":
        _archive(state)
        state["stop_at"] = stop_at
        phases.move(state, "reproducing", "user_command", command, reason=state["previous_attempts"][-1].get("blocked_reason"))
        action = "retried"
    elif phase == "created":
        state["stop_at"] = stop_at
        phases.move(state, "reproducing", "user_command", command, stop_at=stop_at)
        action = "started"
    elif phase == "reproduced":
        if stop_at == "reproduce":
            action = "stopped"
        else:
            state["stop_at"] = stop_at
            phases.move(state, "analyzing", "user_command", command, stop_at=stop_at)
            action = "continued"
    elif phase == "analyzed":
        if stop_at == "analyze":
            action = "stopped"
        else:
            state["stop_at"] = None
            phases.move(state, "planning", "user_command", command)
            action = "continued"
    elif stop_at is not None:  # running: a new stop point for what is left
        state["stop_at"] = stop_at
    return action


def analyze(bug_id: str, stop_at: str | None = None, retry: bool = False) -> dict:
    """Start, continue or retry the investigation (see `aether bug analyze --help`)."""
    cfg = config.load()
    storage.check_id(bug_id)
    if stop_at is not None and stop_at not in phases.STOP_AT:
        raise bug_error("invalid_argument", f"--stop-at must be reproduce or analyze, not {stop_at!r}", BUG_EXIT_INPUT)
    command = "bug analyze --retry" if retry else "bug analyze"

    action = storage.update(cfg, bug_id, functools.partial(_advance, cfg=cfg, stop_at=stop_at, retry=retry, command=command))
    state = storage.load(cfg, bug_id)
    step = agent_step(state, cfg)
    lines = [f"Analyzing bug: {bug_id}", ""]
    if step:
        n = {"reproduce": 1, "analyze": 2, "plan": 3}[step["step"]]
        title = {"reproduce": "Reproducing...", "analyze": "Analyzing root cause...", "plan": "Planning fix..."}[step["step"]]
        lines += [f"[{n}/3] {title}", f"      run the {step['agent']} agent, then:", f"      {step['record']}"]
    else:
        lines.append(f"Stopped at {phases.label(state['phase'])} (--stop-at {state.get('stop_at')}).")
        lines += reports.next_steps([(c, "") for c in phases.legal_commands(state["phase"], bug_id)])
    return _answer(state, cfg, action=action, text="\n".join(lines))


# ---------------------------------------------------------------- record


def parse_answer(text: str) -> tuple[object, str | None]:
    """(document, None) for a JSON document or an agent's answer whose last ```json block
    parses (Claude Code lets JSON through a heredoc only inside such a fence); else
    (None, why). Strict, like every JSON input (see `aether.core.inputs`)."""

    try:
        return inputs.loads(text), None
    except inputs.JSONRefused as exc:
        return None, f"not valid JSON: {exc}"
    except ValueError as exc:
        error = exc

    for block in reversed(re.findall(r"```[ \t]*+(?:json|JSON)?[ \t]*+\r?\n(.*?)```", text, re.S)):
        try:
            return inputs.loads(block), None
        except inputs.JSONRefused as exc:
            return None, f"not valid JSON: {exc}"
        except ValueError:
            continue
    return None, f"not valid JSON (nor an answer holding a ```json block): {error}"


def _parse_record(text: str) -> tuple[object, list[str]]:
    if len(text.encode("utf-8", "replace")) > models.MAX_RECORD_BYTES:
        return None, [f"the result is larger than {models.MAX_RECORD_BYTES} bytes"]
    doc, error = parse_answer(text)
    return doc, [error] if error else []


def _attempt_limit(kind: str, cfg: dict) -> int:
    return {"reproduction": cfg["max_reproduction_attempts"], "root-cause": cfg["max_analysis_attempts"], "fix-plan": PLAN_OUTPUT_ATTEMPTS}[
        kind
    ]


def _record_result(state, cfg, kind, rec, defects, low, audit, observed=None):
    """Count a rejected result of KIND, or store REC and move the bug on (auto-approving a low-risk plan).
    OBSERVED: why the run of a confirmed reproduction did not confirm it; with no attempts left
    the reproduction is stored unconfirmed and the bug ends NOT_REPRODUCIBLE."""
    phase_needed, field, _agent = RECORD_KINDS[kind]
    command = f"bug record {kind}"
    if state["phase"] != phase_needed:
        raise phases.refuse(state, command)
    costs.check(state, cfg)
    if defects or observed:
        n = state["agent_rejections"].get(kind, 0) + 1
        state["agent_rejections"][kind] = n
        if observed and not defects and n >= _attempt_limit(kind, cfg):
            state["agent_rejections"].pop(kind, None)
            state[field] = {**rec, "confirmed": False, "claimed_confirmed": True}
            run = rec.get("run") or {}
            phases.move(state, "not_reproducible", "agent_output", command, confirmed=False, observed=run.get("outcome"), attempts=n)
            return {"rejected": n, "ended": True}
        return {"rejected": n}
    state["agent_rejections"].pop(kind, None)
    state[field] = rec
    if kind == "reproduction":
        to = "reproduced" if rec["confirmed"] else "not_reproducible"
        phases.move(state, to, "agent_output", command, confirmed=rec["confirmed"], confidence=rec["confidence"], attempts=rec["attempts"])
        if rec["confirmed"] and state.get("stop_at") != "reproduce":
            phases.move(state, "analyzing", "auto", command)
    elif kind == "root-cause":
        phases.move(state, "analyzed", "agent_output", command, root_cause_file=rec["root_cause_file"], confidence=rec["confidence"])
        if state.get("stop_at") != "analyze":
            phases.move(state, "planning", "auto", command)
    else:
        digest = approval.plan_hash(rec)
        phases.move(state, "planned", "agent_output", command, fix_plan_hash=digest, risk_level=rec["risk_level"])
    return {"rejected": 0}


def record(bug_id: str, kind: str, text: str) -> dict:
    """Validate an agent's result against its contract and, if it holds, record it and move on."""
    cfg = config.load()
    storage.check_id(bug_id)
    if kind not in RECORD_KINDS:
        raise bug_error("invalid_argument", f"unknown result kind {kind!r}; use {', '.join(RECORD_KINDS)}", BUG_EXIT_INPUT)
    agent = RECORD_KINDS[kind][2]
    root = _root()
    doc, defects = _parse_record(text)
    warnings: list[str] = []
    rec = None
    if not defects:
        if kind == "reproduction":
            rec, defects = models.check_reproduction(doc, cfg)
        elif kind == "root-cause":
            rec, defects, warnings = models.check_root_cause(doc, root)
        else:
            rec, defects = models.check_fix_plan(doc, cfg, root, bug_id)
    observed = None
    if kind == "reproduction" and not defects and rec and rec["confirmed"]:
        observed = runs.observe(cfg, bug_id, root, rec)
    audit = storage.audit_path(cfg)
    low = None
    if kind == "fix-plan" and not defects:
        assert rec is not None  # the checks return a result whenever they find no defect
        low = approval.low_risk(rec, cfg)

    outcome = storage.update(
        cfg,
        bug_id,
        functools.partial(_record_result, cfg=cfg, kind=kind, rec=rec, defects=defects, low=low, audit=audit, observed=observed),
    )
    if outcome["rejected"]:
        n, limit = outcome["rejected"], _attempt_limit(kind, cfg)
        allowed = n < limit and not outcome.get("ended")
        wait = RETRY_BACKOFF_SECONDS * 2 ** (n - 1)
        defects = defects + ([observed] if observed else [])
        seen = runs.rejected_details(rec, outcome)
        if outcome.get("ended"):
            report = os.path.join(storage.bug_dir(cfg, bug_id), REPORT_FILES["reproduction"])
            storage.write_text(report, reports.reproduction_md(storage.load(cfg, bug_id)))
            todo = f"no attempts left: the bug is now NOT_REPRODUCIBLE (see {storage.display_path(report)}); show this to the user"
        elif allowed:
            todo = f"send the defects back to the {agent} agent and try again in {wait:g}s (attempt {n} of {limit})"
        elif kind == "reproduction":
            todo = 'no attempts left: record a result with "confirmed": false and the reason in notes, so the bug becomes NOT_REPRODUCIBLE'
        else:
            todo = "no attempts left: stop and show the defects to the user"
        raise bug_error(
            "invalid_agent_output",
            f"the {kind} result for bug {bug_id} breaks its contract ({len(defects)} defect"
            f"{'s' if len(defects) != 1 else ''}): "
            + "; ".join(defects[:10])
            + (f"; (+{len(defects) - 10} more)" if len(defects) > 10 else "")
            + f". {todo}",
            BUG_EXIT_AGENT,
            bug_id=bug_id,
            kind=kind,
            defects=defects,
            attempt=n,
            max_attempts=limit,
            retry_allowed=allowed,
            retry_in_seconds=wait if allowed else None,
            **seen,
        )
    assert rec is not None  # recorded: the checks found no defect

    state = storage.load(cfg, bug_id)
    bdir = storage.bug_dir(cfg, bug_id)
    written = []

    def write(name, content):
        storage.write_text(os.path.join(bdir, REPORT_FILES[name]), content)
        written.append(_rel(cfg, bug_id, REPORT_FILES[name]))

    lines = [f"Analyzing bug: {bug_id}", ""]
    extra: dict = {"recorded": kind, "warnings": warnings}
    if kind == "reproduction":
        write("reproduction", reports.reproduction_md(state))
        lines.append("[1/3] Reproducing...")
        if rec["confirmed"]:
            traces = sum(bool(rec.get(k)) for k in ("stack_trace",))
            lines += [
                f"      ✓ Confirmed ({rec['confidence']} confidence)",
                f"      Evidence: {len(rec['affected_files'])} file"
                f"{'s' if len(rec['affected_files']) != 1 else ''}, {traces} stack trace"
                f"{'s' if traces != 1 else ''}",
                f"      Reproduced by: {runs.line(rec['run'])}",
            ]
            extra["reproduced_by"] = runs.line(rec["run"])
        else:
            lines += [
                f"      ✗ Could not reproduce after {rec['attempts']} attempt{'s' if rec['attempts'] != 1 else ''}",
                "",
                "Bug marked as NOT_REPRODUCIBLE.",
                f"Review: {_rel(cfg, bug_id, REPORT_FILES['reproduction'])}",
            ]
    elif kind == "root-cause":
        write("root_cause", reports.root_cause_md(state))
        where = rec["root_cause_file"] + (f":{rec['root_cause_line']}" if rec["root_cause_line"] else "")
        lines += ["[2/3] Analyzing root cause...", f"      ✓ Found: {where}", f"      Cause: {rec['summary']}"]
    else:
        digest = approval.plan_hash(rec)
        write("fix_plan", reports.fix_plan_md(state, digest))
        write("test_cases", fixer.test_module(rec, bug_id))
        files = len({c["file_path"] for c in rec["changes"]})
        lines += [
            "[3/3] Planning fix...",
            f"      ✓ {files} file{'s' if files != 1 else ''}, {len(rec['test_cases'])} test case"
            f"{'s' if len(rec['test_cases']) != 1 else ''}",
            f"      Risk: {rec['risk_level'].upper()}",
        ]
        extra.update(fix_plan_hash=digest, low_risk=low)
        if cfg["auto_approve_low_risk"]:
            lines += ["", f"Note: {config.AUTO_APPROVE_IGNORED}"]
    lines += ["", f"Total cost: {reports.usd(costs.totals(state)['total_usd'])}"]
    step = agent_step(state, cfg)
    if step:
        lines += ["", f"Next: run the {step['agent']} agent, then `{step['record']}`"]
    elif state["phase"] == "planned":
        lines += reports.next_steps(
            [(f"aether bug status {bug_id}", "Review details"), (f"/ant:bug approve {bug_id}", "Approve fix plan (type it in Claude Code)")]
        )
    else:
        lines += reports.next_steps([(c, "") for c in phases.legal_commands(state["phase"], bug_id)])
    return _answer(state, cfg, reports=written, text="\n".join(lines), **extra)


# ---------------------------------------------------------------- approve / reject


def _approve(state, bug_id, approver, reason, how, audit):
    """Approve the PLANNED fix plan: the audit entry first, then the state; the approval record."""
    if state["phase"] != "planned":
        raise phases.refuse(state, "bug approve")
    prompt_id = how.get("prompt_id")
    if prompt_id and any(e.get("prompt_id") == prompt_id for e in approval.audit_entries(audit)):
        raise approval.refuse_command(bug_id)  # a ticket of a prompt that approved already
    rec = approval.record(bug_id, state["fix_plan"], approver, clock.iso(), reason, how)

    store.append_jsonl(audit, [rec])  # the audit entry first, then the state
    state["approval_record"] = rec
    phases.move(state, "approved", "user_command", "bug approve", approved_by=approver, fix_plan_hash=rec["fix_plan_hash"])
    return rec


def approve(bug_id: str) -> dict:
    """`aether bug approve`: never an approval — the person types `/ant:bug approve <id>`."""
    storage.check_id(bug_id)
    storage.load(config.load(), bug_id)  # an unknown bug is `bug_not_found`
    raise approval.refuse_command(bug_id)


def typed_approval(ticket: str) -> dict | None:
    """The person typed `/ant:bug approve <id> [reason]` in Claude Code: the prompt hook's ticket
    names the bug; approve its PLANNED fix plan (recorded with the plan's SHA-256)."""
    root = _root()
    typed = approval.take_ticket(root, ticket)
    approval.clear_stale_tickets(root)
    if typed is None:
        return None  # not the approve command: the prompt goes on
    bug_id = storage.check_id(typed["bug_id"])
    cfg = config.load()
    approver = approval.check_approver(None)
    required = cfg["require_approval_reason"]
    what = "approving a fix plan"
    reason = approval.check_reason(typed["reason"], required=required, what=what, bug_id=bug_id, setting="require_approval_reason")
    audit = storage.audit_path(cfg)
    how = {"given_via": approval.GIVEN_VIA_TYPED, "prompt_id": typed["prompt_id"], "session_id": typed["session_id"]}
    rec = storage.update(cfg, bug_id, functools.partial(_approve, bug_id=bug_id, approver=approver, reason=reason, how=how, audit=audit))
    state = storage.load(cfg, bug_id)
    plan = state["fix_plan"]
    files = len({c["file_path"] for c in plan["changes"]})
    lines = [
        f"Approving fix plan for: {bug_id}",
        "",
        f"Summary: {plan['summary']}",
        f"Risk: {plan['risk_level'].upper()}",
        f"Changes: {files} file{'s' if files != 1 else ''}",
        f"Tests: {len(plan['test_cases'])} new test case{'s' if len(plan['test_cases']) != 1 else ''}",
        f"Plan: sha256 {rec['fix_plan_hash'][:12]}… (a plan changed after this is not applied)",
        "",
        f"✓ Fix plan approved by {approver}.",
    ]
    lines += reports.next_steps([(f"/ant:bug fix {bug_id}", ""), (f"aether bug fix {bug_id} --dry-run", "Preview changes")])
    return _answer(state, cfg, approval=rec, text="\n".join(lines))


def _reject(state, reason):
    """Close a PLANNED or NOT_REPRODUCIBLE bug as WONT_FIX for REASON."""
    if state["phase"] not in ("planned", "not_reproducible"):
        raise phases.refuse(state, "bug reject")
    state["rejection"] = {"reason": reason, "rejected_at": clock.iso(), "from_phase": state["phase"]}
    phases.move(state, "wont_fix", "user_command", "bug reject", reason=reason)


def reject(bug_id: str, reason: str | None) -> dict:
    """Close a PLANNED or NOT_REPRODUCIBLE bug as WONT_FIX, with the reason."""
    storage.check_id(bug_id)
    cfg = config.load()
    reason = approval.check_reason(reason, required=True, what="rejecting a bug", bug_id=bug_id)

    storage.update(cfg, bug_id, functools.partial(_reject, reason=reason))
    state = storage.load(cfg, bug_id)
    text = f"Bug {bug_id} closed as WONT_FIX.\nReason: {reason}"
    return _answer(state, cfg, rejection=state["rejection"], text=text)


# ---------------------------------------------------------------- fix


def _verb(op: dict) -> str:
    return {"create": "Created", "modify": "Modified", "delete": "Deleted"}[op["action"]]


def _dry_run(cfg: dict, bug_id: str) -> dict:
    state = storage.load(cfg, bug_id)
    if state["phase"] not in ("planned", "approved"):
        raise phases.refuse(state, "bug fix --dry-run", why="a dry run previews a PLANNED or APPROVED fix plan")
    ops, defects = fixer.simulate(state["fix_plan"], _root(), bug_id)
    if defects:
        raise _cannot_apply(bug_id, defects)
    lines = [f"Dry run for: {bug_id}", ""]
    changes = []
    for op in ops:
        d = fixer.diff(op)
        changes.append({"path": op["path"], "action": op["action"], "test": op["test"], "diff": d})
        verb = "Would add tests" if op["test"] else f"Would {op['action']}"
        lines += [f"{verb}: {op['path']}"] + ["  " + ln for ln in d.rstrip("\n").splitlines()] + [""]
    lines.append("No changes applied. Run without --dry-run to apply.")
    return _answer(state, cfg, dry_run=True, changes=changes, fix_plan_hash=approval.plan_hash(state["fix_plan"]), text="\n".join(lines))


def _cannot_apply(bug_id: str, defects: list[str]):
    return bug_error(
        "implementation_failed",
        f"the fix plan of bug {bug_id} cannot be applied to the project as it is now; nothing was changed: " + "; ".join(defects[:10]),
        BUG_EXIT_FAILED,
        bug_id=bug_id,
        defects=defects,
    )


def _test_paths(state: dict, root: str, ops: list[dict]) -> list[str]:
    """The bug's own tests, which must pass: the plan's, the report's, and those that reproduced it."""
    out = [op["path"] for op in ops if op.get("test")]
    given = (state["report"].get("test_path") or "").strip()
    if given:
        file_part = given.split("::", 1)[0]
        rel, problem = fixer.resolve(root, file_part, allow_absolute=True)
        if not problem and rel is not None and os.path.isfile(fixer.join(root, rel)):
            out.append(rel + given[len(file_part) :])
    reproduced = ((state.get("reproduction") or {}).get("run") or {}).get("tests") or []
    out += [t for t in reproduced if isinstance(t, str)]
    return list(dict.fromkeys(out))


def fix(bug_id: str, dry_run: bool = False) -> dict:
    """Apply an APPROVED fix plan, run its tests, and end FIXED or BLOCKED."""

    cfg = config.load()
    storage.check_id(bug_id)
    if dry_run:
        return _dry_run(cfg, bug_id)
    root = _root()
    bdir = storage.bug_dir(cfg, bug_id)
    if not storage.exists(cfg, bug_id):
        raise not_found(bug_id)
    try:
        with store.locked([os.path.join(bdir, "fix")]):
            return _fix_locked(cfg, bug_id, root, bdir)
    except Exception as exc:
        if getattr(exc, "code", None) == "lock_timeout" and str(getattr(exc, "details", {}).get("file", "")).endswith(os.sep + "fix"):
            raise bug_error(
                "fix_in_progress", f"another `aether bug fix {bug_id}` is running; wait for it to end", BUG_EXIT_STORAGE, bug_id=bug_id
            ) from None
        raise


def _prepare_rollback(data, spec, ops):
    """Reset the rollback file to the file operations OPS, before any is applied (a crash can be undone)."""
    data.clear()
    data.update(spec.default())
    data["files"] = ops
    data["prepared_at"] = clock.iso()


def _start_fix(s, files):
    """Move an APPROVED bug to IMPLEMENTING, naming the plan's approval and FILES."""
    if s["phase"] != "approved":
        raise phases.refuse(s, "bug fix")
    phases.move(
        s,
        "implementing",
        "user_command",
        "bug fix",
        approved_by=s["approval_record"]["approved_by"],
        fix_plan_hash=s["approval_record"]["fix_plan_hash"],
        files=files,
    )


def _note_resumed(s):
    """Note that `bug fix` picked up an interrupted implementation."""
    s["notes"].append(f"{clock.iso()} bug fix resumed an interrupted implementation")


def _note_failed(s, message):
    """Record an implementation that could not be applied (MESSAGE says why)."""
    s["implementation"] = {
        "success": False,
        "files_changed": [],
        "tests_passed": 0,
        "tests_failed": 0,
        "commit_hash": None,
        "error": message,
    }


def _mark_applied(data, created_dirs):
    """Stamp the rollback file applied, with the folders the fix created (a rollback removes them)."""
    data["created_dirs"] = created_dirs
    data["applied_at"] = clock.iso()


def _start_verifying(s, files, baseline):
    """Move the bug to VERIFYING with a pending implementation of FILES and the suite's BASELINE run."""
    s["implementation"] = {
        "success": None,
        "files_changed": files,
        "tests_passed": 0,
        "tests_failed": 0,
        "commit_hash": None,
        "error": None,
        "baseline": runs.kept(baseline),
    }
    phases.move(s, "verifying", "auto", "bug fix", files=files)


def _finish_fix(s, verdict, files, rollback_cmd, git_cmd):
    """Record the verification VERDICT and end the bug FIXED, or BLOCKED with the reason."""
    impl = {
        "success": verdict["reason"] is None,
        "files_changed": files,
        "tests_passed": verdict["tests_passed"],
        "tests_failed": verdict["tests_failed"],
        "commit_hash": None,
        "error": verdict["reason"],
        "test_command": verdict["command"],
        "exit_code": verdict["exit_code"],
        "timed_out": verdict["timed_out"],
        "tests": verdict["tests"][:MAX_TESTS_KEPT],
        "output_tail": verdict["output_tail"],
        "rollback": rollback_cmd,
        "git_rollback": git_cmd,
        "verified_at": clock.iso(),
        **{k: verdict[k] for k in runs.SUITE_FIELDS},
    }
    s["implementation"] = impl
    if verdict["reason"] is None:
        s["blocked_reason"] = None
        phases.move(s, "fixed", "auto", "bug fix", tests_passed=verdict["tests_passed"], tests_failed=0)
    else:
        s["blocked_reason"] = verdict["reason"]
        phases.move(
            s,
            "blocked",
            "auto",
            "bug fix",
            reason=verdict["reason"],
            tests_passed=verdict["tests_passed"],
            tests_failed=verdict["tests_failed"],
            broken_tests=verdict["broken_tests"],
        )


def _fix_locked(cfg: dict, bug_id: str, root: str, bdir: str) -> dict:

    state = storage.load(cfg, bug_id)
    phase = state["phase"]
    if phase == "planned":
        raise bug_error(
            "approval_required",
            f"Bug must be APPROVED before implementation. Current phase: PLANNED. Type in Claude Code: /ant:bug approve {bug_id}",
            BUG_EXIT_PHASE,
            bug_id=bug_id,
            phase="PLANNED",
            legal=phases.legal_commands("planned", bug_id),
        )
    if phase not in ("approved", "implementing", "verifying"):
        raise phases.refuse(state, "bug fix")
    approval.gate(state, storage.audit_path(cfg))
    rollback_path = os.path.join(bdir, storage.ROLLBACK_FILE)
    rspec = storage.rollback_spec(bug_id)
    lines = [f"Implementing fix for: {bug_id}", ""]

    if phase in ("approved", "implementing"):
        if phase == "implementing" and os.path.exists(rollback_path):
            snapshot = store.read_file(rollback_path, rspec)
            if not snapshot.get("rolled_back_at"):
                fixer.revert_partial(snapshot, root)
        ops, defects = fixer.simulate(state["fix_plan"], root, bug_id)
        if defects:
            raise _cannot_apply(bug_id, defects)
        files = [op["path"] for op in ops]
        baseline: dict | None = runs.suite(root, bdir, cfg, "before")  # the whole suite before anything is applied

        store.update_file(rollback_path, rspec, functools.partial(_prepare_rollback, spec=rspec, ops=ops))
        if phase == "approved":
            storage.update(cfg, bug_id, functools.partial(_start_fix, files=files))
        else:
            storage.update(cfg, bug_id, _note_resumed)
        try:
            created_dirs = fixer.apply(ops, root)
        except Exception as exc:
            message = getattr(exc, "message", str(exc))
            storage.update(cfg, bug_id, functools.partial(_note_failed, message=message))
            raise

        store.update_file(rollback_path, rspec, functools.partial(_mark_applied, created_dirs=created_dirs))
        storage.update(cfg, bug_id, functools.partial(_start_verifying, files=files, baseline=baseline))
    else:
        snapshot = store.read_file(rollback_path, rspec)
        ops = snapshot["files"]
        files = [op["path"] for op in ops]
        baseline = (state.get("implementation") or {}).get("baseline")
        lines.append("(re-running the verification of the applied fix)")

    code_ops = [op for op in ops if not op.get("test")]
    test_ops = [op for op in ops if op.get("test")]
    if code_ops:
        lines.append("Applying changes...")
        lines += [f"  ✓ {_verb(op)}: {op['path']}" for op in code_ops]
        lines.append("")
    if test_ops:
        lines.append("Writing test cases...")
        lines += [f"  ✓ Added: {op['path']}" for op in test_ops]
        lines.append("")

    test_paths = _test_paths(state, root, ops)
    verdict = runs.judge_fix(fixer.verify(root, bdir, cfg, test_paths), baseline, runs.suite(root, bdir, cfg, "after"), test_paths)
    rollback_cmd = f"aether bug rollback {bug_id}"
    git_cmd = fixer.git_rollback(ops)

    storage.update(cfg, bug_id, functools.partial(_finish_fix, verdict=verdict, files=files, rollback_cmd=rollback_cmd, git_cmd=git_cmd))
    state = storage.load(cfg, bug_id)

    lines.append("Running verification...")
    for t in verdict["tests"]:
        mark = {"passed": "✓", "failed": "✗", "skipped": "-"}[t["outcome"]]
        lines.append(f"  {mark} {t['name']} {t['outcome'].upper()}")
        if t["outcome"] == "failed" and t["message"]:
            lines.append(f"    {t['message']}")
    if not verdict["tests"] and verdict["command"]:
        lines.append(f"  ran: {' '.join(verdict['command'])} (exit {verdict['exit_code']})")
    lines += ["", *runs.suite_lines(verdict), ""]
    if verdict["reason"] is None:
        passed = "All tests passed!" if not verdict["already_failing"] else "The bug's tests pass; nothing that passed before fails."
        lines += [passed, "", "✓ Bug fixed!"]
        return _answer(state, cfg, implementation=state["implementation"], text="\n".join(lines))
    n = verdict["tests_failed"]
    lines += [
        f"{n} test{'s' if n != 1 else ''} failed." if not verdict["timed_out"] else "The tests timed out.",
        "",
        "Bug marked as BLOCKED.",
        f"Reason: {verdict['reason']}",
        "",
        "Changes have been applied. To rollback:",
        f"  {rollback_cmd}",
    ]
    if git_cmd:
        lines.append(f"  (or: {git_cmd})")
    lines += ["", f"To investigate again: aether bug analyze {bug_id} --retry"]
    if verdict["broken_tests"]:
        lines.append(runs.BROKEN_ADVICE)
    raise bug_error(
        "verification_failed",
        f"bug {bug_id} is BLOCKED: {verdict['reason']}. The changes are applied; roll them back "
        f"with `{rollback_cmd}`, or investigate again with `aether bug analyze {bug_id} --retry`",
        BUG_EXIT_AGENT,
        bug_id=bug_id,
        phase="BLOCKED",
        reason=verdict["reason"],
        rollback=rollback_cmd,
        git_rollback=git_cmd,
        tests_passed=verdict["tests_passed"],
        tests_failed=verdict["tests_failed"],
        broken_tests=verdict["broken_tests"],
        already_failing=verdict["already_failing"],
        text="\n".join(lines),
    )


def _mark_rolled_back(data):
    """Stamp the rollback file rolled back (the same fix is not undone twice)."""
    data["rolled_back_at"] = clock.iso()


def _note_rolled_back(s, restored):
    """Note the files a rollback RESTORED."""
    s["notes"].append(f"{clock.iso()} rolled back: {', '.join(restored)}")


def rollback(bug_id: str, force: bool = False) -> dict:
    """Put back the files the last fix changed, unless the bug is FIXED (e.g. BLOCKED, an
    interrupted fix, or a retried bug whose failed fix is still applied)."""

    cfg = config.load()
    storage.check_id(bug_id)
    state = storage.load(cfg, bug_id)
    bdir = storage.bug_dir(cfg, bug_id)
    path = os.path.join(bdir, storage.ROLLBACK_FILE)
    rspec = storage.rollback_spec(bug_id)
    with store.locked([os.path.join(bdir, "fix")]):
        state = storage.load(cfg, bug_id)
        if state["phase"] == "fixed":
            raise phases.refuse(state, "bug rollback", why="a FIXED bug keeps its fix (undo it with your version control)")
        snapshot = store.read_file(path, rspec) if os.path.exists(path) else None
        if not snapshot or not snapshot.get("applied_at") or snapshot.get("rolled_back_at"):
            raise bug_error("nothing_to_roll_back", f"bug {bug_id} has no applied fix to roll back", BUG_EXIT_PHASE, bug_id=bug_id)
        result = fixer.undo(snapshot, _root(), force=force)

        store.update_file(path, rspec, _mark_rolled_back)
        storage.update(cfg, bug_id, functools.partial(_note_rolled_back, restored=result["restored"]))
    state = storage.load(cfg, bug_id)
    text = "\n".join(
        [f"Rolled back the fix of bug {bug_id}:"]
        + [f"  ✓ Restored: {p}" for p in result["restored"]]
        + reports.next_steps([(c, "") for c in phases.legal_commands(state["phase"], bug_id) if "rollback" not in c])
    )
    return _answer(state, cfg, text=text, **result)


# ---------------------------------------------------------------- costs


def _add_cost(state, cfg, bug_id, name, model, input_tokens, output_tokens, phase):
    """Append an agent run's cost record; (the record, the cost limits now exceeded)."""
    if len(state["costs"]) >= costs.MAX_COST_RECORDS:
        raise bug_error(
            "too_many_cost_records", f"bug {bug_id} already has {costs.MAX_COST_RECORDS} cost records", BUG_EXIT_INPUT, bug_id=bug_id
        )
    rec = costs.agent_cost(name, model, input_tokens, output_tokens, phase or state["phase"], clock.iso())
    state["costs"].append(rec)
    return rec, costs.exceeded(state, cfg)


def cost(bug_id: str, agent: str, input_tokens: int, output_tokens: int, model: str | None = None, phase: str | None = None) -> dict:
    """Record what an agent run cost; exit 6 when the bug is now over a cost limit."""
    cfg = config.load()
    storage.check_id(bug_id)
    name = (agent or "").strip()
    if not name or len(name) > MAX_AGENT_NAME or "\n" in name or "\r" in name:
        raise bug_error("invalid_argument", f"--agent must be one line of 1 to {MAX_AGENT_NAME} characters", BUG_EXIT_INPUT)
    model = model or cfg["agent_model"]
    costs.price(model)  # unknown model: fail before taking the lock
    if phase is not None:
        phase = phases.parse(phase)

    rec, over = storage.update(
        cfg,
        bug_id,
        functools.partial(
            _add_cost, cfg=cfg, bug_id=bug_id, name=name, model=model, input_tokens=input_tokens, output_tokens=output_tokens, phase=phase
        ),
    )
    state = storage.load(cfg, bug_id)
    if over:
        raise costs.limit_error(state, over)
    t = costs.totals(state)
    text = (
        f"Recorded {name}: {input_tokens} in / {output_tokens} out tokens on {rec['model']} "
        f"= {reports.usd(rec['cost_usd'])} (phase {rec['phase'].upper()}; bug total "
        f"{reports.usd(t['total_usd'])} of {reports.usd(cfg['max_total_cost_usd'])})"
    )
    return _answer(
        state,
        cfg,
        cost=rec,
        by_phase=t["by_phase"],
        limits={"max_phase_cost_usd": cfg["max_phase_cost_usd"], "max_total_cost_usd": cfg["max_total_cost_usd"]},
        text=text,
    )


# ---------------------------------------------------------------- status / list / restore


def status(bug_id: str | None) -> dict:
    if bug_id is None:
        return list_bugs()
    cfg = config.load()
    storage.check_id(bug_id)
    state = storage.load(cfg, bug_id)
    summary = reports.status_summary(state, costs.totals(state)["total_usd"])
    summary["agent_step"] = agent_step(state, cfg)
    summary["location"] = _rel(cfg, bug_id)
    summary["text"] = reports.status_text(summary)
    return summary


def list_bugs(phase: str | None = None, limit: int = 50) -> dict:

    cfg = config.load()
    wanted = phases.parse(phase) if phase else None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise bug_error("invalid_argument", f"--limit must be a whole number >= 1, got {limit!r}", BUG_EXIT_INPUT)
    rows = []
    for bug_id in storage.list_ids(cfg):
        try:
            state = storage.load(cfg, bug_id)
        except AetherError as exc:
            if wanted is None:
                rows.append(
                    {
                        "bug_id": bug_id,
                        "phase": None,
                        "created_at": None,
                        "cost_usd": None,
                        "next": f"aether bug restore {bug_id}",
                        "error": exc.message,
                    }
                )
            continue
        if wanted and state["phase"] != wanted:
            continue
        rows.append(
            {
                "bug_id": bug_id,
                "phase": phases.label(state["phase"]),
                "created_at": state["created_at"],
                "cost_usd": costs.totals(state)["total_usd"],
                "next": phases.NEXT_WORD[state["phase"]],
            }
        )
    rows.sort(key=lambda r: (r["created_at"] or "", r["bug_id"]), reverse=True)
    total = len(rows)
    rows = rows[:limit]
    return {"bugs": rows, "count": total, "text": reports.list_text(rows, total)}


def restore(bug_id: str, force: bool = False, which: str = "state") -> dict:
    """Bring back the newest valid backup of a bug's state (or rollback) file."""

    cfg = config.load()
    storage.check_id(bug_id)
    bdir = storage.bug_dir(cfg, bug_id)
    if not os.path.isdir(bdir):
        raise not_found(bug_id)
    if which == "rollback":
        return store.restore_file(os.path.join(bdir, storage.ROLLBACK_FILE), storage.rollback_spec(bug_id), force=force)
    return store.restore_file(storage.state_path(cfg, bug_id), storage.state_spec(bug_id), force=force)


def history(bug_id: str) -> list[dict]:
    cfg = config.load()
    storage.check_id(bug_id)
    if not storage.exists(cfg, bug_id):
        raise not_found(bug_id)
    return storage.read_history(cfg, bug_id)
