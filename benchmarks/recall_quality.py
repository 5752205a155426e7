"""Does ``recall`` find what a question needs? LoCoMo and MemoryBank-cn dev sets through the public API.

Each set (``factledger.evaluation.recall_sets``; data/eval/README, section "Recall") goes into a
new ledger of the default backend: every turn ingested for its speaker in the order said, with its
turn id as ``message_id``, its date as the said-time and the two turns before it as context
(``ingest_many``, as ``ingest-file`` does). Then every question is asked plainly,
``recall(user, question, top_k=10)``, and hits when a recalled item names one of its evidence
turns (``metadata["source_message"]``). Printed per set and per category: hit@5, hit@10, MRR;
in the same run the baseline anyone could build in an afternoon, BM25 (k1 1.5, b 0.75) over the
same speaker's raw turns (English words lowercased, Chinese character bigrams); recall p50/p95
and how long ingesting took.

    python3 benchmarks/recall_quality.py                      # both dev sets (about 10 minutes here)
    python3 benchmarks/recall_quality.py --conversations 1 --limit 50   # a quick look
    python3 benchmarks/recall_quality.py --json               # only the JSON object
    python3 benchmarks/recall_quality.py --embedder llm       # the LLM embedder, through a fake server

``--embedder llm``: the same run with the LLM embedder (``OpenAIEmbedder``, model
text-embedding-3-small at ``--embedding-dimension``, sent as ``dimensions``) against the local fake
OpenAI-compatible server of the tests (tests/fake_openai.py: real HTTP, hashed n-gram vectors), the
offline extractor deciding as before. Plumbing only: its figures say the path works end to end
(vectors of that size in the read model, queries embedded over HTTP), not what a real model scores;
recall times include the fake's answers, served in this process.

Targets (issue 26): LoCoMo hit@10 ≥ 0.75 and hit@5 ≥ 0.65; MemoryBank-cn hit@10 ≥ 0.85; recall
p95 ≤ 25 ms; hit@10 above BM25's on both sets.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common import emit, ledger, note, parser, percentile, server_uri, verdict

from factledger.evaluation.recall_sets import (
    Question,
    RecallSet,
    first_hit,
    load_locomo,
    load_memorybank,
    scores,
)

TOP_K = 10
_HERE = Path(__file__).resolve().parent.parent
# The shared data folder sits beside the checkout (../shared) or beside the worktrees (../../shared).
_EVAL_CANDIDATES = [_HERE.parent / "shared/data/eval", _HERE.parent.parent / "shared/data/eval"]
DEFAULT_EVAL = Path(
    os.environ.get("FACTLEDGER_EVAL_DATA") or next((p for p in _EVAL_CANDIDATES if p.is_dir()), _EVAL_CANDIDATES[0])
)
LLM_EMBEDDING_MODEL = "text-embedding-3-small"
TARGETS = {"locomo": {"hit@10": 0.75, "hit@5": 0.65}, "memorybank-cn": {"hit@10": 0.85}}
P95_TARGET_MS = 25.0

# ---- the baseline: BM25 over raw turns ---------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_HAN = re.compile(r"[\u3400-\u9fff]+")


def baseline_tokens(text: str) -> list[str]:
    """Lowercased words, and Chinese as character bigrams (a single character alone)."""
    text = text.lower()
    tokens = _WORD.findall(text)
    for run in _HAN.findall(text):
        tokens += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return tokens


class BM25:
    """Okapi BM25 over one user's turns (k1 1.5, b 0.75, idf log(1 + (N - df + 0.5) / (df + 0.5)))."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.ids = list(ids)
        self.docs = [Counter(baseline_tokens(t)) for t in texts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avgdl = (sum(self.lengths) / len(self.lengths)) if self.lengths else 1.0
        df: Counter[str] = Counter(term for d in self.docs for term in d)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[str]:
        terms = [t for t in set(baseline_tokens(query)) if t in self.idf]
        scored = []
        for i, doc in enumerate(self.docs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / (self.avgdl or 1.0))
            s = sum(self.idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in terms if t in doc)
            if s > 0:
                scored.append((-s, i))
        return [self.ids[i] for _, i in sorted(scored)[:k]]


# ---- running a set ------------------------------------------------------------------------------


def by_category(questions: Sequence[Question], ranks: Sequence[int | None]) -> dict[str, Any]:
    groups: dict[str, list[int | None]] = defaultdict(list)
    for q, r in zip(questions, ranks, strict=True):
        groups[q.category].append(r)
    return {"all": scores(ranks), **{c: scores(rs) for c, rs in sorted(groups.items())}}


@contextmanager
def llm_embedder(dimension: int) -> Iterator[tuple[Any, Any]]:
    """(the LLM embedder, the fake server it asks): a local OpenAI-compatible server for the run."""
    sys.path.insert(0, str(_HERE / "tests"))
    from fake_openai import FakeOpenAI

    from factledger.infrastructure.llm.client import LLMClient
    from factledger.infrastructure.llm.embedder import OpenAIEmbedder

    with FakeOpenAI() as fake:
        client = LLMClient(api_key="sk-fake", base_url=fake.url + "/v1", timeout=30.0, max_retries=1, backoff=0.1)
        yield OpenAIEmbedder(client, LLM_EMBEDDING_MODEL, dimension), fake


def run_set(
    recall_set: RecallSet, uri: str | None, backend: str, types: list[str] | None = None, embedder: Any = None
) -> dict[str, Any]:
    """Ingest the set into a new ledger, ask every question; the library's and BM25's scores."""
    overrides: dict[str, Any] = {"backend": backend} if backend == "memory" else {}
    # keep: a memory ledger has no schema to drop
    prefix = f"rq_{recall_set.name.replace('-', '_')}"
    with ledger(uri or "", prefix, keep=backend == "memory", embedder=embedder, **overrides) as (service, _schema):
        embedder_id = service.embedder.embedder_id
        started = time.perf_counter()
        outcomes = service.ingest_many([t.incoming() for t in recall_set.turns])
        ingest_s = time.perf_counter() - started
        failed = [o for o in outcomes if isinstance(o, Exception)]
        if failed:
            raise SystemExit(f"{recall_set.name}: {len(failed)} turns refused, first: {failed[0]}")
        ranks, latencies = [], []
        for q in recall_set.questions:
            t0 = time.perf_counter()
            hits = service.recall(q.user_id, q.text, types=types, top_k=TOP_K)
            latencies.append((time.perf_counter() - t0) * 1000)
            ranks.append(first_hit([h.record.metadata.get("source_message") for h in hits], q.evidence))
        items = sum(1 for r in service.read_model.all_items() if r.is_active)
    baseline_ranks = []
    indexes = {
        user: BM25([t.message_id for t in turns], [t.text for t in turns])
        for user in {q.user_id for q in recall_set.questions}
        for turns in [recall_set.turns_of(user)]
    }
    for q in recall_set.questions:
        baseline_ranks.append(first_hit(indexes[q.user_id].top(q.text, TOP_K), q.evidence))
    return {
        "embedder": embedder_id,
        "turns": len(recall_set.turns),
        "questions": len(recall_set.questions),
        "ingest_s": ingest_s,
        "ingest_msg_per_s": len(recall_set.turns) / ingest_s if ingest_s else None,
        "active_items": items,
        "recall": by_category(recall_set.questions, ranks),
        "bm25_raw_turns": by_category(recall_set.questions, baseline_ranks),
        "recall_p50_ms": percentile(latencies, 50) if latencies else None,
        "recall_p95_ms": percentile(latencies, 95) if latencies else None,
    }


def trimmed(recall_set: RecallSet, conversations: int | None, limit: int | None) -> RecallSet:
    """The first ``conversations`` conversations (LoCoMo: both speakers of each; MemoryBank: users),
    and of their questions the first ``limit``."""
    turns, questions = recall_set.turns, recall_set.questions
    if conversations is not None:
        keys = list(dict.fromkeys(_conversation(t.user_id) for t in turns))[:conversations]
        turns = tuple(t for t in turns if _conversation(t.user_id) in keys)
        questions = tuple(q for q in questions if _conversation(q.user_id) in keys)
    if limit is not None:
        questions = questions[:limit]
    return RecallSet(recall_set.name, turns, questions, recall_set.left_out)


def _conversation(user_id: str) -> str:
    # LoCoMo users are "locomo-<conversation>-<speaker>"; a MemoryBank user is a conversation.
    parts = user_id.split("-")
    return "-".join(parts[:2]) if parts[0] == "locomo" else user_id


# ---- output -------------------------------------------------------------------------------------


def report(name: str, result: dict[str, Any]) -> None:
    note(
        f"{name}: {result['turns']} turns ingested in {result['ingest_s']:.1f} s "
        f"({result['ingest_msg_per_s']:.0f} msg/s), {result['active_items']} active items; "
        f"{result['questions']} questions; embedder {result['embedder']}"
        + (f" ({result['embedding_requests']} embedding requests)" if "embedding_requests" in result else "")
    )
    lib, base = result["recall"], result["bm25_raw_turns"]
    head = f"{name:14} {'category':12} {'n':>4}  {'hit@5':>6} {'hit@10':>6} {'MRR':>6}"
    print(head + "   BM25 raw turns: hit@5 hit@10 MRR")
    for category, s in lib.items():
        b = base[category]
        print(
            f"{name:14} {category:12} {s['questions']:>4}  {s['hit@5']:6.3f} {s['hit@10']:6.3f} {s['mrr']:6.3f}"
            f"   {b['hit@5']:6.3f} {b['hit@10']:6.3f} {b['mrr']:6.3f}"
        )
    print(f"{name:14} recall p50 {result['recall_p50_ms']:.1f} ms, p95 {result['recall_p95_ms']:.1f} ms")
    for key, target in TARGETS.get(name, {}).items():
        print(f"{name:14} {key}: {verdict(lib['all'][key], target, at_least=True)}")
    print(f"{name:14} hit@10 − BM25's: {verdict(lib['all']['hit@10'] - base['all']['hit@10'], 0.0, True)}")


def run_sets(args: Any, embedder: Any = None, fake: Any = None) -> dict[str, Any]:
    """Every set of ``--sets``, reported as it ends; with the LLM embedder, how many requests it made."""
    loaders = {
        "locomo": lambda: load_locomo(args.locomo),
        "memorybank-cn": lambda: load_memorybank(args.memorybank, args.half),
    }
    uri = server_uri(args.database_url) if args.backend == "postgres" else None
    out: dict[str, Any] = {"backend": args.backend, "top_k": TOP_K, "types": args.types or "default"}
    out["embedder_kind"] = args.embedder
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if name not in loaders:
            raise SystemExit(f"--sets: unknown set {name!r}; use locomo, memorybank-cn")
        recall_set = trimmed(loaders[name](), args.conversations, args.limit)
        types = [t.strip() for t in args.types.split(",")] if args.types else None
        asked_before = len(fake.embedding_requests()) if fake is not None else 0
        result = run_set(recall_set, uri, args.backend, types, embedder)
        if fake is not None:
            result["embedding_requests"] = len(fake.embedding_requests()) - asked_before
        report(name, result)
        out[name] = result
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = parser(__doc__)
    p.add_argument("--locomo", type=Path, default=DEFAULT_EVAL / "locomo_dev", help="a LoCoMo folder (*.json)")
    p.add_argument("--memorybank", type=Path, default=DEFAULT_EVAL / "memorybank_cn", help="a MemoryBank-cn folder")
    p.add_argument("--half", default="dev", help="MemoryBank-cn half: turns_<half>.jsonl, evidence_<half>.jsonl")
    p.add_argument("--conversations", type=int, help="only the first N conversations of each set")
    p.add_argument("--limit", type=int, help="only the first N questions of each set")
    p.add_argument("--sets", default="locomo,memorybank-cn", help="which sets, comma-separated")
    p.add_argument("--backend", choices=("postgres", "memory"), default="postgres", help="default: postgres")
    p.add_argument("--types", help="recall these types only, comma-separated (default: recall's own default)")
    p.add_argument("--embedder", choices=("offline", "llm"), default="offline", help="llm: through a local fake server")
    p.add_argument("--embedding-dimension", type=int, default=256, help="the LLM embedder's size (default 256)")
    p.add_argument("--json", action="store_true", help="print only the JSON object")
    args = p.parse_args(argv)
    if args.quick:  # --runs is not used: the figures are counts over the questions, the same each run
        args.conversations, args.limit = args.conversations or 1, args.limit or 20
    if args.json:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the human lines go nowhere; emit writes to the real one
    if args.embedder == "llm":
        with llm_embedder(args.embedding_dimension) as (embedder, fake):
            note(f"embedder: {embedder.embedder_id} through the fake server at {fake.url} (plumbing only)")
            out = run_sets(args, embedder, fake)
    else:
        out = run_sets(args)
    latencies = [out[n]["recall_p95_ms"] for n in out if isinstance(out[n], dict) and out[n].get("recall_p95_ms")]
    if latencies:
        print(f"recall p95 (worst set): {verdict(max(latencies), P95_TARGET_MS, at_least=False)} ms")
    if args.json:
        sys.stdout = sys.__stdout__
    emit(out)


if __name__ == "__main__":
    main()
