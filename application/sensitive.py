"""Secrets and personal identifiers in free text, found and redacted before anything is stored (issue 11, item 4).

The ledger keeps what users say for good, so a pasted API key or "密码是…" must never reach an event. Detection
favours precision on what chats are full of (order numbers, years, versions, amounts, commit hashes): digit kinds
need a checksum or a fixed shape, and a bare random-looking token needs a nearby word saying it is a key.
"""

from __future__ import annotations

import enum
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from types import MappingProxyType

import attrs


class Kind(str, enum.Enum):
    API_KEY = "api_key"
    PASSWORD = "password"
    BANK_CARD = "bank_card"
    CN_ID = "cn_id"
    PHONE = "phone"
    EMAIL = "email"


class Policy(str, enum.Enum):
    REDACT = "redact"
    KEEP = "keep"
    REFUSE = "refuse"


PLACEHOLDERS: dict[Kind, str] = {
    Kind.API_KEY: "[API key]",
    Kind.PASSWORD: "[密码]",
    Kind.BANK_CARD: "[银行卡号]",
    Kind.CN_ID: "[身份证号]",
    Kind.PHONE: "[手机号]",
    Kind.EMAIL: "[邮箱]",
}

# Overlaps keep the most specific reading: a stated password says outright what the value is, a key prefix or
# a checksum is stronger evidence than the bare shape of a phone number.
_RANK = {Kind.PASSWORD: 6, Kind.API_KEY: 5, Kind.CN_ID: 4, Kind.BANK_CARD: 3, Kind.EMAIL: 2, Kind.PHONE: 1}


@attrs.frozen
class Finding:
    """Where a sensitive value is; the value itself is deliberately not kept, so a Finding can be logged."""

    kind: Kind
    start: int
    end: int


@attrs.frozen
class Redaction:
    text: str
    counts: Mapping[Kind, int]  # only what was replaced by a placeholder
    refused: tuple[Kind, ...]  # kinds whose policy is REFUSE, in order of first appearance; the caller raises


# Boundaries are spelled in ASCII: Python's \w also matches 汉字, and "密钥sk-…" or "卡号6222…" must still match.
# A dash-joined digit run is one number, not several; digits after a decimal point are a fraction.
_NOT_AFTER_DIGITS = r"(?<![0-9])(?<![0-9][-.])"
_NOT_BEFORE_DIGITS = r"(?![0-9])(?![-.][0-9])"
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS.values()))

_KEY_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_-])(?:sk-(?:ant-|proj-)?(?P<body>[A-Za-z0-9_-]{20,})|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{22,}|(?:AKIA|ASIA)[A-Z0-9]{16}|xox[abpr]-[A-Za-z0-9-]{10,}|AIza[A-Za-z0-9_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})(?![A-Za-z0-9_-])"
    r"|(?<![A-Za-z])[Bb]earer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])"
)
_TOKEN = re.compile(r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_-]{24,}(?![A-Za-z0-9_-])")
_KEY_WORD = re.compile(  # "key id" names a key, it is not one
    r"(?i:(?<![a-z])(?:api[ _-]?keys?|apikeys?|keys?|tokens?|secrets?)(?![a-z])(?![ _-]?ids?(?![a-z])))"
    r"|密钥|秘钥|令牌|私钥|凭证"
)
# A hex run next to these words is a hash, not a secret, even in "the commit that fixed token refresh".
_HASH_WORD = re.compile(
    r"(?i:(?<![a-z])(?:commit(?:s|ted)?|sha(?:1|256)?|hash(?:es)?|git|uuids?|guids?|checksums?|digests?)(?![a-z]))"
    r"|提交|哈希|校验"
)

_PASSWORD = re.compile(
    r"(?:(?:密码|密碼|口令)\s*(?:是|为|為|:|：|=|改成了?|改为|设成|设为|设置为|就是)"
    r"|(?i:(?<![a-z])(?:password|passwd|passphrase|pwd)(?:\s+(?:for|of)\s+(?:the\s+|my\s+)?[\w.@-]{1,30})?"
    r"(?:\s*[:=：]|(?P<w>\s+(?:is|was)(?:\s+now)?|\s+to)(?![a-z]))))\s*(?P<v>[!-~]+)"
)
# "password is wrong", "密码是什么": the words after the connector are not always a value.
_NOT_A_PASSWORD = re.compile(
    r"(?i)is|the|an?|not|wrong|incorrect|invalid|required|correct|expired|same|different|too|reset|changed|weak|strong"
    r"|still|also|empty|missing|set|secure|safe|hidden|saved|stored|and|or|but|was|my|your|in|on|of|for|to|here"
    r"|below|above|please|none|null|unknown|forgotten|lost|str|string|true|false"
)
_TRAILING_PUNCTUATION = ".,;:!?)]}'\""

