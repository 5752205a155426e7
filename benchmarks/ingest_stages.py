"""Where a message's time goes on the one-at-a-time path, against the ceiling (issue 29).

--messages messages over --users users (the conversation of ``ingest.py``), one
``ingest`` each through the library (offline extractor, inline projection), with
timers around the stages; then the ceiling of ``ingest.py`` (c) on the rows
written (one transaction per message, 3 event rows). Per message, medians over runs:

  extraction   the offline rules (``Ingestion.extract``)
  deciding     relations with known facts, the events (``Ingestion.decide``)
  database     waiting for the server: the save's one round trip (psycopg's pipeline
               sync), its COMMIT, and statements sent alone (a memory loaded)
  other Python the rest: encoding the statement and its rows, the read model's rows,
               the aggregate, the service

and what they bound: the ratio (library ÷ ceiling) if the Python took no time
(ceiling ÷ database), and the Python a message may take for the ratio to reach
0.30 (ceiling ÷ 0.30 − database).

    python3 benchmarks/ingest_stages.py [--messages 1500] [--users 150] [--runs 3]
    python3 benchmarks/ingest_stages.py --quick        # smoke run: 40 messages, 8 users, 1 run
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from common import emit, ledger, medians, note, parser, server_uri
from ingest import ceiling_run, saved_groups, workload
from psycopg import _pipeline

from factledger.application.ingestion import Ingestion

TARGET = 0.30


@contextmanager
def timed_stages() -> Iterator[dict[str, float]]:
    """Seconds spent in each stage while the block runs (the methods are wrapped, then restored)."""
    spent: dict[str, float] = defaultdict(float)

    def wrap(owner: Any, name: str, stage: str, when: Callable[[Any], bool] = lambda _: True) -> Callable[[], None]:
        inner = getattr(owner, name)

        @functools.wraps(inner)
        def timing(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not when(self):
                return inner(self, *args, **kwargs)
            start = time.perf_counter()
            try:
                return inner(self, *args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - start

        setattr(owner, name, timing)
        return lambda: setattr(owner, name, inner)

    def alone(cursor: Any) -> bool:  # a statement sent on its own waits for its answer in execute
        return getattr(cursor.connection, "_pipeline", None) is None

    restore = [
        wrap(Ingestion, "extract", "extraction"),
        wrap(Ingestion, "decide", "deciding"),
        wrap(_pipeline.Pipeline, "__exit__", "database"),
        wrap(psycopg.Connection, "commit", "database"),
        wrap(psycopg.Cursor, "execute", "database", alone),
    ]
    try:
        yield spent
    finally:
        for undo in restore:
            undo()


def run(uri: str, work: list[tuple[str, str]]) -> dict[str, float]:
    """One run: the stages' milliseconds a message, the ceiling's, and the bounds they give."""
    with ledger(uri, "stg") as (service, schema):
        for user, text in work[: min(len(work), 20)]:  # warm: imports, caches, prepared statements
            service.ingest(user + "-warm", text)
        with timed_stages() as spent:
            start = time.perf_counter()
            for user, text in work:
                service.ingest(user, text)
            elapsed = time.perf_counter() - start
        groups = saved_groups(uri, schema)
    ceiling = ceiling_run(uri, groups)
    n = len(work)
    ms = {stage: seconds * 1000 / n for stage, seconds in spent.items()}
    total = elapsed * 1000 / n
    ceiling_ms = 1000 / ceiling["ceiling_txn_msg_per_s"]
    python = total - ms["database"]
    return {
        "total_ms": total,
        "extraction_ms": ms["extraction"],
        "deciding_ms": ms["deciding"],
        "database_ms": ms["database"],
        "other_python_ms": python - ms["extraction"] - ms["deciding"],
        "ceiling_txn_ms": ceiling_ms,
        "ratio": ceiling_ms / total,
        "ratio_without_python": ceiling_ms / ms["database"],
        "python_budget_ms_for_target": ceiling_ms / TARGET - ms["database"],
        "python_ms": python,
    }


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--messages", type=int, default=1_500)
    p.add_argument("--users", type=int, default=150)
    p.add_argument("--seed", type=int, default=20260101)
    args = p.parse_args()
    messages, users, runs = (40, 8, 1) if args.quick else (args.messages, args.users, args.runs)
    uri = server_uri(args.database_url)
    work = workload(messages, users, args.seed)
    results = []
    for i in range(runs):
        results.append(run(uri, work))
        note(f"  run {i + 1}/{runs}: " + ", ".join(f"{k} {v:.3f}" for k, v in results[-1].items()))
    m = medians(results)
    print(f"ingest stages: {messages} messages over {users} users, offline extractor; medians of {runs} runs")
    print(f"  a message: {m['total_ms']:.2f} ms; ceiling (one txn, 3 rows) {m['ceiling_txn_ms']:.2f} ms")
    for stage in ("extraction", "deciding", "other_python", "database"):
        print(f"    {stage.replace('_', ' '):<13} {m[stage + '_ms']:6.2f} ms")
    print(f"  ratio {m['ratio']:.3f}; with no Python at all {m['ratio_without_python']:.3f}")
    print(
        f"  for {TARGET}: the Python of a message within {m['python_budget_ms_for_target']:.2f} ms "
        f"(it takes {m['python_ms']:.2f} ms, extraction alone {m['extraction_ms']:.2f})"
    )
    emit({"benchmark": "ingest_stages", "messages": messages, "users": users, "runs": runs, **m})


if __name__ == "__main__":
    main()
