"""A scripted model server: enough of the Anthropic Messages API for real Claude Code, offline.

Claude Code (pointed here by `ANTHROPIC_BASE_URL`) sends every model turn as
`POST /v1/messages`. Each request is matched against a *script* — an ordered list of steps, each
a matcher (which conversation the request belongs to, what its last message holds) and a reply
(text and/or tool calls). The first unused step that matches answers the request. A request that
no step matches gets an HTTP 400 at once (Claude Code stops instead of hanging) and makes
`FakeAPI.check()` fail with a report of what arrived and which steps were waiting.

    script = [
        main().reply(bash("aether version")),
        main(tool_result_contains('"ok":true')).reply(say("Done.")),
        subagent("probe:prober").reply(say("probe finished")),
    ]

A step can answer with a fault instead — the weather Claude Code meets on a busy afternoon: a
rate limit (429, with or without `retry-after`), a usage limit (429 with the
`anthropic-ratelimit-unified-*` headers), an overload (529), a server error (500), a stream that
drops mid-answer — every time its matcher matches, or the first few times only:

    subagent("ant:builder", first_user_contains("w1")).fail(usage_limit(reset=1770000000)),   # persistent
    main().fail(overloaded(), times=2),                                                        # transient

(the faults themselves are in faults.py).
Every request is recorded (`FakeAPI.requests`, and one JSON line per request in `log_path`).
The server needs nothing outside the standard library.
"""

from __future__ import annotations

import http.server
import itertools
import json
import socket
import socketserver
import threading
import time

from .faults import Fault
from .recorded import Request

# A step's reply may carry no usage; these keep Claude Code's cost and context maths tiny.
DEFAULT_INPUT_TOKENS = 100
# Side requests (no script step needed) are answered with this text.
SIDE_REPLY = "ok"
# Claude Code's main-thread system prompt carries one of these lines (-p / interactive).
MAIN_THREAD_MARKERS = (
    "You are a Claude agent, built on Anthropic's Claude Agent SDK.",
    "You are Claude Code, Anthropic's official CLI for Claude.",
)
# ...and a subagent's system prompt carries this flag in its first (billing) block.
SUBAGENT_MARKER = "cc_is_subagent=true"
_ids = itertools.count(1)


# ---------------------------------------------------------------------------------------------
# Replies: what the scripted model says.


def say(text: str) -> dict:
    """A text block."""
    return {"type": "text", "text": str(text)}


def tool(name: str, **input) -> dict:
    """A tool_use block for any tool (`tool("Read", file_path="/x")`)."""
    return {"type": "tool_use", "name": name, "input": input}


def bash(command: str, description: str | None = None, timeout_ms: int | None = None) -> dict:
    """A `Bash` tool call."""
    args = {"command": command}
    if description:
        args["description"] = description
    if timeout_ms:
        args["timeout"] = timeout_ms
    return tool("Bash", **args)


def agent(subagent_type: str, prompt: str, description: str | None = None, background: bool = False, **extra) -> dict:
    """An `Agent` tool call (the subagent tool; `Task` in older Claude Code).

    `background=False` makes Claude Code wait for the agent: several such calls in one reply
    run in parallel and their results come back together in the next request.
    """
    args = {
        "description": description or f"{subagent_type} task",
        "prompt": prompt,
        "subagent_type": subagent_type,
        "run_in_background": background,
        **extra,
    }
    return tool("Agent", **args)


# ---------------------------------------------------------------------------------------------
# Matchers.


