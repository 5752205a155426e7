"""Remember what a user says, recall it, explain it, then forget the user.

A plain script that embeds factledger in-process, start to finish:

    python3 examples/remember_and_recall.py                         # embedded PostgreSQL under FACTLEDGER_HOME
    FACTLEDGER_BACKEND=memory python3 examples/remember_and_recall.py   # nothing stored on disk

With no ``OPENAI_API_KEY`` factledger uses its offline rule extractor, so
this runs anywhere; with a key, an LLM extracts the facts instead (the
printed facts may then be worded differently).
"""

from __future__ import annotations

import json
from typing import Any

from factledger import open_ledger

USER = "example_user"

# A few turns of one conversation, Chinese and English mixed, oldest first.
# The last one changes where the user lives: the old fact is superseded, not deleted.
MESSAGES = [
    "我住在杭州，在一家银行工作，老板姓张",
    "I have a dog named Max, and I prefer short answers",
    "我不吃辣",
    "我搬到上海了",
]


def show(title: str, data: Any) -> None:
    """Print a heading and a JSON document (``to_dict()`` is JSON-ready: times are ISO 8601 text)."""
    print(f"\n== {title}")
    print(json.dumps(data, ensure_ascii=False, indent=2))


def main() -> None:
    # open_ledger() reads the settings from the environment (FACTLEDGER_BACKEND,
    # DATABASE_URL, FACTLEDGER_HOME, OPENAI_API_KEY, ...) and the config file.
    # warn_if_offline=False: this script says itself which extractor it uses.
    with open_ledger(warn_if_offline=False) as ledger:
        print(f"extractor: {ledger.extractor.extractor_id}" + (" (offline rules)" if ledger.offline else ""))

        # 1. Ingest. A message_id makes a retried delivery safe: the same id records nothing twice.
        superseded: str | None = None
        for number, message in enumerate(MESSAGES, start=1):
            result = ledger.ingest(USER, message, session_id="session_1", message_id=f"msg_{number}")
            print(f"ingested {message!r}: {result.facts_extracted} facts, {result.preferences_extracted} preferences")
            for item in result.items:
                print(f"  {item.action:<10} {item.kind:<10} {item.text}")
                if item.action == "superseded":
                    superseded = item.superseded_id  # the fact this message replaced

        # 2. The profile: the user's active facts and preferences, most important first.
        profile = ledger.profile(USER)
        show("profile", profile.to_dict())

        # 3. Recall: the memories most similar to a question, best first.
        hits = ledger.recall(USER, "用户住在哪里", top_k=3)
        show("recall '用户住在哪里'", [{"content": h.record.content, "similarity": h.similarity} for h in hits])

        # 4. The block to put in an assistant's system prompt before it answers a question.
        print("\n== memory context for '周末去哪玩'")
        print(ledger.memory_context(USER, query="周末去哪玩").text)

        # 5. Why: the whole life of one fact, from its events (here the old home, which the
        #    last message superseded; otherwise the profile's first fact).
        item_id = superseded or profile.facts[0].id
        show(f"why {item_id}", ledger.why(USER, item_id).to_dict())

        # 6. Forget: every trace of the user is removed; a tombstone without personal data stays.
        tombstone = ledger.forget(USER, actor="example")
        print(f"\n== forgot {USER}: {tombstone.counts}")
        print(f"known after forget: {ledger.profile(USER).known}")


if __name__ == "__main__":
    main()
