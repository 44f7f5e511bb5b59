"""What callers hand the helper, checked the same way by every command: strict JSON (no lone
surrogates, NaN, Infinity or overflowing numbers), paths without NUL, blank text, bounded
inputs for text parsers and queries, and only standard JSON going out."""

from __future__ import annotations

import json
import os
import time

import pytest

from aether.colony import research
from aether.core import inputs, output
from aether.core.exceptions import AetherError
from aether.rules import critique as critique_rules

from helpers.colony import plan_waves, start_build, worker

SURROGATE = '{"status": "completed", "summary": "\\ud800"}'


def building(project):
    start_build(project)
    plan_waves(project, [worker("a", ["1.1"], writes=["a.py"])])
    project.run("spawn-start", "w1").json
    return project


def state_bytes(project) -> dict:
    return {p.name: p.read_bytes() for p in sorted(project.data.iterdir()) if p.is_file()}


# ---------------------------------------------------------------- the one strict JSON parser


@pytest.mark.parametrize(
    "text,why",
    [
        ('["\\ud800"]', "surrogate"),
        ('{"\\udfff": 1}', "surrogate"),
        ('{"a": NaN}', "NaN"),
        ("[Infinity]", "Infinity"),
        ("[-Infinity]", "Infinity"),
        ("[1e400]", "too large"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ("[1" + "0" * 5000 + "]", "digits"),
    ],
)
def test_strict_parser_refuses_what_is_not_json_data(text, why):
    with pytest.raises(inputs.JSONRefused, match=why):
        inputs.loads(text)
    with pytest.raises(AetherError) as caught:
        inputs.parse_json(text, "the plan")
    assert caught.value.code == "invalid_json" and caught.value.exit_code == 1
    assert caught.value.message.startswith("the plan is not valid JSON")


def test_strict_parser_keeps_what_is_json():
    assert inputs.loads('["\\ud83d\\udc1c", "\\u00e9", 1.5, -0, 1e308, "\\\\ud800"]') == [
        "🐜",
        "é",
        1.5,
        0,
        1e308,
        "\\ud800",
    ]  # a pair is a character; an escaped backslash is text


def test_a_lone_surrogate_is_invalid_json_and_writes_nothing(project):
    building(project)
    before = state_bytes(project)
    err = project.run("spawn-finish", "w1", "-", input=SURROGATE).error
    assert err["code"] == "invalid_json" and "surrogate" in err["error"]
    assert state_bytes(project) == before
    # the same through plan-load's parser, and in a fenced block of a model's answer
    err = project.run("plan-load", "-", "--force", input='{"phases": [{"id": 1, "name": "n\\ud800"}]}').error
    assert err["code"] == "invalid_json"
    answer = 'Done.\n```json\n{"status": "completed", "summary": "ok"}\n```\n```json\n' + SURROGATE + "\n```\n"
    assert project.run("spawn-finish", "w1", "-", input=answer).error["code"] == "invalid_json"
    assert state_bytes(project) == before


@pytest.mark.parametrize("doc", ['{"status": "completed", "summary": NaN}', '{"status": "completed", "summary": "x", "n": 1e999}'])
def test_non_finite_numbers_are_invalid_json(project, doc):
    building(project)
    assert project.run("spawn-finish", "w1", "-", input=doc).error["code"] == "invalid_json"


def test_deep_nesting_is_invalid_json(project):
    project.run("colony-init", "Build a todo API").json
    err = project.run("plan-load", "-", input="[" * 50_000 + "]" * 50_000).error
    assert err["code"] == "invalid_json" and "nested" in err["error"]


def test_store_refuses_content_utf8_json_cannot_hold(project, monkeypatch):
    from aether.state import store

    monkeypatch.chdir(project.root)
    project.run("pheromone-emit", "FOCUS", "a signal long enough to be specific").json
    before = project.file("pheromones.json").read_bytes()
    for bad in ("\ud800", float("nan"), float("inf")):
        with pytest.raises(AetherError) as caught:
            store.update("pheromones", lambda d: d["signals"][0].update(content=bad))  # noqa: B023
        assert caught.value.code == "invalid_state_change" and caught.value.exit_code == 1
        assert project.file("pheromones.json").read_bytes() == before
    assert [p.name for p in project.data.iterdir() if ".tmp." in p.name] == []


def test_a_state_file_holding_nan_is_corrupt_not_a_crash(project):
    project.run("pheromone-emit", "FOCUS", "a signal long enough to be specific").json
    path = project.file("pheromones.json")
    path.write_text(path.read_text().replace('"strength": 0.7', '"strength": NaN'))
    err = project.run("pheromone-batch").error
    assert err["code"] == "state_corrupt" and "NaN" in err["error"]
    report = project.run("validate-state", "pheromones").json
    assert report["pass"] is False and not next(c for c in report["checks"] if c["check"] == "json")["pass"]


# ---------------------------------------------------------------- only standard JSON goes out


def test_a_non_finite_result_is_refused(project):
    res = project.run("pheromone-effective", "1e308", "1e308")
    assert res.error["code"] == "invalid_argument" and res.stdout == ""
    assert project.run("pheromone-effective", "0.5", "0.8").json == {"effective_signal": 0.4}
    with pytest.raises(ValueError):
        output.dumps({"x": float("nan")})


# ---------------------------------------------------------------- paths


def test_a_nul_in_a_claimed_path_is_invalid_report(project):
    building(project)
    before = state_bytes(project)
    doc = {"status": "completed", "summary": "ok", "files_created": ["a\u0000b"]}
    err = project.run("spawn-finish", "w1", "-", input=json.dumps(doc)).error
    assert err["code"] == "invalid_report" and "NUL" in err["error"]
    assert state_bytes(project) == before


def test_a_nul_in_a_brief_path_is_rejected_not_a_crash(project):
    project.run("colony-init", "Build a todo API with FastAPI").json
    tasks = project.run("research-plan", "-", input="- FastAPI async patterns\n").json["tasks"]
    out = project.run("research-collect", "-", input=json.dumps(["a\u0000b.md"])).json
    assert out["rejected"] == [{"path": "a\u0000b.md", "problem": "invalid_path", "task": None}]
    assert out["missing"][0]["task"] == tasks[0]["id"]


def test_syntax_check_does_not_call_a_fifo_missing(project):
    os.mkfifo(project.root / "pipe.py")
    (project.root / "folder.py").mkdir()
    files = {f["path"]: f for f in project.run("syntax-check", "pipe.py", "folder.py").json["files"]}
    assert files["pipe.py"]["status"] == "not_checked" and "FIFO" in files["pipe.py"]["error"]
    assert files["folder.py"]["status"] == "not_checked" and "directory" in files["folder.py"]["error"]


# ---------------------------------------------------------------- blank text


@pytest.mark.parametrize("text", ["\u200b\u200b\u200b", "\ufeff \u2060", " \u200c\u200d\t", "\u00ad"])
def test_invisible_content_counts_as_empty(project, text):
    assert inputs.is_blank(text)
    assert project.run("pheromone-emit", "FOCUS", text).error["code"] == "invalid_content"
    assert project.run("pheromone-validate", text).json["reason"] == "empty"
    assert project.run("learning-promote", text).error["code"] == "invalid_content"
    assert project.run("event-add", "note", "queen", text).error["code"] == "invalid_content"
    assert not (project.data / "pheromones.json").exists()


@pytest.mark.parametrize("text", ["a", "é", "…", "🐜", "\u200bx"])
def test_visible_text_is_not_blank(text):
    assert not inputs.is_blank(text)


# ---------------------------------------------------------------- bounded parsers and queries


def quick(seconds, fn, *args, **kwargs):
    start = time.monotonic()
    result = fn(*args, **kwargs)
    elapsed = time.monotonic() - start
    assert elapsed < seconds, f"{elapsed:.2f}s"
    return result


@pytest.mark.parametrize("text", ["a" * 200_000, ".mdx" * 50_000, "a.md" * 50_000, "x" + ".mda" * 49_999])
def test_brief_paths_are_found_in_linear_time(text):
    quick(1.0, research._claims, text)


def test_brief_paths_in_text():
    text = "BRIEF: .aether/research/a.md.\nsee (docs/b.md) and c.mdx, d.md.bak, `e.md`, .md, x.md/y.md"
    assert research._md_paths(text) == [".aether/research/a.md", "docs/b.md", "d.md", "e.md", "x.md/y.md"]


def test_research_collect_is_bounded(project):
    project.run("colony-init", "Build a todo API with FastAPI").json
    project.run("research-plan", "-", input="- FastAPI async patterns\n").json
    big = "a" * (research.MAX_INPUT + 1)
    assert project.run("research-collect", "-", input=big).error["code"] == "content_too_long"
    quick(3.0, project.run, "research-collect", "-", input="a" * research.MAX_INPUT)


@pytest.mark.parametrize(
    "text",
    [
        " " * 19_990 + "x",
        "Score " * 3300,
        "### " * 5000,
        "Overall Score: " + "9" * 19_000,
        "**" * 9999,
        "Score" + " " * 19_990 + "x",
        "Score (" + "(" * 19_990,
        "- a\n" * 4999,
        "Score: " + " " * 19_990 + "*x",
        "# " + " " * 19_990 + "x:",
        "1. " + " " * 19_990,
    ],
)
def test_critic_feedback_is_parsed_in_linear_time(text):
    def parse():
        try:
            return critique_rules.parse(text)["score"]
        except AetherError as exc:
            return exc.code

    result = quick(1.0, parse)
    assert result == "critic_score_missing" or isinstance(result, (int, float))


def test_critic_scores_still_read():
    assert critique_rules.parse("### Overall Score\n85\n")["score"] == 85
    assert critique_rules.parse("**Overall Score:** 8.5/10")["score"] == 85
    assert critique_rules.parse("> Score (final) — 62%\n## Key Issues\n- slow\n")["key_issues"] == ["slow"]


def test_feedback_store_with_a_long_run_of_spaces_is_quick(project):
    project.run("colony-init", "Build a todo API").json
    loop = project.run("loop-init", "plan").json["loop_id"]
    res = quick(3.0, project.run, "feedback-store", loop, "-", input=" " * 19_990 + "x")
    assert res.error["code"] == "critic_score_missing"


def test_query_is_bounded_and_parser_failures_are_input_errors(project):
    from aether.state import inspect_state

    project.run("colony-init", "Build a todo API").json
    res = quick(3.0, project.run, "query", "-", input="x" * 5_000_000)
    assert res.error["code"] == "content_too_long"
    assert project.run("query", "1" + "0" * 5000).error["code"] == "content_too_long"
    assert project.run("query", "`" + "1" * 4300 + "`").error["code"] == "content_too_long"
    for expression in ("(" * 1500 + "state" + ")" * 1500, "to_number('nan')", "to_number('1e400')"):
        assert project.run("query", expression).error["code"] == "invalid_query"
    assert len("x" * inspect_state.MAX_QUERY_LENGTH) == inspect_state.MAX_QUERY_LENGTH
    assert project.run("query", "state").json == "READY"
    assert f"{inspect_state.MAX_QUERY_LENGTH:,} characters" in project.run("query", "--help").stdout


def test_help_texts_fill_every_limit_they_quote(project):
    from aether.cli import COMMANDS

    for name in sorted(COMMANDS):
        text = project.run(name, "--help").stdout
        assert "{{" not in text and "}}" not in text, name
    assert f"{research.MAX_INPUT:,}" in project.run("research-collect", "--help").stdout


# ---------------------------------------------------------------- environment and flags


@pytest.mark.parametrize("value", ["garbage", "nan", "inf", "-5", "1e20", "2026-13-45T00:00:00Z"])
def test_a_bad_pinned_clock_is_an_input_error(project, monkeypatch, value):
    project.run("colony-init", "Build a todo API").json
    before = project.file("events.json").read_bytes()
    monkeypatch.setenv("AETHER_NOW", value)
    err = project.run("event-add", "note", "queen", "something happened").error
    assert err["code"] == "invalid_environment" and "AETHER_NOW" in err["error"]
    assert project.file("events.json").read_bytes() == before


@pytest.mark.parametrize(
    "value,expected",
    [
        ("1767225600", "2026-01-01T00:00:00Z"),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("2026-01-01T01:00:00+01:00", "2026-01-01T00:00:00Z"),
    ],
)
def test_a_good_pinned_clock(project, monkeypatch, value, expected):
    monkeypatch.setenv("AETHER_NOW", value)
    assert project.run("event-add", "note", "queen", "something happened").json["timestamp"] == expected


def test_learning_add_append_and_replace_exclude_each_other(project):
    project.run("colony-init", "Build a todo API").json
    project.run("learning-add", "1", "first lesson").json
    err = project.run("learning-add", "1", "second lesson", "--append", "--replace").error
    assert err["code"] == "usage_error" and "--append" in err["error"]
    assert project.load("memory.json")["phase_learnings"][0]["learnings"] == ["first lesson"]
    assert project.run("learning-add", "1", "second lesson", "--append").json["learnings"] == ["first lesson", "second lesson"]
    assert project.run("learning-add", "1", "third", "--replace").json["learnings"] == ["third"]
