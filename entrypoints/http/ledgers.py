"""Tenant-wide routes: usage, the tenant's ledgers, replay (in the background), diff, promote.

Replays run in a thread of the process that was asked, one per ledger name; their state
and progress are kept in a table every server process reads (PostgreSQL; in this process
on the in-memory backend), and the ledger's own position (in the catalog) survives the
process: starting the same replay again resumes it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Annotated, Any
from urllib.parse import quote

import attrs
from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse

from factledger.application.access import AccessDenied, Scope
from factledger.application.json_values import json_ready
from factledger.entrypoints.http.auth import Admin, Caller, Reader
from factledger.entrypoints.http.bodies import PromoteIn, ReplayIn, json_content
from factledger.entrypoints.http.problems import Problem, status_of
from factledger.entrypoints.http.responses import (
    KEYED,
    WITH_BODY,
    DiffAnswer,
    LedgersAnswer,
    PromoteAnswer,
    ReplayJobAnswer,
    UsageAnswer,
    answers,
    problems,
)
from factledger.entrypoints.http.users import require_user
from factledger.infrastructure.ledgers import LedgerError, check_ledger_name
from factledger.infrastructure.server_state import SharedReplayJobs

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/v1", tags=["tenant"], dependencies=[Depends(json_content)])

LedgerName = Annotated[str, Path(description="a ledger of your tenant (see GET /v1/ledgers)")]


@attrs.define
class ReplayJob:
    """A replay running (or run), as this process or the shared table knows it."""

    tenant: str
    name: str
    state: str = "running"  # running | finished | stopped (a limit was reached) | failed | interrupted
    processed: int = 0
    total: int = 0
    started_at: float = attrs.field(factory=time.time)
    report: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ledger": self.name,
            "state": self.state,
            "processed": self.processed,
            "total": self.total,
            "started_at": self.started_at,
            "report": json_ready(self.report),
            "error": json_ready(self.error),
        }


#: how often a replay's progress is written to the shared table (seconds); its heartbeat too
PROGRESS_EVERY_S = 1.0


class ReplayJobs:
    """The replays by (tenant, ledger): in this process, or, given ``shared`` (PostgreSQL), in
    a table every server process reads (ADR 0039): a replay started through one process is
    polled through any other, and one ledger has one running replay whichever was asked."""

    def __init__(self, shared: SharedReplayJobs | None = None) -> None:
        self._jobs: dict[tuple[str, str], ReplayJob] = {}
        self._lock = threading.Lock()
        self.shared = shared

    def get(self, tenant: str, name: str) -> ReplayJob | None:
        if self.shared is None:
            return self._jobs.get((tenant, name))
        row = self.shared.get(tenant, name)
        if row is None:
            return None
        return ReplayJob(tenant, name, **{k: v for k, v in row.items() if k != "ledger"})

    def start(self, caller: Caller, name: str, body: ReplayIn) -> ReplayJob:
        job = self._claim(caller.tenant, name)
        done = threading.Event()

        def progress(processed: int, total: int) -> None:
            job.processed, job.total = processed, total

        def run() -> None:
            try:
                report = caller.service.replay(
                    name, body.extractor, prompts=body.prompts, users=body.users, limit=body.limit, progress=progress
                )
                job.report = report.to_dict()
                job.state = "finished" if report.finished else "stopped"
            except Exception as exc:
                status, slug = status_of(exc)
                job.error = {"status": status, "type": slug, "detail": str(exc)}
                job.state = "failed"
            finally:
                done.set()
                self._write(job, ended=True)

        threading.Thread(target=run, name=f"replay-{caller.tenant}-{name}", daemon=True).start()
        if self.shared is not None:
            threading.Thread(target=self._beat, args=(job, done), name=f"replay-progress-{name}", daemon=True).start()
        return job

    def _claim(self, tenant: str, name: str) -> ReplayJob:
        with self._lock:
            running = self._jobs.get((tenant, name))
            if running is not None and running.state == "running":
                raise Problem(409, "replay-running", f"a replay into {name!r} is running; GET its status")
            claimed = self.shared.claim(tenant, name) if self.shared is not None else {"started_at": time.time()}
            if claimed is None:
                raise Problem(
                    409, "replay-running", f"a replay into {name!r} is running (in another process); GET its status"
                )
            job = ReplayJob(tenant, name, started_at=claimed["started_at"])
            self._jobs[(tenant, name)] = job
            return job

    def _beat(self, job: ReplayJob, done: threading.Event) -> None:
        """Write the job's progress (and so its heartbeat) every second until it ends."""
        while not done.wait(PROGRESS_EVERY_S):
            self._write(job, ended=False)

    def _write(self, job: ReplayJob, *, ended: bool) -> None:
        if self.shared is None:
            return
        fields: dict[str, Any] = {"processed": job.processed, "total": job.total}
        if ended:
            fields.update(state=job.state, report=json_ready(job.report), error=json_ready(job.error))
        try:
            self.shared.record(job.tenant, job.name, **fields)
        except Exception:  # the database is away: the next beat (or a restart of the replay) writes it
            logger.warning("could not write the progress of the replay into %r", job.name, exc_info=True)


