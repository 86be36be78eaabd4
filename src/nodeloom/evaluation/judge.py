"""The LLM judge: a model grades each answer against a rubric, as structured output
(`{"score": 0..1, "reason": "..."}`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nodeloom.evaluation.answer import text_of
from nodeloom.evaluation.dataset import Row
from nodeloom.evaluation.scorers import Score, ScorerError
from nodeloom.models.llm import build_messages, complete_json, spec_from_parameters
from nodeloom.models.reference import ModelSpec

DEFAULT_RUBRIC = (
    "You grade the answer of an assistant. Score 1 if it answers the input correctly and "
    "agrees with the expected answer (when one is given), 0 if it does not, and a value "
    "in between for a partly right answer."
)
SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
    },
    "required": ["score", "reason"],
}


@dataclass(frozen=True)
class LlmJudge:
    spec: ModelSpec
    rubric: str
    name: str = "llm-judge"

    @classmethod
    def create(cls, model: str | None, rubric: str | None) -> LlmJudge:
        if not model:
            raise ScorerError("the llm-judge scorer needs --judge-model (e.g. openai:gpt-4o-mini)")
        try:
            spec = spec_from_parameters({"model": model}, where="--judge-model")
        except Exception as exc:
            raise ScorerError(str(exc)) from None
        return cls(spec, rubric or DEFAULT_RUBRIC)

    async def score(self, row: Row, answer: Any) -> Score:
        prompt = "\n\n".join(
            [
                f"Input:\n{text_of(row.input)}",
                f"Expected answer:\n{text_of(row.expected) or '(none given)'}",
                f"Answer to grade:\n{text_of(answer)}",
                'Reply with JSON: {"score": a number from 0 to 1, "reason": one sentence}.',
            ]
        )
        verdict, _ = await complete_json(
            self.spec,
            build_messages(self.rubric, prompt),
            SCHEMA,
            name="judgement",
            where="the LLM judge",
        )
        value = min(1.0, max(0.0, float(verdict.get("score", 0))))
        return Score(value, str(verdict.get("reason", ""))[:500])

    def describe(self) -> dict[str, Any]:
        return {"model": self.spec.reference, "rubric": self.rubric}
