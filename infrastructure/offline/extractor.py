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
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import attrs

from factledger.domain.values import (
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    Relation,
    Turn,
)
from factledger.infrastructure.content_ids import behaviour_id
from factledger.infrastructure.offline import changes, rules_common, rules_en, rules_zh_facts
from factledger.infrastructure.offline.clauses import (
    Clause,
    en_mentions_self,
    fold_cjk_spaces,
    is_english,
    is_question,
    is_question_to_assistant,
    is_small_talk,
    split_clauses,
    zh_mentions_self,
)
from factledger.infrastructure.offline.dimensions import dimensions
from factledger.infrastructure.offline.durability import is_momentary
from factledger.infrastructure.offline.judge import RuleJudge, remeasure
from factledger.infrastructure.offline.registry import Context, registry
from factledger.infrastructure.offline.replacement import replaced_fact, told_changes
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import USER, Item, Subject
from factledger.infrastructure.offline.rules_zh_facts import (
    LEAD_ADVERBS,
    OPENERS,
    owned_fact,
    parse_subject,
    role_fact,
    user_facts,
)
from factledger.infrastructure.offline.rules_zh_prefs import (
    LANGUAGES,
    liked_reply_preference,
    request_preference,
    tool_preference,
)
from factledger.infrastructure.offline.signals import SignalDetector, dialect
from factledger.infrastructure.offline.slots import (
    EN_ROLE_PATTERN,
    ROLE_SYNONYMS,
    ZH_ROLE_PATTERN,
    slot_of,
    slots_of,
    species_of,
)
from factledger.infrastructure.offline.topics import change_told, taste_now, topics_of
from factledger.infrastructure.offline.wishes import answer_wish, said_of_someone_else

_DATA = rules("extractor")
RE = _DATA.patterns(LANGUAGES=LANGUAGES, ZH_ROLE_PATTERN=ZH_ROLE_PATTERN, EN_ROLE_PATTERN=EN_ROLE_PATTERN)
_MALE_ROLES = frozenset(_DATA.words("_MALE_ROLES"))
_FEMALE_ROLES = frozenset(_DATA.words("_FEMALE_ROLES"))
_SLOT_CATEGORIES = _DATA.mapping("_SLOT_CATEGORIES")
_PERSONAL_SLOTS = frozenset(_DATA.words("_PERSONAL_SLOTS"))
_TAKES = _DATA.mapping("_TAKES")


def _take(choice: str) -> str:
    """How one takes ``choice``, by its topic ("看" a film genre, "听" music), or ""."""
    return next((_TAKES[t] for t in topics_of(choice) if t in _TAKES), "")


_VOCABULARY = rules_common.VOCABULARY.extended(
    predicates={"unreal": lambda value, context: changes.is_unreal(value)},
    filters={"lower": str.lower},
)
_EN_DROPPED = registry(_DATA, "en_dropped", _VOCABULARY, EN_ROLE=EN_ROLE_PATTERN)
_EN_RENAMED = registry(_DATA, "en_renamed", _VOCABULARY)
_TASTE_ASKED = registry(
    _DATA,
    "taste_asked",
    _VOCABULARY.extended(
        predicates={
            "taken": lambda v, c: bool(_take(v)),
            "asked_instead": lambda v, c: bool(RE._ASKED_INSTEAD.search(c.get("message", ""))),
        },
        filters={"take": _take},
    ),
)
_ACTUALLY = registry(
    _DATA,
    "actually",
    _VOCABULARY.extended(
        predicates={"generic": lambda v, c: bool(c.get("generic"))},
        filters={"once": lambda v: v.replace("其实", "", 1)},
    ),
    ZH_ROLE=ZH_ROLE_PATTERN,
)

log = logging.getLogger(__name__)


def offline_extractor_id() -> str:
    """``offline-rules/<hash>``: from the content of the rules that make it up, never bumped by hand (ADR 0031)."""
    return behaviour_id("offline-rules", "extractor")


#: the changes one message may tell that the rules read (a real message tells a few)
MAX_CHANGES = 64


class _Reading:
    """What one clause gave: an item, nothing, or a piece that joins a neighbour."""

    ITEM, NOTHING, FRAGMENT, SCENE = "item", "nothing", "fragment", "scene"


class _Message(NamedTuple):
    """One message and what it is read against."""

    text: str
    known: tuple[str, ...] = ()
    correcting: bool = False  # 说错了 / oops / I meant …
    retracting: bool = False  # 开玩笑的 / just kidding / nvm
    dropped: bool = False  # 我 put back in front by the reader, not said

    @property
    def changing(self) -> bool:
        return self.correcting or self.retracting

    @property
    def context(self) -> str:
        """The message, then the known facts: what a car or a habit said without its noun refers to."""
        return "\n".join((self.text, *self.known))


