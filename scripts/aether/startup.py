import gc

"""How the `aether` process starts: bin/aether runs `main` here (nothing else should).

Each call of `aether` is a fresh process, so start-up is the helper's speed. Everything here
applies to that process only; a program importing `aether` as a library is untouched.

LAZY_MODULES are standard-library modules that click and filelock import at the top but use
only on rare paths (tracebacks, lock recovery, URL parsing). They are registered with
`importlib.util.LazyLoader`: the module exists at once and its code runs on first real use.
One adjustment makes that work: an `import X` statement reads `X.__spec__` to see whether X is
still initialising, which would trigger the load right away, so that one read is let through.

GC_THRESHOLD: a call allocates ~15–25 thousand tracked objects, nearly all of them modules,
classes and functions that live until exit. With CPython's default (a young-generation
collection every 700 allocations) the collector re-scans them some twenty times for nothing;
with this threshold an ordinary call never collects, and a large input still gets collected.

Measure with `make bench`; see what a command loads with
`python -X importtime -I -c 'from aether.startup import main; main()' <command>`
(a lazy module's own imports are listed when, and if, it is first used).
"""

import sys  # noqa: E402
import time  # noqa: E402

_IMPORTED = time.perf_counter()  # as near the process's start as Python code gets
STARTED = None  # _IMPORTED, once `main` runs: a process started as the helper (the timeline counts its start-up)

# module: who imports it on every call → when it is really used
LAZY_MODULES = (
    "tokenize",  # inspect (via click) → reading source code for tracebacks
    "linecache",  # inspect, traceback → printing a source line
    "traceback",  # logging (via filelock) → formatting an exception
    "secrets",  # filelock → naming a stale lock to break (hmac, hashlib, random behind it)
    "ipaddress",  # urllib.parse (via pathlib, via filelock) → checking a URL's host
)
GC_THRESHOLD = 50_000  # net allocations of tracked objects between collections (default 700)


def lazy_import(names=LAZY_MODULES) -> list[str]:
    """Register each not-yet-imported module of `names` to load on first use; returns those."""
    from importlib.util import LazyLoader, find_spec, module_from_spec  # noqa: PLC0415 — start-up: importlib.util only when lazy loading is set up

    registered = []
    for name in names:
        if name in sys.modules:
            continue
        spec = find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            continue
        spec.loader = LazyLoader(spec.loader)
        module = module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)  # makes its class LazyLoader's lazy module type
        module.__class__ = _awaiting(type(module))
        registered.append(name)
    return registered


_AWAITING: dict = {}


def _awaiting(lazy_type):
    """A module type that answers `__spec__` as is and hands any other use to `lazy_type`."""
    if lazy_type not in _AWAITING:

        class Awaiting(lazy_type):  # type: ignore[misc, valid-type]  # a base known only at run time (LazyLoader's)
            def __getattribute__(self, attr):
                if attr == "__spec__":  # the import system's "initialising?" check: not a use
                    return object.__getattribute__(self, attr)
                object.__setattr__(self, "__class__", lazy_type)
                return getattr(self, attr)  # LazyLoader runs the module, then answers

        _AWAITING[lazy_type] = Awaiting
    return _AWAITING[lazy_type]


def main() -> None:
    global STARTED  # noqa: PLW0603 — set once, by the process's entry point
    STARTED = _IMPORTED
    gc.set_threshold(GC_THRESHOLD)
    lazy_import()
    from aether.cli import main as cli_main  # noqa: PLC0415 — start-up: the CLI (click) loads after start-up is tuned

    cli_main()


if __name__ == "__main__":
    main()
