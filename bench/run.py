#!/usr/bin/env python3
"""How fast is the helper? Wall time of each subcommand through the real launcher (`bin/aether`).

Every call of `aether` is a fresh process, so start-up is the helper's speed. For each row this
runs the command RUNS times (default 30) in a fresh fixture project, interleaving the rows so
that the machine's noise hits every row alike, beside baselines of the same interpreter:
`python -c pass`, `python -c "import click"` and `python -c "import click, filelock"`. It
prints one table (median, p90, target, within target?) and, for rows over target, what they
import (`python -X importtime`).

Targets: a single-record command ≤ 40 ms median, every write ≤ 60 ms, `pheromone-batch`
over 1,000 signals ≤ 60 ms, `plan-waves` on a 200-task plan and `failure-decide` on a
1,000-entry history ≤ 60 ms (both write). For reference, the original bash+jq helper took ~17 ms for
`pheromone-decay`/`spawn-check`, 44 ms for `pheromone-batch` over 1,000 signals and
120–150 ms per write.

    make bench                                # or: .venv/bin/python bench/run.py
    .venv/bin/python bench/run.py --runs 50 --only pheromone
    .venv/bin/python bench/run.py --against ../aether-old   # side by side with another checkout

`--against DIR` times DIR's own `bin/aether` (with DIR/.venv) on the same fixtures in the same
interleaved run, adds a `before` column, and compares `python -X importtime` totals of a read
(`status`) and a write (`spawn-start`) for both.

A measurement, not a test: it never fails the build. Commands that are not registered, have
no row here, or fail in the fixture are listed as skipped with the reason.

Adding a row: append a `Row(...)` to ROWS. A row that needs special data names a fixture;
FIXTURES maps fixture names to builders; HOOKS holds builders for rows with big inputs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCHER = os.path.join(REPO, "bin", "aether")
VENV_PY = os.path.join(REPO, ".venv", "bin", "python")

ENTRY = "from aether.startup import main; main()"  # what bin/aether runs
READ_TARGET_MS = 40  # one record in, one answer out
WRITE_TARGET_MS = 60  # lock, read, change, validate, atomic replace, backups
BATCH_TARGET_MS = 60  # pheromone-batch over 1,000 signals
DEFAULT_RUNS = 30

# Modules worth naming when a row is slow (each costs milliseconds at start-up).
HEAVY = (
    "click",
    "filelock",
    "jmespath",
    "yaml",
    "re",
    "datetime",
    "typing",
    "pathlib",
    "subprocess",
    "hashlib",
    "dataclasses",
    "inspect",
    "logging",
    "shutil",
    "difflib",
    "unicodedata",
    "tempfile",
    "uuid",
    "platform",
)


class Skip(Exception):
    """A row that cannot run here, with the reason to print."""


class Row:
    """One line of the table: a command line run in a fixture project."""

    def __init__(self, name, argv, target=READ_TARGET_MS, *, stdin=None, fixture="colony", write=False, command=None):
        self.name = name
        self.argv = argv  # arguments after `aether`, or a callable(project) -> (argv, stdin)
        self.stdin = stdin
        self.target = target
        self.fixture = fixture
        self.write = write  # writes get a private copy of the fixture
        self.command = command or (argv[0] if isinstance(argv, list) else name.split()[0])
        self.times: list[float] = []
        self.before: list[float] = []  # --against: the other checkout's times
        self.skip: str | None = None
        self.project: Project | None = None


GOAL = "Build a small REST API for a todo list with tests"
LONG_TEXT = "avoid global mutable state; pass dependencies explicitly"

ROWS = [
    # ---- single-record reads and computations (≤ 40 ms)
    Row("version", ["version"]),
    Row("pheromone-decay", ["pheromone-decay", "1", "1800", "3600"]),
    Row("pheromone-effective", ["pheromone-effective", "0.9", "0.7"]),
    Row("pheromone-validate", ["pheromone-validate", LONG_TEXT]),
    Row("pheromone-validate (stdin)", ["pheromone-validate", "-"], stdin=LONG_TEXT),
    Row("pheromone-batch", ["pheromone-batch"]),
    Row("pheromone-render", ["pheromone-render", "--caste", "builder"]),
    Row("spawn-check", ["spawn-check", "1"]),
    Row("validate-state all", ["validate-state", "all"]),
    Row("query", ["query", "length(signals)", "--file", "pheromones"]),
    Row("error-pattern-check", ["error-pattern-check"]),
    Row("error-summary", ["error-summary"]),
    Row("activity-log-read", ["activity-log-read"]),
    Row("learning-load", ["learning-load"]),
    Row("learning-inject", ["learning-inject", "performance,security"]),
    Row("status", ["status"]),
    Row("phase list", ["phase", "list"]),
    Row("complexity-detect", ["complexity-detect"]),
    Row("help", ["help"]),
    Row("mode-profile", ["mode-profile"]),
    Row("signals-suggest", ["signals-suggest"]),
    Row("friction-summary", ["friction-summary"]),
    Row("checkpoint-list", ["checkpoint-list"]),
    Row("hygiene-check", ["hygiene-check"]),
    Row("completion-summary", ["completion-summary"]),
    # ---- 1,000 signals (≤ 60 ms)
    Row("pheromone-batch (1,000 signals)", ["pheromone-batch"], BATCH_TARGET_MS, fixture="signals1000"),
    # ---- writes (≤ 60 ms)
    Row("pheromone-emit", ["pheromone-emit", "FOCUS", LONG_TEXT], WRITE_TARGET_MS, write=True),
    Row("pheromone-emit (stdin)", ["pheromone-emit", "REDIRECT", "-"], WRITE_TARGET_MS, stdin=LONG_TEXT, write=True),
    Row("pheromone-cleanup", ["pheromone-cleanup"], WRITE_TARGET_MS, write=True),
    Row("event-add", ["event-add", "bench_event", "bench", LONG_TEXT], WRITE_TARGET_MS, write=True),
    Row("error-add", ["error-add", "runtime", "high", "a bench error", "1"], WRITE_TARGET_MS, write=True),
    Row("activity-log", ["activity-log", "BUILD", "builder", "a bench line"], WRITE_TARGET_MS, write=True),
    Row("decision-add", ["decision-add", "use SQLite for the bench"], WRITE_TARGET_MS, write=True),
    Row("learning-add", ["learning-add", "1", "--append", "a bench learning"], WRITE_TARGET_MS, write=True),
    Row("memory-compress", ["memory-compress"], WRITE_TARGET_MS, write=True),
    Row("learning-promote", ["learning-promote", "bcrypt 12 rounds is slow; use 10", "proj-bench", "1"], WRITE_TARGET_MS, write=True),
    Row("learning-init-global", ["learning-init-global"], WRITE_TARGET_MS, write=True),
    Row("colony-init --force", ["colony-init", "--force", GOAL], WRITE_TARGET_MS, write=True),
    Row("state-restore --force", ["state-restore", "--force", "pheromones"], WRITE_TARGET_MS, write=True),
    Row("colony-pause", ["colony-pause"], WRITE_TARGET_MS, write=True),
    # ---- Hooks: rows whose fixtures another change provides (see FIXTURES below)
    Row("plan-waves (200-task plan)", lambda p: p.hook("plan200"), WRITE_TARGET_MS, fixture="colony", command="plan-waves", write=True),
    Row(
        "failure-decide (1,000-entry history)",
        lambda p: p.hook("history1000"),
        WRITE_TARGET_MS,
        fixture="colony",
        command="failure-decide",
        write=True,
    ),
]

# Commands that one fixture cannot repeat 30 times: they move the colony's state machine
# (each would need a reset between runs), or they run other programs.
NOT_REPEATABLE = {
    "plan-start": "moves the colony to PLANNING",
    "plan-load": "needs the colony in PLANNING each time",
    "build-start": "moves the colony to EXECUTING",
    "build-finish": "needs a build in progress",
    "build-abort": "needs a build in progress",
    "phase-advance": "needs a completed phase",
    "activity-log-init": "archives the log each time",
    "spawn-start": "needs a build in progress",
    "spawn-finish": "needs a running spawn",
    "bug": "a command group with its own pipeline",
}


# ---------------------------------------------------------------- fixture projects


class Project:
    """A throwaway project folder and home, and the environment that points at them."""

    def __init__(self, base: str):
        self.base = base
        self.root = os.path.join(base, "proj")
        self.home = os.path.join(base, "home")
        self.hooks: dict = {}

    @property
    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("AETHER_DATA_DIR", "AETHER_NOW", "AETHER_PRETTY", "AETHER_DEBUG")}
        env.update(HOME=self.home, AETHER_HOME=os.path.join(self.home, ".aether"))
        return env

    def run(self, argv, stdin=None):
        return subprocess.run(
            [LAUNCHER, *argv], cwd=self.root, env=self.env, capture_output=True, input=stdin.encode() if isinstance(stdin, str) else stdin
        )

    def setup(self, argv, stdin=None) -> bool:
        return self.run(argv, stdin).returncode == 0

    def copy(self, base: str) -> Project:
        shutil.copytree(self.base, base, symlinks=True)
        twin = Project(base)
        twin.hooks = self.hooks
        return twin

    def hook(self, name):
        builder = HOOKS.get(name)
        if builder is None:
            raise Skip(f"fixture `{name}` not written yet (add a builder to HOOKS in bench/run.py)")
        return builder(self)


def _new_project(base: str) -> Project:
    project = Project(base)
    os.makedirs(os.path.join(project.root, ".aether"))
    os.makedirs(project.home)
    return project


SMALL_PLAN = {
    "goal": GOAL,
    "phases": [
        {
            "id": n,
            "name": f"Phase {n}",
            "description": f"phase {n} of the bench plan",
            "tasks": [{"id": f"{n}.{t}", "description": f"task {t} of phase {n}", "depends_on": []} for t in (1, 2, 3)],
            "success_criteria": [f"phase {n} works"],
        }
        for n in (1, 2, 3)
    ],
}


def fixture_colony(base: str) -> Project:
    """A colony with a plan, a few signals, events, errors, decisions and learnings."""
    p = _new_project(base)
    p.setup(["colony-init", GOAL])
    p.setup(["plan-start"])
    p.setup(["plan-load", "-"], json.dumps(SMALL_PLAN))
    for n in range(5):
        p.setup(["pheromone-emit", "FOCUS", f"bench focus signal number {n}, long enough"])
        p.setup(["event-add", "bench_event", "bench", f"bench event {n}"])
        p.setup(["error-add", "runtime", "medium", f"bench error {n}", "1"])
        p.setup(["activity-log", "BUILD", "builder", f"bench line {n}"])
        p.setup(["learning-promote", f"bench lesson {n} about performance", "proj-bench", "1", "--category", "performance"])
    p.setup(["decision-add", "use SQLite"])
    p.setup(["learning-add", "1", "a first learning"])
    return p


def fixture_signals1000(base: str) -> Project:
    """1,000 signals of every type and age."""
    p = _new_project(base)
    start = time.time() - 3 * 86400
    kinds = (("FOCUS", 0.7, 3600), ("REDIRECT", 0.9, 86400), ("FEEDBACK", 0.5, 21600), ("INIT", 1.0, None))
    signals = []
    for n in range(1000):
        kind, strength, half_life = kinds[n % 4]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + n * 250))
        signals.append(
            {
                "id": f"{kind.lower()}_{int(start) + n}_{n:04x}",
                "type": kind,
                "content": f"bench signal {n}: {LONG_TEXT}",
                "strength": strength,
                "half_life_seconds": half_life,
                "created_at": stamp,
                "source": "user",
                "auto": False,
            }
        )
    data_dir = os.path.join(p.root, ".aether", "data")
    os.makedirs(data_dir)
    with open(os.path.join(data_dir, "pheromones.json"), "w", encoding="utf-8") as fh:
        json.dump({"version": 1, "signals": signals}, fh)
    return p


FIXTURES = {"colony": fixture_colony, "signals1000": fixture_signals1000}

# ---- Hooks: builders for rows that need big inputs. A builder takes the fixture Project,
# prepares what it needs in it and returns (argv, stdin); a row whose hook is missing is listed
# as skipped. bench/orchestration_fixtures.py provides:
#   "plan200":     `plan-waves` on a Phase Lead plan of 200 tasks (stdin JSON)
#   "history1000": `failure-decide` on a phase with 1,000 entries of failure history
HOOKS: dict = {}

from orchestration_fixtures import HOOKS as ORCHESTRATION_HOOKS  # noqa: E402 (bench/ is on sys.path)

HOOKS.update(ORCHESTRATION_HOOKS)


# ---------------------------------------------------------------- measuring


def _registered() -> set:
    out = subprocess.run(
        [VENV_PY, "-I", "-c", "from aether.cli import COMMANDS; print('\\n'.join(COMMANDS))"], capture_output=True, text=True
    )
    return set(out.stdout.split())


def _why_failed(proc) -> str:
    try:
        env = json.loads(proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1])
        return f"fails here: {env.get('code')}: {str(env.get('error'))[:90]}"
    except (ValueError, IndexError):
        return f"fails here: exit {proc.returncode}"


def _time_once(argv, stdin, cwd, env) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True)
    return (time.perf_counter() - start) * 1000, proc


def _prepare(rows, registered, workdir):
    fixtures: dict = {}
    for row in rows:
        if row.command not in registered:
            row.skip = "not a registered command"
            continue
        try:
            if row.fixture not in fixtures:
                fixtures[row.fixture] = FIXTURES[row.fixture](os.path.join(workdir, row.fixture))
            project = fixtures[row.fixture]
            if row.write:
                project = project.copy(os.path.join(workdir, f"w{rows.index(row):02d}"))
            if callable(row.argv):
                row.argv, row.stdin = row.argv(project)
        except Skip as why:
            row.skip = str(why)
            continue
        row.project = project
        if isinstance(row.stdin, str):
            row.stdin = row.stdin.encode("utf-8")
        proc = project.run(row.argv, row.stdin)
        if proc.returncode != 0:
            row.skip = _why_failed(proc)


def _importtime(row) -> tuple[dict, dict]:
    """What the row's process imports: ({top-level module: ms}, {heavy module: ms}), cumulative."""
    proc = subprocess.run(
        [VENV_PY, "-X", "importtime", "-I", "-c", ENTRY, *row.argv],
        cwd=row.project.root,
        env=row.project.env,
        input=row.stdin,
        capture_output=True,
    )
    top, heavy = {}, {}
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        _, cumulative, name = line.split("|")
        try:
            ms = int(cumulative.strip()) / 1000
        except ValueError:
            continue
        module = name.rstrip()
        depth = (len(module) - len(module.lstrip(" "))) // 2
        module = module.strip()
        if depth == 0 and module.startswith("aether"):
            top[module] = ms
        root = module.split(".")[0]
        if root in HEAVY:
            heavy[root] = max(heavy.get(root, 0), ms)
    return top, heavy


