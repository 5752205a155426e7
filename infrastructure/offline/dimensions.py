"""Dimensions of how a user wants replies: which pole of each a preference takes.

The offline judge compares two preferences of one category by what they ask
for. "偏好简短的回复风格" and "Prefers detailed answers" sit on one dimension
(length) at opposite poles: the newer one replaces the older. "偏好正式的回复风格"
and "偏好简短的回复风格" sit on two different dimensions: both stay.

Each dimension has two poles, or (code and reply language) a value named in
the text. A pole word after a refusal (不要/别/少/avoid/no …) counts for the
other pole: "别用术语" asks for plain words, "no emoji" for plain text.
"""

from __future__ import annotations

import re
import unicodedata

# (dimension, ((pole, words), (pole, words))); the first pole's words are tried first,
# so a phrase that names both ("少用专业术语") is listed where it belongs.
_POLES: tuple[tuple[str, tuple[tuple[str, str], tuple[str, str]]], ...] = (
    (
        "length",
        (
            (
                "short",
                r"简短|简洁|精简|简明|简练|简单(?:点|些|一点|一些)|短(?:一?点|些|的)|(?<=太|过)短|言简意赅|三言两语|一两句|几句话|"
                r"\bbrief(?:er)?\b|\bshort(?:er)?\b|\bconcise\b|\bsuccinct\b|\bterse\b|\bto the point\b",
            ),
            (
                "long",
                r"详细|详尽|具体|展开|深入|细致|长(?:一?点|些|的|篇)|(?<=太|过)长|冗长|啰嗦|全面|\bdetailed\b|\bthorough\b|\bin[- ]depth\b|"
                r"\blong(?:er)?\b|\belaborate\b|\bcomprehensive\b|\bstep[- ]by[- ]step\b",
            ),
        ),
    ),
    (
        "formality",
        (
            ("formal", r"正式|严谨|书面|官方|礼貌|正经|\bformal\b|\bprofessional\b|\bpolite\b"),
            (
                "casual",
                r"随意|随便|口语|活泼|轻松|俏皮|幽默|搞笑|接地气|像朋友|网络用语|网络梗|流行语|\bcasual\b|\binformal\b|\brelaxed\b|\bchatty\b|"
                r"\bfriendly\b|\bplayful\b|\blaid[- ]back\b",
            ),
        ),
    ),
    (
        "emoji",
        (
            (
                "without",
                r"纯文字|纯文本|只要文字|不带表情|不要表情|不用表情|别(?:带|用|加)?表情|\bplain[- ]text\b|\btext[- ]only\b|"
                r"\bno emojis?\b|\bwithout emojis?\b",
            ),
            ("with", r"emoji|表情|颜文字|\bemojis?\b|\bemoticons?\b|\bsmileys?\b"),
        ),
    ),
    (
        "technicality",
        (
            (
                "plain",
                r"打比方|比喻|类比|大白话|通俗|说人话|浅显|(?:少|不|别|避免|不要)(?:用|说|讲|带)?(?:太多)?(?:专业)?(?:术语|行话)|"
                r"\banalog(?:y|ies)\b|\bplain (?:english|language|words)\b|\bsimple (?:words|terms|language)\b|"
                r"\blayman\b|\beli5\b|\b(?:no|avoid|without|less|fewer) (?:\w+ )?jargon\b|\bbeginner[- ]friendly\b",
            ),
            (
                "technical",
                r"专业(?:说法|术语|词汇|名词|的说法|一点|些)|术语|硬核|技术细节|行话|\btechnical\b|\bjargon\b|"
                r"\bproper terms?\b|\bexpert[- ]level\b",
            ),
        ),
    ),
    (
        "units",
        (
            ("metric", r"公制|公里|公斤|千克|摄氏|\bmetric\b|\bcelsius\b|\bkilomet|\bkilogram|\bkg\b|\bkm\b"),
            (
                "imperial",
                r"英制|英里|英尺|英寸|磅|华氏|\bimperial\b|\bfahrenheit\b|\bmiles?\b|\bfeet\b|\bpounds?\b|\binch(?:es)?\b|"
                r"\bus (?:customary )?units\b",
            ),
        ),
    ),
    (
        "directness",
        (
            ("direct", r"直接|直白|说重点|开门见山|\bdirect\b|\bblunt\b|\bstraight to the point\b"),
            ("gentle", r"委婉|温和|温柔|含蓄|\bgentle\b|\btactful\b|\bsoft(?:er)?\b|\bdiplomatic\b"),
        ),
    ),
    (
        "spelling",
        (
            ("american", r"\bamerican (?:english|spelling)|\bus (?:english|spelling)"),
            ("british", r"\bbritish (?:english|spelling)|\buk (?:english|spelling)"),
        ),
    ),
    (
        "platform",
        (
            ("windows", r"(?<![A-Za-z])(?:windows|win ?1[01]|pc)(?![A-Za-z])"),
            ("mac", r"(?<![A-Za-z])mac(?:os| ?book)?(?![A-Za-z])|苹果电脑"),
        ),
    ),
    (
        "layout",
        (
            ("structured", r"列表|表格|分点|分条|列点|要点|\bbullet(?: points?)?s?\b|\blists?\b|\btables?\b"),
            ("prose", r"段落|成段|整段|分段|一段话|一整段|\bparagraphs?\b|\bprose\b"),
        ),
    ),
    # examples in an answer, or none (code examples are examples too: a language for them is code_language)
    (
        "examples",
        (
            ("without", r"不(?:用|要|必|再)?举例|别(?:再)?举例|\b(?:no|without|skip the|drop the) examples?\b"),
            (
                "with",
                r"例子|示例|样例|范例|实例|举例|举个例|(?:附|带|给|贴|加)上?(?:点|些|一些)?(?:代码|源码)|"
                r"\bexamples?\b|\bsamples?\b|\bsnippets?\b|\bworked examples?\b|\b(?:include|add|attach|with) (?:some |the )?code\b",
            ),
        ),
    ),
    # what comes first in an answer: the conclusion, or the reasoning that leads to it
    (
        "order",
        (
            (
                "conclusion_first",
                r"先(?:说|给|讲|写|上)?结论|结论(?:放|写|说)?(?:在)?(?:前面|最前|开头)|"
                r"\b(?:conclusion|answer|bottom line) first\b|\blead with the (?:answer|conclusion)\b",
            ),
            (
                "reasoning_first",
                r"先(?:把|讲|说|写|给)?(?:推理|推导|思路|过程|分析|原因|依据)|(?:最后|后面)再?(?:给|说|讲|写)?结论|"
                r"结论(?:放|写)?(?:在)?(?:后面|最后)|\b(?:reasoning|working|steps) first\b|"
                r"\bshow (?:your|the) (?:work|reasoning) first\b",
            ),
        ),
    ),
    # two structured layouts, one in place of the other ("用表格" → "以后改成分点列出来")
    (
        "structure",
        (
            ("table", r"表格|\btables?\b"),
            ("list", r"列表|分点|分条|列点|要点|\bbullet(?: points?)?s?\b|\blists?\b"),
        ),
    ),
)

