"""Topics a person has one current choice of, and how a new choice is told.

The slot reader knows attributes by how they are said ("住在X", "在X工作").
Chat also changes things by naming a thing of the same kind in a sentence
shaped like no slot: "现在改喝无糖乌龙茶" after "每天一瓶可乐", "彻底变成猫派了"
after "一直是狗派", "后来买了辆电瓶车，骑着快多了" after "每天坐公交上班".
This module names the kinds (a drink, a way to get to work, a sport, a genre,
a game, a platform one works for) and the words that say a choice changed.

A topic is *exclusive* when people hold one choice at a time (how they get to
work, dog or cat person, the platform they drive for): any word that places
the statement after the old one (现在, 后来, these days) makes it the new
choice. The others (sports, drinks, games, genres, singers) are often held
several at once, so only words that say the old one gave way (改, 换, 只,
腻了, 不再, instead, switched) do, and never a word that adds (也, 还, also).
"""

from __future__ import annotations

import functools
import re

from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN

_DATA = rules("topics")
RE = _DATA.patterns(EN_ROLE_PATTERN=EN_ROLE_PATTERN, ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)

_TOPICS: dict[str, tuple[str, bool]] = _DATA.table("_TOPICS")
_WORDS = {topic: re.compile(words, re.IGNORECASE) for topic, (words, _) in _TOPICS.items()}


#: one choice, said in several words: each word → the choice
_SAME_CHOICE = {word: choice for choice, words in _DATA.table("_SAME_CHOICE").items() for word in words}


@functools.lru_cache(maxsize=4096)
def topics_of(text: str) -> dict[str, frozenset[str]]:
    """Topic → the choices of it ``text`` names (lower-cased, one word for each)."""
    found = {}
    for topic, words in _WORDS.items():
        named = frozenset(_SAME_CHOICE.get(w, w) for w in (_choice(m.group(0)) for m in words.finditer(text)))
        if named:
            found[topic] = named
    return found


def _choice(words: str) -> str:
    """A choice without the words of telling that a match may begin with ("转到市里的实验中学"),
    and a film genre without 片 ("战争片" and "战争" are one choice)."""
    choice = RE._TELLING.sub("", words.lower()) or words.lower()
    return choice[:-1] if len(choice) == 3 and choice.endswith("片") and choice != "纪录片" else choice


def succeeds(old: str, new: str) -> tuple[str, str, str] | None:
    """(topic, old choice, new choice) when ``new`` tells of a choice that took the place of
    the one ``old`` names; None when they are not about one topic, or ``new`` may add to it."""
    old_body, new_body = _body(old), _body(new)
    if old_body is None or new_body is None:
        return None
    old_topics, new_topics = topics_of(old_body), topics_of(new_body)
    for topic, old_named in old_topics.items():
        new_named = new_topics.get(topic, frozenset())
        fresh = sorted(c for c in new_named if not any(_same(c, held) for held in old_named))
        if not fresh:
            continue
        # a favourite is one at a time, whatever its topic ("最爱的水果是榴莲" → "现在最爱山竹")
        exclusive = _TOPICS[topic][1] or bool(RE._FAVOURITE.search(old_body) and RE._FAVOURITE.search(new_body))
        # the clause that names the new choice: "也" elsewhere ("膝盖也不疼了") adds nothing to it
        clause = next(
            (c for c in RE._CLAUSE_BREAK.split(new_body) if fresh[0] in topics_of(c).get(topic, ())), new_body
        )
        later = bool(RE._LATER.search(new_body))
        # "又迷上攀岩了" adds a pastime to one held all along, but follows one taken up in its turn
        # ("后来迷上了蛋仔派对", "改打乒乓球了"): a chain of them, each in the last one's place
        in_turn = bool(RE._BEFORE.search(old_body) or RE._LATER.search(old_body) or RE._GAVE_WAY.search(old_body))
        gave_way = bool(
            RE._GAVE_WAY.search(new_body)
            or RE._CORRECTED.search(new_body)
            or (later and in_turn and RE._TOOK_UP.search(clause))
            or (RE._MORE_NOW.search(clause) and not RE._ADDS.search(clause))
            # a favourite named now ("现在最爱的是云南菜"): one at a time, in place of those held
            or (later and bool(RE._FAVOURITE.search(clause)) and not RE._ADDS.search(clause))
        )
        if RE._ADDS.search(clause) and not (RE._GAVE_WAY.search(clause) or RE._CORRECTED.search(new_body)):
            continue
        scope = {m.group(0).lower() for m in RE._SCOPE.finditer(clause)}
        # "下午只喝绿茶": a time of day of its own, not the choice in place of the old, unless the
        # old one is said to be over ("戒了，现在早上泡大麦茶")
        over = RE._LATER.search(new_body) or RE._GAVE_WAY.search(RE._ONLY.sub("", new_body))
        narrower = scope - {m.group(0).lower() for m in RE._SCOPE.finditer(old_body)}
        if narrower and not (over or RE._CORRECTED.search(new_body)):
            continue
        if any(_same(c, held) for c in new_named for held in old_named) and not gave_way:
            continue  # "还是喝咖啡，偶尔喝茶": the old choice is said again
        if gave_way or (later and (exclusive or RE._BEFORE.search(old_body))):
            return topic, sorted(old_named)[0], fresh[0]
    return None


def taste_now(message: str) -> list[str]:
    """Facts of a taste taken up, said without 我 and in no slot's words ("玩腻了，现在天天玩原神"):
    the clause with a choice of a topic, and the clause before when it says the old one gave way,
    so that a judge reads the change against a liking said before."""
    if RE._ASKED_OR_OTHERS.search(message):
        return []
    clauses = [c.strip() for c in RE._CLAUSE_END.split(message) if c.strip()]
    found = []
    for at, clause in enumerate(clauses):
        named = topics_of(clause)
        # a later-word alone only for a topic held one at a time ("以后都自由行"); "最近在追美剧" adds
        if not named or not (
            RE._TASTE_NOW.search(clause) or (RE._LATER.search(clause) and any(_TOPICS[t][1] for t in named))
        ):
            continue
        before = clauses[at - 1] if at else ""
        said = f"{before}，{clause}" if before and RE._GAVE_WAY.search(before) else clause
        found.append("用户" + said.removeprefix("我"))
    return found


def _same(a: str, b: str) -> bool:
    """One choice, one said shorter: "县二中" and "二中"."""
    return a == b or (min(len(a), len(b)) >= 2 and (a.endswith(b) or b.endswith(a)))


def _body(fact: str) -> str | None:
    """What a fact says of the user, or None when it is about someone else."""
    body = RE._USER.sub("", fact)  # "用户的老板…", "the user's wife …" are someone else's
    return None if RE._SOMEONE_ELSE.search(body) else body


def change_told(message: str, liking: str) -> str | None:
    """The clause of ``message`` that says one's taste gave way ("现在口味变了", "看腻了"), when the
    liking read from another clause ("爱看喜剧片") does not say so itself: the judge reads the new
    liking against the old one only with it. None when no such clause, or someone else's."""
    if RE._GAVE_WAY.search(liking) or RE._MORE_NOW.search(liking):
        return None  # "更喜欢…" says it gave way already, in words the judge reads as they stand
    if RE._SOMEONE_ELSE.search(message) or RE._QUESTION.search(message):
        return None
    for clause in (c.strip() for c in RE._CLAUSE_END.split(message)):
        if clause and clause not in liking and RE._GAVE_WAY.search(clause) and not topics_of(clause):
            return clause.removeprefix("我")
    return None


__all__ = ["change_told", "succeeds", "taste_now", "topics_of"]
