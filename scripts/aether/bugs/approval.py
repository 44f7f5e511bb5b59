"""The approval gate: who may approve, what an approval records, and what `bug fix` demands.

- Approval is a person's act: they type `/ant:bug approve <id> [reason]` in Claude Code. The
  plugin's prompt hook (hooks/approve.sh), which Claude Code runs for what the person submits and
  never for a model's tool call, writes the hook's input as a one-time ticket under
  `.aether/typed/` and hands it to `aether bug typed-approval`; only a fresh, unused ticket
  approves. No `aether` command approves on its own — not in a terminal, not under a
  pseudo-terminal, not with Claude Code's variables cleared: what a model could run, it could fake.
  What is left to a model with the user's rights is writing the ticket or the state itself, which
  the guard refuses for every thread (docs/decisions/bug-bash-gate.md says what it cannot stop).
- An approval records who, when and the SHA-256 of the fix plan (canonical JSON: sorted keys,
  compact separators, UTF-8) in the bug's state and, first, in the append-only audit log.
- `bug fix` needs the bug APPROVED, a complete approval record, a plan whose hash still
  matches it, and the same approval in the audit log.
- Nothing approves by rule: the LOW-risk assessment is shown to the person, never acted on.
"""

from __future__ import annotations

import json
import os
import re
import time

from aether.bugs.exit_codes import BUG_EXIT_INPUT, BUG_EXIT_PHASE, bug_error
from aether.state import atomic_files

RESERVED_PREFIX = "auto:"  # approvers a person cannot claim (earlier automatic approvals used it)
GIVEN_VIA_TYPED = "typed_command"
TICKETS = os.path.join(".aether", "typed")  # the prompt hook's tickets, from the project root
TICKET_NAME = re.compile(r"[0-9]{1,12}-[0-9]{1,20}\.json")
TICKET_MAX_AGE_SECONDS = 120
TICKET_MAX_BYTES = 64 * 1024
TYPED = re.compile(r"\s*/ant:bug\s+approve(?:\s+(?P<id>\S+))?(?:\s+(?P<reason>.*))?\s*", re.S)
MAX_APPROVER_LENGTH = 100
MAX_REASON_LENGTH = 2000


def plan_hash(plan: dict) -> str:
    import hashlib  # noqa: PLC0415 — start-up: hashlib (OpenSSL) only where something is hashed

    canonical = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def how_to_approve(bug_id: str) -> str:
    return (
        f"approving a fix plan is a person's act: type `/ant:bug approve {bug_id}` in Claude Code "
        f"(review it first: `aether bug status {bug_id}`, `aether bug fix {bug_id} --dry-run`). "
        f"No command approves on its own, in a terminal or a script"
    )


def refuse_command(bug_id: str):
    """`aether bug approve` run as a command: never an approval (what a model could run, it could fake)."""
    return bug_error("approval_requires_human", how_to_approve(bug_id), BUG_EXIT_PHASE, bug_id=bug_id)


def _ticket_problem(root: str, path: str) -> str | None:
    folder = os.path.join(os.path.realpath(root), TICKETS)  # the folder itself, never a link to elsewhere
    if os.path.realpath(folder) != folder or os.path.realpath(os.path.dirname(os.path.abspath(path))) != folder:
        return "it is not one of the prompt hook's tickets"
    if not TICKET_NAME.fullmatch(os.path.basename(path)):
        return "it is not one of the prompt hook's tickets"
    try:
        st = os.lstat(path)
    except OSError:
        return "it is gone (a ticket is used once)"
    import stat  # noqa: PLC0415 — start-up: only where a ticket is read

    if not stat.S_ISREG(st.st_mode) or st.st_size > TICKET_MAX_BYTES:
        return "it is not a plain file of the prompt hook's"
    if abs(time.time() - st.st_mtime) > TICKET_MAX_AGE_SECONDS:
        return f"it is older than {TICKET_MAX_AGE_SECONDS} s"
    return None


