"""Topics a person has one current choice of, and how a new choice is told.

The slot reader knows attributes by how they are said ("住在X", "在X工作").
Chat also changes things by naming a thing of the same kind in a sentence
shaped like no slot: "现在改喝无糖乌龙茶" after "每天一瓶可乐", "彻底变成猫派了"
after "一直是狗派", "后来买了辆电瓶车，骑着快多了" after "每天坐公交上班".
This module names the kinds (a drink, a way to get to work, a sport, a genre,
a game, a platform one works for) and the words that say a choice changed.

A topic is *exclusive* when people hold one choice at a time (how they get to
work, dog or cat person, the platform they drive for): any word that places
the statement after the old one (现在, 后来, these days) makes it the new
choice. The others (sports, drinks, games, genres, singers) are often held
several at once, so only words that say the old one gave way (改, 换, 只,
腻了, 不再, instead, switched) do, and never a word that adds (也, 还, also).
"""

from __future__ import annotations

import functools
import re

from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN

#: topic → (words or shapes that name a choice of it, one choice at a time)
_TOPICS: dict[str, tuple[str, bool]] = {
    "commute": (
        r"共享单车|公交车?|地铁|电瓶车|电动车|自行车|骑车|开车|自驾|打车|网约车|步行|走路|班车|城际|轻轨|摩托车?"
        r"|\bbus(?:es)?\b|\bsubway\b|\bmetro\b|\btrains?\b|\bbik(?:e|es|ing)\b|\bcycl(?:e|es|ing)\b|\bscooters?\b"
        r"|\bcarpool(?:s|ing)?\b|\bdriv(?:e|es|ing)\b|\bwalk(?:s|ing)?\b",
        True,
    ),
    "school": (r"[\u4e00-\u9fff]{1,5}?(?:实验中学|实验学校|中学|小学|一中|二中|三中|四中|高中|附中|大学)", True),
    "travel_style": (r"跟团|自由行|自驾游|穷游|报团|guided tours?|package tours?|backpacking", True),
    "pet_side": (r"狗派|猫派|dog person|cat person", True),
    "platform": (
        r"美团|饿了么|滴滴|顺丰|京东|闪送|货拉拉|花小猪|曹操出行|\bUber\b|\bLyft\b|DoorDash|Instacart|Grubhub|Deliveroo",
        True,
    ),
    "drink": (
        r"可乐|雪碧|咖啡|美式|拿铁|奶茶|[乌龙绿红花果普洱]{1,2}茶|大麦茶|麦茶|菊花茶|柠檬茶|果汁|豆浆|牛奶|啤酒|白酒|红酒|黄酒|气泡水|苏打水|柠檬水|酸奶"
        r"|\bcoffee\b|espresso|\blatte\b|cappuccino|\btea\b|matcha|\bsoda\b|\bcoke\b|\bjuice\b|\bbeer\b|\bwine\b|kombucha"
        # whatever one switched to drinking ("改喝无糖茶了", "只喝白开水"): the verb names the topic
        r"|(?<=[改只都就成]喝)(?![了过的点口完不没一两几这那多少])[\u4e00-\u9fff]{2,4}?(?=了|吧|啦|$|[，,。！!~])",
        False,
    ),
    # where one stays when travelling ("住青旅" → "只住酒店")
    "lodging": (
        r"青旅|青年旅舍|酒店|民宿|宾馆|旅馆|客栈|快捷酒店|\bhostels?\b|\bhotels?\b|\bairbnbs?\b|\bmotels?\b|\bB&Bs?\b",
        False,
    ),
    "cuisine": (
        r"(?:川|湘|粤|鲁|苏|浙|闽|徽|东北|西北|云南|贵州|新疆|泰国|日本|韩国|西|本帮|潮汕|客家)菜|日料|韩料|西餐|火锅|烧烤"
        r"|\bsushi\b|\bramen\b|\b(?:thai|mexican|italian|indian|chinese|korean|japanese|french) food\b",
        False,
    ),
    # how one reads: one way at a time for most ("这两年都看电子书了")
    "book_format": (r"纸质书|电子书|实体书|有声书|听书|\bkindle\b|\be-?books?\b|\baudiobooks?\b|paperbacks?", True),
    "season": (r"春天|夏天|秋天|冬天|\bspring\b|\bsummer\b|\bautumn\b|\bfall\b|\bwinter\b", False),
    "fruit": (
        r"榴莲|山竹|芒果|西瓜|香蕉|草莓|车厘子|樱桃|葡萄|荔枝|龙眼|水蜜桃|菠萝|凤梨|猕猴桃|蓝莓|火龙果|哈密瓜|橙子|柚子|杨梅|石榴|牛油果"
        r"|\bmangoe?s?\b|\bstrawberr(?:y|ies)\b|\bbananas?\b|\bwatermelons?\b|\bgrapes?\b|\bcherr(?:y|ies)\b|\bpeach(?:es)?\b",
        False,
    ),
    "music_genre": (
        r"摇滚|爵士|民谣|古典音乐|说唱|嘻哈|电音|流行乐|重金属|\bjazz\b|\brock\b|hip[- ]hop|\brap\b|classical music|\bEDM\b|country music",
        False,
    ),
    "sport": (
        r"羽毛球|篮球|足球|乒乓球?|网球|排球|游泳|夜跑|跑步|瑜伽|普拉提|撸铁|骑行|爬山|徒步|滑雪|攀岩|拳击|太极|广场舞|跳绳|飞盘|马拉松|高尔夫"
        r"|(?<=[改只都就成]练)(?![了过的完一两几这那多少])[\u4e00-\u9fff]{2,3}?(?=了|吧|啦|$|[，,。！!~])"
        r"|badminton|basketball|soccer|football|tennis|swimming|\bswims?\b|\brun(?:s|ning)?\b|\byoga\b|pilates|cycling|hiking"
        r"|climbing|boxing"
        r"|\bgolf\b|crossfit",
        False,
    ),
    # an instrument one plays or learns ("小提琴" → "改学大提琴", "violin" → "picked up cello instead")
    "instrument": (
        r"小提琴|大提琴|钢琴|电子琴|吉他|尤克里里|架子鼓|爵士鼓|萨克斯|长笛|单簧管|小号|古筝|二胡|琵琶|竹笛|葫芦丝|口琴|手风琴|竖琴|贝斯"
        r"|\bviolin\b|\bcello\b|\bpiano\b|\bguitar\b|\bukulele\b|\bdrums\b|\bsaxophone\b|\bsax\b|\bflute\b|\bclarinet\b"
        r"|\btrumpet\b|\bharp\b|\boboe\b|\bbassoon\b|\btrombone\b|\btuba\b|\bbanjo\b|\bmandolin\b|\bbass guitar\b"
        r"|\baccordion\b|\bharmonica\b",
        False,
    ),
    # a race one trains or signs up for ("a 10K" → "a half marathon instead")
    "race": (
        r"半马|全马|越野跑|铁人三项|(?<![\w.])\d{1,3} ?[kK](?![\w])(?= (?:run|race)|$|[,.!]| instead| in | this| next)"
        r"|\b(?:half|full|ultra)[- ]?marathons?\b|\b(?-i:[A-Z])[a-z]+ Marathon\b|triathlons?|\bironman\b",
        False,
    ),
    "genre": (
        r"[\u4e00-\u9fff]{1,2}剧(?!本|场|组|情)|综艺|动漫|动画片?|纪录片|(?:恐怖|科幻|爱情|动作|喜剧|文艺|战争)片|喜剧|恐怖|言情|武侠|悬疑|推理|科幻|奇幻|玄幻|仙侠|历史小说|网文"
        r"|thrillers?|comed(?:y|ies)|documentar(?:y|ies)|\banime\b|sitcoms?|horror|rom-?coms?|k-?dramas?|sci-?fi|romance",
        False,
    ),
    "game": (
        r"王者荣耀|和平精英|原神|蛋仔派对|永劫无间|英雄联盟|吃鸡|我的世界|崩坏|星穹铁道|金铲铲|消消乐|炉石|魔兽|第五人格|光遇|阴阳师"
        r"|Minecraft|Fortnite|Valorant|Genshin|League of Legends|Overwatch|Elden Ring|Zelda|\bApex\b|\bDota\b",
        False,
    ),
    "computer": (
        r"联想|戴尔|惠普|华硕|宏碁|小新|拯救者|MateBook|ThinkPad|MacBook|\bDell\b|\bXPS\b|\bLenovo\b|\bHP\b|\bAsus\b"
        r"|\bAcer\b|Surface|Chromebook",
        True,
    ),
    "breed": (
        r"边牧|澳牧|金毛|拉布拉多|柯基|泰迪|哈士奇|柴犬|萨摩耶|比熊|博美|法斗|德牧|阿拉斯加|中华田园犬|英短|美短|布偶|橘猫|狸花|暹罗|加菲"
        r"|golden retriever|labrador|corgi|poodle|husky|shiba|beagle|border collie|dachshund|pug",
        False,
    ),
    "bicycle": (r"捷安特|美利达|崔克|喜德盛|闪电|迪卡侬|\bGiant\b|\bTrek\b|Specialized|Cannondale|Brompton", True),
    # a rank in a title ("初级工程师" → "中级" → "高级工程师")
    "rank": (r"初级|中级|高级|副高|正高|资深", True),
    # what a teacher teaches: "我是物理老师" → "其实我教的是化学"
    "subject": (
        r"(?:语文|数学|英语|物理|化学|生物|历史|地理|政治|音乐|美术|体育)(?=老师|教师|课)|(?<=教)(?:的是)?"
        r"(?:语文|数学|英语|物理|化学|生物|历史|地理|政治|音乐|美术|体育)",
        True,
    ),
    # alcohol: one a person stops drinking altogether ("不喝酒了", "I don't drink anymore")
    "alcohol": (r"白酒|啤酒|红酒|黄酒|洋酒|喝酒|\bpints?\b|\bbeers?\b|\bwine\b|whisk(?:e)?y|vodka|\bbooze\b", False),
    # a singer, by how listening is said: "最爱听周杰伦", "天天单曲循环的是陈奕迅"
    "singer": (
        r"(?:(?<=爱听)|(?<=喜欢听)|(?<=常听)|(?<=在听)|(?<=单曲循环的是)|(?<=单曲循环))[\u4e00-\u9fff]{2,3}(?=$|[，,。！!的了])",
        False,
    ),
}
_WORDS = {topic: re.compile(words, re.IGNORECASE) for topic, (words, _) in _TOPICS.items()}

