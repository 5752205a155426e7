"""Which known fact a change replaces when no rule for its slot or topic named one.

The slot, topic and change rules each know a kind of statement (where one
lives, a drink, a school year). A change told in words none of them reads
("上礼拜入职顺丰了，当快递员", "这个月又调到顺义的仓库", "wait, wrong firm — I'm at
KPMG") still carries two things that say what it replaces, whatever its
topic: a word of change or of correction in the message, and the frame of
the statement it replaces (what is left of both facts once their values are
set aside: 用户在…工作, "the user's office is in …").

``replaced_fact`` reads those two things for one new fact: among the user's
latest facts about the same person, the one whose frame the new fact shares
most, when the message marks a change (a lower bar for a correction, which
is about something just said). A word of adding (也, 还, also) or of someone
else keeps every fact. What it names the extractor reports in
``conflicts_with``; the decider takes the extractor's word for it (ADR 0010,
addendum 11).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from factledger.infrastructure.offline.changes import (
    is_conditional,
    is_correction,
    is_plan,
    is_retraction,
    told_of_someone_else,
)
from factledger.infrastructure.offline.clauses import is_english, split_clauses
from factledger.infrastructure.offline.rules_common import third_person
from factledger.infrastructure.offline.rules_en import clean_en, en_third_person
from factledger.infrastructure.offline.rules_zh_facts import clean_said
from factledger.infrastructure.offline.slots import (
    EN_ROLE_PATTERN,
    ROLE_SYNONYMS,
    ZH_ROLE_PATTERN,
    ZH_ROLE_QUALIFIER,
    is_exclusive_slot,
    is_liking_slot,
    slots_of,
)

#: how many of the latest known facts a change is read against
RECENT = 6

# a change told in words: moving, switching, a new one, now, again, no longer
_ZH_CHANGE = re.compile(
    r"现在|如今|目前|后来|又(?=回|去|到|成|是|找)|回到|回老家|改|换|搬(?!砖)|调到|调去|调岗|升(?!级)|转(?:到|去|成|行|学|岗|正|专业)|跳槽|入职|辞职|离职|涨|降|变成|成了|不再|"
    r"终于|重新|新[^闻鲜]|起(?:就|开始)?[，,]|以后|从此|这下|已经|都(?=\S{0,6}了)|卖了|退了|没再|不.{1,3}了"
)
_EN_CHANGE = re.compile(
    r"\b(?:now|moved|moving|switched|switch(?:ed)? to|changed|new|newly|got promoted|promoted|transferred|quit|left|"
    r"anymore|no longer|finally|these days|started|instead|traded|sold|upgraded|bought|got (?:a|an|my)|replaced|"
    r"turned|hit|just got|got moved|became|then|pulled out|dropped out|gave up|stopped|cancell?ed|called off|"
    r"broke up|split up)\b",
    re.IGNORECASE,
)
# a fact of the past that a change now leaves true (where one studied, comes from), unless corrected
_ZH_HISTORY = re.compile(r"老家|出生|本科|毕业|以前|曾经|小时候|当年|上过|读过|去过|做过|干过")
_EN_HISTORY = re.compile(r"\b(?:grew up|born|graduated|used to|went to|from)\b", re.IGNORECASE)
# a moment, not a state: what happened today changes nothing that holds
_ZH_MOMENT = re.compile(r"今天|昨天|昨晚|今早|今晚|刚才|刚刚|早上|中午|晚上|这会儿")
_EN_MOMENT = re.compile(r"\b(?:today|yesterday|tonight|this morning|this afternoon|right now)\b", re.I)
# a day that may never come: what follows is imagined
_SOMEDAY = re.compile(r"哪天|有一天|有朝一日|等哪|\b(?:someday|one day|some day)\b", re.IGNORECASE)
# a word of adding or of sameness: the fact said joins the known ones
_ZH_ADDING = re.compile(r"也|还(?!是)|另外|同时|而且|副业|兼职|顺便|平时|一直|依然|仍然|照样|照旧|继续")
_EN_ADDING = re.compile(
    r"\b(?:also|too|as well|another|on the side|still|besides|plus|keep|keeps|continue[sd]?)\b", re.IGNORECASE
)
_EN_SOMEONE = re.compile(r"\b(?:my|our|his|her|their)\s+(?:" + EN_ROLE_PATTERN + r")\b|^\W*(?:he|she)\b", re.IGNORECASE)
_ZH_ROLE = re.compile(ZH_ROLE_PATTERN)
_COMPANION = re.compile(r"(?:跟|和|与|同|带着?|陪着?)(?:我的?)?$|\bwith (?:my|our)\s*$", re.IGNORECASE)

_EN_ROLE = re.compile(
    r"^(?:the user's|user's) (?:old |new |former )?(?P<role>" + EN_ROLE_PATTERN + r")\b", re.IGNORECASE
)
_ZH_OWNER = re.compile(r"^用户的?(?:" + ZH_ROLE_QUALIFIER + r")?(?:那家|那个|家)?(?P<role>" + ZH_ROLE_PATTERN + ")")
# what is left out of a frame: the subject, time words, markers, fillers
_ZH_NOISE = re.compile(
    r"用户|其实|现在|如今|目前|后来|今年|去年|这个月|上个月|最近|已经|终于|又|也|还|就|都|了|的|啊|呀|吧|嘛|呢|"
    r"[，,。.!！?？~～…、\s]|[\U0001F000-\U0001FFFF\u2600-\u27BF]"
)
_EN_STOP = frozenset(
    [
        "the",
        "user",
        "user's",
        "a",
        "an",
        "and",
        "but",
        "so",
        "to",
        "of",
        "for",
        "with",
        "is",
        "was",
        "are",
        "am",
        "be",
        "been",
        "it",
        "it's",
        "its",
        "that",
        "this",
        "i",
        "i'm",
        "my",
        "me",
        "now",
        "just",
        "actually",
        "wait",
        "oops",
        "sorry",
        "correction",
        "and",
        "then",
    ]
)


def _owner(fact: str) -> str | None:
    """Whose the fact is: '' for the user, the role for a relative's, None for no one the reader can tell."""
    text = fact.strip()
    if is_english(text):
        text = re.sub(
            r"^(?:(?:wait|oops|so|and|now|update|correction|actually|oh|then|finally)[,:]?\s+)+", "", text, flags=re.I
        )
        role = _EN_ROLE.match(text)
        if role:
            return ROLE_SYNONYMS.get(role.group("role").lower(), role.group("role").lower())
        if re.search(r"\bthe user\b(?!'s (?:" + EN_ROLE_PATTERN + r")\b)", text, re.IGNORECASE):
            return ""  # "These days the user …", "The watch gave up on the user so the user splurged …"
        # said without a subject ("Sent my first V5", "Got my own studio"): the speaker's
        return "" if re.match(r"[A-Z][a-z]+(?:ed|ent|ot|ought|ew|ove|old|uit|eft|ook)\b", text) else None
    role = _ZH_OWNER.match(text)
    if role:
        return ROLE_SYNONYMS.get(role.group("role"), role.group("role"))
    # "大二用户读的土木", "体检报告说用户有脂肪肝": a few words before the user
    before = re.match(r"^(?P<p>[^，,。]{0,6}?)用户(?!的(?:" + ZH_ROLE_PATTERN + "))", text)
    if before and not re.search(ZH_ROLE_PATTERN + r"|[他她]", before.group("p")):
        return ""
    return None