#: a refusal just before a pole word turns it to the other pole ("不要emoji", "no emojis", "don't give me
#: long answers"): a few characters, or three English words, may come between
_REFUSAL = re.compile(
    r"(?:不要|不用|不需要|不必|没必要|别|不希望|不想|少|无需|避免|不喜欢|讨厌|受不了|烦)\W{0,2}\S{0,4}$"
    r"|\b(?:no|not|avoid|without|don't|do not|less|fewer|hate|dislike|can't stand|stop|quit|skip)\b(?:\W+[\w'-]+){0,3}\W*$",
    re.IGNORECASE,
)
#: too much of a side asks for the other ("回复太长", "别太正式", "too long", "too many emojis"), refused or not
_EXCESS = re.compile(r"(?:太|过于|过分|过|\btoo(?: many| much)?|\boverly)\W?$", re.IGNORECASE)

_CODE_LANGUAGES = {
    "python": "python",
    "go": "go",
    "golang": "go",
    "java": "java",
    "javascript": "javascript",
    "js": "javascript",
    "typescript": "typescript",
    "ts": "typescript",
    "c++": "c++",
    "cpp": "c++",
    "c#": "c#",
    "rust": "rust",
    "ruby": "ruby",
    "php": "php",
    "swift": "swift",
    "kotlin": "kotlin",
    "scala": "scala",
    "matlab": "matlab",
    "bash": "shell",
    "shell": "shell",
    "sql": "sql",
    "lua": "lua",
    "dart": "dart",
    "perl": "perl",
    "haskell": "haskell",
    "elixir": "elixir",
    "r": "r",
    "c": "c",
}
_CODE_LANGUAGE = re.compile(
    r"(?<![A-Za-z+#])(?P<l>python|golang|go|java(?:script)?|js|typescript|ts|c\+\+|cpp|c#|rust|ruby|php|swift|kotlin|"
    r"scala|matlab|bash|shell|sql|lua|dart|perl|haskell|elixir|r|c)(?![A-Za-z+#])",
    re.IGNORECASE,
)
_CODE_CONTEXT = re.compile(
    r"代码|示例|例子|编程|脚本|写法|\bcode\b|\bexamples?\b|\bsnippets?\b|\bscripts?\b|\bprogramming\b", re.IGNORECASE
)
_REPLY_LANGUAGES = {
    "中文": "zh",
    "汉语": "zh",
    "普通话": "zh",
    "英文": "en",
    "英语": "en",
    "日语": "ja",
    "日文": "ja",
    "粤语": "yue",
    "chinese": "zh",
    "mandarin": "zh",
    "english": "en",
    "japanese": "ja",
    "french": "fr",
    "spanish": "es",
    "german": "de",
}
_REPLY_LANGUAGE = re.compile(
    r"中文|汉语|普通话|英文|英语|日语|日文|粤语|\b(?:chinese|mandarin|english|japanese|french|spanish|german)\b",
    re.IGNORECASE,
)


