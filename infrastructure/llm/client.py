"""Transport to any OpenAI-compatible endpoint: timeouts, retries, errors, metering, cache.

The official ``openai`` client does the HTTP (its key, base URL, headers,
timeouts and error classes); the request body is sent as built here and the
answer's JSON read here, because the SDK's typed request transform and
response models cost about 2 ms of Python a call, on every chat turn
(``post`` with ``cast_to=bytes``, measured against the fake server). Its own
retries are off, so that every attempt, its backoff and its cost are decided
and recorded here:

* 429, 5xx, timeouts and connection errors are retried with exponential
  backoff (``Retry-After`` honoured), up to ``max_retries`` times, then raise
  ``LLMUnavailable``;
* a wrong key (401/403) raises ``LLMAuthError`` naming OPENAI_API_KEY, an
  unknown model (404) ``LLMConfigError`` naming FACTLEDGER_LLM_MODEL: the CLI
  prints them and exits 2 instead of recording a failure for every message;
* any other refusal (400, 422) raises ``LLMRequestRejected`` with its status;
* after ``breaker_failures`` calls in a row found the endpoint down, calls fail
  at once for ``breaker_cooldown`` seconds (then one is let through to probe):
  a bulk import during an outage records its messages as pending quickly
  instead of waiting out every retry of every message;
* every call, cached or not, lands in the ``llm_calls`` table.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import random
import secrets
import ssl
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs
import numpy as np
import orjson
from numpy.typing import NDArray

from factledger.application.errors import LLMAuthError, LLMConfigError, LLMRequestRejected, LLMUnavailable
from factledger.infrastructure.llm.cache import CachedAnswer, ResponseCache, request_hash
from factledger.infrastructure.llm.usage import CallRecord, UsageLog
from factledger.infrastructure.secret import InstallationSecret

__all__ = ["ChatAnswer", "LLMAuthError", "LLMClient", "LLMConfigError", "LLMRequestRejected", "LLMUnavailable"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_DELAY_S = 30.0
BREAKER_FAILURES = 3
BREAKER_COOLDOWN_S = 30.0


@attrs.frozen
class ChatAnswer:
    """One chat completion, fresh or from the cache."""

    text: str
    model: str
    prompt_id: str
    input_hash: bytes
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    cached: bool = False

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_id": self.prompt_id,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_ms": self.latency_ms,
            "cached": self.cached,
        }


@attrs.frozen
class _EmbeddingBody:
    """An ``/embeddings`` answer as parsed JSON: ``data`` and ``usage``, not yet checked."""

    data: Any
    usage: Any

    @classmethod
    def read(cls, content: bytes) -> _EmbeddingBody:
        """The body of an answer; a ``ValueError`` when it is not a JSON object."""
        body = _json_object(content)
        return cls(body.get("data"), body.get("usage"))

    def prompt_tokens(self) -> int:
        return _count(self.usage, "prompt_tokens")

    def vectors(self, count: int) -> list[NDArray[np.float64]]:
        """One vector per text, by ``index``; ``LLMUnavailable`` for an answer that does not give them."""
        data = self.data
        if not isinstance(data, list):
            raise LLMUnavailable(f"embedding endpoint returned no list of vectors for {count} texts")
        if len(data) != count:
            raise LLMUnavailable(f"embedding endpoint returned {len(data)} vectors for {count} texts")
        if not all(isinstance(item, dict) for item in data):
            raise LLMUnavailable("embedding endpoint returned an item that is not an object in its list of vectors")
        indices = [item.get("index") for item in data]
        if all(isinstance(i, int) for i in indices):  # else in the order given, as the SDK had it
            data = [item for _, item in sorted(zip(indices, data, strict=True), key=lambda pair: pair[0])]
        return [_vector(item.get("embedding"), position) for position, item in enumerate(data)]


def _json_object(content: bytes) -> dict[str, Any]:
    # orjson reads an embedding answer (1,536 floats) ten times faster than json (0.06 against
    # 0.6 ms, ADR 0021); what it refuses (NaN, Infinity) json still reads as before.
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        try:
            body = json.loads(content)
        except ValueError:  # not JSON, or not UTF-8
            body = None
    if not isinstance(body, dict):  # a text/html page from a proxy, say
        shown = content[:100].decode("utf-8", "replace")
        raise ValueError(f"not an OpenAI API response: {shown!r}")
    return body


def _count(usage: Any, name: str) -> int:
    tokens = usage.get(name) if isinstance(usage, dict) else None
    try:
        return max(0, int(tokens or 0))
    except (TypeError, ValueError, OverflowError):  # a count is metering, never worth failing a call over
        return 0


@attrs.frozen
class _ChatBody:
    """A ``/chat/completions`` answer: the first choice's text and the token counts."""

    text: str
    usage: Any

    @classmethod
    def read(cls, content: bytes) -> _ChatBody:
        """The body of an answer; a ``ValueError`` when it is not a JSON object."""
        body = _json_object(content)
        choices = body.get("choices")
        text: Any = ""
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict):
                text = message.get("content") or message.get("refusal") or ""
        if not isinstance(text, str):
            raise ValueError(f"the answer's message content is not text: {str(text)[:100]!r}")
        return cls(text, body.get("usage"))


