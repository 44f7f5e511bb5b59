"""The LIGHTWEIGHT watcher: a syntax check of changed files that the helper runs itself.

Python is compiled in-process (`compile()`, nothing is imported or run), JSON and TOML are
parsed, YAML when PyYAML is importable, shell scripts go through `bash -n`, JavaScript (and
TypeScript where the installed node strips types) through `node --check`. Any other file is
reported as not checked, never as a failure; so is a path that is not a regular file (a
directory, FIFO, socket or device: never opened, so a FIFO cannot block the check). A file that
is gone or lies outside the project is reported, not failed: spawn-finish already checks that
claimed files exist.
"""

from __future__ import annotations

import json
import os
import re
import stat

from aether.core import containment, inputs, paths
from aether.core.exceptions import input_error
from aether.core.text import one_line
from aether.core.vocabulary import NO_CODE_ROLES
from aether.rules import spawn_tree
from aether.rules.contracts import norm_path
from aether.state import store

MAX_FILES = 500  # files checked in one call
MAX_FILE_BYTES = 5_000_000  # bigger files are not checked
TOOL_TIMEOUT_SECONDS = 20  # bash -n / node --check, per file
MAX_ERROR_TEXT = 300
LANGUAGES = {
    ".py": "python",
    ".pyw": "python",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sh": "shell",
    ".bash": "shell",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
}
STATUSES = ("passed", "failed", "not_checked", "missing", "outside_project")


