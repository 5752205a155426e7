"""A client of the factledger HTTP API (``factledger serve``), with httpx.

Start a server and make a key (the key is printed once):

    factledger serve &                                   # http://127.0.0.1:8000
    export FACTLEDGER_API_KEY=$(factledger keys create --tenant demo --scope write)

then:

    python3 examples/http_client.py [--url http://127.0.0.1:8000] [--api-key flk_...] [--user alice] [--keep]

It records one message for a user, then reads the profile, the memory block
for a system prompt, a recall and the history, explains one fact (``why``),
marks it wrong (invalidate) and, unless ``--keep``, forgets the user, printing
each answer. Every error is ``application/problem+json``; the client prints
it and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from typing import Any

import httpx

MESSAGE = "我住在杭州，在一家银行工作，平时喜欢简短的回复"


class ApiError(Exception):
    """A response that is not 2xx; ``problem`` is its problem+json body (or the raw text)."""

    def __init__(self, response: httpx.Response) -> None:
        try:
            self.problem: Any = response.json()
        except ValueError:
            self.problem = response.text
        super().__init__(f"{response.request.method} {response.request.url.path} → {response.status_code}")


def call(client: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
    """One request; prints it with its answer and returns the answer's JSON."""
    response = client.request(method, path, **kwargs)
    if response.is_error:
        raise ApiError(response)
    data = response.json()
    print(f"\n== {method} {path} → {response.status_code}")
    print(json.dumps(data, ensure_ascii=False, indent=2))
    return data


def run(client: httpx.Client, user: str, keep: bool) -> None:
    users = f"/v1/users/{user}"

    # Ingest one message. A message_id makes a retry safe: sent again, nothing is recorded twice (200 "duplicate").
    result = call(
        client,
        "POST",
        f"{users}/messages",
        json={"message": MESSAGE, "session_id": "http-example", "message_id": f"http-example-{uuid.uuid4()}"},
    )

    # What is known about the user, and the block to put in an assistant's system prompt.
    call(client, "GET", f"{users}/profile")
    context = call(client, "GET", f"{users}/context", params={"query": "周末去哪玩", "top_k": 3, "language": "zh"})
    print(f"\n-- the system-prompt block --\n{context['text']}")

    # Memories similar to a question, and the first page of the user's events (in recorded order).
    call(client, "GET", f"{users}/recall", params={"query": "用户住在哪里", "top_k": 3})
    call(client, "GET", f"{users}/history", params={"offset": 0, "limit": 20})

    # Why: the whole life of one fact. Then an operator marks it wrong, and why says so.
    fact = next((item for item in result["items"] if item["kind"] == "fact"), None)
    if fact is None:
        print("\nno fact was extracted from the message: nothing to explain or invalidate")
    else:
        call(client, "GET", f"{users}/items/{fact['id']}")
        call(client, "POST", f"{users}/items/{fact['id']}/invalidate", json={"reason": "the user said it was wrong"})
        call(client, "GET", f"{users}/items/{fact['id']}")

    # Forget: every trace of the user is removed; a tombstone without personal data stays.
    if not keep:
        call(client, "DELETE", users)


def main() -> int:
    parser = argparse.ArgumentParser(description="Talk to a factledger server over HTTP.")
    parser.add_argument(
        "--url", default=os.environ.get("FACTLEDGER_URL", "http://127.0.0.1:8000"), help="(FACTLEDGER_URL)"
    )
    parser.add_argument("--api-key", default=os.environ.get("FACTLEDGER_API_KEY"), help="flk_... (FACTLEDGER_API_KEY)")
    parser.add_argument("--user", default="http_example_user", help="the user id to write to")
    parser.add_argument("--keep", action="store_true", help="do not forget the user at the end")
    args = parser.parse_args()
    if not args.api_key:
        parser.error("no API key: pass --api-key or set FACTLEDGER_API_KEY (factledger keys create --tenant T)")

    headers = {"Authorization": f"Bearer {args.api_key}"}
    with httpx.Client(base_url=args.url, headers=headers, timeout=60) as client:
        try:
            run(client, args.user, args.keep)
        except ApiError as exc:
            print(f"error: {exc}\n{json.dumps(exc.problem, ensure_ascii=False, indent=2)}", file=sys.stderr)
            return 1
        except httpx.HTTPError as exc:
            print(f"error: cannot reach {args.url}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
