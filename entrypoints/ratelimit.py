"""Requests per minute per API key, and failed authentications per client address, shared by
the HTTP API and the MCP endpoint. These buckets live in this process; the server on
PostgreSQL keeps them in the database instead (``SharedRateLimiter``, the same methods), so
every process of ``serve --workers N`` spends from one budget (ADR 0039)."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Limiter(Protocol):
    """Token buckets by name: this process's ``RateLimiter`` or the database's ``SharedRateLimiter``."""

    def charge(self, key_id: str, cost: float = 1.0) -> float: ...

    def wait(self, key_id: str) -> float: ...

    def tracked(self) -> int: ...

    def forget_idle(self, holding: float | None = None) -> None: ...


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

    def tracked(self) -> int:
        """How many keys have a bucket."""
        return len(self._buckets)

    def wait(self, key_id: str) -> float:
        """0 when one more request may go ahead now, else the seconds until it may (nothing taken)."""
        if self.capacity <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.get(key_id, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.rate)
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def forget_idle(self, holding: float | None = None) -> None:
        """Drop the buckets holding at least ``holding`` tokens now (default: the refilled ones,
        which mean the same as no bucket)."""
        threshold = self.capacity if holding is None else holding
        now = time.monotonic()
        with self._lock:
            for key_id, (tokens, then) in list(self._buckets.items()):
                if tokens + (now - then) * self.rate >= threshold:
                    del self._buckets[key_id]


class FailedAuthentications:
    """Wrong or revoked keys per client address: ``per_minute`` a minute, then every request from
    that address is refused (429) before its key is looked up, until the budget refills. Each
    lookup is a database query: a guesser cannot make the server pay for one per attempt."""

    # Buckets kept before the refilled ones are dropped (many addresses trying once each).
    PRUNE_AT = 10_000

    def __init__(self, per_minute: int, buckets: Limiter | None = None) -> None:
        self._buckets: Limiter = buckets if buckets is not None else RateLimiter(per_minute)  # or a SharedRateLimiter
        self.limit = per_minute

    def held_back_for(self, address: str) -> float:
        """Seconds until ``address`` may try a key again (0: it may now)."""
        return self._buckets.wait(address)

    def failed(self, address: str) -> None:
        """Count a failed authentication from ``address``."""
        self._buckets.charge(address)
        if self._buckets.tracked() > self.PRUNE_AT:
            self._buckets.forget_idle()
            if self._buckets.tracked() > self.PRUNE_AT:
                # Many addresses failing at once: keep only those held back (each cost `limit`
                # failed lookups to get there), so the table stays bounded by what was paid.
                self._buckets.forget_idle(holding=1)
