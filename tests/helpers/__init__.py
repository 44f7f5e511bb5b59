"""Helpers the test modules share (plain functions and constants; the shared pytest fixtures
are in tests/conftest.py, the end-to-end ones in tests/e2e/conftest.py).

A test module never imports another test module (tests/test_suite_layout.py holds that): what
two modules use lives here, one module per concept. What only the end-to-end tests use, and
what needs real Claude Code, lives beside them in tests/e2e/ (harness.py, fake_api.py,
colony_script.py, bug_project.py).

    colony.py     a colony through the CLI: plans, a build started, waves planned, workers run,
                  build results
    drive.py      `aether next` / `aether record` and the Agent hooks: answers, a phase driven
    worktrees.py  a colony in a git repository whose builders work in their own worktrees
    kills.py      a step of the helper killed (SIGKILL, with its git) at a named point or a random
                  moment, and what must hold after: the user's HEAD, index, branches; where work is
    bugs.py       Bug Bash: the fixture project with a real bug, valid agent answers, a driver
    git.py        `git()` in a test repository, a repository with a first commit
    plugin.py     a copy of the plugin as a user receives it
    prompts.py    the shell commands a prompt file tells the Queen to run
    processes.py  processes from /proc: descendants, alive, killing a whole tree
    terminal.py   a command run with a pseudo-terminal, as a person runs it
"""
