"""Complexity detection: which mode (LIGHTWEIGHT / STANDARD / FULL) suits a project (docs/decisions/modes.md).

LIGHTWEIGHT when ALL hold: at most one language, fewer than 20 source files, no test suite,
no CI configuration, a goal under 50 words. FULL when ANY holds: several languages, more
than 50 source files, a test suite, CI configuration, a complex goal (more than 50 words, or
naming a complex domain such as authentication, a database or an API). STANDARD otherwise.

The tree is walked here (os.scandir, breadth first, symlinked folders not followed), skipping
what is not the project's own source: VCS and tool folders, dependencies, virtualenvs and
build outputs. The walk stops at WALK_FILE_LIMIT files or WALK_DIR_LIMIT folders so a huge
tree answers fast; the signals then say `capped: true` and the counts are lower bounds.
"""

from __future__ import annotations

import os

from aether.colony import between_phases
from aether.core import clock
from aether.core.exceptions import input_error, state_error
from aether.rules import colonize, lifecycle
from aether.rules.complexity import assess
from aether.state import memory, pheromones, store

# ---------------------------------------------------------------- the heuristics' numbers


# ---------------------------------------------------------------- the walk

WALK_FILE_LIMIT = 5000
WALK_DIR_LIMIT = 1000
MARKERS_SHOWN = 5  # test/CI evidence paths reported, at most
PATHS_KEPT = 200  # paths of each kind kept in the scan's `paths` (the colonizers' starting points)
NEAR_DEPTH = 1  # `paths.near`: files at most this deep below the root (manifests, configuration)

# Folders that are never the project's own source. Any folder holding `pyvenv.cfg` (a Python
# virtualenv, whatever its name) is skipped too.
IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".aether",
        ".claude",
        ".venv",
        "venv",
        "node_modules",
        "vendor",
        "bower_components",
        "site-packages",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "dist",
        "build",
        "target",
        "out",
        ".next",
        ".nuxt",
        ".gradle",
        ".idea",
        ".vscode",
        ".eggs",
        ".cache",
        "coverage",
        "htmlcov",
    }
)

# extension → language. Close relatives count as one language (a TypeScript project always has
# a few .js config files; C and C++ share headers). Markup, styles, data and docs are not
# languages: they do not make a project multi-language.
LANGUAGES = {
    ".py": "Python",
    ".pyi": "Python",
    ".pyx": "Python",
    ".js": "JavaScript/TypeScript",
    ".mjs": "JavaScript/TypeScript",
    ".cjs": "JavaScript/TypeScript",
    ".jsx": "JavaScript/TypeScript",
    ".ts": "JavaScript/TypeScript",
    ".tsx": "JavaScript/TypeScript",
    ".mts": "JavaScript/TypeScript",
    ".cts": "JavaScript/TypeScript",
    ".vue": "JavaScript/TypeScript",
    ".svelte": "JavaScript/TypeScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".kts": "Kotlin",
    ".scala": "Scala",
    ".groovy": "Groovy",
    ".rb": "Ruby",
    ".php": "PHP",
    ".c": "C/C++",
    ".h": "C/C++",
    ".cc": "C/C++",
    ".cpp": "C/C++",
    ".cxx": "C/C++",
    ".hpp": "C/C++",
    ".hh": "C/C++",
    ".hxx": "C/C++",
    ".m": "Objective-C",
    ".mm": "Objective-C",
    ".cs": "C#",
    ".fs": "F#",
    ".vb": "Visual Basic",
    ".swift": "Swift",
    ".dart": "Dart",
    ".lua": "Lua",
    ".pl": "Perl",
    ".pm": "Perl",
    ".r": "R",
    ".jl": "Julia",
    ".ex": "Elixir",
    ".exs": "Elixir",
    ".erl": "Erlang",
    ".hs": "Haskell",
    ".ml": "OCaml",
    ".mli": "OCaml",
    ".clj": "Clojure",
    ".cljs": "Clojure",
    ".elm": "Elm",
    ".zig": "Zig",
    ".nim": "Nim",
    ".cr": "Crystal",
    ".sol": "Solidity",
    ".sh": "Shell",
    ".bash": "Shell",
    ".zsh": "Shell",
    ".ps1": "PowerShell",
}