@functools.lru_cache(maxsize=256)  # asked of one whole message once per fact it may replace with
def _someone_else(message: str, owner: str, english: bool) -> bool:
    """Whether the message tells of someone other than the fact's owner: their change is not the owner's."""
    if english and not owner:
        return bool(re.match(r"^\W*(?:(?:my|our)\s+(?:" + EN_ROLE_PATTERN + r")|he|she)\b", message, re.I))
    if english:
        return any(m.group(0).split()[-1].lower() != owner.split()[-1] for m in _EN_SOMEONE.finditer(message))
    if not owner:
        # "纠正一下，她是福建人": a clause whose subject is he or she
        someone = told_of_someone_else(message) or bool(re.search(r"(?:^|[，,。！!？?\s])[他她](?!们)", message))
        return someone and not re.search(r"我(?!们)", message)
    # 他/她 in a message about a relative is that relative ("更正一下，她是重庆人")
    return any(ROLE_SYNONYMS.get(m.group(0), m.group(0)) != owner for m in _ZH_ROLE.finditer(message))


def _frame(fact: str) -> set[str]:
    """The pieces of a fact that say what it is about: characters (Chinese) or words (English)."""
    if not is_english(fact):
        return set(_ZH_NOISE.sub("", fact))
    words = re.findall(r"[a-z][a-z'-]*", fact.lower())
    return {w for w in words if w not in _EN_STOP}


