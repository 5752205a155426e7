"""Files the CLI writes (``export -o``, ``eval --predictions``), by real processes: valid JSON,
mode 0600, written whole (a temporary file renamed over the destination) or not at all."""

from __future__ import annotations

import json
import resource
import signal
import stat
import subprocess
from pathlib import Path

from processes import CLI, run_cli, run_cli_json

STORY = ["我住在杭州，在一家银行工作，老板姓张", "平时喜欢简短的回复", "我搬到上海了"]


def _tell(env: dict[str, str], user: str) -> None:
    for message in STORY:
        run_cli(env, "ingest", "--user", user, message)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _only(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _folder(tmp_path: Path) -> Path:
    """A folder of its own for what is written (``tmp_path/home`` is the CLI's)."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def test_export_to_a_file_writes_the_whole_memory_as_json_only_its_owner_can_read(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _tell(cli_env, "u")
    out = _folder(tmp_path)
    target = out / "u.json"
    summary = run_cli_json(cli_env, "export", "u", "-o", str(target))
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data == run_cli_json(cli_env, "export", "u") | {"exported_at": data["exported_at"]}
    assert summary == {"output": str(target), "messages": 3, "facts": len(data["facts"])}
    moved = next(f for f in data["facts"] if f["text"] == "用户住在杭州")
    assert moved["invalidated"]["message"]["text"] == "我搬到上海了" and moved["observed"]["at"].endswith("+00:00")
    assert _mode(target) == 0o600 and _only(out) == ["u.json"]


def test_export_replaces_an_existing_file_by_renaming_a_new_one_over_it(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _tell(cli_env, "u")
    out = _folder(tmp_path)
    target = out / "u.json"
    target.write_text("an older export\n", encoding="utf-8")
    target.chmod(0o644)
    before = target.stat().st_ino
    run_cli(cli_env, "export", "u", "-o", str(target))
    assert json.loads(target.read_text(encoding="utf-8"))["user_id"] == "u"
    # A new file took the old one's name (written in place, it would keep its inode and its mode).
    assert target.stat().st_ino != before and _mode(target) == 0o600
    assert _only(out) == ["u.json"]


def _limit_file_size() -> None:
    """In the child: files may grow to 2 KB, and a write past that fails (EFBIG) instead of killing it."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))


def test_a_failed_export_leaves_the_existing_file_untouched_and_no_partial_file(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _tell(cli_env, "u")
    out = _folder(tmp_path)
    target = out / "u.json"
    target.write_text("an older export\n", encoding="utf-8")
    # The disk "fills up" after 2 KB: the export (several KB) cannot be written whole.
    proc = subprocess.run(
        [*CLI, "export", "u", "-o", str(target)],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=_limit_file_size,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--output" in proc.stderr and "cannot write" in proc.stderr and "Traceback" not in proc.stderr
    assert target.read_text(encoding="utf-8") == "an older export\n"
    assert _only(out) == ["u.json"]


def test_export_refuses_a_destination_that_is_not_a_file(cli_env: dict[str, str], tmp_path: Path) -> None:
    _tell(cli_env, "u")
    out = _folder(tmp_path)
    proc = run_cli(cli_env, "export", "u", "-o", str(out), expect=2)
    assert "not a regular file" in proc.stderr
    proc = run_cli(cli_env, "export", "u", "-o", str(out / "missing" / "u.json"), expect=2)
    assert "cannot write there" in proc.stderr
    assert _only(out) == []


def test_eval_predictions_are_written_whole_and_private(cli_env: dict[str, str], tmp_path: Path) -> None:
    out = _folder(tmp_path)
    target = out / "predictions.jsonl"
    report = run_cli_json(cli_env, "eval", "--sample", "-q", "--predictions", str(target))
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == report["lines"] and {"id", "signal", "facts", "preferences"} == set(lines[0])
    assert _mode(target) == 0o600 and _only(out) == ["predictions.jsonl"]
