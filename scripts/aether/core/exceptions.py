"""The helper's one exception type: a stable code, a message, an exit status."""

from __future__ import annotations

# Exit statuses (the `bug` group maps these onto its own codes itself).
EXIT_INPUT = 1  # usage or input errors: the caller can fix the call
EXIT_STATE = 2  # state errors: missing/corrupt file, lock timeout, illegal transition
EXIT_INTERNAL = 3  # a bug in the helper itself


class AetherError(Exception):
    """A failure the CLI reports as `{"ok":false,"error":…,"code":…}` on stderr."""

    def __init__(self, code: str, message: str, exit_code: int = EXIT_INPUT, **details):
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.details = details

    def envelope(self) -> dict:
        env = {"ok": False, "error": self.message, "code": self.code}
        env.update(self.details)
        return env


def input_error(code: str, message: str, **details) -> AetherError:
    return AetherError(code, message, EXIT_INPUT, **details)


def state_error(code: str, message: str, **details) -> AetherError:
    return AetherError(code, message, EXIT_STATE, **details)