#: any other language, dialect or script to answer in, named as such: 用四川话, 用繁体字, 用拼音
_REPLY_WORDS = re.compile(r"(?<=用)(?!户)(?:[\u4e00-\u9fff]{1,3}(?<!用)(?:话|语|文)|简体字?|繁体字?|拼音)")


#: ``_POLES`` compiled once: ``dimensions`` reads every clause of a message that may ask
#: something of replies (issue 25: per clause, a string pattern is a look-up in ``re``'s cache)
_POLE_PATTERNS = tuple(
    (name, ((first, re.compile(first_words, re.IGNORECASE)), (second, re.compile(second_words, re.IGNORECASE))))
    for name, ((first, first_words), (second, second_words)) in _POLES
)
#: a pole's own words that refuse ("少说废话" asks for short, whatever refusal comes before)
_REFUSING_WORD = re.compile(r"(?:少|不|别|避免|不要)")
_ZH_WORD_LIMIT = re.compile(r"(?P<n>\d{2,4})\s*(?:个)?字(?:以内|左右|以下|之内)?")
_EN_WORD_LIMIT = re.compile(
    r"\b(?:under|within|below|less than|no more than|at most|max(?:imum)?(?: of)?) (?P<n>\d{2,4}) words\b", re.I
)
#: a figure of characters or words is a limit only next to a word that limits
_LIMITING = re.compile(r"控制|以内|之内|以下|左右|放宽|不超过|别超过|限制|缩短|压缩|字数|\bwords\b")
#: a language is the reply's only next to a word of replying or talking
_SPEAKING = re.compile(
    r"回复|回答|回我|答我|交流|沟通|说|讲|聊|\brepl(?:y|ies)|\brespond|\banswer|\btalk|\bwrite", re.IGNORECASE
)


def code_language(text: str) -> str | None:
    """The programming language a preference asks code examples in ("偏好用Rust写代码示例" → rust)."""
    text = unicodedata.normalize("NFKC", text or "")
    if not _CODE_CONTEXT.search(text):
        return None
    m = _CODE_LANGUAGE.search(text)
    return _CODE_LANGUAGES[m.group("l").lower()] if m else None


def dimensions(text: str) -> dict[str, str]:
    """{dimension: pole or value} for everything the preference text asks of replies."""
    text = unicodedata.normalize("NFKC", text or "")
    found: dict[str, str] = {}
    for name, ((first, first_words), (second, second_words)) in _POLE_PATTERNS:
        for pole, other, words in ((first, second, first_words), (second, first, second_words)):
            m = words.search(text)
            if m:
                before = text[: m.start()]
                refused = bool(_REFUSAL.search(before)) and not _REFUSING_WORD.match(m.group(0))
                found[name] = other if refused or _EXCESS.search(before) else pole
                break
    # how many characters an answer may run to: "控制在80字以内" → 80 ("放宽到200字左右")
    limit = _ZH_WORD_LIMIT.search(text) or _EN_WORD_LIMIT.search(text)
    if limit and _LIMITING.search(text):
        found["word_limit"] = limit.group("n")
    language = code_language(text)
    if language:
        m = _CODE_LANGUAGE.search(text)
        refused = m is not None and bool(_REFUSAL.search(text[: m.start()]))
        found["code_language"] = f"not {language}" if refused else language
    else:
        m = _REPLY_LANGUAGE.search(text) or _REPLY_WORDS.search(text)
        if m and _SPEAKING.search(text):
            language = _REPLY_LANGUAGES.get(m.group(0).lower(), m.group(0))
            found["reply_language"] = f"not {language}" if _REFUSAL.search(text[: m.start()]) else language
    return found


__all__ = ["code_language", "dimensions"]
