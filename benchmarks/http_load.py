"""A load smoke test of the HTTP API: concurrent clients against a real ``factledger serve``.

Starts ``factledger serve`` (uvicorn) on a free port with an embedded
PostgreSQL in a temporary home (or ``$DATABASE_URL``), creates a write key for
each of two tenants, seeds a few users, then runs ``--clients`` concurrent
clients, each sending ``--requests`` requests: a quarter each ingest, profile,
recall and context, on its own users, half the clients on each tenant. Prints
one human line and a JSON object: p50/p99 latency per route and overall,
requests per second and the number of errors, each the median over ``--runs``
runs. No timing is asserted: this machine is small and noisy, compare medians.

    python3 benchmarks/http_load.py [--clients 8] [--requests 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

CLI = [sys.executable, "-m", "factledger.entrypoints.cli"]
ROUTES = ("ingest", "profile", "recall", "context")
USERS_PER_CLIENT = 3
MESSAGES = [
    "我住在杭州",
    "我在杭州工作，老板姓张，平时喜欢简短的回复",
    "I have a dog named Max",
    "谢谢",
    "我不吃辣",
    "I prefer tea over coffee",
    "我搬到上海了",
    "好的",
]
QUERIES = ["住在哪里", "周末去哪玩", "what does the user like", "工作"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile (nearest rank) of ``values``; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


class Server:
    """``factledger serve`` in a temporary home, stopped with Ctrl-C (so the embedded PostgreSQL stops too)."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self.home = Path(tempfile.mkdtemp(prefix="factledger-load-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_"))}
        self.env = {
            **env,
            "FACTLEDGER_HOME": str(self.home / "home"),
            "FACTLEDGER_PORT": str(self.port),
            "FACTLEDGER_RATE_LIMIT": "0",  # the benchmark measures the server, not the rate limiter
            "PYTHONIOENCODING": "utf-8",
        }
        if env.get("DATABASE_URL"):
            self.env["FACTLEDGER_SCHEMA"] = f"load_{uuid.uuid4().hex[:8]}"
        self.log = (self.home / "serve.log").open("w")
        command = [*CLI, "serve", "--workers", str(workers)]
        self.proc = subprocess.Popen(command, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        answered: set[Any] = set()
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"factledger serve exited with {self.proc.returncode}:\n{self.read_log()}")
            try:
                health = httpx.get(self.url + "/healthz", timeout=2)
                if health.status_code == 200:
                    answered.add(health.json().get("worker"))
                    if len(answered) >= self.workers:  # every worker is up (new connections reach each)
                        return
            except httpx.HTTPError:
                pass
            time.sleep(0.05 if answered else 0.2)
        raise RuntimeError(f"factledger serve did not answer within {timeout}s:\n{self.read_log()}")

    def create_key(self, tenant: str) -> str:
        proc = subprocess.run(
            [*CLI, "keys", "create", "--tenant", tenant, "--scope", "write", "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"keys create failed: {proc.stderr}")
        return str(json.loads(proc.stdout)["token"])

    def read_log(self) -> str:
        self.log.flush()
        return (self.home / "serve.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)


def client(url: str, key: str, users: list[str], requests: int, offset: int, run_id: str, out: dict[str, Any]) -> None:
    """One client's requests, in a round of the four routes (starting at ``offset``); records latencies."""
    latencies: dict[str, list[float]] = {route: [] for route in ROUTES}
    errors = 0
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        for n in range(requests):
            route = ROUTES[(n + offset) % len(ROUTES)]
            user = users[n % len(users)]
            path = f"/v1/users/{user}"
            started = time.perf_counter()
            try:
                if route == "ingest":
                    body = {"message": MESSAGES[n % len(MESSAGES)], "message_id": f"{run_id}-{user}-{n}"}
                    response = http.post(f"{path}/messages", json=body)
                elif route == "profile":
                    response = http.get(f"{path}/profile")
                elif route == "recall":
                    response = http.get(f"{path}/recall", params={"query": QUERIES[n % len(QUERIES)], "top_k": 5})
                else:
                    response = http.get(f"{path}/context", params={"query": QUERIES[n % len(QUERIES)]})
                failed = response.status_code >= 400
            except httpx.HTTPError:
                failed = True
            latencies[route].append(time.perf_counter() - started)
            errors += failed
    out["latencies"] = latencies
    out["errors"] = errors


def one_run(url: str, keys: list[str], clients: int, requests: int) -> dict[str, Any]:
    run_id = uuid.uuid4().hex[:8]
    users = [[f"load_{run_id}_{c}_{u}" for u in range(USERS_PER_CLIENT)] for c in range(clients)]
    # Seed every user (not timed), so reads find a memory from the first request on.
    for c, names in enumerate(users):
        headers = {"Authorization": f"Bearer {keys[c % len(keys)]}"}
        for name in names:
            body = {"message": MESSAGES[1], "message_id": f"{run_id}-{name}-seed"}
            httpx.post(f"{url}/v1/users/{name}/messages", json=body, headers=headers, timeout=60).raise_for_status()

    results: list[dict[str, Any]] = [{} for _ in range(clients)]
    threads = [
        threading.Thread(target=client, args=(url, keys[c % len(keys)], users[c], requests, c, run_id, results[c]))
        for c in range(clients)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started

    by_route = {route: [s for r in results for s in r["latencies"][route]] for route in ROUTES}
    everything = [s for samples in by_route.values() for s in samples]
    latency = {
        name: {"p50": percentile(samples, 0.50) * 1000, "p99": percentile(samples, 0.99) * 1000}
        for name, samples in [("overall", everything), *by_route.items()]
    }
    return {
        "requests_per_s": len(everything) / wall,
        "errors": sum(r["errors"] for r in results),
        "latency_ms": latency,
    }


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "requests_per_s": round(statistics.median(r["requests_per_s"] for r in runs), 1),
        "errors": statistics.median_low(r["errors"] for r in runs),
        "errors_all_runs": sum(r["errors"] for r in runs),
        "latency_ms": {
            name: {q: round(statistics.median(r["latency_ms"][name][q] for r in runs), 2) for q in ("p50", "p99")}
            for name in runs[0]["latency_ms"]
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    parser.add_argument("--requests", type=int, default=200, help="requests per client (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the medians are reported (default 3)")
    args = parser.parse_args()

    server = Server()
    try:
        server.wait_ready()
        keys = [server.create_key("loada"), server.create_key("loadb")]
        runs = [one_run(server.url, keys, args.clients, args.requests) for _ in range(args.runs)]
    finally:
        server.stop()

    result = {
        "clients": args.clients,
        "requests_per_client": args.requests,
        "runs": args.runs,
        "tenants": 2,
        **median_of(runs),
    }
    overall = result["latency_ms"]["overall"]
    print(
        f"http load: {args.clients} clients x {args.requests} requests, median of {args.runs} runs: "
        f"{result['requests_per_s']} req/s, p50 {overall['p50']} ms, p99 {overall['p99']} ms, "
        f"{result['errors']} errors"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
