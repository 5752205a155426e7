"""Event payloads encrypted at rest, by the eventsourcing library's AES-GCM cipher.

``FACTLEDGER_ENCRYPTION_KEY`` (base64 of 16, 24 or 32 random bytes; ``factledger
new-key`` makes one) turns it on for a new database: every event and snapshot
payload is encrypted before it is written. The database records which key
(an id derived from it, not the key) its events were written with, so a
missing or wrong key stops the start with an error naming the setting,
rather than producing garbage or an event the projection cannot read.

Not encrypted: the read model (its text is searched and shown), the vectors,
the LLM response cache and call log. ``forget`` removes a person from all of them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

import psycopg
from psycopg.sql import SQL, Identifier

from factledger.application.errors import ConfigError

KEY_SIZES = (16, 24, 32)
SETTING = "FACTLEDGER_ENCRYPTION_KEY"
UNENCRYPTED = "none"


def parse_key(name: str, value: Any) -> str:
    """A base64 AES key of 16, 24 or 32 bytes, as the cipher takes it."""
    text = str(value).strip()
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ConfigError(f"{name} must be base64 (make one with `factledger new-key`)") from None
    if len(raw) not in KEY_SIZES:
        raise ConfigError(f"{name} must decode to 16, 24 or 32 bytes, not {len(raw)} (`factledger new-key`)")
    return text


def new_key() -> str:
    """A fresh 256-bit key, base64."""
    import secrets

    return base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def key_id(key: str | None) -> str:
    """What the database records: which key, never the key."""
    if key is None:
        return UNENCRYPTED
    digest = hashlib.sha256(b"factledger-encryption-key-id\0" + base64.b64decode(key)).hexdigest()
    return f"aes-gcm:{digest[:16]}"


def cipher_env(key: str | None) -> dict[str, str]:
    """The eventsourcing settings that encrypt payloads with ``key`` (none without one)."""
    if key is None:
        return {}
    return {"CIPHER_TOPIC": "eventsourcing.cipher:AESCipher", "CIPHER_KEY": key}


def check_key(conn: psycopg.Connection[Any], base_schema: str, key: str | None, has_events: bool) -> None:
    """Refuse to start with another key than the one the database's events were written with.

    A database whose first start predates this check, or that holds events
    already, was written without encryption: turning it on there would leave
    old events unreadable by the new settings, so it is refused.
    """
    table = Identifier(base_schema, "factledger_installation")
    conn.execute(SQL("CREATE TABLE IF NOT EXISTS {} (key text PRIMARY KEY, value text NOT NULL)").format(table))
    row = conn.execute(SQL("SELECT value FROM {} WHERE key = 'events_cipher'").format(table)).fetchone()
    wanted = key_id(key)
    if row is None:
        recorded = UNENCRYPTED if has_events else wanted
        conn.execute(SQL("INSERT INTO {} VALUES ('events_cipher', %s)").format(table), (recorded,))
    else:
        recorded = str(row[0])
    if recorded == wanted:
        return
    if recorded == UNENCRYPTED:
        raise ConfigError(
            f"{SETTING} is set, but this database's events were written unencrypted; encryption can only be "
            "turned on for a new database (or schema): unset it, or start one and move users with export"
        )
    if key is None:
        raise ConfigError(f"this database's events are encrypted ({recorded}): set {SETTING} to their key")
    raise ConfigError(f"{SETTING} is not the key this database's events were encrypted with ({recorded}, not {wanted})")
