"""The scripted model server on its own, spoken to over HTTP (no Claude Code needed)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from .fake_api import (
    SUBAGENT_MARKER,
    FakeAPI,
    agent,
    bash,
    first_user_contains,
    in_subagent,
    main,
    say,
    subagent,
    tool_result_contains,
    turn,
)
from .faults import dropped_stream, overloaded, rate_limit, server_error, usage_limit

SDK_LINE = "You are a Claude agent, built on Anthropic's Claude Agent SDK."
MAIN_SYSTEM = [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328;"}, {"type": "text", "text": SDK_LINE}]
AGENT_BODY = "You are the tester agent.\nReply briefly."


def body(messages, system=MAIN_SYSTEM, stream=False, **extra):
    return {"model": "claude-test", "max_tokens": 100, "system": system, "messages": messages, "stream": stream, **extra}


def user(*content):
    return {"role": "user", "content": list(content)}


def post(api, payload, path="/v1/messages", headers_out: dict | None = None):
    """(status, parsed JSON or list of SSE events); the response's headers go in `headers_out`."""
    req = urllib.request.Request(
        api.url + path, data=json.dumps(payload).encode(), headers={"content-type": "application/json", "x-api-key": "k"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw, ctype, status = resp.read().decode(), resp.headers["content-type"], resp.status
    except urllib.error.HTTPError as exc:
        if headers_out is not None:
            headers_out.update({k.lower(): v for k, v in exc.headers.items()})
        return exc.code, json.loads(exc.read())
    if ctype == "text/event-stream":
        events = []
        for chunk in raw.strip().split("\n\n"):
            name, data = chunk.split("\n", 1)
            assert name.startswith("event: ") and data.startswith("data: ")
            parsed = json.loads(data[len("data: ") :])
            assert parsed["type"] == name[len("event: ") :]
            events.append(parsed)
        return status, events
    return status, json.loads(raw)


def test_streamed_reply_has_the_event_sequence_and_rebuilds_the_tool_input():
    command = "aether pheromone-emit FOCUS - <<'EOF'\n\"quoted\" ünïcødé 🐜 $(no)\nEOF" + "x" * 300
    with FakeAPI([main().reply(say("On it."), bash(command, "emit"))]) as api:
        status, events = post(api, body([user({"type": "text", "text": "go"})], stream=True))
    assert status == 200
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use"]
    assert starts[1]["name"] == "Bash" and starts[1]["id"].startswith("toolu_")
    partial = "".join(e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta" and e["index"] == 1)
    assert len([e for e in events if e.get("index") == 1 and e["type"] == "content_block_delta"]) > 1
    assert json.loads(partial) == {"command": command, "description": "emit"}
    text = [e["delta"]["text"] for e in events if e.get("delta", {}).get("type") == "text_delta"]
    assert text == ["On it."]
    assert api.requests[0].reply[1]["input"]["command"] == command


def test_plain_reply_is_one_message_and_stop_reason_follows_the_blocks():
    with FakeAPI([main().reply(say("Hello.")), main().reply(agent("ant:builder", "build it"), agent("ant:watcher", "check"))]) as api:
        _, first = post(api, body([user({"type": "text", "text": "hi"})]))
        _, second = post(api, body([user({"type": "text", "text": "again"})]))
    assert first["type"] == "message" and first["stop_reason"] == "end_turn"
    assert first["content"] == [{"type": "text", "text": "Hello."}]
    assert second["stop_reason"] == "tool_use"
    assert [(b["name"], b["input"]["subagent_type"], b["input"]["run_in_background"]) for b in second["content"]] == [
        ("Agent", "ant:builder", False),
        ("Agent", "ant:watcher", False),
    ]
    assert len({b["id"] for b in second["content"]}) == 2


def test_threads_are_told_apart_by_system_prompt():
    sub_system = [
        {"type": "text", "text": f"billing; {SUBAGENT_MARKER};"},
        {"type": "text", "text": SDK_LINE},
        {"type": "text", "text": AGENT_BODY + "\n\nNotes: added by Claude Code."},
    ]
    unknown_sub = [{"type": "text", "text": f"{SUBAGENT_MARKER}"}, {"type": "text", "text": "Other."}]
    script = [
        subagent("t:tester").reply(say("from tester")),
        in_subagent("subagent").reply(say("from an unknown agent")),
        main().reply(say("from main")),
    ]
    with FakeAPI(script, agents={"t:tester": AGENT_BODY}) as api:
        msg = [user({"type": "text", "text": "task"})]
        replies = [
            post(api, body(msg, system=s))[1]["content"][0]["text"]
            for s in (sub_system, unknown_sub, MAIN_SYSTEM, [{"type": "text", "text": "Title?"}])
        ]
    assert replies == ["from tester", "from an unknown agent", "from main", "ok"]
    assert [r.thread for r in api.requests] == ["t:tester", "subagent", "main", "side"]
    api.check()  # side requests need no step


def test_steps_are_taken_in_order_once_each_and_matchers_read_tool_results():
    script = [
        main(turn(1)).reply(bash("aether version")),
        main(tool_result_contains('"ok":true')).reply(say("saw ok")),
        main().reply(lambda r: say(f"turn with {len(r.messages)} messages")),
    ]
    with FakeAPI(script) as api:
        start = [user({"type": "text", "text": "go"})]
        _, a = post(api, body(start))
        call = a["content"][0]
        history = start + [
            {"role": "assistant", "content": [call]},
            user({"type": "tool_result", "tool_use_id": call["id"], "content": '{"ok":true,"result":"0.1.0"}'}),
        ]
        _, b = post(api, body(history))
        _, c = post(api, body(history))
    assert call["input"] == {"command": "aether version"}
    assert b["content"][0]["text"] == "saw ok"
    assert c["content"][0]["text"] == "turn with 3 messages"  # step 1 was used up
    assert [r.step for r in api.requests] == [0, 1, 2]
    assert api.requests[1].tool_results() == [{"tool_use_id": call["id"], "text": '{"ok":true,"result":"0.1.0"}', "is_error": False}]
    api.check()


def test_an_unmatched_request_gets_a_400_and_check_reports_it():
    script = [main(first_user_contains("build")).reply(say("building"))]
    with FakeAPI(script) as api:
        status, err = post(api, body([user({"type": "text", "text": "plan the colony"})]))
        post(api, body([user({"type": "text", "text": "plan the colony"})]))  # a retry
    assert status == 400 and err["type"] == "error"
    assert "no script step matches" in err["error"]["message"]
    assert api.unmatched == api.requests and len(api.requests) == 2
    with pytest.raises(AssertionError) as failed:
        api.check()
    report = str(failed.value)
    assert "plan the colony" in report and report.count("REFUSED") == 1
    assert "#2: the same again (Claude Code retrying)" in report
    assert report.count("in_main ✓ & first_user_contains('build') ✗") == 1


def test_unused_steps_fail_the_check_unless_told_otherwise():
    with FakeAPI([main().reply(say("a")), main().reply(say("b"))]) as api:
        post(api, body([user({"type": "text", "text": "x"})]))
    with pytest.raises(AssertionError, match="1 script step"):
        api.check()
    api.check(all_steps_used=False)


def test_side_endpoints_answer_and_unknown_ones_are_refused_and_recorded():
    with FakeAPI([]) as api:
        status, counted = post(api, body([user({"type": "text", "text": "count me"})]), "/v1/messages/count_tokens")
        with urllib.request.urlopen(api.url + "/v1/models?limit=5", timeout=10) as resp:
            models = json.loads(resp.read())
        missing, err = post(api, {"x": 1}, "/v1/unknown")
    assert status == 200 and counted["input_tokens"] > 0
    assert models["data"] == []
    assert missing == 404 and "unknown endpoint" in err["error"]["message"]
    assert [r.thread for r in api.requests] == ["other", "other", "other"]
    assert "x-api-key" not in api.requests[0].headers  # the key is never recorded
    with pytest.raises(AssertionError, match="matched no script step"):
        api.check()


def test_a_broken_reply_function_is_reported_not_crashed():
    with FakeAPI([main().reply(lambda r: 42)]) as api:
        status, err = post(api, body([user({"type": "text", "text": "x"})]))
    assert status == 400 and "failed to build its reply" in err["error"]["message"]
    assert "failed to build its reply" in api.unmatched[0].error
    assert "REFUSED: step 0" in api.report()


def test_a_request_that_is_not_json_is_refused():
    with FakeAPI([main().reply(say("x"))]) as api:
        req = urllib.request.Request(api.url + "/v1/messages", data=b"{not json", headers={"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
    assert refused.value.code == 400
    assert api.unmatched[0].raw_body == "{not json" and api.unused_steps


def test_script_entries_must_be_steps():
    with pytest.raises(TypeError, match="steps"):
        FakeAPI([main()])


def test_concurrent_requests_are_all_recorded_with_distinct_indexes(tmp_path):
    log = tmp_path / "requests.jsonl"
    script = [subagent("t:tester", first_user_contains(f"task {i}")).reply(say(f"done {i}")) for i in range(12)]
    system = [{"type": "text", "text": SUBAGENT_MARKER}, {"type": "text", "text": AGENT_BODY}]
    answers = {}

    def ask(i):
        answers[i] = post(api, body([user({"type": "text", "text": f"task {i}"})], system=system))[1]

    with FakeAPI(script, agents={"t:tester": AGENT_BODY}, log_path=log) as api:
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    got = {i: a["content"][0]["text"] for i, a in answers.items()}
    assert got == {i: f"done {i}" for i in range(12)}
    assert sorted(r.index for r in api.requests) == list(range(1, 13))
    logged = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert sorted(e["index"] for e in logged) == list(range(1, 13))
    api.check()


@pytest.mark.parametrize(
    "fault, status, kind, header",
    [
        (rate_limit(), 429, "rate_limit_error", None),
        (rate_limit(retry_after=7), 429, "rate_limit_error", ("retry-after", "7")),
        (usage_limit(reset=1770000000), 429, "rate_limit_error", ("anthropic-ratelimit-unified-status", "rejected")),
        (overloaded(), 529, "overloaded_error", None),
        (server_error(), 500, "api_error", None),
    ],
    ids=["429", "429-retry-after", "usage-limit", "529", "500"],
)
def test_a_fault_answers_its_status_headers_and_error_body_every_time_it_persists(fault, status, kind, header):
    with FakeAPI([main().fail(fault)]) as api:
        answers = []
        for _ in range(3):
            seen: dict = {}
            answers.append((post(api, body([user({"type": "text", "text": "go"})]), headers_out=seen), seen))
    for (code, payload), seen in answers:
        assert code == status and payload == {"type": "error", "error": {"type": kind, "message": payload["error"]["message"]}}
        if header:
            assert seen.get(header[0]) == header[1]
    assert [r.fault for r in api.requests] == [fault.kind] * 3
    api.check()  # a fault that answered is a used step


def test_a_usage_limit_names_its_reset_and_claim():
    seen: dict = {}
    with FakeAPI([main().fail(usage_limit(reset=1770001234, claim="seven_day"))]) as api:
        post(api, body([user({"type": "text", "text": "go"})]), headers_out=seen)
    assert seen["anthropic-ratelimit-unified-reset"] == "1770001234"
    assert seen["anthropic-ratelimit-unified-representative-claim"] == "seven_day"
    assert seen["anthropic-ratelimit-unified-7d-status"] == "rejected"


def test_a_transient_fault_answers_its_first_requests_then_the_script_goes_on():
    with FakeAPI([main().fail(overloaded(), times=2), main().reply(say("Back."))]) as api:
        codes = [post(api, body([user({"type": "text", "text": "go"})]))[0] for _ in range(3)]
    assert codes == [529, 529, 200]
    assert [r.fault for r in api.requests] == ["overloaded", "overloaded", None]
    assert "FAULT overloaded" in api.report()
    api.check()


def test_a_dropped_stream_starts_and_never_ends():
    with FakeAPI([main().fail(dropped_stream())]) as api:
        req = urllib.request.Request(
            api.url + "/v1/messages",
            data=json.dumps(body([user({"type": "text", "text": "go"})], stream=True)).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read().decode()
    assert raw.startswith("event: message_start") and "message_stop" not in raw
    assert api.requests[0].fault == "dropped_stream"


def test_fail_takes_a_fault_and_a_positive_count():
    with pytest.raises(TypeError, match="Fault"):
        main().fail("429")
    with pytest.raises(ValueError, match="times"):
        main().fail(overloaded(), times=0)
