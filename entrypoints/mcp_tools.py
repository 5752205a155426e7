"""The memory as MCP tools: what an agent may call, in whose name, and how errors read.

Every tool works on one tenant's ledgers (``Tenants.service(tenant)``) in the
name of a ``Caller``: over streamable HTTP the API key of the request (set in
``CALLER`` by ``mcp_server.McpHttpApp``), over stdio the tenant the operator
named (or the key given with ``--key``). Tools are plain functions: the SDK
runs them on a worker thread, so the synchronous service never blocks the
event loop, and the thread sees the request's ``CALLER`` (anyio copies the
context). A ``FactledgerError`` becomes a tool error (``isError``) whose text
says what was wrong; the server keeps running. A user nothing was ever recorded
for is no error: the read tools answer the empty result with ``known`` false
(ADR 0036), whatever another tenant holds under the same id.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import attrs
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from factledger import __version__
from factledger.application.access import AccessDenied, ApiKey, NotAuthenticated, Scope
from factledger.application.error_kinds import ErrorKind, kind_of
from factledger.application.errors import FactledgerError
from factledger.application.service import LedgerService
from factledger.infrastructure.tenants import Tenants

__all__ = ["CALLER", "Caller", "build_server"]

_R = TypeVar("_R")


@attrs.frozen
class Caller:
    """Who calls the tools: a tenant, the scope they have, and the actor recorded for corrections."""

    tenant: str
    scope: Scope
    actor: str

    @classmethod
    def of_key(cls, key: ApiKey) -> Caller:
        return cls(key.tenant, key.scope, f"mcp:{key.key_id}" + (f" ({key.label})" if key.label else ""))

    @classmethod
    def operator(cls, tenant: str) -> Caller:
        """The local operator (stdio with ``--tenant``): every scope of that tenant."""
        return cls(tenant, Scope.ADMIN, f"mcp:{tenant}")


#: The caller of the request being served (set per HTTP request by the key middleware).
CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("factledger_mcp_caller", default=None)

INSTRUCTIONS = (
    "factledger is a long-term memory of what users told an assistant: facts about them and their "
    "preferences, each with its history. Call `memory_context` before answering a user, `remember` "
    "with each new user message, and `explain` / `forget_item` to audit or correct one item.\n"
    "factledger 是用户告诉助手的长期记忆：关于用户的事实和偏好，每条都有完整历史。回答前调用 "
    "`memory_context`，每条新的用户消息调用 `remember`，用 `explain` / `forget_item` 查证或更正某一条。"
)

DESCRIPTIONS = {
    "remember": (
        "Record one message the user wrote: facts and preferences are extracted from it and stored with "
        "their history. Pass message_id to make retries safe (an id seen before with the same text records "
        "nothing again; with another text it is a conflict). "
        "Needs a write key.\n"
        "记录用户的一条消息：从中提取事实和偏好，连同来历一起保存。传入 message_id 可安全重试（已记录过的 id "
        "且文本相同不会重复记录；文本不同则报冲突）。需要 write 权限的密钥。"
    ),
    "recall": (
        "Find the user's active memories (facts and preferences) and their own past messages that bear on a "
        "query, best first (by meaning and by words), each with its id, similarity and, for a message, when "
        "it was said.\n"
        "查找与查询相关的用户当前有效的记忆（事实和偏好）以及用户说过的话，最相关的在前（按语义和词语），"
        "每条带 id、相似度，消息还带说的时间。"
    ),
    "get_profile": (
        "The user's profile: their active facts and preferences, most important first, a page of each "
        "(limit, offset; by default the first 50 facts and 20 preferences). facts_total and "
        "preferences_total say how many there are.\n"
        "用户画像：当前有效的事实和偏好，按重要性排序，分页返回（limit、offset；默认前 50 条事实和 20 条偏好）。"
        "facts_total 和 preferences_total 为总数。"
    ),
    "memory_context": (
        "What to know about the user before answering a query: a text block ready for a system prompt "
        "(the profile, then memories relevant to the query, then dated snippets of what the user said), plus "
        "the same data structured. "
        "language: 'zh' or 'en' headings; 'auto' (default): the language of what it shows.\n"
        "回答某个问题前应了解的用户信息：可直接放入系统提示词的文本块（用户画像、与问题相关的记忆，以及带日期的用户原话片段），"
        "并附结构化数据。language 取 'zh' 或 'en'，决定标题语言；默认 'auto'：跟随所示内容的语言。"
    ),
    "explain": (
        "The whole life of one fact or preference (item_id, or a unique prefix of it): the message it came "
        "from, confirmations, reinforcements, contests, what it superseded and its invalidation.\n"
        "一条事实或偏好的完整经历（item_id 或其唯一前缀）：来自哪条消息、被确认、被强化、被质疑、"
        "取代了什么以及何时失效。"
    ),
    "forget_item": (
        "Mark one fact wrong (item_id, or a unique prefix): it is invalidated with your reason and stops "
        "being recalled; its history stays auditable with `explain`. Needs a write key.\n"
        "将一条事实标记为错误（item_id 或其唯一前缀）：按给出的原因使其失效，不再被召回；"
        "其历史仍可用 `explain` 查看。需要 write 权限的密钥。"
    ),
}

# Each kind of error as the agent reads it (application/error_kinds.py decides the kind).
MCP_LABELS: dict[ErrorKind, str] = {
    ErrorKind.NOT_AUTHENTICATED: "not authenticated",
    ErrorKind.SCOPE_TOO_LOW: "access denied",
    ErrorKind.NOT_FOUND: "not found",
    ErrorKind.MESSAGE_ID_REUSED: "conflict",
    ErrorKind.CONFLICT: "conflict",
    ErrorKind.BUSY: "busy, nothing was recorded; try again",
    ErrorKind.READ_MODEL_MISMATCH: "the read model holds another embedder's vectors; rebuild it",
    ErrorKind.LLM_UNAVAILABLE: "the LLM endpoint is unavailable; try again later",
    ErrorKind.LLM_REFUSED: "the LLM endpoint refused the request (key, model or URL)",
    ErrorKind.INVALID_INPUT: "invalid input",
    ErrorKind.ERROR: "error",
}

UserId = Annotated[str, Field(description="the user's id in your system / 用户在你系统中的 id")]
Query = Annotated[str, Field(description="what to look for / 要查找的内容")]
TopK = Annotated[int, Field(description="how many memories at most / 最多返回几条记忆")]
ItemId = Annotated[str, Field(description="a fact or preference id, or a unique prefix / 事实或偏好的 id 或其唯一前缀")]


def tool_error(exc: FactledgerError) -> ToolError:
    kind = MCP_LABELS[kind_of(exc)]
    return ToolError(f"{kind}: {exc}")


def _tool(method: Callable[..., _R]) -> Callable[..., _R]:
    """A tool body whose ``FactledgerError`` becomes a tool error (the signature, hence the schema, is kept)."""

    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> _R:
        try:
            return method(*args, **kwargs)
        except FactledgerError as exc:
            raise tool_error(exc) from exc

    return run


class MemoryTools:
    """The tools' bodies, bound to the tenants they serve."""

    def __init__(self, tenants: Tenants, fallback: Callable[[], Caller] | None = None) -> None:
        self.tenants = tenants
        self.fallback = fallback  # stdio: the operator's tenant, or the key given at start (checked each call)

    def _service(self, tool: str, needs: Scope) -> tuple[LedgerService, Caller]:
        caller = CALLER.get()
        if caller is None:
            if self.fallback is None:
                raise NotAuthenticated("no API key: send Authorization: Bearer flk_...")
            caller = self.fallback()
        if caller.scope < needs:
            raise AccessDenied(
                f"{tool} needs a key with scope {needs.label!r} or higher; this key's scope is {caller.scope.label!r}"
            )
        return self.tenants.service(caller.tenant), caller

    @_tool
    def remember(
        self,
        user_id: UserId,
        message: Annotated[str, Field(description="the user's message, as written / 用户消息原文")],
        session_id: Annotated[str | None, Field(description="the conversation's id / 会话 id")] = None,
        message_id: Annotated[str | None, Field(description="your id of the message (safe retries) / 消息 id")] = None,
    ) -> dict[str, Any]:
        service, _ = self._service("remember", Scope.WRITE)
        return service.ingest(user_id, message, session_id, message_id=message_id).to_dict()

    @_tool
    def recall(self, user_id: UserId, query: Query, top_k: TopK = 5) -> dict[str, Any]:
        service, _ = self._service("recall", Scope.READ)
        known = service.knows(user_id)  # first: a stranger's query is never embedded (no work, no cost)
        hits = service.recall(user_id, query, top_k=top_k) if known else []
        return {"user_id": user_id, "query": query, "known": known, "hits": [hit.to_dict() for hit in hits]}

    @_tool
    def get_profile(
        self,
        user_id: UserId,
        limit: Annotated[
            int | None,
            Field(description="how many facts and preferences, of each (default 50 facts, 20 preferences) / 每类条数"),
        ] = None,
        offset: Annotated[int, Field(description="how many of each to skip / 每类跳过的条数")] = 0,
    ) -> dict[str, Any]:
        service, _ = self._service("get_profile", Scope.READ)
        return service.profile(user_id, limit=limit, offset=offset).to_dict()

    @_tool
    def memory_context(
        self,
        user_id: UserId,
        query: Query,
        top_k: TopK = 5,
        language: Annotated[
            Literal["auto", "zh", "en"], Field(description="headings: auto (the memories' own), zh or en / 标题语言")
        ] = "auto",
    ) -> CallToolResult:
        service, _ = self._service("memory_context", Scope.READ)
        context = service.memory_context(user_id, query, top_k=top_k, language=language)
        # The text block is what an agent pastes; the structured part is the same data as JSON.
        text = TextContent(type="text", text=context.text)
        return CallToolResult(content=[text], structured_content=context.to_dict())

    @_tool
    def explain(self, user_id: UserId, item_id: ItemId) -> dict[str, Any]:
        service, _ = self._service("explain", Scope.READ)
        return service.why(user_id, item_id).to_dict()

    @_tool
    def forget_item(
        self,
        user_id: UserId,
        item_id: ItemId,
        reason: Annotated[str, Field(description="why it is wrong (recorded) / 错误原因（会被记录）")],
    ) -> dict[str, Any]:
        service, caller = self._service("forget_item", Scope.WRITE)
        fact_id = service.invalidate(user_id, item_id, reason, actor=caller.actor)
        return {"user_id": user_id, "id": fact_id, "invalidated": True, "reason": reason, "actor": caller.actor}


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = {
    "remember": ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    "forget_item": ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
}


def build_server(tenants: Tenants, fallback: Callable[[], Caller] | None = None) -> MCPServer:
    """An ``MCPServer`` with the memory tools of ``tenants``.

    ``fallback`` names the caller when no request set ``CALLER`` (stdio);
    without one, a call with no key is refused.
    """
    # log_level: the SDK calls logging.basicConfig with it (a no-op once the CLI or the host app configured logging).
    server: MCPServer = MCPServer("factledger", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    tools = MemoryTools(tenants, fallback)
    for name, description in DESCRIPTIONS.items():
        hints = WRITES.get(name, READ_ONLY)
        server.add_tool(getattr(tools, name), name=name, description=description, annotations=hints)
    return server
