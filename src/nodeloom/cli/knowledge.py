"""`nodeloom knowledge`: ingest files into a collection, search it, list and drop
collections (docs/knowledge.md). The store is NODELOOM_KNOWLEDGE_URL (else the run
store's kind: a SQLite file in NODELOOM_DATA_DIR, or its Postgres)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from nodeloom.cli.output import json_line, stdout_console

T = TypeVar("T")


def _run(work: Callable[[], Awaitable[T]]) -> T:
    from nodeloom.knowledge import KnowledgeError

    try:
        return asyncio.run(work())
    except KnowledgeError as exc:
        raise click.ClickException(f"[{exc.code}] {exc}") from None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


store_option = click.option(
    "--store",
    "store",
    metavar="URL",
    help="sqlite:///PATH or postgresql://... (default: NODELOOM_KNOWLEDGE_URL, else the data "
    "directory's knowledge.db, or the run store's Postgres).",
)


@click.group("knowledge")
def knowledge_command() -> None:
    """Collections of documents to search (RAG): ingest, search, list, drop.

    Exit codes: 0 done; 1 the store, the model or every file failed; 2 bad arguments.
    """


@knowledge_command.command("ingest")
@click.argument("collection")
@click.argument("paths", nargs=-1, required=True)
@click.option("--model", default=None, help="Embedding model (default local:all-minilm-l6-v2).")
@click.option("--base-url", default=None, help="The /v1 address of a remote model's server.")
@click.option("--chunk-size", type=click.IntRange(min=1), default=256, show_default=True)
@click.option("--chunk-overlap", type=click.IntRange(min=0), default=32, show_default=True)
@click.option(
    "--strategy",
    type=click.Choice(["recursive", "markdown", "sentence"]),
    default="recursive",
    show_default=True,
)
@click.option("--unit", type=click.Choice(["tokens", "characters"]), default="tokens")
@click.option(
    "--mode",
    type=click.Choice(["replace_source", "upsert", "append"]),
    default="replace_source",
    show_default=True,
    help="replace_source drops what a re-ingested file had before.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the counts as one JSON object.")
@store_option
def ingest_command(
    collection: str,
    paths: tuple[str, ...],
    model: str | None,
    base_url: str | None,
    chunk_size: int,
    chunk_overlap: int,
    strategy: str,
    unit: str,
    mode: str,
    as_json: bool,
    store: str | None,
) -> None:
    """Load PATHs (files, folders, globs, URLs), chunk, embed and write them into COLLECTION.

    A progress bar on stderr shows files, chunks and embeddings per second; files that
    cannot be read are listed and the others are written.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from nodeloom.knowledge import ingest, open_embedder, open_store
    from nodeloom.paths import data_dir

    console = Console(stderr=True, highlight=False, soft_wrap=True)

    async def work() -> dict[str, Any]:
        opened = await open_store(store)
        embedder = open_embedder(model, base_url=base_url, cache_dir=data_dir() / "knowledge")
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
        )
        with Progress(*columns, console=console, transient=False) as bar:
            tasks: dict[str, Any] = {}
            embedding_since: list[float] = []

            def on_progress(stage: str, done: int, total: int) -> None:
                label = {"load": "files", "chunk": "chunks", "embed": "embeddings"}[stage]
                if stage not in tasks:
                    tasks[stage] = bar.add_task(label, total=max(total, 1), rate="")
                rate = ""
                if stage == "embed":
                    embedding_since.append(time.perf_counter())
                    seconds = max(embedding_since[-1] - embedding_since[0], 1e-6)
                    rate = f"{done / seconds:.1f}/s" if done and len(embedding_since) > 1 else ""
                bar.update(tasks[stage], completed=done, total=max(total, 1), rate=rate)

            try:
                return await ingest(
                    opened,
                    collection,
                    list(paths),
                    embedder,
                    strategy=strategy,
                    chunk_size=chunk_size,
                    chunk_overlap=chunk_overlap,
                    unit=unit,
                    mode=mode,
                    on_progress=on_progress,
                )
            finally:
                embedder.close()
                await opened.close()

    stats = _run(work)
    for error in stats["errors"]:
        console.print(f"[yellow]skipped[/] {error['message']}")
    if as_json:
        json_line(stats)
    else:
        console.print(
            f"[green]{collection}[/]: {stats['files']} files, {stats['chunks']} chunks "
            f"({stats['added']} added, {stats['updated']} updated, {stats['unchanged']} "
            f"unchanged, {stats['removed']} removed; {stats['embedded']} embedded) "
            f"in {stats['seconds']:.1f} s"
        )
    if stats["files"] == 0:
        sys.exit(1)


