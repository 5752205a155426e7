"""Per-user top-5 recall over a large read model: bare SQL, exactness, and through the library.

Fills the ledger's ``memories`` table (``projections/postgres_view.py``: its
table and its btree ``(user_id, type, is_active, importance)``) directly:
--users users × --per-user memories, each a text from a pool of --pool realistic
fact and preference texts (cities, employers, jobs, friends, books, pets,
likes, reply styles) with its vector from the offline embedder (256
dimensions); every fourth memory of a user is inactive. Then, over --queries
(user, question) pairs (questions like 住在哪里, 喜欢吃什么), medians of --runs:

* p50/p99 of the bare query: the statement ``PostgresMemoryView.recall`` runs (ADR 0030: the
  ranking by meaning, exact cosine distance over the user's active rows, and by words, BM25 over
  the same rows' terms, fused; top 5), vector and terms given;
* exactness of the ranking by meaning against brute force in numpy over the same vectors (1.0
  expected), and the share of queries where the one statement gives what the two searches and the
  fusion in Python give (``ports.fused_recall``; 1.0 expected);
* p50/p99 of ``service.recall(user, question)`` (validation, query embedding
  through the cache, the SQL, building the results).

Ratio library p99 ÷ bare p99: target ≤ 3.

    python3 benchmarks/recall.py [--users 20000] [--per-user 50] [--queries 300] [--runs 5]
    python3 benchmarks/recall.py --quick        # smoke run: 200 users, 40 queries, 1 run
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable
from hashlib import md5
from typing import Any

import numpy as np
import psycopg
from common import emit, ledger, medians, note, parser, percentile, ratio, server_uri, verdict
from history_length import BOOKS, CITIES, COMPANIES, GIVEN, JOBS, PETS, SKILLS, SURNAMES, THINGS
from psycopg.sql import SQL, Identifier

from factledger.application.lexical import query_terms
from factledger.application.ports import RecallQuery, fused_recall
from factledger.application.queries import FUSION_DEPTH, MEANING_WEIGHT, RECALL_TYPES, WORDS_WEIGHT
from factledger.projections.postgres_view import COLUMNS
from factledger.projections.tsvector import lexemes_of, tsvector_literal
from factledger.projections.vector_codec import bind_binary_vectors, vector_literal

QUESTIONS = [
    "住在哪里",
    "在哪个城市生活",
    "在哪工作",
    "做什么工作的",
    "朋友叫什么",
    "老板是谁",
    "最近在读什么书",
    "养了什么宠物",
    "在学什么",
    "喜欢吃什么",
    "有什么爱好",
    "回答要多长",
]
STRIDE, MIX = 61, 2654435761  # the j-th memory of user u is pool[(u * MIX % P + j * STRIDE) % P]


def pool_texts(size: int, seed: int) -> list[tuple[str, str, str]]:
    """``size`` distinct (type, category, text) items, as the extractor words them."""
    rng = random.Random(seed)
    makers = [
        ("fact", "location", lambda: f"用户住在{rng.choice(CITIES)}{rng.choice(['', '的老城区', '的郊区', '市中心'])}"),
        ("fact", "work", lambda: f"用户在{rng.choice(COMPANIES)}{rng.choice(CITIES)}分公司工作"),
        ("fact", "work", lambda: f"用户是{rng.choice(CITIES)}的{rng.choice(JOBS)}"),
        ("fact", "relationship", lambda: f"用户的朋友叫{rng.choice(SURNAMES)}{rng.choice(GIVEN)}{rng.choice(GIVEN)}"),
        ("fact", "relationship", lambda: f"用户的老板姓{rng.choice(SURNAMES)}"),
        ("fact", "interest", lambda: f"用户在读《{rng.choice(BOOKS)}》"),
        ("fact", "other", lambda: f"用户养了一只{rng.choice(PETS)}叫{rng.choice(GIVEN)}{rng.choice(GIVEN)}"),
        ("fact", "skill", lambda: f"用户在学{rng.choice(SKILLS)}"),
        ("preference", "food", lambda: f"用户{rng.choice(['喜欢', '不喜欢', '很爱'])}{rng.choice(THINGS)}"),
        ("preference", "format", lambda: f"偏好{rng.choice(['简短', '详细', '正式', '轻松'])}的回复风格"),
    ]
    seen: dict[str, tuple[str, str, str]] = {}
    while len(seen) < size:
        kind, category, make = rng.choice(makers)
        text = make()
        seen.setdefault(text, (kind, category, text))
    return list(seen.values())


def row_id(u: int, j: int) -> uuid.UUID:
    return uuid.UUID(md5(f"{u}:{j}".encode()).hexdigest())


def fill(
    uri: str, schema: str, service: Any, users: int, per_user: int, pool: list[tuple[str, str, str]]
) -> np.ndarray:
    """Write the rows in SQL from a pool table; return the pool's vectors as PostgreSQL stores them."""
    vectors = service.embedder.embed([text for _, _, text in pool])
    memories, pool_table = Identifier(schema, "memories"), Identifier(schema, "bench_pool")
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 0")
        conn.execute(
            SQL(
                "CREATE TABLE {} (idx int PRIMARY KEY, type text, category text, content text, embedding vector({}), "
                "lexemes tsvector, terms_count int)"
            ).format(pool_table, len(vectors[0]))
        )
        with conn.cursor() as cur, cur.copy(SQL("COPY {} FROM STDIN").format(pool_table)) as copy:
            for i, ((kind, category, text), vector) in enumerate(zip(pool, vectors, strict=True)):
                positions, length = lexemes_of(text)  # the terms the projection would store
                copy.write_row((i, kind, category, text, vector_literal(vector), tsvector_literal(positions), length))
        conn.execute(SQL("DROP INDEX {}").format(Identifier(schema, "memories_user_type_active")))
        step = max(1, 100_000 // per_user)
        for lo in range(0, users, step):
            hi = min(users, lo + step) - 1
            conn.execute(
                SQL(
                    "INSERT INTO {m} (id, user_id, type, content, category, embedding, metadata, importance, "
                    "is_active, session_id, created_at, updated_at, lexemes, terms_count) "
                    "SELECT md5(u || ':' || j)::uuid, 'u' || lpad(u::text, 6, '0'), p.type, p.content, p.category, "
                    "p.embedding, jsonb_build_object('category', p.category), 0.5 + (j %% 5) / 10.0, j %% 4 <> 3, "
                    "NULL, now(), now(), p.lexemes, p.terms_count FROM generate_series(%(lo)s::int, %(hi)s::int) AS u "
                    "CROSS JOIN generate_series(0, %(n)s::int - 1) AS j "
                    "JOIN {p} p ON p.idx = ((u::bigint * %(mix)s) %% %(P)s + j * %(stride)s) %% %(P)s"
                ).format(m=memories, p=pool_table),
                {"lo": lo, "hi": hi, "n": per_user, "mix": MIX, "P": len(pool), "stride": STRIDE},
            )
            note(f"  users {hi + 1}/{users}")
        conn.execute(
            SQL("CREATE INDEX memories_user_type_active ON {} (user_id, type, is_active, importance DESC)").format(
                memories
            )
        )
        conn.execute(SQL("VACUUM ANALYZE {}").format(memories))
        stored = conn.execute(SQL("SELECT embedding::text FROM {} ORDER BY idx").format(pool_table)).fetchall()
    return np.array([json.loads(r[0]) for r in stored], dtype=np.float64)


def brute_force_exactness(u: int, per_user: int, pool_vectors: np.ndarray, query: np.ndarray, got: list[Any]) -> float:
    """Share of the SQL's top 5 that are within the true top 5 (ties at the 5th distance count)."""
    size = len(pool_vectors)
    rows = [(row_id(u, j), (u * MIX % size + j * STRIDE) % size) for j in range(per_user) if j % 4 != 3]
    matrix = pool_vectors[[idx for _, idx in rows]]
    q = query / np.linalg.norm(query)
    distance = 1 - matrix @ q / np.linalg.norm(matrix, axis=1)
    by_id = {rid: d for (rid, _), d in zip(rows, distance, strict=True)}
    k = min(5, len(rows))
    kth = np.sort(distance)[k - 1]
    return sum(by_id[uuid.UUID(str(i))] <= kth + 1e-6 for i in got) / k


def alternated(
    sample: list[tuple[int, str]],
    bare: Callable[[int, str], tuple[float, list[Any]]],
    library: Callable[[int, str], float],
    run: int,
    runs_wanted: int,
) -> dict[str, float]:
    """One run over the sample: the bare statement and the library, who goes first alternating."""
    bare_ms, lib_ms = [], []
    for n, (u, q) in enumerate(sample):
        if (n + run) % 2:
            bare_ms.append(bare(u, q)[0])
            lib_ms.append(library(u, q))
        else:
            lib_ms.append(library(u, q))
            bare_ms.append(bare(u, q)[0])
    figures = {
        "bare_p50_ms": percentile(bare_ms, 50),
        "bare_p99_ms": percentile(bare_ms, 99),
        "library_p50_ms": percentile(lib_ms, 50),
        "library_p99_ms": percentile(lib_ms, 99),
    }
    note(f"  run {run + 1}/{runs_wanted}: " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items()))
    return figures