class RuleExtractor:
    """Implements ``Extractor`` with the rules above; deterministic, offline, never raises."""

    def __init__(self, detector: SignalDetector | None = None) -> None:
        self._detector = detector or SignalDetector()
        self._judge = RuleJudge()

    @property
    def extractor_id(self) -> str:
        return offline_extractor_id()

    @property
    def names_replaced_facts(self) -> bool:
        """``NamesReplacedFacts``: ``conflicts_with`` names what a change read in the message replaces."""
        return True

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
        # before any rule reads it: a space inside Chinese text splits no word ("北", U+3000, "京" is 北京)
        message = fold_cjk_spaces(message) if isinstance(message, str) else ""
        message = _without_answered_denial(message, context)
        known = tuple(k for k in known_facts or () if isinstance(k, str) and k.strip())
        return self._with_replacements(self._extract(message, known), message, known)

    def _with_replacements(self, extraction: Extraction, message: str, known: tuple[str, ...]) -> Extraction:
        """Each fact that replaces nothing yet, read against the latest known facts for a change
        told in words no slot rule reads (``replacement.replaced_fact``)."""
        facts = list(extraction.facts)
        if not known or any(f.conflicts_with for f in facts):
            return extraction
        # "月初跟对象一起搬到温江了": the clause that tells the change, which no rule read, is the new fact
        for said in told_changes(message, [f.text for f in facts]):
            replaced = replaced_fact(said, message, known, told=True)
            if replaced:
                told = ("replacement.told-change",)
                facts.append(ExtractedFact(said, _category(said), rules_common.FACT_CONFIDENCE, replaced, rules=told))
                return attrs.evolve(extraction, facts=tuple(facts))
        named = [replaced_fact(f.text, message, known) for f in facts]
        if not any(named):
            return extraction
        facts = [
            attrs.evolve(f, conflicts_with=n, rules=(*f.rules, "replacement.replaced-fact")) if n else f
            for f, n in zip(facts, named, strict=True)
        ]
        return attrs.evolve(extraction, facts=tuple(facts))

    def _extract(self, message: str, known: tuple[str, ...]) -> Extraction:
        """The stages: normalise, read clause by clause, then what the reading missed.

        Normalised: regional first person as the standard one, a space after an emoji or a mark before
        Chinese as the end of a clause (between two Han it is gone already), and a message that opens
        with a known relative's name said of them ("小米今年上初中了" after 用户的女儿叫小米)."""
        text = RE._EMOJI_SPACE.sub("，", dialect(message))
        text = _by_name(text, known) or text
        extraction = self._read(text, known)
        if extraction.facts or extraction.preferences:
            extraction = self._with_tastes(extraction, text, known)
        extraction = self._with_child_grade(extraction, text, known)
        if extraction.facts and not extraction.preferences and not is_english(text):
            return self._with_dropped_read(extraction, text, known)
        if not extraction.facts and not extraction.preferences:
            return self._unread(extraction, text, known)
        return extraction

    def _with_tastes(self, extraction: Extraction, text: str, known: tuple[str, ...]) -> Extraction:
        """The tastes taken up that Chinese ``text`` tells, none imagined ("玩腻了，现在天天玩原神"); beside
        something else the rules read ("这阵子彻底迷上爵士了，天天听…", "以后只看纪录片，学点东西"), only
        those told as taken up whose choice none of what they read names."""
        if is_english(text):
            return extraction
        said = [f.text for f in extraction.facts] + [p.text for p in extraction.preferences]
        tastes = [t for t in taste_now(text) if not _imagined(t, text)]
        if said:
            tastes = [
                t
                for t in tastes
                if RE._TAKEN_UP.search(t)
                and not any(c in s for c in _choices(t) for s in said)
                and not any(s.removeprefix("用户") in t for s in said)
            ]
        found = self._build([_found(t, rule="topics.taste-now") for t in tastes], extraction.signals, known)
        return attrs.evolve(extraction, facts=(*extraction.facts, *found.facts)) if said else found

    def _with_child_grade(self, extraction: Extraction, text: str, known: tuple[str, ...]) -> Extraction:
        """ "转眼都中班了", "这学期升大班了，我比她还激动": a school year other than the one known of
        the user's one child whose year is known (and none of the user's own), said in a clause without
        who (小班 → 中班 → 大班 as 初二 → 初三), read as that child's."""
        theirs = _only_relative("grade", known)
        if theirs is None or is_english(text) or changes.is_unreal(text) or RE._ASKS.search(text):
            return extraction  # "下学期就四年级了", "要是升大班了": not yet
        role, held = theirs
        for clause in RE._CLAUSE_MARK.split(text):
            m = RE._GRADE_SAID.match(clause.strip())
            if m and m.group("g") != held and not RE._SAYS_WHO.search(clause):
                if any(m.group("g") in f.text for f in extraction.facts):
                    return extraction
                again = self._read(f"我的{role}升{m.group('g')}了", known)
                return attrs.evolve(extraction, facts=(*extraction.facts, *again.facts)) if again.facts else extraction
        return extraction

    def _with_dropped_read(self, extraction: Extraction, text: str, known: tuple[str, ...]) -> Extraction:
        """ "公司在南山，每天骑车过去": a later clause was read, the first, without 我, was not."""
        again = self._read_dropped(text, known)
        before = {f.text for f in extraction.facts}
        added = [f for f in again.facts if f.text not in before]
        # only what fills a slot is added, never a restatement of the whole message
        # (or what the household has: "家里有辆X，平时上班开")
        slotted = all(slots_of(f.text) or RE._HOUSEHOLD_HAS.match(f.text) for f in added)
        kept = before <= {f.text for f in again.facts} and added and slotted
        return again if kept else extraction

    def _read_dropped(self, text: str, known: tuple[str, ...]) -> Extraction:
        """``text`` read again as said with 我 put back (``_with_dropped_subject``), or nothing read."""
        dropped = _with_dropped_subject(text)
        return self._read(dropped, known, dropped=True) if dropped != text else self._build([], {}, ())

    def _unread(self, extraction: Extraction, text: str, known: tuple[str, ...]) -> Extraction:
        """Nothing was read: the message again, as chat often says it without 我 (``_with_dropped_subject``),
        then as each rule of ``[[registries.unread]]`` restates it, then a taste taken up."""
        again = self._read_dropped(text, known)
        if again.facts or again.preferences:
            # in English only a statement that fills a slot ("I transferred to Berkeley"),
            # not one restated as said ("The user sold it and got …")
            # (a relative's "our …" and a pursuit going on are said whole, only without "my", "I'm")
            if (
                is_english(text)
                and not all(slots_of(f.text) for f in again.facts)
                and not RE._EN_FAITHFUL.match(_with_dropped_subject(text))
            ):
                return extraction
            return again
        for rule in _UNREAD.rules:
            fired = rule.fire(OPENERS.sub("", text) if rule.values.get("without_openers") else text, {"known": known})
            restated = self._read(fired.text, known) if fired else None
            if restated is not None and _kept(restated, rule.values["keep"]):
                return restated
        # "玩腻了，现在天天玩原神": a taste taken up, which may replace a liking said before
        return self._with_tastes(extraction, text, known)

    def _read(self, text: str, known: tuple[str, ...], dropped: bool = False) -> Extraction:
        signals = self._detector.detect(text)
        said = _Message(text, known, changes.is_correction(text), changes.is_retraction(text), dropped)
        signalled = _signalled(signals, said)
        # "烟已经戒了", "又换成理想L7了": no signal word, but a change to something known
        change_only = not signalled and bool(known) and changes.may_change(text)
        if not (signalled or change_only):
            return self._build([], signals, ())
        try:
            # "要是换了大房子，我想养只萨摩耶", "if I ever got a second dog …": on a condition, not so
            items = [i for i in self._items(said) if not (i.kind == "fact" and _imagined(i.text, text))]
            if said.changing and known:
                items = self._corrected(items, said)
            elif said.correcting:
                items = _without_lone_values(items, said)
            if known:
                items = self._against_known(items, said)
            if change_only:  # only what changes a known fact
                items = [i for i in items if i.kind == "fact" and (i.replaces or self._conflicting(i.text, known)[0])]
            items = [_with_change_told(i, text) for i in items]
            # "看腻了，推荐纪录片吧": a request that says the old taste gave way is the taste now, as a fact
            asked = (_TASTE_ASKED.first(i.text, {"message": text}) for i in items if i.kind == "preference")
            items += [_found(fired.text, rule=fired.rule.id) for fired in asked if fired]
        except Exception:  # the protocol promises no exception on odd input
            log.exception("offline rules failed on a message; recording nothing for it")
            return self._build([], signals, ())
        return self._build(items, signals, known)

    # -- reading a message ---------------------------------------------------

    def _items(self, message: _Message) -> list[Item]:
        items: list[Item] = []
        carried = USER
        sentence = -1
        last: int | None = None  # index of this sentence's latest item
        scene: list[str] = []  # scene-setting clauses waiting for their statement
        previous = ""  # the clause before, in this sentence
        for said in split_clauses(message.text):
            if said.sentence != sentence:
                sentence, last, scene, previous = said.sentence, None, [], ""
            clause = _kept_clause(said, message)
            if clause is None:
                continue
            if last is not None and self._named(items, last, clause, previous):
                previous = clause.text
                continue
            previous = clause.text
            reading, item, carried = self._clause(clause, carried, message)
            if reading == _Reading.ITEM and item is not None:
                last = self._placed(items, last, item, scene, clause)
                scene = []
            elif reading == _Reading.FRAGMENT and last is not None:
                if items[last].kind == "fact":  # a preference keeps its canonical wording
                    items[last] = self._joined(items[last], clause.text, clause)
            elif reading in (_Reading.SCENE, _Reading.FRAGMENT) and last is None:
                scene.append(clause.text)
        return items

    def _named(self, items: list[Item], last: int, clause: Clause, previous: str) -> bool:
        """'养了只狗，叫可乐': the name joins the statement that introduced what it names; '交了个女朋友，
        叫小雨': the partner's name, not the user's. True when the clause was so read."""
        named = RE._NAMING.match(clause.text.strip())
        if not (named and RE._INTRODUCES.search(previous) and items[last].kind == "fact"):
            return False
        partner = RE._PARTNER_INTRO.search(previous)
        if partner:
            role = ROLE_SYNONYMS.get(partner.group("r"), partner.group("r"))
            items[last] = Item("fact", f"用户的{role}叫{named.group('n')}", "relationship")
        else:
            items[last] = self._joined(items[last], clause.text, clause)
        return True

    def _placed(self, items: list[Item], last: int | None, item: Item, scene: list[str], clause: Clause) -> int | None:
        """``item`` added to ``items`` (or joined to the sentence's latest); the index of the sentence's latest."""
        if last is not None and items[last].generic and item.generic:
            # one sentence, one statement restated as said: "I'm 19 and I cannot wait to move out"
            items[last] = self._joined(items[last], item.text, clause)
            return last
        if scene and item.generic:
            item = self._with_scene(item, scene, clause)
        if any(item.text == seen.text for seen in items):
            return last
        items.append(item)
        return len(items) - 1

    @staticmethod
    def _joined(item: Item, text: str, clause: Clause) -> Item:
        """``item`` with what the next piece of the same sentence said."""
        if is_english(clause.text):
            piece = rules_en.en_third_person(rules_en.clean_en(text))
            if piece.startswith("The user"):
                piece = "the user" + piece[8:]
            elif not RE._CAPITAL.match(rules_en.clean_en(clause.text)[:1]):
                piece = piece[:1].lower() + piece[1:]  # as said: a capital mid-sentence names something
            joiner = f" {clause.joiner} " if clause.joiner else ", "
            return item._replace(text=f"{item.text}{joiner}{piece}")
        piece = rules_common.third_person(rules_zh_facts.clean_said(text))
        if piece.startswith("用户") and item.text.startswith("用户"):
            piece = piece[2:] if not piece.startswith("用户的") else piece
        return item._replace(text=f"{item.text}，{clause.joiner}{piece}")

    @staticmethod
    def _with_scene(item: Item, scene: list[str], clause: Clause) -> Item:
        """'每到周末' + '用户去爬山' → '每到周末，用户去爬山'."""
        if is_english(clause.text):
            said = ", ".join(rules_en.clean_en(s) for s in scene if is_english(s))
            if not said:
                return item
            return item._replace(text=f"{said[:1].upper()}{said[1:]}, {item.text[:1].lower()}{item.text[1:]}")
        said = "，".join(rules_common.third_person(rules_zh_facts.clean_said(s)) for s in scene if not is_english(s))
        return item._replace(text=f"{said}，{item.text}") if said else item

    def _clause(self, clause: Clause, carried: Subject, message: _Message) -> tuple[str, Item | None, Subject]:
        said = clause.text.strip()
        wish = answer_wish(clause)  # how the user wants answers, in either language, even asked politely
        if wish is not None:
            return _Reading.ITEM, wish, USER
        if is_english(said):
            return self._english(clause, said, message)
        said, subject, rest = _zh_subject(said, carried, message.known)
        # How to reply is the user's to say, even after "老板姓张，…"; but
        # "我老婆喜欢简短的回复" names someone else on purpose.
        named_someone = (subject.kind == "role" and subject.explicit) or said_of_someone_else(clause.text)
        item = None
        if not named_someone:  # how the user wants replies: a liked reply, a tool, a request
            core = LEAD_ADVERBS.sub("", rest)
            item = liked_reply_preference(core, said) or tool_preference(subject, core, said)
            item = item or request_preference(subject, core, said)
        if item is not None:
            return _Reading.ITEM, item, USER
        if is_question(clause) or is_question_to_assistant(clause):
            return _Reading.NOTHING, None, carried
        if subject.kind == "user":
            item = user_facts(rest, said, message.context)
        elif subject.kind == "role":
            item = role_fact(subject, rest, said, message.context)
        elif subject.kind == "owned":
            item = owned_fact(subject, rest)
        after = subject._replace(explicit=False) if subject.kind in ("user", "role", "owned") else carried
        if item is not None:
            return _Reading.ITEM, item, after
        return self._unrecognised(said, subject, carried, after, message.changing)

    @staticmethod
    def _unrecognised(
        said: str, subject: Subject, carried: Subject, after: Subject, changing: bool = False
    ) -> tuple[str, Item | None, Subject]:
        """No slot rule applies: restate a first-person statement as said (the first of the clause, said of
        the one relative 他/她 can be, or said without 我 in a correction that gives a fact), or keep the
        piece for a neighbour."""
        restated = [said] if zh_mentions_self(said) else []
        pronoun = RE._PRONOUN_OPENING.match(said)
        if subject.kind == "role" and pronoun and subject.phrase.startswith("用户的"):
            # "他读一年级" of the one relative it can be: said of them, as said
            restated.append("我的" + subject.phrase[3:] + said[pronoun.end() :])
        if changing and subject.kind == "user" and not subject.explicit and not RE._LISTENER.search(said):
            # "（吹牛的，）其实就去过五个": what is true instead, said without 我
            restated.append("我" + rules_zh_facts.clean_said(said))
        item = next(filter(None, (rules_zh_facts.generic_fact(text, subject) for text in restated)), None)
        if item is not None:
            return _Reading.ITEM, item, after
        if RE._LISTENER.search(said):
            return _Reading.NOTHING, None, after
        if rules_zh_facts.is_scene(said):
            return _Reading.SCENE, None, carried
        if not subject.explicit and carried.kind in ("user", "role") and rules_zh_facts.is_fragment(said):
            return _Reading.FRAGMENT, None, carried
        return _Reading.NOTHING, None, after

    @staticmethod
    def _english(clause: Clause, said: str, message: _Message) -> tuple[str, Item | None, Subject]:
        if is_question(clause):
            return _Reading.NOTHING, None, USER
        said = RE._HOUSEHOLD_WE.sub("I", _en_pronoun_resolved(said, message))
        item = rules_en.en_clause(said, said, message.text) or _en_dropped_read(said, message)
        item = item or _en_swapped(said, message)
        if item is not None and item.kind == "fact":  # "I have my own salon": the object is the user's too
            item = item._replace(text=rules_en.en_third_person(item.text))
        # else the user's own statement, restated as said; or a piece that joins a neighbour
        mine = item is None and en_mentions_self(said)
        item = rules_en.generic_en(said) if mine else item
        if item is not None:
            return _Reading.ITEM, item, USER
        return (_Reading.FRAGMENT if not mine and rules_en.is_en_fragment(said) else _Reading.NOTHING), None, USER

    # -- the result -------------------------------------------------------------

    def _build(self, items: list[Item], signals: dict[str, Any], known_facts: Sequence[str]) -> Extraction:
        facts = [
            self._fact(i, known_facts)
            for i in items
            # a mood of the moment or a reaction to the chat is nothing to remember (``durability``)
            if i.kind == "fact"
            and not RE._ABOUT_THE_LISTENER.search(i.text)
            # a pointer in a fact that replaces a known one points at that one ("stopped doing that")
            and not is_momentary(i.text, names_a_known_fact=bool(i.replaces))
        ]
        preferences = [
            ExtractedPreference(i.text, i.category, i.score, i.evidence, rules=i.rules)
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
            extractor_id=offline_extractor_id(),
            facts=facts,
            preferences=preferences,
            raw_output=raw,
            signals=dict(signals),
        )

    def _fact(self, item: Item, known_facts: Sequence[str]) -> ExtractedFact:
        """A fact found, naming the known fact it replaces: the one its rule named, else the one
        the judge says it updates or contradicts; with the ids of the rules that said so."""
        replaced, judged = (item.replaces, ()) if item.replaces else self._conflicting(item.text, known_facts)
        return ExtractedFact(item.text, item.category, item.score, replaced or None, rules=(*item.rules, *judged))

    def _conflicting(self, text: str, known_facts: Sequence[str]) -> tuple[str, tuple[str, ...]]:
        """The known fact this one updates or contradicts, as the spec's prompt asks to mark, the latest
        first ("" for none), and the ids of the judge's rules that said so."""
        for known in reversed(known_facts):
            verdict = self._judge.judge(known, text)
            if verdict.relation in (Relation.UPDATE, Relation.CONFLICT):
                return known, verdict.rules
        return "", ()

    # -- corrections and retractions ---------------------------------------------

    def _against_known(self, items: list[Item], message: _Message) -> list[Item]:
        """What only the known facts make clear: a thing swapped for another, a pursuit given up,
        and whose school year or age a subject-less clause gives."""
        # "我在读研一" names its subject: only a clause without 我 may be the child's
        # (a message read again with 我 put back had none: see _with_dropped_subject)
        said_i = not message.dropped and bool(RE._I.search(message.text))
        items = [self._remeasured(i if said_i else self._reattributed(i, message.known), message.known) for i in items]
        items = self._with_swap(items, message)
        for clause in split_clauses(message.text):
            items = self._clause_against_known(items, clause.text, message)
        if not changes.is_conditional(message.text):
            items = self._with_events(items, message)
        return self._without_echoes(items, message.known)

    def _with_swap(self, items: list[Item], message: _Message) -> list[Item]:
        """A thing swapped for another, which none of the facts read already says."""
        swapped, rule = changes.replaced(message.text, message.known), "changes.replaced"
        if swapped is None and not is_english(message.text):
            # "又换了一台三星": said in the words of the fact it replaces; the event restated as said goes
            swapped, rule = changes.swapped(message.text, message.known), "changes.swapped"
        if swapped is None or self._told(swapped[1], [i.text for i in items if i.kind == "fact"]):
            return items
        if rule == "changes.swapped":
            items = [i for i in items if not (i.kind == "fact" and i.generic and RE._CHANGE_VERB.search(i.text))]
        return [*items, _found(*swapped, rule=rule)]

    def _told(self, known: str, texts: Sequence[str]) -> bool:
        """Whether one of ``texts`` already says something of the known fact (the judge relates them)."""
        return any(self._judge.judge(known, text).relation is not Relation.DIFFERENT for text in texts)

    def _clause_against_known(self, items: list[Item], clause: str, message: _Message) -> list[Item]:
        """One clause against the known facts: a named pet gone, a known plan called off or fallen
        through, else a pursuit given up."""
        gone = RE._GONE.match(OPENERS.sub("", clause.strip()))
        named = [k for k in message.known if gone and gone.group("n") in k]
        species = species_of(named[-1]) if named else None
        if gone and species:
            said = f"用户不再养{species}了"  # "小黑走丢了" after 用户的猫叫小黑: the name goes with it
            gone_by_name = _found(said, rule="extractor.gone", category="other")
            return items if any(said == i.text for i in items) else [*items, gone_by_name]
        off = changes.called_off(clause)
        if off and any(self._judge.judge(k, off).relation is Relation.CONFLICT for k in message.known):
            return [*items, _found(off, rule="changes.called-off", category="other")]  # "出差取消了": the plan is known
        fell = None if changes.told_of_someone_else(message.text) else changes.plan_fell_through(clause, message.known)
        if fell and not any(i.replaces == fell[1] for i in items):
            # "又黄了", "游学那事儿泡汤了": the plan just told, whatever it was called
            return [*items, _found(*fell, rule="changes.plan-fell-through", category="other")]
        return items if changes.is_conditional(message.text) else self._given_up(items, clause, message)

    def _given_up(self, items: list[Item], clause: str, message: _Message) -> list[Item]:
        """'日语不学了', '海边不去了': something given up that a known fact says the user did or planned."""
        m = RE._GIVING_UP.match(OPENERS.sub("", clause.strip()))
        if not m or is_english(clause) or RE._FORBIDS.match(m.group("verb")):
            return items  # "医生不让跑了": someone else forbids it; whether the user stopped is said apart
        if "我" not in clause and changes.told_of_someone_else(message.text):
            return items  # "我室友…现在不学了": the one named gave it up
        if re.search(r"(?:改|换成)" + m.group("verb"), message.text):
            return items  # "可乐一口不喝了，改喝豆浆": the switch says what ended and what took its place
        obj = "" if RE._HOW_LITTLE.fullmatch(m.group("obj") or "") else (m.group("obj") or "")
        said = f"用户不{obj}了" if obj.startswith(m.group("verb")) else f"用户不{m.group('verb')}{obj}了"
        ended = [k for k in message.known if self._judge.judge(k, said).relation is Relation.CONFLICT]
        if ended and changes.is_plan(ended[-1]):
            # "海边不去了" after a plan to go: the plan is off; the place was never the user's
            said = "用户的出行计划取消了" if RE._TRAVEL.search(ended[-1]) else "用户的计划取消了"
        elif ended and obj:
            said, items = self._pursuit_given_up(items, said, obj, ended[-1])
        if ended and not any(said == i.text for i in items):
            items = [*items, _found(said, rule="extractor.giving-up")]
        return items

    def _pursuit_given_up(self, items: list[Item], said: str, obj: str, ended: str) -> tuple[str, list[Item]]:
        """ "篆刻那个我不学了": the pursuit given up, named by its verb, not again by what ended
        (the clause restated as said, which names it with 不, goes with it)."""
        gave_up = changes.gave_up_pursuit(ended)
        if not gave_up or self._judge.judge(ended, gave_up).relation is not Relation.CONFLICT:
            return said, items
        what = RE._THAT_ONE_SUFFIX.sub("", obj)
        return gave_up, [i for i in items if not (i.generic and what and what in i.text and RE._NOT.search(i.text))]

    def _with_events(self, items: list[Item], message: _Message) -> list[Item]:
        """Each change ``changes.events`` reads that no item already says, in place of what only restates it."""
        # each change once, and at most MAX_CHANGES: every one is judged against the items so far,
        # so one clause repeated a thousand times (or a thousand made-up changes) cost their square
        for text, old in list(dict.fromkeys(changes.events(message.text, message.known)))[:MAX_CHANGES]:
            if self._told(old, [i.text for i in items]):
                continue
            # the clause restated as said ("用户其实户口本上是6月20号") gives way to the fact it changes
            new = set(text) - set(old) - set(" ，,")
            # and so does a statement of the choice it makes ("开的是电瓶车" beside "后来买了辆电瓶车")
            chosen = _choices(text)
            items = [
                i for i in items if not (i.generic and new and new <= set(i.text)) and not (chosen & _choices(i.text))
            ]
            items.append(_found(text, old, rule="changes.events"))
        return items

    def _without_echoes(self, items: list[Item], known: Sequence[str]) -> list[Item]:
        """'我不在幼儿园了，去了一家培训机构当老师': once the new fact replaces the old one, the
        clause that only says the old one is over repeats its value; it goes."""
        replaced = [
            i.replaces or self._conflicting(i.text, known)[0] for i in items if i.kind == "fact" and not i.generic
        ]
        values = [
            RE._ARTICLE.sub("", part) for k in replaced if k for _, value in slots_of(k) for part in value.split("/")
        ]
        values = [v for v in values if len(v) >= 2]
        return [i for i in items if not (i.generic and RE._NEGATED.search(i.text) and any(v in i.text for v in values))]

    @staticmethod
    def _remeasured(item: Item, known: Sequence[str]) -> Item:
        """'现在改成一天一杯了' after 用户每天喝三杯咖啡 → 用户每天喝一杯咖啡: the amount, in what it measures."""
        if item.kind != "fact" or not item.generic:
            return item
        for fact in reversed(known):
            restated = remeasure(fact, item.text)
            if restated:
                return _found(restated, fact, rule="judge.remeasured")
        # "用户的女儿暑假一过就升初三": a relative's school year moved, said with more words than
        # the slot reader reads; read against that relative's known facts only
        role = RE._RELATIVE_FACT.match(item.text)
        if role and changes.GRADE.search(item.text):
            theirs = [k for k in known if k.startswith(role.group(0))]
            moved = changes.remeasured(RE._COMMA.split(item.text[len(role.group(0)) :])[0], theirs)
            if moved:
                return _found(*moved, rule="changes.remeasured")
        return item

    @staticmethod
    def _reattributed(item: Item, known: Sequence[str]) -> Item:
        """'现在都上初中了' said of the one child whose school year is known: that child's, not the user's."""
        if item.kind != "fact" or not item.text.startswith("用户") or item.text.startswith("用户的"):
            return item
        slot = slot_of(item.text)
        theirs = _only_relative(slot[0], known) if slot and slot[0] in ("grade", "age") else None
        if slot is None or theirs is None:
            return item
        role, value = theirs
        grown = value.isdigit() and slot[1].isdigit() and 0 <= int(slot[1]) - int(value) <= 3
        if slot[0] == "age" and not grown:
            return item  # an age that is not the child's a little later is the user's own
        return item._replace(text=f"用户的{role}{item.text[2:]}", category="relationship")

    def _corrected(self, items: list[Item], message: _Message) -> list[Item]:
        """A correction or retraction that names only the new value: the known fact, restated with it.

        When a fact read from the message already updates or contradicts a
        known one, that fact is the correction. Otherwise the value is put in
        the known fact it belongs to: "李然" (after 用户叫吕然), "it's Ivy",
        "其实就几十个读者", "糖糖其实是只龙猫".
        """
        # what a correction or retraction says instead is marked as such (``[[registries.actually]]``)
        marked = [_ACTUALLY.first(i.text, {"generic": i.generic}) if i.kind == "fact" else None for i in items]
        items = [i._replace(text=fired.text) if fired else i for i, fired in zip(items, marked, strict=True)]
        # "口误，是五年级", "其实是中通，说顺嘴了": one value of the kind of a value just said, in its
        # place, whatever else the message says ("反正都是送快递" is no new fact of its own)
        swapped = changes.swapped_same_kind(message.text, message.known) if message.correcting else None
        if swapped is None and message.correcting and not is_english(message.text):
            # "其实是X" / "应该是X": X a value of the kind of one of the last three facts
            said = [changes.strip_marker(clause.text).strip() for clause in split_clauses(message.text)]
            values = [value for s in said if RE._SAID_INSTEAD.match(s) and (value := changes.bare_value(s))]
            swapped = next(
                filter(None, (changes.substitute(v, message.text, message.known[-3:]) for v in values)), None
            )
        if swapped is not None:
            text, old = swapped
            kept = [
                i
                for i in items
                if not (i.kind == "fact" and (i.generic or (i.replaces or self._conflicting(i.text, (old,))[0]) == old))
            ]
            return [*kept, _found(text, old, rule="changes.swapped-same-kind")]
        # a statement that fills a slot corrects by itself; one restated as said only when
        # no known fact can be restated with the value (see judge._reframed)
        facts = [i for i in items if i.kind == "fact" and (not i.generic or message.retracting)]
        found = None if any(self._conflicting(i.text, message.known)[0] for i in facts) else _correction(message)
        if found is None:
            # a lone value the judge reads against a known fact ("口误，是在烟台读大二") corrects it
            if not message.correcting:
                return items
            return _without_lone_values(items, message, lambda text: bool(self._conflicting(text, message.known)[0]))
        text, old = changes.marked_as_correction(found[0]), found[1]
        # what restates the message, or says the correction again, goes
        kept = [
            i
            for i in items
            if i.kind != "fact" or not ((i.generic and i.text != text) or changes.marked_as_correction(i.text) == text)
        ]
        return [*kept, _found(text, old, rule="extractor.corrected-value")]


