"""Chinese rules for preferences about replies: style, format, language, time, tools.

These are always the user's, whatever subject a clause carried: only the user
tells the assistant how to answer ("老板姓张，平时喜欢简短的回复").
"""

from __future__ import annotations

import re

from factledger.infrastructure.offline.clauses import standing_request
from factledger.infrastructure.offline.dimensions import dimensions
from factledger.infrastructure.offline.rules_common import (
    _Item,
    _pref,
    _Subject,
    _tidy,
    named_rule,
    third_person,
)

# ==========================================================================
# Chinese: preferences about replies (always the user's)
# ==========================================================================

_STYLE_REQUESTS: tuple[tuple[str, str], ...] = (
    # "说话温柔点", "别太直接": how bluntly to say things, the gentle side
    (
        r"(?:委婉|温柔|温和|含蓄)一?(?:点|些)|(?:说话|讲话|语气)(?:要|再)?(?:温柔|委婉|温和)|(?:不要|别)(?:太|那么)?(?:直接|冲|凶)(?!说|讲|给)",
        "偏好委婉温和的回复风格",
    ),
    (r"(?:不用|不要|别|无需)(?:再|多)?(?:解释|说明)", "偏好不加解释的回复风格"),
    (
        r"直接(?:说|讲|一?点|些|给)|(?:说|讲)重点|重点说|(?:不要|别|少)(?:说)?废话|别(?:太)?啰嗦",
        "偏好简洁直接的回复风格",
    ),
    (
        r"(?:简短|简洁|精简|简单|短)一?(?:点|些)|(?:说|讲|回答|回复|写)得?(?:简短|简洁|精简|短)|(?:不要|别)(?:太)?长|"
        r"(?:不用|不要|别|无需|没必要)(?:那么|这么|太|写得?|讲得?|说得?)?(?:详细|具体|长)|"
        r"(?:一两|两三|三五|三两|几)句话?(?:就|说|讲|概括|总结|说清楚|讲清楚)|一句话(?:说|讲|概括|总结)|简单(?:说说|讲讲|聊聊|说|讲)|"
        r"(?:太|有点)长了",
        "偏好简短的回复风格",
    ),
    (
        r"(?:详细|具体|长)一?(?:点|些)|(?:说|讲|回答|回复|解释|写)得?(?:详细|具体|长)|(?:多|展开)(?:讲|说|写)(?:点|些|一点|一些)|"
        r"(?:不用|不要|别)(?:那么|太)?(?:简短|简略|简单)",
        "偏好详细的回复风格",
    ),
    (r"(?:正式|严谨|书面|规范|严肃)一?(?:点|些)|(?:不要|别)(?:太)?(?:随意|随便)", "偏好正式的回复风格"),
    (
        r"(?:随意|随便|轻松|活泼|俏皮|口语化|接地气)一?(?:点|些)|像(?:朋友|哥们|闺蜜)一样(?:聊|说话)|"
        r"(?:不要|别|不用)(?:太|那么)?(?:正式|严肃|官方|客气|拘谨)",
        "偏好随意、口语化的回复风格",
    ),
)

