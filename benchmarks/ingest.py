"""Ingest throughput against PostgreSQL's own ceiling for the same event rows.

--messages messages (a varied Chinese conversation, history_length.conversation)
over --users users, round robin, offline extractor, one new ledger (schema) per
run and part:

  (a) one message at a time through the library, ``open_ledger(...).ingest``
      (inline projection, the default): msg/s, p50/p99 latency;
  (b) bulk: ``factledger ingest-file FILE`` in a subprocess (wall time, Python
      start-up included): msg/s and events/s;
  (c) the ceiling, in the same run: the event rows (a) wrote, read back and
      inserted into a table of the same shape (``LIKE factledger_events``), one
      transaction per message with that message's rows; and a bare COPY of all rows.

  (d) what (a) asks of PostgreSQL, counted on a fresh ledger (sql_counts.py, a psycopg hook):
      statements, transactions (COMMITs and statements run outside a transaction, each the
      server's own transaction: what pg_stat_database.xact_commit counts), commits and round
      trips per message, and the statements by where they come from (issue 29: ≤ 4 statements).

Ratios: (a) msg/s ÷ (c) txn msg/s (target ≥ 0.5; issue 29 asks ≥ 0.30 of the same ceiling);
(b) events/s ÷ COPY rows/s (target ≥ 0.10).

    python3 benchmarks/ingest.py [--messages 10000] [--users 1000] [--runs 5] [--profile FILE]
    python3 benchmarks/ingest.py --quick        # smoke run: 40 messages, 8 users, 1 run
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from common import drop_schema, emit, ledger, medians, new_schema, note, parser, percentile, ratio, server_uri, verdict
from history_length import conversation
from psycopg.sql import SQL, Identifier
from sql_counts import counting

EVENTS = "factledger_events"


def workload(messages: int, users: int, seed: int) -> list[tuple[str, str]]:
    return [(f"user{i % users:05d}", text) for i, text in enumerate(conversation(random.Random(seed), messages))]


def library_run(uri: str, work: list[tuple[str, str]]) -> tuple[dict[str, float], list[list[tuple[Any, ...]]]]:
    """(a): one ingest per message; returns the figures and the rows written, grouped by message."""
    with ledger(uri, "ing") as (service, schema):
        latencies = []
        start = time.perf_counter()
        for n, (user, text) in enumerate(work, 1):
            t = time.perf_counter()
            service.ingest(user, text)
            latencies.append((time.perf_counter() - t) * 1000)
            if n % 1000 == 0:
                note(f"  (a) {n}/{len(work)} messages, {n / (time.perf_counter() - start):.1f} msg/s")
        elapsed = time.perf_counter() - start
        groups = saved_groups(uri, schema)
    rows = [row for group in groups for row in group]
    figures = {
        "library_msg_per_s": len(work) / elapsed,
        "library_p50_ms": percentile(latencies, 50),
        "library_p99_ms": percentile(latencies, 99),
        "events": len(rows),
        "events_per_msg": len(rows) / len(work),
        "event_bytes_avg": sum(len(r[3]) for r in rows) / max(1, len(rows)),
    }
    return figures, groups


def saved_groups(uri: str, schema: str) -> list[list[tuple[Any, ...]]]:
    """The event rows of the ledger in ``schema``, in log order, grouped by the save that wrote them."""
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            SQL("SELECT originator_id, originator_version, topic, state FROM {} ORDER BY notification_id").format(
                Identifier(schema, EVENTS)
            )
        ).fetchall()
    return message_groups(rows)


def message_groups(rows: list[tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
    """Event rows (originator_id, version, topic, state) in log order, grouped by the save that wrote
    them: a message's events start at its MessageIngested (a new user's Started before it)."""
    groups: list[list[tuple[Any, ...]]] = []
    for row in rows:
        topic = row[2]
        if topic.endswith(".Started") or (
            topic.endswith(".MessageIngested") and not groups[-1][-1][2].endswith(".Started")
        ):
            groups.append([])
        groups[-1].append(row)
    return groups


def bulk_run(uri: str, work: list[tuple[str, str]]) -> dict[str, float]:
    """(b): ``factledger ingest-file`` on a JSONL file of the same messages."""
    schema = new_schema("bulk")
    home = Path(tempfile.mkdtemp(prefix="flhome_"))
    path = home / "messages.jsonl"
    path.write_text("".join(json.dumps({"user_id": u, "message": m}, ensure_ascii=False) + "\n" for u, m in work))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_"))}
    env.update(DATABASE_URL=uri, FACTLEDGER_SCHEMA=schema, FACTLEDGER_HOME=str(home))
    try:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "factledger.entrypoints.cli", "ingest-file", str(path), "--json", "-q"],
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"ingest-file failed ({done.returncode}): {done.stderr[-2000:]}")
        with psycopg.connect(uri) as conn:
            events = conn.execute(SQL("SELECT count(*) FROM {}").format(Identifier(schema, EVENTS))).fetchone()[0]  # type: ignore[index]
    finally:
        drop_schema(uri, schema)
    return {"bulk_msg_per_s": len(work) / elapsed, "bulk_events_per_s": events / elapsed, "bulk_s": elapsed}


def ceiling_run(uri: str, groups: list[list[tuple[Any, ...]]]) -> dict[str, float]:
    """(c): the same rows, one transaction per message, then one COPY, into a table shaped like the ledger's."""
    schema = new_schema("ceil")
    rows = [r for g in groups for r in g]
    with psycopg.connect(uri) as conn:
        conn.execute(SQL("CREATE SCHEMA {}").format(Identifier(schema)))
        # The ledger's DDL: columns, primary key (originator_id, originator_version), unique notification_id.
        conn.execute(
            SQL(
                "CREATE TABLE {t} (originator_id uuid NOT NULL, originator_version bigint NOT NULL, "
                "topic text NOT NULL, state bytea, notification_id bigserial, "
                "PRIMARY KEY (originator_id, originator_version))"
            ).format(t=Identifier(schema, "events"))
        )
        conn.execute(SQL("CREATE UNIQUE INDEX ON {} (notification_id)").format(Identifier(schema, "events")))
        conn.commit()
        insert = SQL("INSERT INTO {} (originator_id, originator_version, topic, state) VALUES (%s, %s, %s, %s)").format(
            Identifier(schema, "events")
        )
        try:
            start = time.perf_counter()
            with conn.cursor() as cur:
                for group in groups:
                    cur.executemany(insert, group)
                    conn.commit()
            txn_s = time.perf_counter() - start
            conn.execute(SQL("TRUNCATE {}").format(Identifier(schema, "events")))
            conn.commit()
            start = time.perf_counter()
            with (
                conn.cursor() as cur,
                cur.copy(
                    SQL("COPY {} (originator_id, originator_version, topic, state) FROM STDIN").format(
                        Identifier(schema, "events")
                    )
                ) as copy,
            ):
                for row in rows:
                    copy.write_row(row)
            conn.commit()
            copy_s = time.perf_counter() - start
        finally:
            conn.rollback()
            conn.execute(SQL("DROP SCHEMA {} CASCADE").format(Identifier(schema)))
            conn.commit()
    return {
        "ceiling_txn_msg_per_s": len(groups) / txn_s,
        "ceiling_txn_rows_per_s": len(rows) / txn_s,
        "ceiling_copy_rows_per_s": len(rows) / copy_s,
    }


