"""Worker: claims messages of some queues of one namespace and runs a handler for each, as the Java runtime does.

Threads, each with its own connection where it talks to the database:

- the listener LISTENs on the schema's wake-up channel; a notification only shortens the wait, because the
  claimer also sweeps every ``sweep_interval`` and after the listener reconnects (notifications sent while it was
  away are gone);
- the claimer pulls as many messages as there are free handler slots, with a lease, and claims again at once
  after a non-empty claim;
- ``concurrency`` handler threads run the handler: a return acknowledges, an exception nacks with its text;
- the settler sends those outcomes, acknowledgements batched into one statement, and retries a batch that failed on
  a broken connection until the leases end (every settle carries its lease token, so a repeat is harmless);
- the keeper extends the leases of messages whose handler still runs, and records the worker's heartbeat.
"""
from __future__ import annotations

import logging
import os
import queue as queues
import re
import select
import signal
import socket
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Sequence

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from .client import ClaimedMessage, QueueClient
from .errors import InvalidArgument

__all__ = ["Worker", "Handler"]

Handler = Callable[[ClaimedMessage], Any]

log = logging.getLogger("queue_client.worker")

VERSION = "queue_client-0.1.0"

# The engine's name rule (_is_name). Checked here too because the worker claims on its own threads, where the
# engine's refusal of a bad name would reach a log, not the caller.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass
class _Held:
    """A claimed message until it is settled: its handler may be done, its outcome not yet sent."""

    message: ClaimedMessage
    lease_until: float  # time.monotonic() by which the lease ends, as far as this process knows


@dataclass
class _Outcome:
    kind: str  # "ack", "nack", "give_back", or "flush": stop() asks the settler to finish what is queued
    message: ClaimedMessage
    error: str | None = None


