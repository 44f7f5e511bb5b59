"""How many tests a run ran, passed, failed and skipped, read from the runner's own summary at
the end of its output (pure), and whether a run counts for less than the build started from.

The summaries read: pytest (`3 passed, 1 skipped in 0.1s`, `no tests ran`, `3 tests collected`),
unittest (`Ran 4 tests` … `OK (skipped=1)`), go test (its `ok`/`FAIL`/`no test files` package
lines: counted in packages), cargo test (`test result: ok. 3 passed; 0 failed; 1 ignored`),
jest (`Tests: 1 skipped, 3 passed, 4 total`), vitest (`Tests  3 passed | 1 skipped (4)`), mocha
(`3 passing`, `1 pending`, `1 failing`). `skipped` counts every test that was collected and did
not run to a verdict: skipped, xfailed, deselected, ignored, pending, todo.

A run is weakened (it no longer proves what the build started from) when:
  - no test ran (none collected, collected only, all deselected or skipped);
  - the command runs pytest and the output has no pytest summary (not the real runner);
  - fewer tests passed than at the build's start, or more were skipped;
  - with no count to compare with, a skip marker this build added let tests pass by not running.
"""

from __future__ import annotations

import re
import sys

KINDS = ("passed", "failed", "skipped", "errors")

_PYTEST_WORD = r"(\d+) (passed|failed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun)"
PYTEST_SUMMARY = re.compile(rf"^=*\s*(?:{_PYTEST_WORD}(?:, )?)+ in [\d.]+s\b.*$")
PYTEST_PART = re.compile(_PYTEST_WORD)
PYTEST_NONE = re.compile(r"^=*\s*no tests ran in [\d.]+s\b")
PYTEST_COLLECTED = re.compile(r"^=*\s*(?:(\d+)(?:/\d+)? tests? collected|no tests collected)\b.*in [\d.]+s\b")
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$")
UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")
GO_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[no test files\])")
CARGO_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; (\d+) filtered out")
JEST_TESTS = re.compile(r"^Tests:\s+(.*\d+ total)$")
VITEST_TESTS = re.compile(r"^Tests\s+(.*)\(\d+\)$")
MOCHA_LINE = re.compile(r"^(\d+) (passing|failing|pending)\b")
PYTEST_PROGRESS = re.compile(r"^(?:\S+\.py )?([.sxXFE]+)\s*(?:\[\s*\d+%\])?$")
PYTEST_COMMAND = re.compile(r"(?:^|[\s/])(?:py\.test|pytest)\b")

# A marker that keeps a test from running, by language (the build's added lines are searched).
SKIP_MARKER = re.compile(
    r"\bmark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail|importorskip)\(|@(?:unittest\.)?(?:skip|skipIf|skipUnless|expectedFailure)\b"
    r"|\bfrom\s+unittest\s+import\b.*\bskip|\bself\.skipTest\(|raise\s+(?:unittest\.)?SkipTest\b|__test__\s*=\s*False"
    r"|\b(?:it|test|describe)\.(?:skip|todo)\(|\bx(?:it|describe|test)\(|\bt\.Skip(?:Now|f)?\(|#\[ignore\]"
    r"|collect_ignore|pytest_collection_modifyitems|pytest_ignore_collect|pytestmark\s*=.*\bskip"
)
# Code that can rewrite a run's outcome from inside it: a test or conftest that ends the process
# early or rewrites reports (the summary printed is then not the runner's).
TAMPERING = re.compile(
    r"\bos\._exit\(|\batexit\.register\(|pytest_runtest_makereport|pytest_report_teststatus|pytest_terminal_summary"
    r"|\bexitstatus\b|pytest_sessionfinish"
)
# What the fixed command runs, in the files that say it: a change there changes the command.
WHAT_RUNS = {
    "package.json": re.compile(r'"(?:pre|post)?test(?:[:\w-]*)"\s*:'),
    "pytest": re.compile(
        r"^\s*(?:addopts|testpaths|python_files|python_classes|python_functions|norecursedirs|pythonpath|confcutdir|required_plugins"
        r"|minversion|usefixtures|xfail_strict|console_output_style)\b|^\s*\[(?:tool[.:])?pytest"
    ),
}
PYTEST_CONFIG = re.compile(r"(?:^|/)(?:pytest\.ini|pyproject\.toml|setup\.cfg|tox\.ini)$")
MAKEFILE = re.compile(r"(?:^|/)(?:GNUmakefile|[Mm]akefile)$")


