"""What one plan node (llm-first or tool-first) does when it runs.

1. Its thread is opened: created on first use and seeded from `data_in_thread` /
   `data_in_slice` (default: the source's last message); an existing thread is left alone.
2. A tool-first node runs its initial tool: the call and its result join the thread.
3. A non-empty `task_prompt` joins the thread as a user message and the model is called
   with the thread (and the node's tools). Each tool call is answered (see toolbox.py).
   Without `enable_tool_loop` the model gets one round of tool calls; with it, rounds go on
   while the model calls tools. A round that ran no tool, hit a quota, or used up every
   quota ends the loop, and a final call without tools gets the answer.
   An empty `task_prompt` makes no LLM call.
4. With `data_out`, the content (prefixed with `data_out_description`) is merged into
   `data_out_thread`, which is created if it does not exist.

Models are called one request at a time through Agno's `Model.ainvoke` (the provider call
that `Model.aresponse` makes in its own loop), with the tools as JSON-schema dicts; nodeloom
runs the tool calls itself.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nodeloom.formats.plan.messages import (
    Message,
    as_json,
    as_text,
    assistant,
    to_model,
    tool_result,
    user,
)
from nodeloom.formats.plan.threads import MAIN_THREAD, PlanState
from nodeloom.formats.plan.toolbox import Outcome, Toolbox
from nodeloom.models.llm import usage_of
from nodeloom.plugins.contract import Event

_EVENT_TEXT = 2000  # characters of a tool result shown in a progress event


@dataclass(frozen=True)
class Step:
    """A plan node's parameters, with the plan's defaults applied."""

    kind: str  # "llm-first" | "tool-first"
    thread_id: str
    task_prompt: str = ""
    tools: list[str] = field(default_factory=list)
    enable_tool_loop: bool = False
    tools_limit: dict[str, int] = field(default_factory=dict)
    initial_tool_name: str | None = None
    initial_tool_args: dict[str, Any] = field(default_factory=dict)
    data_in_thread: str = MAIN_THREAD
    data_in_slice: list[int | None] | None = None
    data_out: bool = False
    data_out_thread: str = MAIN_THREAD
    data_out_description: str = ""

    @classmethod
    def from_data(cls, kind: str, data: Mapping[str, Any]) -> Step:
        return cls(
            kind=kind,
            thread_id=data["thread_id"],
            task_prompt=data.get("task_prompt") or "",
            tools=list(dict.fromkeys(data.get("tools") or [])),
            enable_tool_loop=bool(data.get("enable_tool_loop")),
            tools_limit=dict(data.get("tools_limit") or {}),
            initial_tool_name=data.get("initial_tool_name") or None,
            initial_tool_args=dict(data.get("initial_tool_args") or {}),
            data_in_thread=data.get("data_in_thread") or MAIN_THREAD,
            data_in_slice=data.get("data_in_slice"),
            data_out=bool(data.get("data_out")),
            data_out_thread=data.get("data_out_thread") or MAIN_THREAD,
            data_out_description=data.get("data_out_description") or "",
        )

    @property
    def tool_names(self) -> list[str]:
        """Every tool the node uses: its tools, then its initial tool."""
        names = list(self.tools)
        if self.initial_tool_name and self.initial_tool_name not in names:
            names.append(self.initial_tool_name)
        return names


@dataclass(frozen=True, slots=True)
class StepDone:
    content: Any
    usage: dict[str, int] | None


async def run_step(
    step: Step, plan: PlanState, toolbox: Toolbox, model: Callable[[], Any]
) -> AsyncIterator[Event | StepDone]:
    """Run the step on the plan's threads; yields progress events, then one StepDone.
    `model` creates the Agno model (called only if the step calls the model)."""
    created, seeded = plan.open(step.thread_id, step.data_in_thread, step.data_in_slice)
    if created:
        yield Event(
            "progress",
            {"thread": {"id": step.thread_id, "from": step.data_in_thread, "messages": seeded}},
        )
    thread = plan.thread(step.thread_id)
    content: Any = ""
    if step.kind == "tool-first" and step.initial_tool_name:
        name, arguments = step.initial_tool_name, step.initial_tool_args
        value = await toolbox.run_initial(name, arguments)
        call_id = f"initial_{len(thread)}"
        thread.append(assistant("", [{"id": call_id, "name": name, "arguments": arguments}]))
        thread.append(tool_result(call_id, name, as_text(value)))
        yield _tool_event(name, arguments, Outcome("ok", as_text(value)), initial=True)
        content = as_json(value)
    usage = None
    if step.task_prompt:
        thread.append(user(step.task_prompt))
        async for item in converse(model(), thread, toolbox, loop=step.enable_tool_loop):
            if isinstance(item, StepDone):
                content, usage = item.content, item.usage
            else:
                yield item
    if step.data_out:
        text = step.data_out_description + as_text(content)
        role = "tool" if step.kind == "tool-first" and not step.task_prompt else "assistant"
        new = plan.send_out(step.thread_id, step.data_out_thread, role, text)
        yield Event(
            "progress",
            {"data_out": {"from": step.thread_id, "to": step.data_out_thread, "created": new}},
        )
    plan.content = content
    plan.add_usage(usage)
    yield StepDone(content, usage)


async def converse(
    model: Any, thread: list[Message], toolbox: Toolbox, *, loop: bool
) -> AsyncIterator[Event | StepDone]:
    """Call the model on the thread until it answers without tool calls (see the module
    docstring for when the loop ends); yields a progress event per tool call, then the
    answer's text and the usage summed over the calls."""
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    offer = bool(toolbox.offered)
    while True:
        response = await ask(model, thread, toolbox.schemas() if offer else None)
        for key, value in usage_of(response).items():
            usage[key] += value
        text = response.content if isinstance(response.content, str) else ""
        calls = [
            _stored_call(call, f"call_{len(thread)}_{i}")
            for i, call in enumerate(response.tool_calls or [])
        ]
        if not offer or not calls:
            thread.append(assistant(text))
            yield StepDone(text, usage)
            return
        thread.append(assistant(text, calls))
        ran = over_quota = False
        for call in calls:
            outcome = await toolbox.call(call["name"], call["arguments"])
            thread.append(tool_result(call["id"], call["name"], outcome.text))
            yield _tool_event(call["name"], call["arguments"], outcome)
            ran = ran or outcome.ran
            over_quota = over_quota or outcome.status == "over_quota"
        if not loop or not ran or over_quota or toolbox.exhausted:
            offer = False  # the next call is the last one, without tools


