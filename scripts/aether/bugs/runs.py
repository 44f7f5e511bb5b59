"""The test runs that decide Bug Bash verdicts: what ran, never what an agent said.

- **The reproduction.** A reproduction is confirmed only by a run Aether itself made and saw
  fail: the test it names (`reproduction_test`, else the report's test path, else the test paths
  of the first pytest command among `reproduction_steps`), run as `bug fix` runs tests, in the
  project root, for at most `reproduction_timeout_seconds`. Counted by the runner's own summary:
  at least one failing test is `failed` (confirmed); every test passing is `passed` (rejected:
  the bug did not show); anything else — nothing collected, no test ran, only collection or
  setup errors, no runner's summary, a command that could not start or timed out — is
  `could_not_run` (rejected).
- **The whole suite around a fix.** `bug fix` runs the suite before the fix (the baseline) and
  after it: `bug_bash.test_command` when set, else the colony's `verify: tests:`, else
  `<project python> -m pytest`. A test that passed at the baseline and fails after is broken by
  the fix; one failing at both is named as already failing. pytest's tests are named from its
  `FAILED`/`ERROR` summary lines; where names cannot be read, counts are compared (more failing
  or fewer passing is a break), and where no counts can be read, exit statuses.
"""

from __future__ import annotations

import os
import re
import shlex

from aether.bugs import costs, fixer, phases, reports, storage
from aether.core import clock
from aether.core.exceptions import AetherError
from aether.rules import runner_summary
from aether.state import atomic_files, settings

FAILED, PASSED, COULD_NOT_RUN = "failed", "passed", "could_not_run"
OUTPUT_TAIL = 2000  # characters of a run's output kept in the state (the whole output is in its log)
MAX_TESTS = 20  # test ids one reproduction may name
MAX_NAMED = 200  # failing tests kept per suite run
MAX_SHOWN = 10  # failing tests named in a reason
PYTEST_WORDS = ("pytest", "py.test")
SHELL_WORDS = re.compile(r"[|&;<>`$]")
SUMMARY_HEADER = "short test summary info"
FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) (\S.*)$")
PASSED_LINE = re.compile(r"^PASSED (\S.*)$")
MAX_PASSING = 5000  # passing tests kept per suite run (pytest's -rA summary): a test the fix made vanish is named
NOT_TESTS = {".venv", "venv", "site-packages", "node_modules", ".tox", ".nox", "__pypackages__"}  # installed code, not the project's tests
LOGS = {"reproduction": "reproduction.log", "before": "suite-before.log", "after": "suite-after.log"}
# What a verification adds to the bug's implementation record.
SUITE_FIELDS = ("suite", "baseline", "broken_tests", "already_failing", "suite_compared_by")
BROKEN_ADVICE = (
    "The fix broke tests that passed before it: roll it back, then investigate again so that the new plan keeps them "
    "passing (if such a test is itself wrong, correct it first, then retry)."
)


# ---------------------------------------------------------------- what ran, for people


def shown(command: list[str] | None, root: str) -> str:
    """The command as a line, with paths inside the project relative to it."""
    if not command:
        return "(nothing ran)"
    prefix = os.path.abspath(root).rstrip(os.sep) + os.sep
    return shlex.join(w[len(prefix) :] if w.startswith(prefix) else w for w in command)


def line(run: dict) -> str:
    """`<command> → exit 1 (1 ran: 1 failed)`, or how it could not run."""
    return f"{run['shown']} → {reports.run_result(run)}"


def _tail(text: str) -> str:
    return text[-OUTPUT_TAIL:]


def _last_line(text: str) -> str:
    lines = [x.strip() for x in runner_summary.ANSI.sub("", text).splitlines() if x.strip()]
    return lines[-1][:200] if lines else ""


# ---------------------------------------------------------------- the reproduction


