"""Errors meant for the person using FairFront.

A `UserError` carries a message that can be shown as it is, in the page or on the command line,
with no traceback: it names what is wrong and, where possible, how to fix it, in the words of
the settings both share. What to do that only the command line can say (its flags) travels
beside it, for the command line alone: a page that named `--acs-root` would send its reader
looking for a flag it does not have.
"""


class UserError(Exception):
    """Bad input or a missing resource, explained in plain words; `command_line`, when given,
    says what to do in the command line's own terms, after the message there."""

    def __init__(self, message: str, command_line: str = "") -> None:
        super().__init__(message)
        self.command_line = command_line

    def on_command_line(self) -> str:
        """The message as the command line prints it: with its own advice after it."""
        return f"{self}\n{self.command_line}" if self.command_line else str(self)
