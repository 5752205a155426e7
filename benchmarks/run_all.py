"""Runs every benchmark with sizes that fit about 20 minutes on a small (2-core) machine.

One throwaway embedded PostgreSQL (or $DATABASE_URL / --database-url) serves all
of them. Prints each script's own lines, then every figure and ratio against its
target, then (last line) one JSON object combining the scripts' JSON results.

Default sizes (smaller than the issue's, to fit the budget; each script's own
defaults are the issue's sizes):
  ingest.py          1,500 messages over 150 users, 5 runs (+ a profiled run, + a counted one)
  ingest_stages.py   1,500 messages over 150 users, 5 runs: where a message's time goes
  ingest_processes.py 3,000 messages over 300 users, --processes 1 and 2, 5 runs
  replay_processes.py 3,000 messages over 300 users replayed, --processes 1 and 2, 5 runs
  http_workers.py    serve --workers 1 and 2, 8 client threads x 100 mixed requests, 3 runs
  history_length.py  1,500 earlier messages, 20 probes per user, 5 runs
  rebuild.py         100,000 events (600 ingested messages copied), 5 runs
  recall.py          1,000,000 memories of 20,000 users (the issue's size), 300 queries, 5 runs
  economy.py         20 messages × 2 prompt sets, 5 runs; mem0 run by run.sh (quoted if it cannot run)

    python3 benchmarks/run_all.py [--runs 5] [--quick] [--only ingest,recall] [--out FILE]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import emit, note, parser, server_uri

HERE = Path(__file__).resolve().parent
PROFILE = Path(tempfile.gettempdir()) / "factledger_ingest_profile.txt"
SIZES = {
    "ingest": ["--messages", "1500", "--users", "150", "--profile", str(PROFILE)],
    "ingest_stages": ["--messages", "1500", "--users", "150"],
    "ingest_processes": ["--messages", "3000", "--users", "300"],
    "replay_processes": ["--messages", "3000", "--users", "300"],
    "http_workers": ["--clients", "8", "--requests", "100"],
    "history_length": ["--messages", "1500", "--probe", "20"],
    "rebuild": ["--events", "100000", "--seed-messages", "600", "--seed-users", "60"],
    "recall": ["--users", "20000", "--per-user", "50", "--queries", "300"],
    "economy": [],
}
# (benchmark, JSON path, label, target, at_least): the summary's rows; target None: a figure only.
ROWS: list[tuple[str, str, str, float | None, bool]] = [
    ("ingest", "library_msg_per_s", "ingest (a) library, msg/s", None, True),
    ("ingest", "library_p50_ms", "ingest (a) p50 ms", None, True),
    ("ingest", "library_p99_ms", "ingest (a) p99 ms", None, True),
    ("ingest", "bulk_msg_per_s", "ingest (b) ingest-file, msg/s", None, True),
    ("ingest", "bulk_events_per_s", "ingest (b) ingest-file, events/s", None, True),
    ("ingest", "ceiling_txn_msg_per_s", "ingest (c) PostgreSQL one txn/msg, msg/s", None, True),
    ("ingest", "ceiling_copy_rows_per_s", "ingest (c) PostgreSQL COPY, rows/s", None, True),
    ("ingest", "ratio_library_vs_txn_ceiling", "ratio (a) / one-txn ceiling", 0.5, True),
    ("ingest", "ratio_bulk_events_vs_copy", "ratio (b) events/s / COPY rows/s", 0.10, True),
    ("ingest", "statements_per_msg", "ingest (d) SQL statements / message", 4, False),
    ("ingest", "transactions_per_msg", "ingest (d) transactions / message", None, True),
    ("ingest", "round_trips_per_msg", "ingest (d) round trips / message", None, True),
    ("ingest_stages", "total_ms", "stages: a message, ms", None, True),
    *[
        ("ingest_stages", f"{stage}_ms", f"  {stage.replace('_', ' ')} ms", None, True)
        for stage in ("extraction", "deciding", "other_python", "database")
    ],
    ("ingest_stages", "ceiling_txn_ms", "  ceiling: one txn of 3 rows, ms", None, True),
    ("ingest_stages", "ratio", "ratio (a) / one-txn ceiling, issue 29", 0.30, True),
    ("ingest_stages", "ratio_without_python", "  the same if the Python took no time", None, True),
    ("ingest_stages", "python_budget_ms_for_target", "  Python ms a message may take for 0.30", None, True),
    ("ingest_processes", "one_process_msg_per_s", "ingest-file --processes 1, msg/s", None, True),
    ("ingest_processes", "two_processes_msg_per_s", "ingest-file --processes 2, msg/s", None, True),
    ("ingest_processes", "load_average_1min", "  (machine's 1-min load average then)", None, True),
    ("ingest_processes", "ratio_two_vs_one_process", "ratio --processes 2 / --processes 1", 1.6, True),
    ("ingest_processes", "cpu_bound_on_two_idle_cores", "  bound by CPU seconds on two idle cores", None, True),
    ("ingest_processes", "start_up_s", "  serial start-up, s", None, True),
    ("ingest_processes", "start_up_bound_on_two_idle_cores", "  bound by that start-up on two idle cores", None, True),
    ("replay_processes", "one_process_msg_per_s", "replay --processes 1, msg/s", None, True),
    ("replay_processes", "two_processes_msg_per_s", "replay --processes 2, msg/s", None, True),
    ("replay_processes", "load_average_1min", "  (machine's 1-min load average then)", None, True),
    ("replay_processes", "ratio_two_vs_one_process", "ratio replay --processes 2 / --processes 1", None, True),
    ("http_workers", "one_worker_req_per_s", "HTTP mixed load --workers 1, req/s", None, True),
    ("http_workers", "two_workers_req_per_s", "HTTP mixed load --workers 2, req/s", None, True),
    ("http_workers", "load_average_1min", "  (machine's 1-min load average then)", None, True),
    ("http_workers", "ratio_two_vs_one_worker", "ratio --workers 2 / --workers 1", 1.5, True),
    *[
        ("http_workers", f"p99_ms.{workers}.{kind}", f"  p99 ms {kind}, {workers.replace('_', ' ')}", None, True)
        for workers in ("1_worker", "2_workers")
        for kind in ("ingest", "recall", "context", "profile")
    ],
    ("history_length", "fresh_p50_ms", "history: fresh user p50 ms", None, True),
    ("history_length", "long_p50_ms", "history: long-history user p50 ms", None, True),
    ("history_length", "latency_ratio", "ratio long / fresh p50", 1.5, False),
    ("history_length", "storage_ratio", "ratio snapshot bytes / event bytes", 1.0, False),
    ("rebuild", "rebuild_events_per_s", "rebuild events/s", None, True),
    ("rebuild", "peak_rss_mb", "rebuild peak RSS MB", None, True),
    ("rebuild", "decode_events_per_s", "read + decode events/s", None, True),
    ("rebuild", "ratio_rebuild_vs_decode", "ratio rebuild / decode", 0.40, True),
    ("recall", "bare_p50_ms", "recall bare SQL p50 ms", None, True),
    ("recall", "bare_p99_ms", "recall bare SQL p99 ms", None, True),
    ("recall", "exactness", "recall exactness vs brute force", 1.0, True),
    ("recall", "library_p50_ms", "recall library p50 ms", None, True),
    ("recall", "library_p99_ms", "recall library p99 ms", None, True),
    ("recall", "ratio_library_vs_bare_p99", "ratio library p99 / bare p99", 3.0, False),
]
for prompts in ("seed", "combined"):
    ROWS += [
        ("economy", f"{prompts}.calls_per_msg", f"economy {prompts}: LLM calls/msg", None, True),
        ("economy", f"{prompts}.prompt_tokens_per_msg", f"economy {prompts}: prompt tokens/msg", None, True),
        ("economy", f"{prompts}.embedding_calls_per_msg", f"economy {prompts}: embedding calls/msg", None, True),
        ("economy", f"{prompts}.lib_ms_per_msg", f"economy {prompts}: library ms/msg", None, True),
        ("economy", f"{prompts}.small_talk_calls", f"economy {prompts}: LLM calls on 谢谢/好的", 0, False),
        ("economy", f"ratios_{prompts}_vs_mem0.calls", f"ratio {prompts} / mem0 LLM calls", 1.0, False),
        ("economy", f"ratios_{prompts}_vs_mem0.prompt_tokens", f"ratio {prompts} / mem0 prompt tokens", 0.15, False),
        ("economy", f"ratios_{prompts}_vs_mem0.lib_time", f"ratio {prompts} / mem0 library time", 0.5, False),
    ]
ROWS += [
    ("economy", "mem0.calls_per_msg", "economy mem0: LLM calls/msg", None, True),
    ("economy", "mem0.prompt_tokens_per_msg", "economy mem0: prompt tokens/msg", None, True),
    ("economy", "mem0.embedding_calls_per_msg", "economy mem0: embedding calls/msg", None, True),
    ("economy", "mem0.lib_ms_per_msg", "economy mem0: library ms/msg", None, True),
]


def lookup(results: dict[str, Any], name: str, path: str) -> Any:
    value: Any = results.get(name)
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def run_one(name: str, uri: str, runs: int, quick: bool) -> tuple[dict[str, Any] | None, float]:
    command = [sys.executable, str(HERE / f"{name}.py"), "--database-url", uri]
    command += ["--quick"] if quick else ["--runs", str(runs), *SIZES[name]]
    note(f"== {name}: {' '.join(command[2:])}")
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)  # progress goes to our stderr
    elapsed = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    print("\n".join(lines[:-1]), flush=True)
    try:
        result = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    except json.JSONDecodeError:
        result = None
    if result is None:
        print(f"{name}: FAILED (exit {done.returncode})", flush=True)
    print(f"({name}: {elapsed:.0f} s)\n", flush=True)
    return result, elapsed


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--only", help="comma-separated benchmarks to run (default: all)")
    p.add_argument("--out", type=Path, help="also write the combined JSON here")
    args = p.parse_args()
    names = args.only.split(",") if args.only else list(SIZES)
    uri = server_uri(args.database_url)
    results: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    for name in names:
        results[name], seconds[name] = run_one(name, uri, args.runs, args.quick)
    total = time.perf_counter() - start
    print(f"== summary ({'quick' if args.quick else f'medians of {args.runs} runs'}; {total / 60:.1f} min in all)")
    summary = []
    for name, path, label, target, at_least in ROWS:
        if name not in names:
            continue
        value = lookup(results, name, path)
        met = None
        if target is not None and isinstance(value, (int, float)):
            met = value >= target if at_least else value <= target
        goal = "" if target is None else f"{'≥' if at_least else '≤'} {target:g}"
        shown = f"{value:,.3f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)
        state = "" if met is None else ("met" if met else "NOT met")
        print(f"  {label:<44} {shown:>14}  {goal:<8} {state}")
        summary.append({"benchmark": name, "figure": path, "value": value, "target": goal or None, "met": met})
    if results.get("economy"):
        print(f"  (mem0: {results['economy'].get('mem0_source')})")
    if "ingest" in names and not args.quick:
        print(f"  (ingest profile: {PROFILE})")
    combined = {"runs": args.runs, "quick": args.quick, "seconds": seconds, "summary": summary, "results": results}
    if args.out:
        args.out.write_text(json.dumps(combined, ensure_ascii=False, indent=1))
    emit(combined)


if __name__ == "__main__":
    main()
