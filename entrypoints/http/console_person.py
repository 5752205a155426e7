"""A person's pages: the users list, the profile (now or as of a date), the timeline of their
facts with each supersession drawn as an arrow, and an item's whole life (``why``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from factledger.application.access import Scope
from factledger.application.people import USERS_PAGE
from factledger.application.queries import require_clock
from factledger.domain.categories import FACT_CATEGORIES
from factledger.domain.language import main_language
from factledger.domain.reasons import entry_reason
from factledger.entrypoints.http.console_html import (
    esc,
    form,
    href,
    link,
    pager,
    path_part,
    select,
    table,
    text_input,
    when,
)
from factledger.entrypoints.http.console_session import Visitor
from factledger.entrypoints.http.console_text import say

PROFILE_ITEMS = 100
TIMELINE_ITEMS = 200


def user_path(user_id: str, *tail: str) -> str:
    return "/console/users/" + "/".join([path_part(user_id), *(path_part(part) for part in tail)])


def item_link(user_id: str, item_id: str | None, text: object, css: str = "fact") -> str:
    if not item_id:
        return f'<span class="{css}">{esc(text)}</span>'
    return f'<a class="{css}" href="{esc(user_path(user_id, "items", item_id))}">{esc(text)}</a>'


def message_link(visitor: Visitor, user_id: str, message_id: object) -> str:
    if not message_id:
        return ""
    label = f"{say(visitor.language, 'because_of')} {str(message_id)[:8]}"
    return link(user_path(user_id, "messages", str(message_id)), label, **{"class": "message"})


def users_page(visitor: Visitor, search: str, offset: int) -> tuple[str, str]:
    lang = visitor.language
    page = visitor.caller.service.users(search, offset, USERS_PAGE)
    field = text_input("q", say(lang, "search_users"), search, required=False)
    search_form = (
        f'<form method="get" action="/console/users" role="search">{field}'
        f' <button type="submit" class="primary">{esc(say(lang, "search"))}</button></form>'
    )
    rows = [
        [
            link(user_path(u.user_id), u.user_id),
            str(u.messages),
            str(u.active),
            str(u.retired),
            when(u.last_activity),
        ]
        for u in page.users
    ]
    headers = [say(lang, k) for k in ("user", "messages", "active", "retired", "last_activity")]
    listing = table(headers, rows) if rows else f"<p>{esc(say(lang, 'no_users'))}</p>"
    nav = pager(visitor, "/console/users", offset, len(page.users), page.total, USERS_PAGE, q=search)
    return say(lang, "users"), search_form + listing + nav


def person_page(
    visitor: Visitor, user_id: str, as_of: datetime | None, clock: str, notice: str, older: int = 0
) -> tuple[str, str]:
    lang, service = visitor.language, visitor.caller.service
    profile = service.profile(user_id, as_of, require_clock(clock), limit=PROFILE_ITEMS).to_dict()
    history = service.history(user_id).to_dict()["entries"]
    heading = say(lang, "profile_as_of", when=as_of.isoformat(), clock=say(lang, clock)) if as_of else None
    actions = [link(user_path(user_id, "messages"), say(lang, "all_messages"))]
    actions.append(link(user_path(user_id, "export"), say(lang, "export")))
    if visitor.allows(Scope.WRITE):
        actions.append(link(user_path(user_id, "forget"), say(lang, "forget")))
    parts = [
        f'<p class="notice" role="status">{esc(notice)}</p>' if notice else "",
        f'<nav class="flow" aria-label="{esc(user_id)}">{" · ".join(actions)}</nav>',
        _as_of_form(visitor, user_id, as_of, clock),
        f"<h2>{esc(heading or say(lang, 'profile_now'))}</h2>",
        _profile(visitor, user_id, profile),
        _restate_form(visitor, user_id) if visitor.allows(Scope.WRITE) else "",
        f"<h2 id='timeline'>{esc(say(lang, 'timeline'))}</h2><p class='muted'>{esc(say(lang, 'timeline_hint'))}</p>",
        timeline(visitor, user_id, history, older=older),
    ]
    return f"{say(lang, 'user')} {user_id}", "".join(parts)


def _as_of_form(visitor: Visitor, user_id: str, as_of: datetime | None, clock: str) -> str:
    lang = visitor.language
    value = as_of.strftime("%Y-%m-%dT%H:%M") if as_of else ""
    clocks = [("said", say(lang, "said")), ("recorded", say(lang, "recorded"))]
    return (
        f'<form method="get" action="{esc(user_path(user_id))}" class="flow card">'
        f'<div><label for="f-as_of">{esc(say(lang, "as_of"))}</label>'
        f'<input type="datetime-local" id="f-as_of" name="as_of" value="{esc(value)}"></div>'
        f"<div>{select('clock', say(lang, 'clock'), clocks, clock)}</div>"
        f'<div><button type="submit" class="primary">{esc(say(lang, "show"))}</button></div></form>'
    )


def _profile(visitor: Visitor, user_id: str, profile: dict[str, Any]) -> str:
    lang = visitor.language
    sections = []
    for kind, text_key, measure in (("facts", "fact", "confidence"), ("preferences", "preference", "strength")):
        groups = profile[kind]
        rows = []
        for category, items in sorted(groups.items()):
            for item in items:
                mentioned = item.get("times_mentioned")
                extra = f" · {esc(say(lang, 'mentioned', n=mentioned))}" if mentioned else ""
                rows.append(
                    [esc(category), item_link(user_id, item["id"], item[text_key]), f"{item[measure]:.2f}{extra}"]
                )
        total = profile[f"{kind}_total"]
        caption = f"{say(lang, kind)} ({len(rows)}/{total})"
        headers = [say(lang, "category"), say(lang, "text"), say(lang, measure)]
        sections.append(table(headers, rows, caption) if rows else f"<p>{esc(caption)}: {esc(say(lang, 'none'))}</p>")
    return "".join(sections)


def _restate_form(visitor: Visitor, user_id: str) -> str:
    lang = visitor.language
    fields = (
        f"<p class='muted'>{esc(say(lang, 'restate_hint'))}</p>"
        + text_input("text", say(lang, "text"))
        + select("category", say(lang, "category"), [(c, c) for c in FACT_CATEGORIES], "other")
    )
    body = form(visitor, user_path(user_id, "facts"), fields, say(lang, "restate"), label=say(lang, "restate"))
    return f'<details class="card"><summary>{esc(say(lang, "restate"))}</summary>{body}</details>'


def observed_items(entries: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Each fact's and preference's observation, by id: its text and the prompt that extracted it."""
    return {e.get("fact_id") or e.get("preference_id"): e for e in entries if e["event"].endswith("Observed")}


