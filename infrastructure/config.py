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

from factledger.application.errors import ConfigError
from factledger.application.validation import DEFAULT_LIMITS, InputLimits

__all__ = ["ConfigError", "SETTINGS", "Settings"]


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("factledger", appauthor=False))


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


def _schema(name: str, value: Any) -> str:
    text = str(value)
    if not SCHEMA_PATTERN.match(text):
        raise ConfigError(
            f"{name} must be letters, digits and _ (starting with a letter or _, at most 24), got {text!r}"
        )
    return text


def _backend(name: str, value: Any) -> str:
    text = str(value).strip().lower()
    if text not in ("postgres", "memory"):
        raise ConfigError(f"{name} must be postgres or memory, got {value!r}")
    return text


def _dimension(name: str, value: Any) -> int:
    return _int(name, value, minimum=8)


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
    prompts: str = "seed"
    # no LLM call for a message without any fact or preference signal
    signal_gating: bool = True
    llm_timeout: float = 30.0
    llm_max_retries: int = 3
    llm_retry_backoff: float = 1.0
    # identical requests (model, prompt id, rendered input) are answered from PostgreSQL
    response_cache: bool = True
    # bounds on one call's input (see factledger.application.validation.InputLimits)
    max_message_chars: int = DEFAULT_LIMITS.message_chars
    max_context_turns: int = DEFAULT_LIMITS.context_turns
    max_context_chars: int = DEFAULT_LIMITS.context_chars
    max_id_chars: int = DEFAULT_LIMITS.id_chars
    max_query_chars: int = DEFAULT_LIMITS.query_chars
    max_top_k: int = DEFAULT_LIMITS.top_k
    # seconds any one SQL statement, and any wait for a lock, may take
    statement_timeout: float = 30.0
    lock_timeout: float = 10.0
    config_file: Path | None = None

    @property
    def limits(self) -> InputLimits:
        return InputLimits(
            message_chars=self.max_message_chars, context_turns=self.max_context_turns,
            context_chars=self.max_context_chars, id_chars=self.max_id_chars,
            query_chars=self.max_query_chars, top_k=self.max_top_k,
        )

    @classmethod
    def load(
        cls, environ: Mapping[str, str] | None = None, **overrides: Any
    ) -> Settings:
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
        unknown = set(file_values) - {key for key, _, _ in SETTINGS}
        if unknown:
            raise ConfigError(f"config file {path} has unknown settings: {', '.join(sorted(unknown))}")

        values: dict[str, Any] = {"home": home, "config_file": path if path.exists() else None}
        for key, env_name, parse in SETTINGS:
            if key in overrides and overrides[key] is not None:
                raw = overrides[key]
            elif env.get(env_name):
                raw = env[env_name]
            elif key in file_values:
                raw = file_values[key]
            else:
                continue
            values[key] = parse(env_name, raw)
        prompts = values.get("prompts")
        # A prompt file named in the config file is relative to that file.
        from_file = overrides.get("prompts") is None and not env.get("FACTLEDGER_PROMPTS")
        if from_file and prompts and str(prompts).endswith(".toml") and not Path(str(prompts)).is_absolute():
            values["prompts"] = str(path.parent / str(prompts))
        return cls(**values)


# (config-file key, environment variable, parser): parsers name the variable in their errors.
SETTINGS: tuple[tuple[str, str, Callable[[str, Any], Any]], ...] = (
    ("backend", "FACTLEDGER_BACKEND", _backend),
    ("database_url", "DATABASE_URL", _text),
    ("schema", "FACTLEDGER_SCHEMA", _schema),
    ("fact_similarity", "FACTLEDGER_FACT_SIMILARITY", _float01),
    ("preference_similarity", "FACTLEDGER_PREFERENCE_SIMILARITY", _float01),
    ("inline_projection", "FACTLEDGER_INLINE_PROJECTION", _bool),
    ("offline_dimension", "FACTLEDGER_OFFLINE_DIMENSION", _dimension),
    ("snapshot_interval", "FACTLEDGER_SNAPSHOT_INTERVAL", _int),
    ("openai_api_key", "OPENAI_API_KEY", _text),
    ("openai_base_url", "OPENAI_BASE_URL", _text),
    ("llm_model", "FACTLEDGER_LLM_MODEL", _text),
    ("embedding_model", "FACTLEDGER_EMBEDDING_MODEL", _text),
    ("embedding_base_url", "FACTLEDGER_EMBEDDING_BASE_URL", _text),
    ("embedding_api_key", "FACTLEDGER_EMBEDDING_API_KEY", _text),
    ("embedding_dimension", "FACTLEDGER_EMBEDDING_DIMENSION", _dimension),
    ("prompts", "FACTLEDGER_PROMPTS", _text),
    ("signal_gating", "FACTLEDGER_SIGNAL_GATING", _bool),
    ("llm_timeout", "FACTLEDGER_LLM_TIMEOUT", _timeout),
    ("llm_max_retries", "FACTLEDGER_LLM_MAX_RETRIES", _count),
    ("llm_retry_backoff", "FACTLEDGER_LLM_RETRY_BACKOFF", _positive_float),
    ("response_cache", "FACTLEDGER_RESPONSE_CACHE", _bool),
    ("max_message_chars", "FACTLEDGER_MAX_MESSAGE_CHARS", _int),
    ("max_context_turns", "FACTLEDGER_MAX_CONTEXT_TURNS", _count),
    ("max_context_chars", "FACTLEDGER_MAX_CONTEXT_CHARS", _count),
    ("max_id_chars", "FACTLEDGER_MAX_ID_CHARS", _int),
    ("max_query_chars", "FACTLEDGER_MAX_QUERY_CHARS", _int),
    ("max_top_k", "FACTLEDGER_MAX_TOP_K", _int),
    ("statement_timeout", "FACTLEDGER_STATEMENT_TIMEOUT", _seconds),
    ("lock_timeout", "FACTLEDGER_LOCK_TIMEOUT", _seconds),
)
