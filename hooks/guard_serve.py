"""The guard that stays up for a session: hooks/mod.ts starts it (`sh hooks/guard.sh --serve`)
and asks it about every Bash and file-tool call, in Claude Code's own process, instead of a
Python start per call (hooks/guard.sh, ~20 ms). Same rules, same answers: `guard.judge`.

It reads one line on stdin — a token the mod made, put in every answer so that the mod knows the
answer is its guard's — listens on a Unix socket in a folder only its user can enter, prints one
JSON line on stdout — `{"socket": <path>, "pid": <its pid>}` — and answers HTTP, one request per
call:

    POST /decide   body: the PreToolUse hook's input (JSON)
                   answer: {"decision": {"permissionDecision": …, "permissionDecisionReason": …}
                            or null (no decision: Claude Code decides as usual), "nonce": <token>}

A body that is not a JSON object is answered 400 with `{"error": …}` (and the connection closed).
It ends when Claude Code ends (its parent is gone) or is told to (SIGTERM, SIGINT), and removes its
folder; the folders of guards that ended without a word (SIGKILL) go when the next one starts."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import socketserver
import stat
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import guard  # noqa: E402
from rails.state import _agent_type  # noqa: E402

# What the mod reads of it (hooks/types.ts declares the same, held by tests/test_mod_types.py).
SHAPES = {
    "GuardStarted": ("socket", "pid"),
    "GuardDecision": ("permissionDecision", "permissionDecisionReason"),
    "GuardAnswer": ("decision", "nonce"),
}
MAX_BODY = 8 << 20  # a hook input larger than this is refused (a Write of a huge file reads ~4 MiB)
PARENT_POLL_SECONDS = 2.0

_judging = threading.Lock()  # one decision at a time: the shell parser and the rules keep module state


UNKNOWN_AGENT = "unknown"  # a subagent whose type no record names: never judged as the Queen's thread


def decide(event: object) -> dict | None:
    """The decision on one call, as hooks/guard.sh would give it. A subagent's call the mod could
    not name the type of (Claude Code's list did not say) takes it from the agent's record beside
    the transcript, as Claude Code's hook input would carry it."""
    if isinstance(event, dict) and event.get("agent_id") and not event.get("agent_type"):
        event = {**event, "agent_type": _agent_type(event) or UNKNOWN_AGENT}
    with _judging:
        return guard.judge(event)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: Claude Code reuses the connection
    nonce = ""  # the mod's token (main sets it)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.path != "/decide":
            return self._answer(404, {"error": f"no such path: {self.path}"})
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            return self._answer(411, {"error": "a Content-Length is needed"})
        if not 0 <= length <= MAX_BODY:
            return self._answer(413, {"error": f"a body of {length} bytes is over {MAX_BODY}"})
        try:
            event = json.loads(self.rfile.read(length))
        except (ValueError, UnicodeDecodeError) as exc:
            return self._answer(400, {"error": f"the body is not JSON ({exc})"})
        if not isinstance(event, dict):
            return self._answer(400, {"error": "the body is not a JSON object"})
        self._answer(200, {"decision": decide(event), "nonce": self.nonce})

    def _answer(self, status: int, body: dict) -> None:
        if status != 200:
            self.close_connection = True  # a body left unread must not be read as the next request
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def address_string(self) -> str:  # a Unix socket's peer has no address
        return "claude-code"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
        pass  # stderr is Claude Code's; nothing to say per request


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 128  # a wave's ants call at once; a full backlog refuses a connection (EAGAIN)


PREFIX = "aether-guard-"


def open_server(folder: str | None = None, nonce: str = "") -> tuple[Server, str]:
    """A server on a socket in `folder` (a new private one when None, its pid noted in it); its
    socket's path."""
    if folder is None:
        _clear_ended()
        folder = tempfile.mkdtemp(prefix=PREFIX)
        with open(os.path.join(folder, "pid"), "w", encoding="ascii") as fh:
            fh.write(str(os.getpid()))
    os.chmod(folder, 0o700)
    path = os.path.join(folder, "guard.sock")
    handler = type("Handler", (_Handler,), {"nonce": nonce})
    return Server(path, handler), path


def _clear_ended() -> None:
    """The folders of this user's guards whose process has ended (killed without a word)."""
    base = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(base) if n.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        folder = os.path.join(base, name)
        try:
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            with open(os.path.join(folder, "pid"), encoding="ascii") as fh:
                pid = int(fh.read(20))
        except (OSError, ValueError):
            continue
        if pid > 0 and not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's: not ours to judge
    return True


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("guard", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def ask(path: str, event: object, timeout: float = 30.0) -> tuple[int, dict]:
    """One call asked as the mod asks it (`POST /decide`): the status and the JSON answer. For the
    tests and the bench; the mod asks through Claude Code's `$.http.fetch`."""
    connection = _UnixConnection(path, timeout)
    try:
        body = event if isinstance(event, bytes) else json.dumps(event).encode("utf-8")
        connection.request("POST", "/decide", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def _watch_parent(server: Server, parent: int) -> None:
    """Ends the server once the process that started it is gone (Claude Code ended or was killed)."""
    stop = threading.Event()
    while not stop.wait(PARENT_POLL_SECONDS):
        if os.getppid() != parent:
            server.shutdown()
            return


def main() -> int:
    parent = os.getppid()
    nonce = sys.stdin.readline(200).strip()  # the mod's token (closed stdin: none)
    server, path = open_server(nonce=nonce)
    folder = os.path.dirname(path)

    def _end(signum, frame):  # noqa: ARG001 - signal's signature
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _end)
    signal.signal(signal.SIGINT, _end)
    threading.Thread(target=_watch_parent, args=(server, parent), daemon=True).start()
    try:
        print(json.dumps({"socket": path, "pid": os.getpid()}), flush=True)
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