def _without_lone_values(
    items: list[Item], message: _Message, corrects: Callable[[str], bool] = lambda text: False
) -> list[Item]:
    """A correction's value with no known fact to put it in ("口误，是南京", "typo, I meant Lyon") says
    nothing of the user: "用户是南京" would be a guess at which fact it corrects. ``corrects``: whether
    a lone value's fact corrects a known one after all (asked of those facts only)."""
    said = (changes.strip_marker(clause.text).strip() for clause in split_clauses(message.text))
    values = [value for s in said if RE._VALUE_ONLY.match(s) and (value := changes.bare_value(s))]
    lone = [i for i in items if i.kind == "fact" and i.generic and any(i.text.endswith(v) for v in values)]
    return [i for i in items if i not in lone or corrects(i.text)]


def _correction(message: _Message) -> tuple[str, str] | None:
    """(the known fact restated with the value a correction names, that known fact), or None."""
    text, known = message.text, message.known
    found = changes.instead(text, known) or changes.recount(text, known)
    clauses = [changes.strip_marker(c.text) for c in split_clauses(text)]
    found = found or next(filter(None, (changes.renamed_kind(c, known) for c in clauses)), None)
    if found is not None:
        return found
    # "Rhys, R-H-Y-S": the spelling is not part of the value
    values = (
        [RE._EN_SPELLED.sub("", m.group("v")) for m in RE._EN_CORRECT_VALUE.finditer(text)] if is_english(text) else []
    )
    values += [v for v in map(changes.bare_value, clauses) if v]
    # "我那台是戴尔灵越": the thing spoken of, by its make
    values += [m.group("v") for m in RE._ZH_THAT_ONE.finditer(text)]
    restated = (changes.substitute(v, text, known) or changes.named_instead(v, text, known) for v in values)
    found = next(filter(None, restated), None)
    return _english_correction(values, message) if found is None and is_english(text) else found


