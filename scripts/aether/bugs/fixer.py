"""Applying a fix plan to the project, safely and deterministically, and verifying it.

- Paths: relative to the project root, no `..`, no absolute paths, nothing under `.git/` or
  `.aether/`, no symbolic link as the target, and the real path must stay inside the project.
- `modify` replaces `current_code` only when it occurs exactly once; `create` never
  overwrites; `delete` needs the file. The plan is first played on copies in memory
  (`simulate`); only a plan that plays cleanly is written.
- Writes are atomic per file; if one fails, every file already written is put back.
- The plan's tests go to `tests/test_bug_<id>.py` and run with the project's interpreter
  (`.venv/bin/python`, `venv/bin/python`, `$VIRTUAL_ENV`, then `python3` on PATH — never the
  helper's own environment) or with `bug_bash.test_command`.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys

from aether.bugs.exit_codes import BUG_EXIT_FAILED, bug_error
from aether.core import containment, paths
from aether.core.exceptions import AetherError
from aether.state import atomic_files

PROTECTED_DIRS = (".git", ".aether")
TESTS_DIR = "tests"
TEST_MARKER = "# aether bug {id}: regression tests"
OUTPUT_TAIL = 4000  # characters of test output kept in the state
TEST_ENV_DROP = ("PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS", "PYTHONHOME")


# ---------------------------------------------------------------- paths


def join(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve(root: str, path: str, *, allow_absolute: bool = False) -> tuple[str | None, str | None]:
    """(project-relative path with `/`, None) or (None, why the path is refused)."""
    return containment.project_path(
        path, root=root, protected=PROTECTED_DIRS, allow_absolute=allow_absolute, protected_why="which a bug fix never touches"
    )


def read_text(full: str) -> str | None:
    """A file's text exactly as stored (no newline translation); None if not UTF-8."""
    with open(full, "rb") as fh:
        raw = fh.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def occurrences(text: str, needle: str) -> int:
    """How many times needle occurs in text, overlaps included."""
    count, start = 0, 0
    while True:
        at = text.find(needle, start)
        if at < 0:
            return count
        count += 1
        start = at + 1


def test_file(bug_id: str) -> str:
    return f"{TESTS_DIR}/test_bug_{bug_id.replace('-', '_')}.py"


def test_module(plan: dict, bug_id: str) -> str:
    """The plan's test cases as one pytest module (also saved as the bug's test-cases.py)."""
    summary = " ".join(plan.get("summary", "").split())
    lines = [
        TEST_MARKER.format(id=bug_id),
        f"# Fix: {summary}",
        f"# Written by `aether bug fix {bug_id}`; the plan is in the bug's fix-plan.md.",
        "",
    ]
    for test in plan.get("test_cases", []):
        lines += ["", ""]
        lines += [f"# [{test['category']}] {line}".rstrip() for line in test["description"].strip().splitlines()]
        lines.append(test["test_code"].strip("\n"))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- playing the plan in memory


