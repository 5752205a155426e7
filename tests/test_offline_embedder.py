"""HashedNgramEmbedder: deterministic unit vectors whose cosines behave like the spec needs."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_sizes import examples

from factledger.application.ports import Embedder
from factledger.infrastructure.offline import HashedNgramEmbedder


@pytest.fixture(scope="module")
def embedder() -> HashedNgramEmbedder:
    return HashedNgramEmbedder()


def cosine(embedder: HashedNgramEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return sum(x * y for x, y in zip(va, vb, strict=False))


def test_implements_the_embedder_port(embedder):
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 256
    assert re.fullmatch(r"offline-ngram/[0-9a-f]{12}:256", embedder.embedder_id)
    assert HashedNgramEmbedder(64).embedder_id == embedder.embedder_id.replace(":256", ":64")


def test_rejects_a_useless_dimension():
    with pytest.raises(ValueError):
        HashedNgramEmbedder(0)


def test_one_vector_per_text_in_order(embedder):
    vectors = embedder.embed(["用户住在杭州", "用户的老板姓张", "用户住在杭州"])
    assert len(vectors) == 3
    assert vectors[0] == vectors[2] != vectors[1]
    assert embedder.embed([]) == []


@pytest.mark.parametrize("text", ["用户住在杭州", "偏好简短的回复风格", "The user lives in Paris"])
def test_identical_text_scores_one(embedder, text):
    assert cosine(embedder, text, text) == pytest.approx(1.0)


def test_same_slot_new_value_is_close(embedder):
    assert cosine(embedder, "用户住在杭州", "用户住在上海") >= 0.80
    assert cosine(embedder, "The user lives in Paris", "The user lives in London") >= 0.80
    assert cosine(embedder, "用户的老板姓张", "用户的老板姓李") >= 0.80


def test_particles_do_not_matter(embedder):
    assert cosine(embedder, "用户住在杭州", "用户住在杭州了") >= 0.9


def test_unrelated_facts_are_far(embedder):
    assert cosine(embedder, "用户在杭州工作", "用户的老板姓张") < 0.5


def test_different_slots_sharing_a_city_stay_apart(embedder):
    assert cosine(embedder, "用户在杭州工作", "用户住在杭州") < 0.75


def test_preference_paraphrase_is_close(embedder):
    assert cosine(embedder, "偏好简短的回复风格", "偏好简短的回复") >= 0.75


def test_negation_pair_stays_close_enough_to_be_judged(embedder):
    assert cosine(embedder, "用户有车", "用户没有车") >= 0.75


def test_boilerplate_prefix_does_not_inflate_similarity(embedder):
    # without stripping "用户" these would share 用, 户, 用户 and look related
    assert cosine(embedder, "用户喜欢猫", "用户经常加班") < 0.2


@pytest.mark.parametrize("text", ["", "   ", "？！。", "\n"])
def test_empty_text_gives_a_valid_unit_vector(embedder, text):
    (vector,) = embedder.embed([text])
    assert len(vector) == 256
    assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-9)
    assert all(v != 0.0 for v in vector)


@pytest.mark.postgres  # the integration tier: a real second process
def test_vectors_are_the_same_in_another_process(embedder):
    code = (
        "from factledger.infrastructure.offline import HashedNgramEmbedder as H;"
        "print(repr(H().embed(['用户住在杭州', 'The user lives in Paris'])))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout.strip()
    assert other == repr(embedder.embed(["用户住在杭州", "The user lives in Paris"]))


@settings(max_examples=examples(200), deadline=None)
@given(text=st.text(max_size=80), dimension=st.sampled_from([16, 64, 256]))
def test_any_text_gives_a_deterministic_unit_vector(text, dimension):
    embedder = HashedNgramEmbedder(dimension)
    (vector,) = embedder.embed([text])
    assert len(vector) == dimension
    assert all(math.isfinite(v) for v in vector)
    assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-9)
    assert HashedNgramEmbedder(dimension).embed([text]) == [vector]
