"""Processes, read from /proc: a process's descendants, its command line, whether it runs, and
killing a whole tree so that nothing it started survives (Linux)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

# What a scripted ant runs to be busy when its session is killed (is_sleeper finds it).
SLEEP_CODE = "import time; time.sleep(90)"
SLEEP = f'python3 -c "{SLEEP_CODE}"'


def _children() -> dict:
    """{parent pid: [child pids]} of every process now (from /proc)."""
    tree: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(pid: int) -> list[int]:
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def argv_of(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return []


def is_sleeper(argv: list[str]) -> bool:
    """The ant's own `python3 -c …sleep…` (not the shell that runs it: it names it too)."""
    return len(argv) > 2 and os.path.basename(argv[0]).startswith("python3") and argv[1:3] == ["-c", SLEEP_CODE]


def alive(pid: int) -> bool:
    """The process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def send(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def kill_tree(pid: int) -> None:
    """SIGKILL `pid` and every process it started: stopped first, again and again until no new
    process appears (a stopped process forks nothing, and stays its children's parent), so no
    shell or tool the Bash tool runs, in whatever process group, survives as an orphan."""
    stopped: set = set()
    while True:
        found = {pid, *descendants(pid)} - stopped
        if not found:
            break
        for p in found:
            send(p, signal.SIGSTOP)
        stopped |= found
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for p in stopped:
        send(p, signal.SIGKILL)


def dead_pid() -> int:
    """The pid of a process that ran and has ended (a Claude Code that was killed, say)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(done.stdout)
