"""Errors meant for the person using FairFront.

A `UserError` carries a message that can be shown as it is, in the page or on the command line,
with no traceback: it names what is wrong and, where possible, how to fix it.
"""


class UserError(Exception):
    """Bad input or a missing resource, explained in plain words."""
