"""How the helper's cost grows with a colony's length, and what a merge-back costs on a large
repository (`make bench-scale`; a measurement, not a test).

A LIGHTWEIGHT colony of one-module phases is built through a checkout's own `bin/aether`, as the
markdown Queen drives it (planned 50 phases at a time, the most a plan holds): `next --build N`, the Phase Lead's and the builder's answers recorded
(`record`), `next --continue`. The ants are scripted; everything else is the real helper. When the
colony reaches each length in --phases, that phase's calls are timed one by one (helper time per
phase) and the read-only views (`status`, `watch`, `next` asked again) are timed --runs times; the
size of the colony's state is measured there too. A colony of a few phases is built once more
to count how many times each call writes each state file. With --against, another checkout (an older
commit, say) builds the same colony on the same machine, and the two are shown side by side.

--repo-files (default 5,000 files, ~60 MB) makes a large git repository, generated in a temp
folder and never committed here, and times what isolated builders pay there: handing out four
builders' worktrees (a STANDARD build's `next --approve`) against four plain `git worktree add`,
and merging their four results back (the four answers recorded).

    make bench-scale
    make bench-scale BENCH_ARGS='--phases 1,50,200 --against /tmp/before'
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
NOW = "2026-03-01T09:00:00Z"


class Colony:
    """A colony in a temp folder, driven by one checkout's `bin/aether`."""

    def __init__(self, checkout: Path, root: Path):
        self.launcher = str(checkout / "bin" / "aether")
        self.root = root
        self.env = {**os.environ, "AETHER_NOW": NOW, "NO_COLOR": "1"}
        self.env.pop("AETHER_DATA_DIR", None)

    def run(self, *args: str, stdin: str | None = None) -> tuple[float, dict | str]:
        """(seconds, the result or text) of `aether ARGS`; a failure stops the bench."""
        started = time.perf_counter()
        proc = subprocess.run([self.launcher, *args], input=stdin, capture_output=True, text=True, cwd=self.root, env=self.env)
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"`aether {' '.join(args)}` failed ({proc.returncode}) in {self.root}:\n{proc.stderr[-2000:]}")
        try:
            return seconds, json.loads(proc.stdout)["result"]
        except (ValueError, KeyError):
            return seconds, proc.stdout

    def hook(self, step: str, payload: dict) -> float:
        """Seconds of the Agent hook `hooks/agent.sh STEP` as Claude Code runs it."""
        started = time.perf_counter()
        proc = subprocess.run(
            ["sh", str(Path(self.launcher).parents[1] / "hooks" / "agent.sh"), step],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=self.root,
            env={**self.env, "CLAUDE_PROJECT_DIR": str(self.root)},
        )
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"hooks/agent.sh {step} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        return seconds

    def state_bytes(self) -> dict:
        aether = self.root / ".aether"
        total = sum(f.stat().st_size for f in aether.rglob("*") if f.is_file() and "worktrees" not in f.parts)
        spawns_json = aether / "data" / "spawns.json"
        briefs = sum(f.stat().st_size for f in (aether / "spawns").rglob("*") if f.is_file()) if (aether / "spawns").exists() else 0
        return {"state": total, "spawns.json": spawns_json.stat().st_size if spawns_json.exists() else 0, "briefs": briefs}


PLAN_PHASES = 50  # a plan holds at most 50 phases: a longer colony is planned again as it goes


def plan(first: int, last: int) -> dict:
    """Phases `first` … `last`, one module each."""
    return {
        "goal": "Small modules",
        "phases": [
            {
                "id": i,
                "name": f"Module {i}",
                "description": f"the module m{i}",
                "tasks": [{"id": f"{i}.1", "description": f"write mods/m{i}.py", "depends_on": [], "maps_to_criterion": False}],
                "success_criteria": [f"mods.m{i} imports"],
            }
            for i in range(first, last + 1)
        ],
    }


def block(doc: dict, prose: str = "Done.") -> str:
    return f"{prose}\n```json\n{json.dumps(doc)}\n```\n"


