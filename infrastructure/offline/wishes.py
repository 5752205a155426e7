"""Wishes about how the assistant should answer: the spec's preferences, read in either language.

How the user wants to be answered is what the spec's preferences are for
(communication_style, format, language …). A clause is such a wish when it
holds three things:

* a word of wishing or asking (希望, 想要, 请, 别, 不要, 少, 多给, 能不能, 以后 …;
  I'd like, please, don't, no more, keep it, prefer …) or a liking said of
  answers (不喜欢回复太长, I hate long answers);
* the answers themselves (回答, 回复, 解释, 你说 …; answers, replies, explain,
  you …) or what only an answer holds (例子, 代码示例, 表格, 术语, emoji;
  examples, bullet points, jargon), asked of the assistant;
* a side of one dimension of answers (``dimensions``: length, layout, reply
  language, examples, formality, directness, technicality, order …).

It is no wish about answers when it is a question (save a polite request for
all later answers: "能不能以后回答短一点？"), when someone else is its subject
or owns the answers (我老板不喜欢回复太长, my boss wants shorter answers), when
it asks one thing now (给我详细解释一下这段代码, give me a detailed explanation
of X), or when what is wished is no answer (希望明天不下雨, I'd like a long
holiday). The preference says the side preferred, however the wish was put
("不要给我太长的回复" → 偏好简短的回复风格), in the words the other reply rules
use, so the judge sees two wishes on one dimension as one that changed.
"""

from __future__ import annotations

import re

from factledger.infrastructure.offline.clauses import Clause, is_english, is_question
from factledger.infrastructure.offline.dimensions import dimensions
from factledger.infrastructure.offline.rules_common import _Item, _pref, named_rule
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN

# -- what makes a clause a wish about answers --------------------------------------------------

