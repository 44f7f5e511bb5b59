"""The helper's imports point one way: core → rules → state → steps → colony → cli.

LAYERS lists every library module, bottom first. A module may import a module of a lower layer,
or a module listed before it in its own layer; never one above or after it. `bugs/` uses core,
rules and state only. Imports of Aether modules sit at the top of a module (a function-local import
is how cycles hide); only `cli/` imports lazily, so that a command loads only what it runs.
docs/architecture.md draws the same picture.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "aether"

LAYERS = {
    "core": ["exceptions", "text", "clock", "paths", "containment", "inputs", "output", "castes", "vocabulary"],
    "rules": [
        "modes",
        "pheromones",
        "plans",
        "lifecycle",
        "contracts",
        "spawn_tree",
        "runner_summary",
        "evidence",
        "failures",
        "waves",
        "review",
        "loops",
        "critique",
        "complexity",
        "colonize",
        "worktrees",
        "drive",
        "spend",
        "models",
        "autopilot",
        "weather",
        "deadlines",
        "timeline",
    ],
    "state": [
        "atomic_files",
        "schema_checks",
        "schema_colony",
        "schemas",
        "store",
        "checkpoints",
        "changes",
        "events",
        "error_log",
        "memory",
        "pheromones",
        "learning",
        "inspect_state",
        "spawns",
        "claim",
        "costs",
        "config_file",
        "settings",
        "worktrees",
        "evidence",
    ],
    "steps": [
        "merge_back",
        "worktrees",
        "isolation",
        "syntax_check",
        "checks",
        "spawning",
        "completion",
        "code_loop",
        "loops",
        "critique",
        "drafts",
        "waves",
        "review",
        "build_results",
        "phase_advance",
        "build_start",
        "build_finish",
        "verification",
        "recovery",
        "skips",
        "failures",
        "plans",
    ],
    "colony": [
        "modes",
        "requirements",
        "research",
        "between_phases",
        "complexity",
        "colony_init",
        "launch",
        "dispatch",
        "continue_drive",
        "build_drive",
        "plan_drive",
        "colonize_drive",
        "autopilot",
        "dry_run",
        "drive",
        "handback",
        "mod",
        "session_start",
        "status",
        "handoff",
        "mod_serve",
        "uninstall",
        "watch",
        "timeline",
    ],
    "bugs": [
        "exit_codes",
        "phases",
        "costs",
        "config",
        "fixer",
        "models",
        "reports",
        "storage",
        "approval",
        "runs",
        "pipeline",
        "approving",
        "fixing",
    ],
}
# What each layer may use below itself (besides its own earlier modules).
BELOW = {
    "core": [],
    "rules": ["core"],
    "state": ["core", "rules"],
    "steps": ["core", "rules", "state"],
    "colony": ["core", "rules", "state", "steps"],
    "bugs": ["core", "rules", "state"],
}
TOP = {"aether", "aether.__main__", "aether.startup"}  # the entry points and the CLI: anything below


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: pathlib.Path, source: str | None = None) -> list[tuple[int, str, bool]]:
    """(line, imported aether module, inside a function?) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    own = _module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((child.lineno, a.name, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                for alias in child.names:  # `from aether.x import y` may name a module y
                    candidate = f"{module}.{alias.name}"
                    if _is_module(candidate):
                        found.append((child.lineno, candidate, in_function))
                    else:
                        found.append((child.lineno, module, in_function))
            visit(child, nested)

    visit(tree, False)
    return [(line, name, local) for line, name, local in found if name == "aether" or name.startswith("aether.")]


def _is_module(name: str) -> bool:
    rel = pathlib.Path(*name.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def _place(module: str) -> tuple[str, int] | None:
    """(layer, rank in the layer) of a library module; None for the entry points and the CLI."""
    parts = module.split(".")
    if module in TOP or parts[1] == "cli":
        return None
    layer = parts[1]
    if len(parts) == 2:  # the layer package itself
        return layer, -1
    return layer, LAYERS[layer].index(parts[2])


def violations(path: pathlib.Path, source: str | None = None) -> list[str]:
    """Every upward, sideways or function-local Aether import in the file, as `file:line: why`."""
    module = _module_name(path)
    where = _place(module)
    if where is None:
        return []
    layer, rank = where
    rel = path.relative_to(PACKAGE.parent.parent)
    found = []
    for line, target, local in imports_of(path, source):
        if local:
            found.append(f"{rel}:{line}: imports {target} inside a function (move it to the top)")
        target_place = _place(target) if target != "aether" else ("core", -1)
        if target_place is None:
            found.append(f"{rel}:{line}: {layer} imports {target} (the CLI is the top layer)")
            continue
        t_layer, t_rank = target_place
        if t_layer == layer:
            if t_rank >= rank and t_rank != -1:
                found.append(f"{rel}:{line}: {module} imports {target}, which comes after it in {layer}/ (sideways: move shared code down)")
        elif t_layer not in BELOW[layer]:
            found.append(f"{rel}:{line}: {layer} imports {target} from {t_layer}/ (upward)")
    return found


def library_files() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts)


def test_every_module_has_a_place():
    listed = {f"aether.{layer}.{name}" for layer, names in LAYERS.items() for name in names}
    present = {_module_name(p) for p in library_files()} - TOP - {f"aether.{layer}" for layer in LAYERS}
    assert present - listed == set(), "add these modules to LAYERS (and docs/architecture.md)"
    assert listed - present == set(), "LAYERS lists modules that do not exist"


def test_imports_point_one_way():
    found = [v for path in library_files() for v in violations(path)]
    assert found == [], "\n".join(found)


def test_the_library_never_imports_click():
    for path in library_files():
        if _module_name(path) in TOP:
            continue
        for line, name, _ in imports_of(path):
            assert not name.startswith("aether.cli"), f"{path}:{line}"
        source = path.read_text(encoding="utf-8")
        assert "import click" not in source, f"{path} imports click: keep it in cli/"


def test_rules_do_no_io():
    """rules/ are pure functions over loaded data: no store, no files, no processes."""
    banned = ("open(", "subprocess", ".read_text(", ".write_text(", "os.replace", "os.environ")
    for path in (PACKAGE / "rules").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        for word in banned:
            assert word not in source, f"{path.name} uses {word}: I/O belongs in state/, steps/ or colony/"


MAX_RULE_LINES = 50  # a rule reads at once; a longer one is split into named steps


def test_rule_functions_are_short():
    long = []
    for path in sorted((PACKAGE / "rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 > MAX_RULE_LINES:
                long.append(f"rules/{path.name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert long == [], "split into named steps: " + ", ".join(long)


@pytest.mark.parametrize(
    "planted, expected",
    [
        ("from aether.steps import build_start\n", "upward"),
        ("def f():\n    from aether.core import clock\n", "inside a function"),
        ("from aether.state import memory\n", "sideways"),
    ],
)
def test_the_check_catches_a_planted_import(planted, expected):
    """A planted upward, function-local or sideways import is reported with its file and line."""
    target = PACKAGE / "state" / "events.py"
    source = target.read_text(encoding="utf-8") + "\n" + planted
    found = violations(target, source)
    assert any(expected in v and "state/events.py:" in v for v in found), found
    assert violations(target) == []