# How much to explain, in which words, with what in the reply: each names the side it takes.
_PLAIN_WORDS = (
    r"多打比方|打个?比方|多举例子?|举个?例子|用大白话|大白话|通俗(?:易懂)?|说人话|浅显(?:易懂)?|讲得?简单易懂"
)
_TECHNICAL_WORDS = (
    r"(?:直接)?用(?:专业)?(?:说法|术语|名词)|(?:可以|直接)?说(?:专业)?术语|专业(?:说法|术语|名词)(?:就行|也行|没关系|可以)|"
    r"讲(?:得)?(?:硬核|专业|深入|深)(?:一?点|些)|硬核(?:一?点|些)"
)
_EMOJI_WITHOUT = (
    r"纯文字|纯文本|只要文字|(?:不要|别|不用|少|去掉)(?:再)?(?:带|加|用|发|放)?(?:点)?(?:emoji|表情|颜文字)"
)
_EMOJI_WITH = r"(?:多|可以|能|记得)?(?:带|加|用|发|放)(?:点|些|一些|几个|个|一个)?(?:emoji|表情|颜文字)"
_CODE_LANGUAGES = r"Python|Golang|Go|Java(?:Script)?|TypeScript|C\+\+|C#|Rust|Ruby|PHP|Swift|Kotlin|Scala|MATLAB|Shell|Bash|SQL|Lua|Dart|Perl|Haskell"
_CODE_LANGUAGE = re.compile(
    r"(?:用|写|拿|改用|换成|换用|转成?|都用|一律用)\s*(?P<l>" + _CODE_LANGUAGES + r")(?![A-Za-z])", re.IGNORECASE
)
#: code examples as a standing request, not one task ("用Python写个脚本" asks for one script)
_CODE_EXAMPLES = re.compile(
    r"示例|例子|样例|示范|demo|举例|以后|往后|默认|一律|统一|都用|都给我|从现在|(?:写|给我写)(?:代码|程序)的?(?:时候|时)",
    re.IGNORECASE,
)


# Compiled once (issue 25): each clause of a message that may ask something of replies is read
# through these; a string pattern is a look-up in ``re``'s cache of 512, which the rules' many
# more patterns keep evicting.
_EMOJI_WITHOUT_RE = re.compile(_EMOJI_WITHOUT, re.IGNORECASE)
_EMOJI_WITH_RE = re.compile(_EMOJI_WITH, re.IGNORECASE)
_PLAIN_WORDS_RE = re.compile(_PLAIN_WORDS)
_TECHNICAL_WORDS_RE = re.compile(_TECHNICAL_WORDS)
_FEWER_TERMS = re.compile(r"(?:少|不|别|避免|不要)(?:用|说)?(?:专业)?术语")
_UNIT_ASKED = re.compile(r"(?:用|换成|改用|切换到|切到|换到)(?P<u>公制|英制|摄氏度?|华氏度?|公里|英里|公斤|千克|磅)")
_SWITCHED_TO_TOOL = re.compile(r"^(?:换|换成|改用|转|转到|换到)(?:了)?\s*(?P<tool>[A-Za-z][A-Za-z0-9.+#-]*)(?:了|啦)?$")


@named_rule("rules_zh_prefs.reply-content")
def _reply_content_preference(rest: str, said: str) -> _Item | None:
    """Code examples in one language, emoji or plain text, plain words or technical terms, units."""
    m = _CODE_LANGUAGE.search(rest)
    if m and _CODE_EXAMPLES.search(said):
        language = m.group("l")
        language = {"golang": "Go"}.get(language.lower(), language)
        return _pref(f"偏好用{language}写代码示例", "tool", said, behaviour=True)
    if _EMOJI_WITHOUT_RE.search(rest):
        return _pref("偏好纯文字的回复", "format", said, behaviour=True)
    if _EMOJI_WITH_RE.search(rest):
        return _pref("偏好回复里带emoji表情", "format", said, behaviour=True)
    if _PLAIN_WORDS_RE.search(rest):
        return _pref("偏好通俗易懂、多打比方的讲解", "language", said, behaviour=True)
    if _TECHNICAL_WORDS_RE.search(rest) and not _FEWER_TERMS.search(rest):
        return _pref("偏好使用专业术语的讲解", "language", said, behaviour=True)
    m = _UNIT_ASKED.search(rest)
    if m:
        unit = m.group("u")
        side = "英制" if unit in ("英制", "华氏", "华氏度", "英里", "磅") else "公制"
        named = "" if unit == side else f"（{unit}）"
        return _pref(f"偏好使用{side}单位{named}", "format", said, behaviour=True)
    m = _SWITCHED_TO_TOOL.match(rest)
    if m and not _DEVICE_BRANDS.match(m.group("tool")):
        return _pref(f"偏好使用{m.group('tool')}", "tool", said, behaviour=True)
    return None