def _empty(runner: str, unit: str = "tests") -> dict:
    return {"runner": runner, "unit": unit, "ran": 0, "passed": 0, "failed": 0, "skipped": 0, "errors": 0}


def _pytest(lines: list) -> dict | None:
    for line in reversed(lines):
        if PYTEST_NONE.match(line):
            return _empty("pytest")
        found = PYTEST_COLLECTED.match(line)
        if found:  # collected, never run (`--collect-only`)
            return {**_empty("pytest"), "collected_only": int(found.group(1) or 0)}
        if PYTEST_SUMMARY.match(line):
            out = _empty("pytest")
            for n, word in PYTEST_PART.findall(line):
                kind = {"xpassed": "passed", "xfailed": "skipped", "deselected": "skipped", "error": "errors"}.get(word, word)
                if kind in KINDS:
                    out[kind] += int(n)
            out["ran"] = out["passed"] + out["failed"] + out["errors"]
            return out
    return None


def _unittest(lines: list) -> dict | None:
    ran = next((int(m.group(1)) for line in reversed(lines) if (m := UNITTEST_RAN.match(line))), None)
    end = next((m for line in reversed(lines) if (m := UNITTEST_END.match(line))), None)
    if ran is None or end is None:
        return None
    parts = dict(re.findall(r"(\w+)=(\d+)", end.group(2) or ""))
    skipped = int(parts.get("skipped", 0)) + int(parts.get("expected failures", 0))
    failed, errors = int(parts.get("failures", 0)), int(parts.get("errors", 0))
    out = _empty("unittest")
    out.update(skipped=skipped, failed=failed, errors=errors, ran=ran - skipped, passed=max(ran - skipped - failed - errors, 0))
    return out


def _go(lines: list) -> dict | None:
    found = [m.group(1) for line in lines if (m := GO_PACKAGE.match(line))]
    if not found:
        return None
    out = _empty("go test", "packages")
    out.update(passed=found.count("ok"), failed=found.count("FAIL"), skipped=found.count("?"))
    out["ran"] = out["passed"] + out["failed"]
    return out


def _cargo(lines: list) -> dict | None:
    found = [m for line in lines if (m := CARGO_RESULT.match(line))]
    if not found:
        return None
    out = _empty("cargo test")
    for m in found:
        out["passed"] += int(m.group(1))
        out["failed"] += int(m.group(2))
        out["skipped"] += int(m.group(3)) + int(m.group(4))
    out["ran"] = out["passed"] + out["failed"]
    return out


def _words(text: str, runner: str) -> dict:
    out = _empty(runner)
    for n, word in re.findall(r"(\d+) (passed|failed|skipped|todo|pending)", text):
        out["passed" if word == "passed" else "failed" if word == "failed" else "skipped"] += int(n)
    out["ran"] = out["passed"] + out["failed"]
    return out


def _js(lines: list) -> dict | None:
    for line in reversed(lines):
        if m := JEST_TESTS.match(line):
            return _words(m.group(1), "jest")
        if m := VITEST_TESTS.match(line):
            return _words(m.group(1), "vitest")
    mocha = {m.group(2): int(m.group(1)) for line in lines if (m := MOCHA_LINE.match(line))}
    if "passing" in mocha or "failing" in mocha:
        out = _empty("mocha")
        out.update(passed=mocha.get("passing", 0), failed=mocha.get("failing", 0), skipped=mocha.get("pending", 0))
        out["ran"] = out["passed"] + out["failed"]
        return out
    return None


def _pytest_quiet(lines: list) -> dict | None:
    """pytest with `-qq` (`addopts = -q` and a named `-q`) prints no summary line: its progress
    lines (`..sxF  [100%]`) are counted, when they end at 100%."""
    rows = [m.group(1) for line in lines if (m := PYTEST_PROGRESS.match(line))]
    if not rows or not lines or not PYTEST_PROGRESS.match(lines[-1]) or not lines[-1].endswith("[100%]"):
        return None
    marks = "".join(rows)
    out = _empty("pytest")
    out.update(passed=marks.count(".") + marks.count("X"), failed=marks.count("F"), errors=marks.count("E"))
    out.update(skipped=marks.count("s") + marks.count("x"))
    out["ran"] = out["passed"] + out["failed"] + out["errors"]
    return out


SUGAR_KINDS = {"xpassed": "passed", "xfailed": "skipped", "deselected": "skipped", "error": "errors"}