#: what a statement is about, by its words: two facts of one kind may be one changed
_ZH_KINDS = {
    "work": r"工作|上班|入职|辞职|离职|跳槽|打工|兼职|干(?!嘛|啥|净|杯|脆)|卖(?!了)|当(?!时|然)|做(?!饭|梦)|职|岗|公司|单位|厂|店|调到|调去|老板|经理|员|师|送外卖|开滴滴|跑单|班",
    "home": r"住|搬(?!砖)|租|房|小区|公寓|宿舍|老家|定居",
    "commute": r"车|辆|骑|公交|地铁|通勤|打车|步行|走路",
    "device": r"手机|电脑|笔记本|平板|相机|耳机|手表",
    "money": r"薪|工资|月入|收入|挣|(?<!\d)\d+\s*[千万kK块元]|[千万]块|块钱|存款",
    "pet": r"猫|狗|养了?|宠物|鱼|兔|仓鼠",
    "study": r"读|学(?!会)|年级|研[一二三]|大[一二三四]|初[一二三]|高[一二三]|大学|专业|毕业|考研|考公|备考",
    "partner": r"男朋友|女朋友|对象|结婚|离婚|单身|老公|老婆|恋爱|分手|谈",
    "health": r"药|病|戒|烟|酒|减肥|体重|斤|血",
    "food": r"吃|喝|饭|餐|咖啡|茶|豆浆|外卖|早饭|午饭|晚饭|零食|奶",
    "sport": r"跑步?|健身|游泳|瑜伽|骑行|打球|球|练",
    "pursuit": r"学(?!会|校)|练|课|考级|乐器|琴|画",
}
_EN_KINDS = {
    "work": r"work|job|employ|hired|compan|firm|shift|promot|office|boss|manager|engineer|analyst|chef|cook|nurse|"
    r"teacher|career|position|role|intern|quit",
    "home": r"live|living|moved|move|apartment|house|rent|roommate|home|studio|condo|flat|in-laws",
    "commute": r"car|drive|driving|bike|bus|train|subway|commute",
    "device": r"phone|laptop|computer|iphone|pixel|tablet|watch|camera",
    "money": r"salary|paid|pay|income|\$|\bk\b|(?<!\d)\d+k",
    "pet": r"dog|cat|pet|puppy|kitten|fish|rabbit|hamster",
    "study": r"study|studying|school|college|university|major|degree|grade|class|course|student",
    "partner": r"boyfriend|girlfriend|husband|wife|partner|married|single|dating|divorc|engaged|fianc",
    "health": r"medic|pill|smok|diet|weight|lbs|pounds|kg|doctor|keto|vegan|vegetarian|fasting",
    "food": r"drink|coffee|tea|decaf|beer|wine|soda|juice|cups?\b|eat|breakfast|lunch|dinner|meal",
    "sport": r"run|running|marathon|gym|lift|bench|swim|yoga|cycling|race|pr\b|squat",
}


@functools.lru_cache(maxsize=256)  # asked of the whole message once per clause that tells a change
def _kinds(fact: str) -> frozenset[str]:
    if not is_english(fact):
        return frozenset(k for k, words in _ZH_KINDS.items() if re.search(words, fact.removeprefix("用户")))
    # each word from its start: "train" is no commute in "training", nor "car" in "career"
    return frozenset(k for k, words in _EN_KINDS.items() if re.search(rf"(?<![a-z])(?:{words})", fact, re.IGNORECASE))


def _slot_names(fact: str) -> set[str]:
    return {slot for slot, _ in slots_of(fact)}


#: a clause that tells a change by its verb: the new value follows it
_ZH_CHANGED = re.compile(
    r"搬到|搬去|搬来|调到|调去|换了|换成|改成|改到|提了|买了|入手了?|上了(?:台|辆|部|个)|入职|跳槽到|跳到|转到|"
    r"升到|升了|考上了?|涨到|降到|涨了|变成了?|成了|回到|回了|去了(?=\S{2,})|转去了?|"
    # a figure reached: 存到五万, 推到80公斤, 破十万
    r"[\u4e00-\u9fff]到(?=[\d一二两三四五六七八九十]+)|破(?=[\d一二两三四五六七八九十])"
)
_EN_CHANGED = re.compile(
    r"\b(?:moved (?:to|in|into|back)|switched to|got (?:a|an|my|moved to)|bought|upgraded to|transferred to|"
    r"promoted to|now (?:at|in|on|a|an|driving|living|working)|started at|joined|hit|traded (?:it|that) (?:in )?for|"
    r"(?:raised|increased|cut|went|dropped|down|up) (?:it |that )?to|swapped (?:it|that) for)\b",
    re.IGNORECASE,
)


