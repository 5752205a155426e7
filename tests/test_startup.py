"""Several processes starting at once on a new home, and clients that die without saying goodbye."""

from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path

import psutil
import pytest
from processes import run_cli, run_cli_json, spawn_cli, wait_until

pytestmark = pytest.mark.slow


def embedded_env(cli_env: dict[str, str], home: Path) -> dict[str, str]:
    """The CLI's environment with no DATABASE_URL: it starts its own server under ``home``."""
    env = {k: v for k, v in cli_env.items() if k not in ("DATABASE_URL", "FACTLEDGER_SCHEMA")}
    return {**env, "FACTLEDGER_HOME": str(home)}


def server_pid(home: Path) -> int | None:
    """The running embedded server's process id, or None when it is stopped."""
    pidfile = home / "pgdata" / "postmaster.pid"
    try:
        pid = int(pidfile.read_text().split()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    return pid if psutil.pid_exists(pid) else None


def clients(home: Path) -> list[int]:
    """The process ids the embedded server counts as its clients."""
    try:
        return list(json.loads((home / "pgdata" / ".handle_pids.json").read_text()))
    except (FileNotFoundError, ValueError):
        return []


def test_eight_processes_start_together_on_a_new_home_and_the_server_stops_after_them(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "fresh-home"
    env = embedded_env(cli_env, home)
    procs = [spawn_cli(env, "ingest", "--user", "u", "--message-id", f"m{n}", f"我住在杭州{n}") for n in range(8)]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    history = run_cli_json(env, "history", "u", "--kind", "message")
    assert sorted(e["message_id"] for e in history if e["event"] == "MessageIngested") == [f"m{n}" for n in range(8)]
    wait_until(lambda: server_pid(home) is None, timeout=30, what="the embedded server to stop after its last client")


def test_eight_processes_start_together_on_a_new_schema(cli_env: dict[str, str]) -> None:
    env = {**cli_env, "FACTLEDGER_SCHEMA": f"s_{uuid.uuid4().hex[:10]}"}
    procs = [spawn_cli(env, "ingest", "--user", f"u{n}", "我住在杭州") for n in range(8)]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert run_cli_json(env, "projection", "status")["lag"] == 0


def test_a_killed_client_does_not_keep_the_embedded_server_running(cli_env: dict[str, str], tmp_path: Path) -> None:
    home = tmp_path / "home-with-a-crash"
    env = embedded_env(cli_env, home)
    run_cli(env, "ingest", "--user", "u", "我住在杭州")
    follower = spawn_cli(env, "projection", "follow")
    try:
        wait_until(lambda: follower.pid in clients(home), timeout=60, what="the follower to join the server")
    finally:
        follower.send_signal(signal.SIGKILL)  # it never removes itself from the server's client list
        follower.wait()
    pid = server_pid(home)
    assert pid is not None, "the server outlives a client killed with -9 ..."
    run_cli(env, "profile", "u")
    # ... until the next client's clean exit: it drops the dead one and, being the last, stops the server.
    wait_until(lambda: server_pid(home) is None, timeout=30, what="the embedded server to stop")
    assert os.path.exists(home / "pgdata" / "PG_VERSION")
