"""The examples under ``examples/`` run as a reader would run them: real processes, real HTTP.

* ``chat_backend.py`` on a real uvicorn (memory backend): the second turn's
  system prompt holds what the first turn said, offline and through an
  OpenAI-compatible endpoint (the fake one of ``fake_openai``);
* ``remember_and_recall.py`` as a script, in memory and on the embedded PostgreSQL;
* ``http_client.py`` against ``factledger serve`` (embedded PostgreSQL in a
  temporary home) with a key from ``factledger keys create``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from fake_openai import EXAMPLE, FakeOpenAI
from processes import run_cli, spawn_cli, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without factledger's or OpenAI's settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_", "DATABASE_URL"))}
    return {**env, "FACTLEDGER_HOME": str(home), "PYTHONIOENCODING": "utf-8", **extra}


def answers(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def start(proc: subprocess.Popen[str], url: str, timeout: float) -> None:
    """Wait until ``proc`` answers on ``url``; its output in the error if it dies first."""

    def up() -> bool:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the server exited with {proc.returncode}\nstdout:{out}\nstderr:{err}")
        return answers(url)

    wait_until(up, timeout=timeout, what=f"the server at {url}")


def stop(proc: subprocess.Popen[str]) -> None:
    """Ctrl-C, as a person stops a server (uvicorn shuts down and the process exits cleanly)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def run_example(name: str, env: dict[str, str], *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# ---- chat_backend.py ----------------------------------------------------------------------------


def chat_backend(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "chat_backend.py"), "--port", str(port)],
        env={**env, "FACTLEDGER_BACKEND": "memory"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        start(proc, url, timeout=90)
    except BaseException:
        stop(proc)
        raise
    return proc, url


def chat(url: str, **turn: str) -> dict[str, Any]:
    response = httpx.post(url + "/chat", json=turn, timeout=60)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_the_chat_backend_tells_the_model_what_the_user_said_before(tmp_path: Path) -> None:
    proc, url = chat_backend(clean_env(tmp_path / "home"))
    try:
        first = chat(url, user_id="alice", session_id="s1", message="我在杭州工作，老板姓张，平时喜欢简短的回复")
        second = chat(url, user_id="alice", session_id="s1", message="周末去哪玩？")
        stranger = chat(url, user_id="bob", message="周末去哪玩？")
        refused = httpx.post(url + "/chat", json={"user_id": "", "message": "hi"}, timeout=30)
    finally:
        stop(proc)

    # The first turn: nothing remembered yet; what it said is recorded.
    assert "杭州" not in first["system_prompt"]
    assert set(first["remembered"]) >= {"用户在杭州工作", "用户的老板姓张"}
    # The second turn's system prompt holds the first turn's facts and preference ...
    for said in ("用户在杭州工作", "用户的老板姓张", "偏好简短的回复风格"):
        assert said in second["system_prompt"]
    # ... and offline, the reply shows what would have been sent.
    assert second["model"] == "offline"
    assert second["system_prompt"] in second["reply"]
    assert "OPENAI_API_KEY" in second["reply"]
    # Another user's memory stays out of it.
    assert "杭州" not in stranger["system_prompt"]
    assert refused.status_code == 422 and "user_id" in refused.json()["detail"]


SLOW = "慢慢想一想再回答"


def test_the_chat_backend_sends_the_memory_to_an_openai_compatible_endpoint(tmp_path: Path) -> None:
    thinking = threading.Event()
    with FakeOpenAI() as fake:
        extraction = fake.spec_answer

        def model(body: dict[str, Any]) -> str:
            system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
            if system.startswith("You are a helpful assistant"):  # the chat reply
                if body["messages"][-1]["content"] == SLOW:
                    thinking.set()
                    time.sleep(4)
                return "好的，周末可以去西湖走走。"
            return str(extraction(body))  # factledger's own extraction calls

        fake.chat_handler = model
        env = clean_env(
            tmp_path / "home",
            OPENAI_API_KEY="test-key",
            OPENAI_BASE_URL=fake.url + "/v1",
            FACTLEDGER_EMBEDDING_DIMENSION="64",
            CHAT_MODEL="fake-chat",
        )
        proc, url = chat_backend(env)
        try:
            first = chat(url, user_id="alice", message=EXAMPLE, message_id="m1")
            second = chat(url, user_id="alice", message="周末去哪玩？", message_id="m2")
            # While one turn waits for the model, the server still answers: the event loop is not blocked.
            with ThreadPoolExecutor(1) as pool:
                slow = pool.submit(chat, url, user_id="alice", message=SLOW)
                assert thinking.wait(timeout=60), slow.exception(timeout=0) if slow.done() else "no chat request"
                started = time.monotonic()
                health = httpx.get(url + "/healthz", timeout=10)
                waited = time.monotonic() - started
                assert not slow.done()
                assert slow.result(timeout=60)["reply"] == "好的，周末可以去西湖走走。"
        finally:
            stop(proc)
        replies = [body for body in fake.chat_requests() if body.get("model") == "fake-chat"]

    assert health.status_code == 200 and waited < 2, waited
    assert first["remembered"] == ["用户在杭州工作", "用户的老板姓张", "偏好简短的回复风格"]
    assert second["model"] == "fake-chat"
    assert second["reply"] == "好的，周末可以去西湖走走。"
    # What the endpoint received: the system prompt with the first turn's memory, then the user's message.
    assert len(replies) == 3
    system, user = replies[1]["messages"]
    assert system["role"] == "system" and "用户在杭州工作" in system["content"]
    assert system["content"] == second["system_prompt"]
    assert user == {"role": "user", "content": "周末去哪玩？"}
    assert "用户在杭州工作" not in replies[0]["messages"][0]["content"]


# ---- remember_and_recall.py ---------------------------------------------------------------------


def check_remember_and_recall(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "superseded fact       用户住在上海" in out  # the move replaced the old home
    profile = json.loads(out.split("== profile\n", 1)[1].split("\n== ", 1)[0])
    facts = [f["fact"] for group in profile["facts"].values() for f in group]
    assert "用户住在上海" in facts and "用户住在杭州" not in facts
    assert "The user has a dog named Max" in facts
    assert "用户住在上海" in out.split("== recall", 1)[1].split("\n== ", 1)[0]
    why = json.loads(out.split("== why ", 1)[1].split("\n", 1)[1].split("\n== ", 1)[0])
    assert why["text"] == "用户住在杭州"
    assert why["invalidated"]["superseded_by"]["text"] == "用户住在上海"
    assert "known after forget: False" in out


def test_remember_and_recall_in_memory(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home", FACTLEDGER_BACKEND="memory")
    check_remember_and_recall(run_example("remember_and_recall.py", env))


# ---- factledger serve + http_client.py ------------------------------------------------------------


def embedded_server_pid(home: Path) -> int | None:
    try:
        pid = int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    return pid if psutil.pid_exists(pid) else None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], str]]:
    """``factledger serve`` on a free port, with its own embedded PostgreSQL; (environment, URL)."""
    home = tmp_path_factory.mktemp("served") / "home"
    port = free_port()
    env = clean_env(home, FACTLEDGER_PORT=str(port))
    proc = spawn_cli(env, "serve")
    url = f"http://127.0.0.1:{port}"
    try:
        start(proc, url, timeout=240)
        yield env, url
    finally:
        stop(proc)
        # The last client leaving stops the embedded server; never leave one running.
        try:
            wait_until(lambda: embedded_server_pid(home) is None, timeout=30, what="the embedded server to stop")
        except AssertionError:
            pid = embedded_server_pid(home)
            if pid is not None:
                os.kill(pid, signal.SIGINT)
            raise


