"""What kind of failure an error is: one table that HTTP, MCP and the CLI each render their own way.

Before this table each surface kept its own list of exception classes and they drifted: the MCP
tools called a refused domain command, a bad setting or a refused LLM request a bare "error"
while HTTP answered 409, 422 and 502. Now a surface maps an ``ErrorKind`` (never an exception
class) to its status, label or exit code, and a test holds every surface to every kind.
"""

from __future__ import annotations

from enum import StrEnum

from factledger.application.access import AccessDenied, NotAuthenticated
from factledger.application.errors import (
    ConfigError,
    DomainError,
    EmbedderMismatch,
    InvalidInput,
    LLMError,
    LLMUnavailable,
    MessageAlreadyRecorded,
    MessageIdReused,
    NotFound,
    StoreBusy,
    UnknownItem,
    WriteConflict,
)

__all__ = ["ERROR_KINDS", "ErrorKind", "kind_of"]


class ErrorKind(StrEnum):
    """A kind of failure, named as the HTTP problem type says it (``urn:factledger:problem:<kind>``)."""

    NOT_AUTHENTICATED = "not-authenticated"
    SCOPE_TOO_LOW = "scope-too-low"
    NOT_FOUND = "not-found"
    MESSAGE_ID_REUSED = "message-id-reused"
    CONFLICT = "conflict"  # the memory refused the command (e.g. invalidating a fact twice)
    BUSY = "busy"  # nothing was recorded; the same call later is safe
    READ_MODEL_MISMATCH = "read-model-mismatch"  # the read model holds another embedder's vectors
    LLM_UNAVAILABLE = "llm-unavailable"  # an outage after every retry
    LLM_REFUSED = "llm-refused"  # the endpoint refused the key, the model or the URL
    INVALID_INPUT = "invalid-input"  # the input or a setting; the message names which
    ERROR = "error"  # a FactledgerError of no kind above


# Most specific first: the first class an error is an instance of decides its kind.
ERROR_KINDS: tuple[tuple[type[Exception], ErrorKind], ...] = (
    (NotAuthenticated, ErrorKind.NOT_AUTHENTICATED),
    (AccessDenied, ErrorKind.SCOPE_TOO_LOW),
    (UnknownItem, ErrorKind.NOT_FOUND),
    (NotFound, ErrorKind.NOT_FOUND),
    (MessageIdReused, ErrorKind.MESSAGE_ID_REUSED),
    (MessageAlreadyRecorded, ErrorKind.CONFLICT),
    (DomainError, ErrorKind.CONFLICT),
    (WriteConflict, ErrorKind.BUSY),
    (StoreBusy, ErrorKind.BUSY),
    (EmbedderMismatch, ErrorKind.READ_MODEL_MISMATCH),
    (LLMUnavailable, ErrorKind.LLM_UNAVAILABLE),
    (LLMError, ErrorKind.LLM_REFUSED),
    (InvalidInput, ErrorKind.INVALID_INPUT),
    (ConfigError, ErrorKind.INVALID_INPUT),
)


def kind_of(exc: BaseException) -> ErrorKind:
    """The kind of ``exc`` (``ErrorKind.ERROR`` for one the table does not name)."""
    return next((kind for cls, kind in ERROR_KINDS if isinstance(exc, cls)), ErrorKind.ERROR)