def _fmt(costs: dict) -> str:
    return ", ".join(f"{m} {ms:.1f} ms" for m, ms in sorted(costs.items(), key=lambda kv: -kv[1]))


def advise(over) -> None:
    """Name what the slow rows import: what they all share once, then each row's extras."""
    profiles = {row.name: _importtime(row) for row in over}
    shared = set.intersection(*(set(heavy) for _, heavy in profiles.values()))
    print("\nOver target — what those processes import (python -X importtime, cumulative):")
    if shared:
        typical = {m: statistics.median(heavy[m] for _, heavy in profiles.values()) for m in shared}
        print(f"  every one of them: {_fmt(typical)}")
    for row in over:
        top, heavy = profiles[row.name]
        extra = {m: ms for m, ms in heavy.items() if m not in shared}
        line = f"  {row.name}: {_fmt(top) or '-'}"
        if extra:
            line += f"; beyond the shared ones: {_fmt(extra)}"
        print(line)
    print(
        "  Start-up is the cost: no row can beat the `import click` baseline above (python's "
        "own start plus click). Import anything heavier inside the function that needs it, "
        "and keep modules a command does not use off its path."
    )


def _p90(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="runs per row (default 30)")
    parser.add_argument("--only", default="", help="only rows whose name contains this text")
    parser.add_argument("--no-advice", action="store_true", help="skip the importtime advice")
    parser.add_argument("--against", metavar="DIR", help="another checkout (with its .venv) to time side by side, e.g. the last release")
    args = parser.parse_args(argv)
    other = None
    if args.against:
        other = os.path.abspath(args.against)
        if not os.access(os.path.join(other, ".venv", "bin", "python"), os.X_OK):
            print(f"bench: no venv at {other}/.venv; run `make install` there first", file=sys.stderr)
            return 2
    if not os.access(VENV_PY, os.X_OK):
        print("bench: no venv at .venv; run `make install` first", file=sys.stderr)
        return 2

    registered = _registered()
    rows = [row for row in ROWS if args.only in row.name]
    # Python's own start, plus click (every command), plus filelock (every write).
    baselines = [
        Row("python -c pass", None, None, command="-"),
        Row("python -c 'import click'", None, None, command="-"),
        Row("python -c 'import click, filelock'", None, None, command="-"),
    ]
    base_argv = {row.name: [VENV_PY, "-I", "-c", code] for row, code in zip(baselines, ("pass", "import click", "import click, filelock"))}

    with tempfile.TemporaryDirectory(prefix="aether-bench-") as workdir:
        print(f"preparing fixtures in {workdir} …", file=sys.stderr)
        _prepare(rows, registered, workdir)
        live = [row for row in rows if row.skip is None]
        jobs = [(b, base_argv[b.name], None, workdir, None) for b in baselines]
        jobs += [(r, [LAUNCHER, *r.argv], r.stdin, r.project.root, r.project.env) for r in live]
        if other:
            jobs += [(_Before(r), [os.path.join(other, "bin", "aether"), *r.argv], r.stdin, r.project.root, r.project.env) for r in live]
        rng = random.Random(7)
        print(f"measuring {len(jobs)} rows × {args.runs} runs, interleaved …", file=sys.stderr)
        for _ in range(args.runs):
            rng.shuffle(jobs)
            for row, cmd, stdin, cwd, env in jobs:
                ms, proc = _time_once(cmd, stdin, cwd, env)
                if proc.returncode != 0 and row.skip is None:
                    row.skip = "failed on a repeat run: " + _why_failed(proc)
                row.times.append(ms)
        report(baselines, rows, registered, args)
        if other:
            import_totals(other, workdir)
    return 0


