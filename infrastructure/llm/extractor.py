"""``LLMExtractor``: the spec's FactPreferenceExtractor over an OpenAI-compatible LLM.

Flow per message (the spec's ``process_message``):

1. the LLM gate (``gate.LLMGate``, ADR 0028) passes every message that may state
   or change a fact; with gating on, only plain small talk, chit-chat and requests
   that carry nothing stateable cost no call (谢谢, 好的, 今天好冷啊);
2. prompt set ``separate`` (``seed``): a fact call when there is a fact signal
   (FACT_PROMPT, or FACT_PROMPT_WITH_CONTEXT given earlier turns) and a
   preference call when there is a preference signal (PREF_PROMPT);
   prompt set ``combined``: one call for both, as structured output;
3. each answer is parsed robustly; an unusable one is asked again
   (``parse_retries``), then the whole extraction fails with
   ``ExtractionFailure`` so the service records the message for ``retry-failed``.

The Extraction names the prompt set (``prompt_id``), keeps every raw answer
(``raw_output``, a JSON object by template); what the calls cost is in the
``llm_calls`` log, not in the events.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from factledger.application.ports import ExtractionFailure
from factledger.domain.values import ExtractedFact, ExtractedPreference, Extraction, Turn
from factledger.infrastructure.llm.client import ChatAnswer, LLMClient, LLMRequestRejected, LLMUnavailable
from factledger.infrastructure.llm.gate import LLMGate
from factledger.infrastructure.llm.language import instruction, memory_language
from factledger.infrastructure.llm.parsing import (
    CombinedAnswer,
    UnusableOutput,
    parse_combined_answer,
    parse_facts,
    parse_preferences,
)
from factledger.infrastructure.llm.prompts import PromptSet
from factledger.infrastructure.llm.said_time import FACT_TEMPLATES, SUFFIX, said_label, said_line
from factledger.infrastructure.llm.usage import CallRecord

logger = logging.getLogger(__name__)

T = TypeVar("T")

FACT_CONTEXT_TURNS = 5  # the spec: context[-5:] for facts
PREF_CONTEXT_TURNS = 3  # the spec: context[-3:] for preferences
KNOWN_FACTS = 20  # the spec: recall_by_type(..., limit=20)
NOTHING = "无"
# A pasted document is not a statement about the user: bound what a prompt costs.
MAX_MESSAGE_CHARS = 4000
MAX_TURN_CHARS = 1000


def bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def conversation(turns: Sequence[Turn], last: int) -> str:
    """The spec's ``"role: content"`` lines of the last turns."""
    return "\n".join(f"{t.role}: {bounded(t.content, MAX_TURN_CHARS)}" for t in list(turns)[-last:])


def known_list(facts: Sequence[str]) -> str:
    return "\n".join(f"- {f}" for f in list(facts)[-KNOWN_FACTS:]) or NOTHING


def approximate_tokens(text: str) -> int:
    """A tokenizer-free estimate: one token per CJK character, one per 4 other characters."""
    cjk = sum(
        1 for ch in text if "\u2e80" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef"
    )
    return cjk + (len(text) - cjk + 3) // 4


class _Attempts:
    """The answers of the calls made for one extraction, for the Extraction's record, and what
    is asked beside the prompts: the language (a system message and the suffix of their prompt
    ids, ADR 0029) and, for a fact template without ``{said_at}``, when the message was said."""

    def __init__(
        self,
        prompts: PromptSet,
        language: tuple[str | None, str] = (None, ""),
        said_at: datetime | None = None,
        said_language: str = "zh",
    ) -> None:
        self.raw: dict[str, str] = {}
        self.prompts = prompts
        self.system, self.suffix = language
        self.said_at = said_at
        self.said_language = said_language
        self.label = said_label(said_at)  # ``{said_at}`` of a template that shows it

    def add(self, key: str, answer: ChatAnswer) -> None:
        self.raw[key] = answer.text

    def raw_output(self) -> str:
        return json.dumps(self.raw, ensure_ascii=False)

    def said_beside(self, key: str) -> bool:
        """Whether template ``key`` is told the said-time in a system line (it does not show it)."""
        return self.said_at is not None and key in FACT_TEMPLATES and not self.prompts.uses(key, "said_at")

    def system_for(self, key: str) -> str | None:
        lines = [self.system] if self.system else []
        if self.said_beside(key):
            assert self.said_at is not None
            lines.append(said_line(self.said_at, self.said_language))
        return "\n".join(lines) or None

    def suffix_for(self, key: str) -> str:
        return self.suffix + (SUFFIX if self.said_beside(key) else "")

    def extraction_suffix(self) -> str:
        """The suffix of the Extraction's prompt id: what any of its fact calls is asked beside."""
        said = any(self.said_beside(key) for key in FACT_TEMPLATES if key in self.prompts.templates)
        return self.suffix + (SUFFIX if said else "")


