"""Read-model rebuild speed and memory over a large event log, against reading and decoding alone.

Builds the log efficiently: ingests --seed-messages messages (offline extractor,
--seed-users users; this also warms the embedding cache with every text), then
copies their stored-event rows in SQL until the log holds --events events. Copy
k of a row gets originator id and every UUID in its payload rewritten (first 8
hex digits replaced by k, so items and messages stay distinct and consistent
within the copy), ``user_id`` suffixed with ``#k``, the same versions, and a new
notification id from the table's sequence, in order.

Each run is a fresh process (so its RSS high-water mark is the rebuild's own):
``service.rebuild_read_model()`` (events/s, peak RSS), then, in the same process,
a pass of the recorder's ``select_notifications`` + the mapper's
``to_domain_event`` with the rebuild's batch size (events/s). Ratio
rebuild ÷ decode: target ≥ 0.40. Checks that nothing was quarantined.

    python3 benchmarks/rebuild.py [--events 1000000] [--seed-messages 3000] [--runs 5]
    python3 benchmarks/rebuild.py --quick       # smoke run: 2,000 events, 1 run
    python3 benchmarks/rebuild.py --profile FILE   # cProfile of the first run's rebuild into FILE
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import subprocess
import sys
import time
from pathlib import Path

import attrs
import psycopg
from common import (
    drop_schema,
    emit,
    medians,
    new_schema,
    note,
    parser,
    peak_rss_mb,
    ratio,
    server_uri,
    settings,
    verdict,
)
from history_length import conversation
from psycopg.sql import SQL, Identifier

from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.projections.projector import REBUILD_BATCH_SIZE

UUID_IN_JSON = r'"[0-9a-f]{8}(-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})"'


def seed(base: Settings, messages: int, users: int, seed_value: int) -> int:
    """Ingest the base messages (inline projection off, then one catch-up); return the event count."""
    service = open_ledger(attrs.evolve(base, inline_projection=False), warn_if_offline=False)
    try:
        for i, text in enumerate(conversation(random.Random(seed_value), messages)):
            service.ingest(f"user{i % users:05d}", text)
        service.catch_up()
        return service.ledger.recorder.max_notification_id() or 0
    finally:
        service.close()


def multiply(uri: str, schema: str, base: int, events: int) -> int:
    """Copy the base rows until about ``events`` rows exist; return the row count."""
    table = Identifier(schema, "factledger_events")
    copies = max(0, -(-events // base) - 1)
    step = 50
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 0")
        for first in range(1, copies + 1, step):
            last = min(copies, first + step - 1)
            conn.execute(
                SQL(
                    "INSERT INTO {t} (originator_id, originator_version, topic, state) "
                    "SELECT (lpad(to_hex(k), 8, '0') || substr(e.originator_id::text, 9))::uuid, "
                    "e.originator_version, e.topic, convert_to(regexp_replace(regexp_replace("
                    "convert_from(e.state, 'UTF8'), %(uuid)s, '\"' || lpad(to_hex(k), 8, '0') || '\\1\"', 'g'), "
                    "'\"user_id\":\"([^\"]*)\"', '\"user_id\":\"\\1#' || k || '\"', 'g'), 'UTF8') "
                    "FROM generate_series(%(first)s::int, %(last)s::int) AS k, "
                    "(SELECT * FROM {t} WHERE notification_id <= %(base)s) AS e ORDER BY k, e.notification_id"
                ).format(t=table),
                {"uuid": UUID_IN_JSON, "first": first, "last": last, "base": base},
            )
            note(f"  copies {last}/{copies}")
        conn.execute(SQL("ANALYZE {}").format(table))
        return conn.execute(SQL("SELECT count(*) FROM {}").format(table)).fetchone()[0]  # type: ignore[index]


def child(uri: str, schema: str, home: str, profile: str | None = None) -> None:
    """One run, in its own process: rebuild, then read + decode the same notifications."""
    service = open_ledger(Settings(home=Path(home), database_url=uri, schema=schema), warn_if_offline=False)
    try:
        rss_before = peak_rss_mb()
        profiler = cProfile.Profile() if profile else None
        start = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        rebuilt = service.rebuild_read_model()
        rebuild_s = time.perf_counter() - start
        if profiler is not None and profile:
            profiler.disable()
            with open(profile, "w") as out:
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
                pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
        rss_peak = peak_rss_mb()
        quarantined = service.read_model_status().quarantined
        with psycopg.connect(uri) as conn:
            rows, users = conn.execute(
                SQL("SELECT count(*), count(DISTINCT user_id) FROM {}").format(Identifier(schema, "memories"))
            ).fetchone()  # type: ignore[misc]
        app = service.ledger
        start, position, decoded = time.perf_counter(), 0, 0
        while True:
            batch = app.recorder.select_notifications(
                start=position, limit=REBUILD_BATCH_SIZE, inclusive_of_start=False
            )
            if not batch:
                break
            for notification in batch:
                app.mapper.to_domain_event(notification)
            decoded += len(batch)
            position = batch[-1].id
        decode_s = time.perf_counter() - start
    finally:
        service.close()
    print(
        json.dumps(
            {
                "rebuilt_events": rebuilt,
                "rebuild_events_per_s": rebuilt / rebuild_s,
                "rebuild_s": rebuild_s,
                "decode_events_per_s": decoded / decode_s,
                "peak_rss_mb": rss_peak,
                "rss_before_rebuild_mb": rss_before,
                "quarantined": quarantined,
                "read_model_rows": rows,
                "read_model_users": users,
            }
        )
    )


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--seed-messages", type=int, default=3000)
    p.add_argument("--seed-users", type=int, default=300)
    p.add_argument("--seed", type=int, default=20260101)
    p.add_argument("--profile", metavar="FILE", help="cProfile of the first run's rebuild, written to FILE")
    p.add_argument("--child", nargs=3, metavar=("URI", "SCHEMA", "HOME"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(*args.child, profile=args.profile)
        return
    if args.quick:
        args.events, args.seed_messages, args.seed_users, args.runs = 2000, 100, 10, 1
    uri = server_uri(args.database_url)
    # The runs open the ledger with the same home: the installation secret keys the embedding cache.
    base_settings = settings(uri, new_schema("rebuild"))
    schema, home = base_settings.schema, str(base_settings.home)
    try:
        start = time.perf_counter()
        base = seed(base_settings, args.seed_messages, args.seed_users, args.seed)
        seed_s = time.perf_counter() - start
        start = time.perf_counter()
        total = multiply(uri, schema, base, args.events)
        copy_s = time.perf_counter() - start
        note(f"log: {base} seeded events ({seed_s:.0f} s), {total} in all ({copy_s:.0f} s to copy)")
        runs = []
        for run in range(args.runs):
            profiling = ["--profile", args.profile] if args.profile and run == 0 else []
            done = subprocess.run(
                [sys.executable, __file__, "--child", uri, schema, home, *profiling],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"rebuild run failed: {done.stderr[-3000:]}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            note(f"  run {run + 1}/{args.runs}: " + ", ".join(f"{k} {v:.1f}" for k, v in runs[-1].items()))
    finally:
        drop_schema(uri, schema)
    m = medians(runs)
    m["ratio_rebuild_vs_decode"] = ratio(m["rebuild_events_per_s"], m["decode_events_per_s"])
    print(f"rebuild: {total} events ({base} ingested, the rest copied), warm embedding cache; medians of {args.runs}")
    print(
        f"  rebuild_read_model: {m['rebuild_events_per_s']:.0f} events/s ({m['rebuild_s']:.1f} s), "
        f"peak RSS {m['peak_rss_mb']:.0f} MB (after opening: {m['rss_before_rebuild_mb']:.0f} MB), "
        f"quarantined {m['quarantined']}; read model: {m['read_model_rows']} rows of {m['read_model_users']} users"
    )
    print(f"  select_notifications + to_domain_event: {m['decode_events_per_s']:.0f} events/s")
    print(f"  rebuild / decode: {verdict(m['ratio_rebuild_vs_decode'], 0.40, True)}")
    emit({"benchmark": "rebuild", "events": total, "seed_events": base, "runs": args.runs, **m})


if __name__ == "__main__":
    main()
