import json
import math

import pytest


def test_decay_half_life(project):
    assert project.run("pheromone-decay", 1, 3600, 3600).json == {"strength": 0.5}


@pytest.mark.parametrize(
    "args,expected",
    [
        ((0.8, -5, 3600), 0.8),  # negative elapsed counts as 0: never above s
        ((1, 36001, 3600), 0.0),  # past 10 half-lives
        ((1, 36000, 3600), round(2**-10, 6)),
        ((0.7, 1800, 3600), round(0.7 * math.exp(-math.log(2) / 2), 6)),
    ],
)
def test_decay_edges(project, args, expected):
    assert project.run("pheromone-decay", *args).json["strength"] == expected


@pytest.mark.parametrize("bad", [("x", 1, 1), (1, 1, 0), (1, 1, -1), ("nan", 1, 1), (1, "inf", 1), (-1, 1, 1)])
def test_decay_rejects_bad_numbers(project, bad):
    err = project.run("pheromone-decay", *bad).error
    assert err["code"] == "invalid_argument"


def test_effective(project):
    assert project.run("pheromone-effective", 0.9, 0.7).json == {"effective_signal": 0.63}


def test_emit_defaults_and_round_trip(project):
    content = 'line one\nline "two" $(rm -rf /) `x` \\ ünïcødé 🐜'
    signal = project.run("pheromone-emit", "FOCUS", "-", input=content).json
    assert signal["content"] == content
    assert (signal["type"], signal["strength"], signal["half_life_seconds"]) == ("FOCUS", 0.7, 3600)
    stored = project.load("pheromones.json")
    assert stored["version"] == 1
    assert stored["signals"][0]["content"] == content


@pytest.mark.parametrize(
    "kind,strength,half_life",
    [("INIT", 1.0, None), ("FOCUS", 0.7, 3600), ("REDIRECT", 0.9, 86400), ("FEEDBACK", 0.5, 21600)],
)
def test_emit_type_defaults(project, kind, strength, half_life):
    signal = project.run("pheromone-emit", kind.lower(), "a signal that is long enough").json
    assert (signal["type"], signal["strength"], signal["half_life_seconds"]) == (kind, strength, half_life)


def test_emit_rejects_empty_and_unknown_type(project):
    assert project.run("pheromone-emit", "FOCUS", "   ").error["code"] == "invalid_content"
    assert project.run("pheromone-emit", "SMELL", "something long enough here").error["code"] == "invalid_argument"
    assert not project.file("pheromones.json").exists()


def test_batch_reports_bad_record_and_keeps_others(project, monkeypatch):
    monkeypatch.setenv("AETHER_NOW", "2026-01-01T01:00:00Z")
    project.write(
        "pheromones.json",
        {
            "signals": [
                {
                    "id": "a",
                    "type": "FOCUS",
                    "content": "c",
                    "strength": 0.7,
                    "half_life_seconds": 3600,
                    "created_at": "2026-01-01T00:00:00Z",
                },
                {"id": "b", "type": "FOCUS", "content": "c", "strength": 0.7, "half_life_seconds": 3600, "created_at": "yesterday-ish"},
                {
                    "id": "c",
                    "type": "INIT",
                    "content": "c",
                    "strength": 1.0,
                    "half_life_seconds": None,
                    "created_at": "2020-01-01T00:00:00.123456+02:00",
                },
                {
                    "id": "d",
                    "type": "FOCUS",
                    "content": "c",
                    "strength": 0.7,
                    "half_life_seconds": 3600,
                    "created_at": "2030-01-01T00:00:00+00:00",
                },
            ]
        },
    )
    rows = {row["id"]: row for row in project.run("pheromone-batch").json}
    assert rows["a"]["current_strength"] == 0.35
    assert rows["b"]["current_strength"] is None and rows["b"]["error"]
    assert rows["c"]["current_strength"] == 1.0
    assert rows["d"]["current_strength"] == 0.7  # future created_at keeps full strength


def test_render_with_caste(project):
    project.run("pheromone-emit", "REDIRECT", "never use global mutable state")
    text = project.run("pheromone-render", "--caste", "builder").stdout
    assert "REDIRECT" in text and "PRIORITIZE" in text and "0.81" in text
    assert "█" * 18 + "░" * 2 in text


def test_validate_predicts_what_emit_accepts(project):
    from aether.state import pheromones

    short, fine = "x" * (pheromones.MIN_CONTENT_LENGTH - 1), "x" * pheromones.MAX_CONTENT_LENGTH
    long = fine + "x"
    assert project.run("pheromone-validate", short).json["reason"] == "too_short"
    assert project.run("pheromone-validate", fine).json["pass"] is True
    verdict = project.run("pheromone-validate", long).json
    assert verdict["reason"] == "too_long" and verdict["max_length"] == pheromones.MAX_CONTENT_LENGTH
    assert project.run("pheromone-emit", "FOCUS", long).error["code"] == "content_too_long"
    assert project.run("pheromone-emit", "FOCUS", fine).json["content"] == fine


def test_the_store_keeps_at_most_max_signals_dropping_the_weakest(project, monkeypatch):
    from aether.state import pheromones

    monkeypatch.setattr(pheromones, "MAX_SIGNALS", 5)
    signals = [
        {
            "id": f"s{i}",
            "type": "FOCUS",
            "content": f"signal {i}",
            "strength": strength,
            "half_life_seconds": None,
            "created_at": "2026-01-01T00:00:00Z",
            "source": "user",
            "auto": False,
        }
        for i, strength in enumerate([0.9, 0.2, 0.8, 0.3, 0.7])
    ]
    (project.data).mkdir(parents=True, exist_ok=True)
    (project.data / "pheromones.json").write_text(json.dumps({"version": 1, "signals": signals}), "utf-8")
    weak = project.run("pheromone-emit", "FEEDBACK", "-", "--strength", "0.1", input="the weakest of all, just emitted").json
    kept = [s["id"] for s in project.load("pheromones.json")["signals"]]
    assert kept == ["s0", "s2", "s3", "s4", weak["id"]]  # 0.2 went; the one just emitted stays
    project.run("pheromone-emit", "FOCUS", "-", input="another focus for the colony")
    kept = [s["id"] for s in project.load("pheromones.json")["signals"]]
    assert len(kept) == 5 and weak["id"] not in kept and "s3" in kept  # now the weakest stored goes


def test_a_brief_carries_the_strongest_signals_and_counts_the_rest(project, monkeypatch):
    from aether.rules import pheromones as rules

    monkeypatch.setattr(rules, "MAX_SHOWN", 3)
    for i, strength in enumerate(["0.2", "0.9", "0.5", "0.8", "0.3"]):
        project.run("pheromone-emit", "FOCUS", "-", "--strength", strength, input=f"signal number {i} for the colony")
    out = project.run("pheromone-render", "--json").json
    assert len(out["signals"]) == 5  # every active one, for what reads them (a FOCUS already there …)
    shown = [f"signal number {i} for the colony" for i in (1, 2, 3)]  # 0.9, 0.5, 0.8: the strongest three
    assert [line.split("  ")[-1] for line in out["text"].splitlines()[1:4]] == shown
    assert out["not_shown"] == 2 and out["text"].endswith("… and 2 weaker signal(s) not shown")
    assert "signal number 0" not in out["text"] and "signal number 4" not in out["text"]
