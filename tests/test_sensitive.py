"""Secrets and personal identifiers are redacted before storage; their look-alikes are left alone (issue 11, item 4).

Every number here is built by the helpers below from invented digits (Luhn and GB 11643 check digits computed,
not copied), and every key is a prefix plus seeded pseudo-random characters, so no real person's number or
real credential is in the repository and no secret scanner mistakes this file for a leak.
"""

from __future__ import annotations

import itertools
import random
import re
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from property_sizes import examples

from factledger.application.sensitive import (
    PLACEHOLDERS,
    Finding,
    Kind,
    Policy,
    cn_id_valid,
    find_sensitive,
    redact,
)


def luhn_ok(number: str) -> bool:
    digits = [int(d) for d in reversed(number)]
    return sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits)) % 10 == 0


def card(prefix: str) -> str:
    """``prefix`` plus the one digit that makes it pass the Luhn check."""
    return next(prefix + d for d in string.digits if luhn_ok(prefix + d))


def not_card(prefix: str) -> str:
    """``prefix`` plus a digit that makes it fail the Luhn check (an order number)."""
    return next(prefix + d for d in string.digits if not luhn_ok(prefix + d))


def id_check(body: str) -> str:
    return "10X98765432"[sum(int(d) * (2 ** (17 - i) % 11) for i, d in enumerate(body)) % 11]


def cn_id(region: str, born: str, seq: str) -> str:
    body = region + born + seq
    return body + id_check(body)


def grouped(number: str, sizes: tuple[int, ...], sep: str = " ") -> str:
    parts, at = [], 0
    for size in sizes:
        parts.append(number[at : at + size])
        at += size
    return sep.join(parts)


