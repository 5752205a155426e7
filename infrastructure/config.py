"""Settings from environment variables and an optional TOML config file.

Precedence: explicit arguments > environment > config file > defaults. The
config file is ``$FACTLEDGER_CONFIG`` or ``$FACTLEDGER_HOME/config.toml``;
keys are the lower-case setting names below (``database_url = "..."``).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import platformdirs

from factledger.application.errors import ConfigError, InvalidInput
from factledger.application.screening import parse_policies
from factledger.application.sensitive import Kind, Policy
from factledger.application.validation import DEFAULT_LIMITS, InputLimits
from factledger.infrastructure.encryption import parse_key
from factledger.infrastructure.memory_database import InMemoryDatabase
from factledger.infrastructure.secret import InstallationSecret, load_secret

__all__ = ["SETTINGS", "ConfigError", "Setting", "Settings", "settings_table"]


ROOT_HOME = Path("/var/lib/factledger")


def _default_home() -> Path:
    """The user's data directory; for root, ``/var/lib/factledger``.

    The embedded server's wheel, run as root, makes every parent of its data
    directory readable by all: under ``/root`` that would open root's home
    directory; ``/var/lib`` is world-readable already. A root installation
    that already keeps its data in the old place goes on using it.
    """
    user_home = Path(platformdirs.user_data_dir("factledger", appauthor=False))
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return user_home
    if (user_home / "pgdata").exists() and not ROOT_HOME.exists():
        return user_home
    return ROOT_HOME


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "y", "on"}:
        return True
    if text in {"0", "false", "no", "n", "off", ""}:
        return False
    raise ConfigError(f"{name} must be true or false, got {value!r}")


def _float01(name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise ConfigError(f"{name} must be a number in [0, 1], got {value!r}")
    return number


def _positive_float(name: str, value: Any, minimum: float = 0.0) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None
    if not number >= minimum:  # also rejects NaN
        raise ConfigError(f"{name} must be at least {minimum}, got {value!r}")
    return number


def _int(name: str, value: Any, minimum: int = 1) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None
    if number < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value!r}")
    return number


def _text(name: str, value: Any) -> str:
    return str(value)


# A Host header's name (letters, digits, . - _) or a bracketed IPv6 address, and a port if any.
HOST_PATTERN = re.compile(r"^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$")


def _hosts(name: str, value: Any) -> str:
    """Comma-separated host names, each with a port or not, or ``*``."""
    entries = [entry.strip() for entry in str(value).split(",") if entry.strip()]
    for entry in entries:
        if entry != "*" and not HOST_PATTERN.match(entry):
            raise ConfigError(
                f"{name}: {entry!r} is not a host name (like memory.example.com or 10.0.0.5:8000, "
                "no scheme or path), nor *"
            )
    return ", ".join(entries)


def _schema(name: str, value: Any) -> str:
    text = str(value)
    if not SCHEMA_PATTERN.match(text):
        raise ConfigError(
            f"{name} must be letters, digits and _ (starting with a letter or _, at most 24), got {text!r}"
        )
    if is_reserved_schema(text):
        raise ConfigError(f"{name} {text!r} {RESERVED_SCHEMA}; choose another schema name")
    return text


RESERVED_SCHEMA = "is reserved by PostgreSQL (names starting with pg_, and information_schema, are its own)"


def is_reserved_schema(name: str) -> bool:
    """Whether PostgreSQL keeps ``name`` for itself (``CREATE SCHEMA pg_x`` fails; any case,
    since an unquoted name is folded to lower case)."""
    folded = name.lower()
    return folded.startswith("pg_") or folded == "information_schema"


def _sensitive(name: str, value: Any) -> str:
    try:
        parse_policies(name, value)
    except InvalidInput as exc:
        raise ConfigError(str(exc)) from None
    return str(value)


def _path(name: str, value: Any) -> Path:
    return Path(str(value)).expanduser()


def _backend(name: str, value: Any) -> str:
    text = str(value).strip().lower()
    if text not in ("postgres", "memory"):
        raise ConfigError(f"{name} must be postgres or memory, got {value!r}")
    return text


MEMORY_LANGUAGES = ("auto", "zh", "en")


def _language(name: str, value: Any) -> str:
    text = str(value).strip().lower()
    if text not in MEMORY_LANGUAGES:
        raise ConfigError(f"{name} must be one of {', '.join(MEMORY_LANGUAGES)}, got {value!r}")
    return text


def _dimension(name: str, value: Any) -> int:
    return _int(name, value, minimum=8)


def _port(name: str, value: Any) -> int:
    number = _int(name, value, minimum=1)
    if number > 65535:
        raise ConfigError(f"{name} must be a port number (1–65535), got {value!r}")
    return number


def _count(name: str, value: Any) -> int:
    return _int(name, value, minimum=0)


def _timeout(name: str, value: Any) -> float:
    return _positive_float(name, value, minimum=0.01)


def _seconds(name: str, value: Any) -> float:
    return _positive_float(name, value, minimum=0.1)


# A schema name becomes part of other identifiers (``<schema>__<ledger>_xxxxxx``): keep it short and plain.
SCHEMA_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,23}$")


@attrs.frozen
class Settings:
    """Everything factledger can be configured with."""

    home: Path = attrs.field(factory=_default_home)
    # postgres (DATABASE_URL, else an embedded server) | memory (this process only: tests, trying it out)
    backend: str = "postgres"
    database_url: str | None = None
    schema: str = "public"
    fact_similarity: float = 0.75
    preference_similarity: float = 0.7
    inline_projection: bool = True
    offline_dimension: int = 256
    openai_api_key: str | None = None
    snapshot_interval: int = 200
    # OpenAI-compatible LLM (used only when openai_api_key is set)
    openai_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    # "offline": the hashed n-gram embedder, for endpoints without embeddings (DeepSeek)
    embedding_model: str = "text-embedding-3-small"
    # embeddings from another endpoint than chat (default: OPENAI_BASE_URL / OPENAI_API_KEY)
    embedding_base_url: str | None = None
    embedding_api_key: str | None = None
    # None: the model's native size (probed once for models factledger does not know)
    embedding_dimension: int | None = None
    # a bundled prompt set ("seed", "combined") or the path of a prompt file
    prompts: str = "combined"
    # no LLM call for a message without any fact or preference signal
    signal_gating: bool = True
    # the language the LLM writes memories in: each message's own (auto), or one for the installation
    memory_language: str = "auto"
    llm_timeout: float = 30.0
    llm_max_retries: int = 3
    llm_retry_backoff: float = 1.0
    # identical requests (model, prompt id, rendered input) are answered from PostgreSQL
    response_cache: bool = True
    # users extracted and decided at once in a bulk import, when an LLM extracts (ADR 0024)
    bulk_workers: int = 8
    # MiB of item vectors the decider keeps between messages, across users (issue 24)
    candidate_cache_mb: int = 128
    # bounds on one call's input (see factledger.application.validation.InputLimits)
    max_message_chars: int = DEFAULT_LIMITS.message_chars
    max_context_turns: int = DEFAULT_LIMITS.context_turns
    max_context_chars: int = DEFAULT_LIMITS.context_chars
    max_id_chars: int = DEFAULT_LIMITS.id_chars
    max_query_chars: int = DEFAULT_LIMITS.query_chars
    max_top_k: int = DEFAULT_LIMITS.top_k
    max_profile_limit: int = DEFAULT_LIMITS.profile_limit
    # seconds any one SQL statement, and any wait for a lock, may take
    statement_timeout: float = 30.0
    lock_timeout: float = 10.0
    # the key of hashes of personal text (see factledger.infrastructure.secret)
    secret: str | None = attrs.field(default=None, repr=False)
    secret_file: Path | None = None
    # what becomes of secrets in messages: "redact" (default), "keep" or "refuse", then kind=policy overrides
    sensitive: str = "redact"
    # base64 AES key: event payloads encrypted at rest (see factledger.infrastructure.encryption)
    encryption_key: str | None = attrs.field(default=None, repr=False)
    # the HTTP server (``factledger serve``) and the MCP server over HTTP
    host: str = "127.0.0.1"
    port: int = 8000
    # Host headers /mcp answers besides localhost and ``host`` (DNS-rebinding protection); "*": any
    allowed_hosts: str = ""
    # requests per minute per API key (0: no limit); bursts up to this many
    rate_limit: int = 600
    # wrong or revoked keys a minute per client address before its requests are refused unread
    auth_failure_limit: int = 30
    max_body_bytes: int = 1_048_576
    # /readyz fails while the read model is more events than this behind the log
    ready_max_lag: int = 1000
    # each tenant's ledger runs under a PostgreSQL role of its own (ADR 0037); false: the login role
    tenant_roles: bool = True
    config_file: Path | None = None
    # Not a setting: the in-memory backend's data (see ``memory_database``), shared by settings
    # evolved from these ones as a ``database_url`` is; left out of comparisons and the repr.
    memory_database: InMemoryDatabase = attrs.field(factory=InMemoryDatabase, eq=False, repr=False)

    @property
    def sensitive_policies(self) -> dict[Kind, Policy]:
        return parse_policies("FACTLEDGER_SENSITIVE", self.sensitive)

    @property
    def allowed_host_names(self) -> tuple[str, ...]:
        """``allowed_hosts`` as a tuple (``*`` when any host may be named)."""
        return tuple(entry.strip() for entry in self.allowed_hosts.split(",") if entry.strip())

    @property
    def secret_path(self) -> Path:
        return self.secret_file or self.home / "secret.key"

    def installation_secret(self) -> InstallationSecret:
        """The installation secret (read, or created on first use)."""
        return load_secret(self.secret, self.secret_path)

    @property
    def limits(self) -> InputLimits:
        return InputLimits(
            message_chars=self.max_message_chars,
            context_turns=self.max_context_turns,
            context_chars=self.max_context_chars,
            id_chars=self.max_id_chars,
            query_chars=self.max_query_chars,
            top_k=self.max_top_k,
            profile_limit=self.max_profile_limit,
        )

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read settings from ``environ`` (default ``os.environ``) and the config file."""
        env = dict(os.environ if environ is None else environ)
        home = Path(overrides.get("home") or env.get("FACTLEDGER_HOME") or _default_home())
        config_path = env.get("FACTLEDGER_CONFIG")
        path = Path(config_path) if config_path else home / "config.toml"
        file_values: dict[str, Any] = {}
        if path.exists():
            try:
                file_values = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
        elif config_path:
            raise ConfigError(f"FACTLEDGER_CONFIG points to {path}, which does not exist")
        unknown = set(file_values) - {setting.key for setting in SETTINGS}
        if unknown:
            raise ConfigError(f"config file {path} has unknown settings: {', '.join(sorted(unknown))}")

        values: dict[str, Any] = {"home": home, "config_file": path if path.exists() else None}
        for setting in SETTINGS:
            if overrides.get(setting.key) is not None:
                raw = overrides[setting.key]
            elif env.get(setting.env):
                raw = env[setting.env]
            elif setting.key in file_values:
                raw = file_values[setting.key]
            else:
                continue
            values[setting.key] = setting.parse(setting.env, raw)
        prompts = values.get("prompts")
        # A prompt file named in the config file is relative to that file.
        from_file = overrides.get("prompts") is None and not env.get("FACTLEDGER_PROMPTS")
        if from_file and prompts and str(prompts).endswith(".toml") and not Path(str(prompts)).is_absolute():
            values["prompts"] = str(path.parent / str(prompts))
        return cls(**values)


