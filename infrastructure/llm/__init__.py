"""Extraction, judgement and embeddings through any OpenAI-compatible endpoint.

OpenAI, DeepSeek, Qwen (DashScope compatible mode), vLLM and Ollama all speak
the same API; ``OPENAI_BASE_URL`` picks the endpoint, ``FACTLEDGER_LLM_MODEL``
and ``FACTLEDGER_EMBEDDING_MODEL`` the models, ``FACTLEDGER_PROMPTS`` the
prompt set. ``llm_parts`` wires them; ``bootstrap.default_parts`` calls it
when ``OPENAI_API_KEY`` is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from factledger.application.ports import Embedder
from factledger.infrastructure.config import Settings
from factledger.infrastructure.llm.cache import ResponseCache
from factledger.infrastructure.llm.client import LLMAuthError, LLMClient, LLMConfigError, LLMUnavailable
from factledger.infrastructure.llm.embedder import OpenAIEmbedder
from factledger.infrastructure.llm.judge import LLMJudge
from factledger.infrastructure.llm.prompts import PromptError, PromptSet, load_prompt_set
from factledger.infrastructure.llm.usage import UsageLog

if TYPE_CHECKING:
    # At run time imported where an extractor is built (``llm_parts``) or asked for (``__getattr__``):
    # its gate compiles the offline signal rules, which the response cache and the call log (imported
    # by every ledger) do not need.
    from factledger.infrastructure.llm.extractor import LLMExtractor

__all__ = [
    "LLMAuthError",
    "LLMClient",
    "LLMConfigError",
    "LLMExtractor",
    "LLMJudge",
    "LLMUnavailable",
    "OpenAIEmbedder",
    "PromptError",
    "PromptSet",
    "ResponseCache",
    "UsageLog",
    "llm_client",
    "llm_parts",
    "load_prompt_set",
]


def llm_client(
    settings: Settings, datastore: Any, *, embeddings: bool = False, usage: UsageLog | None = None
) -> LLMClient:
    """The metered, cached client for the settings' endpoint, on the ledger's database
    (``datastore`` None: no database, so no response cache and no call log).

    ``embeddings``: the client for the embedding endpoint, which may be another
    one (FACTLEDGER_EMBEDDING_BASE_URL / FACTLEDGER_EMBEDDING_API_KEY); ``usage``:
    the call log to meter into (default: a new one on ``datastore``).
    """
    api_key = (settings.embedding_api_key if embeddings else None) or settings.openai_api_key
    base_url = (settings.embedding_base_url if embeddings else None) or settings.openai_base_url
    if not api_key:
        raise LLMAuthError("OPENAI_API_KEY is not set")
    return LLMClient(
        api_key=api_key,
        base_url=base_url,
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        backoff=settings.llm_retry_backoff,
        cache=ResponseCache(datastore, settings.schema) if settings.response_cache and datastore else None,
        usage=usage or (UsageLog(datastore, settings.schema) if datastore else None),
        secret=settings.installation_secret(),
    )


def llm_parts(
    settings: Settings, datastore: Any, usage: UsageLog | None = None
) -> tuple[LLMExtractor, LLMJudge, Embedder]:
    """Extractor, judge and embedder for ``settings`` (metered into ``usage`` when given);
    the prompt file is validated here."""
    from factledger.infrastructure.llm.extractor import LLMExtractor

    prompts = load_prompt_set(settings.prompts)
    client = llm_client(settings, datastore, usage=usage)
    language = settings.memory_language
    extractor = LLMExtractor(
        client, settings.llm_model, prompts, signal_gating=settings.signal_gating, language=language
    )
    judge = LLMJudge(client, settings.llm_model, prompts, language=language)
    embedder: Embedder
    if settings.embedding_model == "offline":
        from factledger.infrastructure.offline import HashedNgramEmbedder

        embedder = HashedNgramEmbedder(dimension=settings.offline_dimension)
    else:
        separate = settings.embedding_base_url or settings.embedding_api_key
        embedding_client = llm_client(settings, datastore, embeddings=True, usage=usage) if separate else client
        embedder = OpenAIEmbedder(embedding_client, settings.embedding_model, settings.embedding_dimension)
    return extractor, judge, embedder


def __getattr__(name: str) -> Any:
    """``LLMExtractor``, imported when first asked for (see the imports above)."""
    if name != "LLMExtractor":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from factledger.infrastructure.llm.extractor import LLMExtractor

    return LLMExtractor
