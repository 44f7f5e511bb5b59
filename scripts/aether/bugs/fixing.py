"""`bug fix` (its dry run included) and `bug rollback`: applying an APPROVED fix plan, verifying
it, and undoing it (the file operations themselves are `fixer`)."""

from __future__ import annotations

import functools
import os

from aether.bugs import approval, config, fixer, phases, pipeline, reports, runs, storage
from aether.bugs.exit_codes import BUG_EXIT_AGENT, BUG_EXIT_FAILED, BUG_EXIT_PHASE, BUG_EXIT_STORAGE, bug_error, not_found
from aether.core import clock, paths
from aether.state import atomic_files, store

MAX_TESTS_KEPT = 200  # per verification run, in the state


def _verb(op: dict) -> str:
    return {"create": "Created", "modify": "Modified", "delete": "Deleted"}[op["action"]]


def _dry_run(cfg: dict, bug_id: str) -> dict:
    state = storage.load(cfg, bug_id)
    if state["phase"] not in ("planned", "approved"):
        raise phases.refuse(state, "bug fix --dry-run", why="a dry run previews a PLANNED or APPROVED fix plan")
    ops, defects = fixer.simulate(state["fix_plan"], paths.project_root(), bug_id)
    if defects:
        raise _cannot_apply(bug_id, defects)
    lines = [f"Dry run for: {bug_id}", ""]
    changes = []
    for op in ops:
        d = fixer.diff(op)
        changes.append({"path": op["path"], "action": op["action"], "test": op["test"], "diff": d})
        verb = "Would add tests" if op["test"] else f"Would {op['action']}"
        lines += [f"{verb}: {op['path']}"] + ["  " + ln for ln in d.rstrip("\n").splitlines()] + [""]
    lines.append("No changes applied. Run without --dry-run to apply.")
    return pipeline.answer(
        state, cfg, dry_run=True, changes=changes, fix_plan_hash=approval.plan_hash(state["fix_plan"]), text="\n".join(lines)
    )


def _cannot_apply(bug_id: str, defects: list[str]):
    return bug_error(
        "implementation_failed",
        f"the fix plan of bug {bug_id} cannot be applied to the project as it is now; nothing was changed: " + "; ".join(defects[:10]),
        BUG_EXIT_FAILED,
        bug_id=bug_id,
        defects=defects,
    )


def _test_paths(state: dict, root: str, ops: list[dict]) -> list[str]:
    """The bug's own tests, which must pass: the plan's, the report's, and those that reproduced it."""
    out = [op["path"] for op in ops if op.get("test")]
    given = (state["report"].get("test_path") or "").strip()
    if given:
        file_part = given.split("::", 1)[0]
        rel, problem = fixer.resolve(root, file_part, allow_absolute=True)
        if not problem and rel is not None and os.path.isfile(fixer.join(root, rel)):
            out.append(rel + given[len(file_part) :])
    reproduced = ((state.get("reproduction") or {}).get("run") or {}).get("tests") or []
    out += [t for t in reproduced if isinstance(t, str)]
    return list(dict.fromkeys(out))


def fix(bug_id: str, dry_run: bool = False) -> dict:
    """Apply an APPROVED fix plan, run its tests, and end FIXED or BLOCKED."""

    cfg = config.load()
    storage.check_id(bug_id)
    if dry_run:
        return _dry_run(cfg, bug_id)
    root = paths.project_root()
    bdir = storage.bug_dir(cfg, bug_id)
    if not storage.exists(cfg, bug_id):
        raise not_found(bug_id)
    try:
        with atomic_files.locked([os.path.join(bdir, "fix")]):
            return _fix_locked(cfg, bug_id, root, bdir)
    except Exception as exc:
        if getattr(exc, "code", None) == "lock_timeout" and str(getattr(exc, "details", {}).get("file", "")).endswith(os.sep + "fix"):
            raise bug_error(
                "fix_in_progress", f"another `aether bug fix {bug_id}` is running; wait for it to end", BUG_EXIT_STORAGE, bug_id=bug_id
            ) from None
        raise


def _prepare_rollback(data, spec, ops):
    """Reset the rollback file to the file operations OPS, before any is applied (a crash can be undone)."""
    data.clear()
    data.update(spec.default())
    data["files"] = ops
    data["prepared_at"] = clock.iso()


def _start_fix(s, files):
    """Move an APPROVED bug to IMPLEMENTING, naming the plan's approval and FILES."""
    if s["phase"] != "approved":
        raise phases.refuse(s, "bug fix")
    phases.move(
        s,
        "implementing",
        "user_command",
        "bug fix",
        approved_by=s["approval_record"]["approved_by"],
        fix_plan_hash=s["approval_record"]["fix_plan_hash"],
        files=files,
    )


def _note_resumed(s):
    """Note that `bug fix` picked up an interrupted implementation."""
    s["notes"].append(f"{clock.iso()} bug fix resumed an interrupted implementation")


