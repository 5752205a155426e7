"""Does any message cost far more than ordinary prose of the same length?

Times ``LedgerService.ingest`` with the offline extractor and judge (signal gate, rules, change
reading, judging against what the user said before) of adversarial messages at the largest
accepted size (``max_message_chars``, 16,000 characters): digit runs (alone and before 岁了, 年级,
kg, 斤, 点), one clause repeated, change and correction markers repeated (了, 不, 说错了, 其实,
not, no longer, 以前…现在), mixed scripts, emoji, long runs without punctuation, many short
clauses, nested brackets and quotes, runs of spaces, dashes and dots, beside ordinary Chinese and
English prose of the same size. Each message goes to a new user who has told seven facts before
(so the judge and the change rules have something to read it against). Prints the median seconds
per case and its ratio to the prose of its script (Chinese prose for any case with Han
characters, English prose otherwise).

Target (issue 25): every case ≤ 3× prose and under 1.5 s at 16,000 characters — no one message
may hold a worker for seconds (a regular expression that re-reads a run from each of its
characters, or a rule that re-reads the whole message once per clause, is quadratic).

    python3 benchmarks/worst_case_input.py                  # 16,000 characters, 5 runs a case
    python3 benchmarks/worst_case_input.py --chars 4000 --runs 3 --only digits
    python3 benchmarks/worst_case_input.py --quick          # smoke run: 400 characters, 1 run

The ledger is in memory unless --database-url (or $DATABASE_URL) names a PostgreSQL: the cost
measured is the rules', not storage's.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import drop_schema, emit, new_schema, note, parser, rounded, verdict

from factledger.application.service import LedgerService
from factledger.application.validation import DEFAULT_LIMITS
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

RAISED: dict[str, str] = {}  # message → the error its ingest raised (the service promises none)
RATIO_TARGET = 3.0
SECONDS_TARGET = 1.5
#: what each user said before the timed message
KNOWN = (
    "我住在北京",
    "我今年30岁",
    "我女儿上三年级",
    "我喜欢喝咖啡",
    "我在腾讯工作",
    "I live in London",
    "I like green tea",
)


def _filled(unit: str, size: int) -> str:
    """``unit`` repeated to exactly ``size`` characters."""
    return (unit * (size // max(1, len(unit)) + 1))[:size]


def _before(run: str, tail: str, size: int) -> str:
    """One run of ``run`` filling all but the end, then ``tail`` ("1111…1岁了")."""
    return _filled(run, size - len(tail)) + tail


PROSE_ZH = (
    "我上个月搬到了成都，现在在一家做游戏的公司上班。周末喜欢去爬山，偶尔也会和朋友一起吃火锅。"
    "我女儿今年上三年级了，她很喜欢画画。"
)
PROSE_EN = (
    "Last month I moved to Bristol and started a new job at a small design studio. On weekends I like "
    "hiking with friends, and my daughter just started third grade. "
)


def cases(size: int) -> dict[str, str]:
    """Every timed message, ``size`` characters each, by name; the two proses first."""
    runs: dict[str, Callable[[int], str]] = {
        "prose_zh": lambda n: _filled(PROSE_ZH, n),
        "prose_en": lambda n: _filled(PROSE_EN, n),
        "digits": lambda n: _filled("1", n),
        "digits_then_岁了": lambda n: _before("1", "岁了", n),
        "digits_then_年级": lambda n: _before("3", "年级", n),
        "digits_then_kg": lambda n: _before("7", "kg", n),
        "digits_then_斤": lambda n: _before("9", "斤", n),
        "digits_then_点": lambda n: _before("8", "点打扰", n),
        "han_numerals_then_岁": lambda n: _before("一", "岁了", n),
        "我_digits_then_只": lambda n: "我" + _before("3", "只", n - 1),
        "我_digits_then_%": lambda n: "我" + _before("3", "%", n - 1),
        "我在_dashes_then_now": lambda n: "我在" + _before("-", " now", n - 2),
        "了_then_now": lambda n: _before("了", " now", n),
        "digit_dots": lambda n: _filled("1.", n),
        "age_clause_repeated": lambda n: _filled("我今年35岁了，", n),
        "clause_repeated": lambda n: _filled("我搬到上海了，", n),
        "en_clause_repeated": lambda n: _filled("I moved to Paris, ", n),
        "了": lambda n: _filled("了", n),
        "不": lambda n: _filled("不", n),
        "说错了": lambda n: _filled("说错了", n),
        "其实": lambda n: _filled("其实", n),
        "以前_现在": lambda n: _filled("以前喜欢猫现在，", n),
        "not": lambda n: _filled("not ", n),
        "no_longer": lambda n: _filled("no longer ", n),
        "i_m": lambda n: _filled("i'm ", n),
        "mixed_scripts": lambda n: _filled("我在Google工作abc123北京", n),
        "emoji": lambda n: _filled("😀🎉我喜欢", n),
        "zh_without_punctuation": lambda n: _filled("我喜欢吃苹果我住在北京我在上班", n),
        "en_without_punctuation": lambda n: _filled("i like apples i live in paris i work at a bank ", n),
        "han_run": lambda n: _filled("北京上海广州深圳", n),
        "letters": lambda n: _filled("a", n),
        "hyphenated_letters": lambda n: _filled("a-", n),
        "short_clauses": lambda n: _filled("好，", n),
        "brackets_nested": lambda n: "（" * (n // 2) + "）" * (n - n // 2),
        "quotes_nested": lambda n: _filled("“我说‘他说「", n),
        "spaces": lambda n: "I" + _before(" ", "x", n - 1),  # (a message of spaces alone is refused)
        "spaces_then_dash": lambda n: "I" + _before(" ", "—x", n - 1),
        "whitespace_mixed": lambda n: "I" + _before("\n\t ", " and i", n - 1),
    }
    return {name: make(size) for name, make in runs.items()}


def _prose_of(name: str, text: str) -> str:
    return "prose_zh" if any("\u4e00" <= c <= "\u9fff" for c in text) or name == "prose_zh" else "prose_en"


def _open(database_url: str | None, size: int, schema: str = "worst") -> LedgerService:
    """A ledger in memory, or in ``schema`` of ``database_url``; messages of ``size`` accepted."""
    home = Path(tempfile.mkdtemp(prefix="flworst_"))
    limit = max(size, DEFAULT_LIMITS.message_chars)
    if database_url:
        return open_ledger(
            Settings(home=home, database_url=database_url, schema=schema, max_message_chars=limit),
            warn_if_offline=False,
        )
    return open_ledger(
        Settings(home=home, backend="memory", schema=schema, max_message_chars=limit), warn_if_offline=False
    )


def seconds(service: LedgerService, message: str) -> float:
    """One ingest of ``message`` by a new user who told ``KNOWN`` before."""
    user = f"u{uuid.uuid4().hex[:12]}"
    for i, said in enumerate(KNOWN):
        service.ingest(user, said, message_id=f"known{i}")
    began = time.perf_counter()
    try:
        service.ingest(user, message, message_id="timed")
    except Exception as error:  # a defect of its own: counted, and timed up to the raise
        RAISED.setdefault(message, f"{type(error).__name__}: {error}"[:200])
    return time.perf_counter() - began


def timed(service: LedgerService, messages: dict[str, str], runs: int) -> dict[str, float]:
    """Median seconds of each message over ``runs`` runs (one untimed warm-up ingest first)."""
    seconds(service, PROSE_ZH)  # compiles the rules' patterns, as a running server has
    out: dict[str, float] = {}
    for name, text in messages.items():
        out[name] = statistics.median(seconds(service, text) for _ in range(runs))
        note(f"  {name:24s} {out[name]:7.3f} s")
    return out


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--chars", type=int, default=DEFAULT_LIMITS.message_chars, help="message size (default 16,000)")
    p.add_argument("--only", action="append", default=[], help="time only cases whose name contains this")
    args = p.parse_args()
    if args.quick:
        args.chars, args.runs = 400, 1
    messages = cases(args.chars)
    if args.only:
        kept = {n: t for n, t in messages.items() if any(o in n for o in args.only)}
        messages = {"prose_zh": messages["prose_zh"], "prose_en": messages["prose_en"], **kept}
    note(f"{len(messages)} messages of {args.chars:,} characters, median of {args.runs} runs each")
    schema = new_schema("worst")
    service = _open(args.database_url, args.chars, schema)
    try:
        median = timed(service, messages, args.runs)
    finally:
        service.close()
        if args.database_url:
            drop_schema(args.database_url, schema)
    ratios = {n: median[n] / median[_prose_of(n, t)] for n, t in messages.items()}
    print(f"{'case':24s} {'seconds':>8s} {'÷ prose':>8s}")
    for name in messages:
        print(f"{name:24s} {median[name]:8.3f} {ratios[name]:8.2f}")
    raised = [n for n, t in messages.items() if t in RAISED]
    for name in raised:
        print(f"{name}: ingest raised {RAISED[messages[name]]}")
    worst_ratio = max(ratios, key=ratios.__getitem__)
    slowest = max(median, key=median.__getitem__)
    print(f"worst ÷ prose ({worst_ratio}): {verdict(ratios[worst_ratio], RATIO_TARGET, at_least=False)}")
    print(f"slowest ({slowest}), seconds: {verdict(median[slowest], SECONDS_TARGET, at_least=False)}")
    emit(
        {
            "chars": args.chars,
            "runs": args.runs,
            "seconds": {n: rounded(s, 4) for n, s in median.items()},
            "ratio_to_prose": {n: rounded(r) for n, r in ratios.items()},
            "worst_ratio": rounded(ratios[worst_ratio]),
            "worst_ratio_case": worst_ratio,
            "slowest_seconds": rounded(median[slowest], 4),
            "slowest_case": slowest,
            "raised": raised,
        }
    )


if __name__ == "__main__":
    main()