class Worker:
    """Runs ``handler`` for the messages of ``topics`` in ``namespace``.

    ``start()`` returns at once; ``stop()`` drains: it stops claiming, gives back claimed messages whose handler has
    not started (without counting an attempt), waits up to ``shutdown_timeout`` for running handlers and sends their
    outcomes. ``run()`` starts, blocks until SIGTERM or SIGINT (or ``stop()`` from another thread), then drains.
    """

    def __init__(self, dsn: str, namespace: str, topics: Sequence[str], handler: Handler, *,
                 concurrency: int = 8, lease: timedelta = timedelta(seconds=30),
                 sweep_interval: timedelta = timedelta(seconds=1),
                 heartbeat_interval: timedelta = timedelta(seconds=5),
                 shutdown_timeout: timedelta = timedelta(seconds=30),
                 worker_id: str | None = None, schema: str = "queue", actor: str | None = None) -> None:
        if not isinstance(dsn, str):
            raise InvalidArgument(f"invalid dsn: expected a libpq connection string, got: {dsn!r}", "dsn", dsn)
        _check_name("namespace", namespace)
        if isinstance(topics, str) or not isinstance(topics, Sequence) or not 1 <= len(topics) <= 64 \
                or len(set(topics)) != len(topics):
            raise InvalidArgument(f"invalid topics: expected a list of 1 to 64 distinct topic names, got: {topics!r}",
                                  "topics", topics)
        for index, topic in enumerate(topics):
            _check_name(f"topics[{index}]", topic)
        if not callable(handler):
            raise InvalidArgument(f"invalid handler: expected a callable taking a ClaimedMessage, got: {handler!r}",
                                  "handler", handler)
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= 1000:
            raise InvalidArgument(f"invalid concurrency: expected an int from 1 to 1000, got: {concurrency!r}",
                                  "concurrency", concurrency)
        _check_duration("lease", lease, timedelta(seconds=1), timedelta(hours=24))
        _check_duration("sweep_interval", sweep_interval, timedelta(milliseconds=10), timedelta(hours=1))
        _check_duration("heartbeat_interval", heartbeat_interval, timedelta(milliseconds=100), timedelta(hours=1))
        _check_duration("shutdown_timeout", shutdown_timeout, timedelta(0), timedelta(hours=24))
        if worker_id is not None and (not isinstance(worker_id, str) or not 1 <= len(worker_id) <= 128):
            raise InvalidArgument(f"invalid worker_id: expected 1 to 128 characters, got: {worker_id!r}",
                                  "worker_id", worker_id)
        self.dsn = dsn
        self.namespace = namespace
        self.topics = list(topics)
        self.handler = handler
        self.concurrency = concurrency
        self.lease = lease
        self.sweep_interval = sweep_interval
        self.heartbeat_interval = heartbeat_interval
        self.shutdown_timeout = shutdown_timeout
        self.worker_id = worker_id or f"py-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.schema = schema
        self.actor = actor

        self.handled = 0  # handlers that returned
        self.failed = 0  # handlers that raised
        self.lost_leases = 0  # settles and extensions refused because the lease had passed to another holder

        self._lock = threading.Lock()
        self._held: dict[int, _Held] = {}
        self._running = 0  # handler slots in use
        self._slot_freed = threading.Event()
        self._wake = threading.Event()
        self._stopping = threading.Event()  # no more claims
        self._draining = threading.Event()  # claimed messages not yet started are given back
        self._settler_done = threading.Event()
        self._stop_requested = threading.Event()
        self._work: queues.Queue[ClaimedMessage | None] = queues.Queue()
        self._outcomes: queues.Queue[_Outcome] = queues.Queue()
        self._threads: list[threading.Thread] = []
        self._listening = False
        self._started_at: datetime | None = None
        self._stopped = False

    # ------------------------------------------------------------------------------------------------ lifecycle

    def start(self) -> "Worker":
        if self._started_at is not None:
            return self
        self._started_at = datetime.now(timezone.utc)
        threads = [("listener", self._listen), ("claimer", self._claim_loop), ("settler", self._settle_loop),
                   ("keeper", self._keep_loop)]
        threads += [(f"handler-{i}", self._handler_loop) for i in range(self.concurrency)]
        for name, target in threads:
            # daemon: a handler stuck past shutdown_timeout must not keep the interpreter from exiting
            thread = threading.Thread(target=target, name=f"queue-worker-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        log.info("worker %s started on %s/%s, concurrency %d", self.worker_id, self.namespace,
                 ",".join(self.topics), self.concurrency)
        return self

    def run(self) -> None:
        """Starts, and blocks until SIGTERM or SIGINT, or ``stop()``; then drains and returns."""
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, lambda *_: self._stop_requested.set())
        self.start()
        while not self._stop_requested.wait(0.2):
            pass
        self.stop()

    def stop(self, timeout: timedelta | None = None) -> bool:
        """Drains as the class describes; True when every handler finished and every outcome was sent in time.
        Safe to call twice."""
        self._stop_requested.set()
        if self._stopped or self._started_at is None:
            return True
        self._stopped = True
        deadline = time.monotonic() + (self.shutdown_timeout if timeout is None else timeout).total_seconds()
        self._stopping.set()
        self._draining.set()
        self._wake.set()
        self._slot_freed.set()
        # the claimer first: a claim under way when stop() began hands its messages over before the handlers' end
        # markers, so they are given back rather than left to their leases
        for thread in self._threads:
            if thread.name.endswith("claimer"):
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        for _ in range(self.concurrency):
            self._work.put(None)
        # handlers finish (the keeper extends their leases meanwhile); messages queued behind them are given back
        clean = True
        while True:
            with self._lock:
                idle = self._running == 0
            if idle:
                break
            if time.monotonic() >= deadline:
                clean = False
                log.warning("worker %s: handlers still running after the shutdown timeout; their leases will "
                            "expire", self.worker_id)
                break
            time.sleep(0.01)
        self._outcomes.put(_Outcome("flush", None))  # type: ignore[arg-type]
        if not self._settler_done.wait(max(0.0, deadline - time.monotonic()) + 1.0):
            clean = False
        for thread in self._threads:
            if thread.name.endswith(("listener", "keeper")):
                thread.join(timeout=2.0)
        log.info("worker %s stopped: %d handled, %d failed", self.worker_id, self.handled, self.failed)
        return clean

    def __enter__(self) -> "Worker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def in_flight(self) -> int:
        """Messages claimed and not yet settled."""
        with self._lock:
            return len(self._held)

    @property
    def listening(self) -> bool:
        """Whether wake-ups arrive by LISTEN now; otherwise only the sweep finds new messages."""
        return self._listening

    # ---------------------------------------------------------------------------------------------- connections

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.dsn, autocommit=True, application_name=self.worker_id[:63])

    def _reconnect(self, what: str, attempt: int) -> None:
        pause = min(5.0, 0.05 * (2 ** min(attempt, 7)))
        log.warning("worker %s: %s lost its connection; retrying in %.2f s", self.worker_id, what, pause)
        if what == "settler":
            time.sleep(pause)  # outcomes are still owed after a stop
        else:
            self._stopping.wait(pause)

    def _client(self, connection: psycopg.Connection[Any]) -> QueueClient:
        return QueueClient(connection, self.namespace, schema=self.schema, actor=self.actor)

    # ------------------------------------------------------------------------------------------------- listener

    def _listen(self) -> None:
        channel = sql.Identifier(f"{self.schema}_wakeup")
        wanted = {f"{self.namespace}/{topic}" for topic in self.topics}
        prefix = f"promoted:{self.namespace}/"

        def on_notify(notify: psycopg.Notify) -> None:
            payload = notify.payload
            if payload.startswith(prefix):
                # "promoted:<namespace>/<queue>/<priority>/<due>/<id>": an ordering key's next message is due
                payload = "/".join(payload[len("promoted:"):].split("/")[:2])
            if payload in wanted:
                self._wake.set()

        attempt = 0
        while not self._stopping.is_set():
            try:
                with self._connect() as connection:
                    connection.add_notify_handler(on_notify)
                    connection.execute(sql.SQL("LISTEN {}").format(channel))
                    self._listening = True
                    attempt = 0
                    self._wake.set()  # what was published while nobody listened is found by a sweep
                    while not self._stopping.is_set():
                        readable, _, _ = select.select([connection.fileno()], [], [], 0.5)
                        if readable:
                            connection.execute("SELECT 1")  # consumes the input, calling on_notify per notification
            except psycopg.Error:
                self._listening = False
                if self._stopping.is_set():
                    return
                attempt += 1
                self._reconnect("listener", attempt)
        self._listening = False

    # -------------------------------------------------------------------------------------------------- claimer

    def _claim_loop(self) -> None:
        attempt = 0
        sweep = self.sweep_interval.total_seconds()
        while not self._stopping.is_set():
            try:
                with self._connect() as connection:
                    client = self._client(connection)
                    attempt = 0
                    backlog = False
                    while not self._stopping.is_set():
                        with self._lock:
                            free = self.concurrency - self._running
                        # While claims come back full, more is waiting: claim when half the handlers are free
                        # rather than one at a time, since every claim costs a statement whatever its size.
                        if free < (max(1, self.concurrency // 2) if backlog else 1):
                            self._slot_freed.wait(sweep)
                            self._slot_freed.clear()
                            continue
                        self._wake.clear()
                        claimed = client.pull_any(self.topics, limit=min(free, 1000), worker_id=self.worker_id,
                                                  visibility_timeout=self.lease)
                        now = time.monotonic()
                        with self._lock:
                            for message in claimed:
                                self._held[message.id] = _Held(message, now + self.lease.total_seconds())
                                self._running += 1
                        for message in claimed:
                            self._work.put(message)
                        backlog = len(claimed) == min(free, 1000)
                        if not claimed:
                            self._wake.wait(sweep)
            except psycopg.OperationalError:
                if self._stopping.is_set():
                    return
                attempt += 1
                self._reconnect("claimer", attempt)
            except Exception:  # noqa: BLE001 - a claim that fails for another reason is retried after a pause
                log.exception("worker %s: claim failed", self.worker_id)
                self._stopping.wait(sweep)

    # ------------------------------------------------------------------------------------------------- handlers

    def _handler_loop(self) -> None:
        while True:
            message = self._work.get()
            if message is None:
                # stop() sent one None per handler thread; messages still queued are given back
                self._give_back_queued()
                return
            if self._draining.is_set():
                self._release_slot()
                self._outcomes.put(_Outcome("give_back", message))
                continue
            try:
                self.handler(message)
            except BaseException as error:  # noqa: BLE001 - whatever the handler raises fails the attempt
                with self._lock:
                    self.failed += 1
                text = "".join(traceback.format_exception_only(type(error), error)).strip()
                log.warning("worker %s: message %d of %s/%s failed: %s", self.worker_id, message.id,
                            self.namespace, message.queue, text)
                outcome = _Outcome("nack", message, text)
            else:
                with self._lock:
                    self.handled += 1
                outcome = _Outcome("ack", message)
            self._release_slot()
            self._outcomes.put(outcome)

    def _give_back_queued(self) -> None:
        while True:
            try:
                message = self._work.get_nowait()
            except queues.Empty:
                return
            if message is None:
                continue
            self._release_slot()
            self._outcomes.put(_Outcome("give_back", message))

    def _release_slot(self) -> None:
        with self._lock:
            self._running -= 1
        self._slot_freed.set()

    # -------------------------------------------------------------------------------------------------- settler

    def _settle_loop(self) -> None:
        connection: psycopg.Connection[Any] | None = None
        flushing = False
        try:
            while True:
                try:
                    first = self._outcomes.get(timeout=0.1)
                except queues.Empty:
                    if flushing:
                        return
                    continue
                batch = [first]
                while len(batch) < 1000:
                    try:
                        batch.append(self._outcomes.get_nowait())
                    except queues.Empty:
                        break
                if any(o.kind == "flush" for o in batch):
                    flushing = True
                    batch = [o for o in batch if o.kind != "flush"]
                connection = self._settle(batch, connection)
        finally:
            if connection is not None:
                connection.close()
            self._settler_done.set()

    def _settle(self, batch: list[_Outcome],
                connection: psycopg.Connection[Any] | None) -> psycopg.Connection[Any] | None:
        """Sends the outcomes; on a broken connection reconnects and sends them again until their leases end."""
        attempt = 0
        while batch:
            try:
                if connection is None or connection.closed:
                    connection = self._connect()
                client = self._client(connection)
                acks = [o.message for o in batch if o.kind == "ack"]
                if acks:
                    for message_id, acked in client.ack_many(acks).items():
                        self._settled(message_id, acked, "ack")
                    batch = [o for o in batch if o.kind != "ack"]
                while batch:
                    outcome = batch[0]
                    if outcome.kind == "nack":
                        done = client.nack(outcome.message, outcome.error)
                    else:
                        done = client.snooze(outcome.message, delay=timedelta(0))
                    self._settled(outcome.message.id, done, outcome.kind)
                    batch.pop(0)
                return connection
            except psycopg.OperationalError:
                if connection is not None:
                    connection.close()
                connection = None
                attempt += 1
                now = time.monotonic()
                with self._lock:
                    alive = [o for o in batch if o.message.id in self._held
                             and self._held[o.message.id].lease_until > now]
                for outcome in batch:
                    if outcome not in alive:
                        log.warning("worker %s: gave up settling message %d of %s/%s (%s): its lease ended; it "
                                    "will be delivered again", self.worker_id, outcome.message.id, self.namespace,
                                    outcome.message.queue, outcome.kind)
                        self._forget(outcome.message.id)
                batch = alive
                if batch:
                    self._reconnect("settler", attempt)
            except Exception:  # noqa: BLE001 - an outcome the engine refuses must not stop the settler
                log.exception("worker %s: settling %d outcomes failed; their messages will be delivered again",
                              self.worker_id, len(batch))
                for outcome in batch:
                    self._forget(outcome.message.id)
                return connection
        return connection

    def _settled(self, message_id: int, done: bool, kind: str) -> None:
        held = self._forget(message_id)
        if not done:
            with self._lock:
                self.lost_leases += 1
            log.warning("worker %s: %s of message %d in %s refused: the lease was no longer this worker's",
                        self.worker_id, kind, message_id, self.namespace)
        elif kind == "give_back" and held is not None:
            log.info("worker %s: gave back message %d of %s/%s unstarted", self.worker_id, message_id,
                     self.namespace, held.message.queue)

    def _forget(self, message_id: int) -> _Held | None:
        with self._lock:
            return self._held.pop(message_id, None)

    # --------------------------------------------------------------------------------------------------- keeper

    def _keep_loop(self) -> None:
        """Extends leases a third of the way through, and heartbeats, until the settler is done."""
        lease = self.lease.total_seconds()
        tick = min(lease / 3, self.heartbeat_interval.total_seconds(), 1.0)
        next_beat = 0.0
        connection: psycopg.Connection[Any] | None = None
        attempt = 0
        while not self._settler_done.is_set():
            try:
                if connection is None or connection.closed:
                    connection = self._connect()
                now = time.monotonic()
                with self._lock:
                    due = [h for h in self._held.values() if h.lease_until - now < lease * 2 / 3]
                if due:
                    client = self._client(connection)
                    for held in due:
                        if client.extend(held.message, self.lease):
                            held.lease_until = time.monotonic() + lease
                        elif self._forget(held.message.id) is not None:
                            with self._lock:
                                self.lost_leases += 1
                            log.warning("worker %s: lease of message %d in %s/%s lost while its handler ran",
                                        self.worker_id, held.message.id, self.namespace, held.message.queue)
                if now >= next_beat and not self._stopping.is_set():
                    self._heartbeat(connection)
                    next_beat = now + self.heartbeat_interval.total_seconds()
                attempt = 0
            except psycopg.OperationalError:
                if connection is not None:
                    connection.close()
                connection = None
                attempt += 1
                self._reconnect("keeper", attempt)
                continue
            except Exception:  # noqa: BLE001 - a heartbeat refused (a role without access) must not stop extension
                log.exception("worker %s: lease extension or heartbeat failed", self.worker_id)
            self._settler_done.wait(tick)
        if connection is not None:
            try:
                connection.execute(sql.SQL("SELECT {}.worker_stop(%s)").format(sql.Identifier(self.schema)),
                                   (self.worker_id,))
            except psycopg.Error:
                log.info("worker %s: could not remove its heartbeat row; it ages out", self.worker_id)
            connection.close()

    def _heartbeat(self, connection: psycopg.Connection[Any]) -> None:
        subscriptions = [{"namespace": self.namespace, "topics": self.topics, "worker": self.worker_id,
                          "concurrency": self.concurrency, "in_flight": min(self.in_flight, 1000)}]
        connection.execute(
            sql.SQL("SELECT {}.worker_heartbeat(p_id := %s, p_host := %s, p_pid := %s, p_started_at := %s, "
                    "p_version := %s, p_listener := %s, p_subscriptions := %s::jsonb, p_interval := %s)")
            .format(sql.Identifier(self.schema)),
            (self.worker_id, socket.gethostname()[:255], os.getpid(), self._started_at, VERSION,
             "listen" if self._listening else "poll", Jsonb(subscriptions),
             self.heartbeat_interval))


def _check_name(parameter: str, value: Any) -> None:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise InvalidArgument(f"invalid {parameter}: expected 1 to 64 characters: letters, digits, '.', '_' or '-', "
                              f"starting with a letter or digit, got: {value!r}", parameter, value)


def _check_duration(parameter: str, value: Any, low: timedelta, high: timedelta) -> None:
    if not isinstance(value, timedelta) or not low <= value <= high:
        raise InvalidArgument(f"invalid {parameter}: expected a timedelta from {low} to {high}, got: {value!r}",
                              parameter, value)