def answer(colony: Colony, phase: int, spawn: dict) -> str:
    """A scripted ant's answer to `spawn` of `phase`'s build."""
    local = spawn["id"]
    if local.startswith("lead"):
        worker = {"id": f"m{phase}", "caste": "builder", "tasks": [f"{phase}.1"], "writes": [f"mods/m{phase}.py"]}
        return block({"phase": phase, "workers": [worker]}, "One builder.")
    if local.startswith(("watch", "v")):
        return block(
            {"passed": True, "score": 92, "summary": "it imports", "checks": [{"name": "imports", "passed": True, "detail": "ok"}]}
        )
    (colony.root / "mods" / f"m{phase}.py").write_text(f"VALUE = {phase}\n", "utf-8")
    doc = {"status": "completed", "summary": f"mods/m{phase}.py", "files_created": [f"mods/m{phase}.py"], "files_modified": []}
    return block(doc)


def build_phase(colony: Colony, phase: int) -> list:
    """Phase `phase` built and closed; [(command, seconds)] of every helper call it took."""
    calls = []

    def call(name: str, *args: str, stdin: str | None = None):
        seconds, out = colony.run(*args, stdin=stdin)
        calls.append((name, seconds))
        return out

    def spawned(spawns: list) -> dict:
        """Each ant started (the Agent hook puts its brief in), then its answer recorded."""
        for n, spawn in enumerate(spawns):
            tool_input = {k: spawn[k] for k in ("prompt", "subagent_type", "description") if k in spawn}
            payload = {"session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": tool_input}
            calls.append(
                ("agent.sh pre", colony.hook("pre", {**payload, "tool_use_id": f"toolu_bench_{phase}_{n}", "cwd": str(colony.root)}))
            )
        for spawn in spawns:
            out = call("record", "record", spawn["id"], "-", stdin=answer(colony, phase, spawn))
        return out["next"]

    action = call("next", "next", "--build", str(phase))
    for _ in range(50):
        kind = action.get("action") if isinstance(action, dict) else None
        if kind == "spawn":
            action = spawned(action["spawns"])
        elif kind == "lessons":
            action = call("record", "record", "lessons", "-", stdin=f"- phase {phase}: one module per phase\n")["next"]
        elif kind == "ask":
            action = call("next", "next", "--build", str(phase), "--approve")
        elif kind == "done":
            break
        else:
            raise SystemExit(f"phase {phase}: the bench cannot answer {json.dumps(action)[:800]}")
    else:
        raise SystemExit(f"phase {phase}: no end after 50 actions")
    action = call("continue", "next", "--continue")
    for _ in range(20):
        kind = action.get("action") if isinstance(action, dict) else None
        if kind == "lessons":
            action = call("record", "record", "lessons", "-", stdin=f"- phase {phase}: one module per phase\n")["next"]
        elif kind == "spawn":
            action = spawned(action["spawns"])
        elif kind in ("done", "stop"):
            break
        else:
            raise SystemExit(f"phase {phase} (continue): the bench cannot answer {json.dumps(action)[:800]}")
    return calls


def views(colony: Colony, runs: int) -> dict:
    """Median seconds of the read-only views."""
    out = {}
    for name, args in (("status", ("status",)), ("watch", ("watch",)), ("next (again)", ("next",))):
        out[name] = statistics.median(colony.run(*args)[0] for _ in range(runs))
    return out


def measure(checkout: Path, lengths: list, runs: int, work: Path) -> dict:
    """{length: {phase_s, calls: {command: median s}, views, sizes}} of one checkout."""
    root = work / checkout.name
    (root / "mods").mkdir(parents=True)
    (root / "mods" / "__init__.py").write_text("", "utf-8")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    colony = Colony(checkout, root)
    longest = max(lengths)
    colony.run("colony-init", "-", "--mode", "LIGHTWEIGHT", stdin="Small modules")
    found = {}
    for phase in range(1, longest + 1):
        if phase % PLAN_PHASES == 1:  # the next plan: its phases numbered on from the last one built
            last = min(phase + PLAN_PHASES - 1, longest)
            colony.run("plan-load", "-", *(["--force"] if phase > 1 else []), stdin=json.dumps(plan(phase, last)))
        calls = build_phase(colony, phase)
        if phase in lengths:
            per = {}
            for name, seconds in calls:
                per.setdefault(name, []).append(seconds)
            found[phase] = {
                "phase_s": sum(s for _, s in calls),
                "calls": {name: statistics.median(times) for name, times in per.items()},
                "views": views(colony, runs),
                "sizes": colony.state_bytes(),
            }
            print(f"  {checkout}: phase {phase} took {found[phase]['phase_s']:.2f} s of helper time", file=sys.stderr, flush=True)
    return found


