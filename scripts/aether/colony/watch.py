"""watch: the colony as a live view for a second terminal — `status` (its RUNNING block: each
running ant's time against its deadline, `w1 builder 3m05s/30m`; one past it says how it is
stopped), recent failures and decisions; redrawn when a state file changes.

The view polls the data folder's modification times (POLL_SECONDS; cheap `stat` calls, no
busy loop) and redraws only when one changed, or every REFRESH_SECONDS for the clocks.
Without a terminal it prints one frame and ends.
"""

from __future__ import annotations

import os
import sys
import time

from aether.colony import status
from aether.core import clock, output, paths
from aether.core.text import one_line
from aether.state import store

POLL_SECONDS = 0.5
REFRESH_SECONDS = 5  # redraw this often anyway: elapsed times move
RECENT_FAILURES = 3
RECENT_DECISIONS = 3
MIN_WIDTH = 40


def _recent_failures() -> list:
    history = store.read("failures").get("history") or []
    return [
        f"  {h.get('task')} ({h.get('worker')}): {h.get('action')} — {one_line(h.get('error') or '', 70)}"
        for h in history[-RECENT_FAILURES:]
        if isinstance(h, dict)
    ]


def _recent_decisions() -> list:
    decisions = store.read("memory").get("decisions") or []
    return [f"  {one_line(d.get('content') or '', 90)}" for d in decisions[-RECENT_DECISIONS:] if isinstance(d, dict)]


def frame(width: int = 100, now: float | None = None) -> str:
    """One screen of the live view, every line fitted to `width` columns."""
    now = clock.now() if now is None else now
    view = status.overview()
    lines = [f"Aether — {paths.project_root()} — {time.strftime('%H:%M:%S', time.localtime(now))}", ""]
    lines += view["text"].splitlines()
    if view.get("initialized"):
        for title, rows in (
            ("RECENT FAILURES", _recent_failures()),
            ("RECENT DECISIONS", _recent_decisions()),
        ):
            if rows:
                lines += ["", title] + rows
    width = max(MIN_WIDTH, width)
    return "\n".join(line if len(line) <= width else line[: width - 1] + "…" for line in lines)


def _signature() -> tuple:
    """What changed in the data folder: each file's name, size and modification time."""
    folder = paths.data_dir()
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return ()
    return tuple((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in entries if e.is_file())


def run(stream=None, interval: float = POLL_SECONDS) -> str:
    """Redraw on `stream` (a terminal) until Ctrl-C; returns the last frame."""
    stream = stream or sys.stdout
    last, drawn_at, text = None, 0.0, ""
    try:
        while True:
            sig = _signature()
            if sig != last or time.monotonic() - drawn_at >= REFRESH_SECONDS:
                cols = os.get_terminal_size(stream.fileno()).columns if stream.isatty() else 100
                text = frame(cols)
                clear = "\x1b[H\x1b[2J"
                hint = "watching — Ctrl-C to quit"
                hint = f"\x1b[2m{hint}\x1b[0m" if output.use_color(stream) else hint
                stream.write(clear + text + "\n\n" + hint + "\n")
                stream.flush()
                last, drawn_at = sig, time.monotonic()
            time.sleep(interval)
    except KeyboardInterrupt:
        stream.write("\n")
        stream.flush()
    return text
