"""Are the memories the offline extractor keeps worth keeping? LoCoMo's dev conversations through the public API.

Every LoCoMo turn (``factledger.evaluation.recall_sets``; data/eval/README, section "Recall") is
ingested for its speaker into a new ledger of the default backend, as ``recall_quality.py`` does
(``ingest_many``, turn id as ``message_id``, its date as the said-time, two turns of context).
Then, over every fact and preference of every user:

* memories, active and all (messages, the read model's third kind of row, are not memories);
* **short**: the share of memories of six words or fewer ("The user is excited"). A word is a run of
  Latin letters, digits or apostrophes, and each Han character counts as one word (so
  "用户很开心" is five words: the subject is counted in both languages);
* **invalidations**: every ``FactInvalidated`` and ``PreferenceSuperseded`` in the users' histories,
  by relation; a seeded random sample of up to ``--sample-size`` of those that end a memory for
  another (update, conflict, retraction, correction: not ``duplicate`` merges, which keep the memory
  under the older id) with the old memory, the new one, the relation, the judge's answer and the
  message that caused it, written to ``--sample-out`` (JSON lines) so they can be read by hand.

    python3 benchmarks/memory_quality.py                        # LoCoMo dev, embedded PostgreSQL
    python3 benchmarks/memory_quality.py --backend memory --sample   # print the sample too
    python3 benchmarks/memory_quality.py --json                 # only the JSON object
    python3 benchmarks/memory_quality.py --backend memory --short    # list every short memory

Targets (issue 26 item 4): ≤ 3% short memories; ≥ 90% of the sampled invalidations right (read by
hand: docs/memory-quality.md).
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import emit, ledger, note, parser, server_uri, verdict
from recall_quality import DEFAULT_EVAL, trimmed

from factledger.application.service import LedgerService
from factledger.evaluation.recall_sets import load_locomo

SHORT_WORDS = 6
SHORT_TARGET = 0.03
SEED = 26
#: relations that merge a repeat into the memory already kept: nothing is lost, so not sampled
_MERGES = {"duplicate"}
_WORD = re.compile(r"[A-Za-z0-9']+|[\u3400-\u9fff]")


def word_count(text: str) -> int:
    """Latin words and digits as words, each Han character as one word."""
    return len(_WORD.findall(text))


def _said(service: LedgerService, user_id: str) -> tuple[dict[str, str], dict[str, str], list[dict[str, Any]]]:
    """What the user said by message id, every memory's text by id, and the invalidations, in order."""
    messages: dict[str, str] = {}
    texts: dict[str, str] = {}
    ended: list[dict[str, Any]] = []
    for entry in service.history(user_id).entries:
        f = entry.fields
        if entry.event == "MessageIngested":
            messages[f["message_id"]] = f["text"]
        elif entry.event in ("FactObserved", "PreferenceObserved"):
            texts[f.get("fact_id") or f["preference_id"]] = f["text"]
        elif entry.event == "FactInvalidated":
            ended.append({"old_id": f["fact_id"], "new_id": f.get("superseded_by"), **_why(f)})
        elif entry.event == "PreferenceSuperseded":
            ended.append({"old_id": f["preference_id"], "new_id": f["superseded_by"], **_why(f)})
    return messages, texts, ended


def _why(fields: dict[str, Any]) -> dict[str, Any]:
    verdict_ = fields.get("verdict") or {}
    return {
        "relation": str(fields.get("relation") or "update"),
        "judge": fields.get("raw_answer") or (verdict_.get("raw_answer") if isinstance(verdict_, dict) else None),
        "message_id": fields.get("message_id"),
    }


def measure(service: LedgerService, users: Sequence[str]) -> dict[str, Any]:
    """Counts over the users' memories and their invalidations (each with its texts and message)."""
    rows = [r for r in service.read_model.all_items() if r.type in ("fact", "preference") and r.user_id in users]
    short = [r for r in rows if word_count(r.content) <= SHORT_WORDS]
    invalidations: list[dict[str, Any]] = []
    for user in users:
        messages, texts, ended = _said(service, user)
        for e in ended:
            invalidations.append(
                {
                    "user": user,
                    "old": texts.get(e["old_id"], "?"),
                    "new": texts.get(e["new_id"] or "", None),
                    "relation": e["relation"],
                    "judge": e["judge"],
                    "message_id": e["message_id"],
                    "message": messages.get(e["message_id"] or "", None),
                }
            )
    return {
        "memories": len(rows),
        "active_memories": sum(1 for r in rows if r.is_active),
        "short_memories": len(short),
        "short_share": len(short) / len(rows) if rows else 0.0,
        "short_share_active": (
            sum(1 for r in short if r.is_active) / max(1, sum(1 for r in rows if r.is_active)) if rows else 0.0
        ),
        "short_examples": Counter(r.content for r in short).most_common(15),
        "short_listing": sorted(r.content for r in short),
        "invalidations": len(invalidations),
        "by_relation": dict(Counter(i["relation"] for i in invalidations).most_common()),
        "ended": invalidations,
    }


