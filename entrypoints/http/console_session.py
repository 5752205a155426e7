"""Who is looking at the console: a signed-in session (a cookie) or an API key (a bearer header).

The cookie holds only a random session id; the session (the hash of that id, the id of the
key signed in with, never its secret) is kept in the database, where every server process
finds it (``serve --workers N``; in this process on the in-memory backend), and every request
checks that key again, so a revoked key ends its sessions at once. A session carries a CSRF token that every form
of the console posts back; a request with a bearer header needs none (a browser never
adds that header on its own). The sign-in form itself is protected by a double-submit
cookie, as no session exists yet.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time

import attrs
from fastapi import Request, Response

from factledger.application.access import AccessDenied, NotAuthenticated, Scope
from factledger.entrypoints.http.auth import Caller, key_for_token, key_of_session
from factledger.entrypoints.http.problems import Problem
from factledger.infrastructure.server_state import SharedSessions
from factledger.infrastructure.tenants import Tenants

SESSION_COOKIE = "factledger_console"
SIGN_IN_COOKIE = "factledger_console_sign_in"
LANGUAGE_COOKIE = "factledger_console_lang"
SESSION_SECONDS = 8 * 3600
MAX_SESSIONS = 10_000
LANGUAGES = ("en", "zh")


@attrs.define
class ConsoleSession:
    key_id: str  # the API key signed in with: its id, never its secret
    csrf: str = attrs.field(repr=False)
    expires: float


class Sessions:
    """The console's sessions by the hash of their id (idle ones expire): in this process, or,
    given ``shared`` (PostgreSQL), in a table every server process reads (ADR 0039)."""

    def __init__(
        self, ttl: float = SESSION_SECONDS, capacity: int = MAX_SESSIONS, shared: SharedSessions | None = None
    ) -> None:
        self.ttl = ttl
        self.capacity = capacity
        self.shared = shared
        self._sessions: dict[str, ConsoleSession] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(session_id: str) -> str:
        return hashlib.sha256(session_id.encode()).hexdigest()

    def open(self, key_id: str) -> tuple[str, ConsoleSession]:
        session_id = secrets.token_urlsafe(32)
        session = ConsoleSession(key_id, secrets.token_urlsafe(32), time.monotonic() + self.ttl)
        if self.shared is not None:
            self.shared.open(self._key(session_id), key_id, session.csrf)
            return session_id, session
        with self._lock:
            now = time.monotonic()
            for key in [k for k, s in self._sessions.items() if s.expires < now]:
                del self._sessions[key]
            while len(self._sessions) >= self.capacity:  # the oldest go first
                del self._sessions[next(iter(self._sessions))]
            self._sessions[self._key(session_id)] = session
        return session_id, session

    def find(self, session_id: str) -> ConsoleSession | None:
        if self.shared is not None:
            found = self.shared.find(self._key(session_id))
            return None if found is None else ConsoleSession(found[0], found[1], time.monotonic() + self.ttl)
        with self._lock:
            session = self._sessions.get(self._key(session_id))
            if session is None:
                return None
            if session.expires < time.monotonic():
                del self._sessions[self._key(session_id)]
                return None
            session.expires = time.monotonic() + self.ttl
            return session

    def close(self, session_id: str) -> None:
        if self.shared is not None:
            self.shared.close(self._key(session_id))
            return
        with self._lock:
            self._sessions.pop(self._key(session_id), None)


@attrs.frozen
class Visitor:
    """An authenticated console request: the caller, the CSRF token its forms carry (None when a
    bearer header authenticated it) and the interface language."""

    caller: Caller
    csrf: str | None
    language: str
    path: str

    def allows(self, scope: Scope) -> bool:
        return self.caller.key.allows(scope)


def sessions_of(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.console_sessions
    return sessions


def language_of(request: Request) -> str:
    """The language chosen by the switch (a cookie), else the browser's first of zh and en, else en."""
    chosen = request.cookies.get(LANGUAGE_COOKIE)
    if chosen in LANGUAGES:
        return chosen
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate(request.headers.get("accept-language", "").split(",")):
        tag, _, weight = part.strip().partition(";q=")
        try:
            quality = float(weight) if weight else 1.0
        except ValueError:
            continue
        base = tag.strip().lower().split("-")[0]
        if base in LANGUAGES and quality > 0:
            ranked.append((-quality, position, base))
    return min(ranked)[2] if ranked else "en"


def visitor(request: Request, scope: Scope) -> Visitor:
    """The console's caller with at least ``scope``: by bearer header, else by session cookie."""
    header = request.headers.get("authorization", "")
    csrf: str | None = None
    session_id = ""
    try:
        if header.lower().startswith("bearer "):
            key = key_for_token(request, header[7:].strip())
        else:
            session_id = request.cookies.get(SESSION_COOKIE, "")
            session = sessions_of(request).find(session_id)
            if session is None:
                raise NotAuthenticated("sign in with an API key")
            key, csrf = key_of_session(request, session.key_id), session.csrf
    except NotAuthenticated:
        if session_id:  # the key was revoked: its session ends here, once
            sessions_of(request).close(session_id)
        raise
    if not key.allows(scope):
        raise AccessDenied(f"this needs a key with scope {scope.label}; this key's scope is {key.scope.label}")
    tenants: Tenants = request.app.state.tenants
    path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Visitor(Caller(key, tenants.service(key.tenant)), csrf, language_of(request), path)


def require_csrf(visitor: Visitor, form: dict[str, str]) -> None:
    """403 unless a session's form carries the session's CSRF token."""
    if visitor.csrf is not None and not hmac.compare_digest(form.get("csrf", ""), visitor.csrf):
        raise Problem(403, "csrf", "the form's CSRF token is missing or wrong: reload the page and try again")


def secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/console",
        httponly=True,
        samesite="strict",
        secure=secure(request),
    )


def sign_in_token(request: Request) -> str:
    """The double-submit token of the sign-in form (the cookie's, or a new one)."""
    return request.cookies.get(SIGN_IN_COOKIE) or secrets.token_urlsafe(24)


def check_sign_in_token(request: Request, form: dict[str, str]) -> None:
    cookie = request.cookies.get(SIGN_IN_COOKIE, "")
    if not cookie or not hmac.compare_digest(form.get("csrf", ""), cookie):
        raise Problem(403, "csrf", "the sign-in form's CSRF token is missing or wrong: reload the page")