# Card numbers start with 2-6 (Mastercard, Amex/JCB, Visa, UnionPay/Discover); millisecond timestamps start with 1.
_CARD = re.compile(
    _NOT_AFTER_DIGITS + r"(?:[2-6]\d{12,18}|[2-6]\d{3}(?P<s>[ -])\d{4}(?:(?P=s)\d{4}){1,2}(?:(?P=s)\d{1,3})?"
    r"|3\d{3}(?P<a>[ -])\d{6}(?P=a)\d{5})" + _NOT_BEFORE_DIGITS
)
_CN_ID = re.compile(
    _NOT_AFTER_DIGITS + r"(?:\d{6}( ?)\d{8}\1\d{3}[0-9Xx](?![0-9A-Za-z])|(?P<old>\d{15})" + _NOT_BEFORE_DIGITS + ")"
)
_ID_WORD = re.compile(r"身份证|证件|(?i:identity card|(?<![a-z])ID ?(?:card|number|no)(?![a-z]))")
# GB 11643 numbers start with a province code (11 北京 … 65 新疆, 71 台湾, 81-83 港澳及境外); nothing else is an ID.
_REGION = re.compile(r"1[1-5]|2[1-3]|3[1-7]|4[1-6]|5[0-4]|6[1-5]|71|8[1-3]")
_ID_WEIGHTS = [2 ** (17 - i) % 11 for i in range(17)]

_CN_MOBILE = re.compile(
    r"(?<![0-9+])(?<![0-9][-.])(?:(?:\+|00)?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}" + _NOT_BEFORE_DIGITS
)
_CN_LANDLINE = re.compile(
    _NOT_AFTER_DIGITS + r"(?:\(0\d{2,3}\) ?|0\d{2,3}[ -])[2-9]\d{2,3}[ -]?\d{4}" + _NOT_BEFORE_DIGITS
)
_INTERNATIONAL = re.compile(
    r"(?<![0-9A-Za-z+])(?:\+1[ .-]?\(?[2-9]\d{2}\)?[ .-]?\d{3}[ .-]?\d{4}"
    r"|\+[2-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,5})" + _NOT_BEFORE_DIGITS
)
# 13812345678元 is a sum of money however phone-shaped its digits are.
_MONEY_BEFORE = re.compile(r"[¥￥$]\s*$")
_MONEY_AFTER = re.compile(r"(?:元|块|圆|万(?!一)|亿|(?i:\s*(?:rmb|yuan|cny|usd|dollars?)(?![a-z])))")

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}(?![A-Za-z])"
)


def _near(pattern: re.Pattern[str], text: str, start: int, end: int) -> bool:
    return bool(pattern.search(text, max(0, start - 40), start) or pattern.search(text, end, end + 20))


def _random_looking(token: str) -> bool:
    if not (re.search("[A-Za-z]", token) and re.search("[0-9]", token)):
        return False
    parts = re.split("[_-]", token)
    # refresh_token_v2_for_mobile_clients: an identifier made of words, however long.
    if len(parts) > 1 and sum(len(p) for p in parts if len(p) >= 3 and p.isalpha()) >= 0.6 * len(token):
        return False
    entropy = -sum(c / len(token) * math.log2(c / len(token)) for c in Counter(token).values())
    return entropy >= 3.0


def _birth_date(yyyymmdd: str) -> bool:
    try:
        born = date(int(yyyymmdd[:4]), int(yyyymmdd[4:6]), int(yyyymmdd[6:8]))
    except ValueError:
        return False
    return date(1900, 1, 1) <= born <= date.today()


def cn_id_valid(number: str) -> bool:
    """An 18-character GB 11643 number: known province, real birth date, matching check character."""
    number = number.replace(" ", "").upper()
    if not re.fullmatch(r"\d{17}[0-9X]", number) or not _REGION.fullmatch(number[:2]) or not _birth_date(number[6:14]):
        return False
    return "10X98765432"[sum(int(d) * w for d, w in zip(number, _ID_WEIGHTS, strict=False)) % 11] == number[17]


_Span = tuple[int, int] | None


def _key(text: str, m: re.Match[str]) -> _Span:
    if m.group("v"):  # "Bearer …": the token goes, the word stays
        return m.span("v") if re.search("[0-9]", m.group("v")) else None
    return m.span() if m.group("body") is None or _random_looking(m.group("body")) else None


def _token(text: str, m: re.Match[str]) -> _Span:
    s, e = m.span()
    if not _random_looking(m.group()) or not _near(_KEY_WORD, text, s, e):
        return None
    hexlike = re.fullmatch(r"[0-9A-Fa-f-]+", m.group()) is not None
    return None if hexlike and _near(_HASH_WORD, text, s, e) else (s, e)


def _password(text: str, m: re.Match[str]) -> _Span:
    value = m.group("v").rstrip(_TRAILING_PUNCTUATION) or m.group("v")
    # After "is"/"to" a plain lowercase word is English going on ("no password is defined"), not a value.
    if len(value) < 3 or _NOT_A_PASSWORD.fullmatch(value) or (m.group("w") and re.fullmatch("[a-z]+", value)):
        return None
    return m.start("v"), m.start("v") + len(value)


