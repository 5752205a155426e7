"""Prometheus metrics of the server (``GET /metrics``).

Request counts and latencies by route template (never by raw path: ids would
make a series per user), messages ingested by outcome, errors by problem
type, and — read at scrape time from the tenants this process has open —
LLM and embedding calls, tokens, cache hits and the read models' lag. No
series carries a tenant or user name: ``/metrics`` is unauthenticated.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

logger = logging.getLogger(__name__)

REGISTRY = CollectorRegistry(auto_describe=True)

REQUESTS = Counter(
    "factledger_http_requests", "HTTP requests by route and status", ["method", "route", "status"], registry=REGISTRY
)
LATENCY = Histogram(
    "factledger_http_request_duration_seconds",
    "HTTP request latency by route",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)
MESSAGES = Counter(
    "factledger_messages_ingested", "messages ingested, by outcome (recorded, duplicate, extraction_failed)",
    ["status"], registry=REGISTRY,
)  # fmt: skip
ERRORS = Counter("factledger_http_errors", "error responses by status", ["status"], registry=REGISTRY)

USAGE_METRICS = {
    "calls": "LLM chat calls sent",
    "embedding_calls": "embedding requests sent",
    "cache_hits": "LLM and embedding requests answered from the cache",
    "input_tokens": "LLM prompt tokens",
    "output_tokens": "LLM completion tokens",
}


class TenantCollector(Collector):
    """Gauges read from the open tenants' services when Prometheus scrapes."""

    def __init__(self, tenants: Any) -> None:
        self.tenants = tenants

    def collect(self) -> Iterator[GaugeMetricFamily]:
        totals = dict.fromkeys(USAGE_METRICS, 0)
        lag = 0
        quarantined = 0
        for name, service in self.tenants.opened().items():
            try:
                for key, value in service.usage_totals().items():
                    if key in totals:
                        totals[key] += value
                status = service.read_model_status()
                lag = max(lag, status.lag)
                quarantined += status.quarantined
            except Exception:  # a scrape must not fail because one tenant's database is away
                logger.warning("metrics: tenant %s could not be read", name, exc_info=True)
        for key, doc in USAGE_METRICS.items():
            yield GaugeMetricFamily(f"factledger_llm_{key}", f"{doc} (open tenants, all time)", value=totals[key])
        yield GaugeMetricFamily(
            "factledger_projection_lag_events", "largest read-model lag behind the event log", value=lag
        )
        yield GaugeMetricFamily(
            "factledger_projection_quarantined_events", "events the read models could not store", value=quarantined
        )
        yield GaugeMetricFamily(
            "factledger_tenants_open", "tenants this process has open", value=len(self.tenants.opened())
        )


def registry_for(tenants: Any) -> CollectorRegistry:
    """The process's registry plus a collector for these tenants."""
    registry = CollectorRegistry()
    registry.register(_Shared())
    registry.register(TenantCollector(tenants))
    return registry


class _Shared(Collector):
    """The process-wide counters, exposed through an app's own registry."""

    def collect(self) -> Iterator[Any]:
        yield from REGISTRY.collect()
