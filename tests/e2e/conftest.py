"""Fixtures for end-to-end tests in real Claude Code (see README.md in this folder)."""

from __future__ import annotations

import pytest

from .harness import ClaudeCode, SetupError, claude_binary


def _or_fail(make):
    """`make()`, or fail the test (never skip) with the setup problem's own message."""
    try:
        return make()
    except SetupError as exc:
        problem = str(exc)
    pytest.fail(problem, pytrace=False)


@pytest.fixture(scope="session")
def claude_bin():
    """The pinned Claude Code executable (run `make e2e-deps` to install it)."""
    return _or_fail(claude_binary)


@pytest.fixture
def claude(claude_bin, tmp_path, _isolated_home) -> ClaudeCode:
    """Runs `claude -p` in a throwaway project and home against a scripted model server."""
    return _or_fail(lambda: ClaudeCode(claude_bin, tmp_path, home=_isolated_home))


@pytest.fixture
def claude_mod(claude_bin, tmp_path, _isolated_home) -> ClaudeCode:
    """`claude` with the plugin's mod serving the /ant:* commands (no AETHER_RUNTIME=prompts)."""
    return _or_fail(lambda: ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime="mod"))
