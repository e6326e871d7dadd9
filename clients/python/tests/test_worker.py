"""Worker against a real server: handling, failures, wake-ups, lease extension, settle retries, heartbeats."""
from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import timedelta
from typing import Callable

import psycopg
import pytest

from queue_client import ClaimedMessage, InvalidArgument, QueueClient, Worker


def wait_for(condition: Callable[[], bool], seconds: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"{what} not reached within {seconds} s")


def test_every_message_is_handled_once(dsn: str, client: QueueClient, namespace: str) -> None:
    ids = client.push_many("work", [{"i": i} for i in range(300)])
    seen: Counter[int] = Counter()
    lock = threading.Lock()

    def handler(message: ClaimedMessage) -> None:
        with lock:
            seen[message.payload["i"]] += 1

    with Worker(dsn, namespace, ["work"], handler, concurrency=8):
        wait_for(lambda: client.stats().completed == len(ids), what="300 completed")
    assert sorted(seen) == list(range(300)) and set(seen.values()) == {1}
    assert client.stats().running == 0


def test_a_raising_handler_nacks_with_the_exception_text(dsn: str, client: QueueClient, namespace: str) -> None:
    message_id = client.push("flaky", {}, max_attempts=2)

    def handler(message: ClaimedMessage) -> None:
        raise RuntimeError(f"SMTP timeout on attempt {message.attempts}")

    with Worker(dsn, namespace, ["flaky"], handler, concurrency=1) as worker:
        wait_for(lambda: client.stats().dead == 1, what="a dead letter")
    [dead] = client.dead_letters()
    assert dead.id == message_id and dead.last_error == "RuntimeError: SMTP timeout on attempt 2"
    assert worker.failed == 2


def test_a_wake_up_starts_the_handler_before_the_sweep(dsn: str, client: QueueClient, namespace: str) -> None:
    started = threading.Event()
    with Worker(dsn, namespace, ["ping"], lambda m: started.set(),
                sweep_interval=timedelta(seconds=30)) as worker:
        wait_for(lambda: worker.listening, what="LISTEN")
        time.sleep(0.2)  # the claimer is now waiting out its first empty claim
        client.push("ping", {})
        assert started.wait(5), "not woken by the notification"


def test_the_lease_is_extended_while_the_handler_runs(dsn: str, client: QueueClient, namespace: str) -> None:
    client.push("slow", {})
    runs: list[int] = []

    def handler(message: ClaimedMessage) -> None:
        runs.append(message.attempts)
        time.sleep(4.5)  # more than two leases: a busy machine may delay the keeper, so not the shortest lease

    with Worker(dsn, namespace, ["slow"], handler, lease=timedelta(seconds=2)) as worker:
        wait_for(lambda: client.stats().completed == 1, what="completion")
    assert runs == [1] and worker.lost_leases == 0


def test_settles_are_retried_after_the_connection_breaks(dsn: str, client: QueueClient, namespace: str,
                                                         connection: psycopg.Connection) -> None:
    release = threading.Event()

    def handler(message: ClaimedMessage) -> None:
        if message.payload["i"] > 0:
            release.wait(10)

    with Worker(dsn, namespace, ["t"], handler, concurrency=4) as worker:
        client.push("t", {"i": 0})
        wait_for(lambda: client.stats().completed == 1, what="the first completion")  # the settler is connected
        client.push_many("t", [{"i": i} for i in range(1, 4)])
        wait_for(lambda: client.stats().running == 3, what="three running")
        killed = connection.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                    "WHERE application_name = %s", (worker.worker_id,)).fetchone()[0]
        assert killed >= 3
        release.set()
        wait_for(lambda: client.stats().completed == 4, what="all four completed")
    assert worker.handled == 4 and worker.lost_leases == 0


def test_stop_waits_for_running_handlers(dsn: str, client: QueueClient, namespace: str) -> None:
    release = threading.Event()
    started = threading.Event()

    def handler(message: ClaimedMessage) -> None:
        started.set()
        release.wait(10)

    client.push_many("t", [{}, {}, {}])
    worker = Worker(dsn, namespace, ["t"], handler, concurrency=1).start()
    assert started.wait(10)
    threading.Timer(0.5, release.set).start()
    assert worker.stop() is True
    stats = client.stats()
    assert (stats.completed, stats.pending, stats.running) == (1, 2, 0)


def test_heartbeat_lists_the_worker_until_it_stops(dsn: str, client: QueueClient, namespace: str,
                                                   connection: psycopg.Connection) -> None:
    def listed(worker_id: str) -> list:
        return connection.execute("SELECT status, topics FROM queue.workers(%s) WHERE id = %s",
                                  (namespace, worker_id)).fetchall()

    worker = Worker(dsn, namespace, ["a", "b"], lambda m: None).start()
    wait_for(lambda: bool(listed(worker.worker_id)), what="a heartbeat row")
    assert listed(worker.worker_id) == [("alive", [f"{namespace}/a", f"{namespace}/b"])]
    worker.stop()
    assert listed(worker.worker_id) == []


@pytest.mark.parametrize("argument, value", [("concurrency", 0), ("lease", timedelta(milliseconds=5)),
                                             ("topics", []), ("handler", "not callable")])
def test_worker_options_are_checked(dsn: str, argument: str, value: object) -> None:
    options = {"topics": ["t"], "handler": lambda m: None}
    options[argument] = value
    topics, handler = options.pop("topics"), options.pop("handler")
    with pytest.raises(InvalidArgument) as refused:
        Worker(dsn, "acme", topics, handler, **options)  # type: ignore[arg-type]
    assert refused.value.parameter == argument and refused.value.value == value


def test_worker_refuses_a_bad_name_before_it_starts(dsn: str) -> None:
    with pytest.raises(InvalidArgument) as topic:
        Worker(dsn, "acme", ["ok", "not ok"], lambda m: None)
    assert (topic.value.parameter, topic.value.value) == ("topics[1]", "not ok")
    with pytest.raises(InvalidArgument) as namespace:
        Worker(dsn, "-acme", ["ok"], lambda m: None)
    assert (namespace.value.parameter, namespace.value.value) == ("namespace", "-acme")


def test_stop_gives_up_on_a_handler_stuck_past_the_timeout(dsn: str, client: QueueClient, namespace: str) -> None:
    release = threading.Event()
    started = threading.Event()

    def handler(message: ClaimedMessage) -> None:
        started.set()
        release.wait(30)

    client.push("t", {})
    worker = Worker(dsn, namespace, ["t"], handler, concurrency=1).start()
    try:
        assert started.wait(10)
        began = time.monotonic()
        assert worker.stop(timedelta(milliseconds=300)) is False
        assert time.monotonic() - began < 5
        assert client.stats().running == 1  # its lease ends on its own and the message runs again elsewhere
    finally:
        release.set()