# ---------------------------------------------------------------- state files written per call

WRITE_PHASES = 3  # phases built to count the writes (the count does not grow with length)
# Started in place of the helper's Python (AETHER_VENV): counts each `os.replace` onto a state
# file (.aether/data/*.json; backups rotate inside .backups/) per call, then runs the helper.
COUNTING = """
import atexit, json, os, sys
real, seen = os.replace, {}
def counted(src, dst, *a, **kw):
    dst = os.fspath(dst)
    if "/.aether/data/" in dst and dst.endswith(".json") and "/.backups/" not in dst:
        seen[os.path.basename(dst)] = seen.get(os.path.basename(dst), 0) + 1
    return real(src, dst, *a, **kw)
os.replace = counted
atexit.register(lambda: open(os.environ["BENCH_WRITES"], "a").write(json.dumps({"argv": sys.argv[1:3], "writes": seen}) + "\\n"))
sys.argv = ["aether", *sys.argv[1:]]
from aether.startup import main
main()
"""


def writes_per_call(checkout: Path, work: Path) -> dict:
    """{command: (most writes of one state file in one call, state-file writes per call on average)}
    over a colony of WRITE_PHASES phases built as `measure` builds it."""
    shim = work / "counting-venv"
    (shim / "bin").mkdir(parents=True)
    (shim / "count.py").write_text(COUNTING, "utf-8")
    python = shim / "bin" / "python"  # bin/aether runs `python -I -c CODE ARGS`: ARGS go to the counter
    python.write_text(f'#!/bin/sh\nshift 3\nexec "{checkout}/.venv/bin/python" -I "{shim}/count.py" "$@"\n', "utf-8")
    python.chmod(0o755)
    root = work / "colony"
    (root / "mods").mkdir(parents=True)
    (root / "mods" / "__init__.py").write_text("", "utf-8")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    colony = Colony(checkout, root)
    colony.run("colony-init", "-", "--mode", "LIGHTWEIGHT", stdin="Small modules")
    colony.run("plan-load", "-", stdin=json.dumps(plan(1, WRITE_PHASES)))
    log = work / "writes.jsonl"
    colony.env.update(AETHER_VENV=str(shim), BENCH_WRITES=str(log))
    for phase in range(1, WRITE_PHASES + 1):
        build_phase(colony, phase)
    found: dict = {}
    for line in log.read_text("utf-8").splitlines():
        call = json.loads(line)
        name = {"agent-hook": "agent.sh pre", "next": "continue" if "--continue" in call["argv"] else "next"}.get(
            call["argv"][0], call["argv"][0]
        )
        found.setdefault(name, []).append(call["writes"])
    return {
        name: (max((max(w.values(), default=0) for w in calls), default=0), sum(sum(w.values()) for w in calls) / len(calls))
        for name, calls in found.items()
    }


def writes_table(results: dict) -> str:
    names = sorted({name for found in results.values() for name in found})
    rows = ["| checkout | figure | " + " | ".join(f"`{n}`" for n in names) + " |", "|" + "---|" * (len(names) + 2)]
    for label, found in results.items():
        rows.append(
            f"| {label} | most writes of one state file in a call | " + " | ".join(str(found.get(n, ("—",))[0]) for n in names) + " |"
        )
        rows.append(
            f"| {label} | state-file writes per call | " + " | ".join(f"{found[n][1]:.1f}" if n in found else "—" for n in names) + " |"
        )
    return "\n".join(rows)


# ---------------------------------------------------------------- isolated builders on a large repository

BUILDERS = 4


