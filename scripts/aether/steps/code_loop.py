"""The code loop's helper side (docs/decisions/refinement-loops.md): after the waves, the watcher's verification is
scored (`loop-score --loop`); a score under the threshold sends the findings back to builders.

A code loop bound to a build (build-start makes one in FULL mode or with --loop; `loop-init code
--build` binds one later) answers `refine` by planning, in the spawn tree, a wave of `refine`
builders — one per worker whose files the findings name (all of them when the findings name
none), at most the wave size of the mode, each brief holding the critic's findings — and a
`verify` watcher that waits for them. Every iteration is already a checkpoint ref (loops.py);
a real commit `build iteration N: <summary>` is made only when `.aether/config.yaml` says
`code_loop: {commit_iterations: true}` (default off).

A verification whose answer holds no score (no readable result block, or score parts that cannot
be read) is never scored 0: the driven build asks a watcher again, then the person
(`readable`, `unscored_text`).
"""

from __future__ import annotations

import re

from aether.core.exceptions import AetherError, input_error
from aether.core.vocabulary import NO_CODE_ROLES
from aether.rules import contracts, modes, spawn_tree
from aether.rules import loops as loops_rules
from aether.state import checkpoints, settings
from aether.steps import checks

COMMIT_MESSAGE = "build iteration {n}: {summary}"
COMMIT_SUMMARY_LENGTH = 72
BUILDING = ("approved", "running")  # spawn tree statuses in which refinement can be planned
MAX_FILES_IN_BRIEF = 30
MAX_USER_TEXT = 2000  # characters of the user's answer quoted in a refinement brief


# ---------------------------------------------------------------- configuration


def config() -> dict:
    """`code_loop:` of .aether/config.yaml over the defaults (state/settings.py reads it)."""
    return settings.code_loop()


# ---------------------------------------------------------------- commits (opt-in)


def commit_iteration(number: int, summary: str, settings: dict | None = None) -> tuple:
    """Commit the working tree as `build iteration N: <summary>` when configured; (record, warnings).
    The colony's state folder is left out. Never commits unless `commit_iterations` is true."""

    if not (settings or config())["commit_iterations"]:
        return None, []
    try:
        r = checkpoints.repo()
    except AetherError as exc:
        return None, [f"iteration not committed: {exc.message}"]
    if r is None:
        return None, ["iteration not committed: the project is not in a git repository"]
    line = " ".join(summary.split()) or "iteration"
    if len(line) > COMMIT_SUMMARY_LENGTH:
        line = line[: COMMIT_SUMMARY_LENGTH - 1] + "…"
    message = COMMIT_MESSAGE.format(n=number, summary=line)
    env = checkpoints.git_env()
    for var in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_DATE",
    ):
        env.pop(var, None)  # the user's own identity and clock: this commit is theirs
    env.pop("GIT_OPTIONAL_LOCKS", None)
    try:
        checkpoints.git(["add", "-A", *r.pathspec()], r.top, env=env)
        checkpoints.git(["commit", "-q", "--allow-empty", "-m", message], r.top, env=env)
        sha = checkpoints.git(["rev-parse", "HEAD"], r.top, env=env).stdout.strip()
    except AetherError as exc:
        return None, [f"iteration not committed: {exc.message}"]
    return {"sha": sha, "message": message}, []


# ---------------------------------------------------------------- refinement spawns


def mentioned_paths(text: str) -> list:
    """Path-like words of a text (`src/app.py`, `app.py:12`), in order, without line numbers."""

    found = []
    for m in re.finditer(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?::\d+)?(?![\w/])", text):
        path = m.group(1).lstrip("./") if m.group(1).startswith("./") else m.group(1)
        if path not in found:
            found.append(path)
    return found


def _lineages(tree: dict) -> list:
    """[(worker id, its tasks, every file its lineage wrote or claimed)] in wave order."""

    nodes = tree["nodes"]
    order = [nid for wave in tree.get("waves", []) for nid in wave if nodes.get(nid, {}).get("role") == "worker"]
    out = []
    for wid in order:
        worker = nodes[wid]
        files: list = []
        for node in nodes.values():
            if node.get("role") in NO_CODE_ROLES + ("sub_spawn",) or spawn_tree.origin_of(tree, node) != wid:
                continue
            for path in node.get("writes", []) + node.get("files_created", []) + node.get("files_modified", []):
                if path not in files:
                    files.append(path)
        out.append((wid, list(worker["tasks"]), files))
    return out


