"""What a user of the CLI meets when a later message turns an earlier one around (issue 24), run as real
processes against PostgreSQL: `factledger ingest` twice, then `factledger profile --json`."""

from __future__ import annotations

import pytest
from test_cli import run, run_json


def _profile_texts(env: dict[str, str], user: str) -> list[str]:
    profile = run_json(env, "profile", user)
    facts = [f["fact"] for items in profile["facts"].values() for f in items]
    preferences = [p["preference"] for items in profile["preferences"].values() for p in items]
    return facts + preferences


@pytest.mark.parametrize(
    ("user", "first", "then", "now", "gone"),
    [
        ("likes", "我特别爱吃火锅", "我不喜欢吃火锅", "用户不喜欢吃火锅", "用户特别爱吃火锅"),  # a liking negated
        ("school", "我女儿在北京上学", "我女儿在上海上学", "用户的女儿在上海上学", "用户的女儿在北京上学"),
        ("spaced", "我住在杭州", "我住在北\u3000京", "用户住在北京", "用户住在杭州"),  # no value split at a space
        ("wish", "我不喜欢回复太长", "以后回答详细一点吧", "偏好详细的回复风格", "偏好简短的回复风格"),
    ],
)
def test_a_later_message_leaves_only_the_new_value_in_the_profile(
    cli_env: dict[str, str], user: str, first: str, then: str, now: str, gone: str
) -> None:
    run(cli_env, "ingest", "--user", user, first)
    run(cli_env, "ingest", "--user", user, then)
    assert _profile_texts(cli_env, user) == [now]


def test_a_wish_about_answers_is_a_preference_in_the_profile(cli_env: dict[str, str]) -> None:
    run(cli_env, "ingest", "--user", "u", "希望回答时多给代码示例")
    profile = run_json(cli_env, "profile", "u")
    assert profile["facts"] == {} and profile["facts_count"] == 0
    assert [p["preference"] for p in profile["preferences"]["format"]] == ["偏好回答时多给代码示例"]
