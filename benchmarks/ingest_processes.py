"""``ingest-file --processes 2`` against ``--processes 1`` on the same log (issue 29, ADR 0034).

A generated log of --messages messages (the varied Chinese conversation of
history_length.conversation) over --users users, round robin, offline
extractor. Each run imports it into a new ledger (schema) twice, once with
``--processes 1`` (in the command's own process) and once with
``--processes 2`` (two worker processes), each a ``factledger ingest-file``
subprocess timed from start to exit (Python start-up, the workers' start and
the projection's catch-up included). The order alternates between runs, so
neither always meets a warmer server.

Ratio: msg/s with 2 processes ÷ msg/s with 1 (target ≥ 1.6 on a 2-core machine).
The machine's load average is printed beside it: on a shared machine the
second core is not always free. The CPU seconds of each (the command and its
workers) are printed too: twice the one-process CPU ÷ the two-process CPU is
what the ratio could reach on two idle cores (PostgreSQL's CPU aside). So is
the start-up, timed as ``--processes 1`` of a one-line log: Python, the
imports, the rules compiled, the ledger opened. It is serial (no worker
exists yet), so with one process taking T seconds of which S start-up, two
take at least S + (T - S) / 2: the ratio's bound with that start-up.

    python3 benchmarks/ingest_processes.py [--messages 3000] [--users 300] [--runs 3]
    python3 benchmarks/ingest_processes.py --quick        # smoke run: 60 messages, 12 users, 1 run
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import drop_schema, emit, medians, new_schema, note, parser, ratio, server_uri, verdict
from ingest import workload


def import_run(uri: str, path: Path, processes: int) -> tuple[float, float]:
    """Seconds for one ``ingest-file --processes N`` of ``path`` into a new ledger, and the CPU
    seconds it and its workers used (PostgreSQL's own are not counted)."""
    schema = new_schema(f"p{processes}")
    home = Path(tempfile.mkdtemp(prefix="flhome_"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_"))}
    env.update(DATABASE_URL=uri, FACTLEDGER_SCHEMA=schema, FACTLEDGER_HOME=str(home))
    command = [sys.executable, "-m", "factledger.entrypoints.cli", "ingest-file", str(path), "--json", "-q"]
    try:
        start, cpu = time.perf_counter(), children_cpu()
        done = subprocess.run([*command, "--processes", str(processes)], env=env, capture_output=True, text=True)
        elapsed, cpu = time.perf_counter() - start, children_cpu() - cpu
        if done.returncode != 0:
            raise SystemExit(f"ingest-file --processes {processes} failed ({done.returncode}): {done.stderr[-2000:]}")
        summary = json.loads(done.stdout)
        if summary["ingested"] != summary["lines"]:
            raise SystemExit(f"--processes {processes} ingested {summary['ingested']} of {summary['lines']} lines")
    finally:
        drop_schema(uri, schema)
    return elapsed, cpu


def children_cpu() -> float:
    """CPU seconds of the processes this one has waited for (and theirs: the workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


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
    path = Path(tempfile.mkdtemp(prefix="flproc_")) / "log.jsonl"
    lines = workload(args.messages, args.users, args.seed)
    path.write_text("".join(json.dumps({"user_id": u, "message": m}, ensure_ascii=False) + "\n" for u, m in lines))
    one_line = path.with_name("one.jsonl")
    one_line.write_text(path.read_text().splitlines(keepends=True)[0])
    runs = []
    for run in range(args.runs):
        load_before = os.getloadavg()[0]
        order = (1, 2) if run % 2 == 0 else (2, 1)
        seconds = {n: import_run(uri, path, n) for n in order}
        figures = {
            "one_process_msg_per_s": args.messages / seconds[1][0],
            "two_processes_msg_per_s": args.messages / seconds[2][0],
            "one_process_cpu_s": seconds[1][1],
            "two_processes_cpu_s": seconds[2][1],
            "start_up_s": import_run(uri, one_line, 1)[0],
            "load_average_1min": max(load_before, os.getloadavg()[0]),
        }
        runs.append(figures)
        note(f"  run {run + 1}/{args.runs}: " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items()))
    m = medians(runs)
    m["ratio_two_vs_one_process"] = ratio(m["two_processes_msg_per_s"], m["one_process_msg_per_s"])
    # On two idle cores, with the same CPU work spread evenly over both, the ratio could reach this.
    m["cpu_bound_on_two_idle_cores"] = ratio(2 * m["one_process_cpu_s"], m["two_processes_cpu_s"])
    one_s = args.messages / m["one_process_msg_per_s"]
    start = min(m["start_up_s"], one_s)
    m["start_up_bound_on_two_idle_cores"] = ratio(one_s, start + (one_s - start) / 2)
    print(
        f"ingest-file --processes: {args.messages} messages over {args.users} users, offline extractor; "
        f"medians of {args.runs} runs on {os.cpu_count()} cores, 1-min load average {m['load_average_1min']:.2f}"
    )
    print(
        f"  --processes 1: {m['one_process_msg_per_s']:.1f} msg/s; "
        f"--processes 2: {m['two_processes_msg_per_s']:.1f} msg/s"
    )
    print(
        f"  CPU seconds (the command and its workers, not PostgreSQL): {m['one_process_cpu_s']:.1f} on one, "
        f"{m['two_processes_cpu_s']:.1f} on two: at most {m['cpu_bound_on_two_idle_cores']:.2f}x on two idle cores"
    )
    print(
        f"  start-up (a one-line log): {m['start_up_s']:.2f} s of {one_s:.2f} s on one process, serial: "
        f"at most {m['start_up_bound_on_two_idle_cores']:.2f}x on two idle cores"
    )
    print(f"  2 processes / 1: {verdict(m['ratio_two_vs_one_process'], 1.6, True)}")
    emit({"benchmark": "ingest_processes", "messages": args.messages, "users": args.users, "runs": args.runs, **m})


if __name__ == "__main__":
    main()
