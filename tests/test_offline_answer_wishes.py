"""Wishes about how the assistant should answer are preferences (issue 24, finding 5), invented sentences.

A wish or request marker, the answers (or what only an answer holds) and a side of one dimension of
answers (length, format, language, examples, tone, detail …) make a preference of the spec's
categories, in both languages, saying the side preferred however the wish was put. Near-misses
make none: someone else's answers or wishes, a question to the assistant, one task asked now, a
wish about something that is no answer.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.offline import RuleExtractor, SignalDetector
from factledger.infrastructure.offline.rules_common import INFERRED_PREF_STRENGTH, PREF_STRENGTH, STRONG_PREF_STRENGTH


def preferences(extractor: RuleExtractor, message: str) -> list[tuple[str, str]]:
    return [(p.text, p.category) for p in extractor.extract(message).preferences]


@pytest.mark.parametrize(
    ("message", "text", "category"),
    [
        # length: said as a dislike, a refusal, an excess, a polite question for later answers
        ("我不喜欢回复太长", "偏好简短的回复风格", "communication_style"),
        ("不要给我太长的回复", "偏好简短的回复风格", "communication_style"),
        ("以后回答别太长", "偏好简短的回复风格", "communication_style"),
        ("你能不能以后回答短一点？", "偏好简短的回复风格", "communication_style"),
        ("我想要更详细的解释", "偏好详细的回复风格", "communication_style"),
        ("I'd like shorter answers", "Prefers short answers", "communication_style"),
        ("don't give me long answers", "Prefers short answers", "communication_style"),
        ("I hate it when answers are too long", "Prefers short answers", "communication_style"),
        ("give me detailed answers from now on", "Prefers detailed answers", "communication_style"),
        # examples, code examples, none
        ("希望回答时多给代码示例", "偏好回答时多给代码示例", "format"),
        ("多给例子", "偏好回答时多举例子", "format"),
        ("解释的时候别举例子了", "偏好回答时不举例子", "format"),
        ("I prefer answers with code examples", "Prefers answers with code examples", "format"),
        ("give me more examples when you explain", "Prefers answers with examples", "format"),
        ("no examples in your answers please", "Prefers answers without examples", "format"),
        # format
        ("回复的时候多用表格", "偏好用表格的形式回复", "format"),
        ("少用emoji", "偏好纯文字的回复", "format"),
        ("please use tables in your answers", "Prefers tables", "format"),
        ("no more bullet points please", "Prefers paragraphs", "format"),  # a list refused is no table
        ("Could you always use fewer emojis?", "Prefers plain-text replies", "format"),
        # language and words
        ("请用中文回答", "偏好用中文回复", "language"),
        ("别用英文回我", "不希望用英文回复", "language"),
        ("能不能少用术语", "偏好少用专业术语", "language"),
        ("please answer in English", "Prefers replies in English", "language"),
        # tone
        ("希望回复正式一点", "偏好正式的回复风格", "communication_style"),
        ("回答的时候语气别太正式", "偏好随意、口语化的回复风格", "communication_style"),
        ("希望你说话温柔一点", "偏好委婉温和的回复风格", "communication_style"),
        ("Keep your replies formal", "Prefers a formal tone", "communication_style"),
        # what comes first, how many words, code attached, a complaint of too much
        ("以后回答先说结论", "偏好先说结论、再解释的回答顺序", "communication_style"),
        ("keep answers under 100 words", "Prefers answers within 100 words", "communication_style"),
        ("能不能每次回答都附上代码", "偏好回答时多给代码示例", "format"),
        ("I'd appreciate more code samples", "Prefers answers with code examples", "format"),
        ("Your answers are way too long", "Prefers short answers", "communication_style"),
        ("I want you to reply in Spanish", "Prefers replies in Spanish", "language"),
    ],
)
def test_a_wish_about_answers_is_a_preference_of_its_side(
    extractor: RuleExtractor, message: str, text: str, category: str
) -> None:
    extraction = extractor.extract(message)
    assert [(p.text, p.category) for p in extraction.preferences] == [(text, category)]
    assert not extraction.facts  # how the user wants answers is no fact about the user
    signals = SignalDetector().detect(message)
    assert signals["has_pref_signal"], signals  # and it reaches any extractor


@pytest.mark.parametrize(
    "message",
    [
        # someone else's answers, or someone else's wish
        "我老板不喜欢回复太长",
        "老师的讲解太长了",
        "老师希望我们多举例子",
        "他说话太直接了",
        "My boss doesn't like long answers",
        "His answers are too long",
        # a question to the assistant, one task asked now
        "你能不能给我写段代码？",
        "你为什么回答这么长？",
        "给我详细解释一下这段代码",
        "Can you give me a code example?",
        "Why are your answers so long?",
        "Give me a detailed explanation of photosynthesis",
        "Can you make this shorter?",
        "再简单解释一遍",
        # a wish about something that is no answer
        "希望明天不下雨",
        "希望假期长一点",
        "我希望女儿考上大学",
        "我想多举几个例子给学生",
        "我喜欢短发",
        "I hope it doesn't rain tomorrow",
        "I'd like a long holiday",
        "I like English food",
        "The movie was too long",
        "My boss's answers are too long",
        "I'd love to see some examples of your paintings",  # examples of something, not in answers
        "I want more examples for my students",
    ],
)
def test_near_misses_are_no_preference_about_answers(extractor: RuleExtractor, message: str) -> None:
    assert [p for p in extractor.extract(message).preferences if p.category != "other"] == []


@pytest.mark.parametrize(
    ("message", "strength"),
    [
        ("希望回答时多给代码示例", PREF_STRENGTH),  # said as a wish
        ("I hate it when answers are too long", PREF_STRENGTH),
        ("不要给我太长的回复", INFERRED_PREF_STRENGTH),  # asked: the spec's band for what one does
        ("please keep it short", INFERRED_PREF_STRENGTH),
        ("回答的时候千万别用表情", STRONG_PREF_STRENGTH),  # strongly worded
        ("I really want shorter answers", STRONG_PREF_STRENGTH),
    ],
)
def test_a_wish_has_the_strength_of_how_it_was_put(extractor: RuleExtractor, message: str, strength: float) -> None:
    assert [p.strength for p in extractor.extract(message).preferences] == [strength]


@pytest.mark.parametrize(
    ("messages", "now", "gone"),
    [
        (["我不喜欢回复太长", "以后回答详细一点吧"], "偏好详细的回复风格", "偏好简短的回复风格"),
        (["希望回答时多给代码示例", "算了，别举例子了"], "偏好回答时不举例子", "偏好回答时多给代码示例"),
        (
            ["I'd like shorter answers", "actually, give me detailed answers from now on"],
            "Prefers detailed answers",
            "Prefers short answers",
        ),
    ],
)
def test_the_other_side_of_a_wish_replaces_it(messages: list[str], now: str, gone: str, tmp_path: Path) -> None:
    ledger = open_ledger(
        Settings(home=tmp_path, backend="memory", schema=f"u{uuid.uuid4().hex[:10]}"), warn_if_offline=False
    )
    try:
        for n, message in enumerate(messages):
            ledger.ingest("u1", message, session_id="s", message_id=f"m{n}")
        memory = ledger.ledger.find_memory("u1")
        assert memory is not None
        active = [p.text for p in memory.all_preferences()]
        assert now in active and gone not in active, active
        assert not memory.active_facts()
    finally:
        ledger.close()
