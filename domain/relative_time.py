"""Relative time in what a user says, resolved against when they said it.

"上周去了杭州" said on 2023-05-08 means the week of 2023-05-01 to 2023-05-07; stored as
such, the memory still answers "when?" years later. ``time_refs(text, said)`` finds the
expressions (Chinese and English) and gives each its span of dates: a day (昨天,
yesterday, 3 days ago), a week, Monday to Sunday (上周, last week; 上周末, last weekend:
its Saturday and Sunday), a month (上个月, last month, 两个月前) or a year (去年, two years
ago). Spans are what the words say, never more precise: "two months ago" is that whole
month.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta

import attrs

_CN_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "a couple of": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a few": 3,
}  # fmt: skip
MAX_REFS = 3


@attrs.frozen
class TimeRef:
    """``phrase`` as said, and the first and last day it refers to."""

    phrase: str
    start: date
    end: date

    def label(self) -> str:
        return self.start.isoformat() if self.start == self.end else f"{self.start.isoformat()}/{self.end.isoformat()}"

    def to_dict(self) -> dict[str, str]:
        return {"phrase": self.phrase, "start": self.start.isoformat(), "end": self.end.isoformat()}


def _day(d: date, offset: int) -> tuple[date, date]:
    day = d + timedelta(days=offset)
    return day, day


def _week(d: date, offset: int) -> tuple[date, date]:
    monday = d - timedelta(days=d.weekday()) + timedelta(weeks=offset)
    return monday, monday + timedelta(days=6)


def _weekend(d: date, offset: int) -> tuple[date, date]:
    monday, _ = _week(d, offset)
    return monday + timedelta(days=5), monday + timedelta(days=6)


def _month(d: date, offset: int) -> tuple[date, date]:
    index = d.year * 12 + d.month - 1 + offset
    year, month = divmod(index, 12)
    return date(year, month + 1, 1), date(year, month + 1, calendar.monthrange(year, month + 1)[1])


def _year(d: date, offset: int) -> tuple[date, date]:
    return date(d.year + offset, 1, 1), date(d.year + offset, 12, 31)


_UNITS = {"day": _day, "week": _week, "weekend": _weekend, "month": _month, "year": _year}

# (pattern, unit, offset): fixed expressions, longest first where one contains another.
_FIXED: list[tuple[str, str, int]] = [
    (r"大前天", "day", -3), (r"前天", "day", -2), (r"昨天|昨晚|昨日", "day", -1), (r"今天|今晚|今日", "day", 0),
    (r"明天|明晚", "day", 1), (r"后天", "day", 2),
    (r"上(?:个)?周末|上(?:个)?星期末", "weekend", -1), (r"这(?:个)?周末|本周末", "weekend", 0),
    (r"下(?:个)?周末", "weekend", 1),
    (r"上上(?:个)?(?:周|星期|礼拜)", "week", -2), (r"上(?:个)?(?:周|星期|礼拜)", "week", -1),
    (r"这(?:个)?(?:周|星期|礼拜)|本周", "week", 0), (r"下(?:个)?(?:周|星期|礼拜)", "week", 1),
    (r"上上个月", "month", -2), (r"上(?:个)?月", "month", -1), (r"这个月|本月", "month", 0),
    (r"下(?:个)?月", "month", 1),
    (r"大前年", "year", -3), (r"前年", "year", -2), (r"去年", "year", -1), (r"今年", "year", 0), (r"明年", "year", 1),
    (r"\bthe day before yesterday\b", "day", -2), (r"\byesterday\b|\blast night\b", "day", -1),
    (r"\btoday\b|\btonight\b|\bthis morning\b", "day", 0), (r"\btomorrow\b", "day", 1),
    (r"\blast weekend\b", "weekend", -1), (r"\bthis weekend\b", "weekend", 0), (r"\bnext weekend\b", "weekend", 1),
    (r"\blast week\b", "week", -1), (r"\bthis week\b", "week", 0), (r"\bnext week\b", "week", 1),
    (r"\blast month\b", "month", -1), (r"\bthis month\b", "month", 0), (r"\bnext month\b", "month", 1),
    (r"\blast year\b", "year", -1), (r"\bthis year\b", "year", 0), (r"\bnext year\b", "year", 1),
]  # fmt: skip
_CN_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week", "个礼拜": "week",
             "个月": "month", "月": "month", "年": "year"}  # fmt: skip
_CN_COUNT = r"(?P<n>\d{1,3}|[一两二三四五六七八九十]{1,2})(?P<u>个星期|个礼拜|星期|个月|天|日|周|年)(?:以|之)?"
_CN_AGO = re.compile(_CN_COUNT + "前")
_CN_LATER = re.compile(_CN_COUNT + "后")
_EN_NUMBER = r"\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten"
_EN_AGO = re.compile(rf"\b(?P<n>{_EN_NUMBER}) (?P<u>day|week|month|year)s? ago\b", re.IGNORECASE)
_EN_LATER = re.compile(rf"\bin (?P<n>{_EN_NUMBER}) (?P<u>day|week|month|year)s?(?: time)?\b", re.IGNORECASE)
# All fixed expressions of a language in one pattern, a named group each (``f<index>``): one pass
# over the text; at a position the first alternative that matches wins, so longer expressions,
# listed first, take their part (上上周 before 上周, 大前天 before 前天).
_FIXED_CN = re.compile("|".join(f"(?P<f{i}>{p})" for i, (p, _, _) in enumerate(_FIXED) if not p.startswith("\\b")))
_FIXED_EN = re.compile(
    "|".join(f"(?P<f{i}>{p})" for i, (p, _, _) in enumerate(_FIXED) if p.startswith("\\b")), re.IGNORECASE
)
# Cheap checks say whether any expression can be there (most messages hold none, and the
# projection runs this on every message): a character every Chinese expression has; for English,
# substrings every expression has (plain ``in``: C speed, no regex over the whole text).
_CN_CUE = re.compile("[天昨今明周星礼月年晚日]")
_EN_CUES = (
    "yesterday", "today", "tonight", "tomorrow", " ago", "last night", "this morning",
    "last week", "this week", "next week", "last month", "this month", "next month",
    "last year", "this year", "next year",
)  # fmt: skip
_EN_UNITS = (" day", " week", " month", " year")


def _english_may_hold(lowered: str) -> bool:
    # Every cue and unit holds one of these eight words: a text with none (most of them) is
    # answered by eight plain ``in`` checks, without the generator over every cue.
    if not (
        "day" in lowered
        or "week" in lowered
        or "month" in lowered
        or "year" in lowered
        or "night" in lowered
        or "ago" in lowered
        or "tomorrow" in lowered
        or "morning" in lowered
    ):
        return False
    return any(c in lowered for c in _EN_CUES) or (" in " in lowered and any(u in lowered for u in _EN_UNITS))


def _cn_number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if len(text) == 2 and text[0] == "十":
        return 10 + _CN_DIGITS.get(text[1], 0)
    if len(text) == 2 and text[1] == "十":
        return _CN_DIGITS.get(text[0], 0) * 10
    return _CN_DIGITS.get(text) if len(text) == 1 else None


def _counted(text: str, chinese: bool, english: bool) -> Iterator[tuple[int, int, str, int]]:
    """Counted expressions ("三天前", "in 2 weeks"): where each is, its unit and its signed count."""
    if chinese:
        for pattern, sign in ((_CN_AGO, -1), (_CN_LATER, 1)):
            for m in pattern.finditer(text):
                n = _cn_number(m.group("n"))
                if n:
                    yield m.start(), m.end(), _CN_UNITS[m.group("u")], sign * n
    if english:
        for pattern, sign in ((_EN_AGO, -1), (_EN_LATER, 1)):
            for m in pattern.finditer(text):
                number = m.group("n").lower()
                n = int(number) if number.isdigit() else _EN_NUMBERS[number]
                yield m.start(), m.end(), m.group("u").lower(), sign * n


def time_refs(text: str, said: datetime | date) -> list[TimeRef]:
    """The relative time expressions of ``text``, in order, resolved against ``said`` (its date,
    in the time zone ``said`` carries); at most three."""
    chinese, english = bool(_CN_CUE.search(text)), _english_may_hold(text.lower())
    if not (chinese or english):
        return []
    day = said.date() if isinstance(said, datetime) else said
    found: list[tuple[int, int, TimeRef]] = []

    def add(start: int, end: int, unit: str, offset: int) -> None:
        if any(s < end and start < e for s, e, _ in found):  # inside a longer expression already found
            return
        first, last = _UNITS[unit](day, offset)
        found.append((start, end, TimeRef(text[start:end], first, last)))

    for start, end, unit, offset in _counted(text, chinese, english):
        add(start, end, unit, offset)
    for pattern, wanted in ((_FIXED_CN, chinese), (_FIXED_EN, english)):
        for m in pattern.finditer(text) if wanted else ():
            _, unit, offset = _FIXED[int(str(m.lastgroup)[1:])]
            add(m.start(), m.end(), unit, offset)
    return [ref for _, _, ref in sorted(found, key=lambda f: f[0])][:MAX_REFS]
