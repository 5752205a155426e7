"""Whether a statement says anything durable about the user, or only how the moment feels.

A memory is worth keeping when it can still be true, and of use, later. Three kinds of statement
the user makes in conversation are neither (issue 26: a tenth of LoCoMo's memories were such): **a
mood of the moment** (a feeling and nothing it is about: "I'm so excited", "好开心", "累死了"), **a
reaction to the chat** (a word of feeling, agreeing or a light verb and a pronoun that points back
into the conversation: "I could not agree more", "I got this") and **a pointer into the chat** (a
pronoun or demonstrative for something said or shown there: "I drew it", "I love this series"), which
who reads the memory later cannot know. A feeling with an object or a time span, a condition, a
name, a number, a time or a place of the user's life keeps a statement: each kind and its near
misses, with why, are told at the head of rules/durability.toml.

Read on the restated fact ("The user …", "用户…"), so it applies to whatever rule produced it.
"""

from __future__ import annotations

import functools

from factledger.infrastructure.offline.rule_data import rules

_DATA = rules("durability")
RE = _DATA.patterns()

_EN_EMPTY = frozenset(_DATA.words("_EN_EMPTY"))
_EN_FILLER = frozenset(_DATA.words("_EN_FILLER"))


@functools.lru_cache(maxsize=4096)
def is_momentary(fact: str, names_a_known_fact: bool = False) -> bool:
    """True when ``fact`` (restated: "The user …", "用户…") says only a mood of the moment or a
    reaction to the chat: nothing durable about the user to remember.

    ``names_a_known_fact``: the fact replaces one already known ("The user stopped doing that" for
    "The user swims laps"), so what its pointer points at is known, and a pointer is kept."""
    text = fact.strip()
    if RE._HAN.search(text):
        return bool(RE._ZH_MOOD.match(text))
    said = RE._EN_END_PUNCTUATION.sub("", text)
    if RE._EN_ASKS_LISTENER.match(said) or RE._EN_SCENE_ALONE.match(said):
        return True
    said = RE._VOCATIVE.sub("", said)
    said = RE._EN_RESOLVE.sub(" ", said)
    if RE._EN_SPAN.search(said):
        return False
    if not names_a_known_fact and _en_only_points(said):
        return True
    if not RE._EN_THE_USER.search(said):
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


def _en_only_points(said: str) -> bool:
    """A statement whose subject or object only points into the chat ("The user drew it", "They're
    the user's escape", "Reminds the user being kind matters")."""
    opened = RE._EN_OPENED_USER.match(said)
    if opened:  # "The user can look some up": nothing but a verb and a pointer after "the user"
        words = [w for w in RE._EN_WORD.findall(opened.group("rest").lower()) if w not in _EN_FILLER]
        if words and RE._EN_ONLY_POINTER.match(" ".join(words)):
            return True
    elided = RE._EN_ELIDED_SUBJECT.match(said)
    if elided and not RE._EN_NAMES_SOMETHING.search(elided.group("rest")) and not RE._EN_NAMED.search(said[1:]):
        return True  # "Reminds the user being kind matters": what reminds, the chat said
    # "They're the user's escape from reality": what "they" are, the chat knew
    return bool(RE._EN_POINTER_SUBJECT.match(said)) and not RE._EN_NAMES_SOMETHING.search(said[1:])
