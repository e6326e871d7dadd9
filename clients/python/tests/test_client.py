"""QueueClient against a real server: each call, its guards, and the typed errors."""
from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from queue_client import (ClaimedMessage, InvalidArgument, InvalidPayload, IsolationLevelTooStrict, NotPermitted,
                          QueueClient, ScheduleNotFound, TenantMismatch)
from queue_client.errors import translate


def test_push_pull_ack_round_trip(client: QueueClient) -> None:
    message_id = client.push("email", {"to": "alice@example.com", "n": 1}, headers={"trace": "t-1"}, priority=3)
    claimed = client.pull("email", worker_id="py-test")
    assert isinstance(claimed, ClaimedMessage)
    assert (claimed.id, claimed.queue, claimed.payload) == (message_id, "email", {"to": "alice@example.com", "n": 1})
    assert (claimed.headers, claimed.priority, claimed.attempts, claimed.worker_id) == ({"trace": "t-1"}, 3, 1,
                                                                                        "py-test")
    assert client.ack(claimed) is True
    assert client.stats().completed == 1
    assert client.pull("email") is None


def test_payload_text_is_kept_as_sent(client: QueueClient, connection: psycopg.Connection) -> None:
    payload = {"name": "Zoë", "emoji": "📨", "nested": [1, 2.5, None, True]}
    message_id = client.push("t", payload)
    stored = connection.execute("SELECT payload::text FROM queue.messages WHERE id = %s", (message_id,)).fetchone()
    assert stored[0] == '{"name":"Zoë","emoji":"📨","nested":[1,2.5,null,true]}'
    assert client.pull("t").payload == payload


def test_unique_key_holder_makes_a_duplicate(client: QueueClient) -> None:
    first = client.push("sync", {"user": 42}, unique_key="sync:user:42")
    assert first is not None
    assert client.push("sync", {"user": 42}, unique_key="sync:user:42") is None


def test_push_many_answers_in_input_order(client: QueueClient) -> None:
    ids = client.push_many("bulk", [{"i": i} for i in range(5)], unique_keys=["a", "b", "a", None, None])
    assert ids[2] is None
    assert all(isinstance(i, int) for i in (ids[0], ids[1], ids[3], ids[4]))
    assert ids[0] < ids[1] < ids[3] < ids[4]
    claimed = client.pull_batch("bulk", 10)
    assert [m.payload["i"] for m in claimed] == [0, 1, 3, 4]
    assert len({m.lease_token for m in claimed}) == 1
    assert set(client.ack_many(claimed).values()) == {True}


def test_pull_any_takes_queues_in_the_order_given(client: QueueClient) -> None:
    client.push("bulk", {"q": "bulk"})
    client.push("critical", {"q": "critical"})
    claimed = client.pull_any(["critical", "bulk"], limit=2)
    assert [m.queue for m in claimed] == ["critical", "bulk"]


def test_delayed_message_is_not_due_yet(client: QueueClient) -> None:
    client.push("later", {}, delay=timedelta(hours=1))
    client.push("later", {}, run_at=datetime.now(timezone.utc) + timedelta(hours=1))
    assert client.pull("later") is None
    assert client.stats().pending == 2


def test_late_ack_after_the_lease_passed_to_another_worker_is_refused(client: QueueClient) -> None:
    client.push("slow", {"x": 1})
    first = client.pull("slow", worker_id="first", visibility_timeout=timedelta(seconds=1))
    second = None
    deadline = time.monotonic() + 10
    while second is None and time.monotonic() < deadline:
        time.sleep(0.1)
        second = client.pull("slow", worker_id="second")
    assert second is not None and second.id == first.id and second.attempts == 2
    assert client.ack(first) is False
    assert client.nack(first, "late") is False
    assert client.extend(first, timedelta(seconds=30)) is False
    assert client.ack(second) is True


def test_settles_need_the_lease_token(client: QueueClient) -> None:
    client.push("t", {})
    claimed = client.pull("t")
    with pytest.raises(InvalidArgument) as refused:
        client.ack(claimed.id)  # type: ignore[call-arg]
    assert refused.value.parameter == "lease_token" and refused.value.value is None
    assert client.ack(claimed.id, lease_token=claimed.lease_token + 1) is False
    assert client.ack(claimed.id, lease_token=claimed.lease_token) is True


def test_nack_retries_after_the_delay_and_records_the_error(client: QueueClient) -> None:
    client.push("t", {}, max_attempts=3)
    claimed = client.pull("t")
    assert client.nack(claimed, "SMTP timeout", delay=timedelta(hours=1)) is True
    info = client.inspect(claimed.id)
    assert (info.state, info.attempts, info.last_error) == ("pending", 1, "SMTP timeout")
    assert info.run_at > datetime.now(timezone.utc) + timedelta(minutes=59)


