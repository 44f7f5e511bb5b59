"""What the scripted model server answers instead of a reply (fake_api.py `Matcher.fail`): the
faults Claude Code meets on a busy afternoon — a rate limit (429, with or without `retry-after`),
a usage limit (429 with the `anthropic-ratelimit-unified-*` headers), an overload (529), a server
error (500), a stream that drops mid-answer."""

from __future__ import annotations

import time


class Fault:
    """An HTTP error (status, headers, an Anthropic error body), or a stream cut mid-answer (`drop`)."""

    def __init__(self, kind: str, status: int = 200, error_type: str = "", message: str = "", headers=None, drop: bool = False):
        self.kind = kind
        self.status = status
        self.error_type = error_type
        self.message = message
        self.headers = dict(headers or {})
        self.drop = drop

    def body(self) -> dict:
        return {"type": "error", "error": {"type": self.error_type, "message": self.message}}

    def __repr__(self) -> str:
        return f"Fault({self.kind})"


def rate_limit(retry_after: float | None = None) -> Fault:
    """429: the organisation's request or token rate, with `retry-after` (seconds) when given."""
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Fault("rate_limit", 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", headers)


def usage_limit(reset: int | None = None, claim: str = "five_hour", retry_after: float | None = None, message: str | None = None) -> Fault:
    """429 with the `anthropic-ratelimit-unified-*` headers: a subscription's usage limit (rejected,
    the claim that ran out, when it resets in unix seconds); `message` replaces the error's text."""
    reset = int(reset if reset is not None else time.time() + 3600)
    window = {"five_hour": "5h", "seven_day": "7d"}.get(claim, "5h")
    headers = {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": str(reset),
        "anthropic-ratelimit-unified-representative-claim": claim,
        f"anthropic-ratelimit-unified-{window}-status": "rejected",
        f"anthropic-ratelimit-unified-{window}-reset": str(reset),
        f"anthropic-ratelimit-unified-{window}-utilization": "1.0",
        "anthropic-ratelimit-unified-fallback": "unavailable",
        "anthropic-ratelimit-unified-overage-status": "rejected",
        "anthropic-ratelimit-unified-overage-disabled-reason": "org_level_disabled",
    }
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    return Fault("usage_limit", 429, "rate_limit_error", message or "You have reached your usage limit.", headers)


def overloaded() -> Fault:
    """529: the API is overloaded."""
    return Fault("overloaded", 529, "overloaded_error", "Overloaded")


def server_error() -> Fault:
    """500: an internal error of the API."""
    return Fault("server_error", 500, "api_error", "Internal server error")


def dropped_stream() -> Fault:
    """The answer starts streaming, then the connection drops."""
    return Fault("dropped_stream", drop=True)
