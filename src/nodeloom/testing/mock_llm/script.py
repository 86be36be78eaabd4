"""The mock LLM's script: ordered rules, each a `match` and what to answer.

A script is data (YAML, JSON, or Python objects) checked by pydantic at the edge, so a
typo is reported with its location instead of silently never matching:

    rules[2].match.last_message: unknown key 'contians'; did you mean 'contains'?

    Script        rules, the default action, an optional required API key
    Rule          an Action plus `match` and `times`
    Action        reply / tool_calls / json / error, delay, token_delay
    Match         conditions on a request; all given must hold
    load_script   a Script from a file, a mapping, a list of rules, or a Script
    ScriptError   what is wrong with a script, every issue located
"""

from __future__ import annotations

import difflib
import json
import os
import re
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from nodeloom.errors import NodeloomError
from nodeloom.testing.mock_llm.request import ChatRequest, message_text

PLACEHOLDERS = ("last_message", "tool_result")
FALLBACK_MODEL = "mock"  # always listed by GET /v1/models


class ScriptError(NodeloomError, ValueError):
    """A mock LLM script could not be loaded; `issues` lists each problem, located."""

    code = "invalid_mock_script"

    def __init__(self, source: str, issues: Sequence[str]) -> None:
        self.source = source
        self.issues = tuple(issues)
        super().__init__(f"invalid mock LLM script ({source}):\n  " + "\n  ".join(self.issues))


class _Strict(BaseModel):
    """A frozen model that rejects unknown keys, suggesting the closest valid one."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        valid = [field.alias or name for name, field in cls.model_fields.items()]
        known = set(valid) | set(cls.model_fields)
        unknown = [str(key) for key in data if key not in known]
        if not unknown:
            return data
        close = difflib.get_close_matches(unknown[0], valid, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(valid)}"
        names = ", ".join(f"'{key}'" for key in unknown)
        plural = "s" if len(unknown) > 1 else ""
        message = f"unknown key{plural} {names}; {hint}"
        raise PydanticCustomError("unknown_key", "{message}", {"message": message})


class LastMessage(_Strict):
    """Conditions on the last message of the request (its text, and its role)."""

    equals: str | None = None
    contains: str | None = None
    regex: str | None = None
    role: str | None = None

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    def fits(self, message: Mapping[str, Any] | None) -> bool:
        if message is None:
            return False
        text = message_text(message)
        return (
            (self.role is None or message.get("role") == self.role)
            and (self.equals is None or text == self.equals)
            and (self.contains is None or self.contains in text)
            and (self.regex is None or re.search(self.regex, text) is not None)
        )


class Contains(_Strict):
    """Text that must occur (case-sensitive); a plain string is shorthand for it."""

    contains: str


class Match(_Strict):
    """When a rule answers. Every condition given must hold; none given matches all."""

    last_message: LastMessage | None = None
    any_message: Contains | None = None
    system: Contains | None = None
    tools: list[str] | None = None
    tool_result: bool | str | None = None
    model: str | None = None
    json_schema: bool | None = None

    @field_validator("last_message", "any_message", "system", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"contains": value} if isinstance(value, str) else value

    @field_validator("tool_result", mode="before")
    @classmethod
    def _bool_or_name(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, bool | str):
            message = f"expected true, false or a tool name, got {value!r}"
            raise PydanticCustomError("tool_result", "{message}", {"message": message})
        return value

    def fits(self, request: ChatRequest) -> bool:
        results = request.trailing_tool_results()
        if isinstance(self.tool_result, bool):
            tool_result_ok = bool(results) == self.tool_result
        else:
            tool_result_ok = self.tool_result is None or any(
                name == self.tool_result for name, _ in results
            )
        return (
            tool_result_ok
            and (self.last_message is None or self.last_message.fits(request.last_message))
            and (
                self.any_message is None
                or any(self.any_message.contains in message_text(m) for m in request.messages)
            )
            and (self.system is None or self.system.contains in request.system_text)
            and (self.tools is None or set(self.tools) <= set(request.tool_names))
            and (self.model is None or request.model == self.model)
            and (self.json_schema is None or (request.json_schema is not None) == self.json_schema)
        )


class ToolCall(_Strict):
    """One tool call to answer with. `arguments` is an object, or a string sent as is
    (to test how a flow handles malformed arguments)."""

    name: str
    arguments: Any = Field(default_factory=dict)
    id: str | None = None

    @field_validator("arguments")
    @classmethod
    def _object_or_text(cls, value: Any) -> Any:
        if not isinstance(value, dict | str):
            raise ValueError(f"arguments must be an object or a string, got {value!r}")
        return value

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


_ERROR_TYPES: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


class ErrorReply(_Strict):
    """An OpenAI-style error: `{"error": {"message", "type", "param", "code"}}`."""

    status: int = Field(ge=400, le=599)
    message: str = "mock LLM error"
    type: str | None = None
    code: str | None = None
    retry_after: float | None = Field(default=None, ge=0)

    def body(self) -> dict[str, Any]:
        default_type, default_code = _ERROR_TYPES.get(
            self.status, ("server_error" if self.status >= 500 else "invalid_request_error", None)
        )
        return error_body(self.message, self.type or default_type, self.code or default_code)


def error_body(
    message: str, type_: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """The body of an OpenAI error response."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