#: "换成OPPO了" is a new phone (a fact), not a tool to answer with
_DEVICE_BRANDS = re.compile(
    r"(?:iPhone|OPPO|vivo|Pixel|Galaxy|Samsung|Redmi|realme|OnePlus|Huawei|Xiaomi|Honor|Nokia|Tesla|BMW|Audi|Benz|"
    r"Toyota|Honda|Nissan|Ford|Volvo|Lexus|Mazda|Kia|Jeep|Porsche|Switch|PS5|Xbox|iPad|MacBook|ThinkPad)",
    re.IGNORECASE,
)


_STYLE_WORDS = re.compile(r"简短|简洁|简单|精简|短|详细|具体|直接|重点|啰嗦|废话|正式|随意|口语|幽默|委婉|解释")
_REPLY_NOUNS = re.compile(r"(?:回复|回答|答复|答案|解释|说明)$")
_LANGUAGES = r"中文|英文|英语|汉语|日语|普通话|粤语|简体字?|繁体字?"
_FORMATS = r"列表|表格|代码块|代码|markdown|Markdown|图表|段落|要点"
_REPLY_CONTEXT = re.compile(r"回复|回答|答|给我|请|以后|输出|展示|列出|发我|跟我|和我|交流|沟通|聊")
_TIME = (
    r"(?P<t>(?:每天)?(?:早上|上午|中午|下午|晚上|夜里|深夜|半夜|周末|工作日|下班后|下班时间|上班时间|休息时间)"
    r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})?点?(?:以后|之后|后|前|以前|之前)?"
    r"|(?:\d{1,2}|[一二三四五六七八九十]{1,3})点(?:以后|之后|后|前|以前|之前))"
)
_CONTACT = r"(?P<act>打扰|联系|找|发消息|发信息|打电话|提醒|推送)"
_CONTACT_PHRASE = {
    "打扰": "被打扰",
    "联系": "被联系",
    "找": "被联系",
    "发消息": "收到消息",
    "发信息": "收到消息",
    "推送": "收到推送",
    "打电话": "接到电话",
    "提醒": "被提醒",
}
# tool names stop at the first CJK character: "VSCode写代码" names VSCode
_TOOL = re.compile(
    r"(?:用|使用|通过)\s*(?P<tool>[A-Za-z][A-Za-z0-9.+#-]*(?: [A-Z][A-Za-z0-9.+#-]*)?|微信|企业微信|钉钉|飞书|QQ|邮件|邮箱)"
)


_TIME_NOT_TO_CONTACT = re.compile(
    _TIME + r".{0,4}?(?P<neg>别|不要|不用|勿|不想|不希望)(?:再)?(?:被)?(?:给我)?" + _CONTACT
)
_TIME_TO_CONTACT = re.compile(r"(?:请|最好|可以|尽量)?(?:在)?" + _TIME + r"(?:再)?(?:给我)?" + _CONTACT)
#: "叫我“老板”吧哈哈": a laugh after the name asked for
_TRAILING_LAUGH = re.compile(r"(?:哈|嘿|嘻|hh|😂|🤣|😄|😆)+$")
_CALL_ME = re.compile(
    r"(?:叫|称呼)(?:我|用户)(?:为|做)?(?P<n>[^，,。！!？?\s]{1,6}?)(?:就行|就好|就可以|吧|好了|呗|啦)?$"
)
_NOT_TO_CALL = re.compile(r"不要|别|不用|不许|谁")
_WHAT_TO_CALL = re.compile(r"(?:什么|啥)")
_WORD_LIMIT_ASKED = re.compile(
    r"(?:控制在|不超过|别超过|不要超过|限制在|放宽到|缩短到|压缩到|改成|改为)(?P<n>\d{2,4})\s*(?:个)?字(?P<q>以内|左右|以下|之内)?"
)
_ASKING = re.compile(r"[?？吗]")


