"""self-check: every module of the helper's package imports, and every command resolves (an
install missing a part fails, naming it)."""

from __future__ import annotations

import importlib
import pkgutil

import aether
from aether.cli import COMMANDS
from aether.cli.common import command
from aether.core.exceptions import EXIT_INTERNAL, AetherError

NOT_IMPORTED = {"aether.__main__"}  # importing it runs the CLI


def import_all() -> tuple[list[str], list[str], list[str]]:
    """Import every module under the `aether` package, packages first, then each command's
    module and function in COMMANDS: (the modules imported, `name (why)` for each failure, the
    helper's modules found missing)."""
    imported, failed, missing, packages = [], [], set(), [aether]

    def failure(name: str, exc: BaseException) -> None:
        failed.append(f"{name} ({type(exc).__name__}: {exc})")
        if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.startswith("aether."):
            missing.add(exc.name)

    while packages:
        package = packages.pop(0)
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            if info.name in NOT_IMPORTED:
                continue
            try:
                module = importlib.import_module(info.name)
            except Exception as exc:  # noqa: BLE001 — any failure to import is the answer
                failure(info.name, exc)
                continue
            imported.append(info.name)
            if info.ispkg:
                packages.append(module)
    for name, target in sorted(COMMANDS.items()):
        module_name, attr = target.split(":")
        try:
            getattr(importlib.import_module(module_name), attr)
        except Exception as exc:  # noqa: BLE001
            failure(f"command {name}: {target}", exc)
    return sorted(imported), failed, sorted(missing)


@command("self-check", hidden=True)
def self_check():
    """Import every module of the helper's package and every command's function: {modules: N},
    or an error naming each that does not import. The plugin's SessionStart hook
    (hooks/bootstrap.py) checks a new install with it."""
    imported, failed, missing = import_all()
    if failed:
        gone = f"missing: {', '.join(missing)}; " if missing else ""
        raise AetherError(
            "self_check_failed",
            f"the helper's install is incomplete ({gone}{len(failed)} modules or "
            f"commands do not import: {'; '.join(failed)}). Reinstall the plugin (in a checkout: "
            "`make install`).",
            EXIT_INTERNAL,
            missing=missing,
            failed=failed,
        )
    return {"modules": len(imported)}