def named_test(root: str, given: str) -> tuple[str | None, str | None]:
    """A test of the project as `path` or `path::name…`, relative to the root; (None, why)."""
    text = given.strip() if isinstance(given, str) else ""
    if not text or text.startswith("-") or any(c in text for c in "\n\r\x00"):
        return None, "must name a test of the project: a test file or `path::test`"
    file_part, sep, rest = text.partition("::")
    rel, problem = fixer.resolve(root, file_part, allow_absolute=True)
    if problem or rel is None:
        return None, f"{file_part!r} {problem}"
    if NOT_TESTS & set(rel.split("/")):
        return None, f"{file_part!r} is installed code, not a test of the project"
    if not os.path.exists(fixer.join(root, rel)):
        return None, f"{file_part!r} does not exist in the project"
    if not os.path.isfile(fixer.join(root, rel)):
        return None, f"{file_part!r} is not a test file of the project (a file, or `path::test`; not a folder)"
    return rel + sep + rest, None


def _from_steps(steps: list[str], root: str) -> list[str]:
    """The test paths of the first pytest command among the steps that names a test of the project."""
    for step in steps:
        try:
            words = shlex.split(step)
        except ValueError:
            continue
        at = next((i for i, w in enumerate(words) if os.path.basename(w) in PYTEST_WORDS), None)
        if at is None:
            continue
        found = [t for w in words[at + 1 :] if not w.startswith("-") and not SHELL_WORDS.search(w) and (t := named_test(root, w)[0])]
        if found:
            return found[:MAX_TESTS]
    return []


def reproduction_tests(rec: dict, report: dict, root: str) -> tuple[list[str], str | None]:
    """The tests a confirmed reproduction is checked by; ([], the defect) when it names none."""
    named = rec.get("reproduction_test")
    if named:
        found, why = named_test(root, named)
        return ([found], None) if found else ([], f"reproduction_test: {why}")
    given = (report or {}).get("test_path")
    if given:
        found, _ = named_test(root, given)
        if found:
            return [found], None
    found_in_steps = _from_steps(rec.get("reproduction_steps") or [], root)
    if found_in_steps:
        return found_in_steps, None
    return [], (
        "could not run the reproduction: it names no test of the project; set reproduction_test to the test that fails "
        "because of the bug (a test file or `path::test`)"
    )


def _judge(ran: dict, counts: dict | None, timeout: int) -> tuple[str, str]:
    """(outcome, why) of a reproduction run."""
    if ran["error"]:
        return COULD_NOT_RUN, ran["error"]
    if ran["timed_out"]:
        return COULD_NOT_RUN, f"timed out after {timeout}s"
    code = ran["exit_code"]
    if counts is None:
        last = _last_line(ran["output"])
        return COULD_NOT_RUN, f"exited with status {code} and its output ends with no test runner summary" + (f" ({last})" if last else "")
    if counts.get("collected_only") is not None or counts["ran"] == 0:
        return COULD_NOT_RUN, f"ran no test ({runner_summary.short(counts) or 'none collected'})"
    if counts["failed"]:
        if code == 0:
            return COULD_NOT_RUN, "the runner counted failures yet the command exited 0"
        return FAILED, ""
    if counts["errors"]:
        return COULD_NOT_RUN, f"ended with {counts['errors']} error(s) (collection or setup) and no failing test"
    if code != 0:
        return COULD_NOT_RUN, f"exited with status {code} though no test failed"
    return PASSED, "every test passed"


