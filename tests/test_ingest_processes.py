"""``ingest-file --processes N`` (ADR 0034): worker processes as real processes, killed with -9 too."""

from __future__ import annotations

import json
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import psycopg
import pytest
from processes import run_cli, run_cli_json, spawn_cli, wait_until
from psycopg.sql import SQL, Identifier
from test_startup import embedded_env, server_pid

pytestmark = pytest.mark.slow

# Users move, change jobs and say things again: decisions depend on each user's order.
TEXTS = [
    "我住在杭州",
    "我在阿里巴巴当工程师",
    "我搬到上海了",
    "我喜欢喝咖啡",
    "我有车",
    "我没有车",
    "我住在上海",
    "我不喝咖啡了",
]


def write_log(path: Path, users: int, messages: int) -> list[str]:
    """``messages`` lines over ``users`` users, round robin; returns the user ids."""
    lines = [
        json.dumps(
            {"user_id": f"用户{n % users}", "message": TEXTS[(n // users + n) % len(TEXTS)], "timestamp": 1.7e9 + n},
            ensure_ascii=False,
        )
        for n in range(messages)
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return [f"用户{n}" for n in range(users)]


@pytest.fixture
def other_schema(cli_env: dict[str, str], pg_uri: str) -> Iterator[dict[str, str]]:
    """The CLI's environment on a second, empty ledger of the same server."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield {**cli_env, "FACTLEDGER_SCHEMA": name}
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))


def recorded(uri: str, schema: str) -> int:
    """Lines saved so far (0 before the import has made its tables)."""
    with psycopg.connect(uri) as conn:
        try:
            row = conn.execute(
                SQL("SELECT count(*) FROM {}").format(Identifier(schema, "factledger_message_ids"))
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            return 0
    return int(row[0]) if row else 0


def test_two_processes_record_the_same_profiles_as_one(
    cli_env: dict[str, str], other_schema: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "log.jsonl"
    users = write_log(path, users=9, messages=72)
    one = run_cli_json(cli_env, "ingest-file", str(path), "--processes", "1")
    two = run_cli_json(other_schema, "ingest-file", str(path), "--processes", "2")
    assert one == two and one["ingested"] == 72 and one["events_projected"] > 72
    for user in users:
        profile = run_cli_json(cli_env, "profile", user)
        assert profile["facts_count"] > 0
        assert run_cli_json(other_schema, "profile", user) == profile, user
        history = [_as_told(e) for e in run_cli_json(cli_env, "history", user)]
        assert [_as_told(e) for e in run_cli_json(other_schema, "history", user)] == history
    assert run_cli_json(other_schema, "projection", "status")["lag"] == 0


def _as_told(entry: dict[str, Any]) -> dict[str, Any]:
    """A history entry without the time it was saved at (the runs saved at other times)."""
    return {key: value for key, value in entry.items() if key != "recorded_at"}


def test_a_bad_line_in_a_workers_share_is_reported_by_its_number(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_log(path, users=6, messages=30)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[11] = json.dumps({"user_id": "用户\t3", "message": "我住在杭州"}, ensure_ascii=False)  # refused by a worker
    lines[20] = '{"user_id": "用户1", "message": '  # refused here, before any worker
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = run_cli_json(cli_env, "ingest-file", str(path), "--processes", "2", expect=1)
    assert (summary["ingested"], summary["failed"]) == (28, 2)
    assert [e["line"] for e in summary["errors"]] == [12, 21]
    assert summary["errors"][0]["error"].startswith("line 12: user_id") and "control character" in str(summary)
    human = run_cli(cli_env, "ingest-file", str(path), "--processes", "2", expect=1)
    assert "line 12: user_id" in human.stderr and "line 21: not valid JSON" in human.stderr


def _kill_during_import(cli_env: dict[str, str], path: Path, pg_uri: str, schema: str, whom: str) -> int:
    """Start an import on two processes, kill -9 ``whom`` ("worker" or "parent") once 200 lines
    are saved; returns the lines saved when everything has stopped."""
    proc = spawn_cli(cli_env, "ingest-file", str(path), "-q", "--processes", "2")
    wait_until(lambda: recorded(pg_uri, schema) >= 200, timeout=180, what="the import to record 200 lines")
    workers = psutil.Process(proc.pid).children()
    assert len(workers) == 2
    (workers[0] if whom == "worker" else psutil.Process(proc.pid)).send_signal(signal.SIGKILL)
    _out, err = proc.communicate(timeout=120)
    if whom == "worker":
        assert proc.returncode == 1 and "ended (killed by signal 9)" in err and "run the same command again" in err
    psutil.wait_procs(workers, timeout=120)  # a parent's death ends its workers after their batch
    assert not [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    return recorded(pg_uri, schema)


@pytest.mark.parametrize("whom", ["worker", "parent"])
def test_an_import_on_two_processes_killed_and_run_again_records_each_line_once(
    cli_env: dict[str, str], tmp_path: Path, pg_uri: str, schema: str, whom: str
) -> None:
    path = tmp_path / "big.jsonl"
    write_log(path, users=50, messages=2000)
    partial = _kill_during_import(cli_env, path, pg_uri, schema, whom)
    assert 200 <= partial < 2000, "the kill must land in the middle of the import"
    summary = run_cli_json(cli_env, "ingest-file", str(path), "--processes", "2")
    assert (summary["already_recorded"], summary["ingested"], summary["failed"]) == (partial, 2000 - partial, 0)
    assert recorded(pg_uri, schema) == 2000
    assert run_cli_json(cli_env, "projection", "status")["lag"] == 0


def test_workers_share_the_embedded_server_their_parent_started(cli_env: dict[str, str], tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    env = embedded_env(cli_env, home)
    path = tmp_path / "log.jsonl"
    users = write_log(path, users=4, messages=16)
    summary = run_cli_json(env, "ingest-file", str(path), "--processes", "2")
    assert (summary["ingested"], summary["failed"]) == (16, 0)
    assert all(run_cli_json(env, "profile", user)["facts_count"] for user in users)
    wait_until(lambda: server_pid(home) is None, timeout=30, what="the embedded server to stop after the import")


_PRELOAD_SCRIPT = """
import sys
from pathlib import Path
from factledger.entrypoints.cli.import_processes import PRELOADED, WorkerPool

out = Path(sys.argv[1])
fresh = [name for name in PRELOADED if name in sys.modules]


def work(index, inbox, reports, stop):
    found = [name for name in PRELOADED if name in sys.modules]
    (out / f"worker-{index}").write_text(f"{len(found)} of {len(PRELOADED)}")


pool = WorkerPool(2, work=work)
pool.start()
pool.close()
print(len(fresh))
"""


def test_workers_are_forked_with_what_they_import_already_imported(tmp_path: Path) -> None:
    """The parent imports what every worker needs before it forks them (issue 29): two workers
    do not each import the package and read the offline rules again."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _PRELOAD_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0", "the parent had imported none of it before the pool started"
    reports = sorted(p.read_text() for p in tmp_path.glob("worker-*"))
    assert reports == ["4 of 4", "4 of 4"]