class Matcher:
    """A named predicate on a Request; combine with `&`, `|`, `~`; end with `.reply(...)`."""

    def __init__(self, label: str, test):
        self.label = label
        self.test = test

    def __call__(self, req: Request) -> bool:
        try:
            return bool(self.test(req))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return False

    def __and__(self, other: Matcher) -> Matcher:
        return _All([self, other])

    def __or__(self, other: Matcher) -> Matcher:
        return Matcher(f"({self.label} | {other.label})", lambda r: self(r) or other(r))

    def __invert__(self) -> Matcher:
        return Matcher(f"~{self.label}", lambda r: not self(r))

    def explain(self, req: Request) -> str:
        """`label ✓` or `label ✗` per part, to show why a step did not match."""
        return f"{self.label} {'✓' if self(req) else '✗'}"

    def reply(self, *blocks, usage: dict | None = None, label: str | None = None, delay: float = 0) -> Step:
        """The step answering a matching request with these blocks (or a function of it).

        `usage` overrides the token counts reported; `delay` (seconds) holds the answer back,
        like a slow model.
        """
        return Step(self, blocks, usage=usage, label=label, delay=delay)

    def fail(self, fault: Fault, times: int | None = None, label: str | None = None) -> Step:
        """The step answering matching requests with `fault`: every one (`times=None`: the fault
        persists), or the first `times` (then later steps answer them)."""
        if not isinstance(fault, Fault):
            raise TypeError(f"fail() takes a Fault (rate_limit(), usage_limit(), …), got {fault!r}")
        if times is not None and times < 1:
            raise ValueError("times must be at least 1 (or None: every matching request)")
        return Step(self, (), label=label or f"{self.label} -> {fault.kind}" + (f" ×{times}" if times else ""), fault=fault, times=times)

    def __repr__(self) -> str:
        return self.label


class _All(Matcher):
    def __init__(self, parts: list):
        flat = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, _All) else [p])
        self.parts = flat
        super().__init__(" & ".join(p.label for p in flat), lambda r: all(p(r) for p in flat))

    def explain(self, req: Request) -> str:
        return " & ".join(p.explain(req) for p in self.parts)


def anything() -> Matcher:
    return Matcher("anything", lambda r: True)


def in_main() -> Matcher:
    """The request belongs to the main conversation (the one that ran the prompt)."""
    return Matcher("in_main", lambda r: r.thread == "main")


def in_subagent(name: str | None = None) -> Matcher:
    """The request belongs to a subagent (`"probe:prober"`), or to any subagent when no name.

    `in_subagent("subagent")` matches subagents whose system prompt fits no known agent.
    """
    if name is None:
        return Matcher("in_subagent", lambda r: r.thread not in (None, "main", "side", "other"))
    return Matcher(f"in_subagent({name!r})", lambda r: r.thread == name)


def system_contains(text: str) -> Matcher:
    return Matcher(f"system_contains({text!r})", lambda r: text in r.system)


def first_user_contains(text: str) -> Matcher:
    """The conversation's first user message holds `text` (a subagent's task prompt)."""
    return Matcher(f"first_user_contains({text!r})", lambda r: text in r.first_user_text)


def last_contains(text: str) -> Matcher:
    """The last message (text or tool results) holds `text`."""
    return Matcher(f"last_contains({text!r})", lambda r: text in r.last_text)


def tool_result_contains(text: str) -> Matcher:
    """The last message is a tool result and one of its results holds `text`."""
    return Matcher(f"tool_result_contains({text!r})", lambda r: any(text in t["text"] for t in r.tool_results()))


def tool_results(count: int) -> Matcher:
    """The last message carries exactly `count` tool results (e.g. a whole wave's)."""
    return Matcher(f"tool_results({count})", lambda r: len(r.tool_results()) == count)


def tool_error() -> Matcher:
    """One of the last message's tool results is an error (denied, failed, …)."""
    return Matcher("tool_error", lambda r: any(t["is_error"] for t in r.tool_results()))


def turn(n: int) -> Matcher:
    """The request is the n-th model turn of its conversation (1 = first)."""
    return Matcher(f"turn({n})", lambda r: sum(1 for m in r.messages if m.get("role") == "assistant") == n - 1)


def main(*also: Matcher) -> Matcher:
    """`in_main()` and every extra matcher given."""
    return _All([in_main(), *also]) if also else in_main()


def subagent(name: str | Matcher | None = None, *also: Matcher) -> Matcher:
    """`in_subagent(name)` and every extra matcher given (`subagent(m)`: any subagent and m)."""
    if isinstance(name, Matcher):
        name, also = None, (name, *also)
    return _All([in_subagent(name), *also]) if also else in_subagent(name)


# ---------------------------------------------------------------------------------------------
# Steps and the script.


