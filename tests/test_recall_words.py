"""Recall over what was said (issue 26, ADR 0030): messages as recall items, words beside meaning."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg.sql import SQL, Identifier

from factledger.application.lexical import bm25, fuse, query_terms, term_counts, terms
from factledger.application.ports import RecallQuery, fused_recall
from factledger.application.service import LedgerService
from factledger.projections.tsvector import tsquery_any, tsvector_binary, tsvector_from_binary, tsvector_literal

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)

# ---- terms, BM25, fusion (no store) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went hiking with my sister", ["went", "hik", "sister"]),
        ("She hikes; they hiked.", ["hik", "hik"]),
        ("The adoption agencies", ["adoption", "agency"]),
        ("我在杭州", ["我在", "在杭", "杭州"]),
        ("猫", ["猫"]),
        ("Pottery 课 in Lisbon", ["pottery", "课", "lisbon"]),
        ("", []),
    ],
)
def test_terms_are_stemmed_words_and_chinese_bigrams(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_a_question_and_its_answer_meet_on_the_same_stems() -> None:
    assert set(query_terms("When did Caroline go hiking?")) & set(terms("We hiked up the hill"))


def test_bm25_prefers_the_rare_word_and_the_shorter_text() -> None:
    docs = {
        "rare": term_counts("my cello lesson"),
        "common": term_counts("a lesson today"),
        "long": term_counts("cello " + "filler words here " * 10),
        "other": term_counts("nothing alike"),
    }
    scores = bm25(query_terms("cello lesson"), docs)
    assert "other" not in scores
    assert max(scores, key=scores.__getitem__) == "rare"
    assert scores["long"] < scores["rare"] and scores["common"] < scores["rare"]


def test_weighted_rank_fusion_adds_each_rankings_share() -> None:
    fused = fuse([(["a", "b"], 1.0), (["b", "c"], 0.5)], k=1)
    assert fused == {"a": 1 / 2, "b": 1 / 3 + 0.5 / 2, "c": 0.5 / 3}


def test_a_tsvector_goes_and_comes_back_the_same() -> None:
    positions = {"杭州": [1, 4], "o'neil": [2], "back\\slash": [3]}
    assert tsvector_from_binary(tsvector_binary(positions)) == positions
    assert tsvector_literal(positions) == "'杭州':1,4 'o''neil':2 'back\\\\slash':3"
    assert tsquery_any(["a", "it's"]) == "'a' | 'it''s'"


# ---- through the service, on both backends -----------------------------------------------------


def test_a_message_nothing_extracted_is_recalled_by_its_words_with_when_it_was_said(service: LedgerService) -> None:
    service.ingest("u", "The pottery workshop on Saturday went fine.", session_id="s1", timestamp=SAID)
    service.ingest("u", "我住在杭州", timestamp=SAID)
    service.ingest("someone-else", "My pottery workshop is on Sunday.", timestamp=SAID)
    hits = service.recall("u", "How was the pottery workshop?", top_k=3)
    said = [h for h in hits if h.record.type == "message"]
    assert said and said[0].record.content == "The pottery workshop on Saturday went fine."
    assert said[0].similarity is None and said[0].score > 0
    assert said[0].to_dict()["said_at"] == SAID.isoformat()
    assert said[0].record.session_id == "s1" and said[0].record.user_id == "u"
    # Only the user's own words, and a message is never a memory of the profile.
    assert all(h.record.user_id == "u" for h in hits)
    assert service.profile("u").to_dict()["facts_count"] == 1
    assert [h.record.type for h in service.recall("u", "pottery", types=["message"])] == ["message"]
    assert service.recall("u", "pottery", types=["fact"]) == []


def test_a_message_is_found_by_the_turn_it_answers(service: LedgerService) -> None:
    asked = [{"role": "assistant", "content": "How did the adoption interview go?"}]
    service.ingest("u", "It went really well, thanks!", context=asked, timestamp=SAID)
    service.ingest("u", "I bought new running shoes.", timestamp=SAID)
    [first, *_] = service.recall("u", "How did the adoption interview go?")
    assert first.record.content == "It went really well, thanks!"


def test_a_context_shows_memories_first_then_dated_snippets_of_what_was_said(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州", timestamp=SAID)
    service.ingest("u", "周末在杭州的西湖边骑了自行车", timestamp=datetime(2023, 6, 1, tzinfo=UTC))
    context = service.memory_context("u", "杭州西湖", language="zh")
    text = context.text
    assert "用户住在杭州" in text and "[2023-06-01] 周末在杭州的西湖边骑了自行车" in text
    assert text.index("用户住在杭州") < text.index("[2023-06-01]")
    recalled = context.to_dict()["recalled"]
    assert {r["type"] for r in recalled} >= {"message"}


def test_the_ranking_is_the_same_after_a_rebuild(service: LedgerService) -> None:
    for n, text in enumerate(["I adopted a cat", "The cat sleeps all day", "My sister adopted a dog"]):
        service.ingest("u", text, timestamp=datetime(2023, 5, n + 1, tzinfo=UTC))
    before = [(h.record.id, h.score) for h in service.recall("u", "adopted cat", top_k=5)]
    service.rebuild_read_model()
    assert [(h.record.id, h.score) for h in service.recall("u", "adopted cat", top_k=5)] == before
    assert len(before) >= 3


def test_forgetting_a_user_removes_their_messages_from_recall(service: LedgerService) -> None:
    service.ingest("gone", "My secret garden has blue tulips", timestamp=SAID)
    service.ingest("kept", "My garden has red tulips", timestamp=SAID)
    service.forget("gone")
    assert service.recall("gone", "tulips garden") == []
    assert all(r["user_id"] != "gone" for r in service.read_model.all_rows())
    kept = service.recall("kept", "tulips garden")
    assert {h.record.user_id for h in kept} == {"kept"} and "message" in {h.record.type for h in kept}


# ---- an older PostgreSQL read model --------------------------------------------------------------


@pytest.mark.pg_only
def test_a_read_model_made_before_the_lexical_columns_is_migrated(
    open_service: Callable[..., LedgerService], pg_uri: str, schema: str
) -> None:
    first = open_service()
    first.ingest("u", "我住在杭州", timestamp=SAID)
    first.close()
    memories = Identifier(schema, "memories")
    with psycopg.connect(pg_uri, autocommit=True) as conn:  # back to the table as it was before
        conn.execute(SQL("DELETE FROM {} WHERE type = 'message'").format(memories))
        conn.execute(SQL("ALTER TABLE {} DROP COLUMN lexemes, DROP COLUMN terms_count").format(memories))
        conn.execute(SQL("ALTER TABLE {} DROP CONSTRAINT memories_type_check").format(memories))
        conn.execute(SQL("ALTER TABLE {} ADD CHECK (type IN ('fact', 'preference'))").format(memories))
        conn.execute(SQL("ALTER TABLE {} ALTER COLUMN embedding SET NOT NULL").format(memories))
    again = open_service()
    [hit] = again.recall("u", "杭州", types=["fact"], min_similarity=None)
    assert hit.record.content == "用户住在杭州"
    assert again.read_model.search_words("u", ["杭州"], ["fact"], 5)[0].record.content == "用户住在杭州"
    again.ingest("u", "周末去了西湖", timestamp=SAID)  # a message row goes in
    assert [h.record.type for h in again.recall("u", "西湖", types=["message"])] == ["message"]
    again.rebuild_read_model()  # and the messages said before come back with a rebuild
    assert len(again.recall("u", "杭州", types=["message"])) == 1


@pytest.mark.pg_only
def test_postgresqls_one_statement_gives_what_the_two_searches_and_the_fusion_give(service: LedgerService) -> None:
    said = [
        "I adopted a grey cat called Miso last week",
        "My sister moved to Lisbon for work",
        "We went hiking near Lisbon with the cat",
        "我住在杭州，周末常去西湖",
        "I started learning the cello",
        "The cello teacher is strict but kind",
    ]
    for n, text in enumerate(said):
        service.ingest("u", text, timestamp=datetime(2023, 5, n + 1, tzinfo=UTC))
    service.ingest("v", "I adopted a cat too", timestamp=SAID)
    embedder = service.embedder
    for question, types, threshold, strict in [
        ("What is the name of the cat?", ("fact", "preference", "message"), embedder.recall_threshold, False),
        ("Where did the sister move?", ("fact", "preference", "message"), 0.0, False),
        ("西湖 杭州", ("fact", "message"), 0.2, True),
        ("cello lessons", ("message",), 0.5, False),
        ("nothing in common here", ("fact", "preference", "message"), 0.0, False),
    ]:
        embedded = tuple(t for t in types if t != "message")
        query = RecallQuery(
            "u", embedder.embed([question])[0], tuple(query_terms(question)), types, embedded, 4, threshold, strict
        )
        expected = fused_recall(service.read_model, query)
        assert service.read_model.recall(query) == expected, question
        assert all(h.record.user_id == "u" for h in expected)