def _note_failed(s, message):
    """Record an implementation that could not be applied (MESSAGE says why)."""
    s["implementation"] = {
        "success": False,
        "files_changed": [],
        "tests_passed": 0,
        "tests_failed": 0,
        "commit_hash": None,
        "error": message,
    }


def _mark_applied(data, created_dirs):
    """Stamp the rollback file applied, with the folders the fix created (a rollback removes them)."""
    data["created_dirs"] = created_dirs
    data["applied_at"] = clock.iso()


def _start_verifying(s, files, baseline):
    """Move the bug to VERIFYING with a pending implementation of FILES and the suite's BASELINE run."""
    s["implementation"] = {
        "success": None,
        "files_changed": files,
        "tests_passed": 0,
        "tests_failed": 0,
        "commit_hash": None,
        "error": None,
        "baseline": runs.kept(baseline),
    }
    phases.move(s, "verifying", "auto", "bug fix", files=files)


def _finish_fix(s, verdict, files, rollback_cmd, git_cmd):
    """Record the verification VERDICT and end the bug FIXED, or BLOCKED with the reason."""
    impl = {
        "success": verdict["reason"] is None,
        "files_changed": files,
        "tests_passed": verdict["tests_passed"],
        "tests_failed": verdict["tests_failed"],
        "commit_hash": None,
        "error": verdict["reason"],
        "test_command": verdict["command"],
        "exit_code": verdict["exit_code"],
        "timed_out": verdict["timed_out"],
        "tests": verdict["tests"][:MAX_TESTS_KEPT],
        "output_tail": verdict["output_tail"],
        "rollback": rollback_cmd,
        "git_rollback": git_cmd,
        "verified_at": clock.iso(),
        **{k: verdict[k] for k in runs.SUITE_FIELDS},
    }
    s["implementation"] = impl
    if verdict["reason"] is None:
        s["blocked_reason"] = None
        phases.move(s, "fixed", "auto", "bug fix", tests_passed=verdict["tests_passed"], tests_failed=0)
    else:
        s["blocked_reason"] = verdict["reason"]
        phases.move(
            s,
            "blocked",
            "auto",
            "bug fix",
            reason=verdict["reason"],
            tests_passed=verdict["tests_passed"],
            tests_failed=verdict["tests_failed"],
            broken_tests=verdict["broken_tests"],
        )


