"""The root of factledger's exceptions, and the domain's refusals.

Every error factledger raises on purpose is a ``FactledgerError``, so a
backend can catch them all in one place; ``factledger.application.errors``
adds the kinds the service raises (bad input, not found, configuration, LLM).
"""

from __future__ import annotations


class FactledgerError(Exception):
    """Base of every error factledger raises on purpose."""


class DomainError(FactledgerError):
    """A command the aggregate refuses."""


class UnknownItem(DomainError, LookupError):
    """No fact or preference with this id belongs to the user."""


class FactNotActive(DomainError):
    """The fact was invalidated: it can be neither confirmed nor invalidated again."""


class DuplicateMessage(DomainError):
    """This message id was already ingested for the user."""
