"""The installation secret: the key of every hash factledger derives from personal text.

A plain SHA-256 of "用户的手机号是13800138000" can be reversed by trying every
phone number; an HMAC cannot without the key. The key lives outside the
database (``FACTLEDGER_SECRET``, or the file ``FACTLEDGER_SECRET_FILE``,
default ``$FACTLEDGER_HOME/secret.key``, created with mode 0600 on first
use), so a dump of the database alone allows no dictionary attack.

Losing the key loses nothing recorded: caches miss and are refilled, and
only a tombstone lookup by user id (``factledger forgotten --user``) and the
ids of re-imported lines without a ``message_id`` depend on it. Several hosts
on one database should share it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from pathlib import Path

import attrs

from factledger.application.errors import ConfigError

KEY_BYTES = 32
MIN_SECRET_CHARS = 16


@attrs.frozen
class InstallationSecret:
    """An HMAC-SHA256 key; ``digest(purpose, text)`` keeps purposes apart."""

    key: bytes = attrs.field(repr=False)

    def digest(self, purpose: str, data: str | bytes) -> bytes:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        return hmac.new(self.key, purpose.encode("ascii") + b"\0" + raw, hashlib.sha256).digest()

    def hexdigest(self, purpose: str, data: str | bytes, length: int = 64) -> str:
        return self.digest(purpose, data).hex()[:length]


# A per-process cache, rightly: the secret file (read, or created, once per path) is what counts,
# and every open in the process must use the key the file holds (tests/test_wiring.py lists it).
_loaded: dict[str, InstallationSecret] = {}
_lock = threading.Lock()


def load_secret(value: str | None, path: Path) -> InstallationSecret:
    """The secret given as ``value``, else read from ``path``, created there if missing."""
    if value is not None:
        if len(value) < MIN_SECRET_CHARS:
            raise ConfigError(f"FACTLEDGER_SECRET must be at least {MIN_SECRET_CHARS} characters")
        return InstallationSecret(hashlib.sha256(value.encode("utf-8")).digest())
    with _lock:
        found = _loaded.get(str(path))
        if found is None:
            found = _loaded[str(path)] = InstallationSecret(_read_or_create(path))
        return found


def _read_or_create(path: Path) -> bytes:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Written under another name and linked into place: a second process
        # starting at the same moment reads a whole key or creates none.
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(KEY_BYTES) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
    except OSError as exc:
        raise ConfigError(
            f"cannot create the installation secret {path} ({exc.strerror}); "
            "set FACTLEDGER_SECRET_FILE to a writable path or FACTLEDGER_SECRET"
        ) from None
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise
    except (UnicodeDecodeError, OSError) as exc:
        raise ConfigError(
            f"cannot read the installation secret {path} ({exc}); set FACTLEDGER_SECRET_FILE or FACTLEDGER_SECRET"
        ) from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < MIN_SECRET_CHARS:
        raise ConfigError(f"the installation secret {path} is not a hex key of at least {MIN_SECRET_CHARS} bytes")
    return key
