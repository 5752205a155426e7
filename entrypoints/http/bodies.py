"""Request bodies. Only shapes are checked here; the service checks lengths and values
(``InvalidInput``, a 422 naming the field), so the limits live in one place."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field

from factledger.entrypoints.http.problems import Problem


def json_content(request: Request) -> None:
    """415 for a body declared as anything but JSON: FastAPI would read it as bytes and answer a
    422 about the body's shape, which sends a caller looking in the wrong place."""
    declared = request.headers.get("content-type")
    if request.method not in ("POST", "PUT", "PATCH") or declared is None:
        return  # no declared type is read as JSON (what curl -d and most clients send)
    media_type = declared.split(";", 1)[0].strip().lower()
    if media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json")):
        return
    raise Problem(
        415,
        "unsupported-media-type",
        f"the body is declared as {media_type!r}; send it as application/json",
        field="body",
        headers={"Accept-Post": "application/json"},
    )


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Turn(_Body):
    role: str = Field(description="who said it: user, assistant …")
    content: str


class MessageIn(_Body):
    message: str = Field(description="what the user said", examples=["我在杭州做前端开发，平时喜欢喝美式咖啡"])
    session_id: str | None = None
    context: list[Turn] | None = Field(default=None, description="earlier turns, oldest first")
    message_id: str | None = Field(
        default=None,
        description="your id for the message: sending it again with the same text records nothing (safe "
        "retries); with another text it is a 409",
    )
    timestamp: datetime | None = Field(default=None, description="when it was said (default: now)")


# Messages in one batch request (the body's byte limit, FACTLEDGER_MAX_BODY_BYTES, applies too).
BATCH_MESSAGES = 500


class MessageBatchIn(_Body):
    messages: list[MessageIn] = Field(
        min_length=1,
        max_length=BATCH_MESSAGES,
        description=f"the user's messages, oldest first (1 to {BATCH_MESSAGES})",
    )


class InvalidateIn(_Body):
    reason: str = Field(description="why the fact is wrong (shown by why)")
    actor: str | None = Field(
        default=None, description="who says they decided: recorded as a claim beside the API key, which is the actor"
    )


class RestateIn(_Body):
    text: str = Field(description="the fact, in the third person", examples=["用户在南京工作"])
    category: str = "other"
    confidence: float = 1.0
    actor: str | None = Field(
        default=None, description="who says they decided: recorded as a claim beside the API key, which is the actor"
    )
    at: datetime | None = Field(default=None, description="when it became true (default: now)")


class ReplayIn(_Body):
    extractor: Literal["offline", "llm"] | None = Field(
        default=None, description="who re-decides (default: the configured one)"
    )
    prompts: Literal["seed", "combined"] | None = Field(default=None, description="bundled prompt set (llm)")
    users: list[str] | None = Field(default=None, description="only these users (default: every user)")
    limit: int | None = Field(default=None, ge=1, description="stop after this many messages (resume later)")


class PromoteIn(_Body):
    force: bool = Field(default=False, description="promote even if it lost an operator correction")