def simulate(plan: dict, root: str, bug_id: str) -> tuple[list[dict], list[str]]:  # noqa: C901 — the fix simulation, to split into steps
    """The file operations the plan makes, computed without writing: (ops, defects).

    An op is {path, action: create|modify|delete, before, after, mode, test}; `before`/`after`
    are the whole text (None: absent).
    """
    files: dict[str, dict] = {}
    defects: list[str] = []

    def load(rel: str, where: str) -> dict | None:
        if rel in files:
            return files[rel]
        full = join(root, rel)
        entry: dict = {"before": None, "after": None, "mode": None}
        if os.path.islink(full):
            defects.append(f"{where}: is a symbolic link; change the file it points to instead")
            return None
        if os.path.lexists(full):
            if not os.path.isfile(full):
                defects.append(f"{where}: exists and is not a regular file")
                return None
            text = read_text(full)
            if text is None:
                defects.append(f"{where}: is not UTF-8 text")
                return None
            entry["before"] = entry["after"] = text
            entry["mode"] = os.stat(full).st_mode & 0o7777
        files[rel] = entry
        return entry

    for i, change in enumerate(plan.get("changes", [])):
        where = f"changes[{i}] ({change.get('file_path')})"
        rel, problem = resolve(root, change.get("file_path") or "")
        if problem:
            defects.append(f"{where}: file_path {problem}")
            continue
        assert rel is not None  # resolve gives a path or a problem
        entry = load(rel, where)
        if entry is None:
            continue
        current, kind = entry["after"], change.get("change_type")
        if kind == "modify":
            old = change.get("current_code") or ""
            if current is None:
                defects.append(f"{where}: the file does not exist; modify needs an existing file")
                continue
            n = occurrences(current, old)
            if n == 0:
                hint = ""
                if "\r\n" in current and "\r\n" not in old:
                    hint = " (the file has CRLF line endings)"
                elif old.strip() and old.strip() in current:
                    hint = " (it is there with different leading or trailing whitespace)"
                defects.append(f"{where}: current_code is not found in the file{hint}")
            elif n > 1:
                defects.append(f"{where}: current_code is found {n} times; it must match exactly once (include more surrounding lines)")
            else:
                entry["after"] = current.replace(old, change.get("proposed_code") or "", 1)
        elif kind == "create":
            if current is not None:
                defects.append(f"{where}: the file already exists; create never overwrites (use modify)")
            else:
                entry["after"] = change.get("proposed_code") or ""
        elif kind == "delete":
            if current is None:
                defects.append(f"{where}: the file does not exist, so it cannot be deleted")
            else:
                entry["after"] = None

    if plan.get("test_cases"):
        rel = test_file(bug_id)
        where = f"test file {rel}"
        problem = resolve(root, rel)[1]  # the tests folder may be a link leading out
        if problem:
            defects.append(f"{where}: {problem}")
        elif rel in files:
            defects.append(f"changes: must not touch {rel}: `bug fix` writes the plan's tests there")
        else:
            entry = load(rel, where)
            if entry is not None:
                marker = TEST_MARKER.format(id=bug_id)
                if entry["before"] is not None and not entry["before"].startswith(marker):
                    defects.append(f"{where}: exists and was not written by `aether bug fix {bug_id}`; move it away first")
                entry["after"] = test_module(plan, bug_id)
                entry["test"] = True

    ops = []
    for rel, entry in files.items():
        before, after = entry["before"], entry["after"]
        if before == after:
            continue
        action = "create" if before is None else "delete" if after is None else "modify"
        ops.append(
            {"path": rel, "action": action, "before": before, "after": after, "mode": entry["mode"], "test": bool(entry.get("test"))}
        )
    return ops, defects


def diff(op: dict) -> str:
    """A unified diff of one op (for --dry-run)."""
    import difflib  # noqa: PLC0415 — start-up: difflib only where text is compared

    def lines(text):
        if text is None:
            return []
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    a = f"a/{op['path']}" if op["before"] is not None else "/dev/null"
    b = f"b/{op['path']}" if op["after"] is not None else "/dev/null"
    return "".join(difflib.unified_diff(lines(op["before"]), lines(op["after"]), a, b))


# ---------------------------------------------------------------- writing and undoing


def _write(full: str, text: str, mode: int | None) -> None:
    """Replace one project file atomically (the one place the fix writes a file)."""
    containment.check_write(full)
    atomic_files.write_text_atomic(full, text, mode)


def _current(full: str) -> str | None:
    if not os.path.lexists(full):
        return None
    if os.path.islink(full) or not os.path.isfile(full):
        return "\x00not a regular file"
    text = read_text(full)
    return "\x00not UTF-8 text" if text is None else text


def _put_back(ops: list[dict], root: str, created_dirs: list[str]) -> list[str]:
    """Restore each op's `before`, newest first; returns the paths that could not be restored."""
    failed = []
    for op in reversed(ops):
        full = join(root, op["path"])
        try:
            if op["before"] is None:
                if os.path.lexists(full):
                    os.unlink(full)
            else:
                _write(full, op["before"], op.get("mode"))
        except (OSError, AetherError):
            failed.append(op["path"])
    for rel in reversed(created_dirs):
        try:
            os.rmdir(join(root, rel))
        except OSError:
            pass
    return failed


def apply(ops: list[dict], root: str) -> list[str]:
    """Write every op; returns the folders it had to create. On any failure every file
    already written is put back and `implementation_failed` (exit 3) is raised."""
    done: list[dict] = []
    created_dirs: list[str] = []
    try:
        for op in ops:
            full = join(root, op["path"])
            if _current(full) != op["before"]:
                raise _Changed(op["path"])
            if op["after"] is None:
                os.unlink(full)
            else:
                missing = []
                folder = os.path.dirname(op["path"])
                while folder and not os.path.isdir(join(root, folder)):
                    missing.append(folder)
                    folder = os.path.dirname(folder)
                for rel in reversed(missing):
                    containment.make_dirs(join(root, rel))
                    created_dirs.append(rel)
                _write(full, op["after"], op.get("mode"))
            done.append(op)
    except (OSError, _Changed, AetherError) as exc:  # AetherError: a text UTF-8 cannot hold
        failed = _put_back(done, root, created_dirs)
        why = (
            f"{exc.path} changed while the fix was being applied"
            if isinstance(exc, _Changed)
            else exc.message
            if isinstance(exc, AetherError)
            else f"{exc.strerror or exc} ({exc.filename or ''})"
        )
        note = "every file is back as it was" if not failed else f"could not restore: {', '.join(failed)}"
        raise bug_error(
            "implementation_failed", f"applying the fix failed: {why}; {note}", BUG_EXIT_FAILED, restored=not failed, unrestored=failed
        ) from None
    return created_dirs