# Evidence of a test suite: a file inside one of these folders, a file named like a test, or a
# test runner's configuration file.
TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing"})
TEST_CONFIG_FILES = frozenset(
    {
        "pytest.ini",
        "conftest.py",
        "tox.ini",
        "noxfile.py",
        ".rspec",
        "phpunit.xml",
        "phpunit.xml.dist",
        "karma.conf.js",
        ".mocharc.json",
        ".mocharc.js",
        ".mocharc.yml",
    }
)
TEST_CONFIG_PREFIXES = ("jest.config.", "vitest.config.", "playwright.config.", "cypress.config.")

# Evidence of CI: these paths relative to the project root (a folder counts when it holds a file).
CI_PATHS = (
    ".github/workflows",
    ".gitlab-ci.yml",
    "Jenkinsfile",
    ".circleci",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    ".drone.yml",
    ".buildkite",
    ".woodpecker.yml",
    ".woodpecker",
    "appveyor.yml",
    ".appveyor.yml",
)
_TEST_EXTS = frozenset(ext.lstrip(".") for ext in LANGUAGES)


def _is_test_file(name: str) -> bool:
    """A test runner's config file, or a file named like a test (test_x.py, x.test.ts, x_test.go, XTest.java)."""
    lower = name.lower()
    if lower in TEST_CONFIG_FILES or lower.startswith(TEST_CONFIG_PREFIXES):
        return True
    parts = lower.split(".")
    if len(parts) < 2 or parts[-1] not in _TEST_EXTS:
        return False
    if len(parts) >= 3 and parts[-2] in ("test", "spec"):
        return True
    stem = name.rsplit(".", 1)[0]
    if stem.lower().startswith("test_") or stem.lower().endswith(("_test", "_spec")):
        return True
    return stem.endswith(("Test", "Tests", "Spec"))  # JUnit and friends: case matters


def _has_file(path: str) -> bool:
    """True when path is a file, or a folder holding a file at any depth (looks at 200 entries at most)."""
    if os.path.isfile(path):
        return True
    stack = [path]
    seen = 0
    while stack and seen < 200:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if entry.is_file():
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return False


def scan(root: str) -> dict:
    """The tree's signals: files, source_files, languages, max_depth, has_tests, has_ci, …, and
    `paths` (not a signal: where colonizers start): `top` (the root's entries, folders ending
    in /), `near` (files NEAR_DEPTH deep at most), `sources` (source files, shallowest first)
    and `folders` (the first source file of each folder), PATHS_KEPT of each at most."""
    source_files = files = dirs = skipped_dirs = unreadable = max_depth = 0
    language_files: dict = {}
    test_markers: list = []
    paths: dict = {"top": [], "near": [], "sources": [], "folders": []}

    def keep(kind: str, path: str) -> None:
        if len(paths[kind]) < PATHS_KEPT:
            paths[kind].append(path)

    capped = False
    queue = [(root, 0, False)]  # (folder, depth below root, inside a test folder)
    i = 0
    while i < len(queue):
        folder, depth, in_tests = queue[i]
        i += 1
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            unreadable += 1
            continue
        if depth > 0 and any(e.name == "pyvenv.cfg" for e in entries):
            skipped_dirs += 1
            continue
        dirs += 1
        folder_source = False
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name in IGNORED_DIRS:
                        skipped_dirs += 1
                    elif dirs + len(queue) - i >= WALK_DIR_LIMIT:
                        capped = True
                    else:
                        queue.append((entry.path, depth + 1, in_tests or name.lower() in TEST_DIRS))
                        if depth == 0:
                            keep("top", name + "/")
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if files >= WALK_FILE_LIMIT:
                capped = True
                break
            files += 1
            rel = os.path.relpath(entry.path, root)
            if depth == 0:
                keep("top", name)
            if depth <= NEAR_DEPTH:
                keep("near", rel)
            language = LANGUAGES.get(os.path.splitext(name)[1].lower())
            if language:
                source_files += 1
                language_files[language] = language_files.get(language, 0) + 1
                max_depth = max(max_depth, depth)
                keep("sources", rel)
                if not folder_source:
                    folder_source = True
                    keep("folders", rel)
            if ((in_tests and language) or _is_test_file(name)) and len(test_markers) < MARKERS_SHOWN:
                test_markers.append(rel)
        if capped and files >= WALK_FILE_LIMIT:
            break
    ci_markers = [p for p in CI_PATHS if _has_file(os.path.join(root, p))][:MARKERS_SHOWN]
    languages = sorted(language_files, key=lambda lang: (-language_files[lang], lang))
    return {
        "source_files": source_files,
        "files": files,
        "languages": languages,
        "language_files": {lang: language_files[lang] for lang in languages},
        "max_depth": max_depth,
        "has_tests": bool(test_markers),
        "test_markers": test_markers,
        "has_ci": bool(ci_markers),
        "ci_markers": ci_markers,
        "dirs_scanned": dirs,
        "dirs_skipped": skipped_dirs,
        "dirs_unreadable": unreadable,
        "capped": capped,
        "paths": paths,
    }