def _english_correction(values: list[str], message: _Message) -> tuple[str, str] | None:
    """An English correction's value in place of the one name of a recent fact: a value said after
    "I meant", "scratch that, Sheffield", or "wrong city — the warehouse is in Sparks" (a name in
    another sentence's shape, one the known facts do not hold, after the same word as the old one)."""
    scratched = [m.group("v") for m in RE._EN_SCRATCH.finditer(message.text)][:1]
    found = next(filter(None, (changes.renamed_in_english(v, message.known) for v in [*values, *scratched])), None)
    if found:
        return found
    placed = [m for m in RE._EN_NAME_PLACED.finditer(message.text) if not any(m.group("v") in k for k in message.known)]
    found = changes.renamed_in_english(placed[0].group("v"), message.known) if placed else None
    # a name in the place of one said after the same word: "in Sparks" for "in Reno"
    after = rf"\b{placed[0].group('p')} (?:(?:St|Dr|Mt)\. )?[A-Z]" if placed else ""
    return found if found and re.search(after, found[1], re.IGNORECASE) else None


def _en_pronoun_resolved(said: str, message: _Message) -> str:
    """ "he turned 8" after "The user's son is 7": he or she as the one relative (or, none known,
    the one pet) the known facts can mean; "she's 11 now" after "The user's cat is 10"."""
    said = RE._EN_HE_IS.sub(r"\1 is", said.strip().replace("’", "'"))
    pronoun = RE._EN_PRONOUN.match(said)
    if not pronoun:
        return said
    role = _known_role("他" if pronoun.group("p").lower() == "he" else "她", message.known)
    someone = RE._EN_ROLE.search(message.text)
    english_role = _in_english(role, message.known) if role or not someone else None
    if not english_role:
        return said
    return said.strip()[: pronoun.start("p")] + f"my {english_role}" + said.strip()[pronoun.end("p") :]


