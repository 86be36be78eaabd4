"""The delivery count of each job (nodeloom.fleet.delivery.Deliveries), in a real Redis:
one round trip a job; the count of a job that ended goes with the next job's."""

from __future__ import annotations

from typing import Any

import pytest
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


def test_an_ended_jobs_count_is_kept_for_the_next_round_trip_when_redis_is_away(
    redis_server: Redis,
):
    client = redis_client.Redis.from_url(redis_server.url, socket_timeout=2)
    deliveries = Deliveries(client)
    try:
        assert deliveries.count("a") == 1
        deliveries.done("a")
        redis_server.stop()
        with pytest.raises(redis_client.ConnectionError):
            deliveries.count("b")
        redis_server.start()
        client.set("nodeloom:deliveries:a", 1)  # as if it had outlived the restart
        assert deliveries.count("c") == 1
        assert client.get("nodeloom:deliveries:a") is None  # its deletion was not lost
    finally:
        client.close()
