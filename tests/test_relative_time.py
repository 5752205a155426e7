"""Relative time resolved against when it was said (issue 26 item 3): a table in both languages."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from factledger.application.service import LedgerService
from factledger.domain.relative_time import time_refs

# A Monday.
SAID = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "phrase", "start", "end"),
    [
        ("昨天去看了牙医", "昨天", "2023-05-07", "2023-05-07"),
        ("前天晚上吃了火锅", "前天", "2023-05-06", "2023-05-06"),
        ("大前天搬的家", "大前天", "2023-05-05", "2023-05-05"),
        ("上周去了趟杭州", "上周", "2023-05-01", "2023-05-07"),
        ("上个星期面试了", "上个星期", "2023-05-01", "2023-05-07"),
        ("上周末在爬山", "上周末", "2023-05-06", "2023-05-07"),
        ("下周要出差", "下周", "2023-05-15", "2023-05-21"),
        ("上个月换了工作", "上个月", "2023-04-01", "2023-04-30"),
        ("下个月搬去深圳", "下个月", "2023-06-01", "2023-06-30"),
        ("去年开始学钢琴", "去年", "2022-01-01", "2022-12-31"),
        ("三天前丢了钱包", "三天前", "2023-05-05", "2023-05-05"),
        ("两年前结的婚", "两年前", "2021-01-01", "2021-12-31"),
        ("I saw the dentist yesterday", "yesterday", "2023-05-07", "2023-05-07"),
        ("Last week I got a deal with an outdoor gear company", "Last week", "2023-05-01", "2023-05-07"),
        ("We went camping last weekend", "last weekend", "2023-05-06", "2023-05-07"),
        ("I start the new job next month", "next month", "2023-06-01", "2023-06-30"),
        ("I adopted her two years ago", "two years ago", "2021-01-01", "2021-12-31"),
        ("I moved 3 weeks ago", "3 weeks ago", "2023-04-17", "2023-04-23"),
        ("My exam is in two days", "in two days", "2023-05-10", "2023-05-10"),
        ("last month was hard", "last month", "2023-04-01", "2023-04-30"),
    ],
)
def test_relative_time_is_the_span_it_means_on_the_day_it_was_said(
    text: str, phrase: str, start: str, end: str
) -> None:
    [ref] = time_refs(text, SAID)
    assert (ref.phrase, ref.start, ref.end) == (phrase, date.fromisoformat(start), date.fromisoformat(end))


def test_nothing_relative_is_nothing_and_a_year_boundary_is_crossed() -> None:
    assert time_refs("我住在杭州", SAID) == []
    assert time_refs("I live in Lisbon", SAID) == []
    [ref] = time_refs("上个月去了北京", datetime(2024, 1, 15, tzinfo=UTC))
    assert (ref.start, ref.end) == (date(2023, 12, 1), date(2023, 12, 31))
    refs = time_refs("昨天和去年", SAID)
    assert [r.phrase for r in refs] == ["昨天", "去年"]


def test_a_context_shows_the_days_a_memory_refers_to(service: LedgerService) -> None:
    service.ingest("u", "上周去了趟杭州", timestamp=SAID)
    context = service.memory_context("u", "杭州", language="zh")
    said = [h for h in context.recalled if h.record.type == "message"]
    assert said[0].record.metadata["refers_to"] == [{"phrase": "上周", "start": "2023-05-01", "end": "2023-05-07"}]
    assert "[2023-05-08] 上周去了趟杭州（上周: 2023-05-01/2023-05-07）" in context.text
