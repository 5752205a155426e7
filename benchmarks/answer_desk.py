"""Can an assistant answer from ``memory_context``? A reader's accuracy beside BM25's raw turns.

Issue 26 asks that a reader given ``memory_context(user, question, top_k=10)`` answer LoCoMo
questions at least as often as the same reader given BM25's top 10 raw turns with their dates.
The reader and the judge are people or models at a desk (``shared/tools/llm_desk``), so this
script only prepares and scores, never answers:

    python3 benchmarks/answer_desk.py prepare --out desk/ --questions 60   # ingest, sample, write
    # a reader answers desk/read.jsonl into desk/answers.jsonl: {"id", "answer"} a line
    python3 benchmarks/answer_desk.py judge-sheet --out desk/               # desk/judge.jsonl
    # a judge marks desk/judge.jsonl into desk/verdicts.jsonl: {"id", "correct": true|false}
    python3 benchmarks/answer_desk.py score --out desk/                     # accuracy per system

Blinding: each question is asked twice under two opaque ids, once with each context, shuffled
together, so a reader cannot tell which system wrote a context; the judge sees the question, the
gold answer and an answer, never the context or the system. ``key.json`` (which id is which
system) is read only by ``score``.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import ledger, parser, server_uri
from recall_quality import BM25, DEFAULT_EVAL, TOP_K

from factledger.evaluation.recall_sets import Question, RecallSet, load_locomo

READER_TASK = (
    "Answer the question about the person named in it, using only the context given. "
    "Answer in a few words (a date, a name, a short phrase). If the context does not hold the "
    "answer, answer exactly: unknown."
)


def gold_answers(folder: Path) -> dict[str, str]:
    """LoCoMo's annotated answer of each question, by the question id ``recall_sets`` gives it."""
    answers = {}
    for path in sorted(folder.glob("*.json")):
        for index, qa in enumerate(json.loads(path.read_text(encoding="utf-8")).get("qa", [])):
            answers[f"{path.stem}-{index}"] = str(qa.get("answer", qa.get("adversarial_answer", "")))
    return answers


def raw_turn_context(recall_set: RecallSet, question: Question) -> str:
    """BM25's top 10 turns of the question's speaker, each with the date it was said."""
    turns = {t.message_id: t for t in recall_set.turns_of(question.user_id)}
    index = BM25(list(turns), [t.text for t in turns.values()])
    lines = [f"[{turns[i].at:%Y-%m-%d}] {turns[i].text}" for i in index.top(question.text, TOP_K)]
    return "What the person said (most relevant first):\n" + "\n".join(lines)


def prepare(args: Any) -> None:
    recall_set = load_locomo(args.locomo)
    rng = random.Random(args.seed)
    sample = rng.sample(list(recall_set.questions), min(args.questions, len(recall_set.questions)))
    gold = gold_answers(args.locomo)
    uri = server_uri(args.database_url) if args.backend == "postgres" else None
    overrides: dict[str, Any] = {"backend": "memory"} if args.backend == "memory" else {}
    with ledger(uri or "", "answer_desk", keep=args.backend == "memory", **overrides) as (service, _schema):
        outcomes = service.ingest_many([t.incoming() for t in recall_set.turns])
        if any(isinstance(o, Exception) for o in outcomes):
            raise SystemExit("some turns were refused")
        library = {q.id: service.memory_context(q.user_id, q.text, top_k=TOP_K, language="en").text for q in sample}
    rows, key = [], {}
    for q in sample:
        for system, context in (("library", library[q.id]), ("bm25", raw_turn_context(recall_set, q))):
            opaque = f"r{rng.randrange(16**8):08x}"
            key[opaque] = {"question": q.id, "system": system, "category": q.category, "gold": gold[q.id]}
            rows.append({"id": opaque, "question": q.text, "context": context})
    rng.shuffle(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "read.jsonl", [{"task": READER_TASK}, *rows])
    (args.out / "key.json").write_text(json.dumps(key, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(rows)} contexts for {len(sample)} questions → {args.out / 'read.jsonl'}")


def judge_sheet(args: Any) -> None:
    key = json.loads((args.out / "key.json").read_text(encoding="utf-8"))
    questions = {r["id"]: r["question"] for r in read_jsonl(args.out / "read.jsonl") if "id" in r}
    answers = {r["id"]: r["answer"] for r in read_jsonl(args.out / "answers.jsonl")}
    missing = sorted(set(key) - set(answers))
    if missing:
        raise SystemExit(f"answers.jsonl lacks {len(missing)} ids, first {missing[0]}")
    task = (
        "Is the answer correct? It is correct when it says what the gold answer says (other words, a "
        "more or less precise date that contains the gold one, extra true detail are fine); 'unknown' "
        "or a different fact is not correct."
    )
    rows = [{"id": i, "question": questions[i], "gold": key[i]["gold"], "answer": answers[i]} for i in sorted(key)]
    write_jsonl(args.out / "judge.jsonl", [{"task": task}, *rows])
    print(f"{len(rows)} answers to judge → {args.out / 'judge.jsonl'}")


def score(args: Any) -> None:
    key = json.loads((args.out / "key.json").read_text(encoding="utf-8"))
    verdicts = {r["id"]: bool(r["correct"]) for r in read_jsonl(args.out / "verdicts.jsonl")}
    answers = {r["id"]: str(r["answer"]).strip().lower() for r in read_jsonl(args.out / "answers.jsonl")}
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for opaque, entry in key.items():
        for category in ("all", entry["category"]):
            cell = tally[(entry["system"], category)]
            cell[0] += verdicts[opaque]
            cell[1] += 1
            cell[2] += answers[opaque].startswith("unknown")
    out: dict[str, Any] = {}
    for (system, category), (right, n, unknown) in sorted(tally.items()):
        print(f"{system:8} {category:12} {right:>3}/{n:<3} = {right / n:.3f}   unknown {unknown}")
        out.setdefault(system, {})[category] = {"correct": right, "questions": n, "unknown": unknown}
    lib, base = out["library"]["all"], out["bm25"]["all"]
    ratio = (lib["correct"] / lib["questions"]) / max(base["correct"] / base["questions"], 1e-9)
    print(f"library ÷ BM25 raw turns: {ratio:.2f} (target ≥ 1.00, and ≥ 0.70 absolute)")
    if args.json:
        print(json.dumps(out, ensure_ascii=False))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    p = parser(__doc__)
    p.add_argument("step", choices=("prepare", "judge-sheet", "score"))
    p.add_argument("--out", type=Path, default=Path("desk"), help="the desk folder (default: ./desk)")
    p.add_argument("--locomo", type=Path, default=DEFAULT_EVAL / "locomo_dev", help="a LoCoMo folder (*.json)")
    p.add_argument("--questions", type=int, default=60, help="questions sampled (default 60)")
    p.add_argument("--seed", type=int, default=26, help="sampling seed")
    p.add_argument("--backend", choices=("postgres", "memory"), default="postgres", help="default: postgres")
    p.add_argument("--json", action="store_true", help="also print the scores as JSON")
    args = p.parse_args(argv)
    {"prepare": prepare, "judge-sheet": judge_sheet, "score": score}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
