"""The delivery count of each job (nodeloom.fleet.delivery.Deliveries), in a real Redis:
one round trip a job; the count of a job that ended goes with the next job's."""

from __future__ import annotations

from typing import Any

import redis as redis_client

from nodeloom.fleet.delivery import Deliveries

from .conftest import Redis


class CountingRoundTrips(redis_client.Redis):
    """A client that counts what it sends to the server, one pipeline as one."""

    trips = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        CountingRoundTrips.trips += 1
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        CountingRoundTrips.trips += 1  # its execute() is one round trip
        return super().pipeline(transaction, shard_hint)


def test_each_delivery_is_counted_and_an_ended_jobs_count_goes_with_the_next_one(
    redis_server: Redis,
):
    client = CountingRoundTrips.from_url(redis_server.url)
    deliveries = Deliveries(client)
    try:
        assert deliveries.count("a") == 1
        assert deliveries.count("a") == 2  # delivered again (its worker died)
        assert deliveries.count("b") == 1
        deliveries.done("a")
        deliveries.done("b")
        assert client.get("nodeloom:deliveries:a") == b"2"  # not deleted yet
        CountingRoundTrips.trips = 0
        assert deliveries.count("c") == 1
        assert CountingRoundTrips.trips == 1  # the two deletions rode c's count
        assert client.get("nodeloom:deliveries:a") is None
        assert client.get("nodeloom:deliveries:b") is None
        assert 0 < client.ttl("nodeloom:deliveries:c") <= 7 * 24 * 3600
        deliveries.done("c")
        deliveries.flush()  # the worker stops
        assert client.get("nodeloom:deliveries:c") is None
    finally:
        client.close()
