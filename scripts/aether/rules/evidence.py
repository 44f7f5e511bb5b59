"""Verdicts from evidence (pure): what the ants ran, as Claude Code reported it, against the
checks the helper named — and the telling line of a failing call's output.

A check passes only on a run of its exact command (an optional `cd <project> &&` before it, an
optional `2>&1` after it) in the project's own folder (not a subfolder, a copy or a builder's
worktree: the `cd` names it, or Claude Code reported the call's folder), that started after
the build's last change (a file an ant wrote, a merge, a changed file's mtime) and exited 0.
Statuses:

    verified      such a run exited 0
    failed        the newest such run exited non-zero, and the watcher said so too
    contradicted  the newest such run exited non-zero, and the watcher claimed a pass
    weakened      such a run exited 0 but proves less than the build started from: no test
                  ran, fewer passed, more skipped, a stand-in runner (rules/runner_summary.py)
    unverified    no such run: never ran, ran before the last change, ran in another folder
                  (a subfolder, a copy, a worktree) or one not known, piped (`cmd | tail`
                  exits with tail's status), or no command to run
    not_needed    nothing for the check to look at (no Python module changed for imports)
    accepted      unverified, and the person accepted the phase without it (recorded)
"""

from __future__ import annotations

import posixpath
import re
import shlex

from aether.rules import runner_summary

OK = ("verified", "not_needed", "accepted")
ASKS = ("unverified", "weakened")  # the person decides (after more watchers, for unverified)
ERROR_LINE = re.compile(
    r"^\s*(?:E\s+)?(?:[\w.]*(?:Error|Exception|Exit)\b.*|error(?:\[\w+\])?:.*|FAIL(?:ED)?\b.*|panic:.*|Traceback .*)$",
    re.IGNORECASE,
)
PATH_TOKEN = re.compile(r"(?:[A-Za-z]:)?(?:[\w.@~+-]*[/\\])+([\w.@+-]+)")


def _flat(command: str) -> str:
    return " ".join(command.split())


CD_FIRST = re.compile(r"^cd\s+(\S+|'[^']*'|\"[^\"]*\")\s*&&\s*(.*)$")


def _strip_tail(command: str) -> str:
    """The command without one trailing `;`, then one `2>&1` written right after it (`cmd; 2>&1`
    is two commands: the second, empty one, exits 0)."""
    if command.endswith(";"):
        command = command[:-1].rstrip()
    if command.endswith(" 2>&1"):
        command = command[: -len(" 2>&1")].rstrip()
    return command


def _ways(command: str, cwd: str | None, resolve) -> list:
    """(what ran, the folder it ran in — None: not known) for each way to read a call: as a whole
    in the call's own folder, and after a leading `cd <dir> &&`."""
    ways = [(command, resolve(cwd) if cwd else None)]
    found = CD_FIRST.match(command)
    if found:
        try:
            where = shlex.split(found.group(1))[0]
        except (ValueError, IndexError):
            return ways
        if where.startswith("/"):
            ways.append((found.group(2), resolve(where)))
        else:
            ways.append((found.group(2), resolve(cwd.rstrip("/") + "/" + where) if cwd else None))
    return ways


def match(check_command: str, call_command: str, root: str, cwd: str | None = None, resolve=posixpath.normpath) -> str | None:
    """How a call ran the check's command: `exact` (in the project's own folder), `piped`,
    `elsewhere` (another folder: a subfolder, a copy, a worktree), `unknown_folder` (no `cd` to
    the project and no folder reported: the mod's calls), or None (not the command).
    cwd: the folder the call's shell was in, where Claude Code said; resolve: a folder's real
    path (links followed: the caller's I/O)."""
    want = _flat(check_command)
    here = resolve(root)
    if "\n" in call_command.strip() or "\r" in call_command:  # lines of their own: other commands
        return None
    for got, folder in _ways(_strip_tail(_flat(call_command)), cwd, resolve):
        if got != want and not (got.startswith(want) and re.match(r"^\s*(?:2>&1\s*)?\|(?!\|)", got[len(want) :])):
            continue
        if got != want:
            return "piped"
        if folder is None:
            return "unknown_folder"
        return "exact" if folder == here else "elsewhere"
    return None


def named(command: str, root: str) -> str:
    """The command as a watcher must run it: in the project's own folder, whatever folder its
    shell was left in (`cd <project> && <command>`)."""
    return f"cd {shlex.quote(root)} && {command}"


def started(call: dict) -> float:
    """When a call started (its end less its duration)."""
    t, ms = call.get("t"), call.get("ms")
    return (float(t) if isinstance(t, (int, float)) else 0.0) - (ms / 1000 if isinstance(ms, int) else 0.0)


def verdict(
    check: dict, calls: list, last_change: float, root: str, claim: bool | None, resolve=posixpath.normpath, folder_of=None
) -> dict:
    """One check's verdict. check: {name, command (None: nothing to run), why}; calls: the build's
    Bash calls (evidence records, any order); claim: the watcher's `passed` for it (None: not said);
    folder_of(call): the folder its shell started in (default: the one it reported, else not known)."""
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
        cwd = folder_of(call) if folder_of else call.get("cwd") if isinstance(call.get("cwd"), str) else None
        how = match(check["command"], call["command"], root, cwd, resolve)
        if how is None:
            continue
        if how == "elsewhere":
            notes.add("ran outside the project folder (a subfolder, a copy or a worktree)")
        elif how == "unknown_folder":
            notes.add("ran without its `cd <project> &&`: the folder it ran in is not known")
        elif how == "piped":
            notes.add("ran piped: `| …` hides its exit status")
        elif started(call) < last_change:
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


def weigh(v: dict, baseline: dict | None, added: dict, changed: list, gone: dict | None = None) -> dict:
    """A tests verdict with what its run counted ({counts, runner_changes}), and `weakened` when
    a run that exited 0 proves less than the build started from (runner_summary.weakened), naming
    the files that did it. added / gone: {file: [lines]} this build added / removed; changed:
    every file the build changed."""
    run = v.get("run") or {}
    counts = runner_summary.read(run.get("tail") or "") if run else None
    found = runner_summary.examine(v.get("command") or "", added, gone or {}, changed)
    out = {**v, "counts": counts, "runner_changes": found["config"] + found["stand_in"]}
    if v["status"] != "verified":
        return out
    why, files = runner_summary.weakened(v.get("command") or "", counts, baseline, found)
    if not why:
        return out
    said = "; ".join(why) + ("" if files else " — no file this build changed explains it")
    return {**out, "status": "weakened", "why": said, "files": files}


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