def reproduce(root: str, bug_dir: str, cfg: dict, tests: list[str]) -> dict:
    """Run the reproduction's tests: {tests, command, shown, exit_code, timed_out, timeout_seconds,
    counts, outcome, why, output_tail, ran_at}; the whole output goes to the bug's reproduction.log."""
    timeout = cfg["reproduction_timeout_seconds"]
    command, why = fixer.runner_argv(root, cfg, tests)
    run = {
        "tests": tests,
        "command": command,
        "shown": shown(command, root),
        "exit_code": None,
        "timed_out": False,
        "timeout_seconds": timeout,
        "counts": None,
        "outcome": COULD_NOT_RUN,
        "why": why,
        "output_tail": "",
        "ran_at": clock.iso(),
    }
    if command is None:
        return run
    ran = fixer.run_command(command, root, timeout)
    atomic_files.write_text_atomic(os.path.join(bug_dir, LOGS["reproduction"]), ran["output"])
    counts = runner_summary.read(ran["output"])
    outcome, why = _judge(ran, counts, timeout)
    run.update(exit_code=ran["exit_code"], timed_out=ran["timed_out"], counts=counts, outcome=outcome, why=why)
    run["output_tail"] = _tail(ran["output"])
    return run


def confirm(root: str, bug_dir: str, cfg: dict, rec: dict, report: dict) -> tuple[dict | None, str | None]:
    """Run the test of a reproduction that says `confirmed: true`: (the run or None when nothing
    could be run, why it does not confirm it or None)."""
    tests, problem = reproduction_tests(rec, report, root)
    if problem:
        return None, problem
    run = reproduce(root, bug_dir, cfg, tests)
    return run, defect(run)


def observe(cfg: dict, bug_id: str, root: str, rec: dict) -> str | None:
    """Run the test of a reproduction that says it is confirmed (kept as `rec["run"]`); why the
    run does not confirm it, or None. A bug that cannot take the result runs nothing."""
    state = storage.load(cfg, bug_id)
    if state["phase"] != "reproducing":
        raise phases.refuse(state, "bug record reproduction")
    costs.check(state, cfg)
    rec["run"], problem = confirm(root, storage.bug_dir(cfg, bug_id), cfg, rec, state["report"])
    return problem


def rejected_details(rec: dict | None, outcome: dict) -> dict:
    """What the run of a rejected reproduction adds to the error: {run, ran} (and the phase when
    the bug ended NOT_REPRODUCIBLE)."""
    run = (rec or {}).get("run")
    out = {"run": run, "ran": line(run)} if run else {}
    if outcome.get("ended"):
        out["phase"] = "NOT_REPRODUCIBLE"
    return out


def defect(run: dict) -> str | None:
    """Why a reproduction that says `confirmed: true` is not confirmed by its run (None: it failed)."""
    if run["outcome"] == FAILED:
        return None
    if run["outcome"] == PASSED:
        return (
            f"confirmed is true, but the reproduction ran and passed: {line(run)}; the bug did not show. "
            'Name the test that fails because of the bug in reproduction_test, or answer "confirmed": false'
        )
    return (
        f"could not run the reproduction: {run['shown']} {run['why']}. Name an existing test of the project that fails "
        "because of the bug in reproduction_test (a test file or `path::test`)"
    )


# ---------------------------------------------------------------- the whole suite


def suite_command(root: str, cfg: dict) -> tuple[list[str] | None, str, str | None]:
    """(argv, where it comes from, None) or (None, where, why not): `bug_bash.test_command`, else
    the colony's `verify: tests:` (a shell line the person wrote, run as the colony runs it), else
    the project's pytest."""
    if cfg["test_command"]:
        return list(cfg["test_command"]), "bug_bash.test_command", None
    try:
        configured = settings.verify().get("tests")
    except AetherError:
        configured = None
    if configured:
        return ["/bin/sh", "-c", configured], "verify: tests", None
    python = fixer.project_python(root)
    if python is None:
        return None, "pytest", fixer.NO_INTERPRETER
    return [python, "-m", "pytest", "-rA", "--tb=short", "-p", "no:cacheprovider"], "pytest", None


def failing(output: str, counts: dict | None) -> list[str] | None:
    """The failing tests a pytest run names in its summary (`FAILED path::test`, `ERROR path`);
    [] when the runner counted none; None when they cannot be read."""
    if counts is not None and counts["failed"] + counts["errors"] == 0:
        return []
    lines = [x.strip() for x in runner_summary.ANSI.sub("", output).splitlines()]
    at = next((i for i in range(len(lines) - 1, -1, -1) if SUMMARY_HEADER in lines[i]), None)
    if at is None:
        return None
    names = sorted({_node_id(m.group(1)) for x in lines[at + 1 :] if (m := FAILED_LINE.match(x))})
    return names[:MAX_NAMED] or None