def counted_run(uri: str, work: list[tuple[str, str]]) -> dict[str, Any]:
    """(d): the statements (a) sends, per message, after a warm-up on other users (imports, caches)."""
    with ledger(uri, "sql") as (service, _):
        for user, text in work[: min(len(work), 40)]:
            service.ingest(user + "w", text)
        with counting() as counts:
            for user, text in work:
                service.ingest(user, text)
    n = len(work)
    return {
        "statements_per_msg": counts.statements / n,
        "transactions_per_msg": counts.transactions / n,
        "commits_per_msg": counts.commits / n,
        "round_trips_per_msg": counts.round_trips / n,
        "statements_by_source": {kind: round(count / n, 2) for kind, count in counts.kinds.most_common(20)},
    }


def profile(uri: str, work: list[tuple[str, str]], path: str) -> None:
    """An untimed extra run of (a) under cProfile; the top 25 cumulative entries go to ``path``."""
    with ledger(uri, "prof") as (service, _):
        for user, text in work[: min(len(work), 50)]:  # warm: imports, caches, prepared statements
            service.ingest(user + "w", text)
        profiler = cProfile.Profile()
        profiler.enable()
        for user, text in work:
            service.ingest(user, text)
        profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("cumulative")
    stats.print_stats(25)
    out.write("\n--- by own time ---\n")
    stats.sort_stats("tottime").print_stats(12)
    Path(path).write_text(f"cProfile of {len(work)} ingests (one message at a time)\n{out.getvalue()}")
    note(f"profile written to {path}")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--messages", type=int, default=10_000)
    p.add_argument("--users", type=int, default=1_000)
    p.add_argument("--seed", type=int, default=20260101)
    p.add_argument("--profile", metavar="FILE", help="also profile (a) and write the top 25 cumulative entries")
    p.add_argument("--no-bulk", action="store_true", help="skip (b)")
    args = p.parse_args()
    if args.quick:
        args.messages, args.users, args.runs = 40, 8, 1
    uri = server_uri(args.database_url)
    work = workload(args.messages, args.users, args.seed)
    runs = []
    for run in range(args.runs):
        figures, groups = library_run(uri, work)
        figures.update(ceiling_run(uri, groups))
        if not args.no_bulk:
            figures.update(bulk_run(uri, work))
        runs.append(figures)
        note(f"  run {run + 1}/{args.runs}: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    if args.profile:
        profile(uri, work, args.profile)
    m = medians(runs)
    m.update(counted_run(uri, work[: min(len(work), 1000)]))
    m["ratio_library_vs_txn_ceiling"] = ratio(m["library_msg_per_s"], m["ceiling_txn_msg_per_s"])
    if not args.no_bulk:
        m["ratio_bulk_events_vs_copy"] = ratio(m["bulk_events_per_s"], m["ceiling_copy_rows_per_s"])
    print(f"ingest: {args.messages} messages over {args.users} users, offline extractor; medians of {args.runs} runs")
    print(
        f"  (a) library, one at a time: {m['library_msg_per_s']:.1f} msg/s, p50 {m['library_p50_ms']:.1f} ms, "
        f"p99 {m['library_p99_ms']:.1f} ms ({m['events_per_msg']:.2f} events/msg of {m['event_bytes_avg']:.0f} B)"
    )
    if not args.no_bulk:
        print(f"  (b) ingest-file: {m['bulk_msg_per_s']:.1f} msg/s, {m['bulk_events_per_s']:.0f} events/s")
    print(
        f"  (c) PostgreSQL: one txn per message {m['ceiling_txn_msg_per_s']:.0f} msg/s "
        f"({m['ceiling_txn_rows_per_s']:.0f} rows/s); COPY {m['ceiling_copy_rows_per_s']:.0f} rows/s"
    )
    print(
        f"  (d) per message: {m['statements_per_msg']:.2f} statements (issue 29: ≤ 4), "
        f"{m['transactions_per_msg']:.2f} transactions ({m['commits_per_msg']:.2f} COMMIT), "
        f"{m['round_trips_per_msg']:.2f} round trips"
    )
    for kind, per_msg in m["statements_by_source"].items():
        print(f"      {per_msg:5.2f}  {kind}")
    print(f"  library / txn ceiling: {verdict(m['ratio_library_vs_txn_ceiling'], 0.5, True)} (issue 29: ≥ 0.30)")
    if not args.no_bulk:
        print(f"  bulk events/s / COPY rows/s: {verdict(m['ratio_bulk_events_vs_copy'], 0.10, True)}")
    emit({"benchmark": "ingest", "messages": args.messages, "users": args.users, "runs": args.runs, **m})


if __name__ == "__main__":
    main()
