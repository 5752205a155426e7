"""``OpenAIEmbedder``: embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

Its id names the model and the dimension (``openai:text-embedding-3-small@1536``):
the embedding cache and the read model are keyed by it, so switching model or
size can never mix vectors (the read model then asks for a rebuild).

The dimension is the configured one (sent as ``dimensions``, which
text-embedding-3 and some compatible servers honour), else the model's known
native size, else measured once with a probe call (and remembered in the
response cache).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from factledger.infrastructure.config import ConfigError
from factledger.infrastructure.llm.cache import CachedAnswer, request_hash
from factledger.infrastructure.llm.client import LLMClient, LLMRequestRejected

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
BATCH = 128  # texts per request, well under every provider's limit
PROBE = "dimension probe"


def _normalised(vector: NDArray[np.float64]) -> NDArray[np.float64]:
    norm = math.sqrt(float(vector @ vector))
    return vector / norm if norm > 0 else np.zeros_like(vector)


class OpenAIEmbedder:
    """Implements the ``Embedder`` port: unit vectors of a fixed dimension."""

    def __init__(self, client: LLMClient, model: str, dimension: int | None = None):
        self.client = client
        self.model = model
        # Ask for a size only when one was configured: not every server takes ``dimensions``.
        self._ask_dimensions = dimension
        self._dimension = dimension or KNOWN_DIMENSIONS.get(model) or self._probe()

    @property
    def embedder_id(self) -> str:
        return f"openai:{self.model}@{self._dimension}"

    @property
    def recall_threshold(self) -> float:
        # OpenAI-style embedding models score unrelated short texts around 0.05–0.2.
        return 0.25

    @property
    def dimension(self) -> int:
        return self._dimension

    def _probe(self) -> int:
        """Measure an unknown model's size with one call, remembered in the response cache."""
        cache = self.client.cache
        key = request_hash({"probe": PROBE}, self.client.secret)
        if cache is not None and (hit := cache.get(self.model, "embedding-dimension", key)) is not None:
            return int(hit.text)
        size = len(self.client.embed(model=self.model, texts=[PROBE], dimensions=None)[0])
        if cache is not None:
            cache.put(self.model, "embedding-dimension", key, CachedAnswer(str(size), 0, 0))
        return size

    def _request(self, texts: list[str]) -> list[NDArray[np.float64]]:
        try:
            return self.client.embed(model=self.model, texts=texts, dimensions=self._ask_dimensions)
        except LLMRequestRejected:
            if self._ask_dimensions is None:
                raise
            # This server does not take ``dimensions``: ask without, and check the size below.
            self._ask_dimensions = None
            return self.client.embed(model=self.model, texts=texts, dimensions=None)

    def embed(self, texts: Sequence[str]) -> list[NDArray[np.float64]]:
        vectors: list[NDArray[np.float64]] = []
        items = [t if t.strip() else " " for t in texts]  # the API rejects empty input
        for start in range(0, len(items), BATCH):
            for vector in self._request(items[start : start + BATCH]):
                if len(vector) != self._dimension:
                    raise ConfigError(
                        f"embedding model {self.model!r} returned {len(vector)}-dimensional vectors, "
                        f"not {self._dimension}: set FACTLEDGER_EMBEDDING_DIMENSION={len(vector)} "
                        "(then `factledger projection rebuild`)"
                    )
                vectors.append(_normalised(vector))
        return vectors