def _en_dropped_read(said: str, message: _Message) -> Item | None:
    """ "graduated last week!! I now work at …": a change told without "I", when it fills a slot;
    "switched to green tea a while back": a choice of a topic held one at a time or given up for
    another ("switched", "instead", "now only") when a known fact names a choice of the same topic
    (a season is a time: "last spring")."""
    dropped = _with_dropped_english_subject(said)
    if dropped == said:
        return None
    again = rules_en.en_clause(dropped, dropped, message.text) or rules_en.generic_en(dropped)
    if again is None or again.kind != "fact":
        return None
    third = rules_en.en_third_person(again.text)
    held = {t for k in message.known for t in topics_of(k)}
    chose = bool((set(topics_of(third)) - {"season"}) & held) and bool(RE._EN_CHOICE_CHANGED.search(said))
    return again if slots_of(third) or chose else None


def _en_swapped(said: str, message: _Message) -> Item | None:
    """The one name of a recent fact, in place of which a new one is said: "switched to Obsidian"
    after "The user uses Notion", "transferred to Rice" after "… at Tulane" (after the word that says
    what it is to the user), "and now London, third city in two years" (the next name of a chain):
    the first rule of ``[[registries.en_renamed]]`` whose name replaces one."""
    if changes.is_unreal(said):
        return None
    for fired in _EN_RENAMED.every(said.strip()):
        swapped = changes.renamed_in_english(fired.text, message.known, marked=False)
        if swapped is None:
            continue
        after = fired.rule.values.get("after")
        names = changes.proper_names(swapped[1])  # the one proper name of the old fact, after its subject
        one = names[0].group(0) if len(names) == 1 else "\0"
        if not after or re.search(rf"\b(?:{after}) (?:the |an? )?{re.escape(one)}\b", swapped[1]):
            return _found(*swapped, rule=fired.rule.id)
    return None


