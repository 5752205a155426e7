"""An offline stand-in for the spec's CONFLICT_CHECK prompt.

It answers the same four-way question (duplicate / update / conflict /
different) from the surface of the two texts: their normalised words, the
slot each fills (see ``slots``) and whether one negates the other. It is
deliberately conservative: anything it cannot place is ``DIFFERENT``, which
in the pipeline means "keep both", the answer that loses nothing.
"""

from __future__ import annotations

from factledger.domain.values import Relation, RelationVerdict
from factledger.infrastructure.offline.slots import (
    canonical,
    is_exclusive_slot,
    is_polarity_slot,
    negation_pair,
    normalise,
    slot_of,
)

JUDGE_ID = "offline-rules/1"


def _same_value(a: str, b: str) -> bool:
    """Values match when equal after normalising, or one refines the other (杭州 / 杭州市)."""
    a, b = normalise(a), normalise(b)
    if not a or not b:
        return False
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    # containment only for names of places and things: "3" is not "30", "张" not "张伟"
    return len(shorter) >= 2 and not shorter.isdigit() and shorter in longer


class RuleJudge:
    """Implements ``RelationJudge`` with slot and negation rules; no network, deterministic."""

    @property
    def judge_id(self) -> str:
        return JUDGE_ID

    def judge(self, old_fact: str, new_fact: str) -> RelationVerdict:
        relation, reason = self._decide(old_fact or "", new_fact or "")
        return RelationVerdict(relation=relation, judge_id=JUDGE_ID, raw_answer=reason)

    @staticmethod
    def _decide(old_fact: str, new_fact: str) -> tuple[Relation, str]:
        # 1. Same words once punctuation and particles (了/的/现在…) are gone.
        old_words, new_words = canonical(old_fact), canonical(new_fact)
        if old_words and old_words == new_words:
            return Relation.DUPLICATE, "duplicate: same statement once particles are ignored"

        # 2. One says the other is not so: both cannot hold.
        if negation_pair(old_fact, new_fact):
            return Relation.CONFLICT, "conflict: one fact negates the other"

        # 3. Same attribute: the value decides.
        old_slot, new_slot = slot_of(old_fact), slot_of(new_fact)
        if old_slot and new_slot and old_slot[0] == new_slot[0]:
            slot = old_slot[0]
            if _same_value(old_slot[1], new_slot[1]):
                return Relation.DUPLICATE, f"duplicate: slot {slot} = {new_slot[1]}"
            if is_polarity_slot(slot):
                return Relation.CONFLICT, f"conflict: slot {slot} {old_slot[1]} vs {new_slot[1]}"
            if is_exclusive_slot(slot):
                return Relation.UPDATE, f"update: slot {slot} {old_slot[1]} → {new_slot[1]}"
            # a second colleague's surname is another colleague, not a correction
            return Relation.DIFFERENT, f"different: slot {slot} holds several values"

        if old_slot and new_slot:
            return Relation.DIFFERENT, f"different: slots {old_slot[0]} and {new_slot[0]}"
        return Relation.DIFFERENT, "different: no shared slot"
