"""A fake OpenAI-compatible HTTP server for tests: the real ``openai`` client talks to it.

It serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` on
127.0.0.1 (a random port), logs every request, and answers:

* from a per-test script (``fake.script(Reply(...), ...)``), in order, when one is queued
  (a ``Reply`` sets the status, the answer text or a raw body, headers and a delay);
* otherwise like a well-behaved model for the spec's worked example
  (``spec_answer``): the facts and preference of "我在杭州工作，老板姓张，平时喜欢简短的回复",
  "different" to every relation check, and ``[]`` for anything else.

Embeddings are deterministic hashed character n-grams of the requested size.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

EXAMPLE = "我在杭州工作，老板姓张，平时喜欢简短的回复"
EXAMPLE_FACTS = [
    {"fact": "用户在杭州工作", "category": "location", "confidence": 0.95},
    {"fact": "用户的老板姓张", "category": "relationship", "confidence": 0.9},
]
EXAMPLE_PREFERENCES = [
    {
        "preference": "偏好简短的回复风格",
        "category": "communication_style",
        "strength": 0.8,
        "evidence": "用户说'平时喜欢简短的回复'",
    },
]


@dataclass
class Reply:
    """One scripted answer."""

    content: str | None = None  # the assistant's text (chat) ...
    status: int = 200
    body: Any = None  # ... or the whole response body (dict → JSON, str → as is)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (timeouts)


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


def said(prompt: str) -> str:
    """The user's message inside a rendered prompt (用户说："…" / 用户最新说："…")."""
    match = re.search(r'用户(?:最新)?说："(.*?)"\s*\n', prompt)
    return match.group(1) if match else ""


class FakeOpenAI:
    """Start with ``with FakeOpenAI() as fake:``; point the client at ``fake.url + "/v1"``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.queue: deque[Reply] = deque()
        self.embedding_queue: deque[Reply] = deque()
        # message → (facts, preferences) the default model states for it
        self.answers: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
            EXAMPLE: (EXAMPLE_FACTS, EXAMPLE_PREFERENCES)
        }
        self.relation = "different"
        # message → the known facts the combined answer retracts (only such messages answer the key)
        self.retracted: dict[str, list[str]] = {}
        self.reject_formats: set[str] = set()  # response_format types answered with 400
        self.chat_handler: Callable[[dict[str, Any]], str] = self.spec_answer
        # An outage: every request of these kinds ("chat", "embeddings") gets this status, until cleared.
        self.down: dict[str, int] = {}
        self.chat_delay = 0.0  # seconds before every unscripted chat answer (a model that takes its time)
        self.most_in_flight = 0  # the most chat requests being answered at one moment
        self._in_flight = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                chat = self.path.endswith("/chat/completions")
                fake._count_in_flight(+1 if chat else 0)
                try:
                    status, payload, headers, delay = fake._answer(self.path, body, dict(self.headers))
                    if delay:
                        time.sleep(delay)
                finally:
                    fake._count_in_flight(-1 if chat else 0)
                data = (
                    payload
                    if isinstance(payload, bytes)
                    else (
                        payload.encode()
                        if isinstance(payload, str)
                        else json.dumps(payload, ensure_ascii=False).encode()
                    )
                )
                try:
                    self.send_response(status)
                    self.send_header("content-type", headers.pop("content-type", "application/json"))
                    self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    # ---- lifecycle ------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---- scripting and inspection ------------------------------------------------

    def script(self, *replies: Reply | str) -> None:
        """Queue chat answers (a str is a 200 answer with that text)."""
        self.queue.extend(Reply(r) if isinstance(r, str) else r for r in replies)

    def script_embeddings(self, *replies: Reply) -> None:
        self.embedding_queue.extend(replies)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/embeddings")]

    @staticmethod
    def prompt(body: dict[str, Any]) -> str:
        return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))

    # ---- answers --------------------------------------------------------------

    def spec_answer(self, body: dict[str, Any]) -> str:
        """A model that answers the spec's prompts correctly for the messages it knows."""
        prompt = self.prompt(body)
        if "判断这两个事实" in prompt or "判断这两条偏好" in prompt:  # seed's relation check, combined's two
            return self.relation
        facts, prefs = self.answers.get(said(prompt), ([], []))
        if "提取事实信息和偏好" in prompt:
            combined: dict[str, Any] = {"facts": facts, "preferences": prefs}
            if said(prompt) in self.retracted:
                combined["retracted"] = self.retracted[said(prompt)]
            return json.dumps(combined, ensure_ascii=False)
        if "提取事实信息" in prompt:
            return json.dumps(facts, ensure_ascii=False)
        if "识别偏好" in prompt:
            return json.dumps(prefs, ensure_ascii=False)
        return "[]"

    def _count_in_flight(self, change: int) -> None:
        with self._lock:
            self._in_flight += change
            self.most_in_flight = max(self.most_in_flight, self._in_flight)

    def _answer(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str], float]:
        with self._lock:
            self.requests.append({"path": path, "body": body, "headers": headers})
            kind = "chat" if path.endswith("/chat/completions") else "embeddings"
            if kind in self.down:
                return self.down[kind], error_body(self.down[kind], "the server is having a bad day"), {}, 0.0
            if path.endswith("/chat/completions"):
                fmt = (body.get("response_format") or {}).get("type")
                if fmt in self.reject_formats:
                    return 400, error_body(400, f"response_format {fmt} is not supported"), {}, 0.0
                reply = self.queue.popleft() if self.queue else Reply(self.chat_handler(body), delay=self.chat_delay)
                return self._chat(body, reply)
            if path.endswith("/embeddings"):
                reply = self.embedding_queue.popleft() if self.embedding_queue else Reply()
                return self._embeddings(body, reply)
            return 404, error_body(404, f"no route {path}"), {}, 0.0

    def _chat(self, body: dict[str, Any], reply: Reply) -> tuple[int, Any, dict[str, str], float]:
        if reply.body is not None or reply.status != 200:
            return (
                reply.status,
                reply.body if reply.body is not None else error_body(reply.status, "scripted"),
                dict(reply.headers),
                reply.delay,
            )
        content = reply.content or ""
        prompt_tokens = max(1, len(self.prompt(body)) // 2)
        completion_tokens = max(1, len(content) // 2)
        payload = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return 200, payload, dict(reply.headers), reply.delay

    def _embeddings(self, body: dict[str, Any], reply: Reply) -> tuple[int, Any, dict[str, str], float]:
        if reply.body is not None or reply.status != 200:
            return (
                reply.status,
                reply.body if reply.body is not None else error_body(reply.status, "scripted"),
                dict(reply.headers),
                reply.delay,
            )
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else texts
        size = int(body.get("dimensions") or 64)
        data = [{"object": "embedding", "index": i, "embedding": hashed_vector(t, size)} for i, t in enumerate(texts)]
        tokens = sum(max(1, len(t) // 2) for t in texts)
        payload = {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return 200, payload, dict(reply.headers), reply.delay


def hashed_vector(text: str, size: int) -> list[float]:
    """Character unigrams and bigrams hashed into ``size`` buckets, unit length."""
    vector = [0.0] * size
    grams = list(text) + [text[i : i + 2] for i in range(len(text) - 1)]
    for gram in grams:
        digest = hashlib.md5(gram.encode()).digest()
        vector[int.from_bytes(digest[:4], "little") % size] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]