def _zh_subject(said: str, carried: Subject, known: Sequence[str]) -> tuple[str, Subject, str]:
    """(the clause as restated, its subject, the rest): its object fronted back ("雅思我不考了" is
    restated as "用户不考雅思了"), and a time word after the pronoun, so that 他/她 is the subject
    ("如今她已经上大班了"; "暑假一过她就升初三了": the time a term or a holiday ended); 他/她 with no
    subject otherwise is the one relative it can be ("她上周满六岁了" after 用户的女儿五岁)."""
    text = rules_zh_facts.fronted(OPENERS.sub("", said))
    if text.replace("我", "") != OPENERS.sub("", said).replace("我", "") and not said.endswith(text):
        said = text
    text = RE._TIME_BEFORE_PRONOUN.sub(r"\2\1", text)
    said = text if RE._SEASON_BEFORE_PRONOUN.match(said) else said
    subject, rest = parse_subject(text, carried)
    role = _known_role(text[0], known) if subject.kind == "unknown" and text.startswith(("他", "她")) else None
    return (said, Subject("role", f"用户的{role}", True), rest) if role else (said, subject, rest)


def _signalled(signals: dict[str, Any], said: _Message) -> bool:
    """Whether a message is read. The detector is a cheap gate, as in the spec; the rules decide.
    Either kind of signal opens both, since one clause's subject (我在杭州工作) often sets up another
    clause's preference (平时喜欢简短的回复). A correction of something already known is read even
    without one, and so is a known relative said as 他/她 ("如今她已经上大班了"), and what to recommend,
    the reply language asked back, what comes first in an answer ("推荐纪录片吧", "还是粤语吧",
    "先给结论": the detector knows no word of them)."""
    if signals["has_fact_signal"] or signals["has_pref_signal"]:
        return True
    if said.known and (said.changing or RE._ABOUT_SOMEONE_KNOWN.match(OPENERS.sub("", said.text))):
        return True
    asks = RE._ASKS_TO_RECOMMEND.search(said.text) or RE._ASKS_BACK_FOR_LANGUAGE.search(said.text)
    return not is_english(said.text) and bool(asks or {"order", "word_limit"} & set(dimensions(said.text)))


