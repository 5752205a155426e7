"""``ingest-file`` as a person meets it: which lines are already recorded (ADR 0026), a byte
order mark, blank lines and broken lines, through the CLI run as a real process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from processes import run_cli, run_cli_json

from factledger.infrastructure.config import Settings

UTF8_BOM = b"\xef\xbb\xbf"


def jsonl(path: Path, *messages: str, user: str = "mover") -> Path:
    """A chat export: one line per message, none with a message id or a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = (json.dumps({"user_id": user, "message": m}, ensure_ascii=False) + "\n" for m in messages)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def counts(summary: dict[str, int]) -> tuple[int, int]:
    return summary["ingested"], summary["already_recorded"]


def test_files_of_the_same_name_in_other_folders_are_other_files(cli_env: dict[str, str], tmp_path: Path) -> None:
    """The issue's daily exports: day3's lines equal day1's and day2's, byte for byte, at the same numbers."""
    day1 = jsonl(tmp_path / "day1" / "chat.jsonl", "我搬到上海了", "我养了一只猫")
    day2 = jsonl(tmp_path / "day2" / "chat.jsonl", "我搬到北京了", "我喜欢喝咖啡")
    day3 = jsonl(tmp_path / "day3" / "chat.jsonl", "我搬到上海了", "我喜欢喝咖啡")
    assert counts(run_cli_json(cli_env, "ingest-file", str(day1))) == (2, 0)
    assert counts(run_cli_json(cli_env, "ingest-file", str(day2))) == (2, 0)
    human = run_cli(cli_env, "ingest-file", str(day3)).stdout
    assert human.startswith("ingested 2 of 2 lines (0 already recorded"), human
    profile = run_cli_json(cli_env, "profile", "mover")
    assert [f["fact"] for f in profile["facts"]["location"]] == ["用户住在上海"]
    messages = [e for e in run_cli_json(cli_env, "history", "mover") if e["event"] == "MessageIngested"]
    assert len(messages) == 6


def test_the_same_file_run_again_records_only_the_lines_appended_since(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = jsonl(tmp_path / "logs" / "chat.jsonl", "我住在杭州", "我在阿里工作", user="log")
    assert counts(run_cli_json(cli_env, "ingest-file", str(path))) == (2, 0)
    # The same file through a link in another folder (its path resolves to the same file).
    link = tmp_path / "elsewhere" / "today.jsonl"
    link.parent.mkdir()
    link.symlink_to(path)
    assert counts(run_cli_json(cli_env, "ingest-file", str(link))) == (0, 2)
    with path.open("a", encoding="utf-8") as log:
        log.write(json.dumps({"user_id": "log", "message": "我喜欢喝咖啡"}, ensure_ascii=False) + "\n")
    assert counts(run_cli_json(cli_env, "ingest-file", str(path))) == (1, 2)


def test_source_names_a_moved_file_and_continues_an_import_an_earlier_version_began(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "export" / "chat.jsonl", "我住在杭州", "我在阿里工作", "我喜欢喝咖啡", user="old")
    raws = path.read_bytes().splitlines(keepends=True)
    # An earlier version, killed after two lines, had recorded them as NAME:LINE:HASH.
    secret = Settings.load(cli_env).installation_secret()
    for number, raw in enumerate(raws[:2], 1):
        digest = secret.hexdigest("line", raw.rstrip(b"\r\n"), 12)
        earlier = f"chat.jsonl:{number}:{digest}"
        run_cli(cli_env, "ingest", "--user", "old", "--message-id", earlier, json.loads(raw)["message"], "-q")
    summary = run_cli_json(cli_env, "ingest-file", str(path), "--source", "chat.jsonl")
    assert counts(summary) == (1, 2)

    # A file moved between two runs is the same file when both runs name it.
    first = jsonl(tmp_path / "downloads" / "export.jsonl", "我叫李雷", "我养了一只狗", user="moved")
    assert counts(run_cli_json(cli_env, "ingest-file", str(first), "--source", "export-2024-05")) == (2, 0)
    moved = tmp_path / "archive" / "2024-05.jsonl"
    moved.parent.mkdir()
    shutil.move(first, moved)
    assert counts(run_cli_json(cli_env, "ingest-file", str(moved), "--source", "export-2024-05")) == (0, 2)
    proc = run_cli(cli_env, "ingest-file", str(moved), "--source", "a\tb", expect=2)
    assert "--source 'a\\tb' contains U+0009" in proc.stderr


def test_a_byte_order_mark_blank_lines_and_a_broken_line_are_read_and_reported(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    first, second = (
        json.dumps({"user_id": "bom", "message": text}, ensure_ascii=False).encode("utf-8")
        for text in ("我住在杭州", "我在阿里工作")
    )
    path = tmp_path / "windows.jsonl"
    path.write_bytes(UTF8_BOM + first + b"\r\n\r\n" + second + b"\n  \n" + b'{"user_id": "bom", "message": "abc')
    proc = run_cli(cli_env, "ingest-file", str(path), "--json", expect=1)
    summary = json.loads(proc.stdout)
    assert (summary["lines"], summary["blank_lines"], summary["ingested"], summary["failed"]) == (5, 2, 2, 1)
    [error] = summary["errors"]
    assert error == {"line": 5, "error": "line 5: not valid JSON (Unterminated string starting at column 31)"}
    again = run_cli(cli_env, "ingest-file", str(path), expect=1)
    assert again.stdout.startswith("ingested 0 of 5 lines (2 blank, 2 already recorded"), again.stdout
    assert "starting at column 31" in again.stderr and "at at" not in again.stderr
