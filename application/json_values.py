"""Values as JSON types, for every ``to_dict()`` and ``export()``.

"JSON-ready" means the standard library's ``json.dumps`` takes the result as
it is, with no ``default=``: times become ISO 8601 text with their offset,
UUIDs text, tuples and sets lists, enums their values. A value of any other
type is a mistake in the caller and raises ``TypeError`` naming it, rather
than turning into its ``repr``.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

__all__ = ["iso", "json_ready"]


def iso(moment: datetime) -> str:
    """A time as ISO 8601 with its offset (a naive time is taken as UTC, as it is everywhere here)."""
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).isoformat()


def json_ready(value: Any) -> Any:
    """``value`` with every part a JSON type: dict (text keys), list, str, int, float, bool or None."""
    if isinstance(value, enum.Enum):  # before str and int: a StrEnum is one, but not plain
        return json_ready(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(json_ready(key)): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [json_ready(item) for item in items]
    for method in ("to_dict", "as_dict"):
        if callable(getattr(value, method, None)):
            return json_ready(getattr(value, method)())
    raise TypeError(f"{type(value).__name__} is not a JSON type and has no to_dict()")
