"""An item's whole life (``why``), the person's messages with what each changed, forgetting
and the tombstones."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from factledger.application.access import Scope
from factledger.entrypoints.http.console_html import esc, form, link, pager, table, text_input, when
from factledger.entrypoints.http.console_person import (
    message_link,
    observed_items,
    supersession,
    timeline,
    user_path,
)
from factledger.entrypoints.http.console_session import Visitor
from factledger.entrypoints.http.console_text import say

MESSAGES_PAGE = 50


def why_page(visitor: Visitor, user_id: str, item_id: str) -> tuple[str, str]:
    lang = visitor.language
    why = visitor.caller.service.why(user_id, item_id).to_dict()
    observed = why["observed"]
    measure = "confidence" if why["kind"] == "fact" else "strength"
    state = say(lang, "is_active" if why["is_active"] else "not_active")
    rows = [
        [esc(say(lang, "text")), f'<span class="{"" if why["is_active"] else "retired"}">{esc(why["text"])}</span>'],
        [esc(say(lang, "kind")), esc(why["kind"])],
        [esc(say(lang, "category")), esc(why["category"])],
        [esc(say(lang, "state")), esc(state)],
        [esc(say(lang, measure)), esc(observed.get(measure))],
        [esc(say(lang, "at")), when(observed["at"])],
        [esc(say(lang, "extractor")), esc(observed["extractor_id"])],
        [esc(say(lang, "prompt")), esc(observed["prompt_id"])],
        [esc(say(lang, "said_in")), _quoted_message(visitor, user_id, observed.get("message"))],
    ]
    if observed.get("actor"):
        rows.append([esc(say(lang, "actor")), esc(observed["actor"])])
    if why["rules"]:  # the offline rules that produced it and decided its changes (issue 27)
        rows.append([esc(say(lang, "rules")), esc(", ".join(why["rules"]))])
    parts = [
        link(user_path(user_id), say(lang, "back_to_user", user=user_id)),
        f"<h2>{esc(say(lang, 'why'))}</h2>",
        table([say(lang, "item"), why["id"]], rows),
        _life(visitor, user_id, why),
    ]
    if why["kind"] == "fact" and why["is_active"] and visitor.allows(Scope.WRITE):
        fields = f"<p class='muted'>{esc(say(lang, 'invalidate_hint'))}</p>" + text_input("reason", say(lang, "reason"))
        action = user_path(user_id, "items", why["id"], "invalidate")
        parts.append(form(visitor, action, fields, say(lang, "invalidate"), danger=True, label=say(lang, "invalidate")))
    return f"{say(lang, 'item')} {why['text']}", "".join(parts)


def _quoted_message(visitor: Visitor, user_id: str, message: dict[str, Any] | None) -> str:
    if not message:
        return ""
    return f"<q>{esc(message['text'])}</q> {message_link(visitor, user_id, message['message_id'])}"


def _life(visitor: Visitor, user_id: str, why: dict[str, Any]) -> str:
    """What happened to the item after it was observed, oldest first."""
    lang = visitor.language
    lines = []
    if why.get("supersedes"):
        old = why["supersedes"]
        entry = {
            "fact_id": old["id"],
            "superseded_by": why["id"],
            "relation": old.get("relation"),
            "rules": old["rules"],
        }
        known = {
            old["id"]: {"text": old.get("text")},
            why["id"]: {"text": why["text"], "prompt_id": why["observed"]["prompt_id"]},
        }
        lines.append(supersession(visitor, user_id, entry, known))
    for name, key in (("confirmed", "confirmations"), ("contested", "contested"), ("reinforced", "reinforcements")):
        for step in why.get(key, []):
            judged = " · ".join(esc(step[k]) for k in ("judge_id", "judge_prompt_id", "similarity") if step.get(k))
            said = _quoted_message(visitor, user_id, step.get("message"))
            lines.append(f"{when(step['at'])} {esc(say(lang, name))} <span class='muted'>{judged}</span> {said}")
    gone = why.get("invalidated")
    if gone:
        entry = {**gone, "fact_id": why["id"], "superseded_by": (gone.get("superseded_by") or {}).get("id")}
        known = {why["id"]: {"text": why["text"]}, entry["superseded_by"]: gone.get("superseded_by") or {}}
        if entry["superseded_by"]:
            drawn = supersession(visitor, user_id, entry, known)
        else:
            by = say(lang, "by", actor=gone.get("actor")) if gone.get("actor") else ""
            drawn = f"✕ {esc(say(lang, 'invalidated'))}: {esc(gone.get('reason'))} {esc(by)}"
        lines.append(f"{when(gone['at'])} {drawn} {_quoted_message(visitor, user_id, gone.get('message'))}")
    if not lines:
        return ""
    return '<ol class="timeline">' + "".join(f"<li>{line}</li>" for line in lines) + "</ol>"


def messages_page(visitor: Visitor, user_id: str, offset: int) -> tuple[str, str]:
    """The person's messages, newest first, by day, each with what it changed."""
    lang = visitor.language
    entries = visitor.caller.service.history(user_id).to_dict()["entries"]
    by_message = _by_message(entries)
    known = observed_items(entries)
    messages = [e for e in reversed(entries) if e["event"] == "MessageIngested"]
    shown = messages[offset : offset + MESSAGES_PAGE]
    days: dict[str, list[str]] = defaultdict(list)
    for message in shown:
        day = str(message.get("said_at") or message["at"])[:10]
        days[day].append(_message_card(visitor, user_id, message, by_message[message["message_id"]], known))
    body = "".join(f"<h2>{esc(day)}</h2>{''.join(cards)}" for day, cards in days.items())
    nav = pager(visitor, user_path(user_id, "messages"), offset, len(shown), len(messages), MESSAGES_PAGE)
    back = link(user_path(user_id), say(lang, "back_to_user", user=user_id))
    return f"{say(lang, 'messages')} · {user_id}", back + (body or f"<p>{esc(say(lang, 'none'))}</p>") + nav