def _kept_clause(clause: Clause, message: _Message) -> Clause | None:
    """The clause to read (without a correction's marker), or None for one that says nothing to keep."""
    if is_small_talk(clause.text):
        return None
    if message.changing and changes.is_marker_only(clause.text):
        return None  # "说错了", "都是瞎说的": nothing to restate
    if message.correcting:
        clause = clause._replace(text=changes.strip_marker(clause.text))
    if changes.is_past_against_now(clause.text, message.text):
        return None  # "以前喜欢X" said against "现在…": no longer so
    return clause


def _without_answered_denial(message: str, context: Sequence[Turn]) -> str:
    """``message`` without a bare denial that answers the question asked just before it.

    "No, I didn't." or "No, not really." after someone asked "Did you go?" answers that question; it takes back nothing
    the user said, so it must not retract the user's latest fact (it did on LoCoMo: "She's been a great
    addition to my life" was ended by a reply to "Did you adopt her from a shelter?")."""
    last = context[-1] if context else None
    asked = (
        last is not None
        and getattr(last, "role", "") != "user"
        and RE._ENDS_ASKING.search(str(getattr(last, "content", "")) or "") is not None
    )
    return RE._BARE_DENIAL.sub("", message, count=1) if asked else message


def _choices(text: str) -> set[str]:
    """The choices ``text`` names, of any topic (see ``topics``)."""
    return {choice for named in topics_of(text).values() for choice in named}


def _kept(again: Extraction, keep: str) -> bool:
    """Whether what a message read again gave is kept, by the ``keep`` of the rule that restated it."""
    if keep == "lasting":  # fills a slot or has a category of its own (not the moment: "我现在在公司加班")
        return bool(again.facts) and all(slots_of(f.text) or f.category not in ("other", "work") for f in again.facts)
    return bool(again.facts or (keep == "any" and again.preferences))


def _next_year(year: str, context: Context) -> bool:
    """The user is known to be in a year of their studies, and ``year`` is another."""
    studying = [k for k in context.get("known", ()) if RE._STUDYING.match(k)]
    return bool(studying) and year not in studying[-1]


_UNREAD = registry(
    _DATA,
    "unread",
    _VOCABULARY.extended(predicates={"species": lambda v, c: species_of(v) is not None, "next_year": _next_year}),
    ZH_ROLE=ZH_ROLE_PATTERN,
)


def _only_relative(slot: str, known: Sequence[str]) -> tuple[str, str] | None:
    """(role, value) of the one relative of the user's whose ``slot`` (a school year, an age) the
    known facts hold, when they hold none of the user's own (a clause may then be the user's)."""
    theirs: dict[str, str] = {}
    for fact in known:
        found = slot_of(fact)
        if found and found[0] == slot:
            return None
        if found and found[0].startswith("relationship:") and found[0].endswith(":" + slot):
            theirs[found[0].split(":")[1]] = found[1]
    return next(iter(theirs.items())) if len(theirs) == 1 else None


def _fills_a_slot(clause: str) -> bool:
    """'家住福州仓山区', '小宝叫糖糖', '家里还有只鹦鹉': read as the speaker's, the clause says what
    the slot reader knows as an attribute of a person (not a liking or a having, which chat says
    of anything; a home's animals and vehicles are the household's)."""
    if len(clause) < 4 or RE._OTHERS.search(clause):
        return False
    household = bool(RE._HOUSEHOLD_OPENING.match(clause))
    named = "叫" in clause
    if household:  # "家里还有台五菱宏光": what the household has, read as what the user has
        clause = RE._HOME_OPENING.sub("", clause)
    return any(
        slot in _PERSONAL_SLOTS
        or slot.startswith("favourite:")
        or (named and slot.startswith("attr:"))
        or (household and slot.startswith(("keeps:", "possession:")))
        for slot, _ in slots_of("用户" + clause)
    )


