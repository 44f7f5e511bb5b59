"""/ant:colonize's colonizers: how many to spawn, which lenses each maps, where each starts.

The project's size decides the number (from complexity detection's scan): a small project is
mapped by one colonizer taking every lens, a middle-sized one by two, a large one by one
colonizer per lens. Each colonizer's brief names its lenses, what they cover, the project's
counts, the files to start with (picked from the scan's `paths`) and the pheromone block as
the colonizer caste senses it — so the Queen only spawns.
"""

from __future__ import annotations

from aether.rules import complexity

LENSES = {  # lens → what a colonizer maps through it
    "structure": "layout, entry points, modules and how they depend on each other",
    "stack": "languages, frameworks, dependencies, build, the test runner and how to run it, CI",
    "conventions and risks": "style, recurring patterns, error handling; fragile, dead or duplicated areas; missing tests",
}
# colonizers → the lenses each one takes
GROUPS = {
    1: (("structure", "stack", "conventions and risks"),),
    2: (("structure", "stack"), ("conventions and risks",)),
    3: (("structure",), ("stack",), ("conventions and risks",)),
}
ONE_COLONIZER_BELOW = complexity.LIGHTWEIGHT_MAX_FILES  # source files: one colonizer maps it all
TWO_COLONIZERS_UP_TO = complexity.FULL_MIN_FILES  # source files: two colonizers; more: one per lens
START_WITH = 12  # paths a colonizer is told to start with, at most

# Files that describe the stack (at the root or one folder down), and style configuration.
MANIFESTS = frozenset(
    {
        "package.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "Pipfile",
        "poetry.lock",
        "Cargo.toml",
        "go.mod",
        "Gemfile",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "composer.json",
        "mix.exs",
        "Makefile",
        "CMakeLists.txt",
        "Dockerfile",
        "docker-compose.yml",
        "tsconfig.json",
        "deno.json",
        "pubspec.yaml",
        "Package.swift",
    }
)
STYLE_CONFIGS = frozenset(
    {
        ".editorconfig",
        ".flake8",
        ".pylintrc",
        "ruff.toml",
        ".ruff.toml",
        "mypy.ini",
        ".prettierrc",
        ".rubocop.yml",
        "rustfmt.toml",
        ".golangci.yml",
        ".clang-format",
        ".pre-commit-config.yaml",
    }
)
STYLE_PREFIXES = (".eslintrc", "eslint.config.", ".prettierrc.", "biome.json", ".stylelintrc")
READMES = ("README", "readme")


def count(source_files: int) -> int:
    """How many colonizers map a project with this many source files."""
    if source_files < ONE_COLONIZER_BELOW:
        return 1
    return 2 if source_files <= TWO_COLONIZERS_UP_TO else 3


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _starts(lens: str, tree: dict) -> list:
    """The paths a colonizer taking `lens` reads first, most telling first."""
    paths = tree.get("paths") or {}
    near = paths.get("near") or []
    if lens == "structure":
        readmes = [p for p in near if "/" not in p and _base(p).startswith(READMES)]
        return readmes + (paths.get("top") or []) + (paths.get("sources") or [])[:5]
    if lens == "stack":
        manifests = [p for p in near if _base(p) in MANIFESTS]
        return manifests + (tree.get("ci_markers") or []) + (tree.get("test_markers") or [])[:2]
    configs = [p for p in near if _base(p) in STYLE_CONFIGS or _base(p).startswith(STYLE_PREFIXES)]
    return configs + (paths.get("folders") or []) + (tree.get("test_markers") or [])[:2]


def _start_with(lenses: tuple, tree: dict) -> list:
    out: list = []
    for lens in lenses:
        for path in _starts(lens, tree):
            if path not in out:
                out.append(path)
    return out[:START_WITH]


def plan(tree: dict, pheromone_block: str) -> list:
    """The colonizers to spawn in one message: [{id, lens, lenses, start_with, subagent_type, text}]."""
    languages = ", ".join(tree.get("languages") or []) or "none detected"
    n = tree.get("source_files") or 0
    more = "at least " if tree.get("capped") else ""
    out = []
    for i, lenses in enumerate(GROUPS[count(n)], start=1):
        lens = " + ".join(lenses)
        start = _start_with(lenses, tree)
        text = "\n".join(
            [
                "--- COLONIZE ---",
                f"Lens: {lens}",
                "Map: " + "; ".join(f"{name}: {LENSES[name]}" for name in lenses),
                f"Project root: the current directory ({more}{n} source files; languages: {languages})",
                "Start with: " + (", ".join(start) if start else "(an empty project: survey what is there)"),
                pheromone_block,
            ]
        )
        out.append(
            {"id": f"c{i}", "lens": lens, "lenses": list(lenses), "start_with": start, "subagent_type": "ant:colonizer", "text": text}
        )
    return out
