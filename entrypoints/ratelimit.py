"""Requests per minute per API key, shared by the HTTP API and the MCP endpoint."""

from __future__ import annotations

import threading
import time


class RateLimiter:
    """A token bucket per key: ``per_minute`` requests a minute, in bursts of up to as many."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def charge(self, key_id: str, cost: float = 1.0) -> float:
        """0 when the request (``cost`` requests' worth: a batch) may go ahead, else the seconds
        until it may; nothing is taken from the bucket then."""
        if self.capacity <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.get(key_id, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - then) * self.rate)
            if tokens >= cost:
                self._buckets[key_id] = (tokens - cost, now)
                return 0.0
            self._buckets[key_id] = (tokens, now)
            return (cost - tokens) / self.rate
