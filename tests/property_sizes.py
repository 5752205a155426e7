"""How many examples a property draws in each tier.

CI and a plain ``pytest`` run the ``gate`` profile (tests/conftest.py): every property draws
the examples its test names. The unit tier's command loads the ``unit`` profile
(``--hypothesis-profile=unit``): the same properties, derandomized too, draw a fifth as many,
so that the tier stays a developer's loop; the full number still runs in CI.
"""

from __future__ import annotations

from hypothesis import settings

UNIT_PROFILE = "unit"
UNIT_SHARE = 5  # the unit tier draws one example in five
UNIT_LEAST = 5  # and never fewer than this


def examples(gate: int) -> int:
    """``gate`` examples, or the unit tier's share of them under the unit profile."""
    if settings.get_current_profile_name() == UNIT_PROFILE:
        return min(gate, max(gate // UNIT_SHARE, UNIT_LEAST))
    return gate
