"""Does a long import slow down as its users' histories grow?

Imports --lines generated messages spread over --users users (a varied Chinese
conversation per user, the templates of ``history_length.py``: moves, jobs,
friends, likes, pets, style requests, small talk), in the order a chat export
gives them (users interleaved), through ``LedgerService.ingest_many`` in groups of
256 lines, as ``factledger ingest-file`` reads them. Prints the rate of each tenth
of the import and the last tenth's rate over the first's.

Target (issue 24): the last tenth at ≥ 0.70 of the first — a message's cost must not
grow with how many facts its user already has.

    python3 benchmarks/long_import.py                       # 100,000 lines over 1,000 users
    python3 benchmarks/long_import.py --lines 20000 --users 200
    python3 benchmarks/long_import.py --quick               # smoke run: 2,000 lines over 20 users

Without --database-url (or $DATABASE_URL) a throwaway embedded PostgreSQL is started.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit, ledger, note, parser, rounded, server_uri, verdict
from history_length import conversation

from factledger.application.ingestion import Incoming

READ_AT_ONCE = 256  # lines ingest-file hands to ingest_many at a time
TARGET = 0.70


def workload(lines: int, users: int, seed: int) -> list[Incoming]:
    """``lines`` messages, user by user interleaved (line i is user i mod ``users``)."""
    rng = random.Random(seed)
    per_user = -(-lines // users)
    talks = [list(conversation(rng, per_user)) for _ in range(users)]
    return [Incoming(f"user{i % users:05d}", talks[i % users][i // users], message_id=f"line{i}") for i in range(lines)]


def tenths(uri: str, work: list[Incoming]) -> list[float]:
    """Messages per second over each tenth of the import."""
    rates: list[float] = []
    tenth = max(1, len(work) // 10)
    with ledger(uri, "long") as (service, _):
        for start in range(0, tenth * 10, tenth):
            part = work[start : start + tenth]
            began = time.perf_counter()
            for at in range(0, len(part), READ_AT_ONCE):
                service.ingest_many(part[at : at + READ_AT_ONCE])
            rates.append(len(part) / (time.perf_counter() - began))
            note(f"  tenth {len(rates):2d}: {rates[-1]:7.1f} msg/s")
    return rates


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--lines", type=int, default=100_000, help="messages to import (default 100,000)")
    p.add_argument("--users", type=int, default=1_000, help="users they are spread over (default 1,000)")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    if args.quick:
        args.lines, args.users = 2_000, 20
    uri = server_uri(args.database_url)
    note(f"importing {args.lines:,} lines over {args.users:,} users ({args.lines // args.users} a user)")
    rates = tenths(uri, workload(args.lines, args.users, args.seed))
    last_over_first = rates[-1] / rates[0]
    print("msg/s by tenth: " + ", ".join(f"{r:.1f}" for r in rates))
    print(f"last tenth ÷ first: {verdict(last_over_first, TARGET, at_least=True)}")
    emit(
        {
            "lines": args.lines,
            "users": args.users,
            "tenths_msg_per_s": [rounded(r, 1) for r in rates],
            "last_over_first": rounded(last_over_first),
        }
    )


if __name__ == "__main__":
    main()
