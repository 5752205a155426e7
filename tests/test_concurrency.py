"""Many writers for one user, threads and real processes: every message once, nothing lost, nothing doubled."""

from __future__ import annotations

import json
import signal
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from processes import run_cli_json, spawn_cli, spawn_python, wait_until
from psycopg.sql import SQL, Identifier

from factledger.application.service import LedgerService
from factledger.domain.memory import UserMemory
from factledger.entrypoints.cli.lines import file_source, line_message_id
from factledger.infrastructure.config import Settings

pytestmark = pytest.mark.slow

# Statements that observe, confirm, supersede and reinforce: writers really collide on decisions.
TEXTS = [
    "我住在杭州",
    "我搬到上海了",
    "我叫李雷",
    "我有车",
    "我没有车",
    "平时喜欢简短的回复",
    "我老婆姓王",
    "我在杭州工作",
]


def assert_consistent(service: LedgerService, user: str, expected_ids: set[str]) -> None:
    """Every message once, no duplicate active fact, versions 1..N, read model equal to a rebuild."""
    events = list(service.ledger.user_events(user))
    assert [e.originator_version for e in events] == list(range(1, len(events) + 1)), "version history has gaps"
    recorded = [e.message_id for e in events if isinstance(e, UserMemory.MessageIngested)]
    duplicated = [m for m, n in Counter(recorded).items() if n > 1]
    assert not duplicated, f"recorded twice: {duplicated[:5]}"
    assert set(recorded) == expected_ids
    memory = service.ledger.find_memory(user)
    assert memory is not None
    active = Counter(f.text for f in memory.active_facts())
    assert all(n == 1 for n in active.values()), f"duplicate active facts: {active}"
    service.catch_up()
    rows = service.read_model.all_rows()
    service.rebuild_read_model()
    assert service.read_model.all_rows() == rows, "the read model differs from a rebuild"


def _writer(service: LedgerService, worker: int, count: int, errors: list[BaseException]) -> None:
    try:
        for n in range(count):
            result = service.ingest("shared", TEXTS[(worker + n) % len(TEXTS)], message_id=f"w{worker}-{n}")
            assert result.status == "recorded", result
    except BaseException as exc:
        errors.append(exc)


@pytest.mark.parametrize("shared", [True, False], ids=["one-service", "service-per-thread"])
def test_eight_threads_write_fifty_messages_each_for_one_user(
    open_service: Callable[..., LedgerService], shared: bool
) -> None:
    first = open_service()
    services = [first] * 8 if shared else [first] + [open_service() for _ in range(7)]
    errors: list[BaseException] = []
    threads = [threading.Thread(target=_writer, args=(services[w], w, 50, errors)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_consistent(first, "shared", {f"w{w}-{n}" for w in range(8) for n in range(50)})


PROCESS_WRITER = """
from factledger import open_ledger
from test_concurrency import TEXTS
worker = {worker}
with open_ledger() as ledger:
    for n in range(50):
        result = ledger.ingest("shared", TEXTS[(worker + n) % len(TEXTS)], message_id=f"p{{worker}}-{{n}}")
        assert result.status == "recorded", result
print("done", flush=True)
"""


def test_four_processes_write_fifty_messages_each_for_one_user(service: LedgerService, cli_env: dict[str, str]) -> None:
    workers = [spawn_python(cli_env, PROCESS_WRITER.format(worker=w)) for w in range(4)]
    for proc in workers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == "done", err
    assert_consistent(service, "shared", {f"p{w}-{n}" for w in range(4) for n in range(50)})


def test_four_parallel_imports_for_one_user_all_complete(
    service: LedgerService, cli_env: dict[str, str], tmp_path: Path
) -> None:
    paths, expected = [], set()
    secret = Settings.load(cli_env).installation_secret()
    for run in range(4):
        path = tmp_path / f"part{run}.jsonl"
        lines = [
            json.dumps({"user_id": "shared", "message": TEXTS[(run + n) % len(TEXTS)]}, ensure_ascii=False)
            for n in range(30)
        ]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
        source = file_source(path, secret)
        expected |= {line_message_id(source, n, line.encode(), secret) for n, line in enumerate(lines, start=1)}
    procs = [spawn_cli(cli_env, "ingest-file", str(path), "--json") for path in paths]
    summaries = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        summaries.append(json.loads(out))
    assert [s["ingested"] for s in summaries] == [30] * 4
    assert_consistent(service, "shared", expected)


def test_an_import_killed_and_run_again_records_each_line_once(
    service: LedgerService, cli_env: dict[str, str], tmp_path: Path, pg_uri: str, schema: str
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(
        "".join(
            json.dumps({"user_id": f"u{n % 50}", "message": TEXTS[n % len(TEXTS)]}, ensure_ascii=False) + "\n"
            for n in range(2000)
        ),
        encoding="utf-8",
    )

    def recorded() -> int:
        with psycopg.connect(pg_uri) as conn:
            row = conn.execute(
                SQL("SELECT count(*) FROM {}").format(Identifier(schema, "factledger_message_ids"))
            ).fetchone()
        return int(row[0]) if row else 0

    proc = spawn_cli(cli_env, "ingest-file", str(path), "-q", "--processes", "1")  # two: test_ingest_processes.py
    wait_until(lambda: recorded() >= 200, timeout=120, what="the import to record 200 lines")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = recorded()
    assert 200 <= partial < 2000, "the kill must land in the middle of the import"
    summary = run_cli_json(cli_env, "ingest-file", str(path))
    assert (summary["already_recorded"], summary["ingested"]) == (partial, 2000 - partial)
    assert recorded() == 2000
    assert run_cli_json(cli_env, "projection", "status")["lag"] == 0
