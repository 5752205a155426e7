"""The response cache: an LLM answer stored under (model, prompt id, input hash).

Running the same extractor over the same history again (a replay, an
evaluation, ``retry-failed`` after a partial failure) asks nothing twice: the
rendered request is hashed, and an answer already seen for it is read back
from PostgreSQL. Only answers that parsed are stored, so a garbled one is
asked again rather than remembered.

The hash is an HMAC under the installation secret (the request holds the
user's words), and the call log keeps it per call, which is how forgetting a
user finds the answers given about them.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from eventsourcing.postgres import PostgresDatastore
from psycopg.sql import SQL, Identifier

from factledger.infrastructure.secret import InstallationSecret

TABLE = "llm_response_cache_v2"
# Version 1 keyed answers by a plain sha256 of the request: dropped, not migrated.
UNKEYED_TABLE = "llm_response_cache"


def request_hash(request: dict[str, Any], secret: InstallationSecret) -> bytes:
    """Keyed hash of the rendered request (messages, response format, temperature)."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return secret.digest("llm-request", canonical)


@attrs.frozen
class CachedAnswer:
    text: str
    input_tokens: int
    output_tokens: int


class ResponseCache:
    """A PostgreSQL table of answers, shared by every process on the schema."""

    def __init__(self, datastore: PostgresDatastore, schema: str | None = None):
        self.datastore = datastore
        # In the base schema, so every named ledger (a replay) shares the answers.
        self.table = Identifier(schema or datastore.schema, TABLE)
        with datastore.transaction(commit=True) as curs:
            curs.execute(SQL("DROP TABLE IF EXISTS {}").format(Identifier(schema or datastore.schema, UNKEYED_TABLE)))
            curs.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "model text NOT NULL, prompt_id text NOT NULL, input_hash bytea NOT NULL, "
                    "answer text NOT NULL, input_tokens integer NOT NULL DEFAULT 0, "
                    "output_tokens integer NOT NULL DEFAULT 0, "
                    "created_at timestamptz NOT NULL DEFAULT now(), "
                    "PRIMARY KEY (model, prompt_id, input_hash))"
                ).format(self.table)
            )

    def get(self, model: str, prompt_id: str, input_hash: bytes) -> CachedAnswer | None:
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL(
                    "SELECT answer, input_tokens, output_tokens FROM {} "
                    "WHERE model = %s AND prompt_id = %s AND input_hash = %s"
                ).format(self.table),
                (model, prompt_id, input_hash),
            )
            row = curs.fetchone()
        if row is None:
            return None
        return CachedAnswer(row["answer"], row["input_tokens"], row["output_tokens"])

    def put(self, model: str, prompt_id: str, input_hash: bytes, answer: CachedAnswer) -> None:
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(
                SQL(
                    "INSERT INTO {} (model, prompt_id, input_hash, answer, input_tokens, output_tokens) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
                ).format(self.table),
                (model, prompt_id, input_hash, answer.text, answer.input_tokens, answer.output_tokens),
            )
