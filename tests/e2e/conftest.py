"""Fixtures for end-to-end tests in real Claude Code (see README.md in this folder)."""

from __future__ import annotations

import pytest

from .harness import CLAUDE_VERSION, OLDEST_VERSION, ClaudeCode, SetupError, claude_binary


def _or_fail(make):
    """`make()`, or fail the test (never skip) with the setup problem's own message."""
    try:
        return make()
    except SetupError as exc:
        problem = str(exc)
    pytest.fail(problem, pytrace=False)


def pytest_generate_tests(metafunc):
    """A test marked `oldest` runs twice: on the newest Claude Code and on the oldest release
    Aether supports (ids `claude-<release>`: `-k <release>` picks one)."""
    if metafunc.definition.get_closest_marker("oldest") and "claude_release" in metafunc.fixturenames:
        releases = [CLAUDE_VERSION, OLDEST_VERSION]
        metafunc.parametrize("claude_release", releases, indirect=True, ids=[f"claude-{v}" for v in releases])


@pytest.fixture
def claude_release(request) -> str:
    """The Claude Code release a test runs on: the newest, unless the test is marked `oldest`
    (then each release in turn)."""
    return getattr(request, "param", CLAUDE_VERSION)


@pytest.fixture
def claude_bin(claude_release):
    """The pinned Claude Code executable of the test's release (`make e2e-deps` installs them)."""
    return _or_fail(lambda: claude_binary(claude_release))


@pytest.fixture
def claude(claude_bin, tmp_path, _isolated_home) -> ClaudeCode:
    """Runs `claude -p` in a throwaway project and home against a scripted model server."""
    return _or_fail(lambda: ClaudeCode(claude_bin, tmp_path, home=_isolated_home))


@pytest.fixture
def claude_mod(claude_bin, tmp_path, _isolated_home) -> ClaudeCode:
    """`claude` with the plugin's mod serving the /ant:* commands (no AETHER_RUNTIME=prompts)."""
    return _or_fail(lambda: ClaudeCode(claude_bin, tmp_path, home=_isolated_home, runtime="mod"))


@pytest.fixture(params=["mod", "prompts"])
def runtime_claude(request):
    """`claude` under each runtime: the plugin's mod, and the markdown commands with the shell hooks."""
    return request.getfixturevalue("claude_mod" if request.param == "mod" else "claude")