@router.get(
    "/usage",
    summary="LLM and embedding calls, tokens and cache hits",
    response_model=None,
    responses={**answers(UsageAnswer), **problems(*KEYED, 404)},
)
def usage(caller: Reader, user_id: str | None = None) -> dict[str, Any]:
    """Per message for one user (``user_id``), or the tenant's totals."""
    if user_id is not None:
        require_user(caller, user_id)
        if caller.service.usage_log is None:  # the in-memory backend logs no calls
            return {"totals": {}, "redacted": caller.service.ledger.redaction_counts(user_id)}
        report: dict[str, Any] = caller.service.usage(user_id)
        return report
    return {"totals": caller.service.usage_totals()}


@router.get(
    "/ledgers",
    summary="The tenant's ledgers (live, replayed, previous)",
    response_model=None,
    responses={**answers(LedgersAnswer), **problems(*KEYED)},
)
def ledgers(caller: Admin) -> dict[str, Any]:
    return {"ledgers": caller.service.ledgers()}


@router.post(
    "/ledgers/{name}/replay",
    status_code=202,
    summary="Start (or resume) a replay into a ledger",
    response_model=None,
    responses={
        **answers(ReplayJobAnswer, 202, "started: poll the Location"),
        **problems(*KEYED, *WITH_BODY, 404, 409, s409="a replay into this ledger is running"),
    },
)
def start_replay(name: LedgerName, body: ReplayIn, caller: Admin, request: Request) -> JSONResponse:
    """Re-decides the live ledger's recorded messages with another extractor into ``name``,
    in the background; the live ledger is never written. Poll ``GET`` on the same path."""
    try:  # refused now, not by a job that fails after the 202
        check_ledger_name(name)
    except LedgerError as exc:
        raise Problem(422, "invalid-input", str(exc), field="name") from None
    for user in body.users or ():
        require_user(caller, user)
    job = request.app.state.replays.start(caller, name, body)
    return JSONResponse(job.to_dict(), status_code=202, headers={"Location": quote(request.url.path)})


@router.get(
    "/ledgers/{name}/replay",
    summary="A replay's progress",
    response_model=None,
    responses={**answers(ReplayJobAnswer), **problems(*KEYED, 404)},
)
def replay_status(name: LedgerName, caller: Admin, request: Request) -> dict[str, Any]:
    job: ReplayJob | None = request.app.state.replays.get(caller.tenant, name)
    if job is not None:
        return job.to_dict()
    for entry in caller.service.ledgers():  # never replayed through a server (the CLI made it)
        if entry.get("name") == name:
            return {"ledger": name, "state": "not running here", "ledger_info": entry}
    raise Problem(404, "not-found", f"no ledger named {name!r}", field="name")


@router.get(
    "/ledgers/{name}/diff",
    summary="Compare the live ledger with another",
    response_model=None,
    responses={**answers(DiffAnswer), **problems(*KEYED, 404)},
)
def diff(name: LedgerName, caller: Reader, user_id: str | None = None) -> dict[str, Any]:
    """Per user: facts and preferences only one side has. All users need an admin key."""
    if user_id is None and not caller.key.allows(Scope.ADMIN):
        raise AccessDenied("a diff of every user needs a key with scope admin; pass user_id for one user")
    if user_id is not None:
        require_user(caller, user_id)
    return caller.service.diff(name, user_id).to_dict()


@router.post(
    "/ledgers/{name}/promote",
    summary="Make a ledger live",
    response_model=None,
    responses={**answers(PromoteAnswer), **problems(*KEYED, *WITH_BODY, 404)},
)
def promote(name: LedgerName, body: PromoteIn, caller: Admin, request: Request) -> dict[str, Any]:
    """Atomically; the old live ledger is kept under the returned name. Refused (422) when the
    ledger lost an operator correction the live one has, unless ``force``."""
    kept = caller.service.promote(name, body.force)
    request.app.state.tenants.reopen(caller.tenant)
    return {"live": name, "previous": kept}
