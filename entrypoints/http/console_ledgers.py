"""The ledgers page (admin): the tenant's ledgers and their replays' progress, a replayed
ledger's diff against live (per user, side by side), and promoting one after typing its name."""

from __future__ import annotations

from typing import Any

from factledger.entrypoints.http.console_html import (
    esc,
    form,
    href,
    link,
    path_part,
    select,
    table,
    text_input,
    when,
)
from factledger.entrypoints.http.console_session import Visitor
from factledger.entrypoints.http.console_text import say

DIFF_USERS_SHOWN = 200
LIVE = "live"


def ledger_path(name: str) -> str:
    return f"/console/ledgers/{path_part(name)}"


def ledgers_page(visitor: Visitor, jobs: Any, notice: str) -> tuple[str, str]:
    lang = visitor.language
    rows = []
    for entry in visitor.caller.service.ledgers():
        name = str(entry["name"])
        job = jobs.get(visitor.caller.tenant, name)
        progress = f"{job.state} {job.processed}/{job.total}" if job is not None else ""
        rows.append(
            [
                esc(name) if name == LIVE else link(ledger_path(name), name),
                esc(entry.get("extractor_id")),
                esc(entry.get("source")),
                esc(entry.get("events")),
                esc(entry.get("replay_position")),
                when(entry.get("created_at")),
                esc(progress),
            ]
        )
    headers = [say(lang, k) for k in ("ledger", "extractor", "source", "events", "position", "at", "state")]
    shown = f'<p class="notice" role="status">{esc(notice)}</p>' if notice else ""
    return say(lang, "ledgers"), shown + table(headers, rows) + _replay_form(visitor)


def _replay_form(visitor: Visitor) -> str:
    """Start (or resume) a replay of the live ledger into a new one, in the background."""
    lang = visitor.language
    choices = [("", say(lang, "configured")), ("offline", "offline"), ("llm", "llm")]
    fields = (
        f"<p class='muted'>{esc(say(lang, 'replay_hint'))}</p>"
        + text_input("name", say(lang, "ledger"))
        + select("extractor", say(lang, "extractor"), choices)
    )
    body = form(visitor, "/console/ledgers/replay", fields, say(lang, "replay"))
    return f"<h2>{esc(say(lang, 'replay'))}</h2>{body}"


def ledger_page(visitor: Visitor, name: str, user_id: str) -> tuple[str, str]:
    """The diff of live (A) against ``name`` (B): a summary per user, or one user side by side."""
    lang = visitor.language
    diff = visitor.caller.service.diff(name, user_id or None)
    parts = [link("/console/ledgers", say(lang, "ledgers")), f"<h2>{esc(say(lang, 'diff'))}</h2>"]
    if user_id:
        parts.append(link(ledger_path(name), say(lang, "all_users")))
        parts.extend(_side_by_side(lang, name, d.to_dict()) for d in diff.users)
    else:
        rows = [
            [
                link(href(ledger_path(name), user=d.user_id), d.user_id),
                esc(len(d.only_in_b)),
                esc(len(d.only_in_a)),
                esc(len(d.changed)),
                esc(d.same),
            ]
            for d in diff.users[:DIFF_USERS_SHOWN]
        ]
        headers = [say(lang, k) for k in ("user", "added", "removed", "changed_items", "same")]
        parts.append(table(headers, rows) if rows else f"<p>{esc(say(lang, 'no_difference'))}</p>")
        if len(diff.users) > DIFF_USERS_SHOWN:
            parts.append(f"<p class='muted'>{DIFF_USERS_SHOWN}/{len(diff.users)}</p>")
    parts.append(_promote_form(visitor, name))
    return f"{say(lang, 'ledger')} {name}", "".join(parts)


def _item(item: dict[str, Any] | None) -> str:
    if not item:
        return ""
    css = "fact" if item.get("is_active") else "fact old"
    measure = item.get("confidence", item.get("strength"))
    return (
        f'<span class="{css}">{esc(item.get("content"))}</span> '
        f'<span class="muted">{esc(item.get("type"))} · {esc(item.get("category"))} · {esc(measure)}</span>'
    )


def _side_by_side(lang: str, name: str, user: dict[str, Any]) -> str:
    """Live on the left, the replayed ledger on the right: removed, added, then changed items."""
    rows = [[_item(a), "", esc(say(lang, "removed"))] for a in user["only_in_a"]]
    rows += [["", _item(b), esc(say(lang, "added"))] for b in user["only_in_b"]]
    for change in user["changed"]:
        what = ", ".join(f"{field}: {old} → {new}" for field, (old, new) in change["changes"].items())
        rows.append([_item(change["a"]), _item(change["b"]), esc(what)])
    if not rows:
        return f"<h3>{esc(user['user_id'])}</h3><p>{esc(say(lang, 'no_difference'))}</p>"
    return f"<h3>{esc(user['user_id'])}</h3>" + table([LIVE, name, say(lang, "changed_items")], rows)


def _promote_form(visitor: Visitor, name: str) -> str:
    lang = visitor.language
    fields = (
        f"<p>{esc(say(lang, 'promote_hint'))}</p>"
        + text_input("confirm", say(lang, "ledger"))
        + '<p><input type="checkbox" id="f-force" name="force" value="yes">'
        f'<label for="f-force" style="display:inline">{esc(say(lang, "force"))}</label></p>'
    )
    body = form(visitor, f"{ledger_path(name)}/promote", fields, say(lang, "promote"), danger=True)
    return f"<h2>{esc(say(lang, 'promote'))}</h2>{body}"
