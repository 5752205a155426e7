"""The decider's kept vectors: bounded in bytes across users, and never changing a ranking."""

from __future__ import annotations

from factledger.application.candidates import CandidateIndex
from factledger.infrastructure.offline.embedder import HashedNgramEmbedder

FACTS = [f"用户的朋友叫王{chr(0x4E00 + i)}" for i in range(40)] + ["用户住在杭州", "用户在华为工作"]


class CountingEmbedder(HashedNgramEmbedder):
    """The offline embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.embedded += len(texts)
        return super().embed(texts)


def items(user: int) -> list[tuple[str, str]]:
    return [(f"u{user}-{n}", text) for n, text in enumerate(FACTS)]


def test_users_within_the_budget_are_kept_and_not_embedded_again() -> None:
    embedder = CountingEmbedder()
    index = CandidateIndex(embedder, bytes_kept=10 * 64 * 256 * 4)  # room for more than eight users of 42 rows
    for user in range(8):
        index.ranked(user, "用户搬到上海了", items(user))
    first_pass = embedder.embedded
    for user in range(8):
        index.ranked(user, "用户搬到上海了", items(user))
    assert embedder.embedded - first_pass == 8, "only the queries: every user's rows were kept"


def test_beyond_the_budget_the_least_recently_used_go_and_rankings_stay_the_same() -> None:
    embedder = CountingEmbedder()
    small = CandidateIndex(embedder, bytes_kept=3 * 64 * 256 * 4)
    fresh = CandidateIndex(HashedNgramEmbedder())
    for round_ in range(2):
        for user in range(6):
            query = "用户在腾讯工作" if round_ else "用户住在杭州"
            assert small.ranked(user, query, items(user)) == fresh.ranked(user, query, items(user))
    assert len(small._rows) < 6 and small._bytes <= small.bytes_kept
    assert small._bytes == sum(rows.buffer.nbytes for rows in small._rows.values())


def test_one_user_larger_than_the_budget_is_still_served() -> None:
    index = CandidateIndex(HashedNgramEmbedder(), bytes_kept=1)
    ranked = index.ranked("big", "用户住在杭州", items(0))
    assert ranked[0][1] == "u0-40" and len(ranked) == len(FACTS)