#: words that place a statement after an earlier one
_LATER = re.compile(
    r"现在|如今|目前|后来|最近|这两天|这两年|这几年|这阵子|这段时间|今年|去年|这个月|上个?月|开学|以后|从此|结果|自从|彻底|又|最后|终于"
    r"|评上|升了|晋升|提拔|当上"
    r"|\bnow\b|nowadays|these days|lately|since then|\bthen\b|anymore",
    re.IGNORECASE,
)
#: words that say a choice was held before: "之前一直在玩X", "used to drink X"
_BEFORE = re.compile(r"之前|以前|原来|过去|曾经|used to|\bbefore\b|\bformerly\b", re.IGNORECASE)
#: words that say the old choice gave way
_GAVE_WAY = re.compile(
    r"(?<![不没别])(?:改(?![天日善进])|换|转(?:到|去|成|行|学|而|投|粉)|变成|变了)|只(?:想|爱)?(?:喝|看|听|玩|打|吃|骑|坐|住|练|读)|腻了|不再|不(?:碰|玩|听|喝|看|打|跑|坐|骑)了"
    r"|不怎么[\u4e00-\u9fff]{1,4}了|受不了|看不进去|听不进去"
    r"|戒(?![不得])|弃坑|退坑|取代|代替"
    r"|instead|switched|swapped|replaced|\bonly\b|no longer|anymore|gave up|\bquit\b|it'?s \w+ for (?:me|the user)"
    r"|gone off|\bprefers?\b|done with|sick of|tired of|over (?:it|them|those)\b",
    re.IGNORECASE,
)
#: a liking said as one now held over another ("more into", 更喜欢, 反而): it gave way, unless the
#: clause adds ("also more into …")
_MORE_NOW = re.compile(r"\bmore into\b|更(?:喜欢|爱)|反而", re.IGNORECASE)
#: words that say the choice said before was a slip: the one said now is the choice
_CORRECTED = re.compile(
    r"说错|写错|打错|记错|记混|搞混|弄混|写岔|记岔|口误|更正|纠正|其实|应该是|\bactually\b|\bi meant\b|correction"
    r"|misspoke|mixed (?:them |it )?up|my mistake|scratch that",
    re.IGNORECASE,
)
#: a time of day or of the week that narrows a choice ("下午只喝绿茶" beside a liking for coffee)
_SCOPE = re.compile(
    r"早上|早晨|上午|中午|下午|晚上|睡前|周末|工作日|\bin the (?:morning|afternoon|evening)s?\b|\bat night\b|\bon weekends\b",
    re.IGNORECASE,
)
#: taking up something new, said after a word that puts it later: "现在又迷上游泳了"
_TOOK_UP = re.compile(r"迷上|爱上|入坑|沉迷|着迷|\bgot into\b|\bhooked on\b", re.IGNORECASE)
#: a favourite: "最爱", "最喜欢", "favourite"
_FAVOURITE = re.compile(r"最爱|最喜欢|favou?rite", re.IGNORECASE)
#: words that add a choice to the ones held
_ADDS = re.compile(r"也|还(?!是)|另外|同时|顺便|\balso\b|\btoo\b|as well|\bplus\b", re.IGNORECASE)
#: someone else: the choice is theirs (它, the user's pet or thing, is not)
_SOMEONE_ELSE = re.compile(
    r"(?<![吉其])[他她]|朋友|同事|室友|同学|"
    + ZH_ROLE_PATTERN
    + r"|\b(?:he|she|they)\b|(?i:\b(?:"
    + EN_ROLE_PATTERN
    + r")s?\b)"  # a whole word: "coffee person" names no son
)


