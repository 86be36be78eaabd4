"""Every error nodeloom raises, in one tree.

    NodeloomError                    code
    ├── GraphError                   invalid_graph      a graph failed to load or validate;
    │                                                   carries every Issue found
    ├── PluginError                  plugin_error       a node plugin could not be loaded
    ├── ExpressionError              expression_error   base of the expression errors
    │   ├── ExpressionSyntaxError    expression_syntax  the text inside {{ }} does not parse
    │   └── ExpressionEvalError      expression_eval    a well-formed expression failed at run
    │                                                   time (missing field, wrong type, ...)
    ├── CoercionError                coercion_error     a value could not be converted between
    │                                                   socket types
    └── NodeError                    node_failed        a node failed while running; names the
        │                                               node (id, name, type) and the cause
        ├── NodeTimeout              node_timeout       a node ran longer than its `timeout`
        └── CodeError                code_error         user code in a Code node raised; carries
                                                        the user's traceback

Run-level failures (run timeout, step limit, cancellation) are not exceptions that
escape `Flow.run`: a run always ends with a `RunResult` whose `status` says how it
ended and whose `error` holds `{code, message, ...}` (codes: run_timeout,
max_steps_exceeded, cancelled, and the codes above).

Every code is documented in docs/errors.md; codes are stable, messages may improve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem found in a graph, located so the canvas can pin it to a control."""

    code: str
    message: str
    node_id: str | None = None
    field: str | None = None
    edge_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "node_id": self.node_id,
            "field": self.field,
            "message": self.message,
        }
        if self.edge_id is not None:
            data["edge_id"] = self.edge_id
        return data

    def __str__(self) -> str:
        where = []
        if self.node_id is not None:
            where.append(f"node '{self.node_id}'")
        if self.edge_id is not None:
            where.append(f"edge '{self.edge_id}'")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        prefix = ", ".join(where)
        return (
            f"[{self.code}] {prefix}: {self.message}" if prefix else f"[{self.code}] {self.message}"
        )


class NodeloomError(Exception):
    """Base of every nodeloom error. `code` is stable and documented."""

    code = "nodeloom_error"
    # Whether another attempt may help (see the retry policy). Configuration and
    # expression errors will fail the same way again; NodeError decides per instance.
    retryable = False

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": str(self)}


class GraphError(NodeloomError):
    """A graph is malformed or invalid. `issues` lists every problem, each located."""

    code = "invalid_graph"

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = list(issues)
        if len(self.issues) == 1:
            message = str(self.issues[0])
        else:
            lines = "\n".join(f"  - {issue}" for issue in self.issues)
            message = f"{len(self.issues)} problems in the graph:\n{lines}"
        super().__init__(message)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": str(self),
            "errors": [issue.to_json() for issue in self.issues],
        }


class PluginError(NodeloomError):
    code = "plugin_error"


class ExpressionError(NodeloomError):
    code = "expression_error"


class ExpressionSyntaxError(ExpressionError):
    code = "expression_syntax"


class ExpressionEvalError(ExpressionError):
    code = "expression_eval"


class CoercionError(NodeloomError):
    code = "coercion_error"


class NodeError(NodeloomError):
    """A node failed at run time.

    Executors raise it (or any exception; the engine wraps foreign exceptions) to fail
    the node. `retryable` tells the retry policy whether another attempt may help when
    the policy does not list codes explicitly.
    """

    code = "node_failed"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        retryable: bool = True,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.retryable = retryable
        self.details = dict(details or {})

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": str(self), **self.details}


class NodeTimeout(NodeError):
    code = "node_timeout"


class CodeError(NodeError):
    """User code raised inside a Code node; `traceback` is the user's, not ours."""

    code = "code_error"

    def __init__(self, message: str, *, traceback: str = "", retryable: bool = False) -> None:
        super().__init__(message, retryable=retryable, details={"traceback": traceback})
        self.traceback = traceback