def _with_dropped_subject(text: str) -> str:
    """A Chinese message that leaves out 我, as chat often does, with 我 put back in front.

    Only a message that names nobody at all, asks nothing, and opens with
    what is plainly the speaker's own: an attribute of theirs ("老家是安徽的"),
    a change told as an event ("后来考过了法考", "今年转岗做了技术管理"), or a
    habit ("周末偶尔也去爬山").
    """
    if is_english(text):
        return _with_dropped_english_subject(text)
    if not RE._HAN.search(text) or RE._SOMEONE.search(text):
        return text
    # the first clause that says something: "时间过得真快，转眼已经…" skips the sigh,
    # "昨天刚过完生日，正式30了" the day it happened
    start = 0
    for piece in RE._AFTER_MARK.split(text):
        clause = OPENERS.sub("", piece.strip()).rstrip("，,。！!；;")
        if RE._ASKS.search(clause):
            return text
        # plainly the speaker's own, and so (not a plan: "周末还会去爬山" is 会 of a habit)
        own = clause and (RE._DROPPED.match(clause) or _fills_a_slot(clause))
        if own and not changes.is_unreal(RE._HABIT_WILL.sub("", clause)):
            if RE._ONE_OUTING.match(clause) and not RE._SIGNED_UP.search(clause):
                return text  # "周末去听了场音乐会", "早上吃的包子": one outing, not a habit
            # "还有点麸质不耐受": 还有 opens nothing here, it says 'a bit'; "还有芒果也过敏": the opener says nothing
            at = start + (piece.index("还有") if RE._A_BIT.match(piece.strip()) else piece.index(clause))
            return text[:start] + "我" + text[at:]
        aside = is_small_talk(clause) or RE._SIGH.search(clause) or RE._OLD_WORK_LEFT.fullmatch(clause)
        if clause and not aside and not RE._WHEN_IT_HAPPENED.match(clause):
            return text  # something else comes first: leave the message as it is
        start += len(piece)
    return text


def _with_dropped_english_subject(text: str) -> str:
    """An English clause that leaves out "I", with its subject put back by the first rule of
    ``[[registries.en_dropped]]`` that fires; else the clause as it was."""
    fired = _EN_DROPPED.first(text.strip())
    return fired.text if fired else text


def _imagined(fact: str, message: str = "") -> bool:
    """What would be, not what is: on a condition and wished or asked ("要是我去当老师，会不会…？"),
    wished after a condition ("要是买了房，我想买在滨江"), or weighed ("在想要不要染个粉色").
    A habit said on a condition ("如果用户不在厨房，就在水上") is kept."""
    asked = bool(RE._ASKED_WHETHER.search(message))
    if changes.is_conditional(fact) and (RE._WISHED.search(fact) or asked):
        return True
    if changes.is_conditional(message) and RE._WISHED.search(fact):
        return True
    return bool(RE._WEIGHING.search(fact))


def _by_name(text: str, known: Sequence[str]) -> str | None:
    """A message that opens with the name of a relative the known facts name ("用户的女儿叫小米"),
    said of them: "小米今年上初中了" → "我的女儿今年上初中了"."""
    if is_english(text):
        return None
    for fact in reversed(known):
        m = RE._RELATIVE_NAMED.match(fact)
        if not m or not text.startswith(m.group("n")):
            continue
        rest = text[len(m.group("n")) :]
        # what a person or pet does or is now, not what a thing of that name does ("小米出新手机了")
        return "我的" + m.group("r") + rest if RE._DOES_NOW.match(rest) else None
    return None


def _with_change_told(item: Item, message: str) -> Item:
    """'现在口味变了，爱看喜剧片': a liking of content, with the clause that says the old one gave way."""
    if item.kind != "preference" or item.category != "content" or is_english(message):
        return item
    told = change_told(message, item.text)
    return item._replace(text=f"{told}，{item.text}") if told else item


def _known_role(pronoun: str, known: Sequence[str]) -> str | None:
    """The one relative of the user's known facts that 他/她 (he/she) can mean, or None."""
    roles = _MALE_ROLES if pronoun == "他" else _FEMALE_ROLES
    found = {role for role in map(_relative_of, known) if role in roles}
    return next(iter(found)) if len(found) == 1 else None


def _relative_of(fact: str) -> str | None:
    """The relative of the user's a known fact is about, by its slot, else by its words ("用户的儿子在读
    小学二年级": no slot, but whose it is is plain)."""
    slot = slot_of(fact)
    if slot and slot[0].startswith("relationship:"):
        return slot[0].split(":")[1]
    named = RE._RELATIVE_FACT.match(fact)
    return ROLE_SYNONYMS.get(named.group("r"), named.group("r")) if named else None


def _in_english(role: str | None, known: Sequence[str]) -> str | None:
    """How the known facts name ``role`` in English ("son" for 儿子), if they do; with no role, the one
    kind of pet they speak of ("cat" for "The user's cat is 10"), when they know no relative of the
    user's, who he or she might be instead."""
    if role:
        named = [m.group(1).lower() for m in map(RE._EN_WHOSE.match, reversed(known)) if m]
        return next((word for word in named if ROLE_SYNONYMS.get(word) == role), None)
    if any(RE._EN_RELATIVE_FACT.match(k) for k in known):
        return None
    pets = {m.group("pet").lower() for m in map(RE._EN_PETS.match, known) if m}
    return next(iter(pets)) if len(pets) == 1 else None


def _found(text: str, replaces: str = "", *, rule: str, category: str = "") -> Item:
    """A fact a stage found (replacing the known fact ``replaces``, if any), in ``category`` or else
    the one ``_category`` gives, traced to ``rule``."""
    return Item("fact", text, category or _category(text), replaces=replaces, rules=(rule,))


def _category(text: str) -> str:
    """The category of a fact restated from a known one: by its slot, else by its words."""
    slot = slot_of(text)
    if slot and (slot[0].startswith("relationship:") or slot[0] in _SLOT_CATEGORIES):
        return _SLOT_CATEGORIES.get(slot[0], "relationship")
    if is_english(text):
        return rules_en.en_category(text)
    return rules_zh_facts.zh_category(text, USER)


__all__ = ["RuleExtractor", "offline_extractor_id"]
