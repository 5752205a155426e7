"""When a message was said, told to the model (issue 26, item 3).

"上周谈成了一单" said on 2023-05-08 is only answerable years later if the memory says which
week. The model is given the message's said-time (its date, weekday and time zone as recorded)
and asked to write relative time as the dates it means. A template that shows ``{said_at}``
(the bundled ``combined`` set) says it in its own text, so its id names the wording; any other
fact template (the ``seed`` set stays as the spec wrote it) is sent a one-line system message
beside the prompt, and the prompt id of such a call ends in ``+said``
(``seed@fa48ec2c#fact+said``), as ``+lang=en`` does for the language (ADR 0029). Preferences
(how to reply) need no date and are asked as they always were.
"""

from __future__ import annotations

from datetime import datetime, timedelta

SUFFIX = "+said"
UNKNOWN = "不详"  # ``{said_at}`` when the time is not known (a text extracted on its own, ``eval``)
# the templates whose answers are facts: the ones told when the message was said
FACT_TEMPLATES = ("fact", "fact_with_context", "combined")

_WEEKDAYS = {
    "zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
}
_LINE = {
    "zh": "这句话说于{label}：相对时间（昨天、上周、下个月）写成具体日期。",
    "en": "Said on {label}: write relative times (yesterday, last week, next month) as the dates they mean.",
}


def zone(at: datetime) -> str:
    """``UTC+08:00``, ``UTC-05:30``, ``UTC+00:00``: the offset the time was recorded with."""
    offset = at.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def said_label(at: datetime | None, language: str = "zh") -> str:
    """``2023-05-08 周一 UTC+08:00``: the day the message was said where it was said (its own
    offset, as relative time in the read model is resolved), or ``不详`` when unknown."""
    if at is None:
        return UNKNOWN
    return f"{at.date().isoformat()} {_WEEKDAYS[language][at.weekday()]} {zone(at)}"


def said_line(at: datetime, language: str) -> str:
    """The system line telling a template without ``{said_at}`` when its message was said."""
    wanted = language if language in _LINE else "zh"
    return _LINE[wanted].format(label=said_label(at, wanted))