class Action(_Strict):
    """What to answer. With none of reply / tool_calls / json / error, the zero-config
    echo answers (see `responses.reply_for`); `delay` and `token_delay` still apply."""

    reply: str | None = None
    tool_calls: list[ToolCall] | None = None
    json_: Any = Field(default=None, alias="json")
    error: ErrorReply | None = None
    delay: float = Field(default=0, ge=0)
    token_delay: float = Field(default=0, ge=0)
    finish_reason: Literal["stop", "length", "content_filter"] | None = None

    @field_validator("reply")
    @classmethod
    def _placeholders(cls, value: str | None) -> str | None:
        if value is not None:
            check_template(value)
        return value

    @model_validator(mode="after")
    def _one_answer(self) -> Action:
        given = [
            key
            for key, present in (
                ("reply", self.reply is not None),
                ("tool_calls", bool(self.tool_calls)),
                ("json", self.has_json),
            )
            if present
        ]
        if self.error is not None and given:
            raise ValueError(f"an error answers alone; remove {', '.join(given)}")
        if self.has_json and len(given) > 1:
            raise ValueError("json is the whole content; it cannot go with reply or tool_calls")
        return self

    @property
    def has_json(self) -> bool:
        return "json_" in self.model_fields_set


class Rule(Action):
    """An Action that answers requests fitting `match`, at most `times` times."""

    match: Match = Field(default_factory=Match)
    times: int | None = Field(default=None, ge=1)


class Script(_Strict):
    """Ordered rules (the first that fits answers), the default action, and an optional
    API key every request must carry (`Authorization: Bearer KEY`)."""

    rules: list[Rule] = Field(default_factory=list)
    default: Action = Field(default_factory=Action)
    api_key: str | None = None

    def choose(self, request: ChatRequest, answered: Mapping[int, int]) -> int | None:
        """The index of the first rule that fits and has answers left, or None (default).
        `answered` counts how often each rule has answered."""
        for index, rule in enumerate(self.rules):
            if rule.times is not None and answered.get(index, 0) >= rule.times:
                continue
            if rule.match.fits(request):
                return index
        return None

    def model_ids(self) -> list[str]:
        """The model ids the rules name, then "mock"."""
        named = [r.match.model for r in self.rules if r.match.model is not None]
        return list(dict.fromkeys([*named, FALLBACK_MODEL]))


def check_template(text: str) -> None:
    """Raise ValueError unless `text` uses only the {last_message} / {tool_result}
    placeholders, bare ({{ and }} for literal braces)."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError:
        raise ValueError(
            "unbalanced brace; write '{{' or '}}' for a literal brace, or use "
            "{last_message} / {tool_result}"
        ) from None
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in PLACEHOLDERS or spec or conversion:
            raise ValueError(
                f"unknown placeholder '{{{field}}}'; the placeholders are "
                "{last_message} and {tool_result} (write '{{' or '}}' for a literal brace)"
            )


def render_template(text: str, values: Mapping[str, str]) -> str:
    """Fill a template checked by `check_template` (no attribute access, no eval)."""
    out = []
    for literal, field, _, _ in string.Formatter().parse(text):
        out.append(literal)
        if field is not None:
            out.append(values[field])
    return "".join(out)


ScriptSource = (
    Script | Mapping[str, Any] | Sequence[Rule | Mapping[str, Any]] | str | os.PathLike[str]
)


def load_script(source: ScriptSource) -> Script:
    """A Script from a YAML or JSON file path, a mapping (the file's content), a list of
    rules, or a Script (returned as is). Raises ScriptError, every issue located."""
    if isinstance(source, Script):
        return source
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        return _validate(_read(path), str(path))
    if isinstance(source, Mapping):
        return _validate(source, "<mapping>")
    return _validate({"rules": list(source)}, "<rules>")


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(str(path), [f"cannot read the file: {exc.strerror or exc}"]) from None
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise ScriptError(
            str(path), [f"line {exc.lineno}, column {exc.colno}: {exc.msg}"]
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScriptError(str(path), [f"{where}{problem}"]) from None


def _validate(document: Any, source: str) -> Script:
    if document is None:
        document = {}
    if isinstance(document, list):
        document = {"rules": document}
    if not isinstance(document, Mapping):
        raise ScriptError(
            source, [f"a script is a mapping with 'rules' (or a list of rules), not {document!r}"]
        )
    try:
        return Script.model_validate(document)
    except ValidationError as exc:
        raise ScriptError(source, _issues(exc)) from None


def _issues(exc: ValidationError) -> list[str]:
    issues = []
    for error in exc.errors(include_url=False):
        location = _location(error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "missing":
            message = "required"
        elif error["type"] == "extra_forbidden":
            message = "unknown key"
        issues.append(f"{location}: {message}" if location else message)
    return issues


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