def fake(n: int, seed: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(random.Random(seed).choices(alphabet, k=n))


# Cards: UnionPay 19, Visa 16, Amex 15; an order number one digit off.
UNIONPAY = card("622202123456789012")
VISA = card("411111111111111")
AMEX = card("37828224631000")
ORDER_16 = not_card("402405061234567")
# ID numbers: one ending in a digit, one in X, one with a wrong check character, one born in the future.
ID = cn_id("110105", "19491231", "002")
ID_X = next(cn_id("440305", "19880215", f"{n:03}") for n in range(1000) if id_check(f"44030519880215{n:03}") == "X")
ID_BAD = next(
    ID[:17] + d for d in string.digits if d != ID[17] and not luhn_ok(ID[:17] + d)
)  # also fails Luhn: else it is a card
ID_FUTURE = next(
    cn_id("310104", "20990101", f"{n:03}") for n in range(1000) if not luhn_ok(cn_id("310104", "20990101", f"{n:03}"))
)
ORDER_18 = not_card("20240506123456789")
OLD_ID = "110105491231002"
SK = "sk-proj-" + fake(32, 1)
SK_ANT = "sk-ant-api03-" + fake(40, 2, string.ascii_letters + string.digits + "-_")
GHP = "ghp_" + fake(36, 3)
GH_PAT = "github_pat_11" + fake(20, 4) + "_" + fake(30, 5)
AWS = "AKIA" + fake(16, 6, string.ascii_uppercase + string.digits)
SLACK = "xoxb-" + fake(12, 7, string.digits) + "-" + fake(24, 8)
GOOGLE = "AIza" + fake(35, 9)
JWT = (
    "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + fake(43, 10, string.ascii_letters + string.digits + "-_")
)
TOKEN = fake(32, 11)
UUID = "123e4567-e89b-12d3-a456-426614174000"
COMMIT = "9fceb02d0ae598e95dc970b74767f19372d61af8"

# (case id: the kind it is about, then language and what it shows; text; expected text after redaction)
CASES: list[tuple[str, str, str]] = [
    # API keys and tokens
    ("api_key-zh-openai", f"我的OpenAI密钥是{SK}，帮我记一下", "我的OpenAI密钥是[API key]，帮我记一下"),
    ("api_key-en-anthropic", f"Anthropic key: {SK_ANT} (rotate monthly)", "Anthropic key: [API key] (rotate monthly)"),
    ("api_key-en-github", f"my GitHub token is {GHP}", "my GitHub token is [API key]"),
    ("api_key-zh-github-pat", f"用这个{GH_PAT}推代码", "用这个[API key]推代码"),
    ("api_key-en-aws", f"aws_access_key_id = {AWS}", "aws_access_key_id = [API key]"),
    ("api_key-en-slack", f"the bot uses {SLACK} to post", "the bot uses [API key] to post"),
    ("api_key-zh-google", f"谷歌地图的key：{GOOGLE}", "谷歌地图的key：[API key]"),
    ("api_key-en-jwt", f"session cookie {JWT}; expires tomorrow", "session cookie [API key]; expires tomorrow"),
    (
        "api_key-en-bearer",
        "curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706abcdef' https://api.example.com",
        "curl -H 'Authorization: Bearer [API key]' https://api.example.com",
    ),
    ("api_key-zh-token-keyword", f"这个服务的令牌是 {TOKEN} 别外传", "这个服务的令牌是 [API key] 别外传"),
    ("api_key-en-secret-keyword", f"client secret: {TOKEN}", "client secret: [API key]"),
    # passwords: the value goes, the words before it stay
    ("password-zh-shi", "我的邮箱密码是Qwe!2024，别忘了", "我的邮箱密码是[密码]，别忘了"),
    ("password-zh-colon", "服务器密码：abc12345", "服务器密码：[密码]"),
    ("password-zh-wei", "WiFi密码为 88888888。", "WiFi密码为 [密码]。"),
    ("password-zh-kouling", "保险柜口令是 9527abc", "保险柜口令是 [密码]"),
    ("password-zh-changed", "我把密码改成了Hz2024hz了吗", "我把密码改成了[密码]了吗"),
    ("password-en-colon", "password: Tr0ub4dor&3", "password: [密码]"),
    ("password-en-is", "my password is hunter2, don't tell anyone", "my password is [密码], don't tell anyone"),
    ("password-en-pwd", "pwd=s3cr3t!x in the config", "pwd=[密码] in the config"),
    ("password-en-to", "I changed my password to CorrectHorse9 yesterday", "I changed my password to [密码] yesterday"),
    ("password-en-for", "The password for my router is admin123.", "The password for my router is [密码]."),
    # bank cards
    ("bank_card-zh-unionpay", f"我的银行卡号是{UNIONPAY}，转账用", "我的银行卡号是[银行卡号]，转账用"),
    ("bank_card-zh-grouped", f"卡号 {grouped(UNIONPAY, (4, 4, 4, 4, 3))} 工商银行", "卡号 [银行卡号] 工商银行"),
    ("bank_card-en-visa", f"Visa {grouped(VISA, (4, 4, 4, 4))} expires 12/27", "Visa [银行卡号] expires 12/27"),
    ("bank_card-en-dashes", f"card number {grouped(VISA, (4, 4, 4, 4), '-')}.", "card number [银行卡号]."),
    ("bank_card-en-amex", f"Amex {grouped(AMEX, (4, 6, 5))} on file", "Amex [银行卡号] on file"),
    # Chinese resident ID numbers
    ("cn_id-zh-18", f"身份证号{ID}，请核对", "身份证号[身份证号]，请核对"),
    ("cn_id-en-x", f"ID number: {ID_X}", "ID number: [身份证号]"),
    ("cn_id-zh-lowercase-x", f"证件号码 {ID_X.lower()} 已登记", "证件号码 [身份证号] 已登记"),
    ("cn_id-zh-spaced", f"身份证 {grouped(ID, (6, 8, 4))} 复印件", "身份证 [身份证号] 复印件"),
    ("cn_id-zh-old-15", f"我的老身份证是{OLD_ID}", "我的老身份证是[身份证号]"),
    # phones
    ("phone-zh-mobile", "我的手机号是13812345678，有事打我", "我的手机号是[手机号]，有事打我"),
    ("phone-zh-plus86", "电话：+86 138 1234 5678", "电话：[手机号]"),
    ("phone-zh-0086", "国外打0086 13712345678找我", "国外打[手机号]找我"),
    ("phone-en-dashes", "call me at 139-1234-5678 tonight", "call me at [手机号] tonight"),
    ("phone-zh-landline", "办公室电话 010-62345678 转分机", "办公室电话 [手机号] 转分机"),
    ("phone-zh-landline-paren", "家里座机(0571) 87654321", "家里座机[手机号]"),
    ("phone-en-us", "my number is +1 415 555 0123.", "my number is [手机号]."),
    ("phone-en-uk", "London office: +44 20 7946 0958", "London office: [手机号]"),
    ("phone-zh-wanyi", "打13812345678 万一不通就发邮件", "打[手机号] 万一不通就发邮件"),
    # e-mail addresses
    ("email-zh", "邮箱是zhang.san@example.com，发我", "邮箱是[邮箱]，发我"),
    ("email-en-plus", "email me at j.doe+notes@mail.example.co.uk.", "email me at [邮箱]."),
    ("email-zh-digits", "我的QQ邮箱13812345678@qq.com", "我的QQ邮箱[邮箱]"),
    # several in one sentence
    ("mixed-zh", "电话13812345678，邮箱a.b@example.com", "电话[手机号]，邮箱[邮箱]"),
    ("mixed-en", f"card {VISA}, pwd: Xy9#kLm2", "card [银行卡号], pwd: [密码]"),
]

# Look-alikes: each must come back exactly as it went in.
SURVIVORS: list[tuple[str, str]] = [
    ("order-16-fails-luhn", f"订单号{ORDER_16}已发货"),
    ("order-18-not-an-id", f"order {ORDER_18} shipped"),
    ("id-wrong-checksum", f"身份证号{ID_BAD}好像不对"),
    ("id-future-birth", f"编号{ID_FUTURE}"),
    ("year", "我2024年搬到杭州"),
    ("years-range", "worked there 1998-2013"),
    ("version", "升级到 v1.2.3 之后就好了"),
    ("version-long", "build 13.8.12345678 is out"),
    ("amount-yuan", "这台电脑花了13800元"),
    ("amount-phone-shaped", "募集资金13900000000元"),
    ("amount-dollar", "revenue was $13912345678 last year"),
    ("decimal", f"ratio 0.{VISA} and 0.13812345678"),  # a fraction, however card- or phone-shaped
    ("timestamp-ms", "created_at 1433189873898"),
    ("date", "2024-05-06 见"),
    ("date-compact", "生日是20240506"),
    ("time", "会议13:45开始，13:45-14:30"),
    ("postcode", "邮编 310000"),
    ("uuid", f"request id {UUID}"),
    ("commit", f"commit {COMMIT} fixed the token refresh bug"),
    ("commit-zh", f"这个提交{COMMIT}修好了令牌刷新"),
    ("mention", "@zhangsan 你看一下, ping @alice about it"),
    ("at-without-dot", "a@b is not an address, nor is user@localhost"),
    ("longer-run", f"流水号{not_card('20138123456789')}"),
    ("eleven-digits-12", "编号12345678901"),
    ("ip", "服务器在192.168.1.100"),
    ("password-question", "密码是什么来着？忘记密码了"),
    ("password-wrong", "the password is wrong again"),
    ("key-words", "API key rotation is documented; the key point is simplicity"),
    ("identifier", "the token name is refresh_token_v2_for_mobile_clients"),
    ("sk-words", "sk-learn is not a typo for scikit-learn"),
    ("bearer-words", "the bearer of this letter"),
    ("random-without-keyword", f"the file is called {TOKEN}.txt"),
]


def test_the_constructed_numbers_are_what_they_claim() -> None:
    assert luhn_ok(VISA) and luhn_ok(UNIONPAY) and luhn_ok(AMEX) and not luhn_ok(ORDER_16) and not luhn_ok(ORDER_18)
    assert cn_id_valid(ID) and cn_id_valid(ID_X) and ID_X.endswith("X")
    assert not cn_id_valid(ID_BAD) and not luhn_ok(ID_BAD) and not cn_id_valid(ID_FUTURE)
    assert len(GOOGLE) == 39 and len(AWS) == 20 and len(GHP) == 40


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_redacts(text: str, expected: str) -> None:
    result = redact(text, {})
    assert result.text == expected
    assert sum(result.counts.values()) == expected.count("[") - text.count("[")


@pytest.mark.parametrize("text", [s[1] for s in SURVIVORS], ids=[s[0] for s in SURVIVORS])
def test_look_alikes_survive(text: str) -> None:
    assert find_sensitive(text) == []
    assert redact(text, {}).text == text


def test_every_kind_has_cases_in_both_languages() -> None:
    for kind in Kind:
        languages = {case_id.split("-")[1] for case_id, *_ in CASES if case_id.startswith(kind.value + "-")}
        assert languages == {"zh", "en"}, kind


def test_a_finding_is_a_span_of_one_kind_only() -> None:
    text = f"身份证{ID}，手机13812345678"
    assert find_sensitive(text) == [
        Finding(Kind.CN_ID, 3, 21),
        Finding(Kind.PHONE, 24, 35),
    ]
    assert text[24:35] == "13812345678"


def test_keep_leaves_the_text_and_counts_nothing() -> None:
    text = "手机13812345678，邮箱a.b@example.com"
    result = redact(text, {Kind.PHONE: Policy.KEEP, Kind.EMAIL: Policy.KEEP})
    assert (result.text, dict(result.counts), result.refused) == (text, {}, ())


def test_refuse_lists_the_kind_and_leaves_its_span() -> None:
    text = f"密码是abc12345，卡号{VISA}，手机13812345678"
    result = redact(text, {Kind.PASSWORD: Policy.REFUSE, Kind.BANK_CARD: Policy.REFUSE})
    assert result.refused == (Kind.PASSWORD, Kind.BANK_CARD)
    assert result.text == f"密码是abc12345，卡号{VISA}，手机[手机号]"
    assert dict(result.counts) == {Kind.PHONE: 1}


def test_counts_are_per_kind_and_a_missing_policy_means_redact() -> None:
    text = "13812345678 或 13912345678，邮箱 a.b@example.com，电话 010-62345678"
    result = redact(text, {Kind.EMAIL: Policy.KEEP})
    assert dict(result.counts) == {Kind.PHONE: 3}
    assert result.text == "[手机号] 或 [手机号]，邮箱 a.b@example.com，电话 [手机号]"


def test_policies_may_be_given_as_plain_strings() -> None:
    assert redact("13812345678", {Kind.PHONE: "keep"}).text == "13812345678"  # type: ignore[dict-item]


def test_placeholders_already_in_the_text_are_never_reported() -> None:
    text = "我的API key是[API key]，密码是[密码]，手机[手机号]"
    assert find_sensitive(text) == []
    assert redact(text, {}).text == text


_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS.values()))
FRAGMENTS = [
    *(c[1] for c in CASES),
    *(s[1] for s in SURVIVORS),
    *PLACEHOLDERS.values(),
    *"0123456789 -+@.:：，X[]",
    "13812345678",
    "密码是",
    "password: ",
    "key ",
    "令牌",
    VISA,
    ID,
    TOKEN,
    "a.b@example.com",
]
texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=12).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(texts)
@example(f"a@b.com13812345678{VISA}-13812345678")
@example("密码是[密码]key" + TOKEN)
def test_redaction_is_total_idempotent_and_never_nests(text: str) -> None:
    findings = find_sensitive(text)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
    assert all(
        f.end <= p.start() or p.end() <= f.start for f in findings for p in _PLACEHOLDER.finditer(text)
    )  # nothing found inside a placeholder
    once = redact(text, {})
    assert redact(once.text, {}).text == once.text
    assert find_sensitive(once.text) == []
    # Each redaction adds exactly one whole placeholder and breaks none: no placeholder grew inside another.
    assert len(_PLACEHOLDER.findall(once.text)) == len(_PLACEHOLDER.findall(text)) + sum(once.counts.values())


policy_maps = st.dictionaries(st.sampled_from(list(Kind)), st.sampled_from(list(Policy)))


@settings(max_examples=examples(200), deadline=None)
@given(texts, policy_maps)
def test_any_policy_mix_keeps_its_promises(text: str, policies: dict[Kind, Policy]) -> None:
    result = redact(text, policies)
    assert all(policies.get(kind, Policy.REDACT) == Policy.REDACT for kind in result.counts)
    assert all(policies[kind] == Policy.REFUSE for kind in result.refused)
    assert len(set(result.refused)) == len(result.refused) and all(n > 0 for n in result.counts.values())
    assert len(_PLACEHOLDER.findall(result.text)) == len(_PLACEHOLDER.findall(text)) + sum(result.counts.values())
    if not any(policy != Policy.REDACT for policy in policies.values()):
        assert result.text == redact(text, {}).text