def reasons_shown(entries: list[dict[str, Any]], known: dict[Any, dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with each recorded reason (a code, or a person's words) as the user reads it: in
    the language their memories are in, naming the item it is about."""
    language = main_language("\n".join(e["text"] for e in entries if isinstance(e.get("text"), str)))
    texts = {str(k): v["text"] for k, v in known.items() if isinstance(v.get("text"), str)}
    return [{**e, "reason": entry_reason(e, language, texts)} if "reason_code" in e else e for e in entries]


def _text(known: dict[Any, dict[str, Any]], item_id: Any) -> Any:
    return known.get(item_id, {}).get("text")


def timeline(
    visitor: Visitor,
    user_id: str,
    entries: list[dict[str, Any]],
    known: dict[Any, dict[str, Any]] | None = None,
    older: int = 0,
) -> str:
    """Each change to the person's facts and preferences, oldest first, ``TIMELINE_ITEMS`` at a
    time (the newest, after skipping the ``older`` newest): an observed item, a confirmation, a
    supersession (old → new, with its message, relation, judge and prompt), an invalidation."""
    known = observed_items(entries) if known is None else known
    entries = reasons_shown(entries, known)
    drawn = [line for e in entries if (line := _timeline_entry(visitor, user_id, e, known))]
    if not drawn:
        return f"<p>{esc(say(visitor.language, 'none'))}</p>"
    end = max(0, len(drawn) - older)
    start = max(0, end - TIMELINE_ITEMS)
    shown = drawn[start:end]
    if len(shown) == len(drawn):
        return f'<ol class="timeline">{"".join(shown)}</ol>'
    lang, path = visitor.language, user_path(user_id)
    links = []
    if start > 0:
        links.append(link(href(path, older=older + TIMELINE_ITEMS) + "#timeline", say(lang, "older"), rel="prev"))
    if older > 0:
        links.append(link(href(path, older=max(0, older - TIMELINE_ITEMS)) + "#timeline", say(lang, "newer")))
    count = esc(say(lang, "shown", first=start + 1 if shown else 0, last=end, total=len(drawn)))
    nav = f'<nav class="flow" aria-label="timeline"><span class="muted">{count}</span>{" ".join(links)}</nav>'
    return f'{nav}<ol class="timeline">{"".join(shown)}</ol>'


def _timeline_entry(visitor: Visitor, user_id: str, e: dict[str, Any], known: dict[Any, dict[str, Any]]) -> str:
    lang, event = visitor.language, e["event"]
    stamp = when(e.get("said_at") or e.get("at"))
    cause = message_link(visitor, user_id, e.get("message_id"))
    if event == "FactObserved" or event == "PreferenceObserved":
        item_id = e.get("fact_id") or e.get("preference_id")
        measure = f"{say(lang, 'confidence')} {e['confidence']:.2f}" if "confidence" in e else ""
        if "strength" in e:
            measure = f"{say(lang, 'strength')} {e['strength']:.2f}"
        manual = e.get("authority") == "manual"
        what = say(lang, "restated") + (f" ({say(lang, 'by', actor=e.get('actor'))})" if manual else "")
        verb = what if manual else say(lang, "observed")
        body = f"+ {item_link(user_id, item_id, e.get('text'))} <span class='muted'>{esc(verb)} · {esc(measure)}</span>"
        return _li("observed", stamp, body, cause)
    if event in ("FactInvalidated", "PreferenceSuperseded") and e.get("superseded_by"):
        return _li("supersession", stamp, supersession(visitor, user_id, e, known), cause)
    if event == "FactInvalidated":
        old = item_link(user_id, e.get("fact_id"), _text(known, e.get("fact_id")), "fact old")
        by = f" · {esc(say(lang, 'by', actor=e.get('actor')))}" if e.get("actor") else ""
        body = f"✕ {old} <span class='muted'>{esc(say(lang, 'invalidated'))}: {esc(e.get('reason'))}{by}</span>"
        return _li("invalidation", stamp, body, cause)
    if event in ("FactConfirmed", "PreferenceReinforced", "FactContested"):
        item_id = e.get("fact_id") or e.get("preference_id")
        verbs = {"FactConfirmed": "confirmed", "PreferenceReinforced": "reinforced", "FactContested": "contested"}
        body = (
            f"= {item_link(user_id, item_id, _text(known, item_id))} <span class='muted'>{esc(say(lang, verbs[event]))}"
        )
        if event == "PreferenceReinforced":
            body += f" {e.get('old_strength', 0):.2f} → {e.get('new_strength', 0):.2f}"
        if event == "FactContested":
            body += f": {esc(e.get('challenger_text'))}"
        return _li("confirmation", stamp, body + "</span>", cause)
    return ""


def supersession(visitor: Visitor, user_id: str, e: dict[str, Any], known: dict[Any, dict[str, Any]]) -> str:
    """Old fact → new fact, and what decided it: relation, judge or rule, prompt (the judge's, else
    the one that extracted the new fact; "—" for rules), similarity, the ids of the offline rules."""
    lang = visitor.language
    old_id = e.get("fact_id") or e.get("preference_id")
    new_id = e.get("superseded_by")
    old = item_link(user_id, old_id, _text(known, old_id), "fact old")
    new = item_link(user_id, new_id, _text(known, new_id))
    prompt = e.get("judge_prompt_id") or known.get(new_id, {}).get("prompt_id") or "—"
    facts = [
        (say(lang, "relation"), e.get("relation")),
        (say(lang, "judge"), e.get("judge_id")),
        (say(lang, "prompt"), prompt),
        (say(lang, "similarity"), e.get("similarity")),
        (say(lang, "reason"), e.get("reason")),
        (say(lang, "rules"), ", ".join(e.get("rules") or ()) or None),
    ]
    details = " · ".join(f"{esc(name)}: <span>{esc(value)}</span>" for name, value in facts if value is not None)
    arrow = f'<span class="arrow" aria-label="{esc(say(lang, "superseded"))}">→</span>'
    return f'<div class="flow">{old}{arrow}{new}</div><div class="muted">{details}</div>'


def _li(kind: str, stamp: str, body: str, cause: str) -> str:
    return f'<li class="{kind}">{stamp} {body} {cause}</li>'