def passing(output: str) -> list[str] | None:
    """The passing tests a pytest run names in its `-rA` summary (`PASSED path::test`); None when
    it names none (another runner, or a summary without them)."""
    lines = [x.strip() for x in runner_summary.ANSI.sub("", output).splitlines()]
    at = next((i for i in range(len(lines) - 1, -1, -1) if SUMMARY_HEADER in lines[i]), None)
    if at is None:
        return None
    names = sorted({_node_id(m.group(1)) for x in lines[at + 1 :] if (m := PASSED_LINE.match(x))})
    return names[:MAX_PASSING] or None


def _node_id(rest: str) -> str:
    """A summary line's test id: up to its ` - message`, a ` - ` inside `[params]` kept."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif depth == 0 and rest.startswith(" - ", i):
            return rest[:i]
    return rest


def suite(root: str, bug_dir: str, cfg: dict, when: str) -> dict:
    """Run the whole suite (`when`: before or after the fix): {when, command, source, shown,
    exit_code, timed_out, timeout_seconds, error, counts, failing, output_tail, ran_at}."""
    timeout = cfg["verification_timeout_seconds"]
    command, source, why = suite_command(root, cfg)
    run = {
        "when": when,
        "command": command,
        "source": source,
        "shown": shown(command, root),
        "exit_code": None,
        "timed_out": False,
        "timeout_seconds": timeout,
        "error": why,
        "counts": None,
        "failing": None,
        "passing": None,
        "output_tail": "",
        "ran_at": clock.iso(),
    }
    if command is None:
        return run
    ran = fixer.run_command(command, root, timeout)
    atomic_files.write_text_atomic(os.path.join(bug_dir, LOGS[when]), ran["output"])
    counts = runner_summary.read(ran["output"])
    run.update(exit_code=ran["exit_code"], timed_out=ran["timed_out"], error=ran["error"], counts=counts)
    run["failing"] = failing(ran["output"], counts)
    run["passing"] = passing(ran["output"])
    run["output_tail"] = _tail(ran["output"])
    return run


def _own(name: str, own: list[str]) -> bool:
    """Whether a failing test is one of the bug's own (the plan's test file, the report's test)."""
    return any(name == p or name.startswith((p + "::", p + "[")) or ("::" not in p and name.split("::")[0] == p) for p in own)


def _named(names: list[str]) -> str:
    more = f" (+{len(names) - MAX_SHOWN} more)" if len(names) > MAX_SHOWN else ""
    return ", ".join(names[:MAX_SHOWN]) + more


