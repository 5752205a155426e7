"""The offline rules give every committed case the output committed beside it (issue 27, item 2).

A change shows as a diff per case id; a meant one is committed with
``python3 tests/golden_corpus.py --update`` after reading that diff.
"""

from __future__ import annotations

import golden_corpus as golden
import pytest

from factledger.domain.values import ExtractedFact, Extraction


@pytest.mark.slow
def test_every_committed_case_gives_its_committed_output() -> None:
    changed = golden.differences(golden.read_jsonl(golden.EXPECTED), golden.actual_outputs())
    assert not changed, f"{len(changed)} cases changed:\n\n" + "\n\n".join(changed[:20])


def test_every_twentieth_case_gives_its_committed_output() -> None:
    """The unit tier's sample of the corpus (the whole of it is the slow test above): a rule
    changed by mistake usually shows in one case of twenty already."""
    actual = golden.actual_outputs(every=20)
    sampled = {row["id"] for row in actual}
    expected = [row for row in golden.read_jsonl(golden.EXPECTED) if row["id"] in sampled]
    assert len(sampled) >= 200 and len(expected) == len(sampled)
    changed = golden.differences(expected, actual)
    assert not changed, f"{len(changed)} cases changed:\n\n" + "\n\n".join(changed[:20])


def test_the_corpus_holds_the_tests_cases_and_the_dev_sets() -> None:
    ids = [row["id"] for row in golden.read_jsonl(golden.EXPECTED)]
    assert len(ids) == len(set(ids))
    for source in ("tests/", "zh_personas_dev/", "en_personas_dev/", "zh_dulemon_dev/", "zh_kvpi_dev/"):
        assert sum(i.startswith(source) for i in ids) >= 50, source
    assert any(i.startswith("knowledge_updates_dev/") for i in ids)
    assert any(i.startswith("memorybank_cn/") for i in ids)


def test_a_changed_output_is_shown_as_a_diff_naming_its_case() -> None:
    before = [{"id": "a", "output": {"facts": [{"fact": "用户住在杭州"}]}}, {"id": "b", "output": {}}]
    after = [{"id": "a", "output": {"facts": [{"fact": "用户住在上海"}]}}, {"id": "c", "output": {}}]
    shown = golden.differences(before, after)
    assert [s.split(":", 1)[0] for s in shown] == ["a", "b", "c"]
    assert "-" in shown[0] and "用户住在杭州" in shown[0] and "用户住在上海" in shown[0]
    assert golden.differences(before, before) == []


def test_a_conversation_reads_each_message_against_the_facts_still_standing() -> None:
    class Scripted:
        """Says 杭州, then 上海 replacing it; records what it was shown."""

        def __init__(self) -> None:
            self.shown: list[tuple[str, ...]] = []

        def extract(self, message: str, context: object, known: tuple[str, ...]) -> Extraction:
            self.shown.append(known)
            replaced = known[0] if known else None
            return Extraction("scripted", facts=(ExtractedFact(message, conflicts_with=replaced),))

    scripted = Scripted()
    rows = list(golden.run_conversation(scripted, {"id": "k", "messages": ["住杭州", "住上海", "住成都"]}))  # type: ignore[arg-type]
    assert [r["id"] for r in rows] == ["k#0", "k#1", "k#2"]
    assert scripted.shown == [(), ("住杭州",), ("住上海",)]
