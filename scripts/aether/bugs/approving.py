"""`bug approve` and `bug reject`: a person's decision on a PLANNED fix plan (the gate itself,
plan hashes, tickets and the audit, is `approval`)."""

from __future__ import annotations

import functools

from aether.bugs import approval, config, phases, pipeline, reports, storage
from aether.core import clock, paths
from aether.state import atomic_files


def _approve(state, bug_id, approver, reason, how, audit):
    """Approve the PLANNED fix plan: the audit entry first, then the state; the approval record."""
    if state["phase"] != "planned":
        raise phases.refuse(state, "bug approve")
    prompt_id = how.get("prompt_id")
    if prompt_id and any(e.get("prompt_id") == prompt_id for e in approval.audit_entries(audit)):
        raise approval.refuse_command(bug_id)  # a ticket of a prompt that approved already
    rec = approval.record(bug_id, state["fix_plan"], approver, clock.iso(), reason, how)

    atomic_files.append_jsonl(audit, [rec])  # the audit entry first, then the state
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
    root = paths.project_root()
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
    return pipeline.answer(state, cfg, approval=rec, text="\n".join(lines))


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
    return pipeline.answer(state, cfg, rejection=state["rejection"], text=text)