class _Changed(Exception):
    def __init__(self, path):
        super().__init__(path)
        self.path = path


def undo(snapshot: dict, root: str, *, force: bool = False) -> dict:
    """Put back what a fix changed (from its rollback snapshot). Refuses, unless forced, when a
    file no longer holds what the fix wrote (someone edited it since)."""
    ops = snapshot["files"]
    edited = [op["path"] for op in ops if _current(join(root, op["path"])) != op["after"]]
    if edited and not force:
        raise bug_error(
            "rollback_conflict",
            f"changed since the fix was applied: {', '.join(edited)}; rolling back would lose "
            f"those edits (pass --force to roll back anyway)",
            BUG_EXIT_FAILED,
            files=edited,
        )
    failed = _put_back(ops, root, snapshot.get("created_dirs", []))
    if failed:
        raise bug_error("rollback_failed", f"could not restore: {', '.join(failed)}", BUG_EXIT_FAILED, files=failed)
    return {"restored": [op["path"] for op in ops], "edited_since_fix": edited}


def git_rollback(ops: list[dict]) -> str | None:
    """The git command that undoes the fix, when the project is in git (None otherwise)."""

    if not paths.in_git_repo():
        return None
    restore = [op["path"] for op in ops if op["before"] is not None]
    remove = [op["path"] for op in ops if op["before"] is None]
    parts = []
    if restore:
        parts.append("git checkout -- " + " ".join(shlex.quote(p) for p in restore))
    if remove:
        parts.append("rm -f -- " + " ".join(shlex.quote(p) for p in remove))
    return " && ".join(parts) or None


# ---------------------------------------------------------------- verification


def _helper_prefix() -> str | None:

    if sys.prefix == sys.base_prefix:
        return None
    return os.path.realpath(sys.prefix)


def _helper_owned(path: str) -> bool:
    prefix = _helper_prefix()
    if prefix is None:
        return False
    return _inside(os.path.realpath(os.path.dirname(os.path.abspath(path))), prefix)


def project_python(root: str) -> str | None:
    """The interpreter of the project (never the helper's own environment)."""
    import shutil  # noqa: PLC0415 — start-up: shutil only where files are copied

    candidates = [os.path.join(root, ".venv", "bin", "python"), os.path.join(root, "venv", "bin", "python")]
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        candidates.append(os.path.join(venv, "bin", "python"))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and not _helper_owned(candidate):
            return candidate
    search = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not _helper_owned(os.path.join(d, "python")))
    for name in ("python3", "python"):
        found = shutil.which(name, path=search)
        if found and not _helper_owned(found):
            return found
    return None


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in TEST_ENV_DROP}
    if env.get("VIRTUAL_ENV") and _helper_owned(os.path.join(env["VIRTUAL_ENV"], "bin", "python")):
        del env["VIRTUAL_ENV"]
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if d and not _helper_owned(os.path.join(d, "python")))
    return env


def _parse_junit(path: str) -> list[dict] | None:
    import xml.etree.ElementTree as ET  # noqa: PLC0415 — start-up: xml only where an XML file is checked

    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError):
        return None
    tests = []
    for case in tree.iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = (child.get("message") or child.text or "").strip()
                break
            if child.tag == "skipped":
                outcome = "skipped"
                message = (child.get("message") or "").strip()
        tests.append({"name": case.get("name") or "?", "outcome": outcome, "message": message.splitlines()[0][:300] if message else ""})
    return tests


NO_INTERPRETER = (
    "no Python interpreter found for the project (looked for .venv, venv, $VIRTUAL_ENV and python3 on PATH); set bug_bash.test_command"
)


