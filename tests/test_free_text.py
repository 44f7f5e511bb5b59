"""Free text is text: a value in a free-text position is stored as given, whatever it looks
like; `--help` asks for help only as the first argument (or with no value given)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("text", ["--help", "-h"])
def test_hole_5_help_words_in_a_free_text_position_are_stored(project, text):
    project.run("colony-init", "g").json
    new_id = project.run("error-add", "build", "high", text, "1").json
    stored = project.load("errors.json")["errors"]
    assert [(e["id"], e["description"], e["phase"]) for e in stored] == [(new_id, text, 1)]
    emitted = project.run("pheromone-emit", "FOCUS", text).json
    assert emitted["content"] == text
    assert project.run("event-add", "note", "queen", text).json["content"] == text


def test_help_still_shows_help(project):
    # a real process: click caches a command's help option, and an in-process test that builds a
    # bare click.Context (tests/readme_reference.py) leaves only `--help` in that cache
    for args in (("error-add", "--help"), ("error-add", "-h"), ("plan-waves", "--approve", "--help"), ("bug", "approve", "--help")):
        result = project.sh(*args)
        assert result.code == 0 and result.stdout.startswith("Usage: aether"), args


def test_a_help_word_that_fits_no_position_is_an_error_not_help(project):
    project.run("colony-init", "g").json
    result = project.run("bug", "status", "x", "--help")
    assert result.code == 1 and json.loads(result.stderr)["code"] == "usage_error"
    assert "--help" in result.error["error"] and "\ue000" not in result.stderr


def test_dash_led_text_says_how_to_pass_it(project):
    project.run("colony-init", "g").json
    err = project.run("error-add", "build", "high", "-5 degrees").error
    assert err["code"] == "usage_error" and "goes after `--`" in err["error"]
    project.run("error-add", "build", "high", "--", "-5 degrees").json
    assert project.load("errors.json")["errors"][-1]["description"] == "-5 degrees"
