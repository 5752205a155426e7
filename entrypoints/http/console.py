"""The operator's console: ``/console``, HTML rendered here from the service, over the same
keys and tenants as the API (read scope to look, write for corrections and forgetting,
admin for ledgers).

Every page runs through ``_page`` (GET) or ``_act`` (POST): they authenticate the visitor,
check the scope (and, for a form, its CSRF token), and turn an error into an HTML page with
the error's status. A user another tenant has is 404, as in the API.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from factledger.application.access import NotAuthenticated, Scope
from factledger.application.errors import FactledgerError, InvalidInput, NotFound
from factledger.entrypoints.http.auth import key_for_token
from factledger.entrypoints.http.bodies import ReplayIn
from factledger.entrypoints.http.console_health import health_page
from factledger.entrypoints.http.console_html import CONTENT_SECURITY_POLICY, esc, href, layout, link, text_input
from factledger.entrypoints.http.console_ledgers import ledger_page, ledgers_page
from factledger.entrypoints.http.console_person import person_page, user_path, users_page
from factledger.entrypoints.http.console_records import (
    forget_page,
    message_page,
    messages_page,
    tombstones_page,
    why_page,
)
from factledger.entrypoints.http.console_session import (
    LANGUAGE_COOKIE,
    LANGUAGES,
    SESSION_COOKIE,
    SESSION_SECONDS,
    SIGN_IN_COOKIE,
    Visitor,
    check_sign_in_token,
    language_of,
    require_csrf,
    sessions_of,
    set_cookie,
    sign_in_token,
    visitor,
)
from factledger.entrypoints.http.console_text import say
from factledger.entrypoints.http.problems import Problem, status_of
from factledger.infrastructure.ledgers import LedgerError, check_ledger_name

router = APIRouter(prefix="/console", include_in_schema=False)

Build = Callable[[Visitor], tuple[str, str]]
Action = Callable[[Visitor, dict[str, str]], str]
# What a redirect after an action may announce (a fixed set: the URL never carries text to show).
NOTICES = {
    "restated": "restated_done",
    "invalidated": "invalidated_done",
    "forgotten": "forgotten_done",
    "promoted": "promoted_done",
    "replaying": "replay_started",
}


def html(page: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        page,
        status_code=status,
        headers={
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )


def _error_page(request: Request, who: Visitor | None, error: Exception) -> Response:
    status = error.status if isinstance(error, Problem) else status_of(error)[0]
    signing_in = isinstance(error, NotAuthenticated) and who is None and "authorization" not in request.headers
    if signing_in and request.method == "GET":
        return RedirectResponse(href("/console/sign-in", next=_here(request)), status_code=303)
    language = who.language if who else language_of(request)
    body = f'<p class="problem" role="alert">{esc(error)}</p><p>{link("/console/users", say(language, "back"))}</p>'
    response = html(layout(who, language, say(language, "error_title"), body), status)
    if isinstance(error, Problem):
        response.headers.update(error.headers)
    return response


def _here(request: Request) -> str:
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def _page(request: Request, scope: Scope, build: Build) -> Response:
    who: Visitor | None = None
    try:
        who = visitor(request, scope)
        title, body = build(who)
        return html(layout(who, who.language, title, body))
    except (FactledgerError, Problem) as error:
        return _error_page(request, who, error)


async def _act(request: Request, scope: Scope, action: Action) -> Response:
    """A form's action: authenticate, check the CSRF token, act, and redirect to what it returns."""
    form = await _form(request)

    def run() -> Response:
        who: Visitor | None = None
        try:
            who = visitor(request, scope)
            require_csrf(who, form)
            return RedirectResponse(action(who, form), status_code=303)
        except (FactledgerError, Problem) as error:
            return _error_page(request, who, error)

    return await run_in_threadpool(run)


async def _form(request: Request) -> dict[str, str]:
    body = (await request.body()).decode("utf-8", "replace")
    return {name: values[-1] for name, values in parse_qs(body, keep_blank_values=True).items()}


def require_user(who: Visitor, user_id: str) -> None:
    if not who.caller.service.knows(user_id):
        raise NotFound(f"no memory for user {user_id!r}")


def _local(target: str | None) -> str:
    """Where to go after signing in or switching language: a console page, never another site."""
    if target and target.startswith("/console") and not target.startswith("//") and "\\" not in target:
        return target
    return "/console/users"


# ---- signing in ----------------------------------------------------------------------------


