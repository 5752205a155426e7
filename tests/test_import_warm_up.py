"""The parent of ``ingest-file --processes`` / ``replay --processes`` warms the offline rules up
before it forks its workers (ADR 0045): a forked worker starts with them compiled."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from factledger.entrypoints.cli.import_processes import first_messages

TEXTS = [
    "我住在北京，在一家银行工作。",
    "I live in Paris and I work as a nurse.",
    "我不喜欢吃辣的。",
    "My sister is called Anna.",
]

# A fresh interpreter (this one has compiled the rules already): warm up or not, then fork a child
# that extracts the same texts and reports how many regular expressions it had to compile, and
# whether the warm-up left a thread behind (a fork must not copy one).
CHILD = """
import json, multiprocessing, re._compiler, sys, threading
from factledger.entrypoints.cli.import_processes import warm_up
texts = json.loads(sys.argv[1])
if sys.argv[2] == "warm":
    warm_up(texts, offline=True)
threads = threading.active_count()

def child(results):
    compiled = []
    original = re._compiler.compile
    re._compiler.compile = lambda *a, **k: compiled.append(1) or original(*a, **k)
    from factledger.infrastructure.bootstrap import offline_parts
    from factledger.infrastructure.config import Settings
    extractor, _, _ = offline_parts(Settings())
    for text in texts:
        extractor.extract(text)
    results.put(len(compiled))

context = multiprocessing.get_context("fork")
results = context.Queue()
worker = context.Process(target=child, args=(results,))
worker.start()
print(json.dumps({"compiled": results.get(timeout=120), "threads": threads}))
worker.join()
"""


def forked_worker(warm: bool) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(TEXTS), "warm" if warm else "cold"],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_worker_forked_after_the_warm_up_compiles_no_rule_again() -> None:
    cold, warm = forked_worker(False), forked_worker(True)
    assert cold["compiled"] > 100  # what every worker compiled for itself before
    assert warm["compiled"] == 0
    assert warm["threads"] == 1  # the warm-up starts no thread: forking stays safe


def test_the_warm_up_reads_the_messages_of_the_first_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    rows = [json.dumps({"user_id": "u", "message": f"m{n}"}) for n in range(40)]
    path.write_text("\n".join([rows[0], "not json", json.dumps([1]), json.dumps({"message": 3}), *rows[1:]]) + "\n")
    assert first_messages(path, most=6) == ["m0", "m1", "m2"]
    assert len(first_messages(path)) == 32 - 3
    assert first_messages(Path("-")) == []  # standard input is read once, by the import
    assert first_messages(tmp_path / "missing.jsonl") == []