def test_nack_on_the_last_attempt_makes_a_dead_letter_that_can_be_redriven(client: QueueClient) -> None:
    message_id = client.push("t", {"k": "v"}, max_attempts=1)
    assert client.nack(client.pull("t"), "boom") is True
    dead = client.dead_letters("t")
    assert [(d.id, d.last_error, d.payload) for d in dead] == [(message_id, "boom", {"k": "v"})]
    result = client.redrive(ids=[message_id])
    assert (result.redriven, result.examined) == (1, 1)
    again = client.pull("t")
    assert again.id == message_id and again.attempts == 1


def test_fail_buries_at_once_and_purge_deletes(client: QueueClient) -> None:
    message_id = client.push("t", {}, max_attempts=10)
    assert client.fail(client.pull("t"), "invalid recipient") is True
    assert client.inspect(message_id).state == "dead"
    assert client.purge("t") == 1
    assert client.dead_letters() == []


def test_extend_moves_the_lease_end(client: QueueClient) -> None:
    client.push("t", {})
    claimed = client.pull("t", visibility_timeout=timedelta(seconds=5))
    assert client.extend(claimed, timedelta(minutes=10)) is True
    assert client.inspect(claimed.id).lease_until > claimed.lease_until + timedelta(minutes=9)


def test_snooze_gives_the_attempt_back(client: QueueClient) -> None:
    client.push("t", {})
    claimed = client.pull("t")
    assert client.snooze(claimed, delay=timedelta(0)) is True
    again = client.pull("t")
    assert again.id == claimed.id and again.attempts == 1


def test_cancel_removes_a_pending_message(client: QueueClient) -> None:
    message_id = client.push("t", {})
    assert client.cancel(message_id) is True
    assert client.inspect(message_id) is None
    assert client.pull("t") is None


def test_a_paused_queue_is_not_claimed(client: QueueClient) -> None:
    client.push("t", {})
    assert client.pause_queue("t") is True
    assert [p.queue for p in client.paused_queues()] == ["t"]
    assert client.pull("t") is None
    assert client.resume_queue("t") is True
    assert client.pull("t") is not None


def test_queue_stats_count_per_queue(client: QueueClient) -> None:
    client.push_many("a", [{}, {}])
    client.push("b", {})
    assert {(s.queue, s.pending) for s in client.queue_stats()} == {("a", 2), ("b", 1)}


def test_schedules_lifecycle(client: QueueClient) -> None:
    assert client.create_schedule("cleanup", "maintenance", {"action": "expire"}, every=timedelta(hours=2)) == "created"
    assert client.create_schedule("cleanup", "maintenance", {"action": "expire"},
                                  every=timedelta(hours=2)) == "unchanged"
    assert client.update_schedule("cleanup", cron="*/5 * * * *") == "updated"
    [schedule] = client.schedules()
    assert (schedule.name, schedule.cron_expression, schedule.every_interval) == ("cleanup", "*/5 * * * *", None)
    assert client.pause_schedule("cleanup") is True
    assert client.schedules()[0].paused is True
    assert client.resume_schedule("cleanup") is True
    assert isinstance(client.tick_schedules(), list)
    assert client.delete_schedule("cleanup") is True
    with pytest.raises(ScheduleNotFound) as missing:
        client.update_schedule("cleanup", priority=1)
    assert missing.value.parameter == "p_name" and missing.value.sqlstate == "QU003"


def test_tick_fires_a_due_schedule(client: QueueClient) -> None:
    client.create_schedule("beat", "beats", {"b": 1}, every=timedelta(seconds=1))
    fired: list = []
    deadline = time.monotonic() + 5
    while not fired and time.monotonic() < deadline:
        fired = client.tick_schedules()
        time.sleep(0.2)
    assert fired and fired[0].schedule_name == "beat"
    message = client.pull("beats")
    assert message.payload == {"b": 1} and message.headers["queue-schedule"] == "beat"


def test_engine_errors_name_the_parameter_and_value(client: QueueClient) -> None:
    with pytest.raises(InvalidArgument) as priority:
        client.push("t", {}, priority=12)
    assert (priority.value.parameter, priority.value.value, priority.value.sqlstate) == ("p_priority", "12", "QU001")
    assert "expected 0 (first) to 9 (last)" in str(priority.value)
    with pytest.raises(InvalidArgument) as queue_name:
        client.push("no spaces allowed", {})
    assert (queue_name.value.parameter, queue_name.value.value) == ("p_queue", "no spaces allowed")
    with pytest.raises(InvalidArgument) as lease:
        client.pull("t", visibility_timeout=timedelta(milliseconds=10))
    assert lease.value.parameter == "p_visibility_timeout"
    with pytest.raises(InvalidArgument) as limit:
        client.pull_batch("t", 5000)
    assert (limit.value.parameter, limit.value.value) == ("p_limit", "5000")
    with pytest.raises(InvalidPayload) as nul:
        client.push("t", {"text": "a\u0000b"})
    assert nul.value.sqlstate == "QU004" and nul.value.parameter == "p_payload"


