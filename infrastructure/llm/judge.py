"""``LLMJudge``: the spec's ``_check_relation`` (CONFLICT_CHECK_PROMPT) over an LLM.

The answer is read in the spec's order (update, conflict, duplicate, else
different), whatever case or extra words it comes with. When the LLM cannot
be reached after every retry, the offline rule judge decides instead and the
verdict says so (its judge id and raw answer), so an outage never loses or
blocks a message; a wrong key still stops everything (``LLMAuthError``).
"""

from __future__ import annotations

import logging

import attrs

from factledger.application.ports import RelationJudge
from factledger.domain.values import RelationVerdict
from factledger.infrastructure.llm.client import LLMClient, LLMUnavailable
from factledger.infrastructure.llm.language import JUDGE_IN, instruction
from factledger.infrastructure.llm.parsing import parse_relation
from factledger.infrastructure.llm.prompts import PromptSet

logger = logging.getLogger(__name__)


class LLMJudge:
    """Implements the ``RelationJudge`` port with the prompt set's ``conflict_check``."""

    def __init__(
        self,
        client: LLMClient,
        model: str,
        prompts: PromptSet,
        fallback: RelationJudge | None = None,
        language: str = "auto",
    ):
        self.client = client
        self.language = language  # facts in another language than the prompt's are said so (ADR 0029)
        self.model = model
        self.prompts = prompts
        self._fallback = fallback

    @property
    def judge_id(self) -> str:
        return f"openai:{self.model}/{self.prompts.name}"

    @property
    def fallback(self) -> RelationJudge:
        if self._fallback is None:
            from factledger.infrastructure.offline import RuleJudge

            self._fallback = RuleJudge()
        return self._fallback

    def judge(self, old_fact: str, new_fact: str) -> RelationVerdict:
        return self._check("conflict_check", old_fact, new_fact, old_fact=old_fact, new_fact=new_fact)

    def judge_preference(self, old_preference: str, new_text: str) -> RelationVerdict:
        """``preference_check`` where the prompt set has one (combined: the relation check speaks of
        facts only); else ``conflict_check``, as the spec's flow (seed) asks about preferences too."""
        if "preference_check" not in self.prompts.templates:
            return self.judge(old_preference, new_text)
        values = {"old_preference": old_preference, "new_preference": new_text}
        return self._check("preference_check", old_preference, new_text, **values)

    def _check(self, key: str, old: str, new: str, **values: str) -> RelationVerdict:
        system, suffix = instruction(self.language, f"{new}\n{old}", JUDGE_IN)
        prompt_id = self.prompts.template_id(key) + suffix
        prompt = self.prompts.render(key, **values)
        try:
            answer = self.client.chat(
                model=self.model,
                prompt_id=prompt_id,
                prompt=prompt,
                temperature=self.prompts.temperature,
                system=system,
            )
        except LLMUnavailable as exc:
            logger.warning("relation check by LLM failed (%s); the offline judge decides", exc.reason)
            verdict = self.fallback.judge(old, new)
            return attrs.evolve(verdict, raw_answer=f"[LLM unavailable: {exc.reason}] {verdict.raw_answer}")
        if answer.text.strip():
            self.client.remember(answer)
        return RelationVerdict(parse_relation(answer.text), self.judge_id, raw_answer=answer.text, prompt_id=prompt_id)