def _card(text: str, m: re.Match[str]) -> _Span:
    digits = [int(d) for d in re.sub("[ -]", "", m.group())]
    luhn = sum(digits[-1::-2]) + sum(d * 2 - 9 if d > 4 else d * 2 for d in digits[-2::-2])
    return m.span() if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn % 10 == 0 else None


def _cn_id(text: str, m: re.Match[str]) -> _Span:
    if not (old := m.group("old")):
        return m.span() if cn_id_valid(m.group()) else None
    # The old 15-digit form has no check digit, and fifteen digits are common: it counts only when the text says ID.
    plausible = _REGION.fullmatch(old[:2]) and _birth_date("19" + old[6:12])
    return m.span() if plausible and _near(_ID_WORD, text, *m.span()) else None


def _phone(text: str, m: re.Match[str]) -> _Span:
    s, e = m.span()
    if _MONEY_BEFORE.search(text, max(0, s - 3), s) or _MONEY_AFTER.match(text, e):
        return None
    return (s, e) if 8 <= sum(ch.isdigit() for ch in m.group()) <= 15 else None


_DETECTORS: tuple[tuple[Kind, re.Pattern[str], Callable[[str, re.Match[str]], _Span]], ...] = (
    (Kind.PASSWORD, _PASSWORD, _password),
    (Kind.API_KEY, _KEY_PREFIXED, _key),
    (Kind.API_KEY, _TOKEN, _token),
    (Kind.CN_ID, _CN_ID, _cn_id),
    (Kind.BANK_CARD, _CARD, _card),
    (Kind.EMAIL, _EMAIL, lambda text, m: m.span()),
    (Kind.PHONE, _CN_MOBILE, _phone),
    (Kind.PHONE, _CN_LANDLINE, _phone),
    (Kind.PHONE, _INTERNATIONAL, _phone),
)


def _find(text: str, shielded: Sequence[tuple[int, int]]) -> list[Finding]:
    # Placeholders and spans already decided on are blanked out (same length, so offsets hold): nothing may be
    # found inside them, and "[API key]" must not count as the word "key" next to a token.
    chars = list(text)
    for s, e in [*(m.span() for m in _PLACEHOLDER.finditer(text)), *shielded]:
        chars[s:e] = "\0" * (e - s)
    masked = "".join(chars)
    candidates = [
        Finding(kind, *span)
        for kind, pattern, check in _DETECTORS
        for m in pattern.finditer(masked)
        if (span := check(masked, m)) is not None and span[0] < span[1]
    ]
    chosen: list[Finding] = []
    taken = bytearray(len(text))
    for f in sorted(candidates, key=lambda f: (-_RANK[f.kind], f.start - f.end, f.start)):
        if not any(taken[f.start : f.end]):
            taken[f.start : f.end] = b"\1" * (f.end - f.start)
            chosen.append(f)
    return sorted(chosen, key=lambda f: f.start)


def find_sensitive(text: str) -> list[Finding]:
    """The sensitive spans of ``text``, non-overlapping and in order; placeholders are never reported."""
    return _find(text, ())


def redact(text: str, policies: Mapping[Kind, Policy]) -> Redaction:
    """Apply each kind's policy (REDACT when the mapping has none) to every finding.

    Runs to a fixed point: removing one value can expose another (an address glued to a phone number), and a
    second ``redact`` must find nothing left to do. Kept and refused spans are left as they are and not looked
    at again; REFUSE leaves its span unchanged and lists the kind, for the caller to raise.
    """
    counts: Counter[Kind] = Counter()
    refused: dict[Kind, None] = {}
    shielded: list[tuple[int, int]] = []
    while findings := _find(text, shielded):
        pieces: list[str] = []
        moved: list[tuple[int, int]] = []
        cursor = shift = 0  # shift: how much longer the new text is than the old, up to the current finding
        for f in findings:
            pieces.append(text[cursor : f.start])
            moved += [(s + shift, e + shift) for s, e in shielded if cursor <= s < f.start]
            if (policy := policies.get(f.kind, Policy.REDACT)) == Policy.REDACT:
                pieces.append(PLACEHOLDERS[f.kind])
                counts[f.kind] += 1
                shift += len(PLACEHOLDERS[f.kind]) - (f.end - f.start)
            else:
                pieces.append(text[f.start : f.end])
                moved.append((f.start + shift, f.end + shift))
                if policy == Policy.REFUSE:
                    refused.setdefault(f.kind)
            cursor = f.end
        pieces.append(text[cursor:])
        moved += [(s + shift, e + shift) for s, e in shielded if s >= cursor]
        text, shielded = "".join(pieces), moved
    return Redaction(text=text, counts=MappingProxyType(dict(counts)), refused=tuple(refused))
