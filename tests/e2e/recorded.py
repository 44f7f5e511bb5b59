"""One request Claude Code sent the scripted model server (fake_api.py), with the accessors scripts
and assertions need: its thread, system prompt, messages, tool results and uses, and how it was
answered."""

from __future__ import annotations

import time


def _text_of(content) -> str:
    """All text inside a message content (string, blocks, tool_result contents), joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if content.get("type") == "tool_result":
            return _text_of(content.get("content"))
        return content.get("text", "") if isinstance(content.get("text"), str) else ""
    if isinstance(content, list):
        return "\n".join(t for t in (_text_of(c) for c in content) if t)
    return ""


class Request:
    """One request Claude Code sent, with the accessors scripts and assertions need."""

    def __init__(self, index: int, method: str, path: str, headers: dict, body):
        self.index = index
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body if isinstance(body, dict) else {}
        self.raw_body = body if not isinstance(body, dict) else None
        self.thread: str | None = None  # "main", an agent name ("probe:prober"), "side", "other"
        self.step: int | None = None  # index of the script step that answered it
        self.reply: list | None = None  # the blocks sent back
        self.error: str | None = None  # why it was refused
        self.fault: str | None = None  # the fault it was answered with (a kind: usage_limit, …)
        self.received_at = time.monotonic()
        self.answered_at: float | None = None  # when the reply was sent

    @property
    def endpoint(self) -> str:
        return self.path.split("?", 1)[0]

    @property
    def is_turn(self) -> bool:
        """A model turn (`POST /v1/messages`), as opposed to count_tokens and the like."""
        return self.method == "POST" and self.endpoint == "/v1/messages"

    @property
    def model(self) -> str:
        return self.body.get("model", "")

    @property
    def system(self) -> str:
        """The system prompt as one string (all system blocks joined)."""
        return _text_of(self.body.get("system"))

    @property
    def messages(self) -> list:
        return self.body.get("messages") or []

    @property
    def tools(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools") or [] if isinstance(t, dict)]

    @property
    def first_user_text(self) -> str:
        """Text of the first user message (for a subagent: the Agent call's prompt)."""
        for m in self.messages:
            if m.get("role") == "user":
                return _text_of(m.get("content"))
        return ""

    @property
    def last(self) -> dict:
        """The last user or assistant message (Claude Code also sends `system` notes)."""
        for m in reversed(self.messages):
            if m.get("role") in ("user", "assistant"):
                return m
        return {}

    @property
    def last_text(self) -> str:
        """All text in the last message, tool results included."""
        return _text_of(self.last.get("content"))

    def user_texts(self) -> list[str]:
        """The text of every user message, in order (tool results included)."""
        return [_text_of(m.get("content")) for m in self.messages if m.get("role") == "user"]

    def tool_results(self, *, last_only: bool = True) -> list[dict]:
        """`{tool_use_id, text, is_error}` for the tool results in the last message (or all)."""
        found = []
        for m in [self.last] if last_only else self.messages:
            content = m.get("content")
            if m.get("role") != "user" or not isinstance(content, list):
                continue
            for c in content:
                if isinstance(c, dict) and c.get("type") == "tool_result":
                    found.append({"tool_use_id": c.get("tool_use_id"), "text": _text_of(c), "is_error": bool(c.get("is_error"))})
        return found

    def tool_uses(self) -> list[dict]:
        """Every tool_use block the assistant sent earlier in this conversation."""
        return [
            c
            for m in self.messages
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for c in m["content"]
            if isinstance(c, dict) and c.get("type") == "tool_use"
        ]

    def to_json(self) -> dict:
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "thread": self.thread,
            "step": self.step,
            "error": self.error,
            "fault": self.fault,
            "reply": self.reply,
            "headers": self.headers,
            "body": self.body if self.raw_body is None else self.raw_body,
        }

    def summary(self, width: int = 160, with_first: bool = True) -> list[str]:
        """Readable lines: thread, model, the last message (and the first user message)."""
        if not self.is_turn:
            return [f"{self.method} {self.path}"]
        last = self.last
        content = last.get("content")
        kinds = ",".join(sorted({c.get("type", "?") for c in content if isinstance(c, dict)})) if isinstance(content, list) else "text"
        text = " ".join(self.last_text.split())
        if len(text) > width:
            text = text[:width] + "…"
        lines = [f"thread={self.thread} model={self.model} messages={len(self.messages)}", f"last {last.get('role')} [{kinds}]: {text}"]
        if with_first:
            lines.append(f"first user (end): …{' '.join(self.first_user_text.split())[-width:]}")
        return lines
