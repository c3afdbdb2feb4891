"""The MCP server's refusals: every one becomes a tool error (``isError: true``) whose text
starts with its stable ``code``; none ever ends the server.

    ToolRefused              a request refused or failed; ``code`` names why
    ├── PathRefused          a path the authorized workspace does not allow (path-refused)
    └── SessionGone          no running playtest, or it ended under the request (no-session)

The emulator library's own errors (``actors.emulator.recording.errors.EmulatorError``, each with a
stable ``code`` such as ``checkpoint-stale`` or ``access-refused``) pass through unchanged.
"""

from __future__ import annotations


class ToolRefused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


class PathRefused(ToolRefused):
    """An agent's path the workspace does not authorize; names the argument and the reason."""

    def __init__(self, argument: str, value: object, reason: str):
        super().__init__("path-refused", f"{argument} {value!r} refused: {reason}")
        self.argument, self.value, self.reason = argument, value, reason


class SessionGone(ToolRefused):
    def __init__(self, message: str):
        super().__init__("no-session", message)
