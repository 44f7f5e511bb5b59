"""Weather: an API error that ended an ant is not the ant's failure (pure).

A rate limit, a usage limit, an overload or a server error that outlived Claude Code's own
retries means the ant did not run: nothing fails, no rung of the failure ladder is spent, the
spawn stays to be handed out, and the run stops saying so — or, when the person asked for it,
waits and goes on (docs/decisions/weather.md).

`classify` reads what each runtime really gets (probed on Claude Code 2.1.328 and 2.1.332):
- the mod: `turn.complete` with `reason: "error"` and no answer; the ant's last message (read
  with `$.session.messages`) is Claude Code's error line, e.g.
  `API Error: Request rejected (429) · You have reached your usage limit`;
- the markdown runtime: the Agent tool's error (PostToolUseFailure), or the `<summary>` of a
  background ant's failed `<task-notification>`:
  `Agent terminated early due to an API error: API Error: 529 Overloaded. … (error type
  server_error, HTTP 529, request id …)`.
A subscriber's usage limit may say when it resets ("resets 3pm (Europe/Paris)"); the mod also
hands in the session's rate-limit windows (`$.session.usage().rateLimits`, each with
`percentUsed` and `resetsAt`), which say it exactly.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from aether.core import clock

# kind → how the person reads it, and whether it clears by itself (waiting makes sense)
KINDS = {
    "usage_limit": ("Claude Code's usage limit", True),
    "rate_limit": ("the API's rate limit", True),
    "overloaded": ("the API is overloaded", True),
    "api_error": ("the API failed (a server error or a dropped connection)", True),
    "api_refused": ("the API refused the account (authentication or billing)", False),
}
WAIT_MARGIN_SECONDS = 60  # after a known reset: its clock and ours differ a little (a tenth of a shorter wait)
BACKOFF_SECONDS = (300, 600, 1200, 1800)  # a limit with no reset time: waited this long, then the last again
MAX_WAIT_SECONDS = 12 * 3600  # the longest a run waits in all before it stops instead
MAX_DETAIL = 300

# Claude Code's own error line, as each runtime gets it (an ant's words that mention errors are not)
_API = re.compile(r'^\s*(?:Agent "[^"\n]{0,200}" failed: )?(?:Agent terminated early due to an API error: )?API Error\b')
_STATUS = (
    re.compile(r"Request rejected \((\d{3})\)"),
    re.compile(r"API Error: (\d{3})\b"),
    re.compile(r"\bHTTP (\d{3})\b"),
)
_ERROR_TYPE = re.compile(r"error type ([a-z_]+)")
_USAGE = re.compile(r"usage limit|limit reached|hit your limit|limit will reset|resets? (?:at )?\d", re.I)
_OVERLOAD = re.compile(r"\boverloaded\b", re.I)
_CONNECTION = re.compile(
    r"empty or malformed response|connection error|ECONNRESET|ECONNREFUSED|socket hang up|fetch failed|timed? ?out|network",
    re.I,
)
_REFUSED = ("authentication_failed", "billing_error", "oauth_org_not_allowed", "account_on_hold")
_ISO = re.compile(r"\b(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))")
_CLOCK = re.compile(r"resets?(?: at)? (\d{1,2})(?::(\d{2}))? ?(am|pm)?(?![\d-])(?: \(([A-Za-z_]+/[A-Za-z_/]+|UTC)\))?", re.I)


def _status(text: str) -> int | None:
    for pattern in _STATUS:
        found = pattern.search(text)
        if found:
            return int(found.group(1))
    return None


def _kind(text: str, status: int | None, error_type: str | None) -> str | None:
    if error_type in _REFUSED or status in (401, 402, 403):
        return "api_refused"
    if status == 429 or error_type == "rate_limit":
        return "usage_limit" if _USAGE.search(text) else "rate_limit"
    if status == 529 or error_type == "overloaded" or _OVERLOAD.search(text):
        return "overloaded"
    if (status is not None and status >= 500) or error_type == "server_error":
        return "api_error"
    if (status is None or status < 400) and _CONNECTION.search(text):  # a dropped stream reads "(HTTP 200)"
        return "api_error"
    return None


def _detail(text: str) -> str:
    """The error line as Claude Code wrote it, without its own prefix and request ids."""
    line = " ".join(text.split())
    line = re.sub(r"^Agent terminated early due to an API error:\s*", "", line)
    line = re.sub(r",? request id [\w-]+", "", line)
    line = re.sub(r",? model sent to the API: [\w.:/-]+", "", line)
    return line[:MAX_DETAIL] + ("…" if len(line) > MAX_DETAIL else "")


def _parse_iso(value) -> datetime | None:
    """A timestamp (as clock.parse_iso reads it) as an aware datetime; None when it is none."""
    try:
        return datetime.fromtimestamp(clock.parse_iso(value), UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _clock_reset(found: re.Match, now: datetime) -> datetime | None:
    """`resets 3pm (Europe/Paris)`: the next such moment after now (its zone, else UTC)."""
    hour, minute, half, zone = int(found.group(1)), int(found.group(2) or 0), (found.group(3) or "").lower(), found.group(4)
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    tz = UTC
    if zone and zone != "UTC":
        try:
            from zoneinfo import ZoneInfo  # noqa: PLC0415 - only when a limit names a zone

            tz = ZoneInfo(zone)  # type: ignore[assignment]
        except (KeyError, ValueError, OSError):
            return None
    local = now.astimezone(tz)
    at = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at <= local - timedelta(hours=1):  # a time just gone is today's (it has reset); an earlier one, tomorrow's
        at += timedelta(days=1)
    return at.astimezone(UTC)


def resets_at(text: str, rate_limits, now: datetime) -> datetime | None:
    """When the limit lifts, where something says so: the session's exhausted rate-limit windows
    (the latest of their resets), else a time in the error's text — one that has passed says the
    limit has lifted already. None: nothing says."""
    windows = [w for w in rate_limits if isinstance(w, dict)] if isinstance(rate_limits, list) else []
    exhausted = [w for w in windows if isinstance(w.get("percentUsed"), (int, float)) and w["percentUsed"] >= 100]
    full = [t for w in exhausted if (t := _parse_iso(w.get("resetsAt"))) is not None]
    if full:
        return max(full)
    found = _ISO.search(text)
    if found:
        return _parse_iso(found.group(1))
    said = _CLOCK.search(text)
    return _clock_reset(said, now) if said else None


def classify(text, now: datetime, rate_limits=None, error_type: str | None = None) -> dict | None:
    """The weather an API error text says, or None when it is no weather (a crash, a refusal of
    the request itself, no API error at all): {kind, label, status, detail, resets_at (ISO or
    None), clears}."""
    if not isinstance(text, str) or not text.strip():
        return None
    typed = error_type if isinstance(error_type, str) else None
    if not (_API.match(text) or typed):
        return None
    found = _ERROR_TYPE.search(text)
    typed = typed or (found.group(1) if found else None)
    status = _status(text)
    kind = _kind(text, status, typed)
    if kind is None:
        return None
    label, clears = KINDS[kind]
    at = resets_at(text, rate_limits, now) if clears else None
    return {
        "kind": kind,
        "label": label,
        "status": status,
        "detail": _detail(text),
        "resets_at": at.isoformat().replace("+00:00", "Z") if at else None,
        "clears": clears,
    }


def next_wait(weather: dict, now: datetime, waited: float) -> datetime | None:
    """When a run that waits out the weather goes on: at its reset (plus a margin), else after
    the next backoff step; None when it must stop instead (it does not clear by itself, or the
    run has waited MAX_WAIT_SECONDS in all)."""
    if not weather.get("clears"):
        return None
    at = _parse_iso(weather.get("resets_at"))
    if at is not None and at > now:
        margin = min(WAIT_MARGIN_SECONDS, max(1.0, (at - now).total_seconds() / 10))
        until = at + timedelta(seconds=margin)
    else:  # no reset time, or one that has passed while the limit still held: a growing pause
        step = min(int(weather.get("waits") or 0), len(BACKOFF_SECONDS) - 1)
        until = now + timedelta(seconds=BACKOFF_SECONDS[step])
    if waited + max(0.0, (until - now).total_seconds()) > MAX_WAIT_SECONDS:
        return None
    return until


def when(at_iso: str | None, now: datetime) -> str:
    """`13:00 UTC (in 2h59m)`, or '' for no time."""
    at = _parse_iso(at_iso)
    if at is None:
        return ""
    left = int(max(0.0, (at - now).total_seconds()))
    span = f"{left // 3600}h{left % 3600 // 60:02d}m" if left >= 3600 else f"{left // 60}m{left % 60:02d}s"
    return f"{at.strftime('%H:%M')} UTC (in {span})"


def line(weather: dict, now: datetime) -> str:
    """One line for the status band and `aether watch`: what holds the run, and until when."""
    head = f"held by {weather.get('label') or 'the weather'}"
    if weather.get("until"):
        return f"{head} · waiting until {when(weather['until'], now)}"
    reset = _parse_iso(weather.get("resets_at"))
    if reset is not None and reset > now:
        return f"{head} · resets {when(weather['resets_at'], now)}"
    return head


def stop_text(weather: dict, who: str, command: str | None, now: datetime, wait_hint: str | None) -> str:
    """What a run stopped by the weather tells the person: what held it, that nothing failed, when
    it lifts (where anything says), and the command that goes on. `wait_hint`: `offer` (say how a
    run waits by itself), `needs_mod` (it was asked to wait, but nothing here can), or None."""
    status = f" (HTTP {weather['status']})" if weather.get("status") else ""
    label = weather.get("label") or "an API error"
    head = (
        f"Stopped by {label}{status}: {who} did not run."
        if weather.get("clears")
        else (f"Stopped: {label}{status} — {who} did not run, and no ant will until that is fixed.")
    )
    lines = [
        head,
        f"  Claude Code said: {weather.get('detail') or '(nothing)'}",
        "Nothing failed and nothing is lost: the answers that came are recorded, and what did not run is "
        "handed out again when the command runs again.",
    ]
    reset = _parse_iso(weather.get("resets_at"))
    if reset is not None and reset <= now:
        lines.append(f"It has reset already ({reset.strftime('%H:%M')} UTC): the command can go on now.")
    elif reset is not None:
        lines.append(f"The limit resets at {when(weather['resets_at'], now)}.")
    elif weather.get("clears"):
        lines.append("Nothing says when it lifts (with an API key Claude Code gives no reset time): try again in a few minutes.")
    else:
        lines.append("It will not lift by itself: fix the account or key Claude Code uses first.")
    if command:
        lines.append(f"To go on: {command}" + (" (after it lifts)" if weather.get("clears") else ""))
    if wait_hint == "offer" and weather.get("clears"):
        lines.append("To let a run wait for it by itself: /ant:run --wait (or `run: {on_limit: wait}` in .aether/config.yaml).")
    elif wait_hint == "needs_mod" and weather.get("clears"):
        lines.append("This run was asked to wait, but only the plugin's mod can wait (the markdown commands have no clock).")
    return "\n".join(lines)