def sample(invalidations: Sequence[dict[str, Any]], size: int, seed: int = SEED) -> list[dict[str, Any]]:
    """Up to ``size`` of the invalidations that end a memory for another, drawn with ``seed``."""
    ending = [i for i in invalidations if i["relation"] not in _MERGES]
    return random.Random(seed).sample(ending, min(size, len(ending)))


def report(result: dict[str, Any], drawn: Sequence[dict[str, Any]], show: bool, every_short: bool = False) -> None:
    print(f"locomo: {result['turns']} turns, {len(result['users'])} users")
    print(f"memories: {result['memories']} ({result['active_memories']} active)")
    print(
        f"short (≤ {SHORT_WORDS} words): {result['short_memories']}; "
        f"share {verdict(result['short_share'], SHORT_TARGET, at_least=False)}; "
        f"of the active: {result['short_share_active']:.3f}"
    )
    for text, n in result["short_examples"]:
        print(f"    {n:4} × {text}")
    if every_short:
        print("every short memory:")
        for text in result["short_listing"]:
            print(f"    {text}")
    print(f"invalidations: {result['invalidations']} {result['by_relation']}; sampled {len(drawn)}")
    if show:
        for n, i in enumerate(drawn, 1):
            print(f"[{n}] {i['relation']} ({i['judge']})\n    old: {i['old']}\n    new: {i['new']}")
            print(f"    said ({i['message_id']}): {i['message']}")


def main(argv: Sequence[str] | None = None) -> None:
    p = parser(__doc__)
    p.add_argument("--locomo", type=Path, default=DEFAULT_EVAL / "locomo_dev", help="a LoCoMo folder (*.json)")
    p.add_argument("--conversations", type=int, help="only the first N conversations")
    p.add_argument("--backend", choices=("postgres", "memory"), default="postgres", help="default: postgres")
    p.add_argument("--sample-size", type=int, default=50, help="invalidations to draw for reading (default 50)")
    p.add_argument("--seed", type=int, default=SEED, help=f"the sample's seed (default {SEED})")
    p.add_argument("--sample-out", type=Path, help="write the sample here, one JSON object a line")
    p.add_argument("--sample", action="store_true", help="print the sample too")
    p.add_argument("--json", action="store_true", help="print only the JSON object")
    p.add_argument("--short", action="store_true", help="list every short memory too (to read them by hand)")
    args = p.parse_args(argv)
    if args.quick:
        args.conversations = args.conversations or 1
    if args.json:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the human lines go nowhere; emit writes to the real one
    recall_set = trimmed(load_locomo(args.locomo), args.conversations, None)
    users = sorted({t.user_id for t in recall_set.turns})
    uri = server_uri(args.database_url) if args.backend == "postgres" else None
    overrides: dict[str, Any] = {"backend": args.backend} if args.backend == "memory" else {}
    with ledger(uri or "", "mq_locomo", keep=args.backend == "memory", **overrides) as (service, _schema):
        note(f"ingesting {len(recall_set.turns)} turns …")
        outcomes = service.ingest_many([t.incoming() for t in recall_set.turns])
        failed = [o for o in outcomes if isinstance(o, Exception)]
        if failed:
            raise SystemExit(f"{len(failed)} turns refused, first: {failed[0]}")
        result = {"turns": len(recall_set.turns), "users": users, **measure(service, users)}
    drawn = sample(result.pop("ended"), args.sample_size, args.seed)
    if args.sample_out:
        args.sample_out.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in drawn), encoding="utf-8")
    report(result, drawn, args.sample, args.short)
    if args.json:
        sys.stdout = sys.__stdout__
    emit({**result, "sampled": len(drawn), "seed": args.seed, "backend": args.backend})


if __name__ == "__main__":
    main()
