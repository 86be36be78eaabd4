"""Scorers chosen by name (`nodeloom eval --scorer`), the LLM judge among them."""

from __future__ import annotations

from nodeloom.evaluation.judge import LlmJudge
from nodeloom.evaluation.scorers import (
    NAMES,
    Contains,
    Exact,
    JsonSubset,
    Numeric,
    Regex,
    Scorer,
    ScorerError,
)


def make_scorers(
    specs: tuple[str, ...], *, judge_model: str | None = None, rubric: str | None = None
) -> list[Scorer]:
    """Scorers from `--scorer` values: a name, or `numeric:TOLERANCE`."""
    scorers: list[Scorer] = []
    for spec in specs:
        name, _, argument = spec.partition(":")
        name = name.strip().lower().replace("_", "-")
        if name == "exact":
            scorers.append(Exact())
        elif name == "contains":
            scorers.append(Contains())
        elif name == "json-subset":
            scorers.append(JsonSubset())
        elif name == "regex":
            scorers.append(Regex())
        elif name == "numeric":
            try:
                scorers.append(Numeric(float(argument) if argument else 0.0))
            except ValueError:
                raise ScorerError(f"numeric:TOLERANCE takes a number, got {argument!r}") from None
        elif name == "llm-judge":
            scorers.append(LlmJudge.create(judge_model, rubric))
        else:
            raise ScorerError(f"unknown scorer {spec!r}; the scorers are {', '.join(NAMES)}")
    return scorers