def _findings(loop: dict, entry: dict) -> tuple:
    """(key issues, recommendations, parts below full marks, the critic's text) of an iteration."""
    critic = next((f for f in reversed(loop["feedback"]) if f["kind"] == "critic" and f.get("iteration") == entry["iteration"]), None)
    parsed = (critic or {}).get("parsed") or {}
    parts = [
        f"{name}: {p.get('reason')}"
        for name, p in (entry.get("parts") or {}).items()
        if isinstance(p, dict) and p.get("earned", 0) < p.get("weight", 0)
    ]
    return parsed.get("key_issues") or [], parsed.get("recommendations") or [], parts, (critic or {}).get("text", "")


def _refine_context(loop: dict, entry: dict, issues: list, recs: list, parts: list, files: list, user: str | None = None) -> str:
    lines = [
        "--- CODE LOOP REFINEMENT ---",
        f"Code loop {loop['id']}, iteration {entry['iteration']}: the verification scored {entry['score']:g} "
        f"(the loop needs {loop['threshold']:g}). Fix what it found; a watcher verifies again after you.",
    ]
    if user:
        lines += [
            "The user's answer (it comes first; the loop stalled without it):",
            *[f"  {line}" for line in user.strip()[:MAX_USER_TEXT].splitlines() if line.strip()],
        ]
    lines += ["Findings (the critic's key issues):"]
    lines += [f"  - {i}" for i in issues] or ["  (none listed: fix the failing parts below)"]
    if recs:
        lines.append("Recommendations:")
        lines += [f"  - {r}" for r in recs]
    if parts:
        lines.append("Score parts below full marks:")
        lines += [f"  - {p}" for p in parts]
    shown = files[:MAX_FILES_IN_BRIEF]
    lines.append(
        "Files involved: "
        + (
            ", ".join(shown) + (f" (+{len(files) - len(shown)} more)" if len(files) > len(shown) else "")
            if files
            else "(not named: look at your tasks' files)"
        )
    )
    lines += [
        "Patch the code that is there and keep what works; change a test's expectation only if your task "
        "was to write that test. Report only files you really changed.",
        "--- END CODE LOOP REFINEMENT ---",
    ]
    return "\n".join(lines)


def _verify_context(loop: dict, entry: dict, tree: dict, refine_ids: list) -> str:

    checks = modes.WATCHER_CHECKS[modes.profile(tree.get("mode"))["watcher"]]
    weights = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in loops_rules.SCORE_WEIGHTS.items())
    return "\n".join(
        [
            "--- CODE LOOP VERIFICATION ---",
            f"Verify phase {tree.get('phase')} again after refinement {entry['iteration']} of code loop {loop['id']} "
            f"(by {', '.join(refine_ids)}; the loop needs {loop['threshold']:g}).",
            "Checks of this mode: " + ", ".join(checks) + (" (launch the program and watch it run)" if "execution" in checks else "") + ".",
            f"Score each part honestly (weights: {weights}; coverage earns its points at ≥ {loops_rules.COVERAGE_TARGET}%); "
            "a part that does not apply to this project is null, never a failure.",
            "List what still fails in `findings`, with file:line.",
            "--- END CODE LOOP VERIFICATION ---",
        ]
    )


