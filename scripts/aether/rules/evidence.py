"""Verdicts from evidence (pure): what the ants ran, as Claude Code reported it, against the
checks the helper named — and the telling line of a failing call's output.

A check passes only on a run of its exact command (an optional `cd <project> &&` before it, an
optional `2>&1` after it) in the project itself (not a builder's worktree), that started after
the build's last change (a file an ant wrote, a merge, a changed file's mtime) and exited 0.
Statuses:

    verified      such a run exited 0
    failed        the newest such run exited non-zero, and the watcher said so too
    contradicted  the newest such run exited non-zero, and the watcher claimed a pass
    unverified    no such run: never ran, ran before the last change, ran in a worktree,
                  piped (`cmd | tail` exits with tail's status), or no command to run
    not_needed    nothing for the check to look at (no Python module changed for imports)
    accepted      unverified, and the person accepted the phase without it (recorded)
"""

from __future__ import annotations

import re
import shlex

OK = ("verified", "not_needed", "accepted")
ERROR_LINE = re.compile(
    r"^\s*(?:E\s+)?(?:[\w.]*(?:Error|Exception|Exit)\b.*|error(?:\[\w+\])?:.*|FAIL(?:ED)?\b.*|panic:.*|Traceback .*)$",
    re.IGNORECASE,
)
PATH_TOKEN = re.compile(r"(?:[A-Za-z]:)?(?:[\w.@~+-]*[/\\])+([\w.@+-]+)")


def _flat(command: str) -> str:
    return " ".join(command.split())


def _strip_cd(command: str, root: str) -> tuple[str, bool]:
    """(the command after a leading `cd <dir> &&`, whether that dir is the project)."""
    found = re.match(r"^cd\s+(\S+|'[^']*'|\"[^\"]*\")\s*&&\s*(.*)$", command)
    if not found:
        return command, True
    try:
        where = shlex.split(found.group(1))[0]
    except ValueError:
        return command, False
    return found.group(2), where.rstrip("/") in (root.rstrip("/"), ".")


def _strip_tail(command: str) -> str:
    """The command without a trailing `;` or `2>&1` (any number of them)."""
    while True:
        before = command
        for tail in (";", "2>&1"):
            if command.endswith(tail):
                command = command[: -len(tail)].rstrip()
        if command == before:
            return command


def match(check_command: str, call_command: str, root: str) -> str | None:
    """How a call ran the check's command: `exact`, `piped`, `elsewhere` (another folder), or None.
    A named command that starts with its own `cd` is matched as written."""
    want = _flat(check_command)
    if want.startswith("cd "):
        got, here = _flat(call_command), True
        if got.startswith(f"cd {root} && ") or got.startswith(f"cd {root.rstrip('/')}/ && "):
            got = got.split(" && ", 1)[1]
    else:
        got, here = _strip_cd(_flat(call_command), root)
    got = _strip_tail(got)
    if got == want:
        return "exact" if here else "elsewhere"
    if got.startswith(want) and re.match(r"^\s*(?:2>&1\s*)?\|(?!\|)", got[len(want) :]):
        return "piped"
    return None


def in_worktree(call: dict, root: str) -> bool:
    cwd = call.get("cwd")
    return isinstance(cwd, str) and cwd.rstrip("/") != root.rstrip("/") and "/.aether/worktrees/" in cwd + "/"


def _started(call: dict) -> float:
    t, ms = call.get("t"), call.get("ms")
    return (float(t) if isinstance(t, (int, float)) else 0.0) - (ms / 1000 if isinstance(ms, int) else 0.0)


