"""The CLI with an LLM: a real subprocess, the real ``openai`` client, the fake server over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from fake_openai import EXAMPLE, FakeOpenAI

from factledger.infrastructure.llm import load_prompt_set


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm_env(cli_env: dict[str, str], fake: FakeOpenAI) -> dict[str, str]:
    return {
        **cli_env,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": fake.url + "/v1",
        "FACTLEDGER_EMBEDDING_DIMENSION": "64",
        "FACTLEDGER_LLM_RETRY_BACKOFF": "0.01",
        "FACTLEDGER_PROMPTS": "seed",  # the spec's prompts, asked as it counts them
    }


def run(env: dict[str, str], *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "factledger.entrypoints.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == expect, f"exit {proc.returncode}\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    return proc


def run_json(env: dict[str, str], *args: str, expect: int = 0) -> Any:
    return json.loads(run(env, *args, "--json", expect=expect).stdout)


def spec_result(result: dict[str, Any]) -> None:
    assert result["facts"] == ["用户在杭州工作", "用户的老板姓张"]
    assert result["preferences"] == ["偏好简短的回复风格"]
    assert [i["category"] for i in result["items"]] == ["location", "relationship", "communication_style"]


def test_the_seed_example_costs_two_calls_and_thanks_none(llm_env: dict[str, str], fake: FakeOpenAI) -> None:
    proc = run(llm_env, "ingest", "--user", "u", "--json", EXAMPLE)
    assert "extractor openai:gpt-4o-mini/seed — LLM" in proc.stderr
    example = json.loads(proc.stdout)
    spec_result(example)
    thanks = run_json(llm_env, "ingest", "--user", "u", "谢谢")
    report = run_json(llm_env, "usage", "--user", "u")
    by_id = {m["message_id"]: m for m in report["messages"]}
    assert by_id[thanks["message_id"]]["calls"] == 0
    assert by_id[thanks["message_id"]]["text"] == "谢谢"
    assert by_id[example["message_id"]]["calls"] == 2  # the fact call and the preference call
    assert by_id[example["message_id"]]["input_tokens"] > 0
    assert report["totals"]["calls"] == 2 == len(fake.chat_requests())
    history = run_json(llm_env, "history", "u")
    prompt_id = load_prompt_set("seed").id + "+said"  # told when each message was said, beside the spec's prompts
    assert {e["extraction"]["prompt_id"] for e in history if e["event"] == "ExtractionRecorded"} == {prompt_id}
    assert {e["prompt_id"] for e in history if e["event"] in ("FactObserved", "PreferenceObserved")} == {prompt_id}


def test_the_combined_example_costs_one_call(llm_env: dict[str, str], fake: FakeOpenAI) -> None:
    example = run_json(llm_env, "ingest", "--user", "u", "--prompts", "combined", EXAMPLE)
    spec_result(example)
    assert example["extractor_id"] == "openai:gpt-4o-mini/combined"
    report = run_json(llm_env, "usage")
    [message] = report["messages"]
    assert (message["message_id"], message["calls"]) == (example["message_id"], 1)
    assert len(fake.chat_requests()) == 1


def test_a_broken_prompt_file_is_a_clear_error(llm_env: dict[str, str], tmp_path: Path) -> None:
    seed = resources.files("factledger.infrastructure.llm").joinpath("prompts/seed.toml").read_text(encoding="utf-8")
    broken = tmp_path / "broken.toml"
    broken.write_text(seed.replace('用户说："{user_message}"\n\n规则', "用户说：\n\n规则", 1), encoding="utf-8")
    proc = run(llm_env, "ingest", "--user", "u", "--prompts", str(broken), EXAMPLE, expect=2)
    assert "template 'fact' is missing the placeholder(s) {user_message}" in proc.stderr


def test_retry_failed_extracts_what_failed(llm_env: dict[str, str], fake: FakeOpenAI) -> None:
    env = {**llm_env, "FACTLEDGER_PROMPTS": "combined"}
    fake.script("no json here", "still none")
    failed = run_json(env, "ingest", "--user", "u", EXAMPLE)
    assert failed["status"] == "extraction_failed"
    summary = run_json(env, "retry-failed", "--user", "u")
    assert (summary["retried"], summary["recorded"], summary["still_failing"]) == (1, 1, 0)
    spec_result(summary["results"][0])


def test_a_wrong_key_is_a_clear_error(llm_env: dict[str, str], fake: FakeOpenAI) -> None:
    from fake_openai import Reply

    fake.script(Reply(status=401, body={"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}))
    proc = run(llm_env, "ingest", "--user", "u", EXAMPLE, expect=2)
    assert "OPENAI_API_KEY" in proc.stderr and "401" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_eval_scores_the_llm_extractor_when_a_key_is_set(
    llm_env: dict[str, str], fake: FakeOpenAI, tmp_path: Path
) -> None:
    path = tmp_path / "tiny.jsonl"
    path.write_text(
        json.dumps(
            {"id": "a", "utterance": EXAMPLE, "context": [], "gold_persona": ["我在杭州工作"]}, ensure_ascii=False
        )
        + "\n"
        + json.dumps({"id": "b", "utterance": "谢谢", "context": [], "gold_persona": []}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    report = run_json(llm_env, "eval", "--prompts", "combined", str(path))
    assert report["extractor_id"] == "openai:gpt-4o-mini/combined"
    assert len(fake.chat_requests()) == 1, "谢谢 is gated; the example costs one combined call"
    assert report["detection"]["recall"] == 1.0


def test_replay_dry_run_counts_llm_calls_and_a_prompt_replay_is_diffed(
    llm_env: dict[str, str], cli_env: dict[str, str], fake: FakeOpenAI
) -> None:
    offline = {k: v for k, v in cli_env.items() if not k.startswith("OPENAI_")}
    run(offline, "ingest", "--user", "u", EXAMPLE)
    run(offline, "ingest", "--user", "u", "谢谢")
    estimate = run_json(llm_env, "replay", "--into", "v2", "--prompts", "combined", "--dry-run")
    assert (estimate["messages"], estimate["llm_messages"], estimate["llm_calls"]) == (2, 1, 1)
    assert estimate["input_tokens"] > 0 and estimate["extractor_id"] == "openai:gpt-4o-mini/combined"
    assert len(fake.chat_requests()) == 0, "a dry run calls nothing"
    report = run_json(llm_env, "replay", "--into", "v2", "--prompts", "combined")
    assert report["finished"] and report["replayed"] == 2
    assert len(fake.chat_requests()) == 1
    # The replay's call belongs to v2, not to the live ledger the messages came from.
    assert run_json(llm_env, "usage", "--ledger", "v2")["totals"]["calls"] == 1
    assert run_json(llm_env, "usage")["totals"]["calls"] == 0
    history = run_json(llm_env, "history", "u", "--ledger", "v2", "--kind", "message")
    assert {e["extraction"]["extractor_id"] for e in history if e["event"] == "ExtractionRecorded"} == {
        "openai:gpt-4o-mini/combined"
    }
    # The offline live ledger and the LLM ledger used different embedders: diff matches by text.
    diff = run_json(offline, "diff", "live", "v2")
    assert diff["summary"][0]["only_in_a"] == diff["summary"][0]["only_in_b"] == 0


@pytest.mark.parametrize("workers", ["1", "4"])
def test_an_import_asks_for_as_many_users_at_once_as_workers_says(
    llm_env: dict[str, str], fake: FakeOpenAI, tmp_path: Path, workers: str
) -> None:
    fake.chat_delay = 0.1
    path = tmp_path / "log.jsonl"
    # (other words each: the response cache would answer the same words said again)
    lines = [{"user_id": f"u{n}", "message": f"{EXAMPLE}，第{n}{k}条"} for n in range(6) for k in range(2)]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    done = run_json(llm_env, "ingest-file", str(path), "--workers", workers)
    assert done["ingested"] == 12 and not done["failed"]
    assert (fake.most_in_flight >= 2) == (workers != "1")


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_wrong_key_stops_a_bulk_import_at_once(
    llm_env: dict[str, str], fake: FakeOpenAI, tmp_path: Path, processes: str
) -> None:
    fake.down = {"chat": 401, "embeddings": 401}
    path = tmp_path / "many.jsonl"
    path.write_text(
        "".join(json.dumps({"user_id": f"u{n}", "message": EXAMPLE}, ensure_ascii=False) + "\n" for n in range(20)),
        encoding="utf-8",
    )
    proc = run(llm_env, "ingest-file", str(path), "--processes", processes, expect=2)
    assert proc.stderr.count("OPENAI_API_KEY") == 1 and "Traceback" not in proc.stderr
    assert len(fake.requests) == 1, "one refused call, not one per line (nor one per process)"
    if processes != "1":  # the first line goes alone to its worker: the error names it
        assert "line 1 (worker " in proc.stderr and "run the same command again" in proc.stderr