def _vector(value: Any, position: int) -> NDArray[np.float64]:
    """A list of numbers, or base64 little-endian float32 (the API's ``encoding_format=base64``)."""
    array: NDArray[Any] | None = None
    try:
        if isinstance(value, str):
            raw = base64.b64decode(value, validate=True)
            if len(raw) % 4 == 0:
                array = np.frombuffer(raw, dtype="<f4")
        elif isinstance(value, list):
            array = np.array(value)
    except (ValueError, TypeError):  # bad base64, ragged nesting
        array = None
    if (
        array is None
        or array.ndim != 1
        or array.size == 0
        or array.dtype.kind not in "fiu"
        or not np.isfinite(array).all()
    ):
        shown = repr(value)
        raise LLMUnavailable(
            f"embedding endpoint returned an unreadable vector for text {position}: expected a list of "
            f"finite numbers (or base64 float32), got {shown if len(shown) <= 100 else shown[:100] + '…'}"
        )
    return array.astype(np.float64)


def _detail(exc: Exception) -> str:
    text = str(getattr(exc, "message", None) or exc)
    return text if len(text) <= 300 else text[:300] + "…"


def verified_tls() -> ssl.SSLContext:
    """The verified TLS context this process's LLM clients share, one per CA location
    (``SSL_CERT_FILE`` / ``SSL_CERT_DIR``). Building one reads every CA certificate (~50 ms of
    CPU); each client (one per ledger, tenant and replay) built its own before."""
    return _verified_tls(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _verified_tls(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    import httpx  # with the SDK, on first use (see LLMClient.__init__)

    return httpx.create_ssl_context(trust_env=True)


class LLMClient:
    """Chat completions and embeddings with retries, metering and a response cache."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        cache: ResponseCache | None = None,
        usage: UsageLog | None = None,
        sleep: Callable[[float], None] = time.sleep,
        breaker_failures: int = BREAKER_FAILURES,
        breaker_cooldown: float = BREAKER_COOLDOWN_S,
        secret: InstallationSecret | None = None,
    ):
        # Without the installation's secret, a key of this client's own: its
        # hashes then match nothing another process stored, which only costs cache hits.
        self.secret = secret or InstallationSecret(secrets.token_bytes(32))
        # Imported here, not with the module: the SDK takes a second to import, which every
        # command of the offline default would pay for nothing.
        import openai

        # The client's own retries are off: ours are metered and configurable.
        self.openai = openai.OpenAI(
            api_key=api_key,
            base_url=base_url or None,
            timeout=timeout,
            max_retries=0,
            http_client=openai.DefaultHttpxClient(verify=verified_tls()),
        )
        self.base_url = str(self.openai.base_url)
        self.max_retries = max_retries
        self.backoff = backoff
        self.cache = cache
        self.usage = usage
        self._sleep = sleep
        self.breaker_failures = breaker_failures
        self.breaker_cooldown = breaker_cooldown
        self._failures_in_a_row = 0
        self._open_until = 0.0

    # ---- chat ---------------------------------------------------------------

    def chat(
        self,
        *,
        model: str,
        prompt_id: str,
        prompt: str,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = 0.0,
        system: str | None = None,
    ) -> ChatAnswer:
        """Send ``prompt`` as one user message (after ``system`` as a system message, when given:
        the memories' language, ADR 0029); answered from the cache when seen before.

        A fresh answer is *not* cached here: call ``remember`` once it proved
        usable, so a garbled answer is asked again instead of replayed forever.
        """
        messages = [{"role": "system", "content": system}] if system else []
        request: dict[str, Any] = {"messages": [*messages, {"role": "user", "content": prompt}]}
        if response_format is not None:
            request["response_format"] = response_format
        if temperature is not None:
            request["temperature"] = temperature
        key = request_hash(request, self.secret)
        started = time.monotonic()
        if self.cache is not None:
            hit = self.cache.get(model, prompt_id, key)
            if hit is not None:
                latency = int((time.monotonic() - started) * 1000)
                self.record(CallRecord("chat", model, prompt_id, latency_ms=latency, cached=True, input_hash=key))
                return ChatAnswer(hit.text, model, prompt_id, key, 0, 0, latency, cached=True)
        body = {"model": model, **request}
        response, attempts, latency = self._send(
            lambda: _ChatBody.read(self.openai.post("/chat/completions", body=body, cast_to=bytes)),
            "chat",
            model,
            prompt_id,
        )
        answer = ChatAnswer(
            response.text,
            model,
            prompt_id,
            key,
            input_tokens=_count(response.usage, "prompt_tokens"),
            output_tokens=_count(response.usage, "completion_tokens"),
            latency_ms=latency,
        )
        self.record(
            CallRecord(
                "chat",
                model,
                prompt_id,
                answer.input_tokens,
                answer.output_tokens,
                latency,
                attempts=attempts,
                input_hash=key,
            )
        )
        return answer

    def remember(self, answer: ChatAnswer) -> None:
        """Store a usable fresh answer in the response cache."""
        if self.cache is None or answer.cached:
            return
        try:
            self.cache.put(
                answer.model,
                answer.prompt_id,
                answer.input_hash,
                CachedAnswer(answer.text, answer.input_tokens, answer.output_tokens),
            )
        except Exception:  # a cache that cannot write only costs a repeat call later
            logger.exception("could not store an LLM answer in the response cache")

    # ---- embeddings ---------------------------------------------------------

    def embed(self, *, model: str, texts: Sequence[str], dimensions: int | None) -> list[NDArray[np.float64]]:
        """Raw vectors for ``texts``, in order (one request).

        The body is read here, not by the SDK: its models would build a Python
        object for every float (about 5 ms for one 1,536-float vector).
        """
        kwargs: dict[str, Any] = {"model": model, "input": list(texts), "encoding_format": "float"}
        if dimensions is not None:
            kwargs["dimensions"] = dimensions
        response, attempts, latency = self._send(
            lambda: _EmbeddingBody.read(self.openai.post("/embeddings", body=kwargs, cast_to=bytes)),
            "embedding",
            model,
            None,
        )
        self.record(CallRecord("embedding", model, None, response.prompt_tokens(), 0, latency, attempts=attempts))
        return response.vectors(len(texts))

    # ---- transport ----------------------------------------------------------

    def record(self, call: CallRecord) -> None:
        """Meter one call (the extractor also records messages it gated out)."""
        if self.usage is not None:
            self.usage.record(call)

    def _delay(self, attempt: int, exc: Exception) -> float:
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after is not None:
            try:
                seconds: float = float(retry_after)
                return min(MAX_DELAY_S, max(0.0, seconds))
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        return min(MAX_DELAY_S, self.backoff * 2.0 ** (attempt - 1) * (1 + random.random() / 4))

    def _count_outage(self) -> None:
        self._failures_in_a_row += 1
        if self._failures_in_a_row >= self.breaker_failures:
            self._open_until = time.monotonic() + self.breaker_cooldown
            logger.warning(
                "LLM endpoint %s failed %d calls in a row; pausing calls for %.0fs",
                self.base_url,
                self._failures_in_a_row,
                self.breaker_cooldown,
            )

    def _send(self, send: Callable[[], T], kind: str, model: str, prompt_id: str | None) -> tuple[T, int, int]:
        """(response, attempts, total latency in ms); raises the errors the module describes."""
        import openai  # imported by __init__ already: a lookup in sys.modules

        started = time.monotonic()
        attempt = 0

        def failed(reason: str) -> None:
            latency = int((time.monotonic() - started) * 1000)
            self.record(
                CallRecord(kind, model, prompt_id, latency_ms=latency, ok=False, attempts=attempt, error=reason)
            )

        if started < self._open_until:
            failed("endpoint down (circuit open)")
            raise LLMUnavailable(
                f"the endpoint {self.base_url} failed {self._failures_in_a_row} calls in a row; not calling it "
                f"for another {self._open_until - started:.0f}s"
            )
        while True:
            attempt += 1
            try:
                response = send()
                self._failures_in_a_row = 0
                return response, attempt, int((time.monotonic() - started) * 1000)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                failed(f"HTTP {exc.status_code}")
                raise LLMAuthError(
                    f"the LLM endpoint {self.base_url} refused the API key (HTTP {exc.status_code}): "
                    f"set OPENAI_API_KEY to a valid key for it (or OPENAI_BASE_URL to the endpoint the key "
                    f"belongs to). The endpoint said: {_detail(exc)}"
                ) from None
            except openai.NotFoundError as exc:
                failed("HTTP 404")
                raise LLMConfigError(
                    f"the LLM endpoint {self.base_url} does not know model {model!r} (HTTP 404): check "
                    f"{'FACTLEDGER_EMBEDDING_MODEL' if kind == 'embedding' else 'FACTLEDGER_LLM_MODEL'} "
                    f"and OPENAI_BASE_URL. The endpoint said: {_detail(exc)}"
                ) from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError) as exc:
                status = getattr(exc, "status_code", None)
                reason = f"HTTP {status}: {_detail(exc)}" if status else f"{type(exc).__name__}: {_detail(exc)}"
                # An exhausted quota is a 429 that no wait will fix.
                if getattr(exc, "code", None) == "insufficient_quota" or attempt > self.max_retries:
                    failed(reason)
                    self._count_outage()
                    raise LLMUnavailable(f"{reason} (after {attempt} attempt(s))", status) from None
                delay = self._delay(attempt, exc)
                logger.warning("LLM %s call failed (%s); retry %d in %.1fs", kind, reason, attempt, delay)
                self._sleep(delay)
            except openai.APIStatusError as exc:
                failed(f"HTTP {exc.status_code}")
                raise LLMRequestRejected(f"HTTP {exc.status_code}: {_detail(exc)}", exc.status_code) from None
            except (openai.APIError, ValueError) as exc:  # e.g. a body that is not JSON
                failed(type(exc).__name__)
                raise LLMUnavailable(f"unreadable response ({type(exc).__name__}: {_detail(exc)})") from None