@named_rule("rules_zh_prefs.time")
def _time_preference(rest: str, said: str) -> _Item | None:
    m = _TIME_NOT_TO_CONTACT.search(rest)
    if m:
        return _pref(f"{m.group('t')}不希望{_CONTACT_PHRASE[m.group('act')]}", "time", said)
    m = _TIME_TO_CONTACT.search(rest)
    if m and m.group("act") != "打扰":
        return _pref(f"偏好在{m.group('t')}{_CONTACT_PHRASE[m.group('act')]}", "time", said)
    return None


@named_rule("rules_zh_prefs.tool")
def _tool_preference(subject: _Subject, rest: str, said: str) -> _Item | None:
    """'我平时用VSCode写代码' → 偏好使用VSCode; only the user's own habits, never one-off requests."""
    # "用Python写个脚本" is a task, not a habit: it needs 我 or a habitual adverb
    if subject.kind != "user" or not (subject.explicit or re.search(r"平时|平常|一般|通常|经常|总是|习惯|一直", said)):
        return None
    m = re.match(
        r"^(?:一般|通常|经常|常|总是|都|习惯)*(?:用|使用)\s*(?P<tool>[A-Za-z][A-Za-z0-9.+#-]*(?: [A-Z][A-Za-z0-9.+#-]*)?|微信|钉钉|飞书|QQ)",
        rest,
    )
    if m and not re.search(r"了|过", rest):
        return _pref(f"偏好使用{m.group('tool')}", "tool", said, behaviour=True)
    return None


@named_rule("rules_zh_prefs.request")
def _request_preference(subject: _Subject, rest: str, said: str) -> _Item | None:
    """Requests on how to reply: 简短点, 说重点, 用表格, 用中文回复, 晚上别打扰我 …"""
    # "以后叫我小林就行", "换个称呼吧，叫我林哥": what to call the user
    # (the name in quotes, a laugh after it: "叫我“老板”吧哈哈")
    called = _TRAILING_LAUGH.sub("", rest).replace("“", "").replace("”", "").replace('"', "")
    m = _CALL_ME.search(called)
    if m and not _NOT_TO_CALL.search(rest[: m.start()]) and not _WHAT_TO_CALL.match(m.group("n")):
        return _pref(f"偏好被称呼为{m.group('n')}", "communication_style", said, behaviour=True)
    item = _time_preference(rest, said) or _recommendation_preference(rest, said)
    if item:
        return item
    # "回答控制在80字以内", "以后放宽到200字左右吧": how long an answer may be, by a figure
    limit = _WORD_LIMIT_ASKED.search(rest)
    if limit and not _ASKING.search(rest):
        return _pref(
            f"偏好回答控制在{limit.group('n')}字{limit.group('q') or '以内'}",
            "communication_style",
            said,
            behaviour=True,
        )
    # "我用表格记账" is not a request; imperatives and replies-talk are
    request_like = subject.kind in ("assistant", "unknown") or not subject.explicit or bool(_REPLY_CONTEXT.search(rest))
    m = re.search(
        r"(?P<neg>别|不要|不用|少)?(?:用|以|说|讲|换回|换成|改用|改成|改回|切回|切换到|换到|^(?:算了)?还是用?)(?P<l>"
        + _LANGUAGES
        + r")",
        rest,
    )
    # "那还是日语吧": the language alone, asked back (the lead 还是 may be gone from rest)
    # ("以后还是用中文沟通吧": from now on, talking in it)
    back = re.fullmatch(
        r"(?:以后|之后|今后|接下来)?(?:还是)?(?:都)?用?(?P<l>"
        + _LANGUAGES
        + r")(?:回复|回答|交流|沟通|聊天?|回|说|讲)?(?:吧|就行|就好|好了|就可以|即可)",
        rest,
    )
    if back and re.search(r"还是|换回|改回|以后", said) and not m:
        return _pref(f"偏好用{back.group('l')}回复", "language", said, behaviour=True)
    if m and request_like and not re.search(r"会(?:说|讲)", rest):
        verb = "不希望" if m.group("neg") else "偏好"
        return _pref(f"{verb}用{m.group('l')}回复", "language", said, behaviour=True)
    if re.search(r"(?:少用|别用|不要用|不用|避免|少点|少一点|少说|别说)(?:专业)?术语", rest):
        return _pref("偏好少用专业术语", "language", said, behaviour=True)
    item = _reply_content_preference(rest, said)
    if item:
        return item
    m = re.search(r"(?P<neg>别|不要|不用|少)?(?:用|以|做成|列成|整理成|分成|给我列?个?)(?P<f>" + _FORMATS + r")", rest)
    if m and request_like:
        verb = "不希望" if m.group("neg") else "偏好"
        return _pref(f"{verb}用{m.group('f').lower()}的形式回复", "format", said, behaviour=True)
    if re.search(r"一段话", rest) and request_like and not re.search(r"(?:不要|不用|别)[^，,]{0,4}一段话", rest):
        return _pref("偏好写成一段话的回复格式", "format", said, behaviour=True)  # in the user's words
    if (
        re.search(r"(?:不要|不用|别|无需)(?:再)?(?:分点|分条|列点|列要点|列了|列出来|分条列)|成段|段落", rest)
        and request_like
    ):
        return _pref("偏好成段落的回复格式", "format", said, behaviour=True)
    if re.search(r"分点|分条|列点|列要点", rest) and request_like:
        return _pref("偏好分点列出的回复格式", "format", said, behaviour=True)
    m = re.search(r"(?:用|通过)(?P<tool>微信|企业微信|钉钉|飞书|QQ|邮件|邮箱|电话|短信)(?:联系|找|发|通知)", rest)
    if m:
        return _pref(f"偏好通过{m.group('tool')}联系", "tool", said, behaviour=True)
    # "先给结论再展开" / "先把思路讲明白，结论放最后": what comes first in an answer
    order = dimensions(rest).get("order") if request_like else None
    if order:
        text = (
            "偏好先说结论、再解释的回答顺序"
            if order == "conclusion_first"
            else "偏好先讲推理过程、最后给结论的回答顺序"
        )
        return _pref(text, "communication_style", said, behaviour=True)
    standing = standing_request(rest) or standing_request(said)
    if standing and not re.search(r"(?:不要|不用|别|无需)(?:再)?(?:分点|分条|列点)", standing):
        return _standing_preference(standing, said)
    return _style_request(rest, said) if request_like else None


