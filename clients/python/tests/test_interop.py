"""Java and Python on one queue: the Java API publishes and the Python worker handles, and the reverse.

The Java side is queue-cli's test class InteropPeer, started as a process with the class path the Maven launcher
passes in QUEUE_JAVA_CLASSPATH.
"""
from __future__ import annotations

import os
import re
import subprocess
import threading
from collections import Counter

import pytest

from queue_client import ClaimedMessage, QueueClient, Worker
from test_worker import wait_for

COUNT = 500


@pytest.fixture
def java_peer() -> list[str]:
    classpath = os.environ.get("QUEUE_JAVA_CLASSPATH")
    jdbc_url = os.environ.get("QUEUE_TEST_JDBC_URL")
    if not classpath or not jdbc_url:
        reason = ("QUEUE_JAVA_CLASSPATH and QUEUE_TEST_JDBC_URL are not set: the interoperability tests run from "
                  "`mvn -pl queue-cli verify`")
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return [os.environ.get("QUEUE_JAVA", "java"), "-cp", classpath, "dev.queue.cli.python.InteropPeer"]


def run_peer(command: list[str], *args: str) -> str:
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_java_publishes_and_python_handles(java_peer: list[str], dsn: str, client: QueueClient,
                                           namespace: str, capsys: pytest.CaptureFixture[str]) -> None:
    output = run_peer(java_peer, "publish", os.environ["QUEUE_TEST_JDBC_URL"], namespace, "orders", str(COUNT))
    assert f"published={COUNT}" in output
    seen: Counter[int] = Counter()
    lock = threading.Lock()

    def handler(message: ClaimedMessage) -> None:
        assert message.payload["from"] == "java"
        with lock:
            seen[message.payload["seq"]] += 1

    with Worker(dsn, namespace, ["orders"], handler, concurrency=8):
        wait_for(lambda: client.stats().completed == COUNT, seconds=60, what="all Java messages completed")
    duplicates = sum(seen.values()) - len(seen)
    with capsys.disabled():
        print(f"\ninterop Java -> Python: sent {COUNT}, handled {len(seen)}, lost {COUNT - len(seen)}, "
              f"duplicates {duplicates}")
    assert sorted(seen) == list(range(COUNT)) and duplicates == 0


def test_python_publishes_and_java_handles(java_peer: list[str], client: QueueClient, namespace: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    client.push_many("orders", [{"seq": seq, "from": "python"} for seq in range(COUNT)])
    output = run_peer(java_peer, "handle", os.environ["QUEUE_TEST_JDBC_URL"], namespace, "orders", str(COUNT), "60")
    counts = dict(re.findall(r"(\w+)=(\d+)", output))
    with capsys.disabled():
        print(f"\ninterop Python -> Java: sent {COUNT}, handled {counts.get('distinct')}, "
              f"duplicates {counts.get('duplicates')}")
    assert counts == {"handled": str(COUNT), "distinct": str(COUNT), "duplicates": "0"}
    stats = client.stats()
    assert (stats.completed, stats.pending, stats.running, stats.dead) == (COUNT, 0, 0, 0)