def _python(raw: bytes, path: str):
    try:
        compile(raw, path, "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError included
        return exc.msg or "invalid syntax", exc.lineno
    except (ValueError, UnicodeDecodeError) as exc:  # null bytes, a bad encoding
        return str(exc), None
    except (RecursionError, MemoryError):
        return "skip", "too deeply nested to compile"
    return None


def _json(raw: bytes, path: str):

    def constant(name):  # Python reads NaN and Infinity; JSON has no such numbers
        raise ValueError(f"{name} is not valid JSON")

    try:
        json.loads(raw.decode("utf-8"), parse_constant=constant)
    except UnicodeDecodeError:
        return "not valid UTF-8", None
    except ValueError as exc:
        return getattr(exc, "msg", str(exc)), getattr(exc, "lineno", None)
    return None


def _toml(raw: bytes, path: str):
    import tomllib  # noqa: PLC0415 — start-up: tomllib only where a TOML file is read

    try:
        tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return "not valid UTF-8", None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        return str(exc), int(found.group(1)) if found else None
    return None


def _yaml(raw: bytes, path: str):
    try:
        import yaml  # noqa: PLC0415 — start-up: PyYAML (~15 ms) only for `bug`
    except ImportError:
        return "skip", "PyYAML is not installed"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        list(yaml.load_all(raw.decode("utf-8"), Loader=loader))
    except UnicodeDecodeError:
        return "not valid UTF-8", None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return getattr(exc, "problem", None) or str(exc), (mark.line + 1) if mark is not None else None
    return None


def _tool(cmd: list, path: str):
    """Run a checker tool; None when it passes, (error, line), or ("skip", why)."""
    import shutil  # noqa: PLC0415 — start-up: shutil only where files are copied
    import subprocess  # noqa: PLC0415 — start-up: subprocess only where a program runs

    if shutil.which(cmd[0]) is None:
        return "skip", f"{cmd[0]} is not installed"
    try:
        proc = subprocess.run(cmd + [path], capture_output=True, timeout=TOOL_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "skip", f"{cmd[0]} took longer than {TOOL_TIMEOUT_SECONDS}s"
    except OSError as exc:
        return "skip", f"{cmd[0]} could not run ({exc.strerror})"
    if proc.returncode == 0:
        return None
    err = proc.stderr.decode("utf-8", "replace")
    if "ERR_UNKNOWN_FILE_EXTENSION" in err or "Unknown file extension" in err:
        return "skip", f"this {cmd[0]} cannot check {os.path.splitext(path)[1]} files"
    lines = [line.strip() for line in err.splitlines() if line.strip()]
    message = next((line for line in lines if "Error" in line or "error" in line), lines[-1] if lines else "failed")
    line_no = re.search(r"line (\d+)", err) or re.search(re.escape(os.path.basename(path)) + r":(\d+)", err)
    return message, int(line_no.group(1)) if line_no else None


CHECKERS = {
    "python": _python,
    "json": _json,
    "toml": _toml,
    "yaml": _yaml,
    "shell": lambda raw, path: _tool(["bash", "-n"], path),
    "javascript": lambda raw, path: _tool(["node", "--check"], path),
    "typescript": lambda raw, path: _tool(["node", "--check"], path),
}


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_file(rel: str, root: str) -> dict:
    """One file's verdict: {path, language, status, error, line}."""

    rel = norm_path(rel)
    entry = {"path": rel, "language": LANGUAGES.get(os.path.splitext(rel)[1].lower()), "status": "passed", "error": None, "line": None}
    problem = inputs.path_problem(rel)
    if problem:
        entry.update(status="not_checked", error=f"not a usable path: {problem}")
        return entry
    full = os.path.realpath(os.path.join(root, rel))
    if full != root and not full.startswith(root + os.sep):
        entry["status"] = "outside_project"
        return entry
    try:
        mode = os.stat(full).st_mode
    except OSError:
        entry["status"] = "missing"
        return entry
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        entry.update(status="not_checked", error=f"{kind}, not a regular file")
        return entry
    if entry["language"] is None:
        entry.update(status="not_checked", error="no syntax checker for this kind of file")
        return entry
    if os.path.getsize(full) > MAX_FILE_BYTES:
        entry.update(status="not_checked", error=f"larger than {MAX_FILE_BYTES} bytes")
        return entry
    try:
        raw = containment.read_bytes(full)
    except OSError as exc:
        entry.update(status="not_checked", error=f"cannot be read ({exc.strerror})")
        return entry
    verdict = CHECKERS[entry["language"]](raw, full)
    if verdict is None:
        return entry
    message, line = verdict
    if message == "skip":
        entry.update(status="not_checked", error=line)
    else:
        entry.update(status="failed", error=one_line(message, MAX_ERROR_TEXT), line=line)
    return entry


def build_files(colony: dict | None = None) -> list:
    """Files the workers of the current (or last) build created or modified, from the spawn tree."""

    colony = store.read("colony") if colony is None else colony
    tree = spawn_tree.tree_of(colony)
    found: list = []
    for node in tree["nodes"].values():
        if node.get("role") in NO_CODE_ROLES or node.get("status") != "completed":
            continue
        for path in node.get("files_created", []) + node.get("files_modified", []):
            if path not in found:
                found.append(path)
    return found


def run(files: list) -> dict:
    """Check files (paths relative to the project root); returns the per-file verdicts,
    the counts, `passed` (no file failed) and a `text` summary."""
    files = [f for f in dict.fromkeys(f.strip() for f in files if isinstance(f, str)) if f]
    if len(files) > MAX_FILES:
        raise input_error("too_many_items", f"{len(files)} files; the syntax check takes at most {MAX_FILES}")
    root = os.path.realpath(paths.project_root())
    results = []
    for f in files:
        store.let_others_in()  # a long check does not keep the state files locked through it
        results.append(check_file(f, root))
    counts = {s: sum(1 for r in results if r["status"] == s) for s in STATUSES}
    checked = counts["passed"] + counts["failed"]
    out = {
        "files": results,
        "passed": counts["failed"] == 0,
        "checked": checked,
        "failed": counts["failed"],
        "not_checked": counts["not_checked"],
        "missing": counts["missing"],
        "outside_project": counts["outside_project"],
    }
    out["summary"] = summary(out)
    lines = [f"Syntax check: {out['summary']}"]
    marks = {"passed": "✓", "failed": "✗", "not_checked": "-", "missing": "?", "outside_project": "!"}
    for r in results:
        where = r["path"] + (f":{r['line']}" if r["line"] else "")
        tail = {
            "failed": f" {r['error']}",
            "not_checked": f" not checked ({r['error']})",
            "missing": " missing",
            "outside_project": " outside the project",
        }.get(r["status"], "")
        lines.append(f"  {marks[r['status']]} {where}{tail}")
    out["text"] = "\n".join(lines)
    return out


def summary(result: dict) -> str:
    if not result["checked"]:
        return "no file to check"
    if result["failed"]:
        return f"{result['failed']} of {result['checked']} checked file(s) failed"
    return f"{result['checked']} file(s) passed"


def compact(result: dict) -> dict:
    """What build-finish keeps of a check: counts and the failing files."""
    return {
        "kind": "syntax",
        "passed": result["passed"],
        "checked": result["checked"],
        "failed": result["failed"],
        "not_checked": result["not_checked"],
        "missing": result["missing"],
        "failures": [{k: r[k] for k in ("path", "error", "line")} for r in result["files"] if r["status"] == "failed"][:50],
        "summary": result["summary"],
    }


def command(files: tuple, build: bool) -> dict:
    """syntax-check [FILES…] [--build]."""
    wanted = list(files)
    if build:
        wanted += build_files()
    elif not wanted:
        raise input_error("usage_error", "name the files to check, or pass --build for the files of the last build")
    return run(wanted)
