"""No message costs seconds: the offline path's cost grows with a message's length, whatever its shape.

Issue 25: a run of digits before 岁了, a run of spaces, a word repeated without a space, or a rule
that folds the whole message once per clause made one 16,000-character message cost 5–40 s of CPU,
holding a worker while other tenants waited. Each adversarial shape of
``benchmarks/worst_case_input.py`` is ingested at the largest accepted size and compared with
ordinary prose of that size measured in the same test: the bounds are five times the issue's
targets (3× prose, 1.5 s), so that only a shape that grows faster than its length fails, not a
busy machine. A shape measured over its bound is measured once more and the faster run counts.
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factledger.application.service import LedgerService
from factledger.infrastructure.offline import RuleExtractor

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SIZE = 16_000  # max_message_chars
RATIO_BOUND = 5 * 3.0  # five times the target ratio to prose
SECONDS_BOUND = 5 * 1.5  # five times the target seconds


def _benchmark() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # for its ``common``
    spec = importlib.util.spec_from_file_location("worst_case_input", BENCHMARKS / "worst_case_input.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _benchmark()
CASES: dict[str, str] = bench.cases(SIZE)


@pytest.fixture(scope="module")
def service() -> Iterator[LedgerService]:
    ledger: LedgerService = bench._open(None, SIZE)
    bench.seconds(ledger, bench.PROSE_ZH)  # compiles the rules' patterns
    yield ledger
    ledger.close()


@pytest.fixture(scope="module")
def prose(service: LedgerService) -> dict[str, float]:
    return {name: min(bench.seconds(service, CASES[name]) for _ in range(2)) for name in ("prose_zh", "prose_en")}


def _fastest_within(measure: Callable[[], float], bound: float) -> float:
    """One measurement, and a second if the first is over ``bound`` (the machine is shared)."""
    first = measure()
    return first if first <= bound else min(first, measure())


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("prose")])
def test_no_shape_costs_far_more_than_prose(service: LedgerService, prose: dict[str, float], name: str) -> None:
    text = CASES[name]
    against = prose[bench._prose_of(name, text)]
    bound = min(RATIO_BOUND * against, SECONDS_BOUND)
    took = _fastest_within(lambda: bench.seconds(service, text), bound)
    assert took <= bound, f"{name}: {took:.2f} s for {SIZE:,} characters; prose {against:.2f} s"


@pytest.mark.slow
def test_prose_itself_costs_well_under_a_second_or_two(prose: dict[str, float]) -> None:
    # before issue 25 the whole message was folded once per clause: 13 s for Chinese prose here
    assert max(prose.values()) <= SECONDS_BOUND / 2, prose


_PIECES = st.sampled_from(
    [
        "1", "23", "岁了", "年级", "kg", "斤", "点", "一", "十", "了", "不", "说错了", "其实", "以前", "现在",
        "not ", "no longer ", "i'm ", "I ", "and ", "my ", "我", "他", "是", "叫", "搬到", "喜欢", "北京", "a",
        "-", "'", " ", "  ", "\n", "，", "。", ",", ".", "!", "?", "…", "—", "（", "）", "“", "”", "「", "😀",
    ]
)  # fmt: skip


def _extraction_seconds(extractor: RuleExtractor, text: str) -> float:
    began = time.perf_counter()
    extractor.extract(text, known_facts=bench.KNOWN)
    return time.perf_counter() - began


@pytest.mark.slow
# derandomized: the same 25 shapes on every run, so a gate run never hinges on which shapes chance
# drew; drop derandomize locally to explore new shapes when working on the rules (one found this way
# was quadratic: replacement re-read the message for every clause telling a change)
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(unit=st.lists(_PIECES, min_size=1, max_size=6).map("".join), tail=st.lists(_PIECES, max_size=3).map("".join))
def test_cost_grows_with_length_not_faster(unit: str, tail: str) -> None:
    """Any shape (a unit repeated, then a tail): four times the length costs at most about four
    times as much — a pattern that re-reads a run from each of its characters costs sixteen."""
    extractor = RuleExtractor()

    def shaped(size: int) -> str:
        return bench._before(unit, tail, size) if len(tail) < size else unit * size

    short, long = shaped(2_000), shaped(8_000)
    extractor.extract(short)  # compiled patterns, cached folds: not what is measured
    # the fastest of three of each, taken in turns: a burst of load from another process then
    # slows both sizes alike or neither (one measurement of each once failed a loaded machine)
    # and the extractor's own work, not the collector's: late in a full run the heap is large, and a
    # full collection landing in the long measurements cost 0.7 s (CI; 0.07 s at 2,000 characters)
    gc.collect()
    gc.disable()
    try:
        pairs = [(_extraction_seconds(extractor, short), _extraction_seconds(extractor, long)) for _ in range(3)]
    finally:
        gc.enable()
    small = min(s for s, _ in pairs)
    bound = 10 * max(small, 0.01)  # linear is 4×; quadratic 16×; the floor keeps timer noise out
    took = min(t for _, t in pairs)
    assert took <= bound, f"{unit!r} then {tail!r}: {small:.3f} s at 2,000 characters, {took:.3f} s at 8,000"


@pytest.mark.parametrize(
    "figure",
    ["1" * 15_998 + "岁了", "我" + "7" * 5_000 + "岁", "我儿子" + "3" * 9_000 + "年级了"],
    ids=["15998-digits-岁了", "我-5000-digits-岁", "我儿子-9000-digits-年级了"],
)
def test_a_figure_of_thousands_of_digits_is_read_without_raising(figure: str, caplog: pytest.LogCaptureFixture) -> None:
    # int() refuses over 4,300 digits: such an "age" made ingest raise ValueError, or the rules
    # gave up on the whole message (issue 25)
    extraction = RuleExtractor().extract(figure, known_facts=["用户今年30岁", "用户的儿子上三年级"])
    assert "offline rules failed" not in caplog.text
    assert all(len(f.text) < len(figure) + 10 for f in extraction.facts)