async def ask(model: Any, thread: list[Message], tools: list[dict[str, Any]] | None) -> Any:
    """One request to the model: the thread, and the tools if any."""
    from agno.models.message import Message as AgnoMessage

    return await model.ainvoke(
        messages=to_model(thread),
        assistant_message=AgnoMessage(role="assistant"),
        tools=tools or None,
    )


def _stored_call(call: Mapping[str, Any], fallback_id: str) -> dict[str, Any]:
    """A tool call from the model as stored in a thread: {id, name, arguments}."""
    function = call.get("function") or {}
    arguments: Any = function.get("arguments")
    if isinstance(arguments, str):  # kept as sent if it is not JSON: the toolbox says so
        with contextlib.suppress(json.JSONDecodeError):
            arguments = json.loads(arguments) if arguments.strip() else {}
    return {
        "id": call.get("id") or fallback_id,
        "name": function.get("name") or "",
        "arguments": arguments,
    }


def _tool_event(name: str, arguments: Any, outcome: Outcome, *, initial: bool = False) -> Event:
    result = outcome.text
    if len(result) > _EVENT_TEXT:
        result = result[:_EVENT_TEXT] + f"... [{len(outcome.text)} characters]"
    data: dict[str, Any] = {
        "name": name,
        "arguments": arguments,
        "status": outcome.status,
        "result": result,
    }
    if initial:
        data["initial"] = True
    return Event("progress", {"tool": data})


__all__ = ["Step", "StepDone", "ask", "converse", "run_step"]
