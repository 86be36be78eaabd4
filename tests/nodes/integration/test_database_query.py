"""Database Query on a real SQLite file, a real Postgres and a real MariaDB server."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import nodeloom
from nodeloom.errors import GraphError, NodeError
from nodeloom.nodes.integration.database_query.definition import definition
from nodeloom.nodes.integration.database_query.executor import executor
from nodeloom.nodes.integration.database_query.pools import close_pools, pooled
from nodeloom.paths import data_dir
from nodeloom.secrets import Vault
from nodeloom.testing.builders import chain, node
from nodeloom.testing.context import call_executor
from nodeloom.testing.stores import create_database, drop_database

SLEEP = {
    "sqlite": "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
    "SELECT count(*) FROM c",
    "postgres": "SELECT pg_sleep(5)",
    "mariadb": "SELECT SLEEP(5)",
}
SESSION_ID = {
    "postgres": "SELECT pg_backend_pid() AS id",
    "mariadb": "SELECT CONNECTION_ID() AS id",
}


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
async def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, str]]:
    """(backend, URL of an empty database); the pools are closed after the test."""
    backend = request.param
    try:
        if backend == "sqlite":
            yield backend, f"sqlite:///{tmp_path / 'test.db'}"
        elif backend == "postgres":
            url = await create_database(request.getfixturevalue("postgres_server"))
            try:
                yield backend, url
            finally:
                await close_pools()
                await drop_database(url)
        else:
            server = request.getfixturevalue("mariadb_server")
            name = f"t_{uuid.uuid4().hex[:12]}"
            await query(server, f"CREATE DATABASE {name}", allow_write=True)
            yield backend, f"{server}/{name}"
    finally:
        await close_pools()


async def query(connection: str, sql: str, **data: object) -> dict:
    result, _ = await call_executor(executor, {"connection": connection, "query": sql, **data})
    return result.outputs["output"]


async def refused(connection: str, sql: str, **data: object) -> NodeError:
    with pytest.raises(NodeError) as caught:
        await query(connection, sql, **data)
    return caught.value


async def people(url: str) -> None:
    await query(
        url, "CREATE TABLE people (id INTEGER PRIMARY KEY, name VARCHAR(80))", allow_write=True
    )
    for n, name in enumerate(("Ada", "Grace", "Alan"), 1):
        await query(
            url,
            "INSERT INTO people (id, name) VALUES (:id, :name)",
            parameters={"id": n, "name": name},
            allow_write=True,
        )


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "database-query"
    assert [p.id for p in definition.parameters] == [
        "connection",
        "query",
        "parameters",
        "allow_write",
        "max_rows",
        "timeout",
    ]
    assert definition.parameter("query").type == "code"
    assert definition.parameter("query").language == "sql"
    assert definition.parameter("allow_write").default is False
    assert definition.parameter("max_rows").default == 1000


async def test_rows_come_back_as_objects_with_parameters_bound_by_name(database) -> None:
    _, url = database
    await people(url)
    out = await query(
        url, "SELECT id, name FROM people WHERE id >= :low ORDER BY id", parameters={"low": 2}
    )
    assert out == {
        "rows": [{"id": 2, "name": "Grace"}, {"id": 3, "name": "Alan"}],
        "row_count": 2,
        "truncated": False,
    }


async def test_a_write_reports_the_rows_it_changed(database) -> None:
    _, url = database
    await people(url)
    out = await query(
        url, "UPDATE people SET name = :n WHERE id > 1", parameters={"n": "x"}, allow_write=True
    )
    assert out == {"rows": [], "row_count": 2, "truncated": False}


async def test_read_only_by_default_refuses_writes_and_schema_changes_by_the_database_rule(
    database,
) -> None:
    _, url = database
    await people(url)
    for sql in (
        "INSERT INTO people (id, name) VALUES (9, 'Eve')",
        "DELETE FROM people",
        "DROP TABLE people",
        "CREATE TABLE other (a INTEGER)",
    ):
        error = await refused(url, sql)
        assert error.code == "database_read_only", (sql, str(error))
        assert error.details == {"field": "allow_write"}
        assert "Set allow_write: true" in str(error)
    assert (await query(url, "SELECT count(*) AS n FROM people"))["rows"] == [{"n": 3}]


async def test_an_injection_attempt_through_a_parameter_stays_data(database) -> None:
    _, url = database
    await people(url)
    attack = "Ada'; DROP TABLE people; --"
    found = await query(
        url, "SELECT id FROM people WHERE name = :name", parameters={"name": attack}
    )
    assert found["rows"] == []
    await query(
        url,
        "INSERT INTO people (id, name) VALUES (:id, :name)",
        parameters={"id": 4, "name": attack},
        allow_write=True,
    )
    stored = await query(url, "SELECT name FROM people WHERE id = 4")
    assert stored["rows"] == [{"name": attack}]
    assert (await query(url, "SELECT count(*) AS n FROM people"))["rows"] == [{"n": 4}]


async def test_max_rows_caps_the_rows_and_says_the_result_was_truncated(database) -> None:
    _, url = database
    await people(url)
    out = await query(url, "SELECT name FROM people ORDER BY id", max_rows=2)
    assert out == {"rows": [{"name": "Ada"}, {"name": "Grace"}], "row_count": 2, "truncated": True}


async def test_the_database_cancels_a_statement_that_outlives_the_timeout(database) -> None:
    backend, url = database
    error = await refused(url, SLEEP[backend], timeout=0.5)
    assert error.code == "database_timeout"
    assert "longer than 0.5 s" in str(error)
    assert (await query(url, "SELECT 1 AS one"))["rows"] == [{"one": 1}]  # the pool is fine


async def test_a_missing_or_unused_parameter_is_named(database) -> None:
    _, url = database
    error = await refused(url, "SELECT :a AS a, :b AS b", parameters={"a": 1})
    assert error.details == {"field": "parameters"}
    assert "the query uses :b but `parameters` has no value for it" in str(error)
    error = await refused(url, "SELECT :a AS a", parameters={"a": 1, "c": 2})
    assert "`parameters` has 'c', which the query does not use (it uses :a)" in str(error)


async def test_a_syntax_error_is_the_databases_message_without_the_connection(database) -> None:
    _, url = database
    error = await refused(url, "SELEC 1")
    assert error.code == "database_error"
    assert error.retryable is False
    assert "SELEC" in str(error)


@pytest.mark.parametrize("backend", ["postgres", "mariadb"])
async def test_connections_are_pooled_across_runs(backend, request) -> None:
    server = request.getfixturevalue(f"{backend}_server")
    url = server if backend == "mariadb" else f"{server}/postgres"
    try:
        first = (await query(url, SESSION_ID[backend]))["rows"]
        second = (await query(url, SESSION_ID[backend]))["rows"]
        assert first == second
        assert pooled() == 1
    finally:
        await close_pools()


async def test_sqlite_refuses_attach_and_vacuum_into_so_no_other_file_is_touched(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'main.db'}"
    for sql in (f"ATTACH '{tmp_path / 'other.db'}' AS o", f"VACUUM INTO '{tmp_path / 'copy.db'}'"):
        error = await refused(url, sql, allow_write=True)
        assert error.code == "database_error"
        assert "not authorized" in str(error) or "authorization denied" in str(error)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["main.db"]


async def test_sqlite_read_only_refuses_pragmas_that_set_but_answers_those_that_read(
    tmp_path,
) -> None:
    url = f"sqlite:///{tmp_path / 'main.db'}"
    await people(url)
    error = await refused(url, "PRAGMA journal_mode = WAL")
    assert "not authorized" in str(error)
    columns = await query(url, "PRAGMA table_info(people)")
    assert [row["name"] for row in columns["rows"]] == ["id", "name"]
    assert (await query(url, "PRAGMA journal_mode"))["rows"] == [{"journal_mode": "delete"}]


async def test_an_unreachable_server_is_retryable_and_never_shows_the_password() -> None:
    error = await refused("postgresql://app:hunter2@127.0.0.1:9/orders", "SELECT 1")
    assert error.code == "database_unreachable"
    assert error.retryable is True
    assert "hunter2" not in str(error)
    assert "app:***@127.0.0.1:9/orders" in str(error)


def test_validation_refuses_an_expression_in_the_sql_text_and_a_server_url_written_inline() -> None:
    doc = chain(
        node(
            "q",
            "database-query",
            connection="sqlite:///x.db",
            query="SELECT * FROM t WHERE id = {{ $json.id }}",
        ),
        node("r", "database-query", connection="postgresql://u:pw@db/app", query="SELECT 1"),
    )
    with pytest.raises(GraphError) as caught:
        nodeloom.load(doc)
    issues = {(i.node_id, i.field): i.message for i in caught.value.issues}
    assert set(issues) == {("q", "query"), ("r", "connection")}
    assert "Write a named parameter instead" in issues[("q", "query")]
    assert '{"id": "{{ $json.id }}"}' in issues[("q", "query")]
    assert "{{ $credentials.NAME }}" in issues[("r", "connection")]


async def test_a_graph_reads_the_url_from_a_credential_and_binds_expressions_as_parameters(
    postgres_server,
) -> None:
    url = await create_database(postgres_server)
    secret_url = url.replace("postgres@", "postgres:hunter2@")  # trust auth ignores it
    Vault(data_dir()).set("orders_db", secret_url)
    try:
        await query(secret_url, "CREATE TABLE orders (id INT, total INT)", allow_write=True)
        await query(
            secret_url, "INSERT INTO orders VALUES (1, 10), (2, 25), (3, 40)", allow_write=True
        )
        doc = chain(
            node("input", "json-transform", expression='{"min": 20}'),
            node(
                "big",
                "database-query",
                connection="{{ $credentials.orders_db }}",
                query="SELECT id FROM orders WHERE total >= :min ORDER BY id",
                parameters={"min": "{{ $json.min }}"},
            ),
        )
        sink = nodeloom.ListSink()
        result = await nodeloom.load(doc).run(sink=sink)
        assert result.error is None, result.error
        assert result.outputs["big"]["output"]["rows"] == [{"id": 2}, {"id": 3}]
        events = json.dumps([e.to_json() for e in sink.events], default=str)
        assert "hunter2" not in events
    finally:
        await close_pools()
        await drop_database(url)


async def test_in_a_graph_the_database_timeout_comes_before_the_engines_node_timeout(
    tmp_path,
) -> None:
    doc = chain(
        node(
            "slow",
            "database-query",
            connection=f"sqlite:///{tmp_path / 'x.db'}",
            query=SLEEP["sqlite"],
            timeout=0.5,
        )
    )
    result = await nodeloom.load(doc).run()
    assert result.error["code"] == "database_timeout", result.error
