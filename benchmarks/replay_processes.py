"""``replay --processes 2`` against ``--processes 1`` on the same source ledger (issue 29, ADR 0041).

A generated log of --messages messages (the varied Chinese conversation of
history_length.conversation) over --users users, round robin, is imported once
into a new source ledger (``ingest-file``). Each run then replays it twice with
the offline extractor, once with ``--processes 1`` (in the command's own
process) and once with ``--processes 2`` (two worker processes, each a share of
the users, each reading the whole source), each into a new target ledger, each a
``factledger replay`` subprocess timed from start to exit (Python start-up, the
workers' start and the projection's catch-up included). The order alternates
between runs, so neither always meets a warmer server.

Ratio: messages/s with 2 processes ÷ messages/s with 1. The machine's load
average is printed beside it (on a shared machine the second core is not always
free), and the CPU seconds of each (the command and its workers): twice the
one-process CPU ÷ the two-process CPU is what the ratio could reach on two idle
cores (PostgreSQL's CPU aside).

    python3 benchmarks/replay_processes.py [--messages 3000] [--users 300] [--runs 3]
    python3 benchmarks/replay_processes.py --quick        # smoke run: 60 messages, 12 users, 1 run
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from common import emit, medians, new_schema, note, parser, ratio, server_uri
from ingest import workload
from ingest_processes import children_cpu
from psycopg.sql import SQL, Identifier


def cli(env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "factledger.entrypoints.cli", *args, "--json", "-q"],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"factledger {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def replay_run(env: dict[str, str], processes: int, into: str, messages: int) -> tuple[float, float]:
    """Seconds for one ``replay --processes N`` into a new ledger, and the CPU seconds it and its
    workers used (PostgreSQL's own are not counted)."""
    start, cpu = time.perf_counter(), children_cpu()
    report = cli(env, "replay", "--into", into, "--extractor", "offline", "--processes", str(processes))
    elapsed, cpu = time.perf_counter() - start, children_cpu() - cpu
    if report["replayed"] != messages or not report["finished"]:
        raise SystemExit(f"--processes {processes} replayed {report['replayed']} of {messages} messages")
    return elapsed, cpu


def drop_schemas(uri: str, base: str) -> None:
    """The source ledger's schema and its replays' (``<base>__<name>_…``)."""
    with psycopg.connect(uri, autocommit=True) as conn:
        names = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (base + "%",)).fetchall()
        for (name,) in names:
            conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--messages", type=int, default=3_000)
    p.add_argument("--users", type=int, default=300)
    p.add_argument("--seed", type=int, default=20260101)
    p.set_defaults(runs=3)
    args = p.parse_args()
    if args.quick:
        args.messages, args.users, args.runs = 60, 12, 1
    uri = server_uri(args.database_url)
    path = Path(tempfile.mkdtemp(prefix="flreplay_")) / "log.jsonl"
    lines = workload(args.messages, args.users, args.seed)
    path.write_text("".join(json.dumps({"user_id": u, "message": m}, ensure_ascii=False) + "\n" for u, m in lines))
    base = new_schema("rp")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_"))}
    env.update(DATABASE_URL=uri, FACTLEDGER_SCHEMA=base, FACTLEDGER_HOME=tempfile.mkdtemp(prefix="flhome_"))
    runs = []
    try:
        cli(env, "ingest-file", str(path))
        for run in range(args.runs):
            load_before = os.getloadavg()[0]
            order = (1, 2) if run % 2 == 0 else (2, 1)
            seconds = {n: replay_run(env, n, f"r{run}_p{n}", args.messages) for n in order}
            figures = {
                "one_process_msg_per_s": args.messages / seconds[1][0],
                "two_processes_msg_per_s": args.messages / seconds[2][0],
                "one_process_cpu_s": seconds[1][1],
                "two_processes_cpu_s": seconds[2][1],
                "load_average_1min": max(load_before, os.getloadavg()[0]),
            }
            runs.append(figures)
            note(f"  run {run + 1}/{args.runs}: " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items()))
    finally:
        drop_schemas(uri, base)
    report(args, medians(runs))


def report(args: object, m: dict[str, float]) -> None:
    m["ratio_two_vs_one_process"] = ratio(m["two_processes_msg_per_s"], m["one_process_msg_per_s"])
    m["cpu_bound_on_two_idle_cores"] = ratio(2 * m["one_process_cpu_s"], m["two_processes_cpu_s"])
    messages, users, runs = (getattr(args, k) for k in ("messages", "users", "runs"))
    print(
        f"replay --processes: {messages} messages over {users} users, offline extractor; "
        f"medians of {runs} runs on {os.cpu_count()} cores, 1-min load average {m['load_average_1min']:.2f}"
    )
    print(
        f"  --processes 1: {m['one_process_msg_per_s']:.1f} msg/s; "
        f"--processes 2: {m['two_processes_msg_per_s']:.1f} msg/s"
    )
    print(
        f"  CPU seconds (the command and its workers, not PostgreSQL): {m['one_process_cpu_s']:.1f} on one, "
        f"{m['two_processes_cpu_s']:.1f} on two: at most {m['cpu_bound_on_two_idle_cores']:.2f}x on two idle cores"
    )
    print(f"  2 processes / 1: {m['ratio_two_vs_one_process']:.2f}")
    emit({"benchmark": "replay_processes", "messages": messages, "users": users, "runs": runs, **m})


if __name__ == "__main__":
    main()