#: one choice, said in several words
_SAME_CHOICE = {
    **dict.fromkeys(("美式", "拿铁", "espresso", "latte", "cappuccino", "coffee"), "咖啡"),
    **dict.fromkeys(("公交车", "bus"), "公交"),
    **dict.fromkeys(("电动车",), "电瓶车"),
    **dict.fromkeys(("单车", "骑车", "bike", "bikes", "biking", "cycle", "cycles", "cycling"), "自行车"),
    **dict.fromkeys(("drive", "drives", "driving", "自驾"), "开车"),
    **dict.fromkeys(("buses",), "公交"),
    **dict.fromkeys(("run", "runs", "running"), "跑步"),
    **dict.fromkeys(("swims", "swim", "swimming"), "游泳"),
    **dict.fromkeys(("摩托",), "摩托车"),
    **dict.fromkeys(("subway", "metro"), "地铁"),
}


@functools.lru_cache(maxsize=4096)
def topics_of(text: str) -> dict[str, frozenset[str]]:
    """Topic → the choices of it ``text`` names (lower-cased, one word for each)."""
    found = {}
    for topic, words in _WORDS.items():
        named = frozenset(_SAME_CHOICE.get(w, w) for w in (_choice(m.group(0)) for m in words.finditer(text)))
        if named:
            found[topic] = named
    return found


