"""Ids and text as people type and paste them (issue 24): one user however "Café" was
composed, nothing invisible in an id, terminal escapes removed whole from text, line
separators read as line breaks, and a schema name PostgreSQL keeps for itself refused."""

from __future__ import annotations

import time
import unicodedata
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import pytest
from processes import run_cli, run_cli_json

from factledger.application.service import InvalidInput, LedgerService
from factledger.domain.memory import UserMemory
from factledger.domain.values import storable_text
from factledger.infrastructure.config import ConfigError, Settings

COMPOSED = "Café"  # é is one character (NFC)
DECOMPOSED = "Cafe\u0301"  # e and a combining acute accent (NFD): prints the same

# Ids that print like another id, or not at all: control (TAB, LF, CR, ESC), format
# (zero-width space and joiners, word joiner, BOM, bidi controls), separators.
INVISIBLE_IN_IDS = [
    "a\tb",
    "a\nb",
    "a\rb",
    "a\x1b[31mb",
    "a\u200bb",
    "a\u200cb",
    "a\u200db",
    "a\u2060b",
    "a\ufeffb",
    "a\u202eb",
    "a\u2066b",
    "a\u00adb",
    "a\u2028b",
]


def facts_of(result: Any) -> list[str]:
    return list(result["facts"])


# ---- ids: NFC, nothing invisible --------------------------------------------------------------


def test_an_id_composed_either_way_is_one_user_in_every_call(service: LedgerService) -> None:
    assert unicodedata.normalize("NFC", DECOMPOSED) == COMPOSED != DECOMPOSED
    first = service.ingest(DECOMPOSED, "我住在杭州", message_id="m\u0301", session_id="s\u0301")
    again = service.ingest(COMPOSED, "我住在杭州", message_id="ḿ")  # the message id composed: the same message
    assert again.status == "duplicate" and again.message_id == first.message_id == "ḿ"
    for user in (COMPOSED, DECOMPOSED):
        profile = service.profile(user).to_dict()
        assert profile["user_id"] == COMPOSED
        [fact] = profile["facts"]["location"]
        assert fact["fact"] == "用户住在杭州"
        assert [h.record.content for h in service.recall(user, "杭州")] == ["用户住在杭州", "我住在杭州"]
        fact_id = fact["id"]
        assert service.why(user, fact_id[:8]).to_dict()["text"] == "用户住在杭州"
        messages = [e for e in service.history(user) if e.event == "MessageIngested"]
        assert [(m.fields["message_id"], m.fields["session_id"]) for m in messages] == [("ḿ", "ś")]
    assert service.export(DECOMPOSED)["user_id"] == COMPOSED
    service.forget(DECOMPOSED)
    assert not service.profile(COMPOSED).known


def test_a_user_recorded_under_a_decomposed_id_before_ids_were_normalised_is_still_reached(
    service: LedgerService,
) -> None:
    """ADR 0027: a user an earlier version recorded under "Cafe\u0301" is reached by that exact form,
    for reading, ingesting, exporting and forgetting; the composed form is another id until then."""
    at = datetime(2026, 3, 1, tzinfo=UTC)

    def as_an_earlier_version_recorded_it(memory: UserMemory) -> None:  # its id was never normalised
        memory.ingest_message("old-1", "我住在杭州", at)
        fact_id = "6d1f0c1e-0000-4000-8000-000000000001"
        memory.observe_fact(fact_id, "用户住在杭州", "location", 0.9, "old-1", at, "offline-rules/14")

    service.ingestion.writer.write(DECOMPOSED, as_an_earlier_version_recorded_it)
    assert not service.profile(COMPOSED).known  # a new id, as before
    assert [f.text for f in service.profile(DECOMPOSED).facts] == ["用户住在杭州"]
    service.ingest(DECOMPOSED, "我在华为工作", message_id="new-1")
    assert {f.text for f in service.profile(DECOMPOSED).facts} == {"用户住在杭州", "用户在华为工作"}
    assert service.export(DECOMPOSED)["user_id"] == DECOMPOSED
    service.forget(DECOMPOSED)
    assert not service.profile(DECOMPOSED).known
    assert service.tombstones(DECOMPOSED)


@pytest.mark.parametrize("user", INVISIBLE_IN_IDS, ids=ascii)
def test_an_id_holding_an_invisible_character_is_refused(service: LedgerService, user: str) -> None:
    with pytest.raises(InvalidInput, match=r"user_id '.*' contains U\+[0-9A-F]{4}.*; ids must be visible text"):
        service.ingest(user, "我住在杭州")
    for field in ("message_id", "session_id"):
        with pytest.raises(InvalidInput, match=f"{field} .* contains U\\+"):
            service.ingest("u", "我住在杭州", **{field: user})
    assert not service.profile("u").known  # nothing recorded


def test_http_normalises_ids_in_the_path(settings: Settings) -> None:
    from tests.test_http import make_api

    for api in make_api(settings):
        api.say(quote(DECOMPOSED), "我住在杭州")
        response = api.client.get(f"/v1/users/{quote(COMPOSED)}/profile", headers=api.headers("acme", "read"))
        assert response.status_code == 200 and response.json()["user_id"] == COMPOSED
        refused = api.client.post(
            f"/v1/users/{quote('a' + chr(0x200B) + 'b')}/messages",
            json={"message": "hi"},
            headers=api.headers(),
        )
        assert refused.status_code == 422 and "U+200B" in refused.json()["detail"]