def _fix_locked(cfg: dict, bug_id: str, root: str, bdir: str) -> dict:

    state = storage.load(cfg, bug_id)
    phase = state["phase"]
    if phase == "planned":
        raise bug_error(
            "approval_required",
            f"Bug must be APPROVED before implementation. Current phase: PLANNED. Type in Claude Code: /ant:bug approve {bug_id}",
            BUG_EXIT_PHASE,
            bug_id=bug_id,
            phase="PLANNED",
            legal=phases.legal_commands("planned", bug_id),
        )
    if phase not in ("approved", "implementing", "verifying"):
        raise phases.refuse(state, "bug fix")
    approval.gate(state, storage.audit_path(cfg))
    rollback_path = os.path.join(bdir, storage.ROLLBACK_FILE)
    rspec = storage.rollback_spec(bug_id)
    lines = [f"Implementing fix for: {bug_id}", ""]

    if phase in ("approved", "implementing"):
        if phase == "implementing" and os.path.exists(rollback_path):
            snapshot = store.read_file(rollback_path, rspec)
            if not snapshot.get("rolled_back_at"):
                fixer.revert_partial(snapshot, root)
        ops, defects = fixer.simulate(state["fix_plan"], root, bug_id)
        if defects:
            raise _cannot_apply(bug_id, defects)
        files = [op["path"] for op in ops]
        baseline: dict | None = runs.suite(root, bdir, cfg, "before")  # the whole suite before anything is applied

        store.update_file(rollback_path, rspec, functools.partial(_prepare_rollback, spec=rspec, ops=ops))
        if phase == "approved":
            storage.update(cfg, bug_id, functools.partial(_start_fix, files=files))
        else:
            storage.update(cfg, bug_id, _note_resumed)
        try:
            created_dirs = fixer.apply(ops, root)
        except Exception as exc:
            message = getattr(exc, "message", str(exc))
            storage.update(cfg, bug_id, functools.partial(_note_failed, message=message))
            raise

        store.update_file(rollback_path, rspec, functools.partial(_mark_applied, created_dirs=created_dirs))
        storage.update(cfg, bug_id, functools.partial(_start_verifying, files=files, baseline=baseline))
    else:
        snapshot = store.read_file(rollback_path, rspec)
        ops = snapshot["files"]
        files = [op["path"] for op in ops]
        baseline = (state.get("implementation") or {}).get("baseline")
        lines.append("(re-running the verification of the applied fix)")

    code_ops = [op for op in ops if not op.get("test")]
    test_ops = [op for op in ops if op.get("test")]
    if code_ops:
        lines.append("Applying changes...")
        lines += [f"  ✓ {_verb(op)}: {op['path']}" for op in code_ops]
        lines.append("")
    if test_ops:
        lines.append("Writing test cases...")
        lines += [f"  ✓ Added: {op['path']}" for op in test_ops]
        lines.append("")

    test_paths = _test_paths(state, root, ops)
    verdict = runs.judge_fix(fixer.verify(root, bdir, cfg, test_paths), baseline, runs.suite(root, bdir, cfg, "after"), test_paths)
    rollback_cmd = f"aether bug rollback {bug_id}"
    git_cmd = fixer.git_rollback(ops)

    storage.update(cfg, bug_id, functools.partial(_finish_fix, verdict=verdict, files=files, rollback_cmd=rollback_cmd, git_cmd=git_cmd))
    state = storage.load(cfg, bug_id)

    lines.append("Running verification...")
    for t in verdict["tests"]:
        mark = {"passed": "✓", "failed": "✗", "skipped": "-"}[t["outcome"]]
        lines.append(f"  {mark} {t['name']} {t['outcome'].upper()}")
        if t["outcome"] == "failed" and t["message"]:
            lines.append(f"    {t['message']}")
    if not verdict["tests"] and verdict["command"]:
        lines.append(f"  ran: {' '.join(verdict['command'])} (exit {verdict['exit_code']})")
    lines += ["", *runs.suite_lines(verdict), ""]
    if verdict["reason"] is None:
        passed = "All tests passed!" if not verdict["already_failing"] else "The bug's tests pass; nothing that passed before fails."
        lines += [passed, "", "✓ Bug fixed!"]
        return pipeline.answer(state, cfg, implementation=state["implementation"], text="\n".join(lines))
    n = verdict["tests_failed"]
    lines += [
        f"{n} test{'s' if n != 1 else ''} failed." if not verdict["timed_out"] else "The tests timed out.",
        "",
        "Bug marked as BLOCKED.",
        f"Reason: {verdict['reason']}",
        "",
        "Changes have been applied. To rollback:",
        f"  {rollback_cmd}",
    ]
    if git_cmd:
        lines.append(f"  (or: {git_cmd})")
    lines += ["", f"To investigate again: aether bug analyze {bug_id} --retry"]
    if verdict["broken_tests"]:
        lines.append(runs.BROKEN_ADVICE)
    raise bug_error(
        "verification_failed",
        f"bug {bug_id} is BLOCKED: {verdict['reason']}. The changes are applied; roll them back "
        f"with `{rollback_cmd}`, or investigate again with `aether bug analyze {bug_id} --retry`",
        BUG_EXIT_AGENT,
        bug_id=bug_id,
        phase="BLOCKED",
        reason=verdict["reason"],
        rollback=rollback_cmd,
        git_rollback=git_cmd,
        tests_passed=verdict["tests_passed"],
        tests_failed=verdict["tests_failed"],
        broken_tests=verdict["broken_tests"],
        already_failing=verdict["already_failing"],
        text="\n".join(lines),
    )


def _mark_rolled_back(data):
    """Stamp the rollback file rolled back (the same fix is not undone twice)."""
    data["rolled_back_at"] = clock.iso()


def _note_rolled_back(s, restored):
    """Note the files a rollback RESTORED."""
    s["notes"].append(f"{clock.iso()} rolled back: {', '.join(restored)}")


def rollback(bug_id: str, force: bool = False) -> dict:
    """Put back the files the last fix changed, unless the bug is FIXED (e.g. BLOCKED, an
    interrupted fix, or a retried bug whose failed fix is still applied)."""

    cfg = config.load()
    storage.check_id(bug_id)
    state = storage.load(cfg, bug_id)
    bdir = storage.bug_dir(cfg, bug_id)
    path = os.path.join(bdir, storage.ROLLBACK_FILE)
    rspec = storage.rollback_spec(bug_id)
    with atomic_files.locked([os.path.join(bdir, "fix")]):
        state = storage.load(cfg, bug_id)
        if state["phase"] == "fixed":
            raise phases.refuse(state, "bug rollback", why="a FIXED bug keeps its fix (undo it with your version control)")
        snapshot = store.read_file(path, rspec) if os.path.exists(path) else None
        if not snapshot or not snapshot.get("applied_at") or snapshot.get("rolled_back_at"):
            raise bug_error("nothing_to_roll_back", f"bug {bug_id} has no applied fix to roll back", BUG_EXIT_PHASE, bug_id=bug_id)
        result = fixer.undo(snapshot, paths.project_root(), force=force)

        store.update_file(path, rspec, _mark_rolled_back)
        storage.update(cfg, bug_id, functools.partial(_note_rolled_back, restored=result["restored"]))
    state = storage.load(cfg, bug_id)
    text = "\n".join(
        [f"Rolled back the fix of bug {bug_id}:"]
        + [f"  ✓ Restored: {p}" for p in result["restored"]]
        + reports.next_steps([(c, "") for c in phases.legal_commands(state["phase"], bug_id) if "rollback" not in c])
    )
    return pipeline.answer(state, cfg, text=text, **result)