def compare(before: dict | None, after: dict, own: list[str]) -> dict:
    """What the fix did to the suite: {broken, already_failing, newly_failing, by, reason (None:
    nothing that passed before it fails now)}."""
    out: dict = {"broken": [], "already_failing": [], "newly_failing": 0, "by": None, "reason": None}
    if after["error"] or after["timed_out"]:
        why = after["error"] or f"timed out after {after['timeout_seconds']}s"
        out.update(newly_failing=1, reason=f"the whole suite could not be checked after the fix: {after['shown']} {why}")
        return out
    usable = before is not None and not before["error"] and not before["timed_out"]
    after_names = after["failing"]
    before_names = (before or {}).get("failing") if usable else []
    if after_names is not None and before_names is not None:
        out["by"] = "names"
        now = [n for n in after_names if not _own(n, own)]
        out["already_failing"] = [n for n in now if n in before_names]
        out["broken"] = broken = [n for n in now if n not in before_names]
        gone = _vanished(before if usable else None, after, own)
        if broken:
            n = len(broken)
            s = "s" if n != 1 else ""
            base = "that passed before it" if usable else "(no run of the suite from before the fix to compare with)"
            out.update(newly_failing=n, reason=f"the fix broke {n} test{s} {base}: {_named(broken)}")
        elif gone:
            out["broken"] = gone
            out.update(
                newly_failing=len(gone),
                reason=f"tests that passed before the fix no longer pass (removed, skipped or deselected): {_named(gone)}",
            )
        elif (why := _fewer(before if usable else None, after)) is not None:
            out.update(newly_failing=1, reason=why)
        return out
    a, b = after["counts"], (before or {}).get("counts") if usable else None
    if a and b and (a["runner"], a["unit"]) == (b["runner"], b["unit"]):
        out["by"] = "counts"
        now, then = a["failed"] + a["errors"], b["failed"] + b["errors"]
        if now > then:
            out.update(newly_failing=now - then, reason=f"more tests of the whole suite fail after the fix than before it ({then} → {now})")
        elif a["passed"] < b["passed"]:
            why = f"fewer tests of the whole suite pass after the fix than before it ({b['passed']} → {a['passed']})"
            out.update(newly_failing=1, reason=why)
        return out
    out["by"] = "exit"
    if after["exit_code"] != 0 and not (usable and before and before["exit_code"] != 0):
        was = " (0 before it)" if usable else ""
        out.update(newly_failing=1, reason=f"the whole suite {after['shown']} exited with status {after['exit_code']} after the fix{was}")
    return out


def _vanished(before: dict | None, after: dict, own: list[str]) -> list[str]:
    """Tests the suite named as passing before the fix that it does not name as passing after."""
    then, now = (before or {}).get("passing"), after.get("passing")
    if not then or now is None:
        return []
    still = set(now)
    return [n for n in then if n not in still and not _own(n, own)]


def _fewer(before: dict | None, after: dict) -> str | None:
    """More tests skipped after the fix than before it (the runner's own counts), when names cannot say."""
    a, b = after.get("counts"), (before or {}).get("counts")
    if a and b and (a["runner"], a["unit"]) == (b["runner"], b["unit"]) and a["skipped"] > b["skipped"]:
        return f"more tests of the whole suite are skipped after the fix than before it ({b['skipped']} → {a['skipped']})"
    return None


def kept(run: dict | None) -> dict | None:
    """A suite run as the state keeps it."""
    return None if run is None else {k: v for k, v in run.items() if k != "when"}


def judge_fix(verdict: dict, before: dict | None, after: dict, own: list[str]) -> dict:
    """The verification verdict of `bug fix`: the bug's own tests (`verdict`, from fixer.verify)
    and the whole suite after the fix compared with before it."""
    found = compare(before, after, own)
    out = dict(verdict)
    out.update(
        suite=kept(after),
        baseline=kept(before),
        broken_tests=found["broken"],
        already_failing=found["already_failing"],
        suite_compared_by=found["by"],
        suite_reason=found["reason"],
    )
    if found["reason"]:
        out["tests_failed"] = verdict["tests_failed"] + found["newly_failing"]
        if verdict["reason"] is None:
            out["reason"] = "Verification failed - " + found["reason"]
    return out


def suite_lines(verdict: dict) -> list[str]:
    """The whole suite, before and after the fix, as `bug fix` shows it."""
    after, before = verdict.get("suite"), verdict.get("baseline")
    if not after:
        return []
    out = [f"Whole suite: {after['shown']}"]
    out.append("  before the fix: " + (reports.run_result(before) if before else "not run (no baseline was kept)"))
    out.append("  after the fix:  " + reports.run_result(after))
    if verdict["broken_tests"]:
        out.append("  ✗ Broken by the fix (passed before it): " + _named(verdict["broken_tests"]))
    elif verdict.get("suite_reason"):
        out.append(f"  ✗ {verdict['suite_reason']}")
    if verdict["already_failing"]:
        out.append("  - Already failing before the fix (not blamed on it): " + _named(verdict["already_failing"]))
    return out
