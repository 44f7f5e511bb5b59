"""The checks a phase's verification requires, as commands the helper names, and their verdicts
from what the ants ran (state/evidence.py, rules/evidence.py).

- syntax: the helper checks the build's files itself (steps/syntax_check.py);
- imports: `python3 -c "import a.b, c"` over the Python modules the build changed;
- tests: `verify: tests:` in .aether/config.yaml, else found from the project's files (pytest,
  npm/pnpm/yarn test, go test, cargo test, make test); none found is said, never passed;
- execution (FULL): `verify: launch:`, else the entry point found (`python3 -m pkg --help`,
  `node <main>`); none found is said, never passed.
"""

from __future__ import annotations

import json
import os
import re
import time

from aether.core import containment, paths
from aether.core.exceptions import AetherError, input_error
from aether.core.text import one_line
from aether.rules import evidence as rules
from aether.rules import modes, runner_summary
from aether.state import changes, evidence, settings, store
from aether.state import spawns as ledger
from aether.steps import syntax_check

SKIP_DIRS = {".git", ".aether", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox", "target"}
MAX_SCAN = 2000  # entries looked at while looking for tests
MAX_IMPORTS = 40  # modules in one import check
NOT_IMPORTED = {"__main__.py", "setup.py", "conftest.py", "manage.py", "noxfile.py", "fabfile.py"}  # importing runs them
NPM_DEFAULT_TEST = "no test specified"
KEPT_TAIL = 600  # characters of a check run's output kept with its verdict (in the run record)
CHECK_NAMES = {"syntax": "syntax", "imports": "imports", "tests": "tests", "execution": "launch"}
NO_TESTS = (
    "no test command found (pytest, npm/pnpm/yarn test, go test, cargo test or make test): set `verify: tests:` in .aether/config.yaml"
)
NO_LAUNCH = "no entry point found (a package's __main__.py, package.json main): set `verify: launch:` in .aether/config.yaml"


def _read(path: str, limit: int = 256 * 1024) -> str:
    try:
        return containment.read_bytes(containment.check_read(path), limit).decode("utf-8", "replace")
    except (OSError, AetherError):
        return ""


def _has_python_tests(root: str) -> bool:
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        if folder[len(root) :].count(os.sep) >= 3:
            dirs[:] = []
        for name in files:
            seen += 1
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")) or name == "conftest.py":
                return True
        if seen > MAX_SCAN:
            return False
    return False


def tests_command(root: str) -> str | None:
    """The project's test command, found from its files (None: no tests found)."""
    pj = os.path.join(root, "package.json")
    if os.path.isfile(pj):
        try:
            scripts = (json.loads(_read(pj)) or {}).get("scripts") or {}
        except (ValueError, AttributeError):
            scripts = {}
        test = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and test.strip() and NPM_DEFAULT_TEST not in test:
            if os.path.isfile(os.path.join(root, "pnpm-lock.yaml")):
                return "pnpm test"
            if os.path.isfile(os.path.join(root, "yarn.lock")):
                return "yarn test"
            return "npm test"
    pyproject = _read(os.path.join(root, "pyproject.toml"))
    if (
        "[tool.pytest" in pyproject
        or os.path.isfile(os.path.join(root, "pytest.ini"))
        or "[tool:pytest]" in _read(os.path.join(root, "setup.cfg"))
        or _has_python_tests(root)
    ):
        return "python3 -m pytest -q"
    if os.path.isfile(os.path.join(root, "go.mod")):
        return "go test ./..."
    if os.path.isfile(os.path.join(root, "Cargo.toml")):
        return "cargo test"
    for name in ("Makefile", "makefile", "GNUmakefile"):
        if re.search(r"^test\s*:", _read(os.path.join(root, name)), re.MULTILINE):
            return "make test"
    return None


def test_command() -> str | None:
    """The project's test command: the running build's (fixed at its start), else — no tests at
    its start — `verify: tests:`, else the one found (None: none)."""
    fixed = fixed_of_build()
    if fixed is not None and fixed.get("tests"):
        return fixed["tests"]
    try:
        configured = settings.verify().get("tests")
    except AetherError:
        configured = None
    return configured or tests_command(paths.project_root())


def launch_command(root: str) -> str | None:
    """The program's entry point as a command that starts it and ends (None: none found)."""
    mains = []
    for base in ("", "src"):
        folder = os.path.join(root, base) if base else root
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        mains += [(base, n) for n in names if n not in SKIP_DIRS and os.path.isfile(os.path.join(folder, n, "__main__.py"))]
    if mains:
        base, name = mains[0]
        prefix = f"cd {base} && " if base else ""
        return f"{prefix}python3 -m {name} --help"
    pj = os.path.join(root, "package.json")
    if os.path.isfile(pj):
        try:
            main = (json.loads(_read(pj)) or {}).get("main")
        except (ValueError, AttributeError):
            main = None
        if isinstance(main, str) and re.fullmatch(r"[\w./-]+", main) and os.path.isfile(os.path.join(root, main)):
            return f"node {main}"
    return None


def _module(path: str) -> tuple[str, str] | None:
    """(sys.path folder, dotted module) of a changed Python file, None for a test or a script outside a package."""
    parts = path.replace("\\", "/").split("/")
    if not parts[-1].endswith(".py") or any(p.startswith("test") for p in parts) or parts[-1] in NOT_IMPORTED:
        return None
    base = ""
    if parts[0] == "src" and len(parts) > 1:
        base, parts = "src", parts[1:]
    parts[-1] = parts[-1][: -len(".py")]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return base, ".".join(parts)


def imports_command(files: list) -> str | None:
    modules = [m for f in files if (m := _module(f))]
    if not modules:
        return None
    bases = sorted({b for b, _ in modules})
    names = sorted({n for _, n in modules})[:MAX_IMPORTS]
    path = "".join(f"sys.path.insert(0, {b!r}); " for b in bases if b)
    return f'python3 -c "import sys; {path}import {", ".join(names)}"' if path else f'python3 -c "import {", ".join(names)}"'


def changed_files(tree: dict, scope: str | None = None) -> list:
    """Files the build's completed spawns reported, then those its ants wrote with a file tool
    and did not report (state under .aether/ left out), in order. scope: the build's run (the
    running build's when not given)."""
    seen = []
    nodes = sorted((n for n in (tree.get("nodes") or {}).values() if isinstance(n, dict)), key=lambda n: n.get("seq") or 0)
    for node in nodes:
        if node.get("status") != "completed":
            continue
        for path in (node.get("files_created") or []) + (node.get("files_modified") or []):
            if isinstance(path, str) and path not in seen and not path.replace("\\", "/").startswith(".aether/"):
                seen.append(path)
    if scope is None:
        scope = (ledger.current_run(store.read("spawns"), "build") or {}).get("scope")
    if scope:
        calls = [c for items in evidence.of_scope(scope, owners()).values() for c in items]
        seen += [p for p in _written(calls, paths.project_root()) if p not in seen and not p.startswith(".aether/")]
    return seen


def _written(calls: list, root: str) -> list:
    """The project's files these calls wrote with a file tool, relative to the project."""
    real = os.path.realpath(root) + os.sep
    out = []
    for c in calls:
        if c.get("tool") in evidence.FILE_TOOLS and c.get("ok", True) and isinstance(c.get("path"), str):
            where = os.path.realpath(os.path.join(root, c["path"]))
            if where.startswith(real) and os.path.isfile(where) and where[len(real) :] not in out:
                out.append(where[len(real) :])
    return out


def fix(tree: str | None = None) -> dict:
    """The commands a build's verification runs, fixed when the build starts (a builder that adds
    a package.json or edits `verify:` changes nothing the build is checked by): {tests, launch,
    imports (configured, else found from the changed files later), tree (the checkpoint's, to see
    what the build changed), baseline (the counts of the last verified tests run of the same
    command, to compare with)}."""
    configured = settings.verify()
    root = paths.project_root()
    tests = configured.get("tests") or tests_command(root)
    return {
        "tests": tests,
        "launch": configured.get("launch") or launch_command(root),
        "imports": configured.get("imports"),
        "tree": tree,
        "baseline": baseline(tests),
    }


def baseline(tests: str | None) -> dict | None:
    """The counts of the newest phase record's verified (or accepted) run of this tests command."""
    if not tests:
        return None
    for record in reversed(store.read("phase_records")["records"]):
        proof = record.get("verification") if isinstance(record, dict) else None
        for v in (proof or {}).get("checks") or [] if isinstance(proof, dict) else []:
            if (
                isinstance(v, dict)
                and v.get("name") == "tests"
                and v.get("command") == tests
                and v.get("status") in ("verified", "accepted")
                and isinstance(v.get("counts"), dict)
            ):
                return v["counts"]
    return None


def fixed_of_build() -> dict | None:
    """The commands the running build fixed at its start (None: a build started before they were)."""
    run = ledger.current_run(store.read("spawns"), "build")
    fixed = (run or {}).get("verify")
    return fixed if isinstance(fixed, dict) else None


def named(mode: str | None, files: list, fixed: dict | None = None) -> list:
    """The checks the mode requires, each {name, command, why, by} — by `helper` (syntax, run by
    the helper itself) or `watcher` (the exact command it must run); `command` None with `why`:
    nothing can be run; `not_needed`: nothing to check. fixed: the commands the build fixed at
    its start (the running build's when not given; found now for a build that fixed none)."""
    depth = modes.profile(mode)["watcher"]
    fixed = fixed or fixed_of_build() or fix()
    out: list[dict] = []
    for check in modes.WATCHER_CHECKS.get(depth, ()):
        name = CHECK_NAMES[check]
        if name == "syntax":
            out.append({"name": "syntax", "command": None, "by": "helper", "why": "the helper checks the changed files itself"})
        elif name == "imports":
            command = fixed.get("imports") or imports_command(files)
            if command:
                out.append({"name": "imports", "command": command, "by": "watcher", "why": "every changed module imports"})
            else:
                out.append({"name": "imports", "command": None, "by": "watcher", "not_needed": True, "why": "no Python module changed"})
        elif name == "tests":  # none at the start: the build's own tests (their files are named with the verdict)
            command = fixed.get("tests") or tests_command(paths.project_root())
            out.append({"name": "tests", "command": command, "by": "watcher", "why": "the project's tests" if command else NO_TESTS})
        else:
            command = fixed.get("launch") or launch_command(paths.project_root())
            out.append({"name": "launch", "command": command, "by": "watcher", "why": "the program starts" if command else NO_LAUNCH})
    return out


def brief_lines(mode: str | None, files: list, missing: dict | None = None) -> list:
    """The checks as a watcher's brief names them: the exact command of each, in the project's folder."""
    root = paths.project_root()
    lines = [
        "Checks — a check passes only on a run of its command that Aether saw exit 0: run each command",
        "below exactly as written (its `cd` included: the project's own folder, not a subfolder or a copy),",
        "as its own Bash call, with no pipe such as `| tail` (a pipe hides the exit status). Then judge",
        "what the runs show.",
    ]
    for c in named(mode, files):
        if c["by"] == "helper":
            lines.append(f"  - {c['name']}: checked by Aether itself (nothing to run)")
        elif c.get("not_needed"):
            lines.append(f"  - {c['name']}: nothing to check ({c['why']})")
        elif c["command"]:
            lines.append(f"  - {c['name']}: {rules.named(c['command'], root)}")
        else:
            lines.append(f"  - {c['name']}: cannot be run — {c['why']}; report it as not run")
    if missing:
        lines.append("The last verification left these unverified — run their commands above exactly as written:")
        lines += [f"  · {v['name']} ({v['why']})" for v in missing["checks"] if v["status"] == "unverified"]
    return lines


def owners(data: dict | None = None) -> dict:
    """{agent id: spawn ref} of every agent Claude Code ran a spawn as (data: spawns.json, read
    when not given)."""
    out = {}
    for s in (data or store.read("spawns"))["spawns"]:
        for key in [s.get("agent_id"), *(s.get("metered") or [])]:
            if isinstance(key, str):
                out[key] = s["ref"]
    return out


def calls_of(ref: str) -> list:
    """Every call of the ants that ran this spawn, in order."""
    return evidence.of_spawns([ref], owners()).get(ref, [])


def prune_logs() -> int:
    """A build starts: the logs of all but the newest runs go."""
    runs = store.read("spawns").get("runs") or []
    return evidence.prune([r["scope"] for r in runs[-evidence.KEEP_SCOPES :]], owners())


def _claims(watcher: dict | None) -> dict:
    """{check name: what the watcher said of it} from its report's checks (matched by name)."""
    out: dict = {}
    if not isinstance(watcher, dict):
        return out
    for check in watcher.get("checks") or []:
        if isinstance(check, dict) and isinstance(check.get("name"), str) and isinstance(check.get("passed"), bool):
            said = check["name"].lower()
            for name in ("syntax", "imports", "tests", "launch"):
                if name.rstrip("s") in said or (name == "launch" and ("execution" in said or "launch" in said)):
                    out.setdefault(name, check["passed"])
    if isinstance(watcher.get("passed"), bool):
        out.setdefault("*", watcher["passed"])
    return out


def last_change(calls: list, files: list, merged_t: float | None, writers: list | None = None, during: list | None = None) -> float:
    """When the build last changed the project: a file an ant wrote, any command of an ant that
    may write (`writers`: a builder's `sed -i` is a change too), a merge, a changed file's mtime
    (one in the future counts as now). during: the (start, end) of the verifying runs — a file
    their run rewrote (a snapshot, a golden file, a `pretest` generator) is no later change."""
    times = [float(c["t"]) for c in calls if c.get("tool") in evidence.FILE_TOOLS and isinstance(c.get("t"), (int, float))]
    times += [float(c["t"]) for c in writers or [] if isinstance(c.get("t"), (int, float))]
    if merged_t:
        times.append(float(merged_t))
    root = paths.project_root()
    now = time.time()
    for rel in files:
        try:
            info = os.stat(containment.check_read(os.path.join(root, rel)))
        except (OSError, AetherError):
            continue
        changed = min(now, max(info.st_mtime, info.st_ctime))  # a backdated mtime leaves the ctime
        if not any(start - RUN_SLACK <= changed <= end for start, end in during or []):
            times.append(changed)
    return max(times, default=0.0)


# Files no ant reported but git saw change, whose syntax the helper checks too: code only (a
# changed data file may be malformed on purpose: a fixture).
CODE_LANGUAGES = ("python", "javascript", "typescript", "shell")
SYNTAX_CODE = tuple(suffix for suffix, language in syntax_check.LANGUAGES.items() if language in CODE_LANGUAGES)
RUN_SLACK = 0.5  # seconds before a verifying run's reported start still its own (its end is reported after it ended)


def folder_of(call: dict, root: str) -> str:
    """The folder a call's shell started in: the one Claude Code reported (the hooks), else the
    project's — where every Bash call of an ant starts (a `cd` is gone at its next call:
    docs/decisions/evidence-decides.md; the mod's calls report no folder)."""
    cwd = call.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else root


def _runs_of(checks_named: list, calls: list, root: str) -> list:
    """(start, end) of every call that ran one of the named commands in the project's folder."""
    out = []
    for call in calls:
        if call.get("tool") != "Bash" or not isinstance(call.get("command"), str) or not isinstance(call.get("t"), (int, float)):
            continue
        if any(
            c.get("command") and rules.match(c["command"], call["command"], root, folder_of(call, root), os.path.realpath) == "exact"
            for c in checks_named
        ):
            out.append((rules.started(call), float(call["t"])))
    return out


def _changed_by_build(fixed: dict, files: list, calls: list, root: str) -> tuple:
    """({file: [added lines]} by git — outside it, the changed files' whole text —, {file:
    [removed lines]} by git ({} outside it), every file the build changed, by git,
    by its ants' reports and file tools; `.aether/config.yaml` when its `verify:` no longer says
    what the build started with)."""
    diff = changes.since(fixed.get("tree"))
    added, gone = diff if diff is not None else (None, {})
    paths_seen = set(files) | set(added or {})
    paths_seen.update(_written(calls, root))
    try:
        configured = settings.verify()
    except AetherError:
        configured = {}
    if any(configured.get(k) and configured.get(k) != fixed.get(k) for k in ("tests", "launch", "imports")):
        paths_seen.add(".aether/config.yaml")
    if added is None:  # no git: the changed files' whole text stands for their added lines
        added = {f: _read(os.path.join(root, f), 64 * 1024).splitlines() for f in sorted(paths_seen) if _code_or_config(f)}
    return added, gone, sorted(paths_seen)


def _code_or_config(path: str) -> bool:
    return path.endswith(changes.CODE_SUFFIXES) or path.rsplit("/", 1)[-1] in changes.CONFIG_NAMES


def judge(
    scope: str, mode: str | None, files: list, watcher: dict | None, merged_t: float | None = None, fixed: dict | None = None
) -> dict:
    """Every required check's verdict for a build run from its ants' evidence: {checks, passed,
    unverified: [names], weakened: [names], needs_watcher, calls}. fixed: the commands the build
    fixed at its start (checks.fix)."""
    data = store.read("spawns")
    by_spawn = evidence.of_scope(scope, owners(data))
    calls = [c for items in by_spawn.values() for c in items]
    builders = {s["ref"] for s in ledger.of_scope(data, scope) if s.get("subagent_type") == "ant:builder"}
    writers = [c for ref, items in by_spawn.items() if ref in builders for c in items if c.get("tool") == "Bash"]
    others = [c for ref, items in by_spawn.items() if ref not in builders for c in items]
    claims = _claims(watcher)
    root = paths.project_root()
    fixed = fixed or fix()
    wanted = named(mode, files, fixed)
    added, gone, all_changed = _changed_by_build(fixed, files, calls, root)
    on_disk = [f for f in all_changed if not f.startswith(".aether/") and os.path.isfile(os.path.join(root, f))]
    changed = last_change(calls, list(dict.fromkeys(files + on_disk)), merged_t, writers, _runs_of(wanted, others, root))
    checkable = list(dict.fromkeys(files + [f for f in on_disk if f.endswith(SYNTAX_CODE)]))
    verdicts: list[dict] = []
    for check in wanted:
        if check["by"] == "helper":
            result = syntax_check.compact(syntax_check.run(checkable[: syntax_check.MAX_FILES]))
            bad = ", ".join(f["path"] for f in result["failures"][:5])
            verdicts.append(
                {
                    "name": "syntax",
                    "command": None,
                    "claimed": claims.get("syntax"),
                    "run": None,
                    "status": "verified" if result["passed"] else "failed",
                    "why": f"checked by the helper ({result['summary']})" + (f": {bad}" if bad else ""),
                }
            )
            continue
        claim = claims.get(check["name"], claims.get("*"))
        v = rules.verdict(check, calls, changed, root, claim, os.path.realpath, lambda call: folder_of(call, root))
        if check["name"] == "tests" and check.get("command"):
            v = rules.weigh(v, fixed.get("baseline"), added, all_changed, gone)
        verdicts.append(v)
    for v in verdicts:  # kept in the run record: the output's end only
        run = v.get("run")
        if isinstance(run, dict) and isinstance(run.get("tail"), str):
            run["tail"] = run["tail"][-KEPT_TAIL:]
    unverified = [v["name"] for v in verdicts if v["status"] == "unverified"]
    return {
        "checks": verdicts,
        "passed": rules.passed(verdicts),
        "unverified": unverified,
        "weakened": [v["name"] for v in verdicts if v["status"] == "weakened"],
        # another watcher can settle it: something unverified, nothing failed or weakened
        "needs_watcher": bool(unverified) and all(v["status"] in rules.OK + ("unverified",) for v in verdicts),
        "calls": len(calls),
    }


def settle(verdict: dict, accepted: dict | None) -> dict:
    """The verdicts build-finish records: unverified or weakened checks the person accepted
    become `accepted`."""
    names = set((accepted or {}).get("checks") or [])
    out = []
    for v in verdict["checks"]:
        if v["status"] in rules.ASKS and v["name"] in names:
            v = {**v, "status": "accepted", "why": f"accepted {v['status']} by the user: {accepted['why']}"}  # type: ignore[index]
        out.append(v)
    return {"checks": out, "passed": rules.passed(out), "accepted": accepted if names else None}


def short(verdict: dict) -> str:
    """`syntax verified, imports unverified, tests verified` — one line for the hook's report."""
    return ", ".join(f"{v['name']} {v['status'].replace('_', ' ')}" for v in verdict["checks"]) or "no checks"


def unverified_text(phase: int, verdict: dict, rounds: int) -> str:
    """The stop when checks are weakened, or watchers left them unverified: what is missing and
    how to go on."""
    if verdict.get("weakened"):
        head = f"Phase {phase} cannot complete: its tests prove less than the build started from — the person decides."
    else:
        head = f"Phase {phase} cannot complete: {rounds} verification(s) in a row left checks unverified — no run proves them."
    lines = [head, ""]
    lines += [line(v) for v in verdict["checks"]]
    lines += [
        "",
        "Go on with one of:",
        f"  /ant:build {phase} --answer refine <words> — one more watcher, told exactly what to run",
        f"  /ant:build {phase} --answer accept <why>    — complete it as it is (recorded as accepted by you)",
        f"  /ant:build {phase} --answer stop <why>      — give up this build",
        "A check with no command to run: set it under `verify:` in .aether/config.yaml, then verify again.",
    ]
    return "\n".join(lines)


def tests_part(verdict: dict) -> dict:
    """The code loop's `tests` score part from what the tests run counted (not a number an ant
    typed): a skipped test is no pass, a weakened run no pass at all."""
    v = next((c for c in verdict["checks"] if c["name"] == "tests"), None)
    if v is None or v["status"] in ("unverified", "not_needed") or not v.get("run"):
        return {"passed": 0, "failed": 1}
    counts = v.get("counts") or {}
    passed, failed = int(counts.get("passed") or 0), int(counts.get("failed") or 0) + int(counts.get("errors") or 0)
    if v["status"] == "verified":
        return {"passed": passed, "failed": 0} if passed else {"passed": 1, "failed": 0} if not counts else {"passed": 0, "failed": 1}
    return {"passed": passed if v["status"] != "weakened" else 0, "failed": max(failed, 1)}


MARKS = {"verified": "✓", "not_needed": "·", "accepted": "~", "failed": "✗", "contradicted": "✗", "unverified": "?", "weakened": "!"}


def line(v: dict) -> str:
    """One check's verdict as a person reads it: `tests: pytest -q → exit 0 (12 ran: 12 passed), 10:42,
    after the last change`, and a second line when the build changed how tests run."""
    mark = MARKS[v["status"]]
    run = v.get("run") or ({"exit": v["exit"], "at": v.get("at")} if v.get("exit") is not None else None)  # a phase record's
    counted = runner_summary.short(v.get("counts"))
    counted = f" ({counted})" if counted else ""
    changed = v.get("runner_changes") or []
    more = (
        f"\n      the build changed how tests are found or run: {', '.join(changed[:8])} (the command fixed at its start ran)"
        if changed
        else ""
    )
    if v["status"] == "verified" and run:
        at = str(run.get("at") or "")[11:16]
        return f"  {mark} {v['name']}: {v['command']} → exit 0{counted}, {at}, after the last change" + more
    if v["status"] in ("failed", "contradicted") and run:
        err = rules.error_line(run.get("tail") or "")
        return f"  {mark} {v['name']} {v['status']}: {v['command']} → {v['why']}{counted}" + (f" — {err}" if err else "") + more
    if v["status"] == "weakened":
        return f"  {mark} {v['name']} weakened: {v['command']} → exit 0{counted}, but {v['why']}" + more
    head = f"  {mark} {v['name']} {v['status'].replace('_', ' ')}"
    return head + (f": `{v['command']}` {v['why']}" if v.get("command") else f": {v['why']}") + more


def _dropped_why() -> str:
    return f"an ant's log past {evidence.MAX_ANT_BYTES // 1024} KiB keeps its newest calls"


def _call_line(c: dict) -> str:
    took = f" {c['ms'] / 1000:.1f}s" if isinstance(c.get("ms"), int) else ""
    at = str(c.get("at") or "")[11:19]
    if c.get("capped"):
        return f"  {at} … more calls, not kept (the log's cap)"
    if c.get("tool") == "Bash":
        status = "exit ?" if c.get("exit") is None else f"exit {c['exit']}"
        head = f"  {at} $ {one_line(str(c.get('command')), 160)} → {status}{took}"
        err = rules.error_line(c.get("tail") or "") if c.get("exit") not in (0, None) else ""
        return head + (f"\n      {one_line(err, 160)}" if err else "")
    return f"  {at} {c.get('tool')} {c.get('path')}{took}" + ("" if c.get("ok", True) else " (failed)")


def report(spawn: str | None) -> dict:
    """aether evidence [SPAWN]: an ant's calls, or the latest run's ants and their counts."""
    data = store.read("spawns")
    if spawn:
        matches = [s for s in reversed(data["spawns"]) if s["ref"] == spawn or s["local"] == spawn]
        if not matches:
            raise input_error("unknown_spawn", f"no spawn {spawn!r}: `aether evidence` lists the latest run's ants")
        ref = matches[0]["ref"]
        calls = evidence.of_spawns([ref], owners(data)).get(ref, [])
        gone = evidence.dropped([ref], owners(data)).get(ref, 0)
        lines = [f"{ref} ({matches[0].get('subagent_type')}): {len(calls)} call(s) kept"]
        if gone:
            lines[0] += f"; its {gone} oldest not kept ({_dropped_why()})"
            lines.append(f"  … {gone} older call(s), not kept")
        lines += [_call_line(c) for c in calls] or ["  none — hooks and mod off, or the ant made no call"]
        return {"spawn": ref, "calls": calls, "dropped": gone, "text": "\n".join(lines)}
    runs = data.get("runs") or []
    if not runs:
        return {"run": None, "ants": [], "text": "No run yet: nothing any ant ran."}
    run = runs[-1]
    by_ref = evidence.of_scope(run["scope"], owners(data))
    records = ledger.of_scope(data, run["scope"])
    gone = evidence.dropped([r["ref"] for r in records], owners(data))
    ants = []
    for rec in records:
        calls = by_ref.get(rec["ref"], [])
        bash = [c for c in calls if c.get("tool") == "Bash"]
        ants.append(
            {
                "spawn": rec["ref"],
                "local": rec["local"],
                "calls": len(calls),
                "dropped": gone.get(rec["ref"], 0),
                "failed": sum(1 for c in bash if c.get("exit") not in (0, None)),
                "files": sorted({str(c.get("path")) for c in calls if c.get("tool") in evidence.FILE_TOOLS}),
            }
        )
    lines = [f"Run {run['scope']} ({run.get('command')}" + (f", phase {run['phase']}" if run.get("phase") else "") + "):"]
    for a in ants:
        more = f" (+{a['dropped']} older, not kept)" if a["dropped"] else ""
        lines.append(f"  {a['local']:<10} {a['calls']:>3} call(s){more}, {a['failed']} failed, {len(a['files'])} file(s) written")
    if any(a["dropped"] for a in ants):
        lines.append(f"Older calls not kept: {_dropped_why()}; the checks read the newest.")
    latest = (run.get("verdicts") or [None])[-1]
    if latest:
        lines.append("Checks of its latest verification:")
        lines += [line(v) for v in latest["checks"]]
    lines.append("One ant's calls: aether evidence <id>")
    return {"run": run["scope"], "ants": ants, "verdicts": latest, "text": "\n".join(lines)}
