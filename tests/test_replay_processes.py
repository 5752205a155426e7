"""``replay --processes N`` (ADR 0041): shares of the users replayed by real worker processes,
killed with -9 too; and ``replay(share=…)`` on both backends."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import psutil
import psycopg
import pytest
from processes import run_cli, run_cli_json, spawn_cli, wait_until
from psycopg.sql import SQL, Identifier
from scripted import MESSAGES
from test_ingest_processes import write_log

from factledger.application.errors import InvalidInput
from factledger.application.service import LedgerService


def target_schema(uri: str, base: str, name: str) -> str | None:
    """The schema of the ledger ``name`` (None before the replay has made it)."""
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            SQL("SELECT schema_name FROM {} WHERE name = %s").format(Identifier(base, "factledger_ledgers")), (name,)
        ).fetchone()
    return str(row[0]) if row else None


def ingested_events(uri: str, schema: str | None) -> tuple[int, int]:
    """(message ids recorded, MessageIngested events) in a ledger: equal when nothing is doubled."""
    if schema is None:
        return 0, 0
    with psycopg.connect(uri) as conn:
        try:
            ids = conn.execute(SQL("SELECT count(*) FROM {}").format(Identifier(schema, "factledger_message_ids")))
            count = ids.fetchone()
            events = conn.execute(
                SQL("SELECT count(*) FROM {} WHERE topic LIKE %s").format(Identifier(schema, "factledger_events")),
                ("%MessageIngested%",),
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            return 0, 0
    return int(count[0]) if count else 0, int(events[0]) if events else 0


def _per_user(env: dict[str, str], ledger: str, user: str) -> dict[str, Any]:
    """What a user's memory is in ``ledger``: profile, and history without the times it was saved at."""
    history = run_cli_json(env, "history", user, "--ledger", ledger)
    return {
        "profile": run_cli_json(env, "profile", user, "--ledger", ledger),
        "history": [{k: v for k, v in e.items() if k != "recorded_at"} for e in history],
    }


@pytest.mark.slow
def test_a_replay_on_two_processes_gives_the_ledger_one_process_gives(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    users = write_log(path, users=6, messages=60)
    run_cli_json(cli_env, "ingest-file", str(path), "--processes", "1")
    one = run_cli_json(cli_env, "replay", "--into", "one", "--extractor", "offline", "--processes", "1")
    two = run_cli_json(cli_env, "replay", "--into", "two", "--extractor", "offline", "--processes", "2")
    assert one["finished"] and two["finished"] and one["replayed"] == two["replayed"] == 60
    assert {k: v for k, v in two.items() if k != "into"} == {k: v for k, v in one.items() if k != "into"}
    for user in users:
        mine = _per_user(cli_env, "two", user)
        assert mine["profile"]["facts_count"] > 0
        assert mine == _per_user(cli_env, "one", user), user
    status = run_cli_json(cli_env, "projection", "status", "--ledger", "two")
    assert status["lag"] == 0
    again = run_cli_json(cli_env, "replay", "--into", "two", "--extractor", "offline", "--processes", "3")
    assert (again["replayed"], again["finished"]) == (0, True)  # another count resumes from the watermark


@pytest.mark.slow
@pytest.mark.parametrize("whom", ["worker", "parent"])
def test_a_replay_on_two_processes_killed_and_run_again_records_each_decision_once(
    cli_env: dict[str, str], tmp_path: Path, pg_uri: str, schema: str, whom: str
) -> None:
    path = tmp_path / "big.jsonl"
    write_log(path, users=40, messages=1200)
    run_cli_json(cli_env, "ingest-file", str(path), "--processes", "2")
    proc = spawn_cli(cli_env, "replay", "--into", "killed", "--extractor", "offline", "-q", "--processes", "2")

    def replayed() -> int:
        return ingested_events(pg_uri, target_schema(pg_uri, schema, "killed"))[1]

    wait_until(lambda: replayed() >= 150, timeout=180, what="the replay to record 150 messages")
    workers = psutil.Process(proc.pid).children()
    assert len(workers) == 2
    (workers[0] if whom == "worker" else psutil.Process(proc.pid)).send_signal(signal.SIGKILL)
    _out, err = proc.communicate(timeout=120)
    if whom == "worker":
        assert proc.returncode == 1 and "ended (killed by signal 9)" in err and "run the same command again" in err
    psutil.wait_procs(workers, timeout=120)  # a parent's death ends its workers after their group
    assert not [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    partial = replayed()
    assert 150 <= partial < 1200, "the kill must land in the middle of the replay"
    report = run_cli_json(cli_env, "replay", "--into", "killed", "--extractor", "offline", "--processes", "2")
    assert report["finished"] and report["replayed"] == 1200 - partial
    assert ingested_events(pg_uri, target_schema(pg_uri, schema, "killed")) == (1200, 1200)
    assert run_cli_json(cli_env, "projection", "status", "--ledger", "killed")["lag"] == 0


def test_bad_process_counts_are_refused_with_what_was_wrong(cli_env: dict[str, str]) -> None:
    for bad, said in (("0", "must be at least 1, got 0"), ("two", "must be a whole number, got 'two'")):
        result = run_cli(cli_env, "replay", "--into", "x", "--processes", bad, expect=2)
        assert said in result.stderr
    limited = run_cli(cli_env, "replay", "--into", "x", "--limit", "5", "--processes", "2", expect=None)
    assert limited.returncode != 0 and "--limit" in limited.stderr and "--processes 1" in limited.stderr


def test_the_shares_of_a_replay_together_give_the_whole_and_its_position(service: LedgerService) -> None:
    for i in range(24):
        service.ingest(f"u{i % 6}", MESSAGES[i % len(MESSAGES)], session_id=f"s{i}")
    service.replay("whole", "offline")
    first = service.replay("halves", "offline", share=(0, 2))
    assert first.finished and 0 < first.replayed < 24
    entries = {e.name: e for e in service.directory.entries()}  # type: ignore[union-attr]
    assert entries["halves"].replay_position == 0  # the other share has not started: nothing is done for all
    second = service.replay("halves", "offline", share=(1, 2))
    assert first.replayed + second.replayed == 24
    entries = {e.name: e for e in service.directory.entries()}  # type: ignore[union-attr]
    assert entries["halves"].replay_position == entries["whole"].replay_position
    assert service.replay("halves", "offline").replayed == 0
    with service.directory.open("halves") as halves, service.directory.open("whole") as whole:  # type: ignore[union-attr]
        halves.catch_up()
        whole.catch_up()
        for user in (f"u{i}" for i in range(6)):
            assert halves.profile(user).to_dict() == whole.profile(user).to_dict()


@pytest.mark.parametrize("share", [(2, 2), (-1, 2), (0, 0), (0,), "0/2"])
def test_a_bad_share_is_refused(service: LedgerService, share: Any) -> None:
    with pytest.raises(InvalidInput, match="share must be"):
        service.replay("x", "offline", share=share)


def test_the_first_error_of_a_worker_stops_the_replay_with_its_kind_and_worker(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text("[[drop]]\nkind = 'no such kind'\n", encoding="utf-8")
    one = run_cli(cli_env, "replay", "--into", "x", "--rules", str(rules), "--processes", "1", expect=None)
    two = run_cli(cli_env, "replay", "--into", "x", "--rules", str(rules), "--processes", "2", expect=None)
    assert one.returncode == two.returncode != 0  # the same kind of error, so the same exit status
    said = " ".join(two.stderr.split())  # the console wraps long lines where the path's length puts them
    assert "(worker " in said and "the replay stopped" in said and str(rules.name) in said
