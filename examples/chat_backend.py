"""A chat backend that remembers its users: FastAPI + factledger embedded in-process.

Each user turn:

1. reads what factledger remembers about the user that bears on the message
   (``ledger.memory_context(user_id, query=message).text``) and puts it in the
   system prompt;
2. records the message (``ledger.ingest(...)``), so later turns know what it said;
3. answers through an OpenAI-compatible chat endpoint when ``OPENAI_API_KEY``
   is set (``OPENAI_BASE_URL`` for another endpoint, ``CHAT_MODEL`` for the
   model), otherwise with a deterministic offline reply that shows what it
   would have sent, so the example runs without a key.

Run it and talk to it:

    pip install 'factledger[server]'
    FACTLEDGER_BACKEND=memory python3 examples/chat_backend.py --port 8080
    curl -s localhost:8080/chat -H 'content-type: application/json' \\
        -d '{"user_id": "u1", "message": "我在杭州工作，平时喜欢简短的回复"}'

Without ``FACTLEDGER_BACKEND=memory`` the memory is kept in PostgreSQL
(``DATABASE_URL``, else an embedded server under ``FACTLEDGER_HOME``).

factledger's calls block (database, LLM), so the endpoint is a plain ``def``:
FastAPI runs it in its thread pool and the event loop stays free. In an
``async def`` endpoint, wrap each call: ``await asyncio.to_thread(ledger.ingest, ...)``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from factledger import FactledgerError, InvalidInput, LedgerService, StoreBusy, WriteConflict, open_ledger

# The model that writes the replies (factledger's own extraction model is FACTLEDGER_LLM_MODEL).
CHAT_MODEL = os.environ.get("CHAT_MODEL", "gpt-4o-mini")
PERSONA = "You are a helpful assistant. Answer in the user's language."


class Turn(BaseModel):
    """One user message. Give ``message_id`` to make a retried request safe (recorded once)."""

    user_id: str
    message: str
    session_id: str | None = None
    message_id: str | None = None


class Answer(BaseModel):
    reply: str
    system_prompt: str  # what the model was (or would have been) told
    model: str  # the chat model, or "offline"
    remembered: list[str]  # facts and preferences recorded from this message


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Opening the ledger may start an embedded PostgreSQL (seconds): off the event loop.
    ledger = await asyncio.to_thread(open_ledger)
    app.state.ledger = ledger
    app.state.llm = None
    if os.environ.get("OPENAI_API_KEY"):
        from openai import OpenAI  # reads OPENAI_API_KEY and OPENAI_BASE_URL

        app.state.llm = OpenAI()
    try:
        yield
    finally:
        await asyncio.to_thread(ledger.close)


app = FastAPI(title="chat backend with factledger memory", lifespan=lifespan)


@app.exception_handler(FactledgerError)
async def factledger_error(request: Request, exc: FactledgerError) -> JSONResponse:
    """Bad input is the client's fault (422); a busy database is worth a retry (503)."""
    if isinstance(exc, InvalidInput):
        status = 422
    elif isinstance(exc, StoreBusy | WriteConflict):
        status = 503
    else:
        status = 500
    return JSONResponse({"detail": str(exc)}, status_code=status)


def system_prompt(memory: str) -> str:
    """The persona, then what is remembered about the user (if anything)."""
    if not memory:
        return PERSONA
    return f"{PERSONA}\n\nWhat you remember about this user (use it when it helps):\n{memory}"


def reply(llm: Any, system: str, message: str) -> tuple[str, str]:
    """The assistant's answer and the model that wrote it."""
    if llm is None:
        # No key: show what would have been sent, deterministically (tests and demos rely on it).
        return f"[offline: set OPENAI_API_KEY for a real reply] I would send {CHAT_MODEL}:\n{system}", "offline"
    completion = llm.chat.completions.create(
        model=CHAT_MODEL,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": message}],
    )
    return completion.choices[0].message.content or "", CHAT_MODEL


@app.post("/chat")
def chat(turn: Turn, request: Request) -> Answer:
    # A plain ``def``: FastAPI runs it in a worker thread, so the blocking calls below are fine.
    ledger: LedgerService = request.app.state.ledger

    # 1. Memory from earlier turns (read before this message is recorded; the message
    #    itself goes to the model as the user's turn).
    memory = ledger.memory_context(turn.user_id, query=turn.message).text
    system = system_prompt(memory)

    # 2. Record the message. A busy backend could do this after replying instead
    #    (FastAPI's BackgroundTasks); here the next turn is sure to see it.
    result = ledger.ingest(
        turn.user_id,
        turn.message,
        session_id=turn.session_id,
        message_id=turn.message_id or str(uuid.uuid4()),
    )

    # 3. Answer.
    text, model = reply(request.app.state.llm, system, turn.message)
    return Answer(reply=text, system_prompt=system, model=model, remembered=[*result.facts, *result.preferences])


@app.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="A chat backend that remembers its users (factledger).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
