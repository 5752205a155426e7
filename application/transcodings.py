"""How the domain's typed values are stored inside events and snapshots (JSON).

The eventsourcing library's JSON transcoder knows UUIDs, decimals and
datetimes; every other value in an event or a snapshot needs a transcoding,
looked up by exact type. Tuples are stored as lists.
"""

from __future__ import annotations

from typing import Any

import attrs
from eventsourcing.persistence import JSONTranscoder, Transcoding

from factledger.domain.memory import Fact, Mention, Preference, Span
from factledger.domain.values import Extraction, Verdict


class _AttrsTranscoding(Transcoding):
    """A frozen attrs class stored as the dict of its fields."""

    def encode(self, obj: Any) -> dict[str, Any]:
        return {field.name: _listed(getattr(obj, field.name)) for field in attrs.fields(self.type)}

    def decode(self, data: dict[str, Any]) -> Any:
        return self.type(**data)


def _listed(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


class FactAsDict(_AttrsTranscoding):
    type = Fact
    name = "factledger_fact"


class PreferenceAsDict(_AttrsTranscoding):
    type = Preference
    name = "factledger_preference"


class SpanAsDict(_AttrsTranscoding):
    type = Span
    name = "factledger_span"


class MentionAsDict(_AttrsTranscoding):
    type = Mention
    name = "factledger_mention"


class VerdictAsDict(_AttrsTranscoding):
    type = Verdict
    name = "factledger_verdict"


class ExtractionAsDict(Transcoding):
    type = Extraction
    name = "factledger_extraction"

    def encode(self, obj: Extraction) -> dict[str, Any]:
        return obj.as_dict()

    def decode(self, data: dict[str, Any]) -> Extraction:
        return Extraction.from_dict(data)


def register_transcodings(transcoder: JSONTranscoder) -> None:
    kinds = (FactAsDict, PreferenceAsDict, SpanAsDict, MentionAsDict, VerdictAsDict, ExtractionAsDict)
    for transcoding in kinds:
        transcoder.register(transcoding())
