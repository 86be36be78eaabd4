"""A plan's threads, kept in the run's shared state under one key (`state["plan"]`).

    {"threads": {"main": [message, ...], ...},     thread id -> messages (see messages.py)
     "data_out": {"fetch_a": {"role", "content"}},  the last output each thread sent
     "tokens_usage": {prompt_tokens, completion_tokens, total_tokens},
     "content": ...}                                the last node's content

Plan Start creates it with the `main` thread holding the task; each plan node reads and
writes it (the chain is linear, so one node at a time); Plan Finish turns it into the run's
result and removes it from the state.
"""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.plan.messages import Message, copy, user

STATE_KEY = "plan"
MAIN_THREAD = "main"
_NO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


class PlanState:
    """A view over `state["plan"]`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def begin(cls, state: dict[str, Any], task: str) -> PlanState:
        state[STATE_KEY] = {
            "threads": {MAIN_THREAD: [user(task)]},
            "data_out": {},
            "tokens_usage": dict(_NO_USAGE),
            "content": None,
        }
        return cls(state[STATE_KEY])

    @classmethod
    def of(cls, state: dict[str, Any]) -> PlanState:
        data = state.get(STATE_KEY)
        if not isinstance(data, dict) or not isinstance(data.get("threads"), dict):
            raise NodeError(
                "this run has no plan threads: a plan node runs after a Plan Start node "
                "(plan-start), which creates the 'main' thread",
                code="invalid_input",
                retryable=False,
            )
        return cls(data)

    @property
    def threads(self) -> dict[str, list[Message]]:
        return self.data["threads"]

    def thread(self, thread_id: str) -> list[Message]:
        return self.threads[thread_id]

    def open(
        self, thread_id: str, source: str, window: list[int | None] | None
    ) -> tuple[bool, int]:
        """Make sure `thread_id` exists. A new thread is seeded with messages of `source`
        (`window` = [start, end) as a Python slice; None: the last message). Returns
        (created, how many messages were copied); an existing thread is left as it is."""
        if thread_id in self.threads:
            return False, 0
        if source not in self.threads:
            raise NodeError(
                f"thread '{thread_id}' would be seeded from thread '{source}', which does not "
                f"exist yet (threads: {', '.join(self.threads)})",
                code="invalid_input",
                retryable=False,
            )
        seeded = copy(select(self.threads[source], window))
        self.threads[thread_id] = seeded
        return True, len(seeded)

    def append(self, thread_id: str, message: Message) -> None:
        self.threads[thread_id].append(message)

    def send_out(self, thread_id: str, target: str, role: str, text: str) -> bool:
        """Record `text` as the output of `thread_id` and merge it into `target` as an
        assistant message, creating `target` if it does not exist. Returns whether it was
        created."""
        self.data["data_out"][thread_id] = {"role": role, "content": text}
        created = target not in self.threads
        self.threads.setdefault(target, []).append({"role": "assistant", "content": text})
        return created

    def add_usage(self, usage: dict[str, int] | None) -> None:
        for key, value in (usage or {}).items():
            if key in _NO_USAGE and isinstance(value, int):
                self.data["tokens_usage"][key] += value

    @property
    def content(self) -> Any:
        return self.data["content"]

    @content.setter
    def content(self, value: Any) -> None:
        self.data["content"] = value

    def result(self) -> dict[str, Any]:
        """The run's result: {content, threads, data_out, tokens_usage}."""
        return {
            "content": self.content,
            "threads": self.threads,
            "data_out": self.data["data_out"],
            "tokens_usage": self.data["tokens_usage"],
        }


def select(messages: list[Message], window: list[int | None] | None) -> list[Message]:
    """The messages `data_in_slice` takes: None -> the last one; [start, end] -> a Python
    slice (negative counts from the end, null is open); [-1, -1] -> none."""
    if window is None:
        return messages[-1:]
    start, end = window
    return messages[start:end]


__all__ = ["MAIN_THREAD", "STATE_KEY", "PlanState", "select"]
