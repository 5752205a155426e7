"""What people read: tables that wrap CJK text at 80 columns, human values, unknown users, ``context``."""

from __future__ import annotations

import json
from pathlib import Path

from processes import run_cli, run_cli_json
from rich.cells import cell_len

LONG_MESSAGE = "我在杭州一家非常大的互联网公司担任高级工程师已经有很多年了"
LONG_NAME = "一个相当长的中文规则集名称用来检查终端表格在八十列宽时会折行而不是截断"


def narrow(env: dict[str, str]) -> dict[str, str]:
    """The environment of a terminal 80 columns wide."""
    return {**env, "COLUMNS": "80"}


def columns(table: str) -> list[str]:
    """Each column of a printed table's body, its cells' lines joined (how a folded cell reads whole)."""
    body = [line.split("│")[1:-1] for line in table.splitlines() if line.startswith("│")]
    return ["".join(row[i].strip() for row in body) for i in range(max(map(len, body), default=0))]


def assert_whole_and_narrow(stdout: str, text: str) -> None:
    """``text`` is printed whole inside one column, nothing is cut with "…", and no table row passes 80 cells."""
    assert "…" not in stdout
    assert any(text in column for column in columns(stdout)), stdout
    assert all(cell_len(line) <= 80 for line in stdout.splitlines() if line[:1] in "┏┃┡│└"), stdout


def test_profile_and_ledgers_wrap_long_chinese_text_at_80_columns(cli_env: dict[str, str], tmp_path: Path) -> None:
    [fact] = run_cli_json(cli_env, "ingest", "--user", "w", LONG_MESSAGE)["facts"]
    assert len(fact) > 20
    assert_whole_and_narrow(run_cli(narrow(cli_env), "profile", "w").stdout, fact)

    rules = tmp_path / "rules.toml"
    rules.write_text(f'name = "{LONG_NAME}"\n[[drop]]\nkind = "fact"\ncategory = "relationship"\n', encoding="utf-8")
    run_cli(cli_env, "replay", "--into", "v2", "--rules", str(rules), "-q")
    [extractor_id] = [row["extractor_id"] for row in run_cli_json(cli_env, "ledgers") if row["name"] == "v2"]
    assert LONG_NAME in extractor_id
    assert_whole_and_narrow(run_cli(narrow(cli_env), "ledgers").stdout, extractor_id)


def test_eval_wraps_a_long_group_name_at_80_columns(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "groups.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "a",
                "utterance": "我住在杭州",
                "context": [],
                "gold_persona": ["我住在杭州"],
                "kvpi_domain": LONG_NAME,
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    assert_whole_and_narrow(run_cli(narrow(cli_env), "eval", str(path), "-q").stdout, LONG_NAME)


def test_human_values_say_yes_no_dash_and_count_in_words(cli_env: dict[str, str]) -> None:
    one = run_cli(cli_env, "ingest", "--user", "h", "我住在杭州", "-q").stdout
    assert one.splitlines()[0] == "1 fact, 0 preferences"
    again = run_cli(cli_env, "ingest", "--user", "h", "我住在杭州", "-q").stdout
    assert "→ confirmed" in again
    fact_id = run_cli_json(cli_env, "profile", "h")["facts"]["location"][0]["id"]
    why = run_cli(cli_env, "why", "h", fact_id[:8]).stdout
    assert "active: yes" in why and "None" not in why and "True" not in why
    assert "(prompt —)" in why  # the offline rules use no prompt
    assert "confirmed: 2 mentions, similarity 1.00" in run_cli(cli_env, "history", "h").stdout
    run_cli(cli_env, "invalidate", "h", fact_id[:8], "--reason", "搬走了")
    assert "active: no" in run_cli(cli_env, "why", "h", fact_id[:8]).stdout


def test_an_unknown_user_is_an_empty_answer_with_a_note_and_an_unknown_item_exits_3(cli_env: dict[str, str]) -> None:
    run_cli(cli_env, "ingest", "--user", "known", "我住在杭州")
    for args in (
        ("profile", "x"),
        ("profile", "x", "--as-of", "2024-01-01T00:00:00Z"),
        ("history", "x"),
        ("recall", "x", "杭州"),
        ("context", "x", "杭州"),
    ):
        proc = run_cli(cli_env, *args)  # exit 0 (ADR 0036)
        assert "nothing is recorded for user 'x'" in proc.stderr and "error" not in proc.stderr, args
        assert "Traceback" not in proc.stderr
        assert "nothing is recorded" not in run_cli(cli_env, *args, "-q").stderr  # -q: the answer only
    proc = run_cli(cli_env, "why", "x", "abc", expect=3)
    assert "error: nothing is recorded for user 'x'" in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    # A known user with nothing matching is an answer, not an error.
    assert run_cli_json(cli_env, "history", "known", "--since", "2099-01-01T00:00:00Z") == []
    assert run_cli_json(cli_env, "recall", "known", "杭州", "--types", "preference") == []


def test_context_prints_the_system_prompt_block(cli_env: dict[str, str]) -> None:
    run_cli(cli_env, "ingest", "--user", "c", "我在杭州工作，老板姓张，平时喜欢简短的回复")
    data = run_cli_json(cli_env, "context", "c", "老板是谁", "--top-k", "2")
    assert data["user_id"] == "c" and data["query"] == "老板是谁"
    assert "用户的老板姓张" in data["text"] and len(data["recalled"]) <= 2
    human = run_cli(cli_env, "context", "c", "老板是谁", "--top-k", "2", "-q").stdout
    assert human == data["text"] + "\n"
    english = run_cli(cli_env, "context", "c", "boss", "--language", "en", "-q").stdout
    assert english.startswith("What is known about the user:")
    proc = run_cli(cli_env, "context", "c", "x", "--language", "fr", expect=2)
    assert "invalid choice: 'fr'" in proc.stderr