@named_rule("rules_zh_prefs.style-request")
def _style_request(rest: str, said: str) -> _Item | None:
    """'简短点', '以后说话温柔点': a style asked of answers (not '希望假期长一点', a style of something else)."""
    for pattern, text in _STYLE_REQUESTS:
        m = re.search(pattern, rest)
        if m and _BEFORE_A_STYLE.fullmatch(rest[: m.start()]):
            return _pref(text, "communication_style", said, behaviour=True)
    return None


#: what may come before a style asked for when the style is of answers ("以后说话温柔点", "希望你回答简短点");
#: anything else is what the style is of ("希望假期长一点": a holiday, not an answer)
_BEFORE_A_STYLE = re.compile(
    r"(?:希望|想要|请|麻烦|拜托|一定|务必|千万|必须|尽可能|真的|以后|今后|往后|之后|下次|每次|尽量|最好|记得|可以|能不能|可不可以|你|您|给我|跟我|对我|和我|"
    r"都|就|再|还是|稍微|能|要|得|说话|讲话|回答|回复|答复|解释|讲解|说|讲|写|回|答|的时候|时|语气|口气|态度|的|地|得)*"
)


#: what the user asks to be recommended, by kind
_RECOMMENDED_KINDS = r"歌曲|歌|音乐|电影|片子|电视剧|剧|书|菜谱|食谱|菜|游戏|餐厅|店|景点"
_RECOMMENDATION = (
    # "给我推荐歌的时候多推摇滚", "以后推歌都推爵士吧", "推荐菜谱多来点川菜"
    re.compile(
        r"推荐?(?P<k>"
        + _RECOMMENDED_KINDS
        + r")(?:的时候|时)?[，,]?(?:都|多|就|只|还是)?(?:(?:给我|给用户)?(?:推|来)(?:荐)?|给我(?=[\u4e00-\u9fffA-Za-z]{2,8}?吧))(?:点|些|一些)?"
        r"(?P<v>[\u4e00-\u9fffA-Za-z]{2,8}?)(?=吧|呗|就行|就好|的|[，,。！!~～]|$)"
    ),
    # "以后推点轻音乐吧", "以后推粤菜吧": the kind left out, the request standing
    re.compile(
        r"^(?:以后|之后|今后|往后|从现在起)(?:就|都|多|还是)?(?:给我|给用户)?推(?:荐)?(?:点|些|一些)?"
        # ("推点清淡的粤菜": what kind, then what)
        r"(?P<v>(?!" + _RECOMMENDED_KINDS + r")[\u4e00-\u9fffA-Za-z]{2,8}?(?:的[\u4e00-\u9fff]{2,4})?)"
        r"(?=吧|呗|就行|就好|的|[，,。！!~～]|$)"
    ),
    # "推点民谣吧", "还是给我推喜剧吧": the same, as a plain request ending in 吧
    re.compile(
        # ("多推点蓝调吧", "换成推荐湘菜吧": more of it, or it in place of what was asked before)
        r"^(?:还是|那就|就|那|多|换成|改成)?(?:给我|给用户)?(?:多)?推(?:荐)?(?:点|些|一些)?"
        r"(?P<v>(?!" + _RECOMMENDED_KINDS + r"|给|一下|个)[\u4e00-\u9fffA-Za-z]{2,8}?)(?:的)?(?=吧|呗$)"
    ),
    # "菜谱就推清淡的吧": the kind first
    re.compile(
        r"^(?P<k>" + _RECOMMENDED_KINDS + r")(?:的话)?(?:就|都|多|还是)?(?:给我|给用户)?推(?:荐)?(?:点|些|一些)?"
        r"(?P<v>[\u4e00-\u9fffA-Za-z]{2,8}?)(?:的)?(?=吧|呗|就行|就好|[，,。！!~～]|$)"
    ),
)