def test_remember_and_recall_on_the_embedded_postgres(served: tuple[dict[str, str], str]) -> None:
    env, _url = served  # no DATABASE_URL: the script joins the embedded server under FACTLEDGER_HOME
    check_remember_and_recall(run_example("remember_and_recall.py", env))


def test_the_http_client_example_against_a_real_server(served: tuple[dict[str, str], str]) -> None:
    env, url = served
    key = json.loads(run_cli(env, "keys", "create", "--tenant", "demo", "--scope", "write", "--json").stdout)
    assert key["token"].startswith("flk_")
    client_env = {**env, "FACTLEDGER_URL": url, "FACTLEDGER_API_KEY": key["token"]}

    proc = run_example("http_client.py", client_env, "--user", "carol")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for step in (
        "== POST /v1/users/carol/messages → 201",
        "== GET /v1/users/carol/profile → 200",
        "== GET /v1/users/carol/context → 200",
        "== GET /v1/users/carol/recall → 200",
        "== GET /v1/users/carol/history → 200",
        "/invalidate → 200",
        "== DELETE /v1/users/carol → 200",
    ):
        assert step in out, step
    assert "- 用户住在杭州" in out.split("-- the system-prompt block --", 1)[1]
    assert '"reason": "the user said it was wrong"' in out and '"is_active": false' in out
    # The client forgot the user: the server knows nothing of carol any more (an empty answer, ADR 0036).
    headers = {"Authorization": f"Bearer {key['token']}"}
    gone = httpx.get(f"{url}/v1/users/carol/profile", headers=headers, timeout=30)
    assert gone.status_code == 200 and gone.json()["known"] is False and gone.json()["facts"] == {}

    # --keep leaves the memory; a wrong key is a problem+json on stderr and exit 1.
    assert run_example("http_client.py", client_env, "--user", "dave", "--keep").returncode == 0
    kept = httpx.get(f"{url}/v1/users/dave/profile", headers=headers, timeout=30)
    assert kept.status_code == 200 and kept.json()["facts_count"] >= 1
    refused = run_example("http_client.py", {**client_env, "FACTLEDGER_API_KEY": "flk_nope_nope"})
    assert refused.returncode == 1
    assert "401" in refused.stderr and '"status": 401' in refused.stderr
