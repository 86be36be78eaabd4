"""The refine example's grader: longer drafts score higher (a stand-in for a real check)."""


def grade(text: str) -> dict:
    words = len(text.split())
    return {"json": {"score": round(min(1.0, words / 20), 2), "words": words}}
