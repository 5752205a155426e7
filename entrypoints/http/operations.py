"""The routes an operator's tooling asks, with no key: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from factledger import __version__
from factledger.entrypoints.http.problems import problem
from factledger.entrypoints.http.responses import HealthAnswer, ReadyAnswer, answers, problems

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="The process is up", response_model=None, responses=answers(HealthAnswer))
def healthz() -> dict[str, Any]:
    # ``worker``: the id of the process that answered (``serve --workers N`` runs N of them).
    return {"status": "ok", "version": __version__, "worker": os.getpid()}


@router.get(
    "/readyz",
    summary="The database answers and the read models are current",
    response_model=None,
    responses={**answers(ReadyAnswer), **problems(503, s503="not ready: the problem's `checks` say why")},
)
def readyz(request: Request) -> JSONResponse:
    state = request.app.state
    checks: dict[str, Any] = {}
    ready = True
    try:
        state.keys.ping()
        checks["database"] = "ok"
    except Exception as exc:
        ready = False
        checks["database"] = f"unreachable: {type(exc).__name__}"
    lag = 0
    for name, service in state.tenants.opened().items():
        try:
            lag = max(lag, service.read_model_status().lag)
        except Exception as exc:
            ready = False
            checks[f"tenant {name}"] = f"unreadable: {type(exc).__name__}"
    checks["projection_lag"] = lag
    if lag > state.settings.ready_max_lag:
        ready = False
    if ready:
        return JSONResponse({"status": "ready", "checks": checks})
    return problem(503, "not-ready", f"not ready: {checks}", checks=checks)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=PlainTextResponse,
    responses={200: {"description": "Prometheus text format", "content": {CONTENT_TYPE_LATEST: {}}}},
)
def metrics(request: Request) -> Response:
    return Response(generate_latest(request.app.state.metrics_registry), media_type=CONTENT_TYPE_LATEST)
