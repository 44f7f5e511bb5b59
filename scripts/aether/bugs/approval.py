"""The approval gate: who may approve, what an approval records, and what `bug fix` demands.

- Approval is a human act: `bug approve` is refused unless stdin and stderr are terminals and
  no sign of Claude Code is seen — its variables (CLAUDE_CODE_VARS) in this process or in the
  initial environment of any parent, or a `claude` process among the parents (Linux /proc).
  The approval records how it was given (`given_via`, `signals`). A process with the user's
  own rights can still fake all of this; the gate stops a model's casual or clever call.
- An approval records who, when and the SHA-256 of the fix plan (canonical JSON: sorted keys,
  compact separators, UTF-8) in the bug's state and, first, in the append-only audit log.
- `bug fix` needs the bug APPROVED, a complete approval record, a plan whose hash still
  matches it, and the same approval in the audit log.
- With `bug_bash.auto_approve_low_risk`, a plan that meets every LOW criterion (checked here,
  not taken from the plan's own `risk_level` alone) is approved as `auto:low_risk`.
"""

from __future__ import annotations

import json
import os
import sys

from aether.bugs.exit_codes import BUG_EXIT_INPUT, BUG_EXIT_PHASE, bug_error
from aether.state import store

AUTO_APPROVER = "auto:low_risk"
RESERVED_PREFIX = "auto:"  # approvers a person cannot claim
IN_CLAUDE_CODE = "CLAUDECODE"
# Variables Claude Code sets for the commands it runs (checked here and in every parent).
CLAUDE_CODE_VARS = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_EXECPATH",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_PID",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_AGENT_SDK_VERSION",
)
CLAUDE_NAMES = ("claude", "claude.exe")  # Claude Code's executable, as a process name
CLAUDE_PACKAGE = "claude-code"  # …or node running @anthropic-ai/claude-code
MAX_PARENTS = 64
GIVEN_VIA_TERMINAL = "terminal"
GIVEN_VIA_AUTO = "auto_approve_low_risk"
MAX_APPROVER_LENGTH = 100
MAX_REASON_LENGTH = 2000


def plan_hash(plan: dict) -> str:
    import hashlib  # noqa: PLC0415 — start-up: hashlib (OpenSSL) only where something is hashed

    canonical = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _isatty(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _terminals() -> tuple:
    """(stdin is a terminal, stderr is a terminal)."""

    return _isatty(sys.stdin), _isatty(sys.stderr)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _parents(proc: str = "/proc") -> list:
    """This process's parents, nearest first: [{pid, name, argv, env (Claude Code vars set)}]
    from /proc (empty where there is none)."""
    out: list = []
    pid, seen = os.getppid(), set()
    while pid > 1 and pid not in seen and len(out) < MAX_PARENTS:
        seen.add(pid)
        stat = _read(f"{proc}/{pid}/stat").decode("utf-8", "replace")
        if ")" not in stat:
            break
        name = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2 :].split()
        argv = [a.decode("utf-8", "replace") for a in _read(f"{proc}/{pid}/cmdline").split(b"\0") if a]
        env = set()
        for item in _read(f"{proc}/{pid}/environ").split(b"\0"):
            key, _, value = item.partition(b"=")
            if key.decode("utf-8", "replace") in CLAUDE_CODE_VARS and value not in (b"", b"0"):
                env.add(key.decode())
        out.append({"pid": pid, "name": name, "argv": argv, "env": sorted(env)})
        try:
            pid = int(fields[1])
        except (IndexError, ValueError):
            break
    return out


def _is_claude(process: dict) -> bool:
    names = [process["name"]] + [os.path.basename(a) for a in process["argv"][:1]]
    return any(n in CLAUDE_NAMES for n in names) or any(CLAUDE_PACKAGE in a for a in process["argv"][:3])


def observe() -> dict:
    """Every signal of who runs this process that it can check (shown in the approval)."""
    stdin_tty, stderr_tty = _terminals()
    parents = _parents()
    return {
        "stdin_tty": stdin_tty,
        "stderr_tty": stderr_tty,
        "claude_code_env": [k for k in CLAUDE_CODE_VARS if os.environ.get(k, "") not in ("", "0")],
        "claude_code_env_in_parents": sorted({k for p in parents for k in p["env"]}),
        "claude_code_parents": [f"{p['pid']} {p['name']}" for p in parents if _is_claude(p)],
        "parents_checked": len(parents),
    }


def require_human(bug_id: str) -> dict:
    """Refuse an approval that does not come from a person at a terminal; answers how it
    was given ({given_via, signals}) for the record."""
    seen = observe()
    why = []
    if seen["claude_code_env"]:
        why.append(f"Claude Code's variables are set ({', '.join(seen['claude_code_env'])})")
    if seen["claude_code_env_in_parents"]:
        why.append(f"a parent process runs with Claude Code's variables ({', '.join(seen['claude_code_env_in_parents'])})")
    if seen["claude_code_parents"]:
        why.append(f"it runs under Claude Code ({', '.join(seen['claude_code_parents'])})")
    if not (seen["stdin_tty"] and seen["stderr_tty"]):
        why.append("stdin and stderr are not both a terminal")
    if why:
        raise bug_error(
            "approval_requires_human",
            f"approving a fix plan is a human decision: run `aether bug approve {bug_id}` "
            f"yourself in a terminal (review it first with `aether bug status {bug_id}` and "
            f"`aether bug fix {bug_id} --dry-run`); refused because " + "; ".join(why),
            BUG_EXIT_PHASE,
            bug_id=bug_id,
            signals=seen,
        )
    return {"given_via": GIVEN_VIA_TERMINAL, "signals": seen}


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
    {given_via, signals})."""
    rec = {"bug_id": bug_id, "approved_by": approved_by, "approved_at": now, "fix_plan_hash": plan_hash(plan)}
    if reason:
        rec["reason"] = reason
    rec.update(how or {})
    return rec


# ---------------------------------------------------------------- LOW risk (docs/decisions/bug-bash-gate.md)

LOW_CRITERIA = {
    "declared_low": "the plan's risk_level is low",
    "single_file": "it changes a single file",
    "additive": "it only adds code (no file deleted, no existing line removed)",
    "isolated": "the added code touches at most one function or class definition",
    "tested": "it has at least min_test_cases tests, one of them a regression test",
}


def _def_lines(lines) -> int:
    n = 0
    for line in lines:
        head = line.lstrip()
        if head.startswith(("def ", "async def ", "class ")):
            n += 1
    return n


def low_risk(plan: dict, cfg: dict) -> dict:
    """Whether the plan meets every LOW criterion: {eligible, met: [...], failed: [...]}."""
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
            for line in difflib.ndiff(old, new):
                if line.startswith("- "):
                    additive = False
                elif line.startswith("+ "):
                    added.append(line[2:])
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
    """The approval audit log's records (see `store.read_jsonl`)."""

    return [entry for entry in store.read_jsonl(path) if isinstance(entry, dict)]


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
