"""The API's request and response bodies (pydantic), so /openapi.json is fully typed.
Field names and shapes are those of the store's records' `to_json()`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The largest integer the store's columns hold (SQLite INTEGER, Postgres BIGINT): an integer
# parameter above it is a 422, not an OverflowError in the driver.
LARGEST_INT = 2**63 - 1

RunState = Literal["running", "paused", "completed", "failed", "cancelled", "interrupted", "queued"]
NodeState = Literal["started", "completed", "failed", "skipped", "waiting"]

# -- errors ------------------------------------------------------------------------------


class IssueModel(BaseModel):
    """One problem, located: a graph issue (node_id, field, edge_id) or a request field."""

    code: str
    message: str
    node_id: str | None = None
    field: str | None = None
    edge_id: str | None = None


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    code: str = Field(description="stable, machine-readable (see docs/api.md#errors)")
    message: str = Field(description="what went wrong and what to do")
    issues: list[IssueModel] | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail


# -- the node catalogue -------------------------------------------------------------------


class PortModel(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    socket: str
    label: str
    required: bool
    multiple: bool
    description: str | None = None
    repeat: str | None = None


class ParameterModel(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    type: str
    label: str
    default: Any = None
    required: bool = False
    hybrid: bool = False
    socket: str | None = None
    description: str | None = None
    options: list[Any] | None = None


class NodeDefinitionModel(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    name: str
    category: str
    description: str
    icon: str
    execution_mode: str
    inputs: list[PortModel]
    outputs: list[PortModel]
    main_output: str
    parameters: list[ParameterModel]
    side_effects: str
    streaming: bool
    trigger: bool
    interactive: bool
    output_shape: dict[str, Any] | None = None


class SocketTypeModel(BaseModel):
    id: str
    color: str
    shape: str
    description: str
    structural: bool


class CoercionModel(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str


class PluginFailureModel(BaseModel):
    origin: str
    location: str
    error: str


class Catalogue(BaseModel):
    """What `nodeloom nodes --json` prints: everything the editor renders nodes from."""

    nodes: list[NodeDefinitionModel]
    common_parameters: list[ParameterModel]
    socket_types: list[SocketTypeModel]
    coercions: list[CoercionModel]
    failures: list[PluginFailureModel]


# -- flows --------------------------------------------------------------------------------

Document = dict[str, Any]


class FlowCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    document: Document = Field(description="a graph document (native, or a format nodeloom reads)")


class FlowUpdate(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=200, description="default: unchanged")
    document: Document


class ValidateRequest(BaseModel):
    document: Document | str = Field(
        description="a graph document, or its text (JSON or YAML) as a file holds it"
    )


class ValidationResult(BaseModel):
    valid: bool
    issues: list[IssueModel]
    document: Document | None = Field(
        None, description="when valid: the graph in the native format (converted)"
    )


class FlowSummaryModel(BaseModel):
    id: str
    name: str
    latest_version: int
    created_at: str
    updated_at: str


class FlowList(BaseModel):
    flows: list[FlowSummaryModel]


class FlowVersionModel(BaseModel):
    flow_id: str
    name: str
    version: int
    document: Document
    document_hash: str
    created_at: str


class FlowVersionInfoModel(BaseModel):
    flow_id: str
    version: int
    document_hash: str
    size: int = Field(description="bytes of the document's JSON")
    created_at: str


class VersionList(BaseModel):
    versions: list[FlowVersionInfoModel]


# -- runs ---------------------------------------------------------------------------------


class RunStart(BaseModel):
    message: Any = Field(None, description="the turn's message (Chat Start outputs it)")
    trigger: dict[str, Any] | None = Field(None, description="the whole trigger, instead")
    chat_id: str | None = None
    version: int | None = Field(None, ge=1, description="the flow version (default: latest)")


class ResumeRequest(BaseModel):
    answers: dict[str, Any] = Field(
        default_factory=dict, description="node id or name -> answer, for waiting nodes"
    )
    replay_external: bool = Field(
        False, description="run again `external` nodes whose outcome was not recorded"
    )


class RerunRequest(BaseModel):
    from_node: str = Field(min_length=1, description="node id or name to run again from")


class RunAccepted(BaseModel):
    """A run started (or resumed) in the background: follow it at `events_url`."""

    run_id: str
    status: RunState
    run_url: str
    events_url: str


class OwnerModel(BaseModel):
    pid: int | None
    host: str | None


class RunModel(BaseModel):
    id: str
    status: RunState
    flow_id: str | None
    flow_version: int | None
    document_hash: str | None
    trigger: Any
    chat_id: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    duration_ms: float | None
    usage: dict[str, Any] | None
    error: dict[str, Any] | None
    steps: int
    settings: dict[str, Any] | None
    owner: OwnerModel
    heartbeat_at: str | None
    rerun_of: str | None
    rerun_from: str | None
    cancel_requested_at: str | None
    last_seq: int
    parent_run_id: str | None = Field(
        None, description="the run whose node started this one (a sub-flow, a flow tool's call)"
    )
    parent_node: str | None = Field(
        None, description="that node's id ('$error_flow' for an error flow's run)"
    )


class RunList(BaseModel):
    runs: list[RunModel]
    limit: int
    offset: int


class NodeExecutionModel(BaseModel):
    run_id: str
    node_id: str
    execution: int
    node_name: str | None
    node_type: str | None
    status: NodeState
    inputs: dict[str, Any] | None
    outputs: dict[str, Any] | None
    error: dict[str, Any] | None
    attempts: int
    usage: dict[str, Any] | None
    started_at: str
    finished_at: str | None
    side_effects: str | None
    input_hash: str | None
    state_delta: Any
    activation: str | None = None
    parameters: dict[str, Any] | None = None


class ChildRunModel(BaseModel):
    id: str
    status: RunState
    flow_id: str | None
    flow_version: int | None
    parent_node: str | None
    created_at: str


class RunDetail(RunModel):
    timeline: list[NodeExecutionModel] = Field(description="node executions, in start order")
    children: list[ChildRunModel] = Field(
        default_factory=list, description="the runs this run's nodes started, oldest first"
    )


class EventModel(BaseModel):
    """The `data:` of an SSE frame: an event as `Event.to_json()` gives it."""

    type: Literal["event"]
    seq: int
    run_id: str
    event_type: str
    node_id: str | None
    node_name: str | None
    node_type: str | None
    data: dict[str, Any]
    timestamp: float


# -- chat turns (POST /api/flows/{id}/chat) --------------------------------------------------


class ChatTurnRequest(BaseModel):
    message: Any = Field(description="the user's message: the trigger's `message`")
    chat_id: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="the conversation; omit it on the first turn and send back the one "
        "the answer names on the next",
    )
    version: int | None = Field(
        None, ge=1, le=LARGEST_INT, description="the flow version (default: latest)"
    )
    stream: bool = Field(
        False, description="answer with the run's events as SSE, then a ChatReply frame"
    )
    tools: list[Annotated[str, Field(min_length=1, max_length=64)]] | None = Field(
        None,
        max_length=32,
        description="the user tools picked for this turn (names from GET /api/tools); "
        "taken only when the flow's Chat Start has includeUserTools on",
    )


class FlowStep(BaseModel):
    """A `flow_step` block (seed 003): one card per node execution of a chat turn."""

    type: Literal["flow_step"]
    node_id: str
    node_type: str | None
    node_name: str | None
    status: Literal["started", "completed", "error", "skipped"]
    summary: str
    detail: dict[str, Any]
    duration_ms: int | None


class RunSteps(BaseModel):
    """A recorded run's flow_step blocks, and whether its flow's chat shows them."""

    steps: list[FlowStep]
    show_flow_steps: bool


class UserToolModel(BaseModel):
    name: str
    type: Literal["toolset", "mcp-server"]
    description: str


class UserTools(BaseModel):
    """The user tools a chat turn may pick (the server's user tools file)."""

    tools: list[UserToolModel]


class WaitingModel(BaseModel):
    model_config = ConfigDict(extra="allow")

    node_id: str
    node_name: str
    kind: str


class ChatReply(BaseModel):
    """What a turn answered. `status` says how its run ended: `completed` (with `answer`),
    `paused` (`waiting` says who waits for what: answer with POST
    /api/runs/{run_id}/resume), `failed` (`error` names the node) or `cancelled`."""

    chat_id: str
    run_id: str
    status: RunState
    answer: str | None
    usage: dict[str, int]
    waiting: list[WaitingModel]
    error: dict[str, Any] | None
    run_url: str
    events_url: str
    steps: list[FlowStep] = Field(
        description="the flow_step block of each node execution, in the order they started "
        "(empty when the flow's Chat Start has showFlowSteps off)"
    )


class ChatTurnStarted(BaseModel):
    """The first frame (`event: ChatTurn`) of a streamed turn."""

    chat_id: str
    run_id: str
    run_url: str
    events_url: str
