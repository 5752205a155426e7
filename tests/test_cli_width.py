"""Every human output that shows user text fits the terminal (issue 24): lines no wider than
COLUMNS display columns, Chinese counted two each, the text still all there when the
lines are read back together. Each command runs as a real process; ``wrapped`` itself
is checked on random lines, and for linear time."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from processes import run_cli, run_cli_json

from factledger.entrypoints.cli.present import wrapped

LONG_ZH = "我在杭州一家非常大的互联网公司担任高级工程师已经有很多年了，每天都要坐地铁上班，周末喜欢去西湖边跑步和拍照"
LONG_EN = (
    "I work as a senior software engineer at a very large internet company in Hangzhou and have done so "
    "for many years, taking the metro every day"
)
LONG_USER = "用户-" + "很长的名字" * 8


def cells(line: str) -> int:
    """Display columns, as a terminal counts them (independent of the code under test)."""
    width = 0
    for char in line:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def assert_fits(text: str, columns: int) -> None:
    wide = [(cells(line), line) for line in text.splitlines() if cells(line) > columns]
    assert not wide, f"lines wider than {columns} columns: {wide}"


def unwrapped(text: str) -> str:
    """``text`` without any whitespace: how printed text compares with what was said, whatever
    line breaks and continuation indents the printing added."""
    return re.sub(r"\s+", "", text)


@pytest.fixture
def user(cli_env: dict[str, str]) -> str:
    run_cli(cli_env, "ingest", "--user", LONG_USER, "--session", "会话" * 20, LONG_ZH, "-q")
    run_cli(cli_env, "ingest", "--user", LONG_USER, LONG_EN, "-q")
    return LONG_USER


@pytest.mark.parametrize("columns", [80, 50])
def test_every_command_showing_user_text_fits_the_terminal(
    cli_env: dict[str, str], user: str, tmp_path: Path, columns: int
) -> None:
    env = {**cli_env, "COLUMNS": str(columns)}
    fact = run_cli_json(cli_env, "profile", user)["facts"]
    [first] = [f for facts in fact.values() for f in facts][:1]
    commands = [
        ("ingest", "--user", user, LONG_ZH + "，我的老板姓张"),
        ("history", user),
        ("why", user, first["id"][:8]),
        ("context", user, "我在哪里工作" * 5),
        ("recall", user, "工程师"),
        ("profile", user),
        ("recall", user, "完全无关的问题" * 10, "--min-similarity", "1"),
        ("restate", user, "用户住在" + "很远很远的地方" * 10, "--category", "location"),
        ("invalidate", user, first["id"][:8], "--reason", "搬走了" * 30),
    ]
    for args in commands:
        proc = run_cli(env, *args)
        assert_fits(proc.stdout, columns)
        assert_fits(proc.stderr, columns)
    history = run_cli(env, "history", user).stdout
    assert unwrapped(LONG_ZH) in unwrapped(history) and unwrapped(LONG_EN) in unwrapped(history)


def test_ingest_file_errors_and_demo_fit_the_terminal(cli_env: dict[str, str], tmp_path: Path) -> None:
    env = {**cli_env, "COLUMNS": "80"}
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"user_id": "很长" * 150, "message": "hi"}, ensure_ascii=False)
        + "\n"
        + json.dumps({"user_id": "u\u200b" * 30, "message": "hi"})
        + "\n",
        encoding="utf-8",
    )
    proc = run_cli(env, "ingest-file", str(path), expect=1)
    assert_fits(proc.stdout, 80)
    assert_fits(proc.stderr, 80)
    for error in ("user_id is 300 characters long; the limit is 256", "contains U+200B ZERO WIDTH SPACE"):
        assert unwrapped(error) in unwrapped(proc.stderr)
    demo = run_cli(env, "demo", "--user", "d" * 120)
    assert_fits(demo.stdout, 80)


@given(
    line=st.text(alphabet=st.sampled_from([*"ab cd  xyz", *"我住在上海，。", "\u0301"]), max_size=300),
    width=st.integers(min_value=2, max_value=120),
    hang=st.none() | st.integers(min_value=0, max_value=40),
)
def test_wrapped_lines_fit_and_keep_every_character(line: str, width: int, hang: int | None) -> None:
    printed = wrapped(line, width, hang).plain
    assert_fits(printed, width)
    assert unwrapped(printed) == unwrapped(line)


@pytest.mark.slow
def test_wrapping_takes_linear_time() -> None:
    for line in ("我" * 200_000, "word " * 50_000, "x" * 200_000 + " y" * 1_000):
        started = time.perf_counter()
        wrapped(line, 80, 4)
        assert time.perf_counter() - started < 2.0  # 200,000 characters; a quadratic cut takes minutes
