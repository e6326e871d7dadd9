"""QueueClient: the queue's SQL interface as typed Python calls on a psycopg 3 connection or cursor."""
from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, Sequence, TypeVar

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from .errors import InvalidArgument, InvalidPayload, translate

__all__ = [
    "QueueClient",
    "ClaimedMessage",
    "DeadLetter",
    "MessageInfo",
    "NamespaceStats",
    "QueueStats",
    "RedriveResult",
    "ScheduleInfo",
    "FiredSchedule",
    "PausedQueue",
]

T = TypeVar("T")


@dataclass(frozen=True)
class ClaimedMessage:
    """A message claimed by ``pull``: settle it with its ``id`` and ``lease_token`` before ``lease_until``."""

    id: int
    queue: str
    payload: Any
    headers: dict[str, str]
    priority: int
    attempts: int
    max_attempts: int
    lease_token: int
    lease_until: datetime
    published_at: datetime
    run_at: datetime
    worker_id: str
    unique_key: str | None
    published_by: str | None
    ordering_key: str | None

    @property
    def is_last_attempt(self) -> bool:
        """Whether a failure now makes a dead letter rather than a retry."""
        return self.attempts >= self.max_attempts


@dataclass(frozen=True)
class DeadLetter:
    id: int
    queue: str
    payload: Any
    headers: dict[str, str]
    priority: int
    attempts: int
    max_attempts: int
    unique_key: str | None
    last_error: str | None
    published_at: datetime
    failed_at: datetime
    published_by: str | None
    failed_by: str | None


@dataclass(frozen=True)
class MessageInfo:
    """What ``inspect`` shows of a pending, waiting, running or dead message."""

    id: int
    queue: str
    state: str
    payload: Any
    headers: dict[str, str]
    priority: int
    attempts: int
    max_attempts: int
    unique_key: str | None
    published_at: datetime
    run_at: datetime | None
    lease_until: datetime | None
    worker_id: str | None
    last_error: str | None
    failed_at: datetime | None
    published_by: str | None
    failed_by: str | None
    attempt_history: Any
    attempts_not_kept: int | None
    ordering_key: str | None


@dataclass(frozen=True)
class NamespaceStats:
    total_jobs: int
    pending: int
    running: int
    completed: int
    dead: int
    total_queues: int


@dataclass(frozen=True)
class QueueStats:
    queue: str
    pending: int
    running: int
    completed: int
    dead: int
    total: int


@dataclass(frozen=True)
class RedriveResult:
    """Call again with ``after_id=last_id`` while ``examined`` equals the limit."""

    redriven: int
    examined: int
    last_id: int | None


@dataclass(frozen=True)
class ScheduleInfo:
    name: str
    queue: str
    cron_expression: str | None
    every_interval: timedelta | None
    timezone: str
    payload: Any
    headers: dict[str, str]
    priority: int
    max_attempts: int | None
    start_at: datetime | None
    end_at: datetime | None
    missed_policy: str
    missed_bound: int
    missed_grace: timedelta | None
    paused: bool
    next_run_at: datetime | None
    last_run_at: datetime | None
    created_at: datetime
    updated_at: datetime
    paused_by: str | None
    updated_by: str | None


@dataclass(frozen=True)
class FiredSchedule:
    schedule_name: str
    job_id: int | None
    next_run_at: datetime | None
    due_at: datetime
    namespace: str


@dataclass(frozen=True)
class PausedQueue:
    queue: str
    paused_at: datetime
    paused_by: str | None


def _build(cls: type[T], row: Mapping[str, Any]) -> T:
    # Columns the class does not know are ignored, so a newer schema adding a column does not break an older client.
    return cls(**{f.name: row.get(f.name) for f in fields(cls)})  # type: ignore[arg-type]