def _pytest_sugar(lines: list) -> dict | None:
    """pytest-sugar's end: `Results (0.05s):` then `3 passed`, `1 skipped` … a line each."""
    at = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith("Results (")), None)
    if at is None:
        return None
    out = _empty("pytest")
    for line in lines[at + 1 :]:
        found = re.match(r"^(\d+) (passed|failed|skipped|deselected|xfailed|xpassed|error)\b", line)
        if found:
            kind = SUGAR_KINDS.get(found.group(2), found.group(2))
            out[kind] += int(found.group(1))
    out["ran"] = out["passed"] + out["failed"] + out["errors"]
    return out


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def read(output: str) -> dict | None:
    """The counts a run's output ends with ({runner, unit, ran, passed, failed, skipped, errors},
    plus `collected_only` for a pytest that collected and ran nothing), None when no summary a
    runner prints is there. Colours are ignored."""
    lines = [line.strip() for line in ANSI.sub("", output or "").splitlines() if line.strip()]
    for reader in (_pytest, _unittest, _cargo, _js, _go, _pytest_sugar, _pytest_quiet):
        found = reader(lines)
        if found is not None:
            return found
    return None


def short(counts: dict | None) -> str:
    """`12 ran: 12 passed, 1 skipped` (`3 package(s) ok` for go test); '' when nothing was read."""
    if not counts:
        return ""
    if counts.get("collected_only") is not None:
        return f"{counts['collected_only']} collected, none run"
    if counts.get("unit") == "packages":
        return ", ".join(
            f"{counts[k]} package(s) {w}" for k, w in (("passed", "ok"), ("failed", "failing"), ("skipped", "without tests")) if counts[k]
        )
    parts = [f"{counts[k]} {k}" for k in ("passed", "failed", "errors", "skipped") if counts[k]]
    return f"{counts['ran']} ran: " + ", ".join(parts) if counts["ran"] else "no test ran" + (f": {', '.join(parts)}" if parts else "")


# Files that decide how tests are found or run: a build that changes one is named with the
# verdict (the command fixed at the build's start still runs).
RUNNER_CONFIG = re.compile(
    r"(?:^|/)(?:conftest\.py|pytest\.ini|pyproject\.toml|setup\.cfg|tox\.ini|noxfile\.py|package\.json|Makefile|makefile|"
    r"GNUmakefile|Cargo\.toml|go\.mod|\.mocharc\.[\w.]+|(?:jest|vitest|vite|karma)\.config\.[\w.]+|\.aether/config\.yaml)$"
)
# Files that can stand in for the runner or what it imports: the run is then not the runner's.
STAND_IN = re.compile(r"(?:^|/)(?:sitecustomize\.py|usercustomize\.py|[^/]+\.pth|node_modules/\.bin/[^/]+)$")
# The modules `python3 -m pytest` imports first from the project's folder (it is first on sys.path).
RUNNER_MODULES = frozenset(
    {"pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "tomli", "exceptiongroup", "colorama", "unittest"}
    | (set(getattr(sys, "stdlib_module_names", ())) - {"test", "this", "antigravity", "idlelib", "turtledemo"})
)
# A test file, as the runners collect them (a definition elsewhere is no test).
TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*\.py|[^/]*_test\.py|[^/]*\.(?:test|spec)\.[cm]?[jt]sx?|[^/]*_test\.go|tests?/[^/]*\.rs)$")
# A test's definition, by language: pytest/unittest, jest/vitest/mocha, go, rust.
TEST_DEFINITION = re.compile(
    r"^\s*(?:async\s+)?def\s+test\w*\s*\(|^\s*(?:it|test)\s*\(\s*['\"`]|^func\s+Test\w*\(|^\s*#\[(?:tokio::)?test\]"
)


def runner_files(paths: list) -> tuple[list, list]:
    """(files that configure how tests run, files that can stand in for the runner) among these:
    a root (or `src/`) module named like one the runner imports (`pytest.py`, `argparse.py` …)
    shadows it."""
    config = sorted(p for p in paths if RUNNER_CONFIG.search(p))
    stand_in = sorted(p for p in paths if STAND_IN.search(p) or _shadows(p))
    return config, stand_in


def _shadows(path: str) -> bool:
    parts = path.split("/")
    if parts[0] == "src":
        parts = parts[1:]
    if len(parts) == 1 and parts[0].endswith(".py"):
        return parts[0][:-3] in RUNNER_MODULES
    return len(parts) == 2 and parts[1] == "__init__.py" and parts[0] in RUNNER_MODULES


def _hits(lines_by_file: dict, pattern) -> list:
    return sorted(path for path, lines in lines_by_file.items() if any(pattern.search(line) for line in lines))