_ZH_WISH = re.compile(
    r"希望|想要|想让|想|要(?!是|不)|请|麻烦|劳驾|别|不要|不用|不需要|不必|无需|少|多|太|过于|能不能|能否|可不可以|可以|以后|今后|往后|"
    r"之后|下次|每次|尽量|最好|记得|务必|一定|千万|喜欢|讨厌|受不了|烦|偏好|倾向|就行|就好|即可|(?:点|些)$"
)
_EN_WISH = re.compile(
    r"\b(?:i'd like|i would like|i want|i'd prefer|i prefer|i'd rather|i would rather|i'd appreciate|i would appreciate|"
    r"i'd love|i would love|should|too|overly|please|pls|don't|do not|no more|"
    r"stop|avoid|keep|make|give me|use|can you|could you|would you|will you|from now on|going forward|in (?:the )?future|"
    r"always|never|less|more|fewer|i like|i love|i hate|i dislike|i can't stand|no need|skip|drop|stick to)\b",
    re.IGNORECASE,
)
# the answers, or the assistant answering
_ZH_ANSWERS = re.compile(
    r"回答|回复|答复|答案|解释|讲解|说明|回我|答我|(?:你|您)(?:的)?(?:回|答|说|讲|写|解释|用)|(?:跟|和|对|给)我(?:说|讲|聊|解释|写|举|列|回)|"
    r"说话|讲话|措辞|语气|口吻|输出"
)
_EN_ANSWERS = re.compile(
    r"\b(?:answers?|answering|repl(?:y|ies|ying)|respon(?:d|ding|ses?)|explanations?|explain(?:ing)?|tone|wording)\b"
    r"|^(?:please |pls )?(?:keep|make) (?:it|things)\b|\byou(?: to)? (?:\w+ )?(?:keep|make|be|use|give|write|talk|speak)\b",
    re.IGNORECASE,
)
# what only an answer to the user holds
_ZH_ANSWER_PARTS = re.compile(
    r"例子|示例|样例|范例|举例|代码|表格|列表|要点|分点|分条|段落|emoji|表情|颜文字|术语|markdown|篇幅|字数|结论", re.I
)
_EN_ANSWER_PARTS = re.compile(
    r"\b(?:examples?|code|snippets?|samples?|bullet(?:ed)?[- ]?points?|bullets|lists?|tables?|emojis?|jargon|markdown|"
    r"paragraphs?|prose|conclusion)\b",
    re.IGNORECASE,
)
# the clause opens with the request itself: a wish of the speaker's, however short
_ZH_IMPERATIVE = re.compile(
    r"^(?:以后|今后|往后|之后|下次|每次)?(?:请|麻烦|多|少|别|不要|不用|尽量|记得|务必|千万|最好|能不能|可不可以|给我|用)"
)
_EN_IMPERATIVE = re.compile(
    r"^(?:(?:and|so|also|oh|ok|okay|just)[, ]+)*(?:please |pls )?(?:give|use|keep|make|stop|avoid|skip|drop|add|include|"
    r"show|no more|more|less|fewer|don't|do not|stick to|write|answer|reply|respond|explain)\b",
    re.IGNORECASE,
)
# for all later answers, not one
_ZH_STANDING = re.compile(r"以后|今后|往后|之后|下次|每次|总是|一直|平时|从现在|回答时|回复时|的时候|都")
_EN_STANDING = re.compile(
    r"\b(?:from now on|going forward|in (?:the )?future|always|never|every time|whenever|in your (?:answers|replies|responses)|"
    r"when you (?:answer|reply|respond|explain|write))\b",
    re.IGNORECASE,
)
# asked politely, as a question
_ZH_POLITE = re.compile(r"能不能|能否|可不可以|可以|能(?:不能)?.*吗|麻烦")
_EN_POLITE = re.compile(r"^(?:can|could|would|will) you\b|\bcan you\b|\bcould you\b", re.IGNORECASE)
# a manner asked for in the question itself ("能不能少用术语", "could you use fewer emojis")
_ZH_MANNER = re.compile(r"少|多|别|不要|太|(?:一)?(?:点|些)")
_EN_MANNER = re.compile(r"\b(?:less|more|fewer|shorter|longer|too|no|without)\b", re.IGNORECASE)
# one thing asked for now: "解释一下这段代码", "a detailed explanation of X"
_ZH_ONE_TASK = re.compile(r"一下|这(?:个|段|道|篇|份|次|题)|那(?:个|段|道|篇|份)|帮我|再.{0,4}(?:一遍|一次)|重新")
_EN_ONE_TASK = re.compile(
    r"\b(?:explanation|answer|reply|examples?|summary|list|table|overview|breakdown)s? (?:of|about|on)\b"
    r"|\b(?:an?|this|that|the) (?:[\w-]+ ){0,2}(?:explanation|answer|reply|example|summary|list|table|overview|breakdown) for\b"
    r"|\b(?:this|that) (?:one|question|problem|code|time)\b|\bagain\b"
    r"|\b(?:make|rewrite|shorten|redo|fix|translate|summari[sz]e|expand) (?:this|that)\b",
    re.IGNORECASE,
)
# someone else's answers, or someone else wishing: not the user's preference
_ZH_SOMEONE = re.compile(
    r"^(?:我的?)?(?:" + ZH_ROLE_PATTERN + r"|老师|他们|她们|他|她|别人|人家|大家)|"
    r"(?<![你您])(?:" + ZH_ROLE_PATTERN + r"|老师|他|她|别人)的(?:回答|回复|答复|解释|讲解)"
)
_EN_SOMEONE = re.compile(
    r"^(?:(?:and|so|but|also|oh)[, ]+)*(?:(?:my|our|his|her|their) (?:"
    + EN_ROLE_PATTERN
    + r"|teacher|professor|tutor|team|kids?)\b"
    r"|(?:he|she|they|people|everyone)\b)|\b(?:his|her|their|[A-Z][a-z]+'s) (?:answers|replies|responses|explanations)\b",
    re.IGNORECASE,
)

# what is wished for someone else: "我想多举几个例子给学生", "more examples for my students"
_FOR_SOMEONE = re.compile(
    r"给(?!我)(?:"
    + ZH_ROLE_PATTERN
    + r"|学生|孩子们|大家|他|她|他们)|\bfor (?:my|our|his|her|their) (?:"
    + EN_ROLE_PATTERN
    + r"|students|kids|class|team)\b",
    re.IGNORECASE,
)

# -- what the preference says, by dimension and side ---------------------------------------------

