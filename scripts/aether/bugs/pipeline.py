"""The Bug Bash pipeline: what each `aether bug …` command does to a bug.

The Queen drives it: `init` → `analyze` (→ REPRODUCING) → the Bug Researcher's result through
`record … reproduction` (→ REPRODUCED → ANALYZING, unless stopped at reproduce) → the Root
Cause Analyzer's through `record … root-cause` (→ ANALYZED → PLANNING, unless stopped at
analyze) → the Fix Planner's through `record … fix-plan` (→ PLANNED) → a person runs
`approve` (→ APPROVED) → `fix` (→ IMPLEMENTING → VERIFYING → FIXED or BLOCKED). Each answer
says what comes next (`agent_step` for the agent to run, `next` for the commands). Approving and
rejecting are in `approving`, fixing and rolling back in `fixing`.
"""

from __future__ import annotations

import functools
import os
import re

from aether.bugs import approval, config, costs, fixer, models, phases, reports, runs, storage
from aether.bugs.exit_codes import (
    BUG_EXIT_AGENT,
    BUG_EXIT_INPUT,
    BUG_EXIT_PHASE,
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


def answer(state: dict, cfg: dict, **extra) -> dict:
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
    return answer(state, cfg, location=location, text=text)


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
    return answer(state, cfg, action=action, text="\n".join(lines))


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
    return answer(state, cfg, reports=written, text="\n".join(lines), **extra)


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
    return answer(
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
