"""The CLI, run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = "我在杭州工作，老板姓张，平时喜欢简短的回复"


def run(
    env: dict[str, str], *args: str, check: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "factledger.entrypoints.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=180,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:{proc.stdout}\nstderr:{proc.stderr}")
    return proc


def run_json(env: dict[str, str], *args: str) -> Any:
    return json.loads(run(env, *args, "--json").stdout)


def test_ingest_and_profile_reproduce_the_spec_example(cli_env: dict[str, str]) -> None:
    result = run_json(cli_env, "ingest", "--user", "user_123", "--session", "session_456", EXAMPLE)
    assert result["facts_extracted"] == 2
    assert result["preferences_extracted"] == 1
    assert result["facts"] == ["用户在杭州工作", "用户的老板姓张"]
    assert result["preferences"] == ["偏好简短的回复风格"]
    assert [i["action"] for i in result["items"]] == ["observed"] * 3
    profile = run_json(cli_env, "profile", "user_123")
    assert profile["user_id"] == "user_123"
    assert [f["fact"] for f in profile["facts"]["location"]] == ["用户在杭州工作"]
    assert [f["fact"] for f in profile["facts"]["relationship"]] == ["用户的老板姓张"]
    assert [p["preference"] for p in profile["preferences"]["communication_style"]] == ["偏好简短的回复风格"]
    assert (profile["facts_count"], profile["preferences_count"]) == (2, 1)


def test_human_output_says_which_extractor_is_active(cli_env: dict[str, str]) -> None:
    proc = run(cli_env, "ingest", "--user", "u", "我住在杭州")
    assert "offline" in proc.stderr and "OPENAI_API_KEY" in proc.stderr
    assert "用户住在杭州" in proc.stdout


def test_ingest_file_reports_bad_lines_and_ingests_the_rest(cli_env: dict[str, str], tmp_path: Path) -> None:
    lines = [
        json.dumps({"user_id": "f", "session_id": "s1", "message": "我住在杭州", "timestamp": "2024-03-01T08:00:00Z"}),
        "{not json",
        json.dumps({"user_id": "f", "session_id": "s1"}),
        json.dumps({"user_id": "f", "session_id": "s1", "message": "hi", "context": [{"role": "assistant"}]}),
        json.dumps(
            {
                "user_id": "f",
                "session_id": "s2",
                "message": "我搬到上海了",
                "timestamp": 1717200000,
                "context": [{"role": "assistant", "content": "最近好吗"}],
            }
        ),
        json.dumps({"user_id": "f", "message": "x", "timestamp": "yesterday"}),
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = run(cli_env, "ingest-file", str(path), "--json", check=False)
    assert proc.returncode == 1
    summary = json.loads(proc.stdout)
    assert summary["ingested"] == 2 and summary["failed"] == 4
    assert [e["line"] for e in summary["errors"]] == [2, 3, 4, 6]
    assert "missing message" in summary["errors"][1]["error"]
    assert "content" in summary["errors"][2]["error"]
    assert "timestamp" in summary["errors"][3]["error"]
    history = run_json(cli_env, "history", "f")
    messages = [e for e in history if e["event"] == "MessageIngested"]
    assert [m["at"] for m in messages] == ["2024-03-01T08:00:00+00:00", "2024-06-01T00:00:00+00:00"]
    profile = run_json(cli_env, "profile", "f")
    assert [f["fact"] for f in profile["facts"]["location"]] == ["用户住在上海"]


def test_projection_status_and_rebuild(cli_env: dict[str, str]) -> None:
    run(cli_env, "ingest", "--user", "u", EXAMPLE)
    status = run_json(cli_env, "projection", "status")
    assert status["lag"] == 0 and status["position"] == status["head"] > 0
    rebuilt = run_json(cli_env, "projection", "rebuild")
    assert rebuilt["events_projected"] == status["head"] and rebuilt["lag"] == 0
    assert run_json(cli_env, "profile", "u")["facts_count"] == 2


def test_recall_and_history(cli_env: dict[str, str]) -> None:
    run(cli_env, "ingest", "--user", "u", EXAMPLE)
    hits = run_json(cli_env, "recall", "u", "用户的老板姓张", "--top-k", "1")
    assert [h["content"] for h in hits] == ["用户的老板姓张"]
    history = run_json(cli_env, "history", "u")
    assert [e["event"] for e in history][:2] == ["Started", "MessageIngested"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ingest", "--user", "u", "  "), "message must not be empty"),
        (("ingest", "--user", "u", "--context", "[{", "hi"), "--context is not valid JSON"),
        (("recall", "u", "x", "--top-k", "0"), "top_k must be an integer from 1 to 100"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(cli_env: dict[str, str], args: tuple[str, ...], message: str) -> None:
    proc = run(cli_env, *args, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr


@pytest.mark.parametrize(
    "command",
    ["", "ingest", "ingest-file", "profile", "recall", "history", "context", "projection", "demo", "why", "eval"],
)
def test_help(command: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "factledger.entrypoints.cli", *([command] if command else []), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "usage: factledger" in proc.stdout and "--json" in proc.stdout


def test_python_dash_m_factledger_is_the_command() -> None:
    proc = subprocess.run([sys.executable, "-m", "factledger", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("factledger ")


def test_demo_on_the_embedded_default(tmp_path: Path) -> None:
    """No DATABASE_URL: factledger starts its own PostgreSQL under FACTLEDGER_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_", "DATABASE_URL"))}
    env["FACTLEDGER_HOME"] = str(tmp_path / "home")
    demo = run_json(env, "demo", "--user", "demo")
    assert (tmp_path / "home" / "pgdata" / "PG_VERSION").exists()
    location = [f["fact"] for f in demo["profile"]["facts"]["location"]]
    assert "用户住在上海" in location and "用户住在杭州" not in location
    [invalidation] = demo["invalidations"]
    assert invalidation["relation"] == "update"
    assert invalidation["triggering_message"] == "我搬到上海了"
    # The data directory is reused: a second command sees the same ledger.
    assert run_json(env, "profile", "demo")["facts_count"] == demo["profile"]["facts_count"]


