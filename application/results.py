"""What the service returns, and how it checks what it is given."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from factledger.application.decisions import Outcome
from factledger.application.errors import ExtractionFailure, InvalidInput, LLMUnavailable, WriteConflict
from factledger.application.audit import NO_VERDICT
from factledger.domain.values import Extraction


class NothingToWrite(Exception):
    """Raised by a change to a memory to say: record nothing, return this value instead."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class DecisionsUnavailable(Exception):
    """Deciding on an extraction needed an outside service (embeddings, a judge) that did not answer."""

    def __init__(self, extraction: Extraction, cause: LLMUnavailable) -> None:
        super().__init__(str(cause))
        self.extraction = extraction
        self.cause = cause

    def as_failure(self) -> ExtractionFailure:
        """The message's extraction, marked pending, so ``retry-failed`` decides it later."""
        return ExtractionFailure(
            f"deciding needs a service that did not answer: {self.cause}",
            extractor_id=self.extraction.extractor_id,
            raw_output=self.extraction.raw_output,
            prompt_id=self.extraction.prompt_id,
        )


@attrs.frozen
class IngestResult:
    """The spec's result for one message, plus what happened to each item."""

    user_id: str
    message_id: str
    facts: tuple[str, ...]
    preferences: tuple[str, ...]
    items: tuple[Outcome, ...]
    extractor_id: str
    notification_id: int | None
    # recorded | duplicate (message id seen before: nothing written) | extraction_failed
    status: str = "recorded"

    @property
    def facts_extracted(self) -> int:
        return len(self.facts)

    @property
    def preferences_extracted(self) -> int:
        return len(self.preferences)

    def as_dict(self) -> dict[str, Any]:
        """The spec's four keys first, then ids and outcomes."""
        return {
            "facts_extracted": self.facts_extracted,
            "preferences_extracted": self.preferences_extracted,
            "facts": list(self.facts),
            "preferences": list(self.preferences),
            "user_id": self.user_id,
            "message_id": self.message_id,
            "extractor_id": self.extractor_id,
            "status": self.status,
            "items": [item.as_dict() for item in self.items],
        }


def resolve_prefix(prefix: str, ids: Iterable[str], kind: str) -> str:
    """The one id starting with ``prefix``; a clear error when none or several do."""
    if not isinstance(prefix, str) or not prefix.strip():
        raise InvalidInput(f"{kind} id must be a non-empty string")
    prefix = prefix.strip()
    matches = [i for i in ids if i.startswith(prefix)]
    if not matches:
        raise InvalidInput(f"no {kind} id starts with {prefix!r}")
    if len(matches) > 1:
        raise InvalidInput(f"{kind} id prefix {prefix!r} is ambiguous: {', '.join(m[:12] for m in matches[:5])}")
    return matches[0]


def history_entry(event: Any) -> dict[str, Any]:
    """An event as a plain dict: its class name, version, recording time and fields.

    Typed values are spelled out as they always were in this JSON: a verdict as
    ``judge_id``, ``judge_prompt_id``, ``similarity``, ``raw_answer``; an
    extraction as a dict.
    """
    fields: dict[str, Any] = {}
    for key, value in vars(event).items():
        if key in {"originator_id", "originator_version", "timestamp", "originator_topic"}:
            continue
        if key == "verdict":
            fields.update(value.as_dict() if value is not None else NO_VERDICT)
        elif isinstance(value, Extraction):
            fields[key] = value.as_dict()
        else:
            fields[key] = value
    return {
        "version": event.originator_version,
        "event": type(event).__name__,
        "recorded_at": event.timestamp,
        **fields,
    }