#: dimensions in the order a wish naming several is read by (the first found is the preference)
_ORDER = (
    "reply_language",
    "code_language",
    "word_limit",
    "examples",
    "layout",
    "emoji",
    "technicality",
    "order",
    "units",
    "spelling",
    "formality",
    "directness",
    "length",
)
_ZH_SAYS: dict[tuple[str, str], tuple[str, str]] = {
    ("length", "short"): ("偏好简短的回复风格", "communication_style"),
    ("length", "long"): ("偏好详细的回复风格", "communication_style"),
    ("directness", "direct"): ("偏好简洁直接的回复风格", "communication_style"),
    ("directness", "gentle"): ("偏好委婉温和的回复风格", "communication_style"),
    ("formality", "formal"): ("偏好正式的回复风格", "communication_style"),
    ("formality", "casual"): ("偏好随意、口语化的回复风格", "communication_style"),
    ("emoji", "without"): ("偏好纯文字的回复", "format"),
    ("emoji", "with"): ("偏好回复里带emoji表情", "format"),
    ("technicality", "plain"): ("偏好通俗易懂、多打比方的讲解", "language"),
    ("technicality", "technical"): ("偏好使用专业术语的讲解", "language"),
    ("layout", "prose"): ("偏好成段落的回复格式", "format"),
    ("examples", "with"): ("偏好回答时多举例子", "format"),
    ("examples", "without"): ("偏好回答时不举例子", "format"),
    ("order", "conclusion_first"): ("偏好先说结论、再解释的回答顺序", "communication_style"),
    ("order", "reasoning_first"): ("偏好先讲推理过程、最后给结论的回答顺序", "communication_style"),
    ("units", "metric"): ("偏好使用公制单位", "format"),
    ("units", "imperial"): ("偏好使用英制单位", "format"),
}
_EN_SAYS: dict[tuple[str, str], tuple[str, str]] = {
    ("length", "short"): ("Prefers short answers", "communication_style"),
    ("length", "long"): ("Prefers detailed answers", "communication_style"),
    ("directness", "direct"): ("Prefers direct answers", "communication_style"),
    ("directness", "gentle"): ("Prefers gentle, tactful answers", "communication_style"),
    ("formality", "formal"): ("Prefers a formal tone", "communication_style"),
    ("formality", "casual"): ("Prefers a casual tone", "communication_style"),
    ("emoji", "without"): ("Prefers plain-text replies", "format"),
    ("emoji", "with"): ("Prefers replies with emoji", "format"),
    ("technicality", "plain"): ("Prefers plain explanations with analogies", "language"),
    ("technicality", "technical"): ("Prefers technical explanations with proper terms", "language"),
    ("layout", "prose"): ("Prefers paragraphs", "format"),
    ("examples", "with"): ("Prefers answers with examples", "format"),
    ("examples", "without"): ("Prefers answers without examples", "format"),
    ("order", "conclusion_first"): ("Prefers the conclusion first", "communication_style"),
    ("order", "reasoning_first"): ("Prefers the reasoning first", "communication_style"),
    ("units", "metric"): ("Prefers metric units", "format"),
    ("units", "imperial"): ("Prefers imperial units", "format"),
    ("spelling", "american"): ("Prefers American English spelling", "language"),
    ("spelling", "british"): ("Prefers British English spelling", "language"),
}
_LANGUAGE_NAMES = {"zh": "Chinese", "en": "English", "ja": "Japanese", "yue": "Cantonese", "fr": "French"}
_LANGUAGE_NAMES |= {"es": "Spanish", "de": "German"}
_CODE_NAMES = {"go": "Go", "javascript": "JavaScript", "typescript": "TypeScript", "php": "PHP", "sql": "SQL"}
_CODE_NAMES |= {"c++": "C++", "c#": "C#", "matlab": "MATLAB"}
_ZH_LANGUAGE_SAID = re.compile(
    r"中文|汉语|普通话|英文|英语|日语|日文|粤语|简体字?|繁体字?|拼音|(?<=用)(?!户)[\u4e00-\u9fff]{1,3}?(?:话|语|文)"
)
#: the wish said as a liking or a want, not only asked: the spec's "明确表达" band
_STATED = re.compile(
    r"希望|想要|想让|喜欢|讨厌|受不了|偏好|倾向|\b(?:i'd like|i would like|i want|i'd prefer|i prefer|i'd rather|"
    r"i'd appreciate|i would appreciate|i'd love|i would love|i like|i love|i hate|i dislike|i can't stand)\b",
    re.IGNORECASE,
)


@named_rule("wishes.answer")
def answer_wish(clause: Clause, someone_else: bool = False) -> _Item | None:
    """The preference a wish about answers states, or None (see the module's words)."""
    said = clause.text.strip()
    if not said or someone_else or not _is_wish(clause, said):
        return None
    sides = dimensions(said)
    found = next((d for d in _ORDER if d in sides), None)
    if found is None:
        return None
    text, category = _says(found, sides[found], said)
    if not text:
        return None
    return _pref(text, category, said, behaviour=not _STATED.search(said))


