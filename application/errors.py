"""Every kind of error the service raises, under one base (``FactledgerError``).

* ``InvalidInput``: the caller sent something factledger cannot use (the
  message names the field and the limit); nothing was recorded.
* ``NotFound``: no such user, item or ledger.
* ``ConfigError``: a setting (environment, config file, prompt or rules file) is wrong.
* ``LLMError``: the LLM endpoint said no — ``LLMAuthError`` (the key: fix
  the setting), ``LLMConfigError`` (the model or URL), ``LLMUnavailable``
  (an outage after every retry: try later).
* ``WriteConflict``, ``StoreBusy``: the database was too busy; nothing was
  recorded and trying again is safe.
* ``DomainError``: the aggregate refused a command (e.g. invalidating a fact twice).
"""

from __future__ import annotations

from factledger.domain.errors import DomainError, FactledgerError, FactNotActive, UnknownItem

__all__ = [
    "ConfigError",
    "DomainError",
    "EmbedderMismatch",
    "ExtractionFailure",
    "FactNotActive",
    "FactledgerError",
    "InvalidInput",
    "LLMAuthError",
    "LLMConfigError",
    "LLMError",
    "LLMRequestRejected",
    "LLMUnavailable",
    "MessageAlreadyRecorded",
    "MessageIdReused",
    "NotFound",
    "RebuildRunning",
    "StoreBusy",
    "UnknownItem",
    "WriteConflict",
]


class InvalidInput(FactledgerError, ValueError):
    """A caller passed something factledger cannot use; the message says what."""


class NotFound(FactledgerError, LookupError):
    """No such user, item or ledger."""


class ConfigError(FactledgerError, ValueError):
    """A setting has a value factledger cannot use; the message names it."""


class EmbedderMismatch(ConfigError):
    """The read model holds vectors of another embedder: rebuild it."""


class LLMError(FactledgerError):
    """The LLM (or embedding) endpoint did not give a usable answer."""


class LLMAuthError(LLMError):
    """The endpoint refused the API key: fix OPENAI_API_KEY (or the base URL)."""


class LLMConfigError(LLMError):
    """The endpoint does not know the model (or the base URL is wrong)."""


class LLMUnavailable(LLMError):
    """No answer after every retry (rate limits, server errors, timeouts, network).

    The service records a message whose extraction or decisions needed the
    endpoint as pending, for ``retry-failed``.
    """

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status = status


class LLMRequestRejected(LLMUnavailable):
    """The endpoint refused the request itself (400, 422): retrying it unchanged is useless."""


class WriteConflict(FactledgerError):
    """A user's memory kept changing under this write: every attempt met a concurrent one.

    Nothing of this write was recorded; retrying later is safe (and idempotent
    with a ``message_id``).
    """

    def __init__(self, user_id: str, attempts: int) -> None:
        super().__init__(
            f"could not record for user {user_id!r}: {attempts} attempts each met a concurrent write; "
            "nothing was recorded, try again"
        )
        self.user_id = user_id
        self.attempts = attempts


class StoreBusy(FactledgerError):
    """The store gave up waiting for a lock or a statement (its timeouts): try again later."""


class RebuildRunning(StoreBusy):
    """Another process is rebuilding this read model now."""


class MessageAlreadyRecorded(FactledgerError):
    """The store refused a save: this message id is already recorded for the user."""

    def __init__(self, message_id: str) -> None:
        super().__init__(f"message {message_id!r} is already recorded")
        self.message_id = message_id


class MessageIdReused(FactledgerError):
    """A message id already recorded for the user came again with another text: a retry sends the
    same text, so this is another message under a taken id. Nothing was recorded."""

    def __init__(self, user_id: str, message_id: str) -> None:
        super().__init__(
            f"message_id {message_id!r} is already recorded for user {user_id!r} with another text; "
            "a retry must send the same text (a new message needs a new message_id)"
        )
        self.user_id = user_id
        self.message_id = message_id


class ExtractionFailure(FactledgerError):
    """An extractor could not produce a usable answer (after its own retries).

    The service records the message anyway, with this failure as an event, so
    ``retry-failed`` can extract it later. Raise it from ``Extractor.extract``.
    """

    def __init__(self, reason: str, *, extractor_id: str, raw_output: str = "", prompt_id: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.extractor_id = extractor_id
        self.raw_output = raw_output
        self.prompt_id = prompt_id