class _Before:
    """A row's twin for --against: its times go to the row's `before` list."""

    def __init__(self, row):
        self.row, self.skip = row, None

    @property
    def times(self):
        return self.row.before


def _import_total(python: str, argv, cwd, env, stdin=None) -> float:
    """Milliseconds `python -X importtime` reports for everything a command imports."""
    proc = subprocess.run([python, "-X", "importtime", "-I", "-c", ENTRY, *argv], cwd=cwd, env=env, input=stdin, capture_output=True)
    total = 0
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        parts = line.split("|")
        if (
            line.startswith("import time:")
            and len(parts) == 3
            and parts[2].startswith(" ")
            and not parts[2].startswith("  ")
            and parts[1].strip().isdigit()
        ):
            total += int(parts[1].strip())  # top-level imports: their cumulative time
    return total / 1000


def import_totals(other: str, workdir: str, runs: int = 9) -> None:
    """`python -X importtime` totals (median of `runs`) for `status` and `spawn-start`, both checkouts."""
    from orchestration_fixtures import _building  # the bench's own fixture builder

    print(f"\nImport time (python -X importtime, all top-level imports, median of {runs}):\n{'command':<14} {'this':>9} {'before':>9}")
    pythons = {"this": VENV_PY, "before": os.path.join(other, ".venv", "bin", "python")}
    status_project = FIXTURES["colony"](os.path.join(workdir, "imports-status"))
    rows = [("status", lambda _which: (status_project, ["status", "--json"]))]

    def spawn_start(which):
        project = _new_project(os.path.join(workdir, f"imports-spawn-{which}"))
        _building(project, 8, "LIGHTWEIGHT")
        plan = {"phase": 1, "workers": [{"id": "a", "caste": "builder", "tasks": [f"1.{t}" for t in range(1, 9)], "writes": ["src/a.py"]}]}
        project.setup(["plan-waves", "-"], json.dumps(plan))
        return project, ["spawn-start", "w1", "--json"]

    rows.append(("spawn-start", spawn_start))
    for name, make in rows:
        cells = []
        for which, python in pythons.items():
            times = []
            for n in range(runs):
                project, argv = make(f"{which}{n}")  # spawn-start changes its fixture: a new one each run
                times.append(_import_total(python, argv, project.root, project.env))
            cells.append(f"{statistics.median(times):>7.1f}ms")
        print(f"{name:<14} {cells[0]:>9} {cells[1]:>9}")


