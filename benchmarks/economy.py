"""LLM economy against mem0: calls, tokens, embedding calls and library time per message.

Both sides run over the same conversation (/work/shared/data/economy_conversation.jsonl:
one ``ingest`` per line, with its context turns) against the same deterministic
fake OpenAI-compatible server (/work/shared/bench/mem0/fake_openai.py, which
counts calls, tokens and its own time: ``GET /stats``, ``POST /reset``).

factledger: prompt sets ``seed`` and ``combined``; every run resets the
fake's counters and uses a new ledger (new schema: empty embedding cache) with
the response cache off. Library time per message = wall time of ``ingest`` minus
the fake's time for that message's requests.

mem0: ``run.sh`` of the shared peer benchmark (its own virtual environment with
mem0ai 2.2.1, its own fake on another port, --runs repetitions), in the same
invocation; if it cannot run (no mem0ai, no network for pip, too slow), the
figures published in that benchmark's README are used and marked ``quoted``.

Targets, factledger ÷ mem0: LLM calls ≤ 1.0×, prompt tokens ≤ 0.15×, library
time ≤ 0.5×; LLM calls on small talk (谢谢, 好的): 0.

    python3 benchmarks/economy.py [--runs 5] [--mem0 run|quoted|FILE.json]
    python3 benchmarks/economy.py --quick       # smoke run: 1 run, mem0 figures quoted
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import emit, ledger, medians, note, parser, ratio, server_uri, verdict

SHARED = Path("/work/shared")
FAKE = SHARED / "bench/mem0/fake_openai.py"
RUN_SH = SHARED / "bench/mem0/run.sh"
CONVERSATION = SHARED / "data/economy_conversation.jsonl"
SMALL_TALK = {"谢谢", "好的"}
# mem0 2.2.1, 20 messages, medians of 5 runs, from /work/shared/bench/mem0/README.md (not measured here).
MEM0_QUOTED = {
    "calls_per_msg": 1.00,
    "prompt_tokens_per_msg": 8058,
    "embedding_calls_per_msg": 1.80,
    "lib_ms_per_msg": 19.6,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fake_python() -> str:
    """The shared benchmark's server environment (tiktoken: exact token counts) when it exists."""
    venv = Path(os.environ.get("BENCH_DIR", "/tmp/fl-mem0-bench")) / "srv/bin/python"
    return str(venv) if venv.exists() else sys.executable


class Fake:
    def __init__(self, conversation: Path) -> None:
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="fake_openai_", suffix=".out", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen(
            [fake_python(), str(FAKE), "--port", str(self.port), "--conversation", str(conversation)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                self.stats()
                break
            except OSError:
                time.sleep(0.1)
        self.tokenizer = Path(self.log.name).read_text().partition("tokenizer=")[2].strip() or "?"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.base + "/stats", timeout=10) as r:
            return json.load(r)  # type: ignore[no-any-return]

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(self.base + "/reset", data=b"{}", method="POST"), timeout=10)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    chat, emb = ("chat", "embeddings")
    return {
        "calls": after[chat]["requests"] - before[chat]["requests"],
        "prompt_tokens": after[chat]["prompt_tokens"] - before[chat]["prompt_tokens"],
        "completion_tokens": after[chat]["completion_tokens"] - before[chat]["completion_tokens"],
        "embedding_calls": after[emb]["requests"] - before[emb]["requests"],
        "server_ms": after[chat]["server_ms"]
        - before[chat]["server_ms"]
        + after[emb]["server_ms"]
        - before[emb]["server_ms"],
    }


def factledger_run(uri: str, fake: Fake, prompts: str, lines: list[dict[str, Any]]) -> dict[str, float]:
    fake.reset()
    overrides = {"openai_api_key": "sk-fake", "openai_base_url": fake.base + "/v1", "prompts": prompts}
    with ledger(uri, "eco", response_cache=False, **overrides) as (service, _):
        rows = []
        for line in lines:
            before = fake.stats()
            start = time.perf_counter()
            service.ingest(line["user_id"], line["message"], line.get("session_id"), line.get("context"))
            wall = (time.perf_counter() - start) * 1000
            d = delta(before, fake.stats())
            rows.append({**d, "lib_ms": wall - d["server_ms"], "small_talk": line["message"].strip() in SMALL_TALK})
    n = len(rows)
    per = {f"{k}_per_msg": sum(r[k] for r in rows) / n for k in ("calls", "prompt_tokens", "completion_tokens")}
    return {
        **per,
        "embedding_calls_per_msg": sum(r["embedding_calls"] for r in rows) / n,
        "lib_ms_per_msg": sum(r["lib_ms"] for r in rows) / n,
        "small_talk_calls": sum(r["calls"] for r in rows if r["small_talk"]),
        "small_talk_embedding_calls": sum(r["embedding_calls"] for r in rows if r["small_talk"]),
    }


