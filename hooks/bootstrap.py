#!/usr/bin/env python3
"""SessionStart hook: keep the helper's Python environment ready for a marketplace install.

A checkout set up with `make install` has `.venv`: nothing to do. A plugin installed from a
marketplace has none, so this hook builds one in the plugin's data folder,
`${CLAUDE_PLUGIN_DATA}/venvs/<version>-<source hash>`, installing the plugin's own package
from its folder, and writes that path to `<plugin root>/.venv-location`, where `bin/aether`
looks (the Bash tool has no CLAUDE_PLUGIN_DATA). The build runs in the background, so the
session starts at once; `bin/aether` waits for it. Once built, the hook is a quick no-op; a new
version (or changed sources) gets a new venv, and older ones are removed.

Markers in a venv folder: `.aether-installing` (the builder's pid), `.aether-ready` (done),
`.aether-failed` (why it failed; the next session retries). The build log: `install.log` in
the data folder. Stdlib only, and kept to old syntax: it must be able to say that the Python
it runs on is too old.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

MIN_PYTHON = (3, 11)
PYTHON_NAMES = ("python3.14", "python3.13", "python3.12", "python3.11", "python3")
READY = ".aether-ready"
INSTALLING = ".aether-installing"
FAILED = ".aether-failed"
POINTER = ".venv-location"
LOG = "install.log"
VENVS = "venvs"
READY_KEPT = 2  # ready venvs kept: the current one and the one before (a session may still use it)
STEP_TIMEOUT = 900  # seconds for one step of the build (venv, pip install)
PIP_ARGS = ("install", "--disable-pip-version-check", "--no-input", "--quiet")
LAUNCH = "from aether.startup import main; main()"  # how bin/aether starts the helper


def _say(message):
    """Tell the user something at session start (a hook's systemMessage)."""
    sys.stdout.write(json.dumps({"systemMessage": "Aether: " + message}) + "\n")


def _read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _write(path, text):
    """Replace a small file atomically."""
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    os.replace(tmp, path)


def _alive(pid_text):
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
        return True
    except (TypeError, ValueError, ProcessLookupError):
        return False
    except PermissionError:  # exists, owned by someone else
        return True


def _source_files(root):
    files = [os.path.join(root, "pyproject.toml"), os.path.join(root, ".claude-plugin", "plugin.json")]
    for folder, dirs, names in os.walk(os.path.join(root, "scripts")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info"))
        files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
    return files


def venv_key(root):
    """`<plugin version>-<hash of the package sources>`: a new key means a new venv."""
    manifest = json.loads(_read(os.path.join(root, ".claude-plugin", "plugin.json")) or "{}")
    digest = hashlib.sha256()
    for path in _source_files(root):
        digest.update(os.path.relpath(path, root).encode("utf-8") + b"\0")
        try:
            with open(path, "rb") as fh:
                digest.update(fh.read())
        except OSError:
            digest.update(b"missing")
    version = "".join(c for c in str(manifest.get("version") or "0") if c.isalnum() or c in ".-+")
    return "%s-%s" % (version, digest.hexdigest()[:12])


def find_python():
    """An interpreter new enough for the helper: this one, else one on PATH."""
    if sys.version_info[:2] >= MIN_PYTHON:
        return sys.executable
    check = "import sys; sys.exit(0 if sys.version_info[:2] >= %r else 1)" % (MIN_PYTHON,)
    for name in PYTHON_NAMES:
        path = shutil.which(name)
        if path and subprocess.call([path, "-c", check], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
            return path
    return None


def _ready_venvs(venvs):
    found = []
    for name in os.listdir(venvs) if os.path.isdir(venvs) else ():
        marker = os.path.join(venvs, name, READY)
        if os.path.exists(marker):
            found.append((os.path.getmtime(marker), os.path.join(venvs, name)))
    return [path for _, path in sorted(found, reverse=True)]


def prune(venvs, keep):
    """Remove venvs other than `keep` beyond the newest READY_KEPT, and dead partial builds."""
    ready = _ready_venvs(venvs)
    kept = set([keep] + [path for path in ready if path != keep][: READY_KEPT - 1])
    for name in os.listdir(venvs) if os.path.isdir(venvs) else ():
        path = os.path.join(venvs, name)
        if path in kept or _alive(_read(os.path.join(path, INSTALLING))):
            continue
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------- the hook


def session_start(root, data):
    if os.path.exists(os.path.join(root, ".venv", "bin", "python")):
        return  # a checkout set up with `make install`
    version = json.loads(_read(os.path.join(root, ".claude-plugin", "plugin.json")) or "{}").get("version")
    venvs = os.path.join(data, VENVS)
    target = os.path.join(venvs, venv_key(root))
    pointer = os.path.join(root, POINTER)
    if os.path.exists(os.path.join(target, READY)):
        if _read(pointer) != target:
            _write(pointer, target)
        prune(venvs, target)
        return
    if _alive(_read(os.path.join(target, INSTALLING))):
        _say("its helper is still being installed in the background (log: %s)." % os.path.join(data, LOG))
        return
    if not os.access(root, os.W_OK):
        _say("cannot set up its helper: the plugin folder %s is not writable. Run `make install` there, or reinstall the plugin." % root)
        return
    python = find_python()
    if python is None:
        _say(
            "its helper needs Python %d.%d or newer, and none was found on PATH (this one is %s). "
            "Install it, then start a new session." % (MIN_PYTHON + (sys.version.split()[0],))
        )
        return
    last_failure = _read(os.path.join(target, FAILED))
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    log = open(os.path.join(data, LOG), "ab")  # noqa: SIM115
    log.write(("\n== %s building %s with %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), target, python)).encode("utf-8"))
    log.flush()
    child = subprocess.Popen(
        [python, os.path.abspath(__file__), "--install", root, target],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        close_fds=True,
    )
    log.close()
    _write(os.path.join(target, INSTALLING), str(child.pid))
    current = _read(pointer)
    if not (current and os.path.exists(os.path.join(current, READY))):
        _write(pointer, target)  # nothing usable yet: `aether` waits for this build
    message = "installing its helper (version %s) in the background; the first `aether` call waits for it (log: %s)." % (
        version,
        os.path.join(data, LOG),
    )
    if last_failure:
        message += " The last attempt failed: " + last_failure.splitlines()[0]
    _say(message)


# ---------------------------------------------------------------- the background build


def _run(argv, what):
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, timeout=STEP_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d)" % (what, proc.returncode))


def check_install(python):
    """The installed helper whole: `aether self-check` (started as bin/aether starts it) imports
    every module of the package and every command's function. Raises RuntimeError naming what
    does not import, so an install missing a part is never marked ready."""
    proc = subprocess.run([python, "-I", "-c", LAUNCH, "self-check"], stdin=subprocess.DEVNULL, capture_output=True, timeout=STEP_TIMEOUT)
    if proc.returncode == 0:
        return
    text = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
    try:
        why = json.loads(text.splitlines()[-1])["error"]
    except (IndexError, ValueError, KeyError, TypeError):
        why = text[-800:] or "no output"
    raise RuntimeError("the installed helper's self-check failed (exit %d): %s" % (proc.returncode, why))


def install(root, target):
    """Build the venv in `target` (its folder exists, holding only our markers)."""
    import fcntl

    data = os.path.dirname(os.path.dirname(target))
    lock = open(os.path.join(data, "install.lock"), "w")  # noqa: SIM115
    fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time per plugin (parallel sessions)
    source = os.path.join(data, "source.%d" % os.getpid())
    try:
        if os.path.exists(os.path.join(target, READY)):
            return 0
        # Build from a copy: pip must not leave build/ or *.egg-info in the plugin folder.
        os.makedirs(source)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(os.path.join(root, name), os.path.join(source, name))
        shutil.copytree(
            os.path.join(root, "scripts"), os.path.join(source, "scripts"), ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
        )
        _run([sys.executable, "-m", "venv", target], "creating the venv")
        python = os.path.join(target, "bin", "python")
        _run([python, "-m", "pip"] + list(PIP_ARGS) + [source], "pip install")
        check_install(python)
        _run([python, "-I", "-c", "import tree_sitter, tree_sitter_bash"], "importing the guard's shell parser")
        _write(os.path.join(target, READY), os.path.basename(target))
        _write(os.path.join(root, POINTER), target)
        prune(os.path.dirname(target), target)
        print("ready: %s" % target, flush=True)
        return 0
    except Exception as exc:  # report every failure the same way: marker + log
        what = str(exc) if isinstance(exc, RuntimeError) else "%s: %s" % (type(exc).__name__, exc)
        reason = "%s; see %s" % (what, os.path.join(data, LOG))
        print("FAILED: " + reason, flush=True)
        try:
            _write(os.path.join(target, FAILED), reason)
        except OSError:
            pass
        return 1
    finally:
        shutil.rmtree(source, ignore_errors=True)
        try:
            os.unlink(os.path.join(target, INSTALLING))
        except OSError:
            pass
        lock.close()


def main(argv):
    if len(argv) == 4 and argv[1] == "--install":
        return install(argv[2], argv[3])
    try:
        sys.stdin.read()  # the hook's event; nothing in it is needed
    except (OSError, ValueError):
        pass
    root = os.environ.get("CLAUDE_PLUGIN_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if not data:
        return 0  # not started by Claude Code for a plugin
    try:
        os.makedirs(data, exist_ok=True)
        session_start(os.path.realpath(root), os.path.realpath(data))
    except Exception as exc:  # never block or break a session: say what went wrong
        _say("could not check its helper's install: %s: %s" % (type(exc).__name__, exc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
