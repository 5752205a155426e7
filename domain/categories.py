"""The spec's two category lists; anything else is filed under ``other``."""

from __future__ import annotations

FACT_CATEGORIES: tuple[str, ...] = (
    "personal_info",  # name, age, gender
    "location",  # home, place of work
    "relationship",  # family, colleagues, boss
    "work",  # company, role, industry
    "habit",  # routine, diet
    "preference",  # likes and dislikes stated as facts
    "other",
)

PREF_CATEGORIES: tuple[str, ...] = (
    "communication_style",  # concise / detailed / formal / casual
    "time",  # when to contact, quiet hours
    "content",  # topics liked or disliked
    "format",  # lists / paragraphs / code
    "tool",  # software and platforms
    "language",  # Chinese or English, jargon
    "other",
)


def _normalise(value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        return "other"
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    return key if key in allowed else "other"


def fact_category(value: object) -> str:
    """Return ``value`` if it names a fact category, else ``"other"``."""
    return _normalise(value, FACT_CATEGORIES)


def preference_category(value: object) -> str:
    """Return ``value`` if it names a preference category, else ``"other"``."""
    return _normalise(value, PREF_CATEGORIES)