def timed(
    uri: str,
    schema: str,
    service: Any,
    sample: list[tuple[int, str]],
    qvec: dict[str, np.ndarray],
    pool_vectors: np.ndarray,
    per_user: int,
    runs_wanted: int,
) -> tuple[list[dict[str, float]], list[float], list[bool]]:
    """The bare statement and service.recall over the sample, alternately; exactness on a warm-up pass."""
    bare_sql = SQL(
        "SELECT " + COLUMNS + ", 1 - (embedding <=> %s::vector) AS similarity FROM {} "
        "WHERE user_id = %s AND type = ANY(%s) AND is_active ORDER BY embedding <=> %s::vector, id LIMIT %s"
    ).format(Identifier(schema, "memories"))
    view = service.read_model

    def plan(u: int, q: str) -> RecallQuery:  # what service.recall(user, q) asks of the view
        return RecallQuery(
            f"u{u:06d}", qvec[q], tuple(query_terms(q)), RECALL_TYPES, ("fact", "preference"), 5,
            service.embedder.recall_threshold, depth=FUSION_DEPTH, meaning_weight=MEANING_WEIGHT,
            words_weight=WORDS_WEIGHT,
        )  # fmt: skip

    with psycopg.connect(uri, autocommit=True) as conn:
        hybrid = conn.cursor()
        bind_binary_vectors(hybrid)

        def nearest(u: int, q: str) -> list[Any]:
            # The ranking by meaning alone, checked against numpy.
            literal = vector_literal(qvec[q])
            rows = conn.execute(bare_sql, (literal, f"u{u:06d}", ["fact", "preference"], literal, 5)).fetchall()
            return [r[0] for r in rows]

        def bare(u: int, q: str) -> tuple[float, list[Any]]:
            # The statement service.recall runs (both rankings, fused), parameters made beforehand.
            statement, params = view.recall_statement(plan(u, q))
            t = time.perf_counter()
            rows = hybrid.execute(statement, params).fetchall()
            return (time.perf_counter() - t) * 1000, [r[0] for r in rows]

        def library(u: int, q: str) -> float:
            t = time.perf_counter()
            service.recall(f"u{u:06d}", q)
            return (time.perf_counter() - t) * 1000

        exact, fused_same = [], []
        for u, q in sample:  # warm-up pass, and exactness
            bare(u, q)
            library(u, q)
            exact.append(brute_force_exactness(u, per_user, pool_vectors, qvec[q], nearest(u, q)))
            fused_same.append(view.recall(plan(u, q)) == fused_recall(view, plan(u, q)))
        runs = [alternated(sample, bare, library, run, runs_wanted) for run in range(runs_wanted)]
    return runs, exact, fused_same


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=20_000)
    p.add_argument("--per-user", type=int, default=50)
    p.add_argument("--pool", type=int, default=3001, help="distinct texts (prime, > per-user × stride / …)")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--seed", type=int, default=20260101)
    args = p.parse_args()
    if args.quick:
        args.users, args.queries, args.runs = 200, 40, 1
    uri = server_uri(args.database_url)
    rng = random.Random(args.seed)
    with ledger(uri, "recall") as (service, schema):
        start = time.perf_counter()
        pool_vectors = fill(uri, schema, service, args.users, args.per_user, pool_texts(args.pool, args.seed))
        fill_s = time.perf_counter() - start
        note(f"  {args.users * args.per_user} rows written in {fill_s:.0f} s")
        sample = [(rng.randrange(args.users), rng.choice(QUESTIONS)) for _ in range(args.queries)]
        qvec = {
            q: np.asarray(v, dtype=np.float64)
            for q, v in zip(QUESTIONS, service.embedder.embed(QUESTIONS), strict=True)
        }
        runs, exact, fused_same = timed(uri, schema, service, sample, qvec, pool_vectors, args.per_user, args.runs)
    m = medians(runs)
    m["exactness"] = sum(exact) / len(exact)
    m["fused_as_two_searches"] = sum(fused_same) / len(fused_same)
    m["ratio_library_vs_bare_p99"] = ratio(m["library_p99_ms"], m["bare_p99_ms"])
    rows = args.users * args.per_user
    print(
        f"recall: top-5 of one user among {rows} memories of {args.users} users; {args.queries} queries, "
        f"medians of {args.runs} runs (rows written in {fill_s:.0f} s)"
    )
    print(
        f"  bare SQL: p50 {m['bare_p50_ms']:.2f} ms, p99 {m['bare_p99_ms']:.2f} ms; exactness vs numpy brute force "
        f"{m['exactness']:.4f}; the one statement gives what two searches and the fusion give: "
        f"{m['fused_as_two_searches']:.4f}"
    )
    print(f"  service.recall: p50 {m['library_p50_ms']:.2f} ms, p99 {m['library_p99_ms']:.2f} ms")
    print(f"  library p99 / bare p99: {verdict(m['ratio_library_vs_bare_p99'], 3, False)}")
    emit(
        {
            "benchmark": "recall",
            "memories": rows,
            "users": args.users,
            "queries": args.queries,
            "runs": args.runs,
            "fill_s": fill_s,
            **m,
        }
    )


if __name__ == "__main__":
    main()
