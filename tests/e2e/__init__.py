"""End-to-end tests in real Claude Code against a scripted model server (see README.md)."""