@router.get("")
def console_root() -> Response:
    return RedirectResponse("/console/users", status_code=303)


@router.get("/sign-in")
def sign_in_page(request: Request, next: str = "") -> Response:
    return sign_in_form(request, next)


def sign_in_form(request: Request, next: str = "", failed: str = "") -> Response:
    """The sign-in form, with why the last attempt failed (never text from the URL)."""
    language = language_of(request)
    token = sign_in_token(request)
    problem = f'<p class="problem" role="alert">{esc(failed)}</p>' if failed else ""
    body = (
        f"{problem}<p>{esc(say(language, 'sign_in_hint'))}</p>"
        f'<form method="post" action="/console/sign-in"><input type="hidden" name="csrf" value="{esc(token)}">'
        f'<input type="hidden" name="next" value="{esc(_local(next))}">'
        f"{text_input('key', say(language, 'api_key'), kind='password')}"
        f'<p><button type="submit" class="primary">{esc(say(language, "sign_in"))}</button></p></form>'
    )
    response = html(layout(None, language, say(language, "sign_in"), body), 401 if failed else 200)
    set_cookie(request, response, SIGN_IN_COOKIE, token, 3600)
    return response


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    form = await _form(request)

    def run() -> Response:
        try:
            check_sign_in_token(request, form)
            token = form.get("key", "").strip()
            if not token:
                raise NotAuthenticated("enter an API key")
            key = key_for_token(request, token)
        except (FactledgerError, Problem) as error:
            if isinstance(error, NotAuthenticated):
                return sign_in_form(request, form.get("next", ""), str(error))
            return _error_page(request, None, error)
        session_id, _ = sessions_of(request).open(key.key_id)
        response = RedirectResponse(_local(form.get("next")), status_code=303)
        set_cookie(request, response, SESSION_COOKIE, session_id, SESSION_SECONDS)
        response.delete_cookie(SIGN_IN_COOKIE, path="/console")
        return response

    return await run_in_threadpool(run)


@router.post("/sign-out")
async def sign_out(request: Request) -> Response:
    def leave(who: Visitor, form: dict[str, str]) -> str:
        sessions_of(request).close(request.cookies.get(SESSION_COOKIE, ""))
        return "/console/sign-in"

    response = await _act(request, Scope.READ, leave)
    if response.status_code == 303:
        response.delete_cookie(SESSION_COOKIE, path="/console")
    return response


@router.get("/language/{language}")
def choose_language(request: Request, language: str, next: str = "") -> Response:
    response = RedirectResponse(_local(next), status_code=303)
    if language in LANGUAGES:
        set_cookie(request, response, LANGUAGE_COOKIE, language, 365 * 24 * 3600)
    return response


# ---- users ---------------------------------------------------------------------------------


@router.get("/users")
def users(request: Request, q: str = "", offset: Annotated[int, Query(ge=0)] = 0) -> Response:
    return _page(request, Scope.READ, lambda who: users_page(who, q, offset))