class QueueClient:
    """The SQL interface of one namespace, on a psycopg 3 connection or cursor the application already has.

    Every call first sets the tenant (``set_tenant(namespace, true)``) and, when given, the actor for the
    transaction, so the engine refuses another namespace's messages (``TenantMismatch``) and a pooled connection
    carries nothing to its next borrower. On an autocommit connection each call is its own transaction; otherwise the
    calls join the caller's transaction and are committed (or rolled back) with it: a publish rolled back leaves no
    message and sends no wake-up.
    """

    def __init__(self, connection_or_cursor: psycopg.Connection[Any] | psycopg.Cursor[Any], namespace: str, *,
                 schema: str = "queue", actor: str | None = None) -> None:
        if isinstance(connection_or_cursor, psycopg.Cursor):
            self._connection = connection_or_cursor.connection
        elif isinstance(connection_or_cursor, psycopg.Connection):
            self._connection = connection_or_cursor
        else:
            raise InvalidArgument(
                f"invalid connection_or_cursor: expected a psycopg 3 Connection or Cursor, got: "
                f"{type(connection_or_cursor).__name__}", "connection_or_cursor", connection_or_cursor)
        self.namespace = _text("namespace", namespace)
        self.schema = _text("schema", schema)
        self.actor = None if actor is None else _text("actor", actor)
        self._function_cache: dict[str, sql.Composed] = {}
        if self.actor is None:
            self._context = sql.SQL("SELECT {}(%s, true)").format(self._function("set_tenant"))
            self._context_params: tuple[Any, ...] = (self.namespace,)
        else:
            self._context = sql.SQL("SELECT {}(%s, true), {}(%s, true)").format(
                self._function("set_tenant"), self._function("set_actor"))
            self._context_params = (self.namespace, self.actor)

    @property
    def connection(self) -> psycopg.Connection[Any]:
        return self._connection

    # ----------------------------------------------------------------------------------------------- publishing

    def push(self, queue: str, payload: Any, *, delay: timedelta | None = None, run_at: datetime | None = None,
             priority: int | None = None, max_attempts: int | None = None, unique_key: str | None = None,
             headers: Mapping[str, str] | None = None, ordering_key: str | None = None,
             notify: bool | None = None) -> int | None:
        """Publishes one message; its id, or None when a live message of the queue holds ``unique_key``.

        ``payload`` is anything ``json.dumps`` encodes. ``run_at`` wins over ``delay``; priority 0 is claimed first.
        """
        row = self._one("push", [
            ("p_queue", _text("queue", queue), "text"),
            ("p_payload", _json("payload", payload), "json"),
            ("p_delay", _interval("delay", delay), "interval"),
            ("p_run_at", _instant("run_at", run_at), "timestamptz"),
            ("p_priority", _integer("priority", priority), "integer"),
            ("p_max_attempts", _integer("max_attempts", max_attempts), "integer"),
            ("p_unique_key", _text("unique_key", unique_key, optional=True), "text"),
            ("p_headers", _headers("headers", headers), "jsonb"),
            ("p_notify", _flag("notify", notify), "boolean"),
            ("p_ordering_key", _text("ordering_key", ordering_key, optional=True), "text"),
        ], scalar=True)
        return row

    def push_many(self, queue: str, payloads: Sequence[Any], *, delay: timedelta | None = None,
                  run_at: datetime | None = None, priority: int | None = None, max_attempts: int | None = None,
                  unique_keys: Sequence[str | None] | None = None, headers: Mapping[str, str] | None = None,
                  ordering_keys: Sequence[str | None] | None = None,
                  notify: bool | None = None) -> list[int | None]:
        """Publishes up to 10,000 messages in one statement, all or none; one id per payload in input order, None
        where the payload's unique key was held (by a live message or an earlier payload of the batch)."""
        if isinstance(payloads, (str, bytes, Mapping)) or not isinstance(payloads, Sequence):
            raise InvalidArgument(f"invalid payloads: expected a list of payloads, got: {type(payloads).__name__}",
                                  "payloads", payloads)
        encoded = [_json(f"payloads[{index}]", payload) for index, payload in enumerate(payloads)]
        rows = self._rows("push_batch", [
            ("p_queue", _text("queue", queue), "text"),
            ("p_payloads", encoded, "json[]"),
            ("p_delay", _interval("delay", delay), "interval"),
            ("p_run_at", _instant("run_at", run_at), "timestamptz"),
            ("p_priority", _integer("priority", priority), "integer"),
            ("p_max_attempts", _integer("max_attempts", max_attempts), "integer"),
            ("p_unique_keys", _texts("unique_keys", unique_keys), "text[]"),
            ("p_headers", _headers("headers", headers), "jsonb"),
            ("p_notify", _flag("notify", notify), "boolean"),
            ("p_ordering_keys", _texts("ordering_keys", ordering_keys), "text[]"),
        ])
        return [row["id"] for row in sorted(rows, key=lambda r: r["ordinal"])]

    # Names as the seed's users know them.
    publish = push
    publish_many = push_many

    # ------------------------------------------------------------------------------------------------- claiming

    def pull(self, queue: str, *, worker_id: str | None = None,
             visibility_timeout: timedelta | None = None) -> ClaimedMessage | None:
        """Claims the next due message of the queue, or None. Each claim counts an attempt."""
        rows = self._rows("pull", [
            ("p_queue", _text("queue", queue), "text"),
            ("p_worker_id", _text("worker_id", worker_id, optional=True), "text"),
            ("p_visibility_timeout", _interval("visibility_timeout", visibility_timeout), "interval"),
        ])
        return _build(ClaimedMessage, rows[0]) if rows else None

    def pull_batch(self, queue: str, limit: int = 10, *, worker_id: str | None = None,
                   visibility_timeout: timedelta | None = None) -> list[ClaimedMessage]:
        """Claims up to ``limit`` (1-1000) due messages of the queue, in claim order, under one lease token."""
        rows = self._rows("pull_batch", [
            ("p_queue", _text("queue", queue), "text"),
            ("p_limit", _integer("limit", limit), "integer"),
            ("p_worker_id", _text("worker_id", worker_id, optional=True), "text"),
            ("p_visibility_timeout", _interval("visibility_timeout", visibility_timeout), "interval"),
        ])
        return [_build(ClaimedMessage, row) for row in rows]

    def pull_any(self, queues: Sequence[str], limit: int = 1, *, worker_id: str | None = None,
                 visibility_timeout: timedelta | None = None) -> list[ClaimedMessage]:
        """Claims up to ``limit`` messages from 1-64 queues, queue by queue in the order given."""
        if isinstance(queues, str) or not isinstance(queues, Sequence):
            raise InvalidArgument(f"invalid queues: expected a list of queue names, got: {queues!r}",
                                  "queues", queues)
        rows = self._rows("pull_any", [
            ("p_queues", [_text(f"queues[{i}]", q) for i, q in enumerate(queues)], "text[]"),
            ("p_limit", _integer("limit", limit), "integer"),
            ("p_worker_id", _text("worker_id", worker_id, optional=True), "text"),
            ("p_visibility_timeout", _interval("visibility_timeout", visibility_timeout), "interval"),
        ])
        return [_build(ClaimedMessage, row) for row in rows]

    # ------------------------------------------------------------------------------------------------- settling
    # Each takes the claimed message, or its id with lease_token=. The token is required: without it the engine
    # would settle whoever holds the message, and a worker whose lease expired could settle another's attempt.
    # Each returns False, changing nothing, when the message is no longer running under that token.

    def ack(self, message: ClaimedMessage | int, *, lease_token: int | None = None) -> bool:
        """Completes the message."""
        message_id, token = _lease(message, lease_token)
        return bool(self._one("ack", [("p_id", message_id, "bigint"), ("p_lease_token", token, "bigint")],
                              scalar=True))

    def ack_many(self, messages: Iterable[ClaimedMessage]) -> dict[int, bool]:
        """Completes up to 10,000 messages in one statement; whether each was acknowledged, by id."""
        pairs = [_lease(m, None) for m in messages]
        if not pairs:
            return {}
        rows = self._rows("ack_batch", [("p_ids", [p[0] for p in pairs], "bigint[]"),
                                        ("p_lease_tokens", [p[1] for p in pairs], "bigint[]")])
        return {row["id"]: row["acked"] for row in rows}

    def nack(self, message: ClaimedMessage | int, error: str | None = None, *, delay: timedelta | None = None,
             lease_token: int | None = None) -> bool:
        """Sends the message back for a retry after ``delay`` (default: the queue policy's backoff), or to the
        dead letters when this was its last attempt. ``error`` is stored as the last error."""
        message_id, token = _lease(message, lease_token)
        return bool(self._one("nack", [("p_id", message_id, "bigint"),
                                       ("p_error", _text("error", error, optional=True, blank=True), "text"),
                                       ("p_delay", _interval("delay", delay), "interval"),
                                       ("p_lease_token", token, "bigint")], scalar=True))

    # What a caller means by "retry" is a nack.
    retry = nack

    def fail(self, message: ClaimedMessage | int, error: str | None = None, *,
             lease_token: int | None = None) -> bool:
        """Moves the message to the dead letters at once, whatever attempts it has left."""
        message_id, token = _lease(message, lease_token)
        return bool(self._one("fail", [("p_id", message_id, "bigint"),
                                       ("p_error", _text("error", error, optional=True, blank=True), "text"),
                                       ("p_lease_token", token, "bigint")], scalar=True))

    def extend(self, message: ClaimedMessage | int, extension: timedelta, *,
               lease_token: int | None = None) -> bool:
        """Makes the lease end ``extension`` (1 s to 24 h) from now."""
        message_id, token = _lease(message, lease_token)
        if extension is None:
            raise InvalidArgument("invalid extension: expected a timedelta of 1 s to 24 h, got: None",
                                  "extension", None)
        return bool(self._one("extend_visibility", [("p_id", message_id, "bigint"),
                                                    ("p_extension", _interval("extension", extension), "interval"),
                                                    ("p_lease_token", token, "bigint")], scalar=True))

    def snooze(self, message: ClaimedMessage | int, *, delay: timedelta | None = None,
               run_at: datetime | None = None, lease_token: int | None = None) -> bool:
        """Puts the running message back, due after ``delay`` or at ``run_at`` (exactly one), without counting the
        attempt or recording an error. ``delay=timedelta(0)`` gives a claimed message back at once."""
        message_id, token = _lease(message, lease_token)
        return bool(self._one("snooze", [("p_id", message_id, "bigint"),
                                         ("p_delay", _interval("delay", delay), "interval"),
                                         ("p_run_at", _instant("run_at", run_at), "timestamptz"),
                                         ("p_lease_token", token, "bigint")], scalar=True))

    def cancel(self, message_id: int) -> bool:
        """Removes a pending or running message without running it (again); its holder's settles return False."""
        return bool(self._one("cancel", [("p_id", _id("message_id", message_id), "bigint")], scalar=True))

    # -------------------------------------------------------------------------------------------------- reading

    def inspect(self, message_id: int) -> MessageInfo | None:
        """A pending, waiting, running or dead message; None for completed, unknown or another namespace's."""
        rows = self._rows("inspect", [("p_id", _id("message_id", message_id), "bigint")])
        return _build(MessageInfo, rows[0]) if rows else None

    def stats(self) -> NamespaceStats:
        return _build(NamespaceStats, self._rows("get_stats", [])[0])

    def queue_stats(self) -> list[QueueStats]:
        return [_build(QueueStats, row) for row in self._rows("get_queue_stats", [])]

    # --------------------------------------------------------------------------------------------- flow control

    def pause_queue(self, queue: str) -> bool:
        """True when the queue was running: once this returns, nothing claims its messages."""
        return bool(self._one("pause_queue", [("p_queue", _text("queue", queue), "text")], scalar=True))

    def resume_queue(self, queue: str) -> bool:
        return bool(self._one("resume_queue", [("p_queue", _text("queue", queue), "text")], scalar=True))

    def paused_queues(self) -> list[PausedQueue]:
        return [_build(PausedQueue, row) for row in self._rows("list_paused_queues", [])]

    # --------------------------------------------------------------------------------------------- dead letters

    def dead_letters(self, queue: str | None = None, *, after_id: int = 0, limit: int = 50) -> list[DeadLetter]:
        """One page (1-1000) of dead letters by id, after ``after_id``."""
        rows = self._rows("list_dead_letters", [("p_queue", _text("queue", queue, optional=True), "text"),
                                                ("p_after_id", _integer("after_id", after_id), "bigint"),
                                                ("p_limit", _integer("limit", limit), "integer")])
        return [_build(DeadLetter, row) for row in rows]

    def redrive(self, queue: str | None = None, *, ids: Sequence[int] | None = None, after_id: int = 0,
                limit: int = 1000) -> RedriveResult:
        """Makes dead letters pending again (by ids, by queue, or the whole namespace; never ids and queue)."""
        rows = self._rows("redrive_dead_letters", [("p_queue", _text("queue", queue, optional=True), "text"),
                                                   ("p_ids", _ids("ids", ids), "bigint[]"),
                                                   ("p_after_id", _integer("after_id", after_id), "bigint"),
                                                   ("p_limit", _integer("limit", limit), "integer")])
        return _build(RedriveResult, rows[0])

    def purge(self, queue: str | None = None, *, ids: Sequence[int] | None = None, limit: int = 1000) -> int:
        """Deletes dead letters (by ids, by queue, or the whole namespace); how many."""
        return int(self._one("purge_dead_letters", [("p_queue", _text("queue", queue, optional=True), "text"),
                                                     ("p_ids", _ids("ids", ids), "bigint[]"),
                                                     ("p_limit", _integer("limit", limit), "integer")],
                             scalar=True))

    # ------------------------------------------------------------------------------------------------ schedules

    def create_schedule(self, name: str, queue: str, payload: Any, *, cron: str | None = None,
                        every: timedelta | None = None, timezone: str | None = None,
                        headers: Mapping[str, str] | None = None, priority: int | None = None,
                        max_attempts: int | None = None, start_at: datetime | None = None,
                        end_at: datetime | None = None, missed_policy: str | None = None,
                        missed_bound: int | None = None, missed_grace: timedelta | None = None) -> str:
        """Creates a schedule firing ``payload`` to ``queue`` by ``cron`` or ``every`` (exactly one);
        ``created``, ``unchanged`` or ``updated``."""
        return str(self._one("create_schedule", [("p_name", _text("name", name), "text"),
                                                 ("p_queue", _text("queue", queue), "text"),
                                                 ("p_payload", _json("payload", payload), "json"),
                                                 *self._schedule_options(cron, every, timezone, headers, priority,
                                                                         max_attempts, start_at, end_at,
                                                                         missed_policy, missed_bound, missed_grace)],
                             scalar=True))

    def update_schedule(self, name: str, *, queue: str | None = None, payload: Any = None, cron: str | None = None,
                        every: timedelta | None = None, timezone: str | None = None,
                        headers: Mapping[str, str] | None = None, priority: int | None = None,
                        max_attempts: int | None = None, start_at: datetime | None = None,
                        end_at: datetime | None = None, missed_policy: str | None = None,
                        missed_bound: int | None = None, missed_grace: timedelta | None = None) -> str:
        """Changes what is given, keeps the rest; ``updated`` or ``unchanged``. ``ScheduleNotFound`` for an unknown
        name."""
        return str(self._one("update_schedule", [
            ("p_name", _text("name", name), "text"),
            ("p_queue", _text("queue", queue, optional=True), "text"),
            ("p_payload", None if payload is None else _json("payload", payload), "json"),
            *self._schedule_options(cron, every, timezone, headers, priority, max_attempts, start_at, end_at,
                                    missed_policy, missed_bound, missed_grace)], scalar=True))

    def delete_schedule(self, name: str) -> bool:
        return bool(self._one("delete_schedule", [("p_name", _text("name", name), "text")], scalar=True))

    def pause_schedule(self, name: str) -> bool:
        return bool(self._one("pause_schedule", [("p_name", _text("name", name), "text")], scalar=True))

    def resume_schedule(self, name: str) -> bool:
        return bool(self._one("resume_schedule", [("p_name", _text("name", name), "text")], scalar=True))

    def schedules(self) -> list[ScheduleInfo]:
        return [_build(ScheduleInfo, row) for row in self._rows("list_schedules", [])]

    def tick_schedules(self, limit: int = 100) -> list[FiredSchedule]:
        """Fires the namespace's due schedules (each due time once, whoever else ticks); one row per message."""
        return [_build(FiredSchedule, row)
                for row in self._rows("tick_schedules", [("p_limit", _integer("limit", limit), "integer")])]

    # ---------------------------------------------------------------------------------------- session context

    def clear_actor(self) -> None:
        """Clears a session-level actor (``set_actor``) before the connection goes back to a pool. The actor this
        client sets is transaction-local and ends with the transaction anyway."""
        self._plain(sql.SQL("SELECT {}()").format(self._function("clear_actor")))

    def clear_tenant(self) -> None:
        """Clears a session-level tenant; the one this client sets is transaction-local."""
        self._plain(sql.SQL("SELECT {}()").format(self._function("clear_tenant")))

    # ---------------------------------------------------------------------------------------------- internals

    def _schedule_options(self, cron: str | None, every: timedelta | None, timezone: str | None,
                          headers: Mapping[str, str] | None, priority: int | None, max_attempts: int | None,
                          start_at: datetime | None, end_at: datetime | None, missed_policy: str | None,
                          missed_bound: int | None, missed_grace: timedelta | None) -> list[tuple[str, Any, str]]:
        return [("p_cron_expression", _text("cron", cron, optional=True), "text"),
                ("p_every_interval", _interval("every", every), "interval"),
                ("p_timezone", _text("timezone", timezone, optional=True), "text"),
                ("p_headers", None if headers is None else _headers("headers", headers), "jsonb"),
                ("p_priority", _integer("priority", priority), "integer"),
                ("p_max_attempts", _integer("max_attempts", max_attempts), "integer"),
                ("p_start_at", _instant("start_at", start_at), "timestamptz"),
                ("p_end_at", _instant("end_at", end_at), "timestamptz"),
                ("p_missed_policy", _text("missed_policy", missed_policy, optional=True), "text"),
                ("p_missed_bound", _integer("missed_bound", missed_bound), "integer"),
                ("p_missed_grace", _interval("missed_grace", missed_grace), "interval")]

    def _function(self, name: str) -> sql.Composed:
        cached = self._function_cache.get(name)
        if cached is None:
            cached = sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(name))
            self._function_cache[name] = cached
        return cached

    def _statement(self, function: str, arguments: list[tuple[str, Any, str]]) -> tuple[sql.Composed, list[Any]]:
        # Named notation for what is given only, so every argument left out takes the engine's own default.
        given = [(name, value, pg_type) for name, value, pg_type in arguments if value is not None]
        parts = [sql.SQL("p_namespace := %s::text")]
        params: list[Any] = [self.namespace]
        for name, value, pg_type in given:
            parts.append(sql.SQL("{} := %s::" + pg_type).format(sql.Identifier(name)))
            params.append(value)
        query = sql.SQL("SELECT * FROM {}({})").format(self._function(function), sql.SQL(", ").join(parts))
        return query, params

    def _rows(self, function: str, arguments: list[tuple[str, Any, str]]) -> list[dict[str, Any]]:
        query, params = self._statement(function, arguments)
        return self._run(query, params)

    def _one(self, function: str, arguments: list[tuple[str, Any, str]], *, scalar: bool) -> Any:
        rows = self._rows(function, arguments)
        if not rows:
            return None
        return next(iter(rows[0].values())) if scalar else rows[0]

    def _plain(self, query: sql.Composed) -> None:
        try:
            with self._transaction():
                self._connection.execute(query)
        except psycopg.Error as error:
            raise translate(error) from None

    def _transaction(self) -> contextlib.AbstractContextManager[Any]:
        # Autocommit: the tenant set transaction-locally must share a transaction with the call it guards.
        # Otherwise the caller's transaction is used, and the caller commits.
        return self._connection.transaction() if self._connection.autocommit else contextlib.nullcontext()

    def _run(self, query: sql.Composed, params: list[Any]) -> list[dict[str, Any]]:
        try:
            # pipelined: the tenant, the call and the transaction's end travel together, not one round trip each
            with self._connection.pipeline(), self._transaction(), \
                    self._connection.cursor(row_factory=dict_row) as cursor:
                # a cursor of its own: in a pipeline, one cursor's fetch would answer its first statement
                self._connection.execute(self._context, self._context_params)
                cursor.execute(query, params)
                return cursor.fetchall()  # every function called returns rows (a void one, one NULL row)
        except psycopg.Error as error:
            translated = translate(error)
            if translated is error:
                raise
            raise translated from None


