"""Database Query: one SQL statement, parameters bound by name, read-only by default."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

DEFAULT_MAX_ROWS = 1000
DEFAULT_TIMEOUT = 30.0
PLAIN_URL_SCHEMES = ("sqlite:", "sqlite+aiosqlite:")


def check_query(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    query = data.get("query")
    if isinstance(query, str) and "{{" in query:
        issues.append(
            (
                "query",
                "the SQL text must not hold {{ }}: an expression spliced into SQL is an "
                "injection waiting to happen. Write a named parameter instead (… WHERE id = "
                ':id) and give its value in `parameters`: {"id": "{{ $json.id }}"}',
            )
        )
    connection = data.get("connection")
    if (
        isinstance(connection, str)
        and connection.strip()
        and "{{" not in connection
        and not connection.strip().lower().startswith(PLAIN_URL_SCHEMES)
    ):
        issues.append(
            (
                "connection",
                "a server's connection URL holds its password: save it as a credential "
                "(nodeloom credentials set NAME) and write {{ $credentials.NAME }} here; "
                "only a plain sqlite:///path URL may be written inline",
            )
        )
    parameters = data.get("parameters")
    if parameters is not None and not isinstance(parameters, (Mapping, str)):
        issues.append(("parameters", 'parameters must be an object such as {"id": 7}'))
    return issues


definition = NodeDefinition(
    id="database-query",
    name="Database Query",
    category="integration",
    description="Runs one SQL statement on SQLite, Postgres or MySQL/MariaDB with named "
    "parameters (:name). Read-only unless allow_write; at most max_rows rows.",
    icon="Database",
    inputs=(
        Port(
            "input",
            required=False,
            description="Optional: the spine value, for expressions in `parameters` ($json).",
        ),
    ),
    outputs=(
        Port(
            "output",
            description='{"rows": [{column: value}], "row_count", "truncated"}.',
        ),
    ),
    parameters=(
        # Secret-capable: the URL holds a password ({{ $credentials.NAME }}).
        Parameter(
            "connection",
            "string",
            "Connection",
            required=True,
            placeholder="{{ $credentials.orders_db }}",
            description="A credential holding a SQLAlchemy URL: postgresql://user:pw@host/db, "
            "mysql://user:pw@host/db (MariaDB too), or sqlite:///path.db (which may also be "
            "written here).",
            secret=True,
        ),
        Parameter(
            "query",
            "code",
            "Query",
            required=True,
            language="sql",
            placeholder="SELECT id, total FROM orders WHERE customer = :customer",
            description="One SQL statement. Values go in as :name parameters, never as "
            "{{ }} in the text.",
        ),
        Parameter(
            "parameters",
            "json",
            "Parameters",
            default={},
            description='Values of the :name parameters, e.g. {"customer": "{{ $json.id }}"}; '
            "each is bound as data, never read as SQL.",
        ),
        Parameter(
            "allow_write",
            "boolean",
            "Allow writes",
            default=False,
            description="Off, the statement runs in a read-only transaction and anything "
            "that changes data fails. On, the transaction is committed.",
        ),
        Parameter(
            "max_rows",
            "integer",
            "Max rows",
            default=DEFAULT_MAX_ROWS,
            minimum=1,
            maximum=100_000,
            description="Rows returned at most; more set truncated: true.",
        ),
        Parameter(
            "timeout",
            "number",
            "Timeout (s)",
            default=DEFAULT_TIMEOUT,
            minimum=0.1,
            maximum=3600,
            description="The statement is cancelled by the database after this many seconds.",
        ),
    ),
    side_effects="external",
    output_shape={"rows": "list", "row_count": "int", "truncated": "boolean"},
    check=check_query,
)