def _definitions(lines_by_file: dict) -> int:
    return sum(1 for path, lines in lines_by_file.items() if TEST_FILE.search(path) for line in lines if TEST_DEFINITION.search(line))


def examine(command: str, added: dict, gone: dict, changed: list) -> dict:
    """What the build's changes did to its tests ({markers, tampering, what_runs, removed, net,
    config, stand_in} — files, and test definitions removed / added less removed). added, gone:
    {file: [lines]} the build added / removed; changed: every file it changed."""
    config, stand_in = runner_files(changed)
    both = {p: added.get(p, []) + gone.get(p, []) for p in set(added) | set(gone)}
    what_runs = []
    if re.search(r"\b(?:npm|pnpm|yarn)\b", command):
        what_runs = [p for p in _hits(both, WHAT_RUNS["package.json"]) if p.endswith("package.json")]
    if PYTEST_COMMAND.search(command):
        what_runs += [p for p in _hits(both, WHAT_RUNS["pytest"]) if PYTEST_CONFIG.search(p)]
    if re.search(r"\bmake\b", command):
        what_runs += [p for p in changed if MAKEFILE.search(p)]
    lost, new = _definitions(gone), _definitions(added)
    return {
        "markers": _hits(added, SKIP_MARKER),
        "tampering": [p for p in _hits(added, TAMPERING) if TEST_FILE.search(p) or p.endswith("conftest.py")],
        "what_runs": sorted(set(what_runs)),
        "removed": max(lost - new, 0),
        "removed_from": sorted(p for p, lines in gone.items() if TEST_FILE.search(p) and any(TEST_DEFINITION.search(x) for x in lines)),
        "net": new - lost,
        "config": config,
        "stand_in": stand_in,
    }


def weakened(command: str, counts: dict | None, baseline: dict | None, found: dict) -> tuple[list, list]:
    """(why a run that exited 0 proves less than the build started from — [] when it does not —,
    the files that did it). baseline: the counts of the last verified run of the same command
    (None: none kept); found: what the build's changes did to its tests (`examine`)."""
    why, files = [], []

    def say(reason: str, named: list) -> None:
        why.append(reason + (f" ({', '.join(named[:6])})" if named else ""))
        files.extend(named)

    comparable = bool(baseline and counts and baseline.get("runner") == counts.get("runner") and baseline.get("unit") == counts.get("unit"))
    if found["stand_in"]:
        say("a file that can stand in for the runner or what it imports changed", found["stand_in"])
    if found["what_runs"]:
        say(f"the build changed what `{command}` runs", found["what_runs"])
    if found["tampering"]:
        say("a test or conftest the build changed can rewrite the run's outcome (os._exit, atexit, report hooks)", found["tampering"])
    if counts is None:
        if PYTEST_COMMAND.search(command or ""):
            why.append("its output ends with no pytest summary: not the real pytest, or not run")
        elif baseline:
            why.append("its output ends with no summary of the runner the build started with")
        return why, files
    if counts["failed"] or counts["errors"]:
        why.append(f"the runner counted {counts['failed'] + counts['errors']} failing, yet the command exited 0")
    if counts.get("collected_only") is not None:
        why.append(f"tests were collected ({counts['collected_only']}), none ran")
    elif counts["ran"] == 0:
        why.append("no test ran" + (f" ({counts['skipped']} skipped or deselected)" if counts["skipped"] else ""))
    if comparable:
        assert baseline is not None
        if counts["passed"] < baseline.get("passed", 0):
            why.append(f"fewer passed than at the build's start ({baseline['passed']} → {counts['passed']})")
        if counts["skipped"] > baseline.get("skipped", 0):
            say(f"more skipped than at the build's start ({baseline.get('skipped', 0)} → {counts['skipped']})", found["markers"])
        if found["net"] > 0 and counts["ran"] < baseline.get("ran", 0) + found["net"]:
            why.append(f"the build added {found['net']} test(s), yet {counts['ran'] - baseline.get('ran', 0)} more ran")
    else:
        if found["markers"] and (counts["skipped"] or counts.get("unit") == "packages"):
            skipped = f"{counts['skipped']} skipped, by " if counts["skipped"] else ""
            say(f"{skipped}a skip marker this build added", found["markers"])
        if found["removed"]:
            say(f"the build removed {found['removed']} test(s)", found["removed_from"])
    if why and not files:
        files = sorted(set(found["config"]))
    return why, sorted(set(files))
