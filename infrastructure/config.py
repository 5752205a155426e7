"""Settings from environment variables and an optional TOML config file.

Precedence: explicit arguments > environment > config file > defaults. The
config file is ``$FACTLEDGER_CONFIG`` or ``$FACTLEDGER_HOME/config.toml``;
keys are the lower-case setting names below (``database_url = "..."``).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import platformdirs


class ConfigError(ValueError):
    """A setting has a value factledger cannot use; the message names it."""


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


@attrs.frozen
class Settings:
    """Everything factledger can be configured with."""

    home: Path = attrs.field(factory=_default_home)
    database_url: str | None = None
    schema: str = "public"
    fact_similarity: float = 0.75
    preference_similarity: float = 0.7
    inline_projection: bool = True
    offline_dimension: int = 256
    openai_api_key: str | None = None
    snapshot_interval: int = 50
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
    config_file: Path | None = None

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

        def pick(key: str, env_name: str) -> Any:
            if key in overrides and overrides[key] is not None:
                return overrides[key]
            if env.get(env_name):
                return env[env_name]
            return file_values.get(key)

        values: dict[str, Any] = {"home": home, "config_file": path if path.exists() else None}
        if (v := pick("database_url", "DATABASE_URL")) is not None:
            values["database_url"] = str(v)
        if (v := pick("schema", "FACTLEDGER_SCHEMA")) is not None:
            values["schema"] = str(v)
        if (v := pick("fact_similarity", "FACTLEDGER_FACT_SIMILARITY")) is not None:
            values["fact_similarity"] = _float01("FACTLEDGER_FACT_SIMILARITY", v)
        if (v := pick("preference_similarity", "FACTLEDGER_PREFERENCE_SIMILARITY")) is not None:
            values["preference_similarity"] = _float01("FACTLEDGER_PREFERENCE_SIMILARITY", v)
        if (v := pick("inline_projection", "FACTLEDGER_INLINE_PROJECTION")) is not None:
            values["inline_projection"] = _bool("FACTLEDGER_INLINE_PROJECTION", v)
        if (v := pick("offline_dimension", "FACTLEDGER_OFFLINE_DIMENSION")) is not None:
            values["offline_dimension"] = _int("FACTLEDGER_OFFLINE_DIMENSION", v, minimum=8)
        if (v := pick("snapshot_interval", "FACTLEDGER_SNAPSHOT_INTERVAL")) is not None:
            values["snapshot_interval"] = _int("FACTLEDGER_SNAPSHOT_INTERVAL", v)
        if (v := pick("openai_api_key", "OPENAI_API_KEY")) is not None:
            values["openai_api_key"] = str(v)
        if (v := pick("openai_base_url", "OPENAI_BASE_URL")) is not None:
            values["openai_base_url"] = str(v)
        if (v := pick("llm_model", "FACTLEDGER_LLM_MODEL")) is not None:
            values["llm_model"] = str(v)
        if (v := pick("embedding_model", "FACTLEDGER_EMBEDDING_MODEL")) is not None:
            values["embedding_model"] = str(v)
        if (v := pick("embedding_base_url", "FACTLEDGER_EMBEDDING_BASE_URL")) is not None:
            values["embedding_base_url"] = str(v)
        if (v := pick("embedding_api_key", "FACTLEDGER_EMBEDDING_API_KEY")) is not None:
            values["embedding_api_key"] = str(v)
        if (v := pick("embedding_dimension", "FACTLEDGER_EMBEDDING_DIMENSION")) is not None:
            values["embedding_dimension"] = _int("FACTLEDGER_EMBEDDING_DIMENSION", v, minimum=8)
        if (v := pick("prompts", "FACTLEDGER_PROMPTS")) is not None:
            values["prompts"] = str(v)
            # A prompt file named in the config file is relative to that file.
            from_file = overrides.get("prompts") is None and not env.get("FACTLEDGER_PROMPTS")
            if from_file and str(v).endswith(".toml") and not Path(str(v)).is_absolute():
                values["prompts"] = str(path.parent / str(v))
        if (v := pick("signal_gating", "FACTLEDGER_SIGNAL_GATING")) is not None:
            values["signal_gating"] = _bool("FACTLEDGER_SIGNAL_GATING", v)
        if (v := pick("llm_timeout", "FACTLEDGER_LLM_TIMEOUT")) is not None:
            values["llm_timeout"] = _positive_float("FACTLEDGER_LLM_TIMEOUT", v, minimum=0.01)
        if (v := pick("llm_max_retries", "FACTLEDGER_LLM_MAX_RETRIES")) is not None:
            values["llm_max_retries"] = _int("FACTLEDGER_LLM_MAX_RETRIES", v, minimum=0)
        if (v := pick("llm_retry_backoff", "FACTLEDGER_LLM_RETRY_BACKOFF")) is not None:
            values["llm_retry_backoff"] = _positive_float("FACTLEDGER_LLM_RETRY_BACKOFF", v)
        if (v := pick("response_cache", "FACTLEDGER_RESPONSE_CACHE")) is not None:
            values["response_cache"] = _bool("FACTLEDGER_RESPONSE_CACHE", v)
        unknown = set(file_values) - {a.name for a in attrs.fields(cls)}
        if unknown:
            raise ConfigError(f"config file {path} has unknown settings: {', '.join(sorted(unknown))}")
        return cls(**values)
