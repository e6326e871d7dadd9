"""Fixtures: the server from QUEUE_TEST_DSN, and a namespace of each test's own, removed afterwards."""
from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Iterator

import psycopg
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from queue_client import QueueClient  # noqa: E402
from queue_client.bench import remove_namespace  # noqa: E402


@pytest.fixture(scope="session")
def dsn() -> str:
    value = os.environ.get("QUEUE_TEST_DSN")
    if not value:
        reason = ("QUEUE_TEST_DSN is not set: run `mvn -pl queue-cli verify`, which starts an embedded PostgreSQL, "
                  "or point it at a server with the schema queue installed")
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return value


@pytest.fixture
def namespace(dsn: str) -> Iterator[str]:
    name = f"py-{uuid.uuid4().hex[:12]}"
    yield name
    remove_namespace(dsn, name)
    with psycopg.connect(dsn, autocommit=True) as connection:
        # heartbeat rows are keyed by worker, not namespace
        connection.execute("DELETE FROM queue.workers w WHERE w.subscriptions::text LIKE %s", (f'%"{name}"%',))


@pytest.fixture
def connection(dsn: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(dsn, autocommit=True) as connection:
        yield connection


@pytest.fixture
def client(connection: psycopg.Connection, namespace: str) -> QueueClient:
    return QueueClient(connection, namespace)
