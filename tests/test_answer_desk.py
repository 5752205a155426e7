"""The answer desk prepares blinded contexts for a reader and scores a judge's verdicts per system."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "answer_desk.py"

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def desk(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_"))}
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_contexts_are_blinded_and_scored_per_system(pg_uri: str, tmp_path: Path) -> None:
    locomo, out = tmp_path / "locomo", tmp_path / "desk"
    locomo.mkdir()
    session = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat called Miso last week."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I started learning the cello."},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "My sister moved to Lisbon for work."},
    ]
    qa = [
        {"question": "What is the name of Ann's cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
        {"question": "Where did Ann's sister move?", "answer": "Lisbon", "evidence": ["D1:3"], "category": 1},
    ]
    conversation = {"session_1": session, "session_1_date_time": "1:56 pm on 8 May, 2023", "qa": qa}
    (locomo / "1.json").write_text(json.dumps(conversation))
    desk("prepare", "--locomo", str(locomo), "--out", str(out), "--database-url", pg_uri)

    task, *rows = jsonl(out / "read.jsonl")
    assert "unknown" in str(task["task"])
    assert len(rows) == 4 and sorted(r["question"] for r in rows).count("Where did Ann's sister move?") == 2
    assert all("system" not in r and "gold" not in r for r in rows)  # the reader cannot tell who wrote what
    bm25 = [r for r in rows if str(r["context"]).startswith("What the person said")]
    assert len(bm25) == 2 and any("[2023-05-08] My sister moved to Lisbon" in str(r["context"]) for r in bm25)
    key = json.loads((out / "key.json").read_text())
    assert {v["system"] for v in key.values()} == {"library", "bm25"}

    # A reader who answers only BM25's contexts right; the judge agrees with the gold answers.
    answers = [{"id": r["id"], "answer": "unknown" if r in bm25 else "no idea"} for r in rows]
    (out / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    desk("judge-sheet", "--out", str(out))
    _, *sheet = jsonl(out / "judge.jsonl")
    assert {s["gold"] for s in sheet} == {"Miso", "Lisbon"} and all("context" not in s for s in sheet)
    verdicts = [{"id": r["id"], "correct": key[str(r["id"])]["system"] == "bm25"} for r in rows]
    (out / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    scored = json.loads(desk("score", "--out", str(out), "--json").stdout.strip().splitlines()[-1])
    assert scored["bm25"]["all"] == {"correct": 2, "questions": 2, "unknown": 2}
    assert scored["library"]["all"] == {"correct": 0, "questions": 2, "unknown": 0}