def test_demo_audit_replay_diff_promote(cli_env: dict[str, str], tmp_path: Path) -> None:
    """The issue's walk-through: why, replay with a modified rule set, diff, promote."""
    demo = run_json(cli_env, "demo", "--user", "d")
    [inv] = demo["invalidations"]
    why = run_json(cli_env, "why", "d", inv["fact_id"][:8])
    assert why["invalidated"]["message"]["text"] == "我搬到上海了"
    assert why["invalidated"]["superseded_by"]["text"] == "用户住在上海"
    human = run(cli_env, "why", "d", inv["fact_id"][:8]).stdout
    assert "triggered by “我搬到上海了”" in human

    rules = tmp_path / "rules.toml"
    rules.write_text('name = "v2"\n[[drop]]\nkind = "fact"\ncategory = "relationship"\n', encoding="utf-8")
    estimate = run_json(cli_env, "replay", "--into", "v2", "--rules", str(rules), "--dry-run")
    assert estimate["messages"] == 7 and estimate["llm_calls"] == 0
    report = run_json(cli_env, "replay", "--into", "v2", "--rules", str(rules))
    assert report["finished"] and report["replayed"] == 7
    diff = run_json(cli_env, "diff", "live", "v2")
    assert diff["summary"] == [{"user_id": "d", "only_in_a": 1, "only_in_b": 0, "changed": 0, "same": 5}]
    assert "用户的老板姓张" in run(cli_env, "diff", "live", "v2").stdout
    ledgers = run_json(cli_env, "ledgers")
    assert [row["name"] for row in ledgers] == ["live", "v2"]
    promoted = run_json(cli_env, "promote", "v2")
    assert promoted["live"] == "v2"
    assert "relationship" not in run_json(cli_env, "profile", "d")["facts"]
    previous = run_json(cli_env, "profile", "d", "--ledger", promoted["previous_live"])
    assert previous["facts"]["relationship"][0]["fact"] == "用户的老板姓张"


def test_manual_corrections_from_the_cli(cli_env: dict[str, str]) -> None:
    fact = run_json(cli_env, "ingest", "--user", "m", "我住在杭州")["items"][0]
    done = run_json(cli_env, "invalidate", "m", fact["id"][:8], "--reason", "搬走了", "--actor", "ops")
    assert done["invalidated"]["relation"] == "manual" and done["invalidated"]["actor"] == "ops"
    restated = run_json(cli_env, "restate", "m", "用户住在北京", "--category", "location")
    assert restated["action"] == "observed"
    later = run_json(cli_env, "ingest", "--user", "m", "我搬到上海了")["items"][0]
    assert later["action"] == "contested"
    history = run_json(cli_env, "history", "m", "--kind", "fact")
    assert [e["event"] for e in history] == ["FactObserved", "FactInvalidated", "FactObserved", "FactContested"]
    proc = run(cli_env, "why", "m", "nope", check=False)
    assert proc.returncode == 3 and "no fact or preference id starts with 'nope'" in proc.stderr


