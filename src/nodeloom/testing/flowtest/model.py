"""The flow test file format (`*.flowtest.yaml`): a flow, how to drive it, and what its run
must show. See docs/testing.md#flow-tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nodeloom.testing.flowtest.matching import OPERATORS

SUFFIX = ".flowtest.yaml"

# A mock LLM script as the mock accepts it: a file path (relative to the test file), a
# mapping with `rules` (and `default`, `api_key`), or a list of rules.
MockScript = str | dict[str, Any] | list[Any]


class EventPattern(BaseModel):
    """One expected event: its type, optionally the node (name or id) and a subset of its
    data. A bare string in a test file is short for `{type: STRING}`."""

    model_config = ConfigDict(extra="forbid")

    type: str
    node: str | None = None
    data: dict[str, Any] | None = None

    @field_validator("data")
    @classmethod
    def _known_operators(cls, value: Any) -> Any:
        _check_operators(value)
        return value

    def describe(self) -> str:
        text = self.type + (f" {self.node}" if self.node else "")
        return text + (f" {self.data}" if self.data else "")


class Expect(BaseModel):
    """What the run must show. Everything is optional; `status` defaults to completed."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["completed", "failed", "paused", "cancelled"] = "completed"
    outputs: dict[str, Any] = Field(default_factory=dict)
    fired: dict[str, list[str]] = Field(default_factory=dict)
    ran: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    events: list[EventPattern] = Field(default_factory=list)
    error: dict[str, Any] | None = None

    @field_validator("events", mode="before")
    @classmethod
    def _bare_types(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"type": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("outputs", "error")
    @classmethod
    def _known_operators(cls, value: Any) -> Any:
        _check_operators(value)
        return value


def _check_operators(value: Any) -> None:
    """`$`-keys are operators: a misspelt one is an error, not a key to look for."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.startswith("$"):
                if key not in OPERATORS:
                    raise ValueError(f"unknown operator {key!r}; the operators are {OPERATORS}")
                if len(value) != 1:
                    raise ValueError(f"{key} stands alone in its mapping: {{{key}: VALUE}}")
            _check_operators(item)
    elif isinstance(value, list):
        for item in value:
            _check_operators(item)


class Case(BaseModel):
    """One test: a run of the flow with its input, and its expectations."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    input: Any = None
    trigger: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None
    answers: dict[str, Any] = Field(default_factory=dict)
    mock_llm: MockScript | None = None
    cassette: str | None = None
    timeout: float = Field(default=60.0, gt=0)
    expect: Expect = Field(default_factory=Expect)


class FlowTestFile(BaseModel):
    """A `*.flowtest.yaml` file: the flow under test and its tests."""

    model_config = ConfigDict(extra="forbid")

    flow: str = Field(min_length=1)
    description: str | None = None
    mock_llm: MockScript | None = None
    cassette: str | None = None
    tests: list[Case] = Field(min_length=1)
    path: Path = Field(default=Path("."), exclude=True)

    @field_validator("tests")
    @classmethod
    def _unique_names(cls, tests: list[Case]) -> list[Case]:
        seen: set[str] = set()
        for case in tests:
            if case.name in seen:
                raise ValueError(f"two tests are named {case.name!r}; give each its own name")
            seen.add(case.name)
        return tests

    @property
    def flow_path(self) -> Path:
        return (self.path.parent / self.flow).resolve()

    def cassette_for(self, case: Case) -> Path | None:
        """The cassette the case replays (its own, else the file's), or None."""
        cassette = case.cassette or self.cassette
        return (self.path.parent / cassette).resolve() if cassette else None

    def script_for(self, case: Case) -> MockScript | None:
        """The case's mock LLM script, else the file's; a path is made absolute."""
        script = case.mock_llm if case.mock_llm is not None else self.mock_llm
        if isinstance(script, str):
            return str((self.path.parent / script).resolve())
        return script


class FlowTestError(Exception):
    """A test file that cannot be read or is not valid: the message lists every problem."""


def load_flowtest(path: str | Path) -> FlowTestFile:
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FlowTestError(f"cannot read {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise FlowTestError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(document, dict):
        raise FlowTestError(f"{path}: a flow test file is a mapping with `flow` and `tests`")
    try:
        loaded = FlowTestFile.model_validate({**document, "path": path})
    except ValidationError as exc:
        lines = [f"invalid flow test file ({path}):"]
        for error in exc.errors():
            where = _location(document, error["loc"])
            lines.append(f"  {where}: {error['msg']}")
        raise FlowTestError("\n".join(lines)) from None
    return loaded


def _location(document: dict[str, Any], loc: tuple[int | str, ...]) -> str:
    """`tests[1].expect.status`, with a test's name when it has one."""
    text = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            text += f"[{part}]"
            if i == 1 and loc[0] == "tests":
                tests = document.get("tests")
                if isinstance(tests, list) and part < len(tests):
                    name = tests[part].get("name") if isinstance(tests[part], dict) else None
                    if name:
                        text += f" ({name!r})"
        else:
            text += ("." if text else "") + str(part)
    return text or "(file)"