def large_repo(root: Path, files: int) -> None:
    """A git repository of `files` files of ~12 KiB in nested folders (generated, committed)."""
    root.mkdir(parents=True)
    line = "x = 'a line of a generated module, long enough to weigh like real code'\n"
    for i in range(files):
        folder = root / f"pkg{i // 500}" / f"sub{(i // 50) % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"# module {i}\n" + line * 160, "utf-8")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def plain_adds(root: Path) -> float:
    """Seconds of BUILDERS plain `git worktree add` (then removed): the floor of a hand-out."""
    os.sync()  # each timed step starts with nothing left to write back (a checkout is mostly writes)
    started = time.perf_counter()
    for i in range(BUILDERS):
        subprocess.run(["git", "worktree", "add", "-q", "--detach", f"../plain{i}", "HEAD"], cwd=root, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    for i in range(BUILDERS):
        subprocess.run(["git", "worktree", "remove", "--force", f"../plain{i}"], cwd=root, check=True, capture_output=True)
    os.sync()
    return seconds


def isolated_wave(checkout: Path, files: int, work: Path) -> dict:
    """{files, plain_add_s, hand_out_s, merge_s}: a STANDARD build of BUILDERS isolated builders on a
    large repository — the wave handed out (`next --approve`: the worktrees made) and merged back
    (the builders' answers recorded, each editing one file)."""
    root = work / "large"
    large_repo(root, files)
    plain = plain_adds(root)
    colony = Colony(checkout, root)
    tasks = [{"id": f"1.{i}", "description": f"pkg0/sub0/mod{i}.py", "depends_on": []} for i in range(1, BUILDERS + 1)]
    phase = {"id": 1, "name": "Edits", "description": "four edits", "tasks": tasks, "success_criteria": ["it imports"]}
    colony.run("colony-init", "-", "--mode", "STANDARD", stdin="Four edits")
    colony.run("plan-load", "-", stdin=json.dumps({"goal": "Four edits", "phases": [phase]}))
    colony.run("next", "--build", "1")
    workers = [{"id": f"e{i}", "caste": "builder", "tasks": [f"1.{i}"], "writes": [f"pkg0/sub0/mod{i}.py"]} for i in range(1, BUILDERS + 1)]
    colony.run("record", "lead1", "-", stdin=block({"phase": 1, "workers": workers}, "Four builders."))
    os.sync()
    trace = work / "hand-out.trace2.jsonl"  # git's own timings of the hand-out's git calls (GIT_TRACE2_EVENT)
    colony.env["GIT_TRACE2_EVENT"] = str(trace)
    hand_out, action = colony.run("next", "--build", "1", "--approve")
    del colony.env["GIT_TRACE2_EVENT"]
    if not isinstance(action, dict) or action.get("action") != "spawn":
        raise SystemExit(f"the wave was not handed out: {json.dumps(action)[:800]}")
    state = json.loads((root / ".aether" / "data" / "COLONY_STATE.json").read_text("utf-8"))
    nodes = state["spawn_tree"]["nodes"]
    merge = 0.0
    os.sync()
    for i, spawn in enumerate(action["spawns"], start=1):
        copy = root / (nodes[spawn["id"]].get("worktree") or ".")
        (copy / f"pkg0/sub0/mod{i}.py").write_text(f"VALUE = {i}\n", "utf-8")
        doc = {"status": "completed", "summary": "edited", "files_created": [], "files_modified": [f"pkg0/sub0/mod{i}.py"]}
        seconds, _out = colony.run("record", spawn["id"], "-", stdin=block(doc))
        merge += seconds
    merged = [
        f"pkg0/sub0/mod{i}.py" for i in range(1, BUILDERS + 1) if (root / f"pkg0/sub0/mod{i}.py").read_text("utf-8") == f"VALUE = {i}\n"
    ]
    adds = worktree_adds(trace)
    return {"files": files, "plain_add_s": plain, "hand_out_s": hand_out, "its_adds_s": adds, "merge_s": merge, "merged": len(merged)}


def worktree_adds(trace: Path) -> float:
    """Seconds the `git worktree add` processes of a trace2 event log took, as git timed them: what
    the same disk charged the hand-out for its checkouts, whatever it charged the plain adds."""
    argv, took = {}, {}
    for line in trace.read_text("utf-8").splitlines() if trace.exists() else []:
        event = json.loads(line)
        if event.get("event") == "start":
            argv[event["sid"]] = event.get("argv") or []
        elif event.get("event") == "exit":
            took[event["sid"]] = event.get("t_abs", 0.0)
    return sum(t for sid, t in took.items() if "/" not in sid and _is_add(argv.get(sid, [])))


def _is_add(args: list) -> bool:
    return any(a == "worktree" and b == "add" for a, b in zip(args, args[1:], strict=False))


def wave_table(results: dict) -> str:
    """The hand-out against plain adds, and against its own adds as git timed them: a checkout is
    mostly writes, and this disk's writeback makes the same four adds vary several-fold run to run."""
    rows = [
        "| checkout | files | 4 × plain `git worktree add` (s) | hand-out of 4 isolated builders (s) | its 4 `worktree add` (s) "
        "| ÷ its adds | ÷ plain | merging 4 back (s) | merged |"
    ]
    rows.append("|---|---|---|---|---|---|---|---|---|")
    for label, w in results.items():
        adds = w.get("its_adds_s") or float("nan")
        rows.append(
            f"| {label} | {w['files']:,} | {w['plain_add_s']:.2f} | {w['hand_out_s']:.2f} | {adds:.2f} | {w['hand_out_s'] / adds:.2f} | "
            f"{w['hand_out_s'] / w['plain_add_s']:.2f} | {w['merge_s']:.2f} | {w['merged']}/{BUILDERS} |"
        )
    return "\n".join(rows)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def _kb(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"


def table(results: dict, lengths: list) -> str:
    """Each checkout's figures at each length, and the growth from the first length to the last."""
    rows = ["| checkout | figure | " + " | ".join(f"{n} phases" for n in lengths) + f" | ×{lengths[-1]}/{lengths[0]} |"]
    rows.append("|" + "---|" * (len(lengths) + 3))
    for label, found in results.items():
        first, last = found[lengths[0]], found[lengths[-1]]
        figures = [("helper time per phase (ms)", lambda f: f["phase_s"])]
        figures += [(f"`{name}` (ms)", lambda f, n=name: f["calls"].get(n, 0.0)) for name in first["calls"]]
        figures += [(f"`{name}` (ms)", lambda f, n=name: f["views"][n]) for name in first["views"]]
        for name, get in figures:
            growth = get(last) / get(first) if get(first) else float("nan")
            rows.append(f"| {label} | {name} | " + " | ".join(_ms(get(found[n])) for n in lengths) + f" | {growth:.2f} |")
        for size in ("spawns.json", "briefs", "state"):
            rows.append(f"| {label} | {size} | " + " | ".join(_kb(found[n]["sizes"][size]) for n in lengths) + " | |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phases", default="1,50,200", help="the colony lengths measured (default 1,50,200)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each read-only view per length (median)")
    parser.add_argument("--against", type=Path, help="another checkout of Aether (installed: make install) to measure beside this one")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the colonies built (their folder is printed)")
    parser.add_argument("--repo-files", type=int, default=5000, help="files of the large repository for the isolated wave (0: skip it)")
    args = parser.parse_args(argv)
    lengths = sorted({int(n) for n in args.phases.split(",") if n.strip()})
    checkouts = {"this": HERE} | ({"against": args.against.resolve()} if args.against else {})
    work = Path(tempfile.mkdtemp(prefix="aether-bench-scale-"))
    try:
        results, waves, written = {}, {}, {}
        for label, checkout in checkouts.items():
            print(f"building a colony of {lengths[-1]} phases with {checkout} …", file=sys.stderr, flush=True)
            results[label] = measure(checkout, lengths, args.runs, work / label)
            written[label] = writes_per_call(checkout, work / label / "writes")
            if args.repo_files:
                print(f"an isolated wave on a repository of {args.repo_files:,} files with {checkout} …", file=sys.stderr, flush=True)
                waves[label] = isolated_wave(checkout, args.repo_files, work / label)
        if args.json:
            print(json.dumps({"colony": results, "writes_per_call": written, "isolated_wave": waves}, indent=2))
        else:
            print(table(results, lengths) + "\n\n" + writes_table(written) + ("\n\n" + wave_table(waves) if waves else ""))
    finally:
        if args.keep:
            print(f"the colonies are in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