def plan_refinement(colony: dict, loop: dict, entry: dict, user: str | None = None) -> tuple:
    """Plan the refinement wave of a bound code loop's `refine` decision in the spawn tree
    (inside loop-decide's write, or feedback-store --refine's with the user's answer `user`);
    returns ({wave, spawns, verify, files}, warnings)."""

    tree = colony.get("spawn_tree")
    phase = loop.get("phase")
    if (
        not isinstance(tree, dict)
        or not isinstance(tree.get("nodes"), dict)
        or tree.get("phase") != phase
        or tree.get("status") not in BUILDING
    ):
        return None, [f"no running build of phase {phase} to refine: give the findings to builders yourself"]
    issues, recs, parts, text = _findings(loop, entry)
    # the files the user's answer names, else those of the critic's feedback
    named = mentioned_paths(user or "") or mentioned_paths("\n".join([text] + issues + recs))
    mentioned = {contracts.norm_path(p) for p in named}
    lineages = _lineages(tree)
    involved = [l for l in lineages if mentioned & set(l[2])] or lineages
    if not involved:
        return None, ["the spawn tree has no worker to refine"]
    size = max(1, tree.get("workers_per_wave") or 1)
    groups = [[l] for l in involved[: size - 1]] + ([involved[size - 1 :]] if len(involved) >= size else [])
    wave = len(tree.get("waves", [])) + 1
    spawns = []
    for group in groups:
        tasks = [t for _, ts, _ in group for t in ts]
        files = [f for _, _, fs in group for f in fs]
        shown = [f for f in files if f in mentioned] or files
        node = spawn_tree.add_node(
            tree,
            "refine",
            "builder",
            list(dict.fromkeys(tasks)),
            depth=1,
            parent=None,
            wave=wave,
            origin=group[0][0],
            writes=list(dict.fromkeys(files)),
            reads=[],
            loop=loop["id"],
            iteration=entry["iteration"],
            context=_refine_context(loop, entry, issues, recs, parts, list(dict.fromkeys(shown)), user),
        )
        spawns.append(node["id"])
    verify = spawn_tree.add_node(
        tree,
        "verify",
        "watcher",
        [],
        depth=1,
        parent=None,
        wave=wave,
        waits_for=list(spawns),
        loop=loop["id"],
        iteration=entry["iteration"],
    )
    verify["context"] = _verify_context(loop, entry, tree, spawns)
    tree.setdefault("waves", []).append(list(spawns))
    tree.setdefault("refinements", {})[str(wave)] = {
        "loop": loop["id"],
        "iteration": entry["iteration"],
        "spawns": spawns,
        "verify": verify["id"],
        "after": "user" if user else "critic",
    }
    if tree.get("status") == "approved":
        tree["status"] = "running"
    return {"wave": wave, "spawns": spawns, "verify": verify["id"], "files": sorted({f for _, _, fs in involved for f in fs})}, []


# ---------------------------------------------------------------- a verification the loop cannot score


def readable(text: str, verdict: dict | None) -> dict:
    """The watcher's answer as the code loop scores it, its `tests` part what the tests run counted
    (when the verification was judged); raises the input error that says why it holds no score."""
    answer = contracts.extract_json(text, "the watcher's answer")
    if not isinstance(answer, dict):
        raise input_error("invalid_score", "the watcher's answer must be a JSON object: the result block its brief ends with")
    if verdict is not None:
        parts = raw if isinstance(raw := answer.get("score_parts"), dict) else {}
        answer["score_parts"] = {**parts, "tests": checks.tests_part(verdict)}
    loops_rules.score(answer)  # every part readable, or the error that names the one that is not
    return answer


def refused_line(why: str) -> str:
    """What a watcher asked again is told (as the plan loop tells its critic)."""
    return f"Your last answer was refused — {why}; end this one with the result block above, `score_parts` filled."


def unscored_text(phase: int, watchers: list, why: str, verdict: dict | None) -> str:
    """The person's question when verifications in a row held no score: what happened, what the
    watchers' runs proved, and the answers that go on."""
    names = " and ".join([", ".join(watchers[:-1]), watchers[-1]] if len(watchers) > 1 else watchers)
    lines = [
        f"Phase {phase}'s code loop could not score its verification: {names} answered without a score it can read, "
        "so no builder was sent to fix anything.",
        f"The last answer: {why}",
    ]
    if verdict is not None:
        lines += ["", "What the watchers' runs proved:", *[checks.line(v) for v in verdict["checks"]]]
    lines += [
        "",
        f"Answer with /ant:build {phase} --answer <your choice, and guidance>:",
        "  refine <words> — one more watcher, told your words",
        "  accept <why>   — finish the build on what its checks proved (recorded as accepted by you)",
        "  stop <why>     — give up this build",
    ]
    return "\n".join(lines)


def accepted_report(evidence: dict | None, why: str) -> dict:
    """The watcher report a build finishes with when the person accepted a verification no answer
    scored: it passes only when the checks' runs passed."""
    return {
        "passed": bool(evidence and evidence["passed"]),
        "score": None,
        "checks": [],
        "summary": f"the watcher's answer could not be read; accepted by the user: {why} (judged by what the checks' runs proved)",
    }