class Step:
    def __init__(
        self,
        when: Matcher,
        blocks,
        usage: dict | None = None,
        label: str | None = None,
        delay: float = 0,
        fault: Fault | None = None,
        times: int | None = None,
    ):
        self.when = when
        self.delay = delay
        self.blocks = blocks  # blocks, or one callable(request) -> block | [blocks]
        self.usage = usage
        self.label = label or when.label
        self.used_by: int | None = None  # the first request it answered
        self.fault = fault  # answered with this instead of a reply
        self.times = times  # a fault's answers (None: every matching request)
        self.hits = 0  # requests it answered

    def takes(self, req: Request) -> bool:
        """Does this step answer the request (unused, or a fault with answers left, and it matches)?"""
        if self.fault is None:
            return self.used_by is None and self.when(req)
        return (self.times is None or self.hits < self.times) and self.when(req)

    def build(self, req: Request) -> list[dict]:
        blocks = self.blocks
        if len(blocks) == 1 and callable(blocks[0]):
            made = blocks[0](req)
            blocks = made if isinstance(made, (list, tuple)) else [made]
        out = []
        for b in blocks:
            if isinstance(b, str):
                b = say(b)
            if not isinstance(b, dict) or b.get("type") not in ("text", "tool_use"):
                raise TypeError(f"a reply block must be say(...)/tool(...), got {b!r}")
            b = dict(b)
            if b["type"] == "tool_use":
                b.setdefault("id", f"toolu_e2e_{next(_ids):04d}")
            out.append(b)
        if not out:
            raise TypeError(f"step {self.label!r} replies with no blocks")
        return out

    def __repr__(self) -> str:
        return f"Step({self.label})"


# ---------------------------------------------------------------------------------------------
# The server.


def safeguard_results(request_body: dict, blocks: list[dict]) -> list | None:
    """The server-side auto-mode check's verdict on each tool call of a reply, when the request
    asks for it (`safeguards`: Claude Code in auto mode, its default for interactive sessions).
    Without a verdict Claude Code says the check "isn't getting through" and asks the person for
    every action; with `not_flagged` for each, auto mode runs as it does against the real API."""
    asked = request_body.get("safeguards") if isinstance(request_body, dict) else None
    if not (isinstance(asked, list) and any(isinstance(g, dict) and g.get("type") == "dangerous_tool_use" for g in asked)):
        return None
    verdicts = {b["id"]: {"type": "evaluated", "outcome": "not_flagged"} for b in blocks if b["type"] == "tool_use"}
    return [{"type": "dangerous_tool_use", "status": {"type": "available", "tool_uses": verdicts}}]


def _sse(blocks: list[dict], model: str, usage: dict, safeguards: list | None = None) -> bytes:
    """The streamed form of one assistant message, as Claude Code's SDK expects it."""
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    start = {
        "id": f"msg_e2e_{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
    }
    events = [{"type": "message_start", "message": start}]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            opening = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": b["text"]}]
        else:
            opening = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            raw = json.dumps(b["input"], ensure_ascii=False)
            # several pieces, as the real API streams a tool's input
            deltas = [{"type": "input_json_delta", "partial_json": raw[k : k + 64]} for k in range(0, len(raw), 64)]
        events.append({"type": "content_block_start", "index": i, "content_block": opening})
        events += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": i})
    delta = {"stop_reason": stop, "stop_sequence": None}
    if safeguards is not None:
        delta["safeguard_results"] = safeguards
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}})
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events).encode("utf-8")


