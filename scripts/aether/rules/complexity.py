"""Which mode suits a project: the rules that turn a scan of its files and its goal into LIGHTWEIGHT,
STANDARD or FULL (pure; the scan itself is colony.complexity). See docs/decisions/modes.md."""

from __future__ import annotations

import re

LIGHTWEIGHT_MAX_FILES = 20  # LIGHTWEIGHT needs fewer source files than this


FULL_MIN_FILES = 50  # FULL when there are more source files than this


GOAL_WORD_LIMIT = 50  # LIGHTWEIGHT needs fewer goal words; FULL when there are more


# Goal words that name a complex domain (matched as whole words, case-insensitive; a trailing
# plural "s" is ignored, so "APIs" and "databases" count).
COMPLEX_GOAL_TERMS = frozenset(
    {
        "authentication",
        "authorization",
        "auth",
        "oauth",
        "jwt",
        "sso",
        "login",
        "database",
        "sql",
        "postgres",
        "postgresql",
        "mysql",
        "sqlite",
        "mongodb",
        "redis",
        "api",
        "graphql",
        "grpc",
        "microservice",
        "distributed",
        "payment",
        "billing",
        "realtime",
        "real-time",
        "websocket",
        "encryption",
        "multi-tenant",
        "concurrency",
    }
)


def goal_terms(goal: str) -> list:
    """The complex-domain terms a goal mentions, in order of first mention, lower case."""

    found: list = []
    for token in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", goal.casefold()):
        term = token if token in COMPLEX_GOAL_TERMS else token[:-1] if token.endswith("s") else None
        if term in COMPLEX_GOAL_TERMS and term not in found:
            found.append(term)
    return found


def decide(signals: dict) -> tuple:
    """(mode, reasons) from the signals, by the rules in docs/decisions/modes.md."""
    n_lang = len(signals["languages"])
    n_files = signals["source_files"]
    words = signals["goal_words"]
    full = []
    if n_lang > 1:
        full.append(f"several languages ({', '.join(signals['languages'])})")
    if n_files > FULL_MIN_FILES:
        more = "at least " if signals["capped"] else ""
        full.append(f"more than {FULL_MIN_FILES} source files ({more}{n_files})")
    if signals["has_tests"]:
        full.append("an existing test suite (" + ", ".join(signals["test_markers"][:2]) + ")")
    if signals["has_ci"]:
        full.append("CI configuration (" + ", ".join(signals["ci_markers"][:2]) + ")")
    if words > GOAL_WORD_LIMIT:
        full.append(f"a long goal ({words} words > {GOAL_WORD_LIMIT})")
    if signals["complex_goal_terms"]:
        full.append("a complex goal (mentions " + ", ".join(signals["complex_goal_terms"]) + ")")
    if full:
        return "FULL", full
    if n_files < LIGHTWEIGHT_MAX_FILES and words < GOAL_WORD_LIMIT:
        lang = signals["languages"][0] if signals["languages"] else "no code yet"
        return "LIGHTWEIGHT", [
            f"one language at most ({lang})",
            f"fewer than {LIGHTWEIGHT_MAX_FILES} source files ({n_files})",
            "no test suite",
            "no CI configuration",
            f"a short goal ({words} words < {GOAL_WORD_LIMIT})",
        ]
    reasons = []
    if n_files >= LIGHTWEIGHT_MAX_FILES:
        reasons.append(
            f"{n_files} source files: too many for LIGHTWEIGHT (< {LIGHTWEIGHT_MAX_FILES}), too few for FULL (> {FULL_MIN_FILES})"
        )
    if words >= GOAL_WORD_LIMIT:
        reasons.append(f"a goal of {words} words: too long for LIGHTWEIGHT (< {GOAL_WORD_LIMIT})")
    return "STANDARD", reasons


def assess(tree: dict, goal: str | None) -> dict:
    """complexity-detect's answer for scanned tree signals and a goal: {mode, signals, reasons}."""
    goal = goal or ""
    signals = {k: v for k, v in tree.items() if k != "paths"}
    signals["goal_words"] = len(goal.split())
    signals["complex_goal_terms"] = goal_terms(goal)
    mode, reasons = decide(signals)
    return {"mode": mode, "signals": signals, "reasons": reasons}
