"""A worker process killed with SIGKILL mid-handler, and one stopped with SIGTERM."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from queue_client import ClaimedMessage, QueueClient, Worker
from test_worker import wait_for

HELPER = Path(__file__).resolve().parent / "worker_process.py"


def start_process(dsn: str, namespace: str, topic: str, concurrency: int, lease: float,
                  handler_seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(HELPER), dsn, namespace, topic, str(concurrency), str(lease),
                             str(handler_seconds)], stdout=subprocess.PIPE, text=True)


def read_started(process: subprocess.Popen, count: int) -> set[int]:
    started: set[int] = set()
    while len(started) < count:
        line = process.stdout.readline()
        assert line, "the worker process ended early"
        if line.startswith("started "):
            started.add(int(line.split()[1]))
    return started


def test_messages_of_a_killed_worker_are_handled_after_its_lease(dsn: str, client: QueueClient,
                                                                 namespace: str) -> None:
    ids = set(client.push_many("crash", [{"i": i} for i in range(20)]))
    process = start_process(dsn, namespace, "crash", concurrency=8, lease=2, handler_seconds=-1)
    try:
        held = read_started(process, 8)
        wait_for(lambda: client.stats().running == 8, what="eight running")
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        process.kill()
        process.stdout.close()
    seen: Counter[int] = Counter()
    lock = threading.Lock()

    def handler(message: ClaimedMessage) -> None:
        with lock:
            seen[message.id] += 1

    with Worker(dsn, namespace, ["crash"], handler, concurrency=4):
        wait_for(lambda: client.stats().completed == len(ids), seconds=20, what="all completed")
    assert set(seen) == ids and set(seen.values()) == {1}
    stats = client.stats()
    assert (stats.pending, stats.running, stats.dead) == (0, 0, 0)
    assert held <= ids


def test_sigterm_drains_the_running_handlers(dsn: str, client: QueueClient, namespace: str) -> None:
    client.push_many("drain", [{"i": i} for i in range(3)])
    process = start_process(dsn, namespace, "drain", concurrency=3, lease=5, handler_seconds=1)
    try:
        read_started(process, 3)
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=15)
    finally:
        process.kill()
    assert process.returncode == 0
    assert output.count("handled ") == 3 and output.rstrip().endswith("stopped")
    stats = client.stats()
    assert (stats.completed, stats.running, stats.pending) == (3, 0, 0)