def take_ticket(root: str, path: str) -> dict | None:
    """The typed command a prompt-hook ticket carries — {bug_id, reason, prompt_id, session_id} —
    read once: the ticket is removed whatever it holds; None when the prompt is not the approve
    command. Raises `approval_requires_human`."""
    problem = _ticket_problem(root, path)
    data: object = None
    if problem is None:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                data = json.loads(fh.read(TICKET_MAX_BYTES + 1).decode("utf-8"))
        except (OSError, ValueError):
            problem = "it is not the prompt hook's JSON"
    if problem is None or problem.startswith(("it is older", "it is not the prompt hook's JSON", "it is not a plain")):
        try:  # one use: whatever it held (a path outside the tickets' folder is never touched)
            os.unlink(path)
        except OSError:
            pass
    event = data if isinstance(data, dict) else {}
    prompt = event.get("prompt")
    if problem is None and event.get("hook_event_name") == "UserPromptSubmit" and not is_approval(prompt):
        return None  # another prompt that names the words: not the hook's to answer
    found = TYPED.fullmatch(prompt) if problem is None and isinstance(prompt, str) else None
    if problem is None and (event.get("hook_event_name") != "UserPromptSubmit" or found is None):
        problem = "it does not carry a typed `/ant:bug approve <id>`"
    if problem is None and not (event.get("prompt_id") and event.get("session_id")):
        problem = "it names no prompt or session of Claude Code's"
    if problem is None and not (found and found.group("id")):
        problem = "no bug id was typed"
    if problem:
        raise bug_error(
            "approval_requires_human",
            f"no approval: the ticket {os.path.basename(path)!r} does not hold ({problem}); type `/ant:bug approve <id>` again",
            BUG_EXIT_PHASE,
        )
    assert found is not None
    reason = (found.group("reason") or "").strip() or None
    return {
        "bug_id": found.group("id"),
        "reason": reason,
        "prompt_id": str(event.get("prompt_id") or "")[:100],
        "session_id": str(event.get("session_id") or "")[:100],
    }


def is_approval(prompt: object) -> bool:
    """Whether a submitted prompt is the approve command (anything else passes the hook untouched)."""
    return isinstance(prompt, str) and TYPED.fullmatch(prompt) is not None


def clear_stale_tickets(root: str) -> None:
    """Remove tickets no approval took (a hook stopped half-way): they approve nothing once old."""
    folder = os.path.join(root, TICKETS)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            if time.time() - os.lstat(path).st_mtime > TICKET_MAX_AGE_SECONDS:
                os.unlink(path)
        except OSError:
            pass


def check_approver(name: str | None) -> str:
    """Who approves: --by, else the login name, else `cli`."""
    if name is None:
        import getpass  # noqa: PLC0415 — start-up: getpass only for the approval record

        try:
            name = getpass.getuser()
        except (KeyError, OSError, ImportError):
            name = "cli"
        return (name or "cli").strip() or "cli"
    text = name.strip()
    if not text or "\n" in text or "\r" in text or len(text) > MAX_APPROVER_LENGTH:
        raise bug_error("invalid_argument", f"--by must be one line of 1 to {MAX_APPROVER_LENGTH} characters", BUG_EXIT_INPUT)
    if text.lower().startswith(RESERVED_PREFIX):
        raise bug_error(
            "invalid_argument",
            f"--by {text!r}: names starting with {RESERVED_PREFIX!r} are reserved for automatic approval",
            BUG_EXIT_INPUT,
        )
    return text


def check_reason(reason: str | None, *, required: bool, what: str, bug_id: str, setting: str = "") -> str | None:
    """A reason text; `reason_required` (exit 2) when it is needed and missing or blank."""
    text = reason.strip() if isinstance(reason, str) else ""
    if not text:
        if required:
            why = f" (bug_bash.{setting} is on)" if setting else ""
            raise bug_error(
                "reason_required",
                f"{what} needs a reason{why}: pass --reason TEXT (or --reason - to read it from stdin)",
                BUG_EXIT_PHASE,
                bug_id=bug_id,
            )
        return None
    if len(text) > MAX_REASON_LENGTH:
        raise bug_error("invalid_argument", f"the reason is {len(text)} characters; the limit is {MAX_REASON_LENGTH}", BUG_EXIT_INPUT)
    return text


def record(bug_id: str, plan: dict, approved_by: str, now: str, reason: str | None = None, how: dict | None = None) -> dict:
    """The ApprovalRecord (docs/decisions/bug-bash-gate.md) for this plan, with how it was given (`how`:
    {given_via, prompt_id, session_id})."""
    rec = {"bug_id": bug_id, "approved_by": approved_by, "approved_at": now, "fix_plan_hash": plan_hash(plan)}
    if reason:
        rec["reason"] = reason
    rec.update(how or {})
    return rec


# ---------------------------------------------------------------- LOW risk (shown, never acted on)

LOW_CRITERIA = {
    "declared_low": "the plan's risk_level is low",
    "single_file": "it changes a single file",
    "additive": "it only adds code that changes no path through the old (no line removed, no early return, branch or changed condition)",
    "isolated": "the added code touches at most one function or class definition",
    "tested": "it has at least min_test_cases tests, one of them a regression test",
}
# An added line that can change what the code around it does: it leaves, or chooses a path.
FLOW = re.compile(
    r"^\s*(?:return\b|raise\b|yield\b|break\b|continue\b|goto\b|throw\b|exit\b|sys\.exit\b|os\._exit\b"
    r"|if\b|elif\b|else\b|while\b|for\b|try\b|except\b|finally\b|with\b|match\b|case\b|switch\b|catch\b"
    r"|\}?\s*else\b|assert\b|del\b|global\b|nonlocal\b)"
)


