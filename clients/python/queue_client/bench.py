"""A small benchmark of the Python worker: ``python3 -m queue_client.bench --dsn "host=... dbname=..."``.

Two measurements, each in a namespace of its own that is removed afterwards:

- throughput: a backlog of ``--messages`` published in batches, then handled by a worker with no-op handlers at
  ``--concurrency``; messages handled per second from the worker's start to the last completion;
- latency: one message per transaction at ``--rate`` a second for ``--seconds``, each carrying its send time; the
  time from the publish call to the handler's start, p50, p99 and max.

The figures are reported, not asserted: they depend on the machine and on what else runs on it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid
from datetime import timedelta

import psycopg
from psycopg import sql

from .client import ClaimedMessage, QueueClient
from .worker import Worker


def throughput(dsn: str, messages: int, concurrency: int) -> float:
    namespace = f"bench-{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(dsn, autocommit=True) as connection:
            client = QueueClient(connection, namespace)
            for start in range(0, messages, 1000):
                client.push_many("noop", [{"i": i} for i in range(start, min(start + 1000, messages))],
                                 notify=False)
        done = threading.Event()
        lock = threading.Lock()
        handled = 0

        def handler(message: ClaimedMessage) -> None:
            nonlocal handled
            with lock:
                handled += 1
                if handled == messages:
                    done.set()

        worker = Worker(dsn, namespace, ["noop"], handler, concurrency=concurrency)
        began = time.perf_counter()
        worker.start()
        done.wait(600)
        with psycopg.connect(dsn, autocommit=True) as connection:
            client = QueueClient(connection, namespace)
            while client.stats().completed < messages and time.perf_counter() - began < 600:
                time.sleep(0.005)
        elapsed = time.perf_counter() - began
        worker.stop()
        return messages / elapsed
    finally:
        remove_namespace(dsn, namespace)


def latency(dsn: str, rate: float, seconds: float, concurrency: int) -> list[float]:
    namespace = f"bench-{uuid.uuid4().hex[:10]}"
    delays: list[float] = []
    lock = threading.Lock()

    def handler(message: ClaimedMessage) -> None:
        started = time.time()
        with lock:
            delays.append(started - message.payload["sent"])

    try:
        with Worker(dsn, namespace, ["latency"], handler, concurrency=concurrency,
                    sweep_interval=timedelta(seconds=1)) as worker:
            deadline = time.monotonic() + 5
            while not worker.listening and time.monotonic() < deadline:
                time.sleep(0.01)
            with psycopg.connect(dsn, autocommit=True) as connection:
                client = QueueClient(connection, namespace)
                total = int(rate * seconds)
                began = time.perf_counter()
                for index in range(total):
                    # paced against the start, so a slow publish does not lower the offered rate
                    pause = began + index / rate - time.perf_counter()
                    if pause > 0:
                        time.sleep(pause)
                    client.push("latency", {"sent": time.time()})
                deadline = time.monotonic() + 30
                while len(delays) < total and time.monotonic() < deadline:
                    time.sleep(0.01)
        return delays
    finally:
        remove_namespace(dsn, namespace)


def remove_namespace(dsn: str, namespace: str, schema: str = "queue") -> None:
    """Deletes a namespace's rows from every table of the schema that has a namespace column (a benchmark's or a
    test's own namespace; there is no SQL function for it)."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        tables = connection.execute(
            "SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t "
            "ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
            "WHERE c.table_schema = %s AND c.column_name = 'namespace' AND t.table_type = 'BASE TABLE'",
            (schema,)).fetchall()
        for (table,) in tables:
            connection.execute(sql.SQL("DELETE FROM {}.{} WHERE namespace = %s")
                               .format(sql.Identifier(schema), sql.Identifier(table)), (namespace,))


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python3 -m queue_client.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=os.environ.get("QUEUE_DSN") or os.environ.get("QUEUE_TEST_DSN"),
                        help="libpq connection string of a database with the queue schema "
                             "(default: $QUEUE_DSN, then $QUEUE_TEST_DSN)")
    parser.add_argument("--messages", type=int, default=5000, help="backlog for the throughput run (5000)")
    parser.add_argument("--concurrency", type=int, default=8, help="handler threads (8)")
    parser.add_argument("--rate", type=float, default=100.0, help="publishes a second for the latency run (100)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the latency run (10)")
    arguments = parser.parse_args()
    if not arguments.dsn:
        parser.error("--dsn is required (or set QUEUE_DSN)")
    per_second = throughput(arguments.dsn, arguments.messages, arguments.concurrency)
    print(f"throughput: {arguments.messages} messages, no-op handlers, concurrency {arguments.concurrency}: "
          f"{per_second:,.0f} messages/s")
    delays = latency(arguments.dsn, arguments.rate, arguments.seconds, arguments.concurrency)
    if not delays:
        print("latency: no message handled")
        return
    ms = [d * 1000 for d in delays]
    print(f"latency: {len(ms)} messages at {arguments.rate:g}/s, publish to handler start: "
          f"p50 {statistics.median(ms):.1f} ms, p99 {_percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms")


if __name__ == "__main__":
    main()