@router.get("/users/{user_id}")
def person(
    request: Request,
    user_id: str,
    as_of: str = "",
    clock: str = "said",
    done: str = "",
    older: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    def build(who: Visitor) -> tuple[str, str]:
        require_user(who, user_id)
        notice = say(who.language, NOTICES[done]) if done in NOTICES else ""
        return person_page(who, user_id, _moment(as_of), clock, notice, older)

    return _page(request, Scope.READ, build)


def _moment(value: str) -> datetime | None:
    """A date or date and time from the form (UTC unless it says otherwise)."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"as_of must be a date or a date and time (2026-01-31T09:30), got {value!r}") from None


@router.get("/users/{user_id}/items/{item_id}")
def item(request: Request, user_id: str, item_id: str) -> Response:
    def build(who: Visitor) -> tuple[str, str]:
        require_user(who, user_id)
        return why_page(who, user_id, item_id)

    return _page(request, Scope.READ, build)


@router.post("/users/{user_id}/items/{item_id}/invalidate")
async def invalidate(request: Request, user_id: str, item_id: str) -> Response:
    def act(who: Visitor, form: dict[str, str]) -> str:
        require_user(who, user_id)
        who.caller.service.invalidate(user_id, item_id, form.get("reason", ""), who.caller.actor)
        return href(user_path(user_id), done="invalidated")

    return await _act(request, Scope.WRITE, act)


@router.post("/users/{user_id}/facts")
async def restate(request: Request, user_id: str) -> Response:
    def act(who: Visitor, form: dict[str, str]) -> str:
        require_user(who, user_id)
        who.caller.service.restate(user_id, form.get("text", ""), form.get("category") or "other", who.caller.actor)
        return href(user_path(user_id), done="restated")

    return await _act(request, Scope.WRITE, act)


@router.get("/users/{user_id}/messages")
def messages(request: Request, user_id: str, offset: Annotated[int, Query(ge=0)] = 0) -> Response:
    def build(who: Visitor) -> tuple[str, str]:
        require_user(who, user_id)
        return messages_page(who, user_id, offset)

    return _page(request, Scope.READ, build)


@router.get("/users/{user_id}/messages/{message_id}")
def message(request: Request, user_id: str, message_id: str) -> Response:
    def build(who: Visitor) -> tuple[str, str]:
        require_user(who, user_id)
        return message_page(who, user_id, message_id)

    return _page(request, Scope.READ, build)


@router.get("/users/{user_id}/export")
def export(request: Request, user_id: str) -> Response:
    who: Visitor | None = None
    try:
        who = visitor(request, Scope.READ)
        require_user(who, user_id)
        data = who.caller.service.export(user_id)
    except (FactledgerError, Problem) as error:
        return _error_page(request, who, error)
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in user_id)[:64] or "user"
    return Response(
        json.dumps(data, ensure_ascii=False, indent=2, default=str),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="factledger-{name}.json"', "Cache-Control": "no-store"},
    )


@router.get("/users/{user_id}/forget")
def forget_form(request: Request, user_id: str) -> Response:
    return _page(request, Scope.WRITE, lambda who: forget_page(who, user_id))


@router.post("/users/{user_id}/forget")
async def forget(request: Request, user_id: str) -> Response:
    def act(who: Visitor, form: dict[str, str]) -> str:
        require_user(who, user_id)
        if form.get("confirm", "") != user_id:
            raise InvalidInput(say(who.language, "confirmation_wrong"))
        who.caller.service.forget(user_id, actor=who.caller.actor)
        return href("/console/tombstones", done="forgotten")

    return await _act(request, Scope.WRITE, act)


@router.get("/tombstones")
def tombstones(request: Request, done: str = "") -> Response:
    def build(who: Visitor) -> tuple[str, str]:
        notice = say(who.language, NOTICES[done]) if done in NOTICES else ""
        return tombstones_page(who, notice)

    return _page(request, Scope.READ, build)


@router.get("/health")
def health(request: Request) -> Response:
    return _page(request, Scope.READ, health_page)


# ---- ledgers (admin) ------------------------------------------------------------------------


@router.get("/ledgers")
def ledgers(request: Request, done: str = "") -> Response:
    def build(who: Visitor) -> tuple[str, str]:
        notice = say(who.language, NOTICES[done]) if done in NOTICES else ""
        return ledgers_page(who, request.app.state.replays, notice)

    return _page(request, Scope.ADMIN, build)


@router.post("/ledgers/replay")
async def replay(request: Request) -> Response:
    def act(who: Visitor, form: dict[str, str]) -> str:
        name = form.get("name", "").strip()
        try:
            check_ledger_name(name)
            body = ReplayIn.model_validate({"extractor": form.get("extractor") or None})
        except (LedgerError, ValueError) as error:
            raise InvalidInput(f"name: {error}" if isinstance(error, LedgerError) else str(error)) from None
        request.app.state.replays.start(who.caller, name, body)
        return href("/console/ledgers", done="replaying")

    return await _act(request, Scope.ADMIN, act)


@router.get("/ledgers/{name}")
def ledger(request: Request, name: str, user: str = "") -> Response:
    def build(who: Visitor) -> tuple[str, str]:
        if user:
            require_user(who, user)
        return ledger_page(who, name, user)

    return _page(request, Scope.ADMIN, build)


@router.post("/ledgers/{name}/promote")
async def promote(request: Request, name: str) -> Response:
    def act(who: Visitor, form: dict[str, str]) -> str:
        if form.get("confirm", "") != name:
            raise InvalidInput(say(who.language, "confirmation_wrong_ledger"))
        who.caller.service.promote(name, force=form.get("force") == "yes")
        request.app.state.tenants.reopen(who.caller.tenant)
        return href("/console/ledgers", done="promoted")

    return await _act(request, Scope.ADMIN, act)
