"""The error a galley command raises for a user's mistake: printed as one line, exit status 2."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A mistake in what the user asked for; printed without a traceback."""
