"""The spec's SignalDetector: a cheap test of whether a message may hold facts or preferences.

The spec's keyword lists are kept verbatim (``FACT_SIGNALS``, ``PREF_SIGNALS``)
and ``detect`` still returns exactly the spec's four keys. Run on real dialogue
the bare lists flag only a quarter of the turns that carry persona information,
and half of what they flag is chat ("那就以后聊" hits 以后), so the detector
reads the message clause by clause (see ``clauses``) and adds, measured on the
labelled files of data/eval:

* first-person statements beyond fixed phrases: 我/我的/我家 + any verb of
  being, having, living, working, liking … in Chinese, and I'm / I live / my
  wife / I prefer … in English, unless the first person only frames the
  exchange ("我明白你的意思", "I'm sure you'll manage");
* topics that are the speaker's even without 我: family and relationship
  words ("老板姓张", "要接孩子放学"), work and school words
  ("加班的日子真的好累");
* negation (我不/我没/别/不要) and requests on how to reply;
* pastimes without 我: one proposed or shared ("明天一起去游泳吗", "陪我一起下棋")
  or kept up as a subject-less habit ("周末常去露营"); English narration without
  "I" ("Took the dog to the vet."), values ("honesty is key") and opinions of a
  work ("it's a moving war novel");
* exclusions: small talk (谢谢, 好的, 哈哈), questions (asking states nothing;
  a question to the assistant may still ask for a reply style), and the
  spec's time and frequency words (早上, 每次, 经常 …) count only next to
  another signal, since on their own they are mostly chat.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from factledger.infrastructure.offline.clauses import (
    EN_ELLIPSIS,
    Clause,
    asks_to_recommend,
    dialect,
    en_mentions_self,
    fold_cjk_spaces,
    is_english,
    is_question,
    is_question_to_assistant,
    is_small_talk,
    split_clauses,
    standing_request,
    strip_exchange,
    zh_mentions_self,
)
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN
from factledger.infrastructure.offline.wishes import is_answer_wish

#: relatives and people close to the speaker, beyond the slot table's roles
_FAMILY = ZH_ROLE_PATTERN + r"|娃|宝宝|家人|亲戚|父母|子女|孙子|孙女|前妻|前夫|闺蜜|兄弟|姐妹|家里人"
_PETS = r"狗狗|小狗|猫咪|小猫|宠物|狗|猫"
_WORK_WORDS = (
    r"工作|上班|下班|加班|工资|薪水|收入|公司|单位|职业|专业|行业|同事|上学|读书|年级|大学|高中|初中|小学|"
    r"毕业|退休|辞职|跳槽|实习|创业|开店|生意|研发|项目"
)
#: a possessor that makes a family word someone else's
_NOT_MINE = r"(?<![你您他她它])(?<!你的|您的|他的|她的|别人|人家)"
_I = r"(?:我们家|我家|我的|我)"
#: what marks a passing state or a plan for the next hour, not something lasting
_PASSING = re.compile(
    r"我(?:也|就|还)?(?:现在(?!用的|开的|开一|开辆|开台|开着|住|养|是|在读|读|做|当|的|换|搬|改|又|有(?!点|些|一点)|每天)|要去|马上|待会|一会|刚才|这会|等下|今天|应该|得去)"
    r"|我(?:也|还|都)?(?:正)?在(?:吃|看|玩|睡|洗|做饭|写作业|听歌|等|开会|上课|路上|忙|加班|追剧)"
    r"|我(?:也|都|就|差点|真)?(?:忘了|忘记了|记错了时间)"
    r"|我(?:先|这就|马上|得|要|一会儿?)?去(?:吃|睡|洗|买|看看|忙|上个?厕所|做饭|休息)"
    r"|我(?:也|都|真|真的|可|就)?(?:好|太|很|超|特别|有点|有些|挺)?(?:开心|高兴|难过|伤心|生气|郁闷|无聊|累|困|饿|烦|紧张|激动|"
    r"感动|害怕|担心|着急|崩溃|无语|尴尬|委屈|满足|幸福)(?:了|啊|呀|呢|死了)?$"
    r"|\b(?:gonna|right now|today|tonight|i'll|i ll)\b"
)
#: the speaker's moment rather than the speaker: a reaction, a thought about the exchange, an
#: errand, an event of today ("我差点笑出声", "我还以为你睡了", "我去拿个快递", "我昨天做了个梦")
_MOMENT = re.compile(
    r"我(?:也|就|都|还|倒|倒是|真|真的|可|才|只|只是|又|一下子|当然|早就|差点|突然|忽然|一时|以前也|先|没)*"
    r"(?:这么想|那么想|以为|不信(?:你|呢|啊|吧|了|$)|随口|开玩笑|说了|说的是|是说|好奇|没想好|想起来?|想到|料到|反应过来|"
    r"记得|忘了|听(?:别人|人家|朋友|他们|同事|人)说|听说(?:了|过|你|他|她|那|这|有)|看到|无所谓|猜|笑|哭|服了|懵|愣|"
    r"看看(?:再|吧|先|$))"
    r"|我(?:先|这就|马上|刚|刚刚|才|已经|正|正在|还|还在|也)*(?:到家|回来了|回家了|出门|起床|来了|来啦|在路上|在车上|"
    r"准备睡|要睡了|睡醒|醒了|去拿|去取|去接|去倒|洗个?澡|洗漱|等了)"
    # a day, not a time of day: "我下午也喝一杯" is a habit
    r"|我(?:也|还|都)?(?:今天|昨天|昨晚|前天|刚才|刚刚|刚|今早|今晚)"
    r"(?![\d一二三四五六七八九十两]+岁|满|过生日)"
    r"|我(?:居然|竟然|终于|差点|险些|要被|快被|都快|快)"
    r"|我(?:也|就|还|先|得|再|尽量)?(?:考虑一下|想一下|决定了|尽力|下线|先撤|撤了|走了|回头|等会儿?|等一下|一会儿?|待会儿?|"
    r"明天再|改天再|那会儿|好久没这么)"
    r"|我(?:才|可|哪|又)(?:没|不|有)|我没听清|我(?:不是|没)(?:那个|这个)意思|我算是"
    r"|我(?:又|好|有点|真的?)?(?:饿|渴|困|撑|冷|热)(?:了|死了|得慌)?$"
    r"|^我也(?:是|一样|这么觉得)(?:啊|呀|呢|的)?$"
)
_EN_I = r"(?:i|i'm|i m|im|i've|i ve|i am|i was|i have|i had)"
#: the listener acting on the speaker ("你一直支持我", "你跟我去…"): an exchange, not a trait
_LISTENER_THEN_ME = re.compile(r"[你您][^我]*我")
#: the speaker acting on the listener ("我逗你玩呢", "我回头告诉你", "我带你去"): an exchange too
_ME_THEN_LISTENER = re.compile(r"我(?!比)[^你您，,。]{0,8}[你您](?!一样)")
#: "我们" alone, a group the speaker is in, not the speaker ("我们这附近没有…"); 我们家/公司 stay
_ONLY_WE = re.compile(
    r"^(?:(?!我(?!们)|我们(?:家|公司|单位|学校|部门|团队|班|专业)).)*我们(?!家|公司|单位|学校|部门|团队|班|专业)(?:(?!我(?!们)).)*$"
)

#: pastimes as verb phrases; one proposed or done together tells what the speaker does for fun
_ZH_HOBBY = (
    r"打(?:篮|足|排|羽毛|乒乓|网|台|棒|高尔夫)?球|踢(?:足)?球|游泳|跑步|爬山|登山|徒步|骑(?:车|行|马)|滑(?:板|雪|冰)|溜冰|"
    r"健身|瑜伽|(?:打|玩)(?:电子|网络|手机)?游戏|打(?:牌|麻将)|下棋|钓鱼|露营|野餐|旅游|旅行|看电影|看(?:球|比赛)|唱歌|K歌|"
    r"跳舞|画画|弹(?:琴|吉他|钢琴)|拍照|摄影|逛街|烘焙|遛狗|冲浪|潜水|攀岩|打拳|练(?:琴|字|舞|瑜伽)"
)
#: "一起去钓鱼", "陪我一起打羽毛球", "我们周末一起去爬山": a pastime the speaker shares
_ZH_JOINT_PASTIME = re.compile(r"(?:一起|一块儿?)(?:去|来|玩|练|学|出去)*(?:" + _ZH_HOBBY + r")")
#: subject-less habits ("周末经常去爬山"): in Chinese the dropped subject is the speaker
_ZH_HABITUAL_PASTIME = re.compile(
    r"^(?:平时|平常|经常|常常|每天|天天|每周|每个?周末|周末|没事|有空|闲了|下班后?|放假)[^你您他她它]{0,5}?(?:"
    + _ZH_HOBBY
    + r")"
)
#: a clause whose subject is someone else ("他们经常一起去钓鱼")
_ZH_OTHER_SUBJECT = re.compile(r"^(?:他|她|它|他们|她们|它们|人家|别人|大家|有人)")
#: a change told as an event, usually without 我: moves, job changes, birthdays, a new car, quitting
#: (a bare digit run is read from its first digit, "(?<!\d)\d+": tried from every digit of a long
#: run, "\d+岁了" re-read the run each time, seconds on one message: issue 25)
_ZH_CHANGE = (
    r"搬(?:家|到|去|来|回|进)|跳槽|调(?:到|去|回|职|动)|升职|晋升|被提拔|转正|辞职|离职|裸辞|被裁|退休了|不干了|入职|"
    r"买了?(?:套|个)?房|安家|定居|落户|回老家|提了?(?:台|辆)|(?:换|买)了?(?:辆|台)|新车|旧车|岁生日|(?:步入|迈入|满)\d+岁|"
    r"(?<!\d)\d+岁了|戒了|在戒|戒烟|戒酒|分手|分了|离婚|结婚了|订婚|脱单|单身|入门了|上手了|送人了|送走了|走丢了|换成|改成|换回|"
    r"升了|当上|成了正式|转正|[上升](?:了)?(?:[一二三四五六]年级|初[一二三]|高[一二三]|小学|初中|高中|大学)|体重|(?<!\d)\d+(?:斤|公斤)|减到|瘦到|胖到|"
    r"^(?:[\u4e00-\u9fff]{0,6}?)不(?:学|考|去|做|干|减|练|追|玩|养|住|用|喝|吃|抽)[\u4e00-\u9fff]{0,4}了|^不[\u4e00-\u9fff]{1,2}了$|新家|^(?:现在|目前|已经)?住在|租房|租了|开网约车|跑外卖|跑滴滴|辞了|不在[\u4e00-\u9fff]{1,8}了|去了.{1,10}(?:当|做)|转行|改行|转岗|考上|走丢|去世|新公司|养了(?:只|条|一|两)|提车|换了?(?:个|部|台)?[^，,]{0,6}手机|"
    r"(?:大[一二三四]|初[一二三]|高[一二三]|[一二三四五六]年级)了|取消了|黄了|泡汤了|工资|月薪|年薪|涨薪|加薪|过完?生日|"
    r"^(?:\d{2}|[二三四五六七八九]?十[一二三四五六七八九]?)(?:岁)?了$|(?:买|换)了(?:个|部|台|辆)"
)
_EN_CHANGE = (
    r"\b(?:moved (?:to|into|back)|relocated|promoted|turned \d+|quit (?:my|the) job|got (?:married|engaged|divorced|laid off|fired)|"
    r"broke up|now driving|sold (?:it|that|my)|traded (?:it|that|my)|new job|joined \w+|started (?:a new job|working)|"
    r"gave up|given up|quit \w+|stopped \w+ing|now i'?m|i'?m now|now (?:living|working|driving|based)|moved into|"
    r"switched to|swapped|replaced|cancell?ed|called off|\w+'s off|graduated|passed away|adopted|"
    r"i'?m (?:a )?(?:freshman|sophomore|junior|senior))\b"
)
#: taking back or correcting what was said: it changes what is known about the speaker
_ZH_CORRECTION = (
    r"说错了|打错了|写错了|记错了|记混了|搞错了|口误|笔误|纠正一下|更正一下|开玩笑的|逗你(?:玩)?的|骗你的|吹牛的|瞎说的"
)
_EN_CORRECTION = (
    r"\b(?:oops|typo|autocorrect|correction|i meant|just kidding|i was (?:just )?(?:joking|kidding)|nvm|never mind|scratch that|"
    r"is actually|(?:was|that's) a lie)\b"
)

#: what the speaker holds dear: "patience makes all the difference", "it's vital that families eat together"
_EN_VALUES = (
    r"\b(?:can|could|does|do|will|would) (?:really |truly |actually |still )?make (?:a|all the) (?:\w+ )?difference\b"
    r"|\bit(?:'s| is) (?:so |really |very |truly |just )?(?:important|essential|crucial|vital) (?:to|that|for)\b"
    r"|\b(?:is|are) (?:the )?key\b|\b(?:is|are) what (?:really )?matters\b"
)
#: the speaker's opinion of a work or pastime: "it's a wonderful fantasy series", "this is a cozy puzzle game"
_EN_WORK_OPINION = (
    r"\b(?:it's|it is|this is|that's|that is|this one's|this one is) (?:a|an|another|one of the|my) (?:[\w-]+ ){0,4}"
    r"(?:books?|novels?|series|trilogy|movies?|films?|shows?|games?|album|songs?|bands?|podcasts?|restaurants?|recipes?|dish)\b"
)


#: a reply language asked for from now on, said without "I": "English is fine from now on"
_EN_LANGUAGE_FROM_NOW = re.compile(
    r"\b(?:english|chinese|mandarin|spanish|french|german|japanese|korean|italian|portuguese|russian) "
    r"(?:is fine|is ok(?:ay)?|works|only|please|from now on|going forward|again)\b",
    re.IGNORECASE,
)


#: each pattern table's patterns compiled once: the detector reads every clause of a message
#: through about a hundred of them, and ``re.search`` with a string looks each up in the ``re``
#: module's cache of 512, which the offline rules' many more patterns keep evicting (issue 25)
_COMPILED_TABLES: dict[int, tuple[dict[str, list[str]], dict[str, tuple[re.Pattern[str], ...]]]] = {}


def _compiled(table: dict[str, list[str]]) -> dict[str, tuple[re.Pattern[str], ...]]:
    """``table``'s patterns, compiled, by category (compiled again if the table was replaced)."""
    if not table:
        return {}
    entry = _COMPILED_TABLES.get(id(table))
    if entry is None or entry[0] is not table:
        entry = (table, {category: tuple(re.compile(p) for p in patterns) for category, patterns in table.items()})
        _COMPILED_TABLES[id(table)] = entry
    return entry[1]


