"""steps: the steps of a build and a plan — build-start/finish, spawn-start/finish, waves, reviews, loops, worktrees."""