def runner_argv(root: str, cfg: dict, test_paths: list[str], junit: str | None = None) -> tuple[list[str] | None, str | None]:
    """The command that runs these tests, as `bug fix` runs them: `bug_bash.test_command` with the
    paths appended, else `<project python> -m pytest -v …`. (argv, None) or (None, why not)."""
    if cfg["test_command"]:
        return list(cfg["test_command"]) + list(test_paths), None
    python = project_python(root)
    if python is None:
        return None, NO_INTERPRETER
    junit_opt = [f"--junitxml={junit}"] if junit else []
    return [python, "-m", "pytest", "-v", "--tb=short", "-p", "no:cacheprovider", *junit_opt, *test_paths], None


def run_command(command: list[str], root: str, timeout: float) -> dict:
    """Run an argv list (never a shell) in the project root with the project's environment, for at
    most `timeout` seconds: {exit_code, timed_out, output, error (it could not start)}."""
    import subprocess  # noqa: PLC0415 — start-up: subprocess only where a program runs

    try:
        proc = subprocess.Popen(
            command,
            cwd=root,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return {"exit_code": None, "timed_out": False, "output": "", "error": f"cannot run {command[0]}: {exc.strerror or exc}"}
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        out, _ = proc.communicate()
    return {"exit_code": proc.returncode, "timed_out": timed_out, "output": out.decode("utf-8", "replace"), "error": None}


def verify(root: str, bug_dir: str, cfg: dict, test_paths: list[str]) -> dict:
    """Run the bug's own tests; returns {command, exit_code, tests_passed, tests_failed, tests,
    timed_out, output_tail, reason (None when they all passed)}."""
    timeout = cfg["verification_timeout_seconds"]
    log_path = os.path.join(bug_dir, "verification.log")
    junit = os.path.join(bug_dir, "verification.xml")
    for stale in (junit, log_path):  # a link left in their place is removed, never followed
        try:
            os.unlink(stale)
        except OSError:
            pass
    command, why = runner_argv(root, cfg, test_paths, None if cfg["test_command"] else junit)
    if command is None:
        return _verdict(None, None, [], False, "", why)
    use_junit = not cfg["test_command"]
    ran = run_command(command, root, timeout)
    if ran["error"]:
        return _verdict(command, None, [], False, "", ran["error"])
    text, timed_out, returncode = ran["output"], ran["timed_out"], ran["exit_code"]
    atomic_files.write_text_atomic(log_path, text)
    tests = (_parse_junit(junit) or []) if use_junit else []
    failed = sum(t["outcome"] == "failed" for t in tests)
    passed = sum(t["outcome"] == "passed" for t in tests)
    reason = None
    if timed_out:
        reason = f"Verification timed out after {timeout}s"
        failed = max(failed, 1)
    elif failed:
        reason = f"Verification failed - {failed} of {len(tests)} tests failed"
    elif returncode != 0:
        failed = 1
        reason = f"Verification failed - the test command exited with status {returncode}"
    elif use_junit and passed == 0:
        failed = 1
        reason = "Verification failed - no test passed (none ran, or all were skipped)"
    if not use_junit and reason is None:
        passed = max(passed, 1)
    return _verdict(command, returncode, tests, timed_out, text, reason, passed=passed, failed=failed)


def _verdict(command, exit_code, tests, timed_out, output, reason, passed=0, failed=None):
    if failed is None:
        failed = 1 if reason else 0
    return {
        "command": command,
        "exit_code": exit_code,
        "tests_passed": passed,
        "tests_failed": failed,
        "tests": tests,
        "timed_out": timed_out,
        "output_tail": output[-OUTPUT_TAIL:],
        "reason": reason,
    }


def revert_partial(snapshot: dict, root: str) -> list[str]:
    """Undo what an interrupted fix wrote (files already holding their new text go back),
    so the plan can be applied again from the start. Returns the paths put back."""
    ops = snapshot["files"]
    conflicts = [op["path"] for op in ops if _current(join(root, op["path"])) not in (op["before"], op["after"])]
    if conflicts:
        raise bug_error(
            "implementation_conflict",
            f"changed since the interrupted fix began: {', '.join(conflicts)}; put them back "
            f"as they were (or as the plan expects) and run the fix again",
            BUG_EXIT_FAILED,
            files=conflicts,
        )
    todo = [op for op in ops if _current(join(root, op["path"])) == op["after"]]
    failed = _put_back(todo, root, snapshot.get("created_dirs", []))
    if failed:
        raise bug_error("implementation_failed", f"could not restore: {', '.join(failed)}", BUG_EXIT_FAILED, files=failed)
    return [op["path"] for op in todo]
