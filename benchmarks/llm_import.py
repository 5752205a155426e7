"""A bulk import through an LLM that takes its time: one worker against several (ADR 0024).

--messages messages over --users users, sorted by user as an exported chat log
is, go through ``LedgerService.ingest_many`` (what ``ingest-file`` and
``replay`` use) with the ``combined`` prompt against a small OpenAI-compatible
server started here, which answers every chat request after --latency seconds
(embeddings: the offline embedder, so only the model's latency counts). One new
ledger (schema) per run and setting, the response cache off. Reports msg/s with
``bulk_workers=1`` and ``bulk_workers=--workers``, the most requests the server
saw in flight, and the ratio.

    python3 benchmarks/llm_import.py [--messages 240] [--users 40] [--latency 0.2] [--workers 8] [--runs 5]
    python3 benchmarks/llm_import.py --quick        # smoke run: 12 messages, 4 users, 1 run
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from common import emit, ledger, medians, note, parser, ratio, server_uri

from factledger.application.ingestion import Incoming

CITIES = ["杭州", "上海", "成都", "南京", "武汉", "西安", "广州", "厦门"]
JOBS = ["老师", "程序员", "护士", "设计师", "厨师", "律师"]


class SlowModel:
    """Answers the combined prompt with the facts of the user's message, after ``latency`` seconds."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.in_flight = self.most_in_flight = self.requests = 0
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                data = json.dumps(model.answer(body), ensure_ascii=False).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            time.sleep(self.latency)
            prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
            said = re.search(r'用户(?:最新)?说："(.*?)"\s*\n', prompt)
            text = said.group(1) if said else ""
            facts = [{"fact": "用户" + text.removeprefix("我"), "category": "other", "confidence": 0.9}] if text else []
            content = json.dumps({"facts": facts, "preferences": []}, ensure_ascii=False)
            return {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "slow"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": len(prompt) // 2, "completion_tokens": len(content) // 2},
            }
        finally:
            with self.lock:
                self.in_flight -= 1

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def log(messages: int, users: int) -> list[Incoming]:
    """Each user says where they live and what they do, and moves: sorted by user."""
    per_user = max(1, messages // users)
    out = []
    for u in range(users):
        for n in range(per_user):
            said = f"我住在{CITIES[(u + n) % len(CITIES)]}" if n % 2 == 0 else f"我是{JOBS[(u + n) % len(JOBS)]}"
            out.append(Incoming(f"user-{u:04d}", said, message_id=f"m{n}"))
    return out[:messages]


def one_run(uri: str, model: SlowModel, messages: list[Incoming], workers: int) -> dict[str, float]:
    overrides = {
        "openai_api_key": "sk-fake",
        "openai_base_url": model.url,
        "prompts": "combined",
        "embedding_model": "offline",
        "response_cache": False,
        "signal_gating": False,
        "bulk_workers": workers,
    }
    with ledger(uri, "bench_llm_import", **overrides) as (service, _):
        model.most_in_flight, before = 0, model.requests
        start = time.perf_counter()
        outcomes = service.ingest_many(messages)
        seconds = time.perf_counter() - start
        assert all(getattr(o, "status", None) == "recorded" for o in outcomes), outcomes[:3]
        return {
            "msg_per_s": len(messages) / seconds,
            "calls": model.requests - before,
            "most_in_flight": model.most_in_flight,
        }


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--messages", type=int, default=240)
    p.add_argument("--users", type=int, default=40)
    p.add_argument("--latency", type=float, default=0.2, help="seconds the model takes per chat request")
    p.add_argument("--workers", type=int, default=8)
    args = p.parse_args()
    if args.quick:
        args.messages, args.users, args.runs = 12, 4, 1
    uri = server_uri(args.database_url)
    messages = log(args.messages, args.users)
    model = SlowModel(args.latency)
    one, many = [], []
    try:
        for run in range(args.runs):
            note(f"run {run + 1}/{args.runs}")
            one.append(one_run(uri, model, messages, 1))
            many.append(one_run(uri, model, messages, args.workers))
    finally:
        model.close()
    a, b = medians(one), medians(many)
    result = {
        "messages": len(messages),
        "users": args.users,
        "latency_s": args.latency,
        "workers": args.workers,
        "one_worker_msg_per_s": a["msg_per_s"],
        "workers_msg_per_s": b["msg_per_s"],
        "calls_per_msg": b["calls"] / len(messages),
        "most_in_flight": b["most_in_flight"],
        "ratio_workers_vs_one": ratio(b["msg_per_s"], a["msg_per_s"]),
    }
    print(
        f"llm import: {len(messages)} messages over {args.users} users, model latency {args.latency:g} s, "
        f"medians of {args.runs}: 1 worker {a['msg_per_s']:.1f} msg/s, {args.workers} workers "
        f"{b['msg_per_s']:.1f} msg/s (×{result['ratio_workers_vs_one'] or 0:.2f}; "
        f"up to {b['most_in_flight']:.0f} requests in flight)"
    )
    emit(result)


if __name__ == "__main__":
    main()
