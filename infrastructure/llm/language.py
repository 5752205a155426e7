"""The language memories are written in (ADR 0029).

The bundled prompts are Chinese and the seed set must stay as the spec wrote
it, so the language is asked for in a system message beside the prompt, never
in the prompt: none when a Chinese message meets the Chinese prompts (the
request is what it always was), one when the memories should be in another
language than the prompt's own. The prompt id of such a call ends in
``+lang=en`` (``seed@fa48ec2c#fact+lang=en``), so what decided a memory, and a
replay under another setting, show the difference.
"""

from __future__ import annotations

from factledger.domain.language import main_language

PROMPT_LANGUAGE = "zh"  # the bundled prompts' own
__all__ = ["JUDGE_IN", "PROMPT_LANGUAGE", "WRITE_IN", "instruction", "main_language", "memory_language"]

WRITE_IN = {
    "en": (
        "Write every fact and preference you return in English, in the third person "
        '("The user lives in Chicago", "The user\'s boss is named Zhang", "Prefers short replies"), '
        "whatever language the instructions below are written in. Keep JSON keys, category names and "
        "relation words exactly as the instructions give them."
    ),
    "zh": (
        "返回的每条事实和偏好都用中文写，第三人称（“用户住在芝加哥”），不论用户用什么语言说的。"
        "JSON 的键、分类名和关系词照下面的说明原样写。"
    ),
}
JUDGE_IN = {
    "en": "The two facts below are in English. Answer with one word: update / conflict / different / duplicate.",
    "zh": "下面两条事实是中文的。只返回一个词：update / conflict / different / duplicate。",
}


def memory_language(setting: str, text: str) -> str:
    """The language to write ``text``'s memories in: the setting's, or ``text``'s own under ``auto``."""
    return main_language(text) if setting == "auto" else setting


def instruction(setting: str, text: str, table: dict[str, str] = WRITE_IN) -> tuple[str | None, str]:
    """(system message, prompt id suffix) for a call about ``text``: none and "" when the prompt's
    own language is the one wanted and the text is in it too."""
    wanted = memory_language(setting, text)
    if wanted == PROMPT_LANGUAGE and main_language(text) == PROMPT_LANGUAGE:
        return None, ""
    return table[wanted], f"+lang={wanted}"