@named_rule("rules_zh_prefs.recommendation")
def _recommendation_preference(rest: str, said: str) -> _Item | None:
    """'给我推荐歌的时候多推摇滚' → 偏好推荐歌时推摇滚: one frame for what to recommend, so that a
    later '以后推点轻音乐吧' is read as the same request changed (judge._recommended)."""
    for pattern in _RECOMMENDATION:
        m = pattern.search(rest)
        if m and not re.search(r"别|不要|不用", rest[: m.start()]):
            kind = m.groupdict().get("k") or ""
            return _pref(f"偏好推荐{kind}时推{m.group('v')}", "content", said, behaviour=True)
    return None


@named_rule("rules_zh_prefs.standing")
def _standing_preference(content: str, said: str) -> _Item:
    """A request for all later answers that names no known dimension, kept in the user's words:
    "以后推荐清淡的吧" → 偏好推荐清淡的; "以后直接写成一段话就行" → 偏好直接写成一段话 (format)."""
    content = third_person(_tidy(content))
    # "称呼我的时候叫我X" is "叫我X"; "回答的时候…" is what the frame below says already
    content = re.sub(r"^(?:称呼|叫)用户的时候(?:叫|称呼)(?=用户)", "叫", content)
    content = re.sub(r"^(?:回答|回复|答复)(?:问题)?的时候|^直接(?=叫|用|写|推荐|说|讲)", "", content)
    language = re.fullmatch(
        r"(?:(?:跟|和|对)用户)?(?:说话|聊天|交流|回复|回答)?(?:都)?用(?P<l>[\u4e00-\u9fff]{1,4}(?:话|语|文|字)|简体|繁体|拼音)",
        content,
    )
    if language:  # in which words to answer: said like every reply-language preference
        return _pref(f"偏好用{language.group('l')}回复", "language", said, behaviour=True)
    # one frame for every such request, so that two about the same thing are compared
    text = "偏好以后回答时" + content
    sides = dimensions(text)
    # in which words to answer (a language, a dialect, a script) is a language preference
    # (not 用户, nor 网络用语: words of a kind, not a language)
    in_words = re.search(r"用(?!户)[\u4e00-\u9fff]{1,4}(?<!用)(?:话|语|文)|简体|繁体|拼音", content)
    category = (
        "tool"  # code examples in a language: where every such preference is ("偏好用Java写代码示例")
        if "code_language" in sides
        else "format"
        if "layout" in sides or "emoji" in sides
        else "language"
        if ("reply_language" in sides or "technicality" in sides or in_words)
        else "communication_style"
    )
    return _pref(text, category, said, behaviour=True)


