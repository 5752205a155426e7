"""Prompt sets: the bundled ones are the spec's, ids follow the content, bad files are named."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from factledger.infrastructure.llm.prompts import PromptError, load_prompt_set

SEED = resources.files("factledger.infrastructure.llm").joinpath("prompts/seed.toml").read_text(encoding="utf-8")


def test_seed_holds_the_spec_prompts() -> None:
    seed = load_prompt_set("seed")
    assert seed.mode == "separate"
    assert seed.id.startswith("seed@") and len(seed.digest) == 8
    fact = seed.render("fact", user_message="我在杭州工作")
    assert fact.startswith('从用户的话中提取事实信息。\n\n用户说："我在杭州工作"')
    assert '"fact": "用户的老板姓张"' in fact and fact.endswith("只返回 JSON，不要其他内容。")
    check = seed.render("conflict_check", old_fact="A", new_fact="B")
    assert "旧事实：A\n新事实：B" in check and check.endswith("update / conflict / different / duplicate")
    with_context = seed.render("fact_with_context", conversation="c", user_message="m", existing_facts="- f")
    assert '"conflicts_with": null 或 "冲突的旧事实"' in with_context
    assert "strength 表示偏好强度" in seed.render("preference", user_message="m", context="无")


def test_combined_has_a_schema() -> None:
    combined = load_prompt_set("combined")
    assert combined.mode == "combined" and combined.json_schema["required"] == ["facts", "preferences", "retracted"]
    item = combined.json_schema["properties"]["facts"]["items"]["properties"]
    assert item["conflicts_with"] == {"type": "array", "items": {"type": "string"}}  # one change may end several


def test_the_id_follows_the_content(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(SEED.replace('name = "seed"', 'name = "mine"'), encoding="utf-8")
    first = load_prompt_set(str(path)).id
    path.write_text(SEED.replace('name = "seed"', 'name = "mine"').replace("不要推测", "不要猜"), encoding="utf-8")
    second = load_prompt_set(str(path)).id
    assert first.startswith("mine@") and second.startswith("mine@") and first != second


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda s: s.replace("旧事实：{old_fact}", "旧事实："),
            r"template 'conflict_check' is missing the placeholder\(s\) \{old_fact\}",
        ),
        (lambda s: s.replace("上下文：{context}", "上下文：{ctx}"), r"missing the placeholder\(s\) \{context\}"),
        (
            lambda s: s.replace('用户说："{user_message}"\n\n规则', '用户说："{user_message}" {lang}\n\n规则', 1),
            r"unknown placeholder\(s\) \{lang\}",
        ),
        (
            lambda s: s.replace('{{\n    "fact": "用户的老板姓张"', '{\n    "fact": "用户的老板姓张"', 1),
            "not a valid format string|unknown placeholder",
        ),
        (lambda s: s.replace("preference = '''", "preferences = '''"), "needs template"),
        (lambda s: s.replace("[templates]", "[templatez]"), "no \\[templates\\] table"),
        (lambda s: s.replace('mode = "separate"', 'mode = "both"'), "mode must be"),
        (lambda s: s + "\n= broken", "not valid TOML"),
    ],
)
def test_bad_prompt_files_are_named(tmp_path: Path, edit: Callable[[str], str], message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(edit(SEED), encoding="utf-8")
    with pytest.raises(PromptError, match=message) as caught:
        load_prompt_set(str(path))
    assert str(path) in str(caught.value)


def test_an_unknown_name_is_neither_a_set_nor_a_file() -> None:
    with pytest.raises(PromptError, match="neither a bundled prompt set"):
        load_prompt_set("sead")
