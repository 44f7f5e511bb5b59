"""Weather: an API error that ended an ant, read from what Claude Code really says (rules/weather.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from aether.rules import weather

NOW = datetime(2026, 2, 4, 10, 0, tzinfo=UTC)

# What Claude Code 2.1.328 and 2.1.332 gave, word for word (the model server's messages inside).
AGENT_429 = (
    "Agent terminated early due to an API error: API Error: Request rejected (429) · This request would exceed your "
    "account's rate limit. Please try again later. (error type rate_limit, HTTP 429, request id req_e2e_0005, model "
    "sent to the API: claude-opus-5-5)"
)
MOD_429 = "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit"
USAGE = "API Error: Request rejected (429) · You have reached your usage limit (error type rate_limit, HTTP 429)"
AGENT_529 = (
    "Agent terminated early due to an API error: API Error: 529 Overloaded. This is a server-side issue, usually temporary "
    "— try again in a moment. If it persists, check your inference gateway (127.0.0.1:42667). (error type server_error, "
    "HTTP 529, request id req_e2e_0005, model sent to the API: claude-opus-5-5)"
)
AGENT_500 = (
    "Agent terminated early due to an API error: API Error: 500 Internal server error. This is a server-side issue, "
    "usually temporary — try again in a moment. (error type server_error, HTTP 500, request id req_e2e_0005)"
)
DROPPED = (
    "Agent terminated early due to an API error: API Error: API returned an empty or malformed response (HTTP 200) — "
    "check for a proxy or gateway intercepting the request. (error type unknown, request id req_1)"
)


@pytest.mark.parametrize(
    "text, kind, status",
    [
        (AGENT_429, "rate_limit", 429),
        (MOD_429, "rate_limit", 429),
        (USAGE, "usage_limit", 429),
        (AGENT_529, "overloaded", 529),
        (AGENT_500, "api_error", 500),
        (DROPPED, "api_error", 200),
        ("API Error: 401 · Invalid API key (error type authentication_failed, HTTP 401)", "api_refused", 401),
    ],
)
def test_each_kind_of_weather_is_read_from_claude_codes_own_words(text, kind, status):
    got = weather.classify(text, NOW)
    assert got is not None and (got["kind"], got["status"]) == (kind, status)
    assert "request id" not in got["detail"] and not got["detail"].startswith("Agent terminated")
    assert got["clears"] is (kind != "api_refused")


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "Error: the ant crashed",
        "Traceback (most recent call last): ValueError: rate limit of my own code",  # an ant's words, not an API error
        "API Error: 400 · prompt is too long (error type invalid_request, HTTP 400)",  # the request itself: not weather
        "You have reached your usage limit",  # no API error around it: an ant's text
    ],
)
def test_what_is_not_an_api_error_that_clears_is_no_weather(text):
    assert weather.classify(text, NOW) is None


def test_a_stop_failure_error_word_classifies_a_bare_message():
    assert weather.classify("Request failed", NOW, error_type="overloaded")["kind"] == "overloaded"


def test_the_reset_comes_from_the_exhausted_window_of_the_session_first():
    windows = [
        {"kind": "five_hour", "percentUsed": 100, "resetsAt": "2026-02-04T13:00:00Z"},
        {"kind": "seven_day", "percentUsed": 40, "resetsAt": "2026-02-09T00:00:00Z"},  # not the one that ran out
    ]
    got = weather.classify(USAGE, NOW, rate_limits=windows)
    assert got["resets_at"] == "2026-02-04T13:00:00Z"


def test_a_reset_in_the_text_is_read_an_iso_time_or_a_clock_time_with_its_zone():
    assert weather.classify(USAGE + " · resets at 2026-02-04T12:30:00Z", NOW)["resets_at"] == "2026-02-04T12:30:00Z"
    # 3pm in Paris (UTC+1 in February) is 14:00Z, today; 9am has passed there: tomorrow
    assert weather.classify(USAGE + " · resets 3pm (Europe/Paris)", NOW)["resets_at"] == "2026-02-04T14:00:00Z"
    assert weather.classify(USAGE + " · resets 9am (Europe/Paris)", NOW)["resets_at"] == "2026-02-05T08:00:00Z"
    assert weather.classify(USAGE, NOW)["resets_at"] is None  # nothing says: an API key user's limit


def test_a_garbled_reset_is_no_reset_and_a_date_is_no_clock_time():
    assert weather.classify(USAGE, NOW, rate_limits=[{"percentUsed": 100, "resetsAt": "soon"}, "x", None])["resets_at"] is None
    assert weather.classify(USAGE + " resets 25:99", NOW)["resets_at"] is None
    assert weather.classify(USAGE + " resets 3pm (Not/AZone)", NOW)["resets_at"] is None
    assert weather.classify(USAGE + " resets at 2026-02-04", NOW)["resets_at"] is None  # a date, not 20:00


def test_a_reset_that_has_passed_while_the_limit_held_is_waited_out_by_the_backoff_not_at_once():
    past = [{"kind": "five_hour", "percentUsed": 100, "resetsAt": "2026-02-04T09:00:00Z"}]
    got = weather.classify(USAGE, NOW, rate_limits=past)
    assert got["resets_at"] == "2026-02-04T09:00:00Z"
    assert weather.next_wait(got, NOW, 0) == NOW + timedelta(seconds=300)  # never a spin of one-second waits
    assert weather.classify(USAGE + " It resets at 2026-02-04T09:59:58Z.", NOW)["resets_at"] == "2026-02-04T09:59:58Z"
    # a clock time just gone is today's (it has reset), not tomorrow's
    assert weather.classify(USAGE + " · resets 10am (UTC)", NOW + timedelta(seconds=30))["resets_at"] == "2026-02-04T10:00:00Z"


def test_an_ants_own_words_about_errors_are_no_weather():
    assert weather.classify("I added API error handling; the request to the service timed out", NOW) is None
    assert weather.classify("The network tests fail: API Error handling is missing", NOW) is None
    note = f'Agent "w1 builder" failed: {AGENT_429}'  # a background ant's failed notification
    assert weather.classify(note, NOW)["kind"] == "rate_limit"


def test_a_run_that_waits_goes_on_after_the_reset_or_after_a_growing_backoff_and_gives_up_in_the_end():
    known = {"kind": "usage_limit", "clears": True, "resets_at": "2026-02-04T13:00:00Z"}
    assert weather.next_wait(known, NOW, 0) == datetime(2026, 2, 4, 13, 1, tzinfo=UTC)
    unknown = {"kind": "rate_limit", "clears": True, "resets_at": None}
    steps = [weather.next_wait({**unknown, "waits": n}, NOW, 0) - NOW for n in range(6)]
    assert steps == [timedelta(seconds=s) for s in (300, 600, 1200, 1800, 1800, 1800)]
    assert weather.next_wait(unknown, NOW, weather.MAX_WAIT_SECONDS - 100) is None  # waited long enough: stop
    assert weather.next_wait({"kind": "api_refused", "clears": False}, NOW, 0) is None  # waiting changes nothing