#: the listener named (a clause put to the assistant, or advice to it)
_LISTENER = re.compile(r"你|您")
_EN_LISTENER = re.compile(r"\byou\b")
#: what the asker owns, named in a question
_MINE = re.compile(r"我(?:的|最喜欢的|家的?)")
#: a clause that opens on someone else or on a thing pointed at
_SOMEONE_ELSE_FIRST = re.compile(r"^(?:他|她|它|他们|她们|这|那|人家|别人)")
_EN_WORK_OPINION_RE = re.compile(_EN_WORK_OPINION)


class SignalDetector:
    """检测消息中是否可能包含 fact 或 preference (the spec's detector, extended)."""

    # The spec's lists, verbatim.
    FACT_SIGNALS: ClassVar[dict[str, list[str]]] = {
        "identity": ["我是", "我叫", "我姓", "我的名字"],
        "location": ["我在", "我住", "我工作在", "我们公司在", "坐标"],
        "relationship": [
            "我老板",
            "我同事",
            "我老婆",
            "我老公",
            "我女朋友",
            "我男朋友",
            "我爸",
            "我妈",
            "我儿子",
            "我女儿",
        ],
        "work": ["我们公司", "我负责", "我的工作", "我是做", "我的职位"],
        "possession": ["我的车", "我的房", "我的电脑", "我的手机"],
        "state": ["我有", "我没有", "我会", "我不会"],
    }

    PREF_SIGNALS: ClassVar[dict[str, list[str]]] = {
        "explicit": ["我喜欢", "我偏好", "我习惯", "我倾向于"],
        "dislike": ["我不喜欢", "我讨厌", "我不想", "别给我", "不要"],
        "style_request": ["简短点", "详细点", "直接说", "说重点", "不用解释", "解释一下"],
        "time": ["早上", "晚上", "周末", "工作日", "以后", "每次", "总是"],
        "frequency": ["经常", "很少", "从不", "一直", "偶尔"],
    }

    # Additions. Patterns in FACT_PATTERNS apply to clauses where the speaker
    # talks about themself; TOPIC_PATTERNS to any statement (no 我 needed).
    FACT_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "identity": [
            _I
            + r"(?:现在|今年|也|还|就|可|可是|本来|其实|并|并不|不|都)*(?:是|叫|姓|今年|名字|属|出生|\d+多?岁|[一二三四五六七八九十两]+多?岁)",
            r"\bmy name\b",
            r"\b(?:i'm|i am|i m|im) (?:a|an|\d+)\b",
            r"\bcall me\b",
            r"\bi was born\b",
            r"\b(?:i'm|i am|i m|im) (?:(?:very|so|really|partially|currently|still|not) )*(?:\w+(?:ed|ic|ish|ian|an|ese|less|ful))\b",
        ],
        "location": [
            _I + r"(?:现在|目前|已经|也|一直|还|就|都)?(?:在|住|家在|搬|老家|来自|生活在|长大)",
            r"我[^，。,.!?！？]{0,4}?(?:住在|住|搬到|搬去|搬来|搬回|搬家|搬进)",
            r"\bi (?:now |currently |still )?live\b",
            r"\bi(?:'ve| have| ve)? (?:just |recently )?moved\b",
            r"\bbased in\b",
            r"\bi(?:'m| am| m) from\b",
            r"\bi grew up\b",
        ],
        "relationship": [
            _I + r"(?:" + _FAMILY + r")",
            _I + r"(?:现在|目前|还是|一直|已经|刚|也)*(?:单身|已婚|未婚|离婚|离异|结婚|订婚|恋爱|脱单)",
            r"\bmy (?:"
            + EN_ROLE_PATTERN
            + r"|kids?|children|family|parents|grand\w+|fianc\w*|spouse|pets?|dogs?|cats?)\b",
            r"\bi(?:'m| am| m) (?:married|divorced|single|engaged|widowed)\b",
        ],
        "work": [
            _I + r"(?:现在|目前|也|还|一直|主要)?(?:负责|从事|是做|做|当|在.{1,15}(?:上班|工作|做|当|读书|上学))",
            r"\bi (?:work|worked|volunteer|teach|study|studied|graduated)\b",
            r"\bmy (?:job|work|boss|business|career|company|class)\b",
        ],
        "possession": [_I + r"(?:的)?(?:车|房|电脑|手机|家|" + _PETS + r")", r"我养", r"\bi (?:own|drive)\b"],
        "state": [
            r"我(?:也|还|都|就|可|倒|并)?(?:有|没有|没|会|不会|能|不能|可以|不|从来|从没|从未|曾经|已经|正在|刚|打算|准备|想|要)",
            r"\bi (?:have|own|can|can't|cannot|don't|do not|didn't|never|used to|am going to|'m going to|was|had)\b",
            r"\bi(?:'ve| ve| have) (?:\w+ )?(?:been|got|had|done|made|started|bought|learned|tried)\b",
        ],
        "habit": [
            _I
            + r"(?:现在|也|还|都|就|一直)*(?:每天|天天|每周|每晚|每个?月|每年|经常|常常|通常|一般|平时|平常|总是|老是|从不|很少|偶尔|习惯|不吃|不喝|不抽|只吃|只喝)",
            r"\bi (?:always|usually|often|never|sometimes|regularly|rarely)\b",
            r"\bevery (?:day|week|month|morning|night)\b",
        ],
        "activity": [
            # whatever else a speaker says of themself: 我 + any verb, I / my + anything
            _I + r"(?:也|还|都|就|可|最近|今天|昨天|刚|刚刚|已经|正在|一直|又|从小)*[\u4e00-\u9fff]",
            r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|myself|we|we're|we've|our|us)\b",
            EN_ELLIPSIS,
        ],
    }

    TOPIC_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "identity": [r"(?:白羊|金牛|双子|巨蟹|狮子|处女|天秤|天蝎|射手|摩羯|水瓶|双鱼)(?:座|女|男)"],
        "relationship": [_NOT_MINE + r"(?:" + _FAMILY + r")", r"家里的(?:" + _PETS + r")"],
        "work": [_NOT_MINE + r"(?:" + _WORK_WORDS + r")"],
        "change": [_ZH_CHANGE, _EN_CHANGE],
        "correction": [_ZH_CORRECTION, _EN_CORRECTION],
    }

    #: pastimes the speaker shares or keeps up without naming themself (not when another subject is named)
    PASTIME_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "habit": [_ZH_JOINT_PASTIME.pattern, _ZH_HABITUAL_PASTIME.pattern],
    }

    #: English opinions and values: said by the speaker even without "I"
    OPINION_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "explicit": [_EN_VALUES, _EN_WORK_OPINION],
    }

    PREF_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "explicit": [
            r"喜欢|偏好|倾向|爱看|爱听|爱吃|爱玩|感兴趣|更爱|最爱|热爱|迷上|着迷|粉丝",
            r"\bi (?:(?:really|also|just|absolutely) )?(?:prefer|like|love|enjoy|adore)\b",
            r"\bmy fav(?:ou?rite)?\b",
            r"\bis my (?:fav(?:ou?rite)?|addiction|passion|weakness)\b",
        ],
        "dislike": [
            r"讨厌|不喜欢|不想|受不了|害怕|怕|恐惧|反感|烦|不爱",
            r"\bi (?:don't|do not|don t) (?:like|enjoy|want|care)\b|\bi (?:hate|dislike|can't stand|avoid)\b|\bafraid of\b",
        ],
    }

    #: preferences about how to reply: they count in requests as well as statements
    REQUEST_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "dislike": [
            r"(?:别|不要|不用|少)(?:再|太|给我|跟我|对我)?(?:说|讲|解释|回复|回答|写|发|打扰|提醒|联系|用|废话|啰嗦|长)",
            r"\bdon't (?:send|call|write|use|explain|bother|remind)\b",
        ],
        "style_request": [
            r"简短|简洁|精简|短一?点|长一?点|太长|详细|具体点|直接|重点|啰嗦|废话|口语化|正式|严肃|随意|随便一?点|活泼|轻松一?点|俏皮|接地气|简单说|"
            r"温柔一?点|温柔些|委婉|温和一?点|讲(?:得)?(?:深入?|硬核)(?:一?点|些)",
            r"(?:叫|称呼)我(?!们)",
            # what to recommend, asked for: "以后推点清淡的粤菜", "还是给我推喜剧吧"
            r"(?:以后|之后|今后|还是|就)(?:给我)?推(?:荐)?(?:点|些|一些)?[\u4e00-\u9fff]|推(?:点|些)[\u4e00-\u9fff]{2,8}吧",
            r"(?:改回|换回|切回|换成|改成|改用|还是用?)(?:简体|繁体|中文|英文)",
            r"\b(?:short|shorter|brief|concise|detailed|direct|to the point|casual|formal|professional tone)\b",
            r"\b(?:bullet(?:ed)?[- ]points?|bullets|paragraphs|casually|formally|in detail|into detail|full sentences|flowing text)\b",
        ],
        "time": [
            r"(?:上午|中午|下午|夜里|深夜|半夜|下班后|早上|晚上|周末|(?<!\d)\d+点).{0,6}(?:打扰|联系|找|发|提醒|推送|打电话)",
            r"\b(?:morning|evening|night|weekend)s?\b.{0,20}\b(?:call|message|remind|contact)\b",
        ],
        "format": [
            r"列表|表格|分点|分条|要点|代码块|markdown|段落|图表|纯文字|纯文本|emoji|表情|颜文字|公制|英制|摄氏|华氏",
            r"\b(?:bullet|list|table)s?\b|\b(?:metric|imperial|emojis?|plain text|celsius|fahrenheit|kilometers|miles)\b",
        ],
        "language": [
            r"(?:用|说|讲|以|换回|换成|改用|切回)(?:中文|英文|英语|汉语|日语|普通话)|(?:中文|英文|英语)(?:回复|回答)|术语|打比方|举例子|举个例子|大白话|通俗|浅显|说人话|专业说法|硬核",
            r"\bin (?:english|chinese)\b|\b(?:jargon|analogies|technical terms?|simple words|eli5)\b"
            r"|\bswitch (?:back )?to (?:english|chinese|mandarin|spanish|french|german|japanese|korean)\b"
            r"|\b(?:american|british|us|uk) (?:english|spelling)\b",
        ],
        "tool": [
            r"(?:用|使用|换|换成|改用)\s*[A-Za-z]",
            r"(?:用|通过)(?:微信|钉钉|飞书|QQ|邮件|邮箱)",
            r"(?:写|改用|换成)\s*(?:python|golang|go|java|javascript|typescript|rust|c\+\+|c#|ruby|php|swift|kotlin)(?![a-z])",
            r"\b(?:code|examples?|snippets?) in (?:python|go|golang|java|javascript|typescript|rust|c\+\+|ruby|php|swift|kotlin)\b",
            r"\b(?:switch to|use|write|show me|give me) (?:python|golang|java|javascript|typescript|rust|c\+\+|ruby|php|swift|kotlin)\b",
        ],
    }

    #: categories that say only "the speaker said something about themself"
    GENERIC_CATEGORIES = frozenset({"activity", "state"})
    #: the spec's modifiers: they name a category only next to another signal
    MODIFIER_CATEGORIES = frozenset({"time", "frequency"})
    #: what a question to the assistant may still signal: how to answer, never facts
    REQUEST_CATEGORIES = frozenset({"style_request", "dislike", "time", "format", "language"})

    def detect(self, text: str) -> dict[str, Any]:
        """返回检测结果: ``has_fact_signal``, ``has_pref_signal``, ``fact_categories``, ``pref_categories``."""
        result: dict[str, Any] = {
            "has_fact_signal": False,
            "has_pref_signal": False,
            "fact_categories": [],
            "pref_categories": [],
        }
        if not isinstance(text, str):
            return result
        text = fold_cjk_spaces(dialect(text))
        facts: list[str] = []
        prefs: list[str] = []
        for clause in split_clauses(text):
            clause_facts, clause_prefs = self._clause(clause)
            facts += [c for c in clause_facts if c not in facts]
            prefs += [c for c in clause_prefs if c not in prefs]
        result["fact_categories"] = self._ordered(
            facts, self.FACT_SIGNALS, self.FACT_PATTERNS, self.TOPIC_PATTERNS, self.PASTIME_PATTERNS
        )
        result["pref_categories"] = self._ordered(
            prefs, self.PREF_SIGNALS, self.PREF_PATTERNS, self.REQUEST_PATTERNS, self.OPINION_PATTERNS
        )
        result["has_fact_signal"] = bool(result["fact_categories"])
        result["has_pref_signal"] = bool(result["pref_categories"])
        return result

    # -- internals ---------------------------------------------------------

    def _clause(self, clause: Clause) -> tuple[list[str], list[str]]:
        """Fact and preference categories one clause raises."""
        facts, prefs = self._categories(clause)
        if not prefs and is_answer_wish(clause):
            # "希望回答时多给代码示例", "能不能以后回答短一点？": how to answer, wished or asked politely
            prefs = ["style_request"]
        return facts, prefs

    def _categories(self, clause: Clause) -> tuple[list[str], list[str]]:
        if is_small_talk(clause.text):
            return [], []
        text = clause.text.lower()
        english = is_english(text)
        if is_question_to_assistant(clause):
            asked = self._hits(text, {}, self.REQUEST_PATTERNS)
            return [], [c for c in asked if c in self.REQUEST_CATEGORIES]
        if is_question(clause):
            if not english and not _LISTENER.search(text):
                # asking states nothing, save what the asker owns: "我能带上我最喜欢的米老鼠吗"
                if _MINE.search(text):
                    return ["possession"], []
                # or the pastime they propose sharing: "明天一起去钓鱼吗"
                if _ZH_JOINT_PASTIME.search(text) and not _ZH_OTHER_SUBJECT.search(text):
                    return ["habit"], []
            return [], []

        about_self = en_mentions_self(text) if english else zh_mentions_self(text)
        addressed = (english and _EN_LISTENER.search(text)) or (not english and _LISTENER.search(text))
        facts: list[str] = []
        prefs: list[str] = []
        if about_self:
            said = strip_exchange(text)
            facts = self._hits(said, self.FACT_SIGNALS, self.FACT_PATTERNS)
            facts += [c for c in self._hits(said, {}, self.TOPIC_PATTERNS) if c not in facts]
            if len(facts) > 1 and "activity" in facts:
                facts.remove("activity")  # the catch-all only when nothing more specific applies
            prefs = self._hits(said, self.PREF_SIGNALS, self.PREF_PATTERNS)
        elif not addressed:
            facts = self._hits(text, {"location": ["坐标"]}, self.TOPIC_PATTERNS)
            # subject-less liking is the speaker's in Chinese ("平时喜欢简短的回复")
            if not english and not _SOMEONE_ELSE_FIRST.match(text):
                prefs = self._hits(text, {}, self.PREF_PATTERNS)
        if english:
            # a value or an opinion of a work is the speaker's even when "I" is left out
            opinions = self._hits(text.replace("’", "'"), {}, self.OPINION_PATTERNS)
            if addressed:  # "it's important that you rest" is advice; a work stays an opinion
                opinions = [c for c in opinions if _EN_WORK_OPINION_RE.search(text.replace("’", "'"))]
            prefs += [c for c in opinions if c not in prefs]
        elif not _ZH_OTHER_SUBJECT.search(text) and not addressed:
            facts += [c for c in self._hits(strip_exchange(text), {}, self.PASTIME_PATTERNS) if c not in facts]
        # how to reply is the user's to ask, whoever the clause names
        spec_styles = {"style_request": self.PREF_SIGNALS["style_request"]}
        prefs += [c for c in self._hits(text, spec_styles, self.REQUEST_PATTERNS) if c not in prefs]
        if not prefs and (
            standing_request(clause.text) or asks_to_recommend(clause.text) or _EN_LANGUAGE_FROM_NOW.search(text)
        ):
            prefs.append("style_request")  # "以后推荐清淡的吧", "还是用简体吧", "German is fine from now on"
        if (
            set(facts) <= self.GENERIC_CATEGORIES
            and not prefs
            and (
                _PASSING.search(text)
                or (
                    not english
                    and any(p.search(text) for p in (_MOMENT, _LISTENER_THEN_ME, _ME_THEN_LISTENER, _ONLY_WE))
                )
            )
        ):
            # "我现在有点困", "我先去吃个饭", "I'm gonna grab lunch": the moment, not the person;
            # "要不是你一直支持我…", "我回头告诉你": the exchange; "我们这附近…": a group, not the speaker
            facts = []
        if facts or prefs:
            # the spec's time and frequency words qualify a statement that already says something
            prefs += [
                c for c in self._hits(text, self.PREF_SIGNALS, {}) if c in self.MODIFIER_CATEGORIES and c not in prefs
            ]
        return facts, prefs

    @staticmethod
    def _hits(text: str, signals: dict[str, list[str]], patterns: dict[str, list[str]]) -> list[str]:
        """Categories whose spec keywords or added patterns occur in ``text``."""
        if not text:
            return []
        compiled = _compiled(patterns)
        hits: list[str] = []
        for category in list(signals) + [c for c in patterns if c not in signals]:
            if any(s in text for s in signals.get(category, ())) or any(
                p.search(text) for p in compiled.get(category, ())
            ):
                hits.append(category)
        return hits

    @staticmethod
    def _ordered(found: list[str], *tables: dict[str, list[str]]) -> list[str]:
        """The spec's categories first, in its order, then the added ones."""
        order: list[str] = []
        for table in tables:
            order += [c for c in table if c not in order]
        return sorted(found, key=lambda c: order.index(c) if c in order else len(order))


__all__ = [
    "Clause",
    "SignalDetector",
    "dialect",
    "is_question",
    "is_question_to_assistant",
    "is_small_talk",
    "split_clauses",
]
