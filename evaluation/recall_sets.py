"""Recall sets: long dated conversations and questions whose answers sit in known turns.

Two formats (``data/eval/README``, section "Recall"):

* LoCoMo: a folder of ``*.json`` conversations between two speakers, each in
  dated sessions of turns (``dia_id``, ``speaker``, ``text``), with ``qa``:
  ``question``, ``evidence`` (turn ids) and ``category`` (1 multi-hop,
  2 temporal, 3 open-domain, 4 single-hop; 5, adversarial, is left out). One
  user per speaker; a question belongs to the speaker whose turns hold most
  of its evidence (the first one's on a tie).
* MemoryBank-cn: ``turns_*.jsonl`` (``user_id``, ``date``, ``turn``,
  ``message_id``, ``message``, ``reply``) and ``evidence_*.jsonl``
  (``user``, ``question``, ``evidence``, ``answer_in``); questions answered
  only in the assistant's words are left out.

Each turn is ingested in order with ``message_id`` = its id, ``timestamp`` =
when it was said and the two turns before it (in its session) as context. A
question **hits at k** when one of the first k recalled items names one of
its evidence turns.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from factledger.application.ingestion import Incoming
from factledger.evaluation.dataset import DatasetError

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
CONTEXT_TURNS = 2


@attrs.frozen
class SaidTurn:
    """One turn of a conversation as it is ingested for its speaker."""

    user_id: str
    message_id: str
    text: str
    session_id: str
    at: datetime
    context: tuple[dict[str, str], ...] = ()

    def incoming(self) -> Incoming:
        return Incoming(
            self.user_id, self.text, self.session_id, list(self.context), message_id=self.message_id, timestamp=self.at
        )


@attrs.frozen
class Question:
    """A question asked of one user's memory, and the turns (message ids) that answer it."""

    id: str
    user_id: str
    text: str
    evidence: frozenset[str]
    category: str


@attrs.frozen
class RecallSet:
    name: str
    turns: tuple[SaidTurn, ...]  # in the order they were said
    questions: tuple[Question, ...]
    left_out: int = 0  # questions whose evidence names no turn of the set

    def turns_of(self, user_id: str) -> list[SaidTurn]:
        return [t for t in self.turns if t.user_id == user_id]


# ---- LoCoMo -------------------------------------------------------------------------------


def _locomo_time(text: str, where: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → an aware datetime (UTC)."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise DatasetError(f"{where}: not a LoCoMo session time: {text!r}") from None


def _evidence_ids(value: Any) -> list[str]:
    # A few entries hold two ids in one string ("D8:6; D9:17").
    return [part for item in value or [] for part in re.split(r"[;,\s]+", str(item)) if part]


def _locomo_conversation(path: Path) -> tuple[list[SaidTurn], list[Question], int]:
    data = json.loads(path.read_text(encoding="utf-8"))
    name = path.stem
    turns: list[SaidTurn] = []
    by_id: dict[str, SaidTurn] = {}
    n = 1
    while f"session_{n}" in data:
        at = _locomo_time(data[f"session_{n}_date_time"], f"{path}: session {n}")
        session: list[dict[str, Any]] = data[f"session_{n}"]
        for i, raw in enumerate(session):
            speaker = raw["speaker"]
            context = tuple(
                {"role": "user" if t["speaker"] == speaker else "assistant", "content": t["text"]}
                for t in session[max(0, i - CONTEXT_TURNS) : i]
            )
            # One minute a turn: the order they were said in, inside the session's date.
            said = at + timedelta(minutes=i)
            turn = SaidTurn(f"locomo-{name}-{speaker}", raw["dia_id"], raw["text"], f"{name}-s{n}", said, context)
            turns.append(turn)
            by_id[turn.message_id] = turn
        n += 1
    questions, left_out = [], 0
    for q_index, qa in enumerate(data.get("qa", [])):
        category = LOCOMO_CATEGORIES.get(qa.get("category"))
        if category is None:
            continue
        evidence = [e for e in _evidence_ids(qa.get("evidence")) if e in by_id]
        if not evidence:
            left_out += 1
            continue
        speakers = Counter(by_id[e].user_id for e in evidence)
        top = max(speakers.values())
        owner = next(by_id[e].user_id for e in evidence if speakers[by_id[e].user_id] == top)
        questions.append(
            Question(
                f"{name}-{q_index}",
                owner,
                str(qa["question"]),
                frozenset(e for e in evidence if by_id[e].user_id == owner),
                category,
            )
        )
    return turns, questions, left_out


def load_locomo(folder: Path) -> RecallSet:
    """Every ``*.json`` conversation of a LoCoMo folder."""
    files = sorted(Path(folder).glob("*.json"))
    if not files:
        raise DatasetError(f"{folder}: no LoCoMo conversation (*.json) there")
    turns: list[SaidTurn] = []
    questions: list[Question] = []
    left_out = 0
    for path in files:
        t, q, lost = _locomo_conversation(path)
        turns += t
        questions += q
        left_out += lost
    return RecallSet("locomo", tuple(turns), tuple(questions), left_out)


# ---- MemoryBank-cn -------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{n}: not JSON ({exc.msg})") from None
    return rows


def load_memorybank(folder: Path, half: str = "dev") -> RecallSet:
    """``turns_{half}.jsonl`` and ``evidence_{half}.jsonl`` of a MemoryBank-cn folder."""
    folder = Path(folder)
    rows = _jsonl(folder / f"turns_{half}.jsonl")
    turns: list[SaidTurn] = []
    previous: dict[tuple[str, str], dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (r["user_id"], r["date"], int(r["turn"]))):
        user, date = row["user_id"], row["date"]
        before = previous.get((user, date))
        context: tuple[dict[str, str], ...] = ()
        if before is not None:
            context = (
                {"role": "user", "content": before["message"]},
                {"role": "assistant", "content": before["reply"]},
            )
        at = datetime.fromisoformat(date).replace(tzinfo=UTC) + timedelta(hours=12, minutes=int(row["turn"]))
        turns.append(SaidTurn(f"mb-{user}", row["message_id"], row["message"], f"{user}-{date}", at, context))
        previous[(user, date)] = row
    known = {(t.user_id, t.message_id) for t in turns}
    questions, left_out = [], 0
    for row in _jsonl(folder / f"evidence_{half}.jsonl"):
        if row.get("answer_in") == "assistant":
            continue
        user = f"mb-{row['user']}"
        evidence = frozenset(e for e in row.get("evidence", []) if (user, e) in known)
        if not evidence:
            left_out += 1
            continue
        questions.append(Question(str(row.get("qid", row["question"])), user, row["question"], evidence, "probing"))
    return RecallSet("memorybank-cn", tuple(sorted(turns, key=lambda t: t.at)), tuple(questions), left_out)


# ---- scoring ------------------------------------------------------------------------------


def first_hit(ranked_message_ids: Sequence[str | None], evidence: frozenset[str]) -> int | None:
    """The 1-based rank of the first item naming an evidence turn, or None."""
    for rank, message_id in enumerate(ranked_message_ids, 1):
        if message_id in evidence:
            return rank
    return None


def scores(ranks: Sequence[int | None]) -> dict[str, float]:
    """hit@5, hit@10 and MRR (over the ranks given: what a top 10 holds) of a list of first-hit ranks."""
    n = len(ranks) or 1
    return {
        "questions": len(ranks),
        "hit@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "hit@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
        "mrr": sum(1 / r for r in ranks if r is not None) / n,
    }