@knowledge_command.command("search")
@click.argument("collection")
@click.argument("query")
@click.option("--top-k", type=click.IntRange(min=1), default=5, show_default=True)
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "vector", "keyword"]),
    default="hybrid",
    show_default=True,
)
@click.option(
    "--filter", "filter_", metavar="JSON", help='Metadata equality, e.g. {"source": "a.md"}'
)
@click.option("--model", default=None, help="The query's model (default: the collection's).")
@click.option("--base-url", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the knowledge-search output object.")
@store_option
def search_command(
    collection: str,
    query: str,
    top_k: int,
    mode: str,
    filter_: str | None,
    model: str | None,
    base_url: str | None,
    as_json: bool,
    store: str | None,
) -> None:
    """Search COLLECTION for QUERY. With --json, stdout is exactly the `knowledge-search`
    node's output: {"hits": [...], "context": "..."}."""
    from nodeloom.knowledge import open_store, search
    from nodeloom.knowledge.runtime import search_embedder
    from nodeloom.paths import data_dir

    where = None
    if filter_:
        try:
            where = json.loads(filter_)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--filter") from None
        if not isinstance(where, dict):
            raise click.BadParameter("an object of metadata fields", param_hint="--filter")

    async def work() -> dict[str, Any]:
        opened = await open_store(store)
        embedder = None
        try:
            if mode != "keyword":
                options = {"model": model, "base_url": base_url}
                embedder = await search_embedder(options, data_dir(), opened, collection)
            return await search(
                opened, collection, query, embedder, top_k=top_k, mode=mode, where=where
            )
        finally:
            if embedder is not None:
                embedder.close()
            await opened.close()

    result = _run(work)
    if as_json:
        json_line(result)
        return
    console = stdout_console()
    if not result["hits"]:
        console.print("no hits")
    for number, hit in enumerate(result["hits"], start=1):
        meta = hit["metadata"]
        where_from = str(meta.get("source", ""))
        if meta.get("page") is not None:
            where_from += f" p.{meta['page']}"
        if meta.get("headings"):
            where_from += " > " + " > ".join(meta["headings"])
        console.print(f"[bold][{number}][/] {hit['score']:.4f}  [cyan]{where_from}[/]", markup=True)
        console.print("    " + " ".join(hit["text"].split())[:300], markup=False)


@knowledge_command.command("list")
@click.option("--json", "as_json", is_flag=True)
@store_option
def list_command(as_json: bool, store: str | None) -> None:
    """The collections: name, model, dimension, chunks, sources."""
    from nodeloom.knowledge import open_store

    async def work() -> list[Any]:
        opened = await open_store(store)
        try:
            return await opened.list_collections()
        finally:
            await opened.close()

    collections = _run(work)
    if as_json:
        json_line({"collections": [c.to_json() for c in collections]})
        return
    for info in collections:
        fields = (info.name, info.model, info.dimension, info.chunks, info.sources)
        click.echo("{}\t{}\t{}\t{} chunks\t{} sources".format(*fields))


@knowledge_command.command("drop")
@click.argument("collection")
@store_option
def drop_command(collection: str, store: str | None) -> None:
    """Delete COLLECTION and everything in it."""
    from nodeloom.knowledge import open_store

    async def work() -> bool:
        opened = await open_store(store)
        try:
            return await opened.drop_collection(collection)
        finally:
            await opened.close()

    if not _run(work):
        raise click.ClickException(f"there is no knowledge collection '{collection}'")
    click.echo(f"dropped '{collection}'", err=True)