# ---------------------------------------------------------------------------------------------- argument checks
# Only what Python can get wrong before the engine sees it: types, JSON encoding, naive datetimes. The rules of
# values (name characters, ranges, sizes) are the engine's, in one place, and come back as typed errors too.

def _invalid(parameter: str, expected: str, value: Any) -> InvalidArgument:
    shown = repr(value)
    if len(shown) > 200:
        shown = shown[:200] + f"...({len(shown)} chars)"
    return InvalidArgument(f"invalid {parameter}: expected {expected}, got: {shown}", parameter, value)


def _text(parameter: str, value: Any, *, optional: bool = False, blank: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not blank and value == ""):
        raise _invalid(parameter, "a non-empty str", value)
    return value


def _texts(parameter: str, values: Sequence[str | None] | None) -> list[str | None] | None:
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise _invalid(parameter, "a list of str or None, one per payload", values)
    return [_text(f"{parameter}[{i}]", v, optional=True) for i, v in enumerate(values)]


def _integer(parameter: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(parameter, "an int", value)
    return value


def _id(parameter: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(parameter, "a message id (int)", value)
    return value


def _ids(parameter: str, values: Sequence[int] | None) -> list[int] | None:
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise _invalid(parameter, "a list of message ids", values)
    return [_id(f"{parameter}[{i}]", v) for i, v in enumerate(values)]


def _flag(parameter: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise _invalid(parameter, "a bool", value)
    return value


def _interval(parameter: str, value: Any) -> timedelta | None:
    if value is not None and not isinstance(value, timedelta):
        raise _invalid(parameter, "a datetime.timedelta", value)
    return value


def _instant(parameter: str, value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        # A naive datetime would be read in the server's time zone: ambiguous, so refused.
        raise _invalid(parameter, "a datetime with a time zone", value)
    return value


def _json(parameter: str, value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        shown = repr(value)[:200]
        raise InvalidPayload(f"invalid {parameter}: expected a value json.dumps encodes, got: {shown} ({error})",
                             parameter, value) from None


def _headers(parameter: str, value: Mapping[str, str] | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in value.items()):
        raise _invalid(parameter, "a mapping of str to str", value)
    return json.dumps(dict(value), ensure_ascii=False)


def _lease(message: ClaimedMessage | int, lease_token: int | None) -> tuple[int, int]:
    if isinstance(message, ClaimedMessage):
        if lease_token is not None and lease_token != message.lease_token:
            raise _invalid("lease_token", f"None or the message's own token {message.lease_token}", lease_token)
        return message.id, message.lease_token
    message_id = _id("message", message)
    if isinstance(lease_token, bool) or not isinstance(lease_token, int):
        raise _invalid("lease_token", "the lease token pull returned with the message (int)", lease_token)
    return message_id, lease_token
