"""A worker in a process of its own, for the tests that kill or signal it.

usage: worker_process.py <dsn> <namespace> <topic> <concurrency> <lease-seconds> <handler-seconds>

Prints "started <id>" when a handler starts and "handled <id>" when it returns; a negative handler time blocks for
ever. Runs until SIGTERM or SIGINT, then drains.
"""
from __future__ import annotations

import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from queue_client import ClaimedMessage, Worker  # noqa: E402


OUTPUT = threading.Lock()


def say(line: str) -> None:
    # one write per line under a lock: print() from several handler threads interleaves its pieces
    with OUTPUT:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main() -> None:
    dsn, namespace, topic, concurrency, lease, handler_seconds = sys.argv[1:7]
    pause = float(handler_seconds)

    def handler(message: ClaimedMessage) -> None:
        say(f"started {message.id}")
        if pause < 0:
            threading.Event().wait()
        time.sleep(pause)
        say(f"handled {message.id}")

    Worker(dsn, namespace, [topic], handler, concurrency=int(concurrency),
           lease=timedelta(seconds=float(lease)), sweep_interval=timedelta(milliseconds=200)).run()
    say("stopped")


if __name__ == "__main__":
    main()