def test_client_checks_name_the_python_argument(client: QueueClient) -> None:
    with pytest.raises(InvalidPayload) as payload:
        client.push("t", {"when": object()})
    assert payload.value.parameter == "payload"
    with pytest.raises(InvalidArgument) as naive:
        client.push("t", {}, run_at=datetime(2030, 1, 1))
    assert naive.value.parameter == "run_at" and naive.value.sqlstate is None
    with pytest.raises(InvalidArgument) as priority:
        client.push("t", {}, priority="high")  # type: ignore[arg-type]
    assert (priority.value.parameter, priority.value.value) == ("priority", "high")
    with pytest.raises(InvalidArgument) as headers:
        client.push("t", {}, headers={"n": 1})  # type: ignore[dict-item]
    assert headers.value.parameter == "headers"
    with pytest.raises(InvalidArgument) as keys:
        client.push_many("t", [{}, {}], unique_keys=["a", 7])  # type: ignore[list-item]
    assert keys.value.parameter == "unique_keys[1]"
    with pytest.raises(InvalidArgument):
        QueueClient("not a connection", "acme")  # type: ignore[arg-type]
    assert issubclass(InvalidArgument, ValueError)


def test_tenant_set_by_the_client_refuses_another_namespace_in_its_transaction(dsn: str, namespace: str) -> None:
    with psycopg.connect(dsn) as connection:  # not autocommit: the client joins the caller's transaction
        QueueClient(connection, namespace).push("t", {})
        with pytest.raises(psycopg.Error) as raw:
            connection.execute("SELECT queue.push('someone-else', 't', '{}'::json)")
        refused = translate(raw.value)
        assert isinstance(refused, TenantMismatch)
        assert (refused.parameter, refused.value) == ("p_namespace", "someone-else")
        connection.rollback()
        assert connection.execute("SELECT queue.current_tenant()").fetchone()[0] is None


def test_a_session_tenant_of_another_namespace_is_overridden_per_call_not_leaked(dsn: str, namespace: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("SELECT queue.set_tenant('other-tenant')")
        client = QueueClient(connection, namespace)
        assert client.push("t", {}) is not None
        assert connection.execute("SELECT queue.current_tenant()").fetchone()[0] == "other-tenant"
        connection.execute("SELECT queue.clear_tenant()")


def test_publish_rolls_back_with_the_callers_transaction(dsn: str, namespace: str) -> None:
    with psycopg.connect(dsn) as connection:
        client = QueueClient(connection, namespace)
        client.push("t", {"n": 1})
        connection.rollback()
        client.push("t", {"n": 2})
        connection.commit()
        assert client.stats().pending == 1
        connection.commit()


def test_actor_is_recorded_and_cleared(connection: psycopg.Connection, namespace: str) -> None:
    client = QueueClient(connection, namespace, actor="billing-service")
    message_id = client.push("t", {})
    assert client.inspect(message_id).published_by == "billing-service"
    assert connection.execute("SELECT queue.current_actor()").fetchone()[0] is None
    connection.execute("SELECT queue.set_actor('session-actor')")
    client.clear_actor()
    assert connection.execute("SELECT queue.current_actor()").fetchone()[0] is None


def test_a_cursor_works_as_well_as_a_connection(connection: psycopg.Connection, namespace: str) -> None:
    with connection.cursor() as cursor:
        client = QueueClient(cursor, namespace)
        assert client.push("t", {"via": "cursor"}) is not None
        assert client.pull("t").payload == {"via": "cursor"}


@pytest.mark.parametrize("sqlstate, expected", [("QU001", InvalidArgument), ("QU002", TenantMismatch),
                                                 ("QU003", ScheduleNotFound), ("QU004", InvalidPayload),
                                                 ("QU005", NotPermitted), ("QU006", IsolationLevelTooStrict)])
def test_each_engine_sqlstate_has_its_type(connection: psycopg.Connection, sqlstate: str, expected: type) -> None:
    with pytest.raises(psycopg.Error) as raised:
        connection.execute(
            f"DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '{sqlstate}', "
            f"MESSAGE = 'invalid p_x: expected something, got: \"bad\"', COLUMN = 'p_x'; END $$")
    translated = translate(raised.value)
    assert type(translated) is expected
    assert (translated.parameter, translated.value, translated.sqlstate) == ("p_x", "bad", sqlstate)


def test_other_errors_are_left_as_psycopg_raised_them(connection: psycopg.Connection) -> None:
    with pytest.raises(psycopg.Error) as raised:
        connection.execute("SELECT 1/0")
    assert translate(raised.value) is raised.value