def message_page(visitor: Visitor, user_id: str, message_id: str) -> tuple[str, str]:
    lang = visitor.language
    entries = visitor.caller.service.history(user_id).to_dict()["entries"]
    found = [e for e in entries if e["event"] == "MessageIngested" and e["message_id"] == message_id]
    if not found:
        from factledger.application.errors import NotFound

        raise NotFound(f"no message {message_id!r} of user {user_id!r}")
    card = _message_card(visitor, user_id, found[0], _by_message(entries)[message_id], observed_items(entries))
    back = link(user_path(user_id, "messages"), say(lang, "all_messages"))
    return f"{say(lang, 'message')} {message_id}", back + card


def _by_message(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        if entry.get("message_id") and entry["event"] != "MessageIngested":
            grouped[str(entry["message_id"])].append(entry)
    return grouped


def _message_card(
    visitor: Visitor,
    user_id: str,
    message: dict[str, Any],
    caused: list[dict[str, Any]],
    known: dict[Any, dict[str, Any]],
) -> str:
    """A message as recorded (secrets already replaced by their placeholders), the extractor's
    decision and the changes it caused."""
    lang = visitor.language
    redacted = message.get("redacted") or {}
    secrets_note = ""
    if redacted:
        kinds = ", ".join(f"{kind} ×{count}" for kind, count in sorted(redacted.items()))
        secrets_note = f"<p class='muted'>{esc(say(lang, 'redacted', kinds=kinds))}</p>"
    decisions = [_decision(lang, e) for e in caused if e["event"] in ("ExtractionRecorded", "ExtractionFailed")]
    changes = [e for e in caused if e["event"] not in ("ExtractionRecorded", "ExtractionFailed")]
    changed = timeline(visitor, user_id, changes, known) if changes else f"<p>{esc(say(lang, 'nothing_changed'))}</p>"
    anchor = f"m-{message['message_id']}"
    session = f" · {esc(say(lang, 'session'))} {esc(message['session_id'])}" if message.get("session_id") else ""
    return (
        f'<article class="card" id="{esc(anchor)}" aria-labelledby="{esc(anchor)}-h">'
        f'<h3 id="{esc(anchor)}-h">{when(message.get("said_at") or message["at"])} '
        f"{link(user_path(user_id, 'messages', message['message_id']), message['message_id'])}{session}</h3>"
        f"<blockquote>{esc(message['text'])}</blockquote>{secrets_note}"
        f"<h4>{esc(say(lang, 'decided'))}</h4>{''.join(decisions)}<h4>{esc(say(lang, 'changed'))}</h4>{changed}"
        "</article>"
    )


def _decision(lang: str, entry: dict[str, Any]) -> str:
    if entry["event"] == "ExtractionFailed":
        return (
            f"<p class='problem'>{esc(say(lang, 'failed'))}: {esc(entry.get('extractor_id'))} "
            f"{esc(entry.get('error'))}</p>"
        )
    extraction = entry.get("extraction") or {}
    counts = say(
        lang,
        "extractor_said",
        facts=len(extraction.get("facts", [])),
        preferences=len(extraction.get("preferences", [])),
    )
    signals = extraction.get("signals") or {}
    seen = "; ".join(f"{k}: {v}" for k, v in signals.items())
    prompt = f" · {say(lang, 'prompt')} {extraction['prompt_id']}" if extraction.get("prompt_id") else ""
    return f"<p>{esc(extraction.get('extractor_id'))}{esc(prompt)} · {esc(counts)}</p><p class='muted'>{esc(seen)}</p>"


def forget_page(visitor: Visitor, user_id: str, problem: str = "") -> tuple[str, str]:
    lang = visitor.language
    if not visitor.caller.service.knows(user_id):
        from factledger.application.errors import NotFound

        raise NotFound(f"no memory for user {user_id!r}")
    fields = f"<p>{esc(say(lang, 'forget_hint', user=user_id))}</p>" + text_input("confirm", say(lang, "confirm_user"))
    warning = f'<p class="problem" role="alert">{esc(problem)}</p>' if problem else ""
    body = form(visitor, user_path(user_id, "forget"), fields, say(lang, "forget"), danger=True)
    return f"{say(lang, 'forget')}: {user_id}", warning + body


def tombstones_page(visitor: Visitor, notice: str = "") -> tuple[str, str]:
    lang = visitor.language
    stones = visitor.caller.service.tombstones()
    rows = [
        [when(s.forgotten_at), esc(s.actor), f"<code>{esc(s.user_key[:16])}</code>", esc(_counts(s.counts))]
        for s in stones
    ]
    headers = [say(lang, k) for k in ("forgotten_at", "actor", "user_key", "events_deleted")]
    listing = table(headers, rows) if rows else f"<p>{esc(say(lang, 'no_tombstones'))}</p>"
    shown = f'<p class="notice" role="status">{esc(notice)}</p>' if notice else ""
    return say(lang, "tombstones"), shown + listing


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{place} {count}" for place, count in sorted(counts.items()) if count)