_LIKE = re.compile(
    r"^(?P<strong>非常|特别|很|最|超级|超|挺|蛮|越来越|比较|更|还是|真的|一直)?"
    # a liking said not to hold, in any of the ways 不 is said ("不再", "一点都不", "再也不")
    r"(?P<neg>不再|不太|不怎么|不大|并不|根本不|一点(?:儿)?(?:都|也)不|再也不|从来不|从不|不)?(?P<verb>喜欢|偏好|偏爱|倾向于|倾向|习惯|爱|希望|想要|讨厌|受不了)"
    r"(?P<obj>.+)$"
)


@named_rule("rules_zh_prefs.liked-reply")
def _liked_reply_preference(rest: str, said: str) -> _Item | None:
    """'喜欢简短的回复' → 偏好简短的回复风格; '习惯用VSCode' → 偏好使用VSCode."""
    m = _LIKE.match(rest)
    if not m:
        return None
    obj = _tidy(m.group("obj"))
    negative = bool(m.group("neg")) or m.group("verb") in ("讨厌", "受不了")
    said_verb = f"{m.group('neg') or ''}{m.group('verb')}"
    lang = re.search(r"(?:用|以)?(?P<l>" + _LANGUAGES + r")(?:回复|回答|交流|沟通)?$", obj)
    if lang and (lang.start() == 0 or obj.startswith(("用", "以"))):
        return _pref(f"{'不希望' if negative else '偏好'}用{lang.group('l')}回复", "language", said)
    fmt = re.match(r"^(?:用|以|看)?(?P<f>" + _FORMATS + r")(?:的形式|格式|形式)?(?:回复|回答|展示|呈现)?$", obj)
    if fmt:
        return _pref(f"{'不希望' if negative else '偏好'}用{fmt.group('f').lower()}的形式回复", "format", said)
    tool = _TOOL.match(obj)
    if tool and not re.search(r"了|过", obj):
        return _pref(f"{'不喜欢' if negative else '偏好'}使用{tool.group('tool')}", "tool", said)
    requested = next((text for pattern, text in _STYLE_REQUESTS if re.search(pattern, obj)), None)
    about_replies = (
        _REPLY_NOUNS.search(obj)
        or obj.endswith("风格")
        # a style said alone is of replies ("简短的", "直接点"), not a style of something else ("短发")
        or re.fullmatch(r"(?:" + _STYLE_WORDS.pattern + r"|的|一?点|一?些)+", obj)
        or re.search(r"回复|回答|说话|讲话|沟通", obj)
        or requested
    )
    if _STYLE_WORDS.search(obj) and about_replies:
        if negative:
            return _pref(f"{said_verb}{obj}", "communication_style", said)
        if obj.endswith("风格"):
            return _pref(f"偏好{obj}", "communication_style", said)
        if _REPLY_NOUNS.search(obj):  # 简短的回复 → 偏好简短的回复风格 (the spec's example)
            return _pref(f"偏好{obj}风格", "communication_style", said)
        if requested:  # 喜欢你直接说重点 → the same wording as the request 直接说重点
            return _pref(requested, "communication_style", said)
        return _pref(f"偏好{third_person(obj)}", "communication_style", said)
    return None
