"""What the offline rules make of a known statement followed by a change (shared by the rule tests)."""

from __future__ import annotations

from factledger.domain.values import ExtractedFact, RelationVerdict
from factledger.infrastructure.offline import RuleExtractor
from factledger.infrastructure.offline.judge import RuleJudge


def replacement(
    extractor: RuleExtractor, judge: RuleJudge, first: str, then: str, wanted: str
) -> tuple[ExtractedFact, RelationVerdict]:
    """The fact read from ``then`` that names a fact read from ``first`` and says ``wanted``,
    and the judge's verdict on the pair (asserting there is one)."""
    known = [f.text for f in extractor.extract(first).facts]
    assert known, first
    facts = extractor.extract(then, known_facts=known).facts
    replacing = [f for f in facts if f.conflicts_with in known and wanted in f.text]
    assert replacing, [(f.text, f.conflicts_with) for f in facts]
    return replacing[0], judge.judge(replacing[0].conflicts_with or "", replacing[0].text)


def said_against(extractor: RuleExtractor, known: list[str], then: str) -> list[tuple[str, str | None]]:
    """(text, the known fact it ends) of each fact read from ``then`` against ``known``."""
    return [(f.text, f.conflicts_with) for f in extractor.extract(then, known_facts=known).facts]


def said_after(extractor: RuleExtractor, first: str, then: str) -> tuple[list[str], list[tuple[str, str | None]]]:
    """The facts read from ``first``, and ``said_against`` them of ``then``."""
    known = [f.text for f in extractor.extract(first).facts]
    return known, said_against(extractor, known, then)
