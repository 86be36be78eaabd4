"""`$credentials` only in secret-capable parameters.

A credential's value is masked in what a run reports only where it appears verbatim; a
prompt, a message or a URL would carry it (or a derived form such as `upper(...)`) into
outputs, model calls and logs. So `$credentials` may be used only in a parameter its
definition declares `secret=True` (an HTTP Request's headers, a model's API key, an MCP
server's environment, a webhook's secret): anywhere else it is a `credential_placement`
issue. See docs/credentials.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from nodeloom.errors import Issue

if TYPE_CHECKING:
    from nodeloom.graph.checked import NodeInfo

CREDENTIALS_ROOT = "$credentials"
_PARAMETER = re.compile(r"[^.\[]+")


def credential_placement_issues(infos: Mapping[str, NodeInfo], prefix: str) -> Iterator[Issue]:
    """An issue per parameter of a node that uses `$credentials` but is not secret-capable."""
    for node_id, info in infos.items():
        definition = info.definition
        if definition is None:
            continue
        reported: set[str] = set()
        for path, template in info.templates.items():
            if CREDENTIALS_ROOT not in template.roots:
                continue
            match = _PARAMETER.match(path)
            parameter_id = match.group(0) if match else path
            parameter = definition.parameter(parameter_id)
            if parameter is None or parameter.secret or parameter_id in reported:
                continue
            reported.add(parameter_id)
            capable = [p.id for p in definition.parameters if p.secret]
            here = (
                f"this node's secret-capable parameters are: {', '.join(capable)}"
                if capable
                else f"'{definition.id}' has no secret-capable parameter"
            )
            yield Issue(
                "credential_placement",
                f"node '{prefix}{node_id}' ({info.node.name}): parameter '{parameter_id}' uses "
                f"$credentials, but '{parameter_id}' is not secret-capable, so the value (or "
                "a form derived from it) could reach outputs, events and logs unmasked. Use "
                "the credential only in a secret-capable parameter, such as an HTTP "
                "Request's `headers` or a model's `api_key`; " + here + ".",
                node_id=prefix + node_id,
                field=path,
            )
