"""A command run as a person runs it: stdin and stderr on a pseudo-terminal (the approval gate
of `aether bug approve` looks for one)."""

from __future__ import annotations

import os
import pty
import select
import subprocess


def at_a_terminal(argv: list, cwd, env: dict) -> tuple:
    """Run argv with a pseudo-terminal on stdin and stderr: (exit code, stdout, stderr)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdin=slave, stderr=slave, stdout=subprocess.PIPE, cwd=cwd, env=env)
        os.close(slave)
        out = proc.stdout.read()
        proc.wait(timeout=60)
        err = b""
        while select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(master)
    return proc.returncode, out.decode(), err.decode("utf-8", "replace").replace("\r\n", "\n")