def told_changes(message: str, covered: Sequence[str]) -> list[str]:
    """The clauses of ``message`` that tell a change by its verb and that no fact in ``covered``
    already says, restated as the user's: what a change's new value is, when no rule read it."""
    english = is_english(message)
    told = []
    for clause in split_clauses(message):
        text = clause.text.strip()
        changed = (_EN_CHANGED if english else _ZH_CHANGED).search(text)
        if not changed or re.search(r"[?？吗]$|你|您|\byou\b", text, re.IGNORECASE):
            continue
        # "单位把我同事调去了佛山": someone else's change; "跟对象一起搬到温江" is the user's, with them
        someone = _EN_SOMEONE if english else _ZH_ROLE
        if any(not re.search(_COMPANION, text[: m.start()][-6:]) for m in someone.finditer(text)):
            continue
        if english:
            said = re.sub(r"^(?:and |so |then )*(?:we|me and \w+|\w+ and i)\b", "I", clean_en(text), flags=re.I)
            said = en_third_person(said if re.match(r"(?i)i\b|i'm\b|my\b", said) else f"I {said}")
        else:
            said = third_person(clean_said(text))
            said = said if said.startswith("用户") else "用户" + said
        value = set(text[changed.end() :]) - set(" ，,。.!！了啦呀啊吧")
        if len(value) < 2 or any(value <= set(fact) for fact in covered):
            continue
        told.append(said)
    return told


@functools.lru_cache(maxsize=256)
def _marks(message: str) -> tuple[bool, bool, bool, bool, bool]:
    """What ``replaced_fact`` asks of the whole message, worked out once per message, not once per
    fact or clause that tells a change (issue 25: a message of 2,000 such clauses read itself 2,000
    times): (a correction or retraction, English, a condition, plan or "someday", no change told
    (nor a correction), no verb of change)."""
    correcting = is_correction(message) or is_retraction(message)
    english = is_english(message)
    unsure = is_conditional(message) or is_plan(message) or bool(_SOMEDAY.search(message))
    change = _EN_CHANGE if english else _ZH_CHANGE
    adding = _EN_ADDING if english else _ZH_ADDING
    unchanged = not correcting and (not change.search(message) or bool(adding.search(message)))
    apart = not (_EN_CHANGED if english else _ZH_CHANGED).search(message)
    return correcting, english, unsure, unchanged, apart


def replaced_fact(new_fact: str, message: str, known: Sequence[str], told: bool = False) -> str | None:
    """The known fact ``new_fact`` (read from ``message``) replaces, when the message marks a change
    and one of the latest facts about the same person shares its frame; else None.

    ``told``: ``new_fact`` is a clause restated by ``told_changes``, whose kind may be said in
    another clause of the message ("手机掉厕所了，一咬牙上了台一加13")."""
    correcting, english, unsure, unchanged, apart = _marks(message)
    moment = _EN_MOMENT if english else _ZH_MOMENT
    if unsure or is_plan(new_fact):
        return None
    if moment.search(new_fact):
        return None
    history = _EN_HISTORY if english else _ZH_HISTORY
    if unchanged:
        return None
    owner = _owner(new_fact)
    if owner is None or _someone_else(message, owner, english):
        return None
    frame, slots, kinds = _frame(new_fact), _slot_names(new_fact), _kinds(new_fact)
    liking = any(is_liking_slot(s) for s in slots)
    if told:
        kinds |= _kinds(message)
    best: tuple[float, int, str] | None = None
    for age, fact in enumerate(reversed(known[-RECENT:])):
        if _owner(fact) != owner or fact == new_fact or (not correcting and history.search(fact)):
            continue
        its_frame, its_slots = _frame(fact), _slot_names(fact)
        if liking and not any(is_liking_slot(s) for s in its_slots):
            continue  # "挺喜欢现在的工作" says how the user feels, not that the job changed
        if apart and {*slots, *its_slots} >= {"job", "work_location"} and not slots & its_slots:
            continue  # "现在做运营" after 在杭州工作: what one does and where, unless a verb moved both
        shared = len(frame & its_frame)
        same_slot = bool(slots & its_slots)
        same_kind = bool(kinds & _kinds(fact))
        # A fact replaces another only in a slot: the same one, or a one-value slot of the same kind
        # that the new fact fills, or (a change told by its verb, "入职顺丰了") that the old fact held alone. Words
        # or a kind in common are no slot: "is living their true self" replaces nothing of "is
        # determined to make this studio work", nor "新买了个猫爬架" 养了只猫 (issue 26). A
        # correction names what it replaces whatever its slot.
        held_alone = told and any(is_exclusive_slot(s) for s in its_slots)
        fills_one = any(is_exclusive_slot(s) for s in slots)  # "has had some games" holds no one value
        if not (same_slot or correcting or (same_kind and (fills_one or held_alone))):
            continue
        score = shared / max(1, min(len(frame), len(its_frame))) + same_slot + same_kind
        if best is None or (score, -age) > (best[0], -best[1]):
            best = (score, age, fact)
    if best is None:
        return None
    bar = 0.01 if correcting else 1.0
    return best[2] if best[0] >= bar else None