@attrs.frozen
class Setting:
    """One setting: its config-file key, environment variable, parser and meaning.

    Parsers name the variable in their errors. The default is the ``Settings``
    field's; ``shown_default`` overrides how docs/configuration.md shows it.
    """

    key: str
    env: str
    parse: Callable[[str, Any], Any]
    doc: str
    shown_default: str | None = None

    @property
    def default(self) -> str:
        if self.shown_default is not None:
            return self.shown_default
        value = next(f.default for f in attrs.fields(Settings) if f.name == self.key)
        if isinstance(value, bool):
            return f"`{str(value).lower()}`"
        return "unset" if value is None else f"`{value}`"


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "backend",
        "FACTLEDGER_BACKEND",
        _backend,
        "`postgres`, or `memory`: everything in this process, gone when it ends (tests, trying it out)",
    ),
    Setting(
        "database_url",
        "DATABASE_URL",
        _text,
        "PostgreSQL URI (needs the `vector` extension available)",
        "unset: embedded server under `FACTLEDGER_HOME`",
    ),
    Setting(
        "schema",
        "FACTLEDGER_SCHEMA",
        _schema,
        "schema holding the ledger's tables (letters, digits, `_`, ≤ 24; not `pg_…`)",
    ),
    Setting(
        "fact_similarity",
        "FACTLEDGER_FACT_SIMILARITY",
        _float01,
        "a new fact this similar to an active one goes to the judge",
    ),
    Setting(
        "preference_similarity",
        "FACTLEDGER_PREFERENCE_SIMILARITY",
        _float01,
        "a preference this similar (same category) is reinforced",
    ),
    Setting(
        "inline_projection",
        "FACTLEDGER_INLINE_PROJECTION",
        _bool,
        "project each ingest's rows in its own transaction (one commit a message, ADR 0020; a catch-up "
        "after it when older events wait); set `false` when `projection follow` runs",
    ),
    Setting("offline_dimension", "FACTLEDGER_OFFLINE_DIMENSION", _dimension, "vector size of the offline embedder"),
    Setting(
        "snapshot_interval",
        "FACTLEDGER_SNAPSHOT_INTERVAL",
        _int,
        "events between a user's snapshots (the newest two are kept)",
    ),
    Setting(
        "openai_api_key",
        "OPENAI_API_KEY",
        _text,
        "the endpoint's key; a wrong one stops with an error naming this setting",
        "unset: offline rules",
    ),
    Setting("openai_base_url", "OPENAI_BASE_URL", _text, "the OpenAI-compatible endpoint", "OpenAI"),
    Setting("llm_model", "FACTLEDGER_LLM_MODEL", _text, "chat model for extraction and relation checks"),
    Setting(
        "embedding_model", "FACTLEDGER_EMBEDDING_MODEL", _text, "embedding model; `offline` for the n-gram embedder"
    ),
    Setting(
        "embedding_base_url",
        "FACTLEDGER_EMBEDDING_BASE_URL",
        _text,
        "embeddings from another endpoint",
        "the chat endpoint's",
    ),
    Setting(
        "embedding_api_key", "FACTLEDGER_EMBEDDING_API_KEY", _text, "the key of that endpoint", "the chat endpoint's"
    ),
    Setting(
        "embedding_dimension",
        "FACTLEDGER_EMBEDDING_DIMENSION",
        _dimension,
        "vector size (sent as `dimensions`); unknown models are measured once",
        "the model's own",
    ),
    Setting("prompts", "FACTLEDGER_PROMPTS", _text, "prompt set: `seed`, `combined` or a prompt file (`--prompts`)"),
    Setting(
        "signal_gating", "FACTLEDGER_SIGNAL_GATING", _bool, "no call for a message without a fact or preference signal"
    ),
    Setting(
        "memory_language",
        "FACTLEDGER_MEMORY_LANGUAGE",
        _language,
        "language of the memories an LLM writes: `auto` (each message's main language), `zh` or `en`",
    ),
    Setting("llm_timeout", "FACTLEDGER_LLM_TIMEOUT", _timeout, "seconds per LLM request"),
    Setting(
        "llm_max_retries", "FACTLEDGER_LLM_MAX_RETRIES", _count, "retries on 429, 5xx, timeouts and connection errors"
    ),
    Setting(
        "llm_retry_backoff",
        "FACTLEDGER_LLM_RETRY_BACKOFF",
        _positive_float,
        "first backoff in seconds, doubled each retry (`Retry-After` wins)",
    ),
    Setting("response_cache", "FACTLEDGER_RESPONSE_CACHE", _bool, "answer repeated LLM requests from PostgreSQL"),
    Setting(
        "candidate_cache_mb",
        "FACTLEDGER_CANDIDATE_CACHE_MB",
        _int,
        "MiB of item vectors kept between messages to find a new item's candidates (least recently "
        "used users go first; a user not kept costs a rebuild that grows with their facts)",
    ),
    Setting(
        "bulk_workers",
        "FACTLEDGER_BULK_WORKERS",
        _int,
        "users whose messages an LLM extracts at once in `ingest-file`, `ingest_many` and `replay` "
        "(each user's in order; the offline extractor uses one)",
    ),
    Setting(
        "max_message_chars", "FACTLEDGER_MAX_MESSAGE_CHARS", _int, "longest message (also a manual reason or fact)"
    ),
    Setting("max_context_turns", "FACTLEDGER_MAX_CONTEXT_TURNS", _count, "most context turns with a message"),
    Setting("max_context_chars", "FACTLEDGER_MAX_CONTEXT_CHARS", _count, "most characters in those turns"),
    Setting("max_id_chars", "FACTLEDGER_MAX_ID_CHARS", _int, "longest user, message or session id, or actor"),
    Setting("max_query_chars", "FACTLEDGER_MAX_QUERY_CHARS", _int, "longest recall query"),
    Setting("max_top_k", "FACTLEDGER_MAX_TOP_K", _int, "largest `top_k` of a recall"),
    Setting("max_profile_limit", "FACTLEDGER_MAX_PROFILE_LIMIT", _int, "largest `limit` of a profile page"),
    Setting("statement_timeout", "FACTLEDGER_STATEMENT_TIMEOUT", _seconds, "seconds any one SQL statement may run"),
    Setting("lock_timeout", "FACTLEDGER_LOCK_TIMEOUT", _seconds, "seconds any wait for a lock may last"),
    Setting(
        "secret",
        "FACTLEDGER_SECRET",
        _text,
        "key of the hashes of personal text (≥ 16 characters); share it between hosts of one database",
        "unset: the secret file",
    ),
    Setting(
        "secret_file",
        "FACTLEDGER_SECRET_FILE",
        _path,
        "where the installation secret is kept (created, mode 0600, on first use)",
        "`$FACTLEDGER_HOME/secret.key`",
    ),
    Setting(
        "sensitive",
        "FACTLEDGER_SENSITIVE",
        _sensitive,
        "secrets in messages (api_key, password, bank_card, cn_id, phone, email): `redact`, `keep` or "
        "`refuse`, then `kind=policy` overrides, e.g. `redact,email=keep,password=refuse`",
    ),
    Setting(
        "encryption_key",
        "FACTLEDGER_ENCRYPTION_KEY",
        parse_key,
        "encrypt event payloads at rest with this base64 AES key (`factledger new-key`); new databases only",
        "unset: not encrypted",
    ),
    Setting("host", "FACTLEDGER_HOST", _text, "address `serve` and `mcp --http` listen on (`0.0.0.0` in a container)"),
    Setting("port", "FACTLEDGER_PORT", _port, "port `serve` and `mcp --http` listen on"),
    Setting(
        "allowed_hosts",
        "FACTLEDGER_ALLOWED_HOSTS",
        _hosts,
        "host names (`name` or `name:port`, comma-separated) `/mcp` answers besides localhost and "
        "`FACTLEDGER_HOST`; any other `Host` → 421 (DNS-rebinding protection); `*`: any",
        "unset: localhost and `FACTLEDGER_HOST`",
    ),
    Setting(
        "rate_limit",
        "FACTLEDGER_RATE_LIMIT",
        _count,
        "requests per minute per API key, in bursts up to as many (`0`: no limit); beyond: 429 + `Retry-After`",
    ),
    Setting(
        "auth_failure_limit",
        "FACTLEDGER_AUTH_FAILURE_LIMIT",
        _count,
        "wrong or revoked API keys a minute from one client address (`0`: no limit); beyond, every request "
        "from it → 429 + `Retry-After` before its key is looked up",
    ),
    Setting("max_body_bytes", "FACTLEDGER_MAX_BODY_BYTES", _int, "largest HTTP request body; beyond: 413"),
    Setting(
        "ready_max_lag",
        "FACTLEDGER_READY_MAX_LAG",
        _count,
        "`/readyz` fails while a read model is more events than this behind its log",
    ),
    Setting(
        "tenant_roles",
        "FACTLEDGER_TENANT_ROLES",
        _bool,
        "each tenant runs under a PostgreSQL role reaching only its own schemas (needs CREATEROLE and "
        "CREATE on the database to pass on; without them servers stop, naming this setting); "
        "`false`: the login role (ADR 0037)",
    ),
)


def settings_table() -> str:
    """The table of settings in docs/configuration.md, made from ``SETTINGS`` (a test keeps the page in step)."""
    rows = [
        "| variable | config-file key | default | meaning |",
        "|---|---|---|---|",
        "| `FACTLEDGER_HOME` | — | the user data dir (`~/.local/share/factledger`; root: `/var/lib/factledger`) | "
        "embedded server's data, the config file, the installation secret |",
        "| `FACTLEDGER_CONFIG` | — | `$FACTLEDGER_HOME/config.toml` | the config file |",
    ]
    rows += [f"| `{s.env}` | `{s.key}` | {s.default} | {s.doc} |" for s in SETTINGS]
    return "\n".join(rows)