def _def_lines(lines) -> int:
    n = 0
    for line in lines:
        head = line.lstrip()
        if head.startswith(("def ", "async def ", "class ")):
            n += 1
    return n


def _changes_flow(old: list[str], new: list[str]) -> bool:
    """True when the new code is not the old with lines added that only add: a line removed or
    changed, or an added line that returns, raises, branches or loops on the old code's path — the
    snippet's end included, since the function may go on after it (a new function's own body is
    kept apart by the `isolated` check). `a; return b` counts as two lines."""
    import difflib  # noqa: PLC0415 — start-up: difflib only where text is compared

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            return True
        if tag == "insert":
            added = new[j1:j2]
            body = [x for x in added if x.strip()]
            if body and body[0].lstrip().startswith(("def ", "async def ", "class ", "@")):
                continue  # a new definition: its body runs only where it is called
            if any(FLOW.match(part) for x in added for part in x.split(";")):
                return True
            before = old[i1] if i1 < len(old) else (old[-1] if old else "")
            if i1 < len(old) and any(x.strip() and _indent(x) > _indent(before) for x in added):
                return True  # deeper than the line it comes before: it sits inside a block of the old code
    return False


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def low_risk(plan: dict, cfg: dict) -> dict:
    """How the plan measures against every LOW criterion: {eligible, met: [...], failed: [...]}.
    Shown to the person who approves; nothing is approved by it."""
    import difflib  # noqa: PLC0415 — start-up: difflib only where text is compared

    changes = plan.get("changes", [])
    added: list[str] = []
    additive = True
    for change in changes:
        kind = change.get("change_type")
        if kind == "delete":
            additive = False
        elif kind == "create":
            added += (change.get("proposed_code") or "").splitlines()
        elif kind == "modify":
            old = (change.get("current_code") or "").splitlines()
            new = (change.get("proposed_code") or "").splitlines()
            if _changes_flow(old, new):
                additive = False
            added += [line[2:] for line in difflib.ndiff(old, new) if line.startswith("+ ")]
    tests = plan.get("test_cases", [])
    checks = {
        "declared_low": plan.get("risk_level") == "low",
        "single_file": len({c.get("file_path") for c in changes}) == 1,
        "additive": additive and bool(changes),
        "isolated": _def_lines(added) <= 1,
        "tested": len(tests) >= cfg["min_test_cases"] and any(t.get("category") == "regression" for t in tests),
    }
    return {
        "eligible": all(checks.values()),
        "met": [LOW_CRITERIA[k] for k, ok in checks.items() if ok],
        "failed": [LOW_CRITERIA[k] for k, ok in checks.items() if not ok],
    }


# ---------------------------------------------------------------- the gate


def audit_entries(path: str) -> list[dict]:
    """The approval audit log's records (see `atomic_files.read_jsonl`)."""

    return [entry for entry in atomic_files.read_jsonl(path) if isinstance(entry, dict)]


def gate(state: dict, audit_path: str) -> dict:
    """The approval `bug fix` relies on; raises unless it is complete, current and audited."""
    bug_id = state["bug_id"]
    rec = state.get("approval_record")
    if not isinstance(rec, dict) or not all(
        isinstance(rec.get(k), str) and rec.get(k) for k in ("approved_by", "approved_at", "fix_plan_hash")
    ):
        raise bug_error(
            "approval_required",
            f"approval metadata is missing for bug {bug_id}; the state may be damaged (`aether bug restore {bug_id}`)",
            BUG_EXIT_PHASE,
            bug_id=bug_id,
        )
    if not isinstance(state.get("fix_plan"), dict):
        raise bug_error("approval_required", f"bug {bug_id} has no fix plan", BUG_EXIT_PHASE, bug_id=bug_id)
    current = plan_hash(state["fix_plan"])
    if current != rec["fix_plan_hash"]:
        raise bug_error(
            "plan_changed_since_approval",
            f"the fix plan of bug {bug_id} changed after it was approved (approved "
            f"{rec['fix_plan_hash'][:12]}…, now {current[:12]}…); nothing was applied",
            BUG_EXIT_PHASE,
            bug_id=bug_id,
            approved_hash=rec["fix_plan_hash"],
            plan_hash=current,
        )
    for entry in audit_entries(audit_path):
        if (
            entry.get("bug_id") == bug_id
            and entry.get("fix_plan_hash") == current
            and entry.get("approved_at") == rec["approved_at"]
            and entry.get("approved_by") == rec["approved_by"]
        ):
            return rec
    raise bug_error(
        "approval_not_audited",
        f"the approval of bug {bug_id} is not in the audit log {audit_path}; nothing was applied",
        BUG_EXIT_PHASE,
        bug_id=bug_id,
    )