def test_more_bad_input_gets_a_message_not_a_traceback(cli_env: dict[str, str], tmp_path: Path) -> None:
    proc = run(cli_env, "ingest", "--user", "u", "--context", "5", "hi", check=False)
    assert proc.returncode == 2 and "context must be a list" in proc.stderr
    path = tmp_path / "big.jsonl"
    path.write_text(
        json.dumps({"user_id": "t", "message": "我住在杭州"})
        + "\n"
        + json.dumps({"user_id": "t", "message": "我有车", "timestamp": 1e20})
        + "\n",
        encoding="utf-8",
    )
    proc = run(cli_env, "ingest-file", str(path), "--json", check=False)
    summary = json.loads(proc.stdout)
    assert proc.returncode == 1 and summary["ingested"] == 1
    assert "out of range" in summary["errors"][0]["error"] and summary["errors"][0]["line"] == 2
    assert run_json(cli_env, "projection", "status")["lag"] == 0
    bad_url = {**cli_env, "DATABASE_URL": "foo"}
    proc = run(bad_url, "profile", "u", check=False)
    assert proc.returncode == 2 and "DATABASE_URL" in proc.stderr and "Traceback" not in proc.stderr


def test_ingest_file_reports_a_line_that_is_not_utf8_and_reads_stdin(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        json.dumps({"user_id": "x", "message": "我住在杭州"}, ensure_ascii=False).encode("utf-8")
        + b"\n"
        + json.dumps({"user_id": "x", "message": "我有车"}, ensure_ascii=False).encode("gbk")
        + b"\n"
    )
    proc = run(cli_env, "ingest-file", str(path), "--json", check=False)
    summary = json.loads(proc.stdout)
    assert (summary["lines"], summary["ingested"], summary["failed"]) == (2, 1, 1)
    assert summary["errors"][0]["line"] == 2 and "not UTF-8" in summary["errors"][0]["error"]
    piped = run(cli_env, "ingest-file", "-", "--json", stdin=json.dumps({"user_id": "y", "message": "我叫李雷"}) + "\n")
    assert json.loads(piped.stdout)["ingested"] == 1
    assert run_json(cli_env, "profile", "y")["facts_count"] == 1
    missing = run(cli_env, "ingest-file", str(tmp_path / "nope.jsonl"), check=False)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_user_text_is_printed_literally_and_escaped(cli_env: dict[str, str]) -> None:
    result = run_json(cli_env, "ingest", "--user", "mk", "我住在[/x]北京，我喜欢[blink red]红色[/]")
    assert result["status"] == "recorded"
    for args in (("history", "mk"), ("profile", "mk"), ("recall", "mk", "北京"), ("context", "mk", "北京")):
        proc = run(cli_env, *args)
        assert "[/x]" in proc.stdout and "Traceback" not in proc.stderr
    assert "[blink red]" in run(cli_env, "history", "mk").stdout
    # An id may not carry escapes; a recorded text that does (an older version) is shown escaped.
    proc = run(cli_env, "ingest", "--user", "evil\x1b[2J", "hi", check=False)
    assert proc.returncode == 2 and "\\x1b" in proc.stderr and "\x1b" not in proc.stderr
    proc = run(cli_env, "recall", "mk", "北京\u202e", "--types", "fact")
    assert "\u202e" not in proc.stdout and "\\u202e" in proc.stdout


def test_global_options_before_the_command_are_honoured(cli_env: dict[str, str]) -> None:
    run(cli_env, "ingest", "--user", "g", "我住在杭州")
    assert json.loads(run(cli_env, "--json", "profile", "g").stdout)["facts_count"] == 1
    assert run(cli_env, "-q", "profile", "g").stderr == ""
    assert "factledger:" in run(cli_env, "profile", "g").stderr


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({}, ("projection", "follow", "--poll-interval", "0"), "must be at least 0.1 seconds"),
        ({}, ("recall", "u", "x", "--top-k", "99999999999999999999"), "top_k must be an integer from 1 to 100"),
        ({"FACTLEDGER_SCHEMA": "a'b"}, ("profile", "u"), "FACTLEDGER_SCHEMA must be letters, digits and _"),
        ({"FACTLEDGER_MAX_MESSAGE_CHARS": "lots"}, ("profile", "u"), "FACTLEDGER_MAX_MESSAGE_CHARS must be an integer"),
    ],
)
def test_odd_options_get_a_message_not_a_traceback(
    cli_env: dict[str, str], env: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    proc = run({**cli_env, **env}, *args, check=False)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
