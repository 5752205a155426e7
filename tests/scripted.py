"""A scripted extractor for tests that need exact control over what is extracted.

It is a fake at the edge (the Extractor port), not a patch of our internals.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from factledger.domain.memory import UserMemory
from factledger.domain.values import ExtractedFact, ExtractedPreference, Extraction, Turn

# A small conversation with every kind of decision: observe, confirm, update,
# conflict, reinforce, and messages with nothing to extract.
MESSAGES = [
    "我住在杭州",
    "我搬到上海了",
    "我在杭州工作，老板姓张，平时喜欢简短的回复",
    "我叫李雷",
    "我有车",
    "我没有车",
    "谢谢",
    "平时喜欢简短的回复",
    "我老婆姓王",
]


class ScriptedExtractor:
    """Returns, for a message, the items scripted for it (nothing for others)."""

    def __init__(self, script: dict[str, tuple[list[tuple[str, str, float]], list[tuple[str, str, float, str]]]]):
        self.script = script
        self.calls = 0

    @property
    def extractor_id(self) -> str:
        return "scripted/1"

    def extract(self, message: str, context: Sequence[Turn] = (), known_facts: Sequence[str] = ()) -> Extraction:
        self.calls += 1
        facts, prefs = self.script.get(message, ([], []))
        return Extraction(
            extractor_id=self.extractor_id,
            facts=[ExtractedFact(t, c, conf) for t, c, conf in facts],
            preferences=[ExtractedPreference(t, c, s, e) for t, c, s, e in prefs],
            raw_output=message,
        )


class ExplodingJudge:
    """A judge that fails: for testing that a failed ingest leaves nothing behind."""

    judge_id = "exploding/1"

    def judge(self, old_fact: str, new_fact: str):
        raise RuntimeError("judge unavailable")


class FlakyExtractor(ScriptedExtractor):
    """Fails (as an LLM would after its retries) on the messages in ``failing`` until healed."""

    def __init__(self, script, failing: set[str]):  # type: ignore[no-untyped-def]
        super().__init__(script)
        self.failing = set(failing)

    def extract(self, message: str, context: Sequence[Turn] = (), known_facts: Sequence[str] = ()) -> Extraction:
        from factledger.application.ports import ExtractionFailure

        if message in self.failing:
            raise ExtractionFailure("endpoint down", extractor_id=self.extractor_id, raw_output="<html>502</html>")
        return super().extract(message, context, known_facts)


def observe_unchecked(memory: UserMemory, fact_id: str, text: str, message_id: str = "m1") -> None:
    """A FactObserved recorded past every check (as an older version or a bug might have)."""
    memory.trigger_event(
        UserMemory.FactObserved,
        fact_id=fact_id,
        text=text,
        category="location",
        confidence=0.9,
        message_id=message_id,
        session_id=None,
        extractor_id="old/1",
        at=datetime(2026, 1, 5, 9, 0, tzinfo=UTC),
        conflicts_with=None,
        authority="stated",
        prompt_id=None,
        actor=None,
        rules=[],
    )