def verdict(check: dict, calls: list, last_change: float, root: str, claim: bool | None) -> dict:
    """One check's verdict. check: {name, command (None: nothing to run), why}; calls: the build's
    Bash calls (evidence records, any order); claim: the watcher's `passed` for it (None: not said)."""
    out = {"name": check["name"], "command": check.get("command"), "claimed": claim, "run": None}
    if check.get("not_needed"):
        return {**out, "status": "not_needed", "why": check.get("why") or "nothing to check"}
    if not check.get("command"):
        return {**out, "status": "unverified", "why": check.get("why") or "no command to run"}
    runs = []
    notes = set()
    for call in calls:
        if call.get("tool") != "Bash" or not isinstance(call.get("command"), str):
            continue
        how = match(check["command"], call["command"], root)
        if how is None:
            continue
        if how == "elsewhere" or in_worktree(call, root):
            notes.add("ran outside the project folder (a worktree?)")
        elif how == "piped":
            notes.add("ran piped: `| …` hides its exit status")
        elif _started(call) < last_change:
            notes.add("ran before the build's last change")
        elif call.get("exit") is None:
            notes.add("its exit status is unknown (interrupted)")
        else:
            runs.append(call)
    if not runs:
        why = "; ".join(sorted(notes)) if notes else "never ran"
        return {**out, "status": "unverified", "why": why}
    last = max(runs, key=lambda c: float(c.get("t") or 0))
    run = {k: last.get(k) for k in ("command", "exit", "at", "t", "ms", "tail")}
    if last["exit"] == 0:
        return {**out, "status": "verified", "why": "exit 0 after the last change", "run": run}
    status = "contradicted" if claim is True else "failed"
    why = f"exit {last['exit']}" + (", yet the watcher claimed a pass" if claim is True else "")
    return {**out, "status": status, "why": why, "run": run}


def passed(verdicts: list) -> bool:
    return all(v["status"] in OK for v in verdicts)


def error_line(output: str) -> str:
    """The most telling line of a failing call's output: its last error-looking line, else its last line."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    for line in reversed(lines):
        if ERROR_LINE.match(line):
            return line[:500]
    return lines[-1][:500] if lines else ""


def normal_paths(text: str) -> str:
    """Paths reduced to their last part (a worktree's or another machine's folders differ)."""
    return PATH_TOKEN.sub(lambda m: m.group(1), text)


def _failed(call: dict) -> bool:
    return call.get("tool") == "Bash" and isinstance(call.get("exit"), int) and call["exit"] != 0


def observed_failure(calls: list) -> dict | None:
    """The ant's last failing test or check run (else its last failing Bash call), as a failure
    report's `observed`: what really failed, for the breakers and the next ant's brief."""
    failing = [c for c in calls if _failed(c)]
    chosen = next((c for c in reversed(failing) if _test_run(str(c.get("command")), None)), failing[-1] if failing else None)
    if chosen is None:
        return None
    tail = chosen.get("tail") or ""
    return {"command": chosen.get("command"), "exit": chosen["exit"], "error": error_line(tail), "tail": tail, "at": chosen.get("at")}


TEST_RUNNER = re.compile(
    r"^(?:cd \S+ && )?(?:(?:python3?|\.venv/bin/python) -m )?(?:pytest|unittest|npm test|pnpm test|yarn test|go test|cargo test|make test|"
    r"npx (?:jest|vitest|mocha)|jest|vitest|mocha)\b"
)
PASS_CLAIM = re.compile(r"\b(all\s+)?(\d+\s+)?tests?\s+(now\s+)?(pass|passed|passing|green)\b|\b\d+\s+passed\b", re.IGNORECASE)


def _test_run(command: str, test_command: str | None) -> bool:
    flat = _flat(command)
    return bool((test_command and (flat == _flat(test_command) or flat.endswith("&& " + _flat(test_command)))) or TEST_RUNNER.match(flat))


def test_claim_contradicted(summary: str, calls: list, test_command: str | None) -> dict | None:
    """A builder that says the tests pass (and names no failure) while its own last run of the
    tests failed: that run, else None."""
    if not PASS_CLAIM.search(summary or "") or re.search(r"\bfail", summary or "", re.IGNORECASE):
        return None
    runs = [
        c
        for c in calls
        if c.get("tool") == "Bash"
        and isinstance(c.get("exit"), int)
        and "|" not in str(c.get("command"))
        and _test_run(str(c.get("command")), test_command)
    ]
    if not runs or runs[-1]["exit"] == 0:
        return None
    return observed_failure(runs[-1:])


def unwitnessed(claimed: list, calls: list) -> list:
    """Files an ant claims it wrote that none of its calls wrote (Write, Edit …) or named (Bash)."""
    written = [str(c.get("path") or "") for c in calls if c.get("tool") != "Bash"]
    commands = " ".join(str(c.get("command") or "") for c in calls if c.get("tool") == "Bash")
    out = []
    for path in claimed:
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        if not any(w.replace("\\", "/").endswith("/" + path) or w == path for w in written) and name not in commands:
            out.append(path)
    return out
