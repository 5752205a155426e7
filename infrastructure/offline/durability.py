"""Whether a statement says anything durable about the user, or only how the moment feels.

A memory is worth keeping when it can still be true, and of use, later. Two kinds of statement
the user makes in conversation are neither (issue 26: a tenth of LoCoMo's memories were such):

* **a mood of the moment**: a state of feeling said with a copula (is, am, feel, feeling, 好, 很)
  and nothing it is about: no object ("excited *about the new job*", "怕*狗*"), no topic, no time
  span that makes it a condition ("*for months*", "*一直*", "lately"). "I'm so excited",
  "The user is feeling confident", "好开心", "累死了", "用户心情不错".
* **a reaction to the chat**: a statement whose only content is a word of feeling, agreeing or a
  light verb and a pronoun that points back into the conversation: "I could not agree more",
  "I got this", "I loved it", "It really inspired me", "I'll do that", "Makes me feel connected".

Near misses that stay memories, and why:

* "I'm allergic to peanuts", "I'm a nurse", "I'm unemployed": a condition, a noun, a status, not a
  feeling (allergic, unemployed are not words of feeling).
* "I've been feeling depressed for months", "我最近一直很焦虑": a feeling with a time span is a
  condition of health the user may want remembered (an assistant should know it); kept.
* "I'm excited about my new job", "I'm nervous about the exam tomorrow", "我怕狗": the feeling has
  an object, which names something of the user's life (the job, the exam, dogs); kept.
* "I love creating art": a liking with an object; kept.

A third kind, **a pointer into the chat**: a statement whose only content beyond the subject and
its verb is a pronoun or a demonstrative that points at something said or shown in the
conversation (it, them, one, some, here, there, "this pic", "that one"): "I drew it", "I was in
it", "I'm loving it", "I can look some up", "I love this series". Who reads the memory later cannot
know what it was. Near misses, and why:

* "I drew a dragon", "I love this series about dragons": the object, or what follows the
  demonstrative, says what the thing is; kept.
* "I quit it last year", "I took this pic in Paris": a time or a place of the user's life is said,
  so the statement dates or places an event of theirs; kept (the pointer stays unread).
* "I love it here", "I grew up there": here and there point into the chat as much as "it" does (the
  place is not named), so nothing is kept; a named place ("I grew up in Ohio") is kept.
* "I have two", "I'm one of them": a number is content ("two"); "one of them" is a pointer.

The same kind on the subject's side: "They're my escape from reality", "The pic takes me back",
"Reminds me being kind matters" (the subject left out), "I'm a huge fan" (of what, the chat said).
A name, a number, a time or a clause of the user's own keeps it ("They're my grandparents, Rosa and
Luis", "That photo was from a gig I went to"); an empty "it" ("It's been a year since …") is no
pointer. A fact that replaces a known one keeps its pointer: it points at that fact ("stopped doing
that").

Read on the restated fact ("The user …", "用户…"), so it applies to whatever rule produced it.
"""

from __future__ import annotations

import functools
import re

from factledger.infrastructure.offline.rule_data import rules

_DATA = rules("durability")
RE = _DATA.patterns()

# -- English ------------------------------------------------------------------------------------

_EN_EMPTY = frozenset(_DATA.words("_EN_EMPTY"))


def _en_only_points(said: str) -> bool:
    """A statement whose subject or object only points into the chat ("The user drew it", "They're
    the user's escape", "Reminds the user being kind matters")."""
    if _en_points_into_the_chat(said):
        return True
    elided = RE._EN_ELIDED_SUBJECT.match(said)
    if elided and not RE._EN_NAMES_SOMETHING.search(elided.group("rest")) and not RE._EN_NAMED.search(said[1:]):
        return True  # "Reminds the user being kind matters": what reminds, the chat said
    # "They're the user's escape from reality": what "they" are, the chat knew
    return bool(RE._EN_POINTER_SUBJECT.match(said)) and not RE._EN_NAMES_SOMETHING.search(said[1:])


def _en_momentary(text: str, resolved: bool) -> bool:
    said = re.sub(r"[.!?…]+$", "", text.strip())
    if RE._EN_ASKS_LISTENER.match(said) or RE._EN_SCENE_ALONE.match(said):
        return True
    said = RE._VOCATIVE.sub("", said)
    said = RE._EN_RESOLVE.sub(" ", said)
    if RE._EN_SPAN.search(said):
        return False
    if not resolved and _en_only_points(said):
        return True
    if not re.search(r"\bthe user\b", said, re.IGNORECASE):
        return False
    # every word is empty of content or a word of feeling: "The user is so excited",
    # "The user could not agree more", "It really inspired the user", "The user got this"
    rest = RE._EN_FEELINGS.sub(" ", said.lower())
    words = [w for w in RE._EN_WORD.findall(rest) if w not in _EN_EMPTY]
    # "It's special to the user", "Here's the user's workout plan", "Their support keeps the user
    # motivated": said of something that lives in the conversation (a photo, a thing just named),
    # with too little of its own to be understood later
    if RE._DEICTIC.match(said):
        return len(words) <= 2
    return not words


_EN_FILLER = frozenset(_DATA.words("_EN_FILLER"))


def _en_points_into_the_chat(said: str) -> bool:
    """ "The user drew it", "The user can look some up", "The user loves this series": nothing but a
    verb and a pointer into the conversation after "the user"."""
    m = RE._EN_OPENED_USER.match(said)
    if m is None:
        return False
    words = [w for w in RE._EN_WORD.findall(m.group("rest").lower()) if w not in _EN_FILLER]
    return bool(words) and bool(RE._EN_ONLY_POINTER.match(" ".join(words)))


# -- Chinese ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def is_momentary(fact: str, names_a_known_fact: bool = False) -> bool:
    """True when ``fact`` (restated: "The user …", "用户…") says only a mood of the moment or a
    reaction to the chat: nothing durable about the user to remember.

    ``names_a_known_fact``: the fact replaces one already known ("The user stopped doing that" for
    "The user swims laps"), so what its pointer points at is known, and a pointer is kept."""
    text = fact.strip()
    if re.search(r"[\u4e00-\u9fff]", text):
        return bool(RE._ZH_MOOD.match(text))
    return _en_momentary(text, names_a_known_fact)
