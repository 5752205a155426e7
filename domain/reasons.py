"""Why a fact or preference stopped holding, as a stable code, and its words in English and Chinese.

An event records the code (``FactInvalidated.reason_code``, ``PreferenceSuperseded.reason_code``) and,
where a person or an older version wrote words of their own, those words beside it (``reason``); what
is shown is rendered when it is read, in the language the user's memories are in. Events written
before codes (class versions 2 and 1) held a Chinese sentence whatever the user's language:
``reason_of_literal`` reads one back as its code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

ReasonCode = Literal[
    "replaced-by-new-fact",  # a newer fact of the user's replaced it
    "replaced-by-new-preference",  # a newer preference replaced it
    "replaced-by-correction",  # an operator's restatement replaced it
    "replaced-by-later-statement",  # said before a later statement that replaces it (ADR 0025)
    "retracted-by-user",  # the user took it back or cancelled it
    "said-before",  # said again after a statement said before it, which carries it on (ADR 0025)
    "manual",  # an operator marked it wrong, in words of their own
    "other",  # words no code stands for (an older version's, or a caller's)
]
REASON_CODES: Final[tuple[ReasonCode, ...]] = get_args(ReasonCode)

#: the languages reasons are shown in (``domain.language.main_language`` answers one of them)
Language = Literal["zh", "en"]

#: the codes whose reason is the words kept beside them, not a sentence of the ledger's own
WORDED: Final[frozenset[ReasonCode]] = frozenset({"manual", "other"})
#: the codes whose subject is the item itself, not the item that replaced it
ABOUT_ITSELF: Final[frozenset[ReasonCode]] = frozenset({"retracted-by-user"})

_WORDS: Final[dict[ReasonCode, tuple[str, str]]] = {  # (Chinese, English)
    "replaced-by-new-fact": ("被新事实替代", "Replaced by a newer fact"),
    "replaced-by-new-preference": ("被新偏好替代", "Replaced by a newer preference"),
    "replaced-by-correction": ("由人工更正替代", "Replaced by an operator's correction"),
    "replaced-by-later-statement": ("被后来的陈述替代", "Replaced by a later statement"),
    "retracted-by-user": ("用户收回或取消", "Taken back or cancelled by the user"),
    "said-before": ("先前已说过", "Said before"),
    "manual": ("人工标记为错误", "Marked wrong by an operator"),
    "other": ("其他原因", "Another reason"),
}


def reason_code(value: object) -> ReasonCode:
    """``value`` as a reason code; ValueError naming the codes when it is none."""
    for code in REASON_CODES:
        if value == code:
            return code
    raise ValueError(f"reason code must be one of {', '.join(REASON_CODES)}, got {value!r}")


def reason_of_literal(text: str, *, manual: bool = False) -> tuple[ReasonCode, str | None]:
    """What an older version's reason sentence stands for: its code, and the words to keep beside it
    (None when the code says it all: the words after the colon named the item that replaced it, or
    the item itself, both still in the events). Words no code stands for are kept whole, under
    ``manual`` for an operator's invalidation (``manual``) and ``other`` otherwise."""
    head = text.split(":", 1)[0].strip()
    for code, (chinese, _) in _WORDS.items():
        if code not in WORDED and head == chinese:
            return code, None
    return ("manual" if manual else "other"), text


def render_reason(code: ReasonCode, language: str, note: str | None = None, subject: str | None = None) -> str:
    """The reason as a person reads it, in ``language`` (``zh`` or ``en``; Chinese for any other):
    the kept words for a worded code, else the code's sentence and the item it names (``subject``)."""
    if code in WORDED and note:
        return note
    words = _WORDS[code][1 if language == "en" else 0]
    return f"{words}: {subject}" if subject else words


def entry_reason(fields: Mapping[str, Any], language: str, texts: Mapping[str, str] | None = None) -> str | None:
    """The reason of a history entry (an invalidation's or supersession's fields, as ``history``
    spells them) as a person reads it; ``texts``, item id → text, names the item it is about.
    An entry of a kind with no code shows its words as they are."""
    code = fields.get("reason_code")
    if code not in REASON_CODES:
        words = fields.get("reason")
        return None if words is None else str(words)
    item = fields.get("fact_id") or fields.get("preference_id")
    about = (texts or {}).get(str(item if code in ABOUT_ITSELF else fields.get("superseded_by")))
    return render_reason(reason_code(code), language, fields.get("reason"), about)