def _message(blocks: list[dict], model: str, usage: dict) -> dict:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": f"msg_e2e_{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


class FakeAPI:
    """The scripted server. Use as a context manager, or `start()` / `stop()`.

    `agents` maps an agent name (`"probe:prober"`) to its system prompt (the agent file's
    body): requests whose system prompt holds that body are that agent's conversation.
    """

    def __init__(self, script: list[Step] = (), agents: dict[str, str] | None = None, log_path=None):
        self.steps = list(script)
        for s in self.steps:
            if not isinstance(s, Step):
                raise TypeError(f"script entries are steps (matcher.reply(...)), got {s!r}")
        self.agents = {k: v.strip() for k, v in (agents or {}).items() if v.strip()}
        self.requests: list[Request] = []
        self.log_path = log_path
        self._lock = threading.Lock()
        self._server = None
        self._thread = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeAPI:
        api = self

        class Handler(_Handler):
            fake = api

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True, name="fake-api")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- classification and matching --------------------------------------------------------

    def classify(self, req: Request) -> str:
        if not req.is_turn:
            return "other"
        system = req.system
        best = None
        for name, body in self.agents.items():
            if body in system and (best is None or len(body) > len(self.agents[best])):
                best = name
        if best:
            return best
        if SUBAGENT_MARKER in system:
            return "subagent"  # an agent the server was not told about (e.g. a built-in one)
        if any(m in system for m in MAIN_THREAD_MARKERS):
            return "main"
        return "side"

    def _record(self, req: Request, thread: str, error: str | None = None) -> None:
        with self._lock:
            req.index = len(self.requests) + 1
            req.thread, req.error = thread, error
            self.requests.append(req)

    def _answer(self, req: Request) -> list[dict] | None:
        """Pick the step (under the lock) and build its reply; None when nothing matches."""
        with self._lock:
            req.index = len(self.requests) + 1
            req.thread = self.classify(req)
            self.requests.append(req)
            if req.raw_body is not None or not req.messages:
                req.error = "not a JSON request with messages"
                return None
            if req.thread == "side":
                req.reply = [say(SIDE_REPLY)]
                return req.reply
            for i, step in enumerate(self.steps):
                if step.takes(req):
                    step.used_by = step.used_by or req.index
                    step.hits += 1
                    req.step = i
                    break
            else:
                req.error = "no script step matches this request"
                return None
            if step.fault is not None:
                req.fault = step.fault.kind
                return []
        try:
            req.reply = step.build(req)
        except Exception as exc:  # a bad reply function: report it like a mismatch
            req.error = f"step {req.step} ({step.label}) failed to build its reply: {exc!r}"
            req.reply = None
            return None
        return req.reply

    def usage_for(self, req: Request, blocks: list[dict]) -> dict:
        step = self.steps[req.step] if req.step is not None else None
        out = sum(len(json.dumps(b, ensure_ascii=False)) for b in blocks) // 4 + 1
        usage = {"input_tokens": DEFAULT_INPUT_TOKENS, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if step and step.usage:
            usage.update(step.usage)
        return usage

    def _log(self, req: Request) -> None:
        if self.log_path:
            with self._lock, open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(req.to_json(), ensure_ascii=False) + "\n")

    # -- results ----------------------------------------------------------------------------

    def turns(self, thread: str | None = None) -> list[Request]:
        """Model turns, in arrival order; only `thread`'s ("main", "side", an agent name)."""
        return [r for r in self.requests if r.is_turn and (thread is None or r.thread == thread)]

    @property
    def unmatched(self) -> list[Request]:
        return [r for r in self.requests if r.error]

    @property
    def unused_steps(self) -> list[tuple[int, Step]]:
        return [(i, s) for i, s in enumerate(self.steps) if s.used_by is None]

    def report(self) -> str:
        """Every request and how it was answered, then the steps still waiting."""
        lines = ["Requests the fake model server received:"]
        firsts: dict = {}  # thread -> its first user text, shown once per conversation
        previous, repeats = None, []
        for r in self.requests + [None]:
            if r is not None:
                how = (
                    f"REFUSED: {r.error}"
                    if r.error
                    else f"FAULT {r.fault} by step {r.step} ({self.steps[r.step].label})"
                    if r.fault
                    else f"step {r.step} ({self.steps[r.step].label})"
                    if r.step is not None
                    else "side request"
                )
                shown = r.summary(with_first=firsts.get(r.thread) != r.first_user_text)
                firsts[r.thread] = r.first_user_text
                if r.error and (shown[:2], how) == previous:  # Claude Code retrying
                    repeats.append(r.index)
                    continue
            if repeats:
                span = f"#{repeats[0]}" + (f"..#{repeats[-1]}" if len(repeats) > 1 else "")
                lines.append(f"  {span}: the same again (Claude Code retrying)")
                repeats = []
            if r is None:
                break
            previous = (shown[:2], how)
            lines.append(f"  #{r.index} " + "\n      ".join(shown) + f"\n      -> {how}")
        if not self.requests:
            lines.append("  (none)")
        waiting = self.unused_steps
        lines.append("Script steps never used:" if waiting else "Every script step was used.")
        refused, seen = [], set()  # the first few distinct refusals (not Claude Code's retries)
        for r in self.unmatched:
            if r.is_turn and (r.thread, r.last_text) not in seen and len(refused) < 3:
                seen.add((r.thread, r.last_text))
                refused.append(r)
        for i, s in waiting:
            lines.append(f"  step {i}: {s.label}")
            for r in refused:
                lines.append(f"      vs request #{r.index}: {s.when.explain(r)}")
        return "\n".join(lines)

    def check(self, *, all_steps_used: bool = True) -> None:
        """Fail (AssertionError with the report) on any refused request or unused step."""
        problems = []
        if self.unmatched:
            problems.append(f"{len(self.unmatched)} request(s) matched no script step")
        if all_steps_used and self.unused_steps:
            problems.append(f"{len(self.unused_steps)} script step(s) never used")
        if problems:
            raise AssertionError("; ".join(problems) + "\n" + self.report())


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:
        pass  # a client that hung up (Claude Code killed on timeout) is not news


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeAPI

    def log_message(self, *args) -> None:  # quiet: everything is recorded instead
        pass

    def _read_body(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send(self, status: int, payload: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(payload)))
        if ctype == "text/event-stream":
            self.send_header("cache-control", "no-cache")
        self.send_header("request-id", f"req_e2e_{next(_ids):04d}")
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"))

    def _fault(self, fault: Fault, req: Request) -> None:
        if not fault.drop:
            payload = json.dumps(fault.body()).encode("utf-8")
            self.send_response(fault.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for k, v in fault.headers.items():
                self.send_header(k, v)
            self.send_header("request-id", f"req_e2e_{next(_ids):04d}")
            self.end_headers()
            self.wfile.write(payload)
            return
        # a stream that starts, then the connection drops: the message's opening and no end
        whole = _sse([say("partial answer that never ends")], req.model, {"input_tokens": DEFAULT_INPUT_TOKENS, "output_tokens": 1})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        try:
            self.wfile.write(whole[: len(whole) // 3])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})

    def _handle(self, method: str) -> None:
        fake = self.fake
        body = self._read_body() if method == "POST" else None
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() != "x-api-key"}
        req = Request(0, method, self.path, headers, body)
        endpoint = req.endpoint
        if method == "POST" and endpoint == "/v1/messages/count_tokens":
            fake._record(req, "other")
            fake._log(req)
            size = len(json.dumps(req.body.get("messages", []), ensure_ascii=False))
            return self._json(200, {"input_tokens": size // 4 + 1})
        if method == "GET" and endpoint.startswith("/v1/models"):
            fake._record(req, "other")
            fake._log(req)
            return self._json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
        if not req.is_turn:
            fake._record(req, "other", f"unknown endpoint {method} {self.path}")
            fake._log(req)
            return self._error(404, f"fake model server: {req.error}")
        blocks = fake._answer(req)
        fake._log(req)
        if blocks is None:
            return self._error(400, f"fake model server: request #{req.index} (thread {req.thread}) {req.error}; see the test's report")
        if req.fault is not None:
            req.answered_at = time.monotonic()
            return self._fault(fake.steps[req.step].fault, req)
        usage = fake.usage_for(req, blocks)
        delay = fake.steps[req.step].delay if req.step is not None else 0
        if delay:
            time.sleep(delay)
        req.answered_at = time.monotonic()
        if req.body.get("stream"):
            return self._send(200, _sse(blocks, req.model, usage, safeguard_results(req.body, blocks)), "text/event-stream")
        return self._json(200, _message(blocks, req.model, usage))

    def do_POST(self) -> None:
        self._handle("POST")

    def do_GET(self) -> None:
        self._handle("GET")
