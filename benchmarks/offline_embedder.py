"""How well the offline n-gram embedder separates paraphrases from different facts, on the eval data.

Run: ``python3 -m factledger.benchmarks.offline_embedder [DATA_DIR]`` or
``python3 benchmarks/offline_embedder.py [DATA_DIR]`` (default /work/shared/data/eval).

Pairs, all drawn from the labelled persona files (zh_personas_dev, en_personas_dev):

* restated: a persona sentence as the user said it ("我在邮局工作") and as the
  rule extractor restates it ("用户在邮局工作"): one fact, two wordings, as
  when an LLM and the rules record the same thing;
* updates: two restated facts that fill the same slot with different values
  (住在加拿大 / 住在阿拉斯加): they must score above the threshold too, or the
  judge never sees them and the old value is never replaced;
* different: every other pair of extracted facts (a fixed random sample).

The dedupe threshold is 0.75: a paraphrase should score at or above it, a
different fact below it. Prints the share on the right side for each kind and
the score quantiles.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from pathlib import Path

from factledger.evaluation import similarity
from factledger.infrastructure.offline import HashedNgramEmbedder, RuleExtractor
from factledger.infrastructure.offline.slots import POLARITY_PREFIXES, slot_of

THRESHOLD = 0.75


def _cos(embedder: HashedNgramEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return sum(x * y for x, y in zip(va, vb, strict=False))


def _persona_sentences(path: Path) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        gold = record.get("gold_persona_unsegmented") or record.get("gold_persona") or []
        out += [g.strip() for g in gold if g.strip()]
    return sorted(set(out))


def pairs(data: Path) -> dict[str, list[tuple[str, str]]]:
    extractor = RuleExtractor()
    kinds: dict[str, list[tuple[str, str]]] = {"restated": [], "updates": [], "different": []}
    facts: list[str] = []
    for name in ("zh_personas_dev.jsonl", "en_personas_dev.jsonl"):
        sentences = _persona_sentences(data / name)
        for sentence in sentences:
            extraction = extractor.extract(sentence)
            texts = [f.text for f in extraction.facts] + [p.text for p in extraction.preferences]
            if len(texts) == 1:
                kinds["restated"].append((sentence, texts[0]))
                facts.append(texts[0])
    by_slot: dict[str, list[str]] = {}
    for fact in facts:
        found = slot_of(fact)
        if found and not found[0].startswith(POLARITY_PREFIXES):
            by_slot.setdefault(found[0], []).append(fact)
    for same in by_slot.values():
        kinds["updates"] += [(a, b) for i, a in enumerate(same) for b in same[i + 1 :] if slot_of(a) != slot_of(b)]
    rng = random.Random(7)
    while len(kinds["different"]) < 2000:
        a, b = rng.sample(facts, 2)
        if similarity(a, b) < 0.3:  # keep out accidental paraphrases
            kinds["different"].append((a, b))
    return kinds


def main(argv: list[str]) -> int:
    data = Path(argv[0]) if argv else Path("/work/shared/data/eval")
    embedder = HashedNgramEmbedder()
    print(f"embedder {embedder.embedder_id}, threshold {THRESHOLD}")
    for kind, kind_pairs in pairs(data).items():
        scores = [_cos(embedder, a, b) for a, b in kind_pairs]
        right = [s >= THRESHOLD for s in scores] if kind != "different" else [s < THRESHOLD for s in scores]
        q = statistics.quantiles(scores, n=20) if len(scores) > 1 else scores * 19
        print(
            f"{kind:11s} n={len(scores):5d}  on the right side of {THRESHOLD}: {sum(right) / len(right):.3f}   "
            f"p5={q[0]:.3f} median={statistics.median(scores):.3f} p95={q[-1]:.3f}"
        )
        if kind == "restated":
            for (a, b), s in sorted(zip(kind_pairs, scores, strict=False), key=lambda t: t[1])[:5]:
                print(f"    lowest: {s:.3f}  {a} / {b}")
        if kind == "different":
            for (a, b), s in sorted(zip(kind_pairs, scores, strict=False), key=lambda t: -t[1])[:3]:
                print(f"    highest: {s:.3f}  {a} / {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
