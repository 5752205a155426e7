"""RuleExtractor: the spec's fact and preference extraction without a language model.

It follows the spec's prompts as rules: state only what was said, in the third
person (我 → 用户, I → the user), with the spec's categories. A message is read
clause by clause (see ``clauses.split_clauses``):

* slot rules (``rules_zh_facts``, ``rules_zh_prefs``, ``rules_en``) restate a
  clause they recognise in a canonical form the judge can compare
  ("我搬到上海了" → 用户住在上海);
* any other first-person statement is restated as said ("我在阳台上养多肉"
  → 用户在花园里种玫瑰), so nothing the user says of themself is lost;
* what was said in one breath stays one item: a subject-less piece of the same
  sentence ("我爱猫，有两只猫"'s second half is a slot rule, but "我是录音工程师，
  开了一家小面馆"'s is not) joins the item before it, and a clause that only
  sets the scene ("每到周末，我去爬山") joins the one after it.

The subject of one clause carries to the next clause that has none, so
"我在杭州工作，老板姓张" gives 用户的老板姓张. Preferences about how the
assistant should reply are always the user's.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from factledger.domain.values import (
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    Relation,
    Turn,
)
from factledger.infrastructure.offline import rules_common, rules_en, rules_zh_facts
from factledger.infrastructure.offline.clauses import (
    Clause,
    en_mentions_self,
    is_english,
    is_question,
    is_question_to_assistant,
    is_small_talk,
    split_clauses,
    zh_mentions_self,
)
from factledger.infrastructure.offline.judge import RuleJudge
from factledger.infrastructure.offline.rules_common import _USER, _Item, _Subject
from factledger.infrastructure.offline.rules_zh_facts import (
    _LEAD_ADVERBS,
    _OPENERS,
    _owned_fact,
    _parse_subject,
    _role_fact,
    _user_facts,
)
from factledger.infrastructure.offline.rules_zh_prefs import (
    _liked_reply_preference,
    _request_preference,
    _tool_preference,
)
from factledger.infrastructure.offline.signals import SignalDetector

log = logging.getLogger(__name__)

EXTRACTOR_ID = "offline-rules/3"


class _Reading:
    """What one clause gave: an item, nothing, or a piece that joins a neighbour."""

    ITEM, NOTHING, FRAGMENT, SCENE = "item", "nothing", "fragment", "scene"


# A statement that points at the listener ("我都听你的", "I owe you one") is about
# the exchange, not a fact about the user to remember.
_ABOUT_THE_LISTENER = re.compile(r"[你您]|\byou(?:r|rs)?\b", re.IGNORECASE)


class RuleExtractor:
    """Implements ``Extractor`` with the rules above; deterministic, offline, never raises."""

    def __init__(self, detector: SignalDetector | None = None) -> None:
        self._detector = detector or SignalDetector()
        self._judge = RuleJudge()

    @property
    def extractor_id(self) -> str:
        return EXTRACTOR_ID

    def extract(
        self,
        message: str,
        context: Sequence[Turn] = (),
        known_facts: Sequence[str] = (),
    ) -> Extraction:
        """Facts and preferences stated in ``message``.

        ``context`` is accepted for the protocol; the rules read only what the
        user said in this message, as the spec's "only what is stated" asks.
        ``known_facts`` serve to mark ``conflicts_with`` on a fact that updates
        or contradicts one of them.
        """
        if not isinstance(message, str):
            message = ""
        signals = self._detector.detect(message)
        # The detector is a cheap gate, as in the spec; the rules below decide.
        # Either kind of signal opens both, since one clause's subject (我在杭州工作)
        # often sets up another clause's preference (平时喜欢简短的回复).
        if not (signals["has_fact_signal"] or signals["has_pref_signal"]):
            return self._empty(signals)
        try:
            items = self._items(message)
        except Exception:  # the protocol promises no exception on odd input
            log.exception("offline rules failed on a message; recording nothing for it")
            return self._empty(signals)
        return self._build(items, signals, known_facts)

    # -- reading a message ---------------------------------------------------

    def _empty(self, signals: dict[str, Any]) -> Extraction:
        return Extraction(
            extractor_id=EXTRACTOR_ID, raw_output=json.dumps({"facts": [], "preferences": []}), signals=dict(signals)
        )

    def _items(self, message: str) -> list[_Item]:
        items: list[_Item] = []
        carried = _USER
        sentence = -1
        last: int | None = None  # index of this sentence's latest item
        scene: list[str] = []  # scene-setting clauses waiting for their statement
        for clause in split_clauses(message):
            if clause.sentence != sentence:
                sentence, last, scene = clause.sentence, None, []
            if is_small_talk(clause.text):
                continue
            reading, item, carried = self._clause(clause, carried)
            if reading == _Reading.ITEM and item is not None:
                if last is not None and items[last].generic and item.generic:
                    # one sentence, one statement restated as said: "I'm 19 and I cannot wait to move out"
                    items[last] = self._joined(items[last], item.text, clause)
                    continue
                if scene and item.generic:
                    item = self._with_scene(item, scene, clause)
                scene = []
                if any(item.text == seen.text for seen in items):
                    continue
                items.append(item)
                last = len(items) - 1
            elif reading == _Reading.FRAGMENT and last is not None:
                items[last] = self._joined(items[last], clause.text, clause)
            elif reading in (_Reading.SCENE, _Reading.FRAGMENT) and last is None:
                scene.append(clause.text)
        return items

    @staticmethod
    def _joined(item: _Item, text: str, clause: Clause) -> _Item:
        """``item`` with what the next piece of the same sentence said."""
        if is_english(clause.text):
            piece = rules_en.en_third_person(rules_en.clean_en(text))
            piece = piece[:1].lower() + piece[1:] if not piece.startswith("The user") else "the user" + piece[8:]
            joiner = f" {clause.joiner} " if clause.joiner else ", "
            return item._replace(text=f"{item.text}{joiner}{piece}")
        piece = rules_common.third_person(rules_zh_facts.clean_said(text))
        if piece.startswith("用户") and item.text.startswith("用户"):
            piece = piece[2:] if not piece.startswith("用户的") else piece
        return item._replace(text=f"{item.text}，{clause.joiner}{piece}")

    @staticmethod
    def _with_scene(item: _Item, scene: list[str], clause: Clause) -> _Item:
        """'每到周末' + '用户去爬山' → '每到周末，用户去爬山'."""
        if is_english(clause.text):
            said = ", ".join(rules_en.clean_en(s) for s in scene)
            return item._replace(text=f"{said[:1].upper()}{said[1:]}, {item.text[:1].lower()}{item.text[1:]}")
        said = "，".join(rules_common.third_person(rules_zh_facts.clean_said(s)) for s in scene)
        return item._replace(text=f"{said}，{item.text}")

    def _clause(self, clause: Clause, carried: _Subject) -> tuple[str, _Item | None, _Subject]:
        said = clause.text.strip()
        if is_english(said):
            return self._english(clause, said)
        text = _OPENERS.sub("", said)
        subject, rest = _parse_subject(text, carried)
        asks_assistant = is_question_to_assistant(clause)

        # How to reply is the user's to say, even after "老板姓张，…"; but
        # "我老婆喜欢简短的回复" names someone else on purpose.
        if not (subject.kind == "role" and subject.explicit):
            core = _LEAD_ADVERBS.sub("", rest)
            item = (
                _liked_reply_preference(core, said)
                or _tool_preference(subject, core, said)
                or _request_preference(subject, core, said)
            )
            if item is not None:
                return _Reading.ITEM, item, _USER
        if is_question(clause) or asks_assistant:
            return _Reading.NOTHING, None, carried
        item = None
        if subject.kind == "user":
            item = _user_facts(rest, said)
        elif subject.kind == "role":
            item = _role_fact(subject, rest)
        elif subject.kind == "owned":
            item = _owned_fact(subject, rest)
        after = subject._replace(explicit=False) if subject.kind in ("user", "role", "owned") else carried
        if item is not None:
            return _Reading.ITEM, item, after
        return self._unrecognised(clause, said, subject, carried, after)

    @staticmethod
    def _unrecognised(
        clause: Clause, said: str, subject: _Subject, carried: _Subject, after: _Subject
    ) -> tuple[str, _Item | None, _Subject]:
        """No slot rule applies: restate a first-person statement as said, or keep the piece for a neighbour."""
        if zh_mentions_self(said):
            item = rules_zh_facts.generic_fact(said, subject)
            if item is not None:
                return _Reading.ITEM, item, after
        if re.search(r"你|您", said):
            return _Reading.NOTHING, None, after
        if rules_zh_facts.is_scene(said):
            return _Reading.SCENE, None, carried
        if not subject.explicit and carried.kind in ("user", "role") and rules_zh_facts.is_fragment(said):
            return _Reading.FRAGMENT, None, carried
        return _Reading.NOTHING, None, after

    @staticmethod
    def _english(clause: Clause, said: str) -> tuple[str, _Item | None, _Subject]:
        if is_question(clause):
            return _Reading.NOTHING, None, _USER
        item = rules_en._en_clause(said, said)
        if item is not None:
            if item.kind == "fact":  # "I have my own salon": the object is the user's too
                item = item._replace(text=rules_en.en_third_person(item.text))
            return _Reading.ITEM, item, _USER
        if en_mentions_self(said):
            item = rules_en.generic_en(said)
            if item is not None:
                return _Reading.ITEM, item, _USER
            return _Reading.NOTHING, None, _USER
        if rules_en.is_en_fragment(said):
            return _Reading.FRAGMENT, None, _USER
        return _Reading.NOTHING, None, _USER

    # -- the result -------------------------------------------------------------

    def _build(self, items: list[_Item], signals: dict[str, Any], known_facts: Sequence[str]) -> Extraction:
        facts = [
            ExtractedFact(
                text=i.text, category=i.category, confidence=i.score, conflicts_with=self._conflict(i.text, known_facts)
            )
            for i in items
            if i.kind == "fact" and not _ABOUT_THE_LISTENER.search(i.text)
        ]
        preferences = [
            ExtractedPreference(text=i.text, category=i.category, strength=i.score, evidence=i.evidence)
            for i in items
            if i.kind == "preference"
        ]
        raw = json.dumps(
            {
                "facts": [[f.text, f.category] for f in facts],
                "preferences": [[p.text, p.category] for p in preferences],
            },
            ensure_ascii=False,
        )
        return Extraction(
            extractor_id=EXTRACTOR_ID,
            facts=facts,
            preferences=preferences,
            prompt_id=None,
            raw_output=raw,
            signals=dict(signals),
        )

    def _conflict(self, text: str, known_facts: Sequence[str]) -> str | None:
        """The known fact this one updates or contradicts, as the spec's prompt asks to mark."""
        for known in known_facts or ():
            if not (isinstance(known, str) and known.strip()):
                continue
            if self._judge.judge(known, text).relation in (Relation.UPDATE, Relation.CONFLICT):
                return known
        return None


__all__ = ["EXTRACTOR_ID", "RuleExtractor"]