def mem0_figures(source: str, runs: int, timeout: float) -> tuple[dict[str, float], str]:
    """(figures, how they were obtained): run.sh now, a JSON file it wrote, or the README's."""
    path = Path(source)
    if source == "run":
        out = Path(tempfile.mkdtemp(prefix="mem0_out_"))
        env = {**os.environ, "REPEAT": str(runs), "PORT": str(free_port()), "CONVERSATION": str(CONVERSATION)}
        env.pop("OPENAI_API_KEY", None)
        try:
            done = subprocess.run(
                ["bash", str(RUN_SH), str(out)], env=env, capture_output=True, text=True, timeout=timeout
            )
            path = out / "mem0-2.2.1.json"
            if done.returncode != 0 or not path.exists():
                note(f"mem0 run.sh failed ({done.returncode}): {done.stderr[-1500:]}")
                return MEM0_QUOTED, "quoted from /work/shared/bench/mem0/README.md (run.sh failed here)"
        except subprocess.TimeoutExpired:
            return MEM0_QUOTED, f"quoted from /work/shared/bench/mem0/README.md (run.sh took over {timeout:.0f} s)"
        how = "measured now (run.sh, mem0ai 2.2.1, qdrant)"
    elif source == "quoted" or not path.exists():
        return MEM0_QUOTED, "quoted from /work/shared/bench/mem0/README.md (not measured here)"
    else:
        how = f"measured by run.sh earlier ({path})"
    data = json.loads(path.read_text())
    per_run = []
    for run in data["runs"]:
        rows, n = run["rows"], len(run["rows"])
        per_run.append(
            {
                "calls_per_msg": sum(r["chat_requests"] for r in rows) / n,
                "prompt_tokens_per_msg": sum(r["chat_prompt_tokens"] for r in rows) / n,
                "completion_tokens_per_msg": sum(r["chat_completion_tokens"] for r in rows) / n,
                "embedding_calls_per_msg": sum(r["emb_requests"] for r in rows) / n,
                "lib_ms_per_msg": sum(r["lib_ms"] for r in rows) / n,
                "small_talk_calls": sum(r["chat_requests"] for r in rows if r["message"].strip() in SMALL_TALK),
            }
        )
    return medians(per_run), f"{how}, mem0ai {data.get('mem0_version')}, medians of {len(per_run)} runs"


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--conversation", type=Path, default=CONVERSATION)
    p.add_argument("--mem0", default="run", help="run (run.sh now), quoted (README figures), or a run.sh JSON file")
    p.add_argument("--mem0-timeout", type=float, default=900)
    args = p.parse_args()
    if args.quick:
        args.runs, args.mem0 = 1, "quoted"
    lines = [json.loads(x) for x in args.conversation.read_text(encoding="utf-8").splitlines() if x.strip()]
    uri = server_uri(args.database_url)
    fake = Fake(args.conversation)
    result: dict[str, Any] = {"benchmark": "economy", "messages": len(lines), "runs": args.runs}
    try:
        for prompts in ("seed", "combined"):
            runs = []
            for run in range(args.runs):
                runs.append(factledger_run(uri, fake, prompts, lines))
                note(
                    f"  {prompts} run {run + 1}/{args.runs}: " + ", ".join(f"{k} {v:.2f}" for k, v in runs[-1].items())
                )
            result[prompts] = medians(runs)
    finally:
        fake.close()
    mem0, how = mem0_figures(args.mem0, args.runs, args.mem0_timeout)
    result["mem0"], result["mem0_source"], result["tokenizer"] = mem0, how, fake.tokenizer
    print(f"economy: {len(lines)} messages, medians of {args.runs} runs, fake tokenizer: {fake.tokenizer}")
    print(f"  mem0: {how}")
    header = (
        f"  {'':<10}{'calls/msg':>10}{'prompt tok/msg':>16}{'compl tok/msg':>15}{'emb calls/msg':>15}{'lib ms/msg':>12}"
    )
    print(header + f"{'small-talk calls':>18}")
    for name in ("seed", "combined", "mem0"):
        f = result[name]
        print(
            f"  {name:<10}{f['calls_per_msg']:>10.2f}{f['prompt_tokens_per_msg']:>16.0f}"
            f"{f.get('completion_tokens_per_msg', float('nan')):>15.1f}{f['embedding_calls_per_msg']:>15.2f}"
            f"{f['lib_ms_per_msg']:>12.1f}{f.get('small_talk_calls', float('nan')):>18.0f}"
        )
    for name in ("seed", "combined"):
        f = result[name]
        r = {
            "calls": ratio(f["calls_per_msg"], mem0["calls_per_msg"]),
            "prompt_tokens": ratio(f["prompt_tokens_per_msg"], mem0["prompt_tokens_per_msg"]),
            "lib_time": ratio(f["lib_ms_per_msg"], mem0["lib_ms_per_msg"]),
        }
        result[f"ratios_{name}_vs_mem0"] = r
        print(
            f"  {name} / mem0: calls {verdict(r['calls'], 1.0, False)}; prompt tokens "
            f"{verdict(r['prompt_tokens'], 0.15, False)}; library time {verdict(r['lib_time'], 0.5, False)}; "
            f"small-talk LLM calls {f['small_talk_calls']:.0f} (target 0)"
        )
    emit(result)


if __name__ == "__main__":
    main()
