"""Reading a message the way the detector and the rule extractor both need: clauses and their kind.

A message is split into sentences (。！？.!? and new lines) and each sentence
into clauses (commas, semicolons and clause-joining conjunctions). Each clause
keeps the punctuation that ended it, the conjunction that opened it and the
number of its sentence, so the extractor can restate a sentence without
splitting what was said in one breath.

The helpers below classify a clause: small talk, a question, a question put
to the assistant, a statement about the speaker (first person, Chinese or
English) and an exchange with the listener ("我明白你的意思", "I'm sure you'll
manage") that says nothing about the speaker however many 我 it holds.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple


class Clause(NamedTuple):
    """One clause of a message and the punctuation that ended it ("" at the end)."""

    text: str
    terminator: str
    joiner: str = ""  # the conjunction split off before it ("但是", "and"), if any
    sentence: int = 0  # which sentence of the message it belongs to


def dialect(text: str) -> str:
    """Regional first person as the standard one: 俺 → 我, 咱家 → 我家 (咱们 stays "we")."""
    if not isinstance(text, str):
        return ""
    return text.replace("俺们", "我们").replace("俺", "我").replace("咱家", "我家")


#: a Han character (the basic block, extension A and the compatibility ideographs)
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: space that does not end a line: ASCII and ideographic spaces, no-break and thin spaces, and the
#: zero-width ones (a line or paragraph break still ends a sentence)
_INLINE_SPACE = r"[^\S\n\r\x0b\x0c\x1c-\x1f\x85\u2028\u2029]|[\u200b\u2060\ufeff\u180e]"
_SPACE_IN_HAN = re.compile(f"(?<=[{_HAN}])(?:{_INLINE_SPACE})+(?=[{_HAN}])")


def fold_cjk_spaces(text: str) -> str:
    """Chinese is written without spaces: a space of any kind between two Han characters (an ASCII
    space, the ideographic space U+3000, a no-break, thin or zero-width one) is dropped, so that it
    never splits a word or a value ("北 京" is 北京). Spaces next to Latin letters, digits or
    punctuation stay ("用 Python 写", "I live in Hangzhou"); a line break still ends a sentence."""
    if not isinstance(text, str):
        return ""
    return _SPACE_IN_HAN.sub("", text)


# A run of spaces is matched from its start only ("(?<!\s)\s+"): tried from every space of a long
# run, "\s*—" re-read the run once a space (issue 25: a message of spaces took seconds).
# Clause ends: CJK and ASCII punctuation; "." only before a space or the end,
# so "3.5" and "v1.2" stay whole; a long dash ("oops — it's Ivy") too.
# a full stop ends a clause, but not the one of a title or a saint ("St. Mary's", "Dr. Lee")
_CLAUSE_BREAK = re.compile(
    r"([，。；！？,;!?\n…~～]+|(?<!\bSt)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bJr)(?<!\bMt)\.(?=\s|$)|(?:(?<!\s)\s+)?[—–]+\s*)"
)
_SENTENCE_END = re.compile(r"[。！？!?.\n…]")
# Conjunctions that start a new clause. They carry no fact themselves.
# (not after a pronoun: "我可是个懒汉" is 我 + 可是 "indeed am")
_ZH_CONJUNCTIONS = re.compile(
    r"(?<![我你您他她它们])(但是|可是|不过(?![敏期关夜瘾])|而且|并且|另外|然后|所以|同时|还有就是)"
)
_EN_CONJUNCTIONS = re.compile(r"(?<!\s)\s+(but|and then|and|so)\s+(?=(?:i|i'm|i m|my|i've|i ve)\b)", re.IGNORECASE)


def _split_on(pattern: re.Pattern[str], text: str) -> list[tuple[str, str]]:
    """(joiner, part) pairs: the text cut at each conjunction, which opens the part after it."""
    pieces = pattern.split(text)
    parts = [("", pieces[0])]
    for i in range(1, len(pieces), 2):
        parts.append((pieces[i].strip(), pieces[i + 1]))
    return parts


def split_clauses(text: str) -> list[Clause]:
    """Split a message on punctuation and clause-joining conjunctions, keeping each terminator."""
    text = unicodedata.normalize("NFKC", text or "")
    pieces = _CLAUSE_BREAK.split(text)
    clauses: list[Clause] = []
    sentence = 0
    # split() alternates text, separator, text, separator, …
    for i in range(0, len(pieces), 2):
        body = pieces[i]
        terminator = pieces[i + 1].strip() if i + 1 < len(pieces) else ""
        parts = [
            (en_joiner or zh_joiner, zh_part)
            for en_joiner, en_part in _split_on(_EN_CONJUNCTIONS, body)
            for zh_joiner, zh_part in _split_on(_ZH_CONJUNCTIONS, en_part)
        ]
        kept = [(joiner, part.strip()) for joiner, part in parts if part.strip()]
        for j, (joiner, part) in enumerate(kept):
            clauses.append(Clause(part, terminator if j == len(kept) - 1 else "", joiner, sentence))
        if _SENTENCE_END.search(pieces[i + 1] if i + 1 < len(pieces) else ""):
            sentence += 1
    return clauses


# --------------------------------------------------------------------------
# Small talk and questions
# --------------------------------------------------------------------------

_SMALL_TALK = re.compile(
    r"(?:谢谢|多谢|感谢|谢啦|谢了|好的|好滴|好吧|好呀|好|嗯|恩|哦|噢|喔|哈|呵|嘿|嘻|"
    r"你好|您好|早上好|晚上好|下午好|中午好|早安|晚安|再见|拜拜|收到|明白|知道了|懂了|了解|行|可以|没问题|不客气|"
    r"对|是的|没错|棒|厉害|牛|辛苦了?|okay|ok|k|thanks|thankyou|thx|ty|hi|hello|hey|bye|"
    r"yes|yeah|yep|yup|no|nope|sure|cool|great|nice|wow|awesome|lol|ha|gotit|np|666|的|啦|呀|了|吧|啊|哇|耶)+"
)


def is_small_talk(text: str) -> bool:
    """True when nothing but greetings, thanks and acknowledgements is left (or nothing at all)."""
    # punctuation, emoji and spaces go, so "thank you!" folds to "thankyou"
    folded = re.sub(r"[\s\W_]+", "", unicodedata.normalize("NFKC", text or "").lower())
    return not folded or _SMALL_TALK.fullmatch(folded) is not None


# 呢 ends statements as often as questions ("我也挺喜欢下雨天呢"), so it asks only with a question word.
_QUESTION_END = re.compile(r"(?:吗|么|嘛|不)$")
_QUESTION_WORDS = re.compile(
    r"什么|为什么|为啥|怎么|怎样|咋|哪|谁|是不是|能不能|可不可|会不会|有没有|要不要|多大|多久|几[岁点个号]"
)
_EN_QUESTION_START = re.compile(
    r"^(?:what|why|how|where|when|who|which|whose|do|does|did|are|is|was|were|have|has|can|could|would|will|should|shall)\b",
    re.IGNORECASE,
)
_ADDRESSES_ASSISTANT = re.compile(
    r"^(?:请问|那|那么|所以)?\s*(?:你|您)|(?:你|您)(?:能|可以|会|知道|觉得|是|有|帮|给|说)"
)


_LATIN_LETTER = re.compile(r"[A-Za-z]")
_HAN_CHARACTER = re.compile(r"[\u3400-\u9fff]")


def is_english(text: str) -> bool:
    return bool(_LATIN_LETTER.search(text)) and not _HAN_CHARACTER.search(text)


def is_question(clause: Clause) -> bool:
    """A question of any kind: it asks, so it states no fact."""
    text = clause.text.strip()
    if clause.terminator and clause.terminator[0] in "?？":
        return True
    if is_english(text):
        return False
    if _QUESTION_END.search(text):
        return True
    # a question word asks when nothing first-person is stated ("你住哪"), or with a
    # questioning end ("你喜欢什么风格的呢"); "我打算买几个蛋挞" states a plan
    return bool(_QUESTION_WORDS.search(text)) and (
        text.endswith(("呢", "啊", "呀")) or text.startswith(("你", "您")) or "我" not in text
    )


def is_question_to_assistant(clause: Clause) -> bool:
    """A question whose subject is the assistant ("你能…吗？", "can you …?")."""
    if not is_question(clause):
        return False
    text = clause.text.strip()
    return bool(_ADDRESSES_ASSISTANT.search(text) or re.search(r"\byou\b", text, re.IGNORECASE))


# --------------------------------------------------------------------------
# Who a statement is about
# --------------------------------------------------------------------------

#: words that, right after 我, make the clause talk about the exchange, not the speaker
_ZH_EXCHANGE_VERBS = (
    r"知道|明白|懂|同意|理解|猜|祝|谢谢|感谢|建议|劝|尽量|马上|这就|说的|问你|告诉|跟你(?!一样)|和你(?!一样)|陪你|帮你|给你|送你|"
    r"看你|等你|想你|爱你|喜欢你|支持你|相信你|请你|答应|保证|承认|发现你|记得你|"
    r"试试|看看|去看看|考虑考虑|想想|记住|记下|会注意|会的|会努力|会加油|先走|先去|去忙|得走|该走|不太清楚|不清楚|不确定|"
    r"没想到|赞同|佩服|服了|羡慕你|期待|希望你|怕你|听你|随便|无所谓|都行|都可以|没意见"
)
_ZH_EXCHANGE = re.compile(r"我(?:也|就|还|都|真|是|可|倒)?(?:" + _ZH_EXCHANGE_VERBS + r")")
#: 我们 as speaker and listener talking about the chat itself ("我们聊点别的", "我们再聊五分钟")
_ZH_CHAT = re.compile(r"我们(?:俩|两个)?(?:再|来|就|先|一起|继续|随便|好好)?(?:聊|说说?话|说会|谈谈|谈(?!恋爱)|唠)")
_ZH_OPINION = re.compile(
    r"我(?:也|就|还|倒|真)?(?:觉得|认为|感觉|看|想)(?:你|您|他|她|它|这|那|应该|可以|不错|挺好|很好|也是)"
)
_ZH_SUGGESTION = re.compile(r"^(?:要不|咱们|咱|我们)(?:还是|一起|俩)?.*吧$|^(?:要不|咱们).*")
#: the first person as something the speaker is or has, not as an object ("送我", "给我")
_ZH_FIRST_PERSON = re.compile(
    r"(?:^|(?<![送给帮让叫跟和陪请问告教带找等对被把逗骂夸催约喊怪吓坑骗害惹疼宠接嫌])(?<!提醒|通知|邀请))我|我(?:的|家|们家)"
)


def zh_mentions_self(text: str) -> bool:
    """A Chinese clause in which the speaker talks about themself (我 as subject or owner)."""
    if not _ZH_FIRST_PERSON.search(text):
        return False
    if _ZH_SUGGESTION.search(text):
        return False
    stripped = _ZH_OPINION.sub("", _ZH_EXCHANGE.sub("", _ZH_CHAT.sub("", text)))
    return bool(_ZH_FIRST_PERSON.search(stripped))


_EN_SELF = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|i'll|my|mine|myself|me|we|we're|we've|our|us)\b|\bi (?:m|ve|d|ll)\b", re.IGNORECASE
)
#: first-person frames that comment on the exchange or on the listener
_EN_EXCHANGE = re.compile(
    r"\bi(?:'m| am| m)? (?:(?:so|really|just|totally|definitely|also) )*"
    r"(?:think|guess|hope(?! to\b)|bet|agree|know(?=\s+(?:that|what|how|why|where|when|who|it|you|right|exactly|the feeling)\b|\s*$)|understand|appreciate|mean|see|believe|imagine|wonder|wish you|"
    r"can't wait|cannot wait|can imagine|can tell|would love|'d love|d love|love that|love how|like that|like how|"
    r"glad|sure|sorry|happy for|proud of|excited for|here for|with you|curious|interested to|"
    r"recommend|suggest|advise|promise|remember that|heard (?:of|about)|can't remember|don't know)\b[^.!?]*"
    r"|\b(?:thank you|thanks|let me|tell me|give me|show me|remind me|means a lot to me|for me to)\b"
    r"|\bi \w+ (?:you|your)\b",
    re.IGNORECASE,
)


#: English drops the subject too: "Still fixing up my garage.", "Been playing it for a month.",
#: and in narration "Went hiking last weekend.", "Finally got a new bike." (a past verb opening a statement)
_EN_PAST_NARRATION = (
    r"went|took|got(?! (?:it|you|ya|any|a minute|a sec)\b)|bought|started|finished|visited|tried|joined|adopted|moved|"
    r"spent|met|made(?! (?:my|me)\b)|signed up|picked up|booked|baked|cooked|ran|hiked|painted|built|wrote|learned|learnt|"
    r"quit|graduated|travel(?:l)?ed|volunteered|decided|found|lost|won|saw|watched|played|had"
)
EN_ELLIPSIS = (
    r"^(?:(?:still|just|been|currently|finally|recently|also) )+\w+ing\b"
    r"|^(?:(?:just|finally|recently|also|then|actually) )*(?:" + _EN_PAST_NARRATION + r")\b"
)
_EN_ELLIPSIS = re.compile(EN_ELLIPSIS, re.IGNORECASE)


def strip_exchange(text: str) -> str:
    """The clause without first-person frames that only comment on the exchange."""
    if is_english(text):
        return _EN_EXCHANGE.sub(" ", text.replace("’", "'"))
    return _ZH_OPINION.sub("", _ZH_EXCHANGE.sub("", _ZH_CHAT.sub("", text)))


def en_mentions_self(text: str) -> bool:
    """An English clause in which the speaker says something about themself."""
    text = text.replace("’", "'")
    if _EN_ELLIPSIS.search(text):
        return True
    if not _EN_SELF.search(text):
        return False
    return bool(_EN_SELF.search(_EN_EXCHANGE.sub(" ", text)))


__all__ = [
    "EN_ELLIPSIS",
    "Clause",
    "dialect",
    "en_mentions_self",
    "fold_cjk_spaces",
    "is_english",
    "is_question",
    "is_question_to_assistant",
    "is_small_talk",
    "split_clauses",
    "strip_exchange",
    "zh_mentions_self",
]


# --------------------------------------------------------------------------
# Standing requests: how the assistant should answer from now on
# --------------------------------------------------------------------------

#: "以后…", "从现在起…", "每次…": a request that holds from now on, not for one answer
_STANDING = r"以后|往后|今后|从现在(?:开始|起)|从今天(?:开始|起)|之后都|接下来|每次|默认|一律|统一"
#: "（算了，）还是用简体吧": going back on an earlier request
_REVERT = r"(?:算了[，, ]*)?还是(?=用|写|叫|推荐|说|讲|回|给|发|列|别|不要)"
#: "给我推荐菜谱的时候…", "称呼我的时候…": the occasion a request is about
_OCCASION = r"(?:给我|跟我|和我|帮我|称呼我|叫我|回答|回复|推荐|写|讲|说)[^，,。]{0,8}?的时候"
_REQUEST_VERB = r"推荐|推|叫我|称呼我|写成|改成|换成|写|用|回复|回答|讲|说|发|列|配|加|带|给我|跟我|多|少|别|不要"
_REQUEST_END = r"(?:吧|就行|就好|就可以|就成|好了|呗|哈|嘛)[!！。~～]*$"
_STANDING_REQUEST = re.compile(
    r"^(?:请|麻烦|劳驾)?(?:(?:"
    + _STANDING
    + r")[^，,。]{0,6}?|"
    + _REVERT
    + r"|"
    + _OCCASION
    + r")(?:都|就|再|也)?(?:请)?"
    r"(?:直接)?(?P<verb>" + _REQUEST_VERB + r")"
)


def standing_request(text: str) -> str | None:
    """What a Chinese request for all later answers asks, as said ("以后推荐清淡的吧" → "推荐清淡的").

    A clause that opens with "from now on" (以后, 往后, 每次 …), with going
    back on a request (还是…吧), or with the occasion ("推荐菜谱的时候"),
    goes on with what to do (推荐, 用, 叫我, 写成 …), and asks: it ends like a
    request (吧, 就行, 就好) or is said to the assistant (给我, 跟我, 叫我).
    """
    if not isinstance(text, str) or is_english(text):
        return None
    said = text.strip().strip("。！!~～ ")
    if not said or re.match(r"^(?:我|他|她|它|我们|他们|她们)(?!的时候)", said):
        return None
    m = _STANDING_REQUEST.match(said)
    if m is None:
        return None
    rest = re.sub(_REQUEST_END, "", said[m.end() :])
    if len(re.sub(r"[^\w]", "", rest)) < 1 or re.match(
        r"^(?:再说|再看|再聊|再讲)", said[m.start("verb") - 1 : m.end() + 1]
    ):
        return None  # "以后再说吧": putting something off, not a request
    asks = re.search(_REQUEST_END, said) or re.search(r"给我|跟我|和我|叫我|称呼我|回复|回答", said)
    if not asks:
        return None
    content = re.sub(r"^(?:请|麻烦|劳驾)?(?:" + _STANDING + r")(?:都|就|再|也)?", "", said)
    content = re.sub(r"^(?:算了[，, ]*)?还是|^(?:都|就|再|也|请)+", "", content)
    content = re.sub(r"(?:吧|就行|就好|就可以|就成|好了|呗|哈|嘛|了)+$", "", content)
    return content or None


#: "给我推荐菜谱多来点川菜", "推歌的时候多推点民谣": what to recommend, asked for every time
_ASKS_TO_RECOMMEND = re.compile(
    r"推荐?(?:歌曲|歌|音乐|电影|片子|电视剧|剧|书|菜谱|食谱|菜|游戏|餐厅)(?:的时候|时)?[，,]?(?:都|多|就|只|还是)?(?:给我)?(?:推|来)(?:荐)?(?:点|些|一些)?[\u4e00-\u9fffA-Za-z]{2}"
)


def asks_to_recommend(text: str) -> bool:
    """A request about what to recommend of a kind (a standing preference, not a one-off question)."""
    return isinstance(text, str) and not is_english(text) and bool(_ASKS_TO_RECOMMEND.search(text))