def said_of_someone_else(text: str) -> bool:
    """Whether a clause's wish or answers are someone else's ("老师希望…", "我老板不喜欢…", "his answers …"):
    then no rule reads a preference of the user's in it."""
    return bool((_EN_SOMEONE if is_english(text) else _ZH_SOMEONE).search(text.strip()))


def is_answer_wish(clause: Clause) -> bool:
    """Whether ``answer_wish`` reads a preference in ``clause`` (the detector's question)."""
    return answer_wish(clause) is not None


def _is_wish(clause: Clause, said: str) -> bool:
    english = is_english(said)
    wish, answers, parts = (
        (_EN_WISH, _EN_ANSWERS, _EN_ANSWER_PARTS) if english else (_ZH_WISH, _ZH_ANSWERS, _ZH_ANSWER_PARTS)
    )
    if not wish.search(said) or said_of_someone_else(said):
        return False
    imperative = (_EN_IMPERATIVE if english else _ZH_IMPERATIVE).match(said)
    # the answers named, or what only they hold asked of the assistant by a request
    asked_of_me = imperative or _STATED.search(said) or re.search(r"给我|\bme\b", said, re.IGNORECASE)
    if not (answers.search(said) or (parts.search(said) and asked_of_me)) or _FOR_SOMEONE.search(said):
        return False
    standing = (_EN_STANDING if english else _ZH_STANDING).search(said)
    if (_EN_ONE_TASK if english else _ZH_ONE_TASK).search(said) and not standing:
        return False  # one thing asked for now
    if is_question(clause):
        polite = (_EN_POLITE if english else _ZH_POLITE).search(said)
        manner = (_EN_MANNER if english else _ZH_MANNER).search(said)
        return bool(polite and (standing or manner))
    return True


def _says(dimension: str, side: str, said: str) -> tuple[str, str]:
    """(preference text, category) for one side of one dimension, in the language of ``said``."""
    english = is_english(said)
    if dimension == "reply_language":
        return _reply_language(side, said, english)
    if dimension == "code_language":
        refused, language = side.startswith("not "), side.removeprefix("not ")
        name = _CODE_NAMES.get(language, language[:1].upper() + language[1:])
        if english:
            return (f"Prefers code examples not in {name}" if refused else f"Prefers code examples in {name}"), "tool"
        return (f"不希望用{name}写代码示例" if refused else f"偏好用{name}写代码示例"), "tool"
    if dimension == "word_limit":
        return (
            f"Prefers answers within {side} words" if english else f"偏好回答控制在{side}字以内"
        ), "communication_style"
    if dimension == "layout" and side == "structured":
        return _structure(said, english)
    if dimension == "examples" and side == "with" and re.search(r"代码|\bcode\b", said, re.IGNORECASE):
        return ("Prefers answers with code examples" if english else "偏好回答时多给代码示例"), "format"
    if dimension == "technicality" and side == "plain" and not english and "术语" in said:
        return "偏好少用专业术语", "language"  # in the words the request rules use
    return (_EN_SAYS if english else _ZH_SAYS).get((dimension, side), ("", ""))


def _structure(said: str, english: bool) -> tuple[str, str]:
    """A structured answer in the user's word for it, as the request rules say it ("偏好用表格的形式回复",
    "Prefers numbered lists"); points said as 分点 / 分条 are "偏好分点列出的回复格式"."""
    if english:
        m = re.search(r"bullet(?:ed)?[- ]points?|bullets|(?:numbered |bulleted )?lists?|tables?", said, re.IGNORECASE)
        form = m.group(0).lower() if m else "bullet points"
        return f"Prefers {form if form.endswith('s') else form + 's'}", "format"
    m = re.search(r"列表|表格|代码块|markdown|要点|图表", said, re.IGNORECASE)
    return (f"偏好用{m.group(0).lower()}的形式回复" if m else "偏好分点列出的回复格式"), "format"


def _reply_language(side: str, said: str, english: bool) -> tuple[str, str]:
    refused, language = side.startswith("not "), side.removeprefix("not ")
    if english:
        name = _LANGUAGE_NAMES.get(language, language.capitalize())
        return (f"Prefers replies not in {name}" if refused else f"Prefers replies in {name}"), "language"
    named = _ZH_LANGUAGE_SAID.search(said)
    name = named.group(0) if named else language
    return (f"不希望用{name}回复" if refused else f"偏好用{name}回复"), "language"


__all__ = ["answer_wish", "is_answer_wish", "said_of_someone_else"]