class LLMExtractor:
    """Extracts facts and preferences with a prompt set; implements the ``Extractor`` port."""

    def __init__(
        self,
        client: LLMClient,
        model: str,
        prompts: PromptSet,
        *,
        signal_gating: bool = True,
        parse_retries: int = 1,
        detector: Any = None,
        language: str = "auto",
    ):
        self.client = client
        self.model = model
        self.prompts = prompts
        self.signal_gating = signal_gating
        self.parse_retries = parse_retries
        self.language = language  # the memories' language: "auto" (each message's own), "zh" or "en"
        # the LLM path's own gate over the offline detector: it keeps only plain small talk from the model
        self.gate = LLMGate(detector)
        # Structured output first; endpoints that refuse it step down (and stay down).
        self._formats: list[dict[str, Any] | None] = []
        if prompts.mode == "combined":
            if prompts.json_schema is not None:
                self._formats.append(
                    {
                        "type": "json_schema",
                        "json_schema": {"name": "extraction", "strict": True, "schema": prompts.json_schema},
                    }
                )
            self._formats += [{"type": "json_object"}, None]

    @property
    def extractor_id(self) -> str:
        return f"openai:{self.model}/{self.prompts.name}"

    @property
    def prompt_id(self) -> str:
        return self.prompts.id

    def comparison_prompt_id(self, said: Extraction) -> str | None:
        """``ComparesKnownFacts``: the combined prompt shows the known facts and answers ``conflicts_with``
        for them, so it is their relation check (ADR 0019); the separate (seed) prompts leave it to the judge.
        The id carries the language ``said`` was asked in (``+lang=en``, ADR 0029)."""
        if self.prompts.mode != "combined":
            return None
        recorded = said.prompt_id or ""
        asked_beside = recorded[len(self.prompts.id) :] if recorded.startswith(self.prompts.id) else ""
        return self.prompts.template_id("combined") + asked_beside

    def extract(self, message: str, context: Sequence[Turn] = (), known_facts: Sequence[str] = ()) -> Extraction:
        return self.extract_said_at(message, context, known_facts, (), None)

    def extract_knowing_preferences(
        self,
        message: str,
        context: Sequence[Turn],
        known_facts: Sequence[str],
        known_preferences: Sequence[str],
    ) -> Extraction:
        """``ReadsKnownPreferences``: a combined prompt with ``{existing_preferences}`` shows them (and
        its answer names those a new preference replaces); any other prompt goes without."""
        return self.extract_said_at(message, context, known_facts, known_preferences, None)

    def extract_said_at(
        self,
        message: str,
        context: Sequence[Turn],
        known_facts: Sequence[str],
        known_preferences: Sequence[str],
        said_at: datetime | None,
    ) -> Extraction:
        """``HearsWhenSaid``: as ``extract_knowing_preferences``, the fact prompts told when the message
        was said (``said_time``), so relative time in it is written as the dates it means."""
        signals = self.gate.detect(message, known_facts)
        want_facts = not self.signal_gating or bool(signals.get("has_fact_signal"))
        want_prefs = not self.signal_gating or bool(signals.get("has_pref_signal"))
        message = bounded(message, MAX_MESSAGE_CHARS)
        language = memory_language(self.language, message)
        attempts = _Attempts(self.prompts, instruction(self.language, message), said_at, language)
        prompt_id = self.prompts.id + attempts.extraction_suffix()
        facts: list[ExtractedFact] = []
        prefs: list[ExtractedPreference] = []
        retracted: list[str] = []
        if not (want_facts or want_prefs):
            # The record of a message that cost nothing, so usage reports show it.
            self.client.record(CallRecord("gated", self.model, prompt_id))
        else:
            try:
                if self.prompts.mode == "combined":
                    facts, prefs, retracted = self._combined(message, context, known_facts, known_preferences, attempts)
                else:
                    if want_facts:
                        facts = self._facts(message, context, known_facts, attempts)
                    if want_prefs:
                        prefs = self._preferences(message, context, attempts)
            except (LLMUnavailable, UnusableOutput) as exc:
                raise ExtractionFailure(
                    str(exc),
                    extractor_id=self.extractor_id,
                    raw_output=attempts.raw_output(),
                    prompt_id=prompt_id,
                ) from exc
        return Extraction(
            extractor_id=self.extractor_id,
            facts=facts,
            preferences=prefs,
            prompt_id=prompt_id,
            raw_output=attempts.raw_output(),
            signals=signals,
            retracted=retracted,
        )

    def estimate_cost(
        self, message: str, context: Sequence[Turn] = (), said_at: datetime | None = None
    ) -> tuple[int, int]:
        """(calls, input tokens) extracting ``message`` would cost at most, for replay estimates.

        Counts the calls the gating lets through and the rendered prompts'
        tokens with what is asked beside them (a CJK character ≈ 1 token, other
        text ≈ 4 characters a token); the response cache may make a real run cheaper.
        """
        signals = self.gate.detect(message)
        want_facts = not self.signal_gating or bool(signals.get("has_fact_signal"))
        want_prefs = not self.signal_gating or bool(signals.get("has_pref_signal"))
        attempts = _Attempts(
            self.prompts, instruction(self.language, message), said_at, memory_language(self.language, message)
        )
        facts, turns, label = NOTHING, conversation(context, FACT_CONTEXT_TURNS), attempts.label
        prompts: dict[str, str] = {}
        if self.prompts.mode == "combined" and (want_facts or want_prefs):
            values = {"conversation": turns or NOTHING, "existing_preferences": NOTHING}
            prompts["combined"] = self.prompts.render(
                "combined", user_message=message, existing_facts=facts, said_at=label, **values
            )
        elif self.prompts.mode != "combined":
            if want_facts and context:
                prompts["fact_with_context"] = self.prompts.render(
                    "fact_with_context", conversation=turns, user_message=message, existing_facts=facts, said_at=label
                )
            elif want_facts:
                prompts["fact"] = self.prompts.render("fact", user_message=message, said_at=label)
            if want_prefs:
                prompts["preference"] = self.prompts.render(
                    "preference", user_message=message, context=conversation(context, PREF_CONTEXT_TURNS) or NOTHING
                )
        beside = {k: attempts.system_for(k) or "" for k in prompts}
        tokens = sum(approximate_tokens(p) + approximate_tokens(beside[k]) for k, p in prompts.items())
        return len(prompts), tokens

    # ---- the calls ------------------------------------------------------------

    def _ask(
        self,
        key: str,
        prompt: str,
        parse: Callable[[str], T],
        attempts: _Attempts,
        response_format: dict[str, Any] | None = None,
    ) -> T:
        """Ask, parse; ask again on an unusable answer; cache only a usable one."""
        last: UnusableOutput | None = None
        for _ in range(self.parse_retries + 1):
            answer = self.client.chat(
                model=self.model,
                prompt_id=self.prompts.template_id(key) + attempts.suffix_for(key),
                prompt=prompt,
                response_format=response_format,
                temperature=self.prompts.temperature,
                system=attempts.system_for(key),
            )
            attempts.add(key, answer)
            try:
                result = parse(answer.text)
            except UnusableOutput as exc:
                logger.warning("unusable %s answer from %s: %s", key, self.model, answer.text[:200])
                last = UnusableOutput(f"unusable {key} answer: {exc}")
                continue
            self.client.remember(answer)
            return result
        assert last is not None
        raise last

    def _facts(
        self, message: str, context: Sequence[Turn], known: Sequence[str], attempts: _Attempts
    ) -> list[ExtractedFact]:
        if context:
            prompt = self.prompts.render(
                "fact_with_context",
                conversation=conversation(context, FACT_CONTEXT_TURNS),
                user_message=message,
                existing_facts=known_list(known),
                said_at=attempts.label,
            )
            return self._ask("fact_with_context", prompt, parse_facts, attempts)
        prompt = self.prompts.render("fact", user_message=message, said_at=attempts.label)
        return self._ask("fact", prompt, parse_facts, attempts)

    def _preferences(self, message: str, context: Sequence[Turn], attempts: _Attempts) -> list[ExtractedPreference]:
        prompt = self.prompts.render(
            "preference", user_message=message, context=conversation(context, PREF_CONTEXT_TURNS) or NOTHING
        )
        return self._ask("preference", prompt, parse_preferences, attempts)

    def _combined(
        self,
        message: str,
        context: Sequence[Turn],
        known: Sequence[str],
        known_preferences: Sequence[str],
        attempts: _Attempts,
    ) -> CombinedAnswer:
        prompt = self.prompts.render(
            "combined",
            conversation=conversation(context, FACT_CONTEXT_TURNS) or NOTHING,
            user_message=message,
            existing_facts=known_list(known),
            existing_preferences=known_list(known_preferences),
            said_at=attempts.label,
        )
        while True:
            response_format = self._formats[0]
            try:
                return self._ask("combined", prompt, parse_combined_answer, attempts, response_format)
            except LLMRequestRejected as exc:
                # 400/422 to a response_format: this endpoint lacks it; use the next one down.
                if response_format is None or len(self._formats) == 1 or exc.status not in (400, 422):
                    raise
                logger.info("endpoint refused response_format %s (%s); falling back", response_format["type"], exc)
                if self._formats[0] is response_format:  # another thread may have stepped down already
                    self._formats.pop(0)