def test_the_cli_finds_a_user_however_the_id_was_composed_and_escapes_what_it_refuses(
    cli_env: dict[str, str],
) -> None:
    run_cli(cli_env, "ingest", "--user", DECOMPOSED, "我住在杭州", "-q")
    run_cli(cli_env, "ingest", "--user", COMPOSED, "我在阿里工作", "-q")
    profile = run_cli_json(cli_env, "profile", COMPOSED)
    assert profile["user_id"] == COMPOSED and profile["facts_count"] == 2
    assert run_cli_json(cli_env, "profile", DECOMPOSED) == profile
    for user, escaped in (("a\u200bb", "\\u200b"), ("a\tb", "\\t"), ("a\u202eb", "\\u202e")):
        proc = run_cli(cli_env, "ingest", "--user", user, "我住在杭州", expect=2)
        assert escaped in proc.stderr and user not in proc.stderr and "Traceback" not in proc.stderr


def test_an_invisible_character_recorded_in_text_is_shown_escaped(cli_env: dict[str, str]) -> None:
    run_cli(cli_env, "ingest", "--user", "zw", "我住在杭\u200b州", "-q")
    [message] = [e for e in run_cli_json(cli_env, "history", "zw") if e["event"] == "MessageIngested"]
    assert message["text"] == "我住在杭\u200b州"  # text is kept as said
    human = run_cli(cli_env, "history", "zw").stdout
    assert "杭\\u200b州" in human and "\u200b" not in human


# ---- text: terminal escapes removed whole, line separators as line breaks ----------------------


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("住在\x1b[31m广州\x1b[0m", "住在广州"),  # CSI (colour)
        ("住在\x1b[1;38;5;196m广州\x1b[m", "住在广州"),
        ("住在\x1b[?25l广州", "住在广州"),  # CSI with a private parameter
        ("住在\x9b31m广州\x9b0m", "住在广州"),  # the 8-bit CSI
        ("住在\x1b]0;窗口标题\x07广州", "住在广州"),  # OSC ended by BEL
        ("住在\x1b]8;;https://x.example/\x1b\\广州\x1b]8;;\x1b\\", "住在广州"),  # a hyperlink, ended by ST
        ("住在\x9d0;title\x9c广州", "住在广州"),  # the 8-bit OSC and ST
        ("住在\x1bP1$r0m\x1b\\广州", "住在广州"),  # DCS
        ("住在\x1b(B\x1b7\x1b8\x1bc广州", "住在广州"),  # charset, save/restore cursor, reset
        ("住在\x1b[31广州", "住在31广州"),  # an unfinished CSI: the escape goes, the words stay
        ("上海\u2028杭州\u2029广州\x85北京", "上海\n杭州\n广州\n北京"),
        ("tab\tand\nnewline\r\n", "tab\tand\nnewline\r\n"),
    ],
    ids=ascii,
)
def test_terminal_escape_sequences_are_removed_whole(said: str, kept: str) -> None:
    assert storable_text(said) == kept


@pytest.mark.parametrize(
    "hostile",
    [
        "\x1b[" * 100_000,
        "\x1b[" + "1;" * 100_000,
        "\x1b]" * 100_000,
        "\x1b]" + "x" * 200_000,
        "\x9d" * 200_000,
        ("\x1b]" + "标题" * 50) * 2_000,
        "\u2028\x1b" * 100_000,
    ],
    ids=lambda text: ascii(text[:6]),
)
def test_cleaning_text_takes_linear_time(hostile: str) -> None:
    started = time.perf_counter()
    storable_text(hostile)
    assert time.perf_counter() - started < 1.0  # a quadratic scan of 200,000 characters takes minutes


def test_an_ingested_message_keeps_no_escape_sequence_and_its_clauses_apart(cli_env: dict[str, str]) -> None:
    coloured = run_cli_json(cli_env, "ingest", "--user", "esc", "我住在\x1b[31m广州\x1b[0m")
    assert facts_of(coloured) == ["用户住在广州"]
    [message] = [e for e in run_cli_json(cli_env, "history", "esc") if e["event"] == "MessageIngested"]
    assert message["text"] == "我住在广州"
    separated = run_cli_json(cli_env, "ingest", "--user", "sep", "我住在上海\u2028我在腾讯工作")
    assert facts_of(separated) == ["用户住在上海", "用户在腾讯工作"]
    english = run_cli_json(cli_env, "ingest", "--user", "sep-en", "I live in Paris\u2029I work at Google")
    assert facts_of(english) == ["The user lives in Paris", "The user works at Google"]


# ---- schema names PostgreSQL keeps ------------------------------------------------------------


@pytest.mark.parametrize("schema", ["pg_x", "PG_memory", "pg_catalog", "information_schema"])
def test_a_reserved_schema_name_is_a_configuration_error(schema: str) -> None:
    with pytest.raises(ConfigError, match="reserved by PostgreSQL"):
        Settings.load({"FACTLEDGER_SCHEMA": schema})


def test_the_cli_refuses_a_reserved_schema_with_exit_2(cli_env: dict[str, str]) -> None:
    proc = run_cli({**cli_env, "FACTLEDGER_SCHEMA": "pg_x"}, "ingest", "--user", "u", "我住在杭州", expect=2)
    assert "FACTLEDGER_SCHEMA 'pg_x' is reserved by PostgreSQL" in proc.stderr
    assert "Traceback" not in proc.stderr and "ReservedName" not in proc.stderr
    proc = run_cli(cli_env, "partitions", "add", "four", "--schema", "pg_four", expect=2)
    assert "schema 'pg_four' is reserved by PostgreSQL" in proc.stderr and "Traceback" not in proc.stderr