def report(baselines, rows, registered, args) -> None:
    width = max(len(r.name) for r in baselines + rows) + 2
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nAether helper latency — median of {args.runs} runs per row, interleaved "
        f"(python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load})\n"
    )
    side = bool(getattr(args, "against", None))
    head = f" {'before':>8}" if side else ""
    print(f"{'row':<{width}} {'median':>8}{head} {'p90':>8} {'target':>8}  within")
    print("-" * (width + 37 + len(head)))
    for row in baselines:
        print(f"{row.name:<{width}} {statistics.median(row.times):>6.1f}ms{' ' * len(head)} {_p90(row.times):>6.1f}ms {'':>8}  (baseline)")
    over = []
    for row in rows:
        if row.skip:
            continue
        median = statistics.median(row.times)
        ok = median <= row.target
        if not ok:
            over.append(row)
        before = f" {statistics.median(row.before):>6.1f}ms" if side and row.before else (" " * len(head))
        print(f"{row.name:<{width}} {median:>6.1f}ms{before} {_p90(row.times):>6.1f}ms {row.target:>6}ms  {'yes' if ok else 'NO'}")
    measured = [r for r in rows if not r.skip]
    print(f"\n{sum(1 for r in measured if r not in over)} of {len(measured)} rows within target.")
    print("bash+jq reference: ~17 ms pheromone-decay/spawn-check, 44 ms pheromone-batch over 1,000 signals, 120–150 ms per write.")

    skipped = [r for r in rows if r.skip]
    covered = {r.command for r in ROWS}
    unmeasured = [] if args.only else sorted(registered - covered)
    if skipped or unmeasured:
        print("\nSkipped:")
        for row in skipped:
            print(f"  {row.name}: {row.skip}")
        for name in unmeasured:
            print(f"  {name}: {NOT_REPEATABLE.get(name, 'no bench row yet (add one to ROWS in bench/run.py)')}")

    if over and not args.no_advice:
        advise(over)


if __name__ == "__main__":
    sys.exit(main())