def _choice(words: str) -> str:
    """A choice without the words of telling that a match may begin with ("转到市里的实验中学"),
    and a film genre without 片 ("战争片" and "战争" are one choice)."""
    choice = _TELLING.sub("", words.lower()) or words.lower()
    return choice[:-1] if len(choice) == 3 and choice.endswith("片") and choice != "纪录片" else choice


#: words of telling before a name: "现在县一中", "转到实验中学"
_TELLING = re.compile(
    r"^(?:(?:用户|开学|现在|如今|后来|今年|已经|又|就|都|转学|转到|转去|转进|考上了?|考进了?|考到|进了?|在|去|到|读|上)+)"
)


def succeeds(old: str, new: str) -> tuple[str, str, str] | None:
    """(topic, old choice, new choice) when ``new`` tells of a choice that took the place of
    the one ``old`` names; None when they are not about one topic, or ``new`` may add to it."""
    old_body, new_body = _body(old), _body(new)
    if old_body is None or new_body is None:
        return None
    old_topics, new_topics = topics_of(old_body), topics_of(new_body)
    for topic, old_named in old_topics.items():
        new_named = new_topics.get(topic, frozenset())
        fresh = sorted(c for c in new_named if not any(_same(c, held) for held in old_named))
        if not fresh:
            continue
        # a favourite is one at a time, whatever its topic ("最爱的水果是榴莲" → "现在最爱山竹")
        exclusive = _TOPICS[topic][1] or bool(_FAVOURITE.search(old_body) and _FAVOURITE.search(new_body))
        # the clause that names the new choice: "也" elsewhere ("膝盖也不疼了") adds nothing to it
        clause = next(
            (c for c in re.split(r"[，,。；;！!—]", new_body) if fresh[0] in topics_of(c).get(topic, ())), new_body
        )
        later = bool(_LATER.search(new_body))
        # "又迷上攀岩了" adds a pastime to one held all along, but follows one taken up in its turn
        # ("后来迷上了蛋仔派对", "改打乒乓球了"): a chain of them, each in the last one's place
        in_turn = bool(_BEFORE.search(old_body) or _LATER.search(old_body) or _GAVE_WAY.search(old_body))
        gave_way = bool(
            _GAVE_WAY.search(new_body)
            or _CORRECTED.search(new_body)
            or (later and in_turn and _TOOK_UP.search(clause))
            or (_MORE_NOW.search(clause) and not _ADDS.search(clause))
            # a favourite named now ("现在最爱的是云南菜"): one at a time, in place of those held
            or (later and bool(_FAVOURITE.search(clause)) and not _ADDS.search(clause))
        )
        if _ADDS.search(clause) and not (_GAVE_WAY.search(clause) or _CORRECTED.search(new_body)):
            continue
        scope = {m.group(0).lower() for m in _SCOPE.finditer(clause)}
        # "下午只喝绿茶": a time of day of its own, not the choice in place of the old, unless the
        # old one is said to be over ("戒了，现在早上泡大麦茶")
        over = _LATER.search(new_body) or _GAVE_WAY.search(
            re.sub(r"只(?:想|爱)?(?:喝|看|听|玩|打|吃|骑|坐|住|练|读)", "", new_body)
        )
        narrower = scope - {m.group(0).lower() for m in _SCOPE.finditer(old_body)}
        if narrower and not (over or _CORRECTED.search(new_body)):
            continue
        if any(_same(c, held) for c in new_named for held in old_named) and not gave_way:
            continue  # "还是喝咖啡，偶尔喝茶": the old choice is said again
        if gave_way or (later and (exclusive or _BEFORE.search(old_body))):
            return topic, sorted(old_named)[0], fresh[0]
    return None