def check_root(path: str) -> str:
    """The folder to scan, made absolute; an input error if it is not a readable folder."""
    root = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(root):
        what = "does not exist" if not os.path.exists(root) else "is not a folder"
        raise input_error("invalid_path", f"{path} {what}; give the project folder to scan")
    if not os.access(root, os.R_OK | os.X_OK):
        raise input_error("invalid_path", f"{path} cannot be read; check its permissions")
    return root


# Colony states in which the mode may be (re)detected and applied.
APPLY_IN_STATES = ("READY", "PLANNING")


def detect(root: str, goal: str | None) -> dict:
    """Scan ROOT and judge it with GOAL (library entry point for colony-init --detect)."""
    return assess(scan(check_root(root)), goal)


@store.writes("colony", "memory")
def _apply_mode(files, tree, goal):
    """Store the mode judged from TREE and GOAL in the colony and record it as a decision, in one write."""
    colony = files["colony"]
    state = colony.get("state")
    lifecycle.refuse_while_executing(colony, "complexity-detect --apply", "run it again")
    if state not in APPLY_IN_STATES:
        raise state_error(
            "no_active_colony",
            f"the colony is {state}, not active; start one with `aether colony-init --detect` "
            f"(or /ant:init), which detects the mode itself",
            state=state,
        )
    out = assess(tree, colony.get("goal") if goal is None else goal)
    previous = colony.get("mode")
    colony["mode"] = out["mode"]
    colony["mode_set_at"] = clock.iso()
    colony["mode_indicators"] = out["signals"]
    memory.append_decision(
        files["memory"],
        f"Colony mode {out['mode']} chosen by complexity detection",
        type="mode",
        context="; ".join(out["reasons"]) or None,
        phase=colony.get("current_phase"),
    )
    return dict(out, applied=True, previous_mode=previous)


def apply(tree: dict, goal: str | None) -> dict:
    """Judge scanned tree signals with GOAL (None: the colony's goal), store the mode in
    COLONY_STATE (mode, mode_set_at, mode_indicators) and record the choice as a decision in
    memory.json, in one write. Refused without an active colony and while a build runs. The
    answer adds `colonizers`: the colonizers /ant:colonize spawns (see `aether.rules.colonize`)."""

    store.read("colony", missing_ok=False)  # state_missing, with the hint to start a colony

    result = _apply_mode(tree, goal)

    hint = between_phases.suggest_signals()  # the pheromone-first flow: steer before planning
    result["suggest_signals"] = hint["suggest"]
    result["signals_suggestion"] = hint["text"]
    result["colonizers"] = colonize.plan(tree, pheromones.render("colonizer")["text"])
    return result
