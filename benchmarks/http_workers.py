"""``factledger serve --workers 2`` against ``--workers 1`` under the same mixed load (ADR 0039).

Starts both servers (each its own home and embedded PostgreSQL, or its own
schema of ``$DATABASE_URL``), waits until every worker of each answers, then
runs the load of ``http_load.py`` — ``--clients`` client threads, a quarter
each of ingest, profile, recall and context on their own users, two tenants —
against one server then the other, ``--runs`` times, alternating (so a noisy
neighbour weighs on both alike). Prints the requests per second of each (the
median of the runs), their ratio (target ≥ 1.5) and the p99 of each request
kind, then one JSON object. The client threads run on the same machine as the
servers: on 2 cores they take a share of the CPU the second worker would use.

    python3 benchmarks/http_workers.py [--clients 8] [--requests 200] [--runs 3] [--quick] [--database-url URL]
"""

from __future__ import annotations

import os
import statistics
from typing import Any

import httpx
from common import emit, parser
from http_load import ROUTES, Server, median_of, one_run

WORKERS = (1, 2)


def warm_up(server: Server, keys: list[str], rounds: int) -> None:
    """Every worker opens both tenants before the clock runs (a tenant's first request in a
    process opens its ledger): requests on new connections, which the workers share out."""
    for _ in range(rounds * server.workers):
        for key in keys:
            httpx.get(f"{server.url}/v1/users/warm/profile", headers={"Authorization": f"Bearer {key}"}, timeout=60)


def measure(clients: int, requests: int, runs: int) -> dict[str, Any]:
    servers = {workers: Server(workers) for workers in WORKERS}
    try:
        keys: dict[int, list[str]] = {}
        for workers, server in servers.items():
            server.wait_ready()
            keys[workers] = [server.create_key("loada"), server.create_key("loadb")]
        for workers, server in servers.items():
            warm_up(server, keys[workers], rounds=2 if requests < 50 else 10)
            one_run(server.url, keys[workers], clients, max(8, requests // 10))
        results: dict[int, list[dict[str, Any]]] = {workers: [] for workers in WORKERS}
        for _ in range(runs):
            for workers, server in servers.items():
                results[workers].append(one_run(server.url, keys[workers], clients, requests))
    finally:
        for server in servers.values():
            server.stop()
    return {workers: {**median_of(done), "all_runs": [round(r["requests_per_s"], 1) for r in done]}
            for workers, done in results.items()}  # fmt: skip


def main() -> None:
    p = parser(__doc__)
    p.set_defaults(runs=3)
    p.add_argument("--clients", type=int, default=8, help="concurrent client threads (default 8)")
    p.add_argument("--requests", type=int, default=200, help="requests per client and run (default 200)")
    args = p.parse_args()
    if args.quick:
        args.clients, args.requests, args.runs = 4, 8, 1
    if args.database_url:  # the servers use it, each in a schema of its own
        os.environ["DATABASE_URL"] = args.database_url
    load_before = os.getloadavg()[0]
    measured = measure(args.clients, args.requests, args.runs)
    one, two = measured[1], measured[2]
    result = {
        "clients": args.clients,
        "requests_per_client": args.requests,
        "runs": args.runs,
        "one_worker_req_per_s": one["requests_per_s"],
        "two_workers_req_per_s": two["requests_per_s"],
        "ratio_two_vs_one_worker": round(two["requests_per_s"] / one["requests_per_s"], 2),
        "load_average_1min": round(statistics.mean([load_before, os.getloadavg()[0]]), 1),
        "p99_ms": {
            f"{workers}_worker{'s' * (workers > 1)}": {route: m["latency_ms"][route]["p99"] for route in ROUTES}
            for workers, m in measured.items()
        },
        "errors": {str(workers): m["errors_all_runs"] for workers, m in measured.items()},
        "by_workers": {str(workers): m for workers, m in measured.items()},
    }
    print(
        f"http workers: {args.clients} clients x {args.requests} requests, median of {args.runs} runs: "
        f"--workers 1 {result['one_worker_req_per_s']} req/s, --workers 2 {result['two_workers_req_per_s']} req/s, "
        f"ratio {result['ratio_two_vs_one_worker']} (target >= 1.5; load average {result['load_average_1min']})"
    )
    for name, p99 in result["p99_ms"].items():
        print(f"  p99 ms with {name.replace('_', ' ')}: " + ", ".join(f"{r} {p99[r]}" for r in ROUTES))
    emit(result)


if __name__ == "__main__":
    main()