#: a taste taken up now: "现在天天玩原神", "迷上科幻了", "以后都自由行"
_TASTE_NOW = re.compile(
    r"(?:现在|最近|这两年|这阵子|如今|以后|后来|今年)?(?:都|又|就|天天|每天|只|更)*"
    r"(?:迷上了?|爱上了?|喜欢上了?|入坑了?|最爱|更喜欢|只(?:爱|想)?(?:看|听|玩|喝|吃|读|住|练)|天天(?:玩|看|听|喝|吃|读)|改(?:玩|看|听|喝|吃|读)|单曲循环)"
)


def taste_now(message: str) -> list[str]:
    """Facts of a taste taken up, said without 我 and in no slot's words ("玩腻了，现在天天玩原神"):
    the clause with a choice of a topic, and the clause before when it says the old one gave way,
    so that a judge reads the change against a liking said before."""
    if re.search(r"[?？吗你您]|[他她](?!们)", message):
        return []
    clauses = [c.strip() for c in re.split(r"[，,。！!；;~～…]", message) if c.strip()]
    found = []
    for at, clause in enumerate(clauses):
        named = topics_of(clause)
        # a later-word alone only for a topic held one at a time ("以后都自由行"); "最近在追美剧" adds
        if not named or not (
            _TASTE_NOW.search(clause) or (_LATER.search(clause) and any(_TOPICS[t][1] for t in named))
        ):
            continue
        before = clauses[at - 1] if at else ""
        said = f"{before}，{clause}" if before and _GAVE_WAY.search(before) else clause
        found.append("用户" + said.removeprefix("我"))
    return found


def _same(a: str, b: str) -> bool:
    """One choice, one said shorter: "县二中" and "二中"."""
    return a == b or (min(len(a), len(b)) >= 2 and (a.endswith(b) or b.endswith(a)))


def _body(fact: str) -> str | None:
    """What a fact says of the user, or None when it is about someone else."""
    for prefix in ("用户", "The user ", "the user "):
        if fact.startswith(prefix):
            body = fact[len(prefix) :]
            if body.startswith(("的", "'s")) and _SOMEONE_ELSE.match(body.lstrip("的's ")):
                return None
            break
    else:
        body = fact
    return None if _SOMEONE_ELSE.search(body) else body


def change_told(message: str, liking: str) -> str | None:
    """The clause of ``message`` that says one's taste gave way ("现在口味变了", "看腻了"), when the
    liking read from another clause ("爱看喜剧片") does not say so itself: the judge reads the new
    liking against the old one only with it. None when no such clause, or someone else's."""
    if _GAVE_WAY.search(liking) or _MORE_NOW.search(liking):
        return None  # "更喜欢…" says it gave way already, in words the judge reads as they stand
    if _SOMEONE_ELSE.search(message) or re.search(r"[?？吗]", message):
        return None
    for clause in (c.strip() for c in re.split(r"[，,。！!；;~～…]", message)):
        if clause and clause not in liking and _GAVE_WAY.search(clause) and not topics_of(clause):
            return clause.removeprefix("我")
    return None


__all__ = ["change_told", "succeeds", "taste_now", "topics_of"]
