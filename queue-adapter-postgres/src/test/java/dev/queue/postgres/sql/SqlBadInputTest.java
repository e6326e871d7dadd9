package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.util.PSQLException;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bad value for every argument: the SQLSTATE of the queue's class QU, a message naming the argument and the value,
 * and nothing stored or changed. Cases are "statement | SQLSTATE | text the message must contain".
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlBadInputTest {

    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlbad");
        db.rows("SELECT * FROM queue.set_queue_policy('acme', 'small', p_max_payload_bytes := 10)");
        db.value("SELECT queue.push('acme', 'email', '{}')");
        db.rows("SELECT * FROM queue.pull('acme', 'email')");
        db.value("SELECT queue.create_schedule('acme', 'sync', 'data', '{}', p_every_interval := '2 hours')");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiterString = " | ", textBlock = """
            SELECT queue.push(NULL, 'email', '{}')                                    | QU001 | invalid p_namespace: expected 1 to 64 characters
            SELECT queue.push('bad name', 'email', '{}')                              | QU001 | got: "bad name"
            SELECT queue.push(repeat('n', 65), 'email', '{}')                         | QU001 | invalid p_namespace
            SELECT queue.push('acme', '-email', '{}')                                 | QU001 | invalid p_queue: expected 1 to 64 characters: letters, digits, '.', '_' or '-', starting with a letter or digit, got: "-email"
            SELECT queue.push('acme', 'email', NULL)                                  | QU004 | invalid p_payload: expected JSON text
            SELECT queue.push('acme', 'email', '{')                                   | 22P02 | invalid input syntax for type json
            SELECT queue.push('acme', 'small', '{"a": "0123456789"}')                 | QU004 | invalid p_payload: expected at most 10 bytes of UTF-8 JSON, got: 19 bytes
            SELECT queue.push('acme', 'email', '"a\\u0000b"')                         | QU004 | without a \\u0000 escape
            SELECT queue.push('acme', 'email', '{}', p_delay := '-1 second')          | QU001 | invalid p_delay: expected 0 to 365 days, got: -00:00:01
            SELECT queue.push('acme', 'email', '{}', p_delay := '366 days')           | QU001 | invalid p_delay: expected 0 to 365 days, got: 366 days
            SELECT queue.push('acme', 'email', '{}', p_delay := '178000000 years')    | QU001 | invalid p_delay: expected 0 to 365 days, got: 178000000 years
            SELECT queue._check_array('p_ids', '{{1,2},{3,4}}'::bigint[], 0, 10)       | QU001 | invalid p_ids: expected a one-dimensional array, got: 2-dimensional array
            SELECT queue._check_array('p_ids', ARRAY[1, NULL]::bigint[], 0, 10)        | QU001 | invalid p_ids: expected no NULL element, got: NULL at position 2
            SELECT queue._check_array('p_ids', '[0:1]={1,2}'::bigint[], 0, 10)         | QU001 | invalid p_ids: expected an array indexed from 1, got: subscripts from 0
            SELECT queue._check_array('p_ids', array_fill(1::bigint, ARRAY[11]), 0, 10) | QU001 | invalid p_ids: expected 0 to 10 elements, got: 11 elements
            SELECT queue._check_array('p_ids', NULL::bigint[], 0, 10)                  | QU001 | invalid p_ids: expected an array of 0 to 10 elements, got: null
            SELECT queue.push('acme', 'email', '{}', p_run_at := '1969-12-31 00:00Z') | QU001 | invalid p_run_at: expected an instant between 1970 and 9999
            SELECT queue.push('acme', 'email', '{}', p_priority := 10)                | QU001 | invalid p_priority: expected 0 (first) to 9 (last), got: 10
            SELECT queue.push('acme', 'email', '{}', p_priority := -1)                | QU001 | got: -1
            SELECT queue.push('acme', 'email', '{}', p_max_attempts := 0)             | QU001 | invalid p_max_attempts: expected 1 to 1000, got: 0
            SELECT queue.push('acme', 'email', '{}', p_max_attempts := 1001)          | QU001 | got: 1001
            SELECT queue.push('acme', 'email', '{}', p_unique_key := '')              | QU001 | invalid p_unique_key: expected 1 to 255 characters without control characters, got: ""
            SELECT queue.push('acme', 'email', '{}', p_unique_key := repeat('k', 256)) | QU001 | invalid p_unique_key
            SELECT queue.push('acme', 'email', '{}', p_unique_key := E'a\\tb')        | QU001 | invalid p_unique_key
            SELECT queue.push('acme', 'email', '{}', p_headers := '[]')               | QU001 | invalid p_headers: expected a JSON object
            SELECT queue.push('acme', 'email', '{}', p_headers := '{"queue-x": "v"}') | QU001 | invalid p_headers name: expected a name not starting with 'queue-'
            SELECT queue.push('acme', 'email', '{}', p_headers := '{"h": 1}')         | QU001 | invalid p_headers h: expected a string of at most 1024 characters, got: 1
            SELECT queue.push('acme', 'email', '{}', p_headers := '{"bad name": "v"}') | QU001 | got: "bad name"
            SELECT queue.push('acme', 'email', '{}', p_headers := jsonb_build_object('h', repeat('v', 1025))) | QU001 | invalid p_headers h
            SELECT queue.push('acme', 'email', '{}', p_headers := (SELECT jsonb_object_agg('h' || i, 'v') FROM generate_series(1, 33) i)) | QU001 | invalid p_headers: expected at most 32, got: 33 headers
            SELECT * FROM queue.push_batch('acme', 'email', NULL)                     | QU001 | invalid p_payloads
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}', NULL]::json[]) | QU004 | invalid p_payloads[2]
            SELECT * FROM queue.push_batch('acme', 'email', array_fill('{}'::json, ARRAY[10001])) | QU001 | got: 10001 payloads
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}']::json[], p_unique_keys := ARRAY['a', 'b']) | QU001 | invalid p_unique_keys: expected one key (or NULL) per payload: 1, got: 2 keys
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}', '{}']::json[], p_unique_keys := ARRAY['a', '']) | QU001 | invalid p_unique_keys[2]
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}']::json[], p_priority := 11) | QU001 | invalid p_priority
            SELECT * FROM queue.pull('acme', 'email', p_worker_id := '')               | QU001 | invalid p_worker_id: expected 1 to 128 characters without control characters, got: ""
            SELECT * FROM queue.pull('acme', 'email', p_visibility_timeout := '0.5 seconds') | QU001 | invalid p_visibility_timeout: expected 1 s to 24 h, got: 00:00:00.5
            SELECT * FROM queue.pull('acme', 'email', p_visibility_timeout := '25 hours') | QU001 | got: 25:00:00
            SELECT * FROM queue.pull('acme', 'bad/queue')                              | QU001 | invalid p_queue
            SELECT * FROM queue.pull_batch('acme', 'email', p_limit := 0)              | QU001 | invalid p_limit: expected 1 to 1000, got: 0
            SELECT * FROM queue.pull_batch('acme', 'email', p_limit := 1001)           | QU001 | got: 1001
            SELECT * FROM queue.pull_any('acme', ARRAY[]::text[])                      | QU001 | invalid p_queues: expected 1 to 64 queues
            SELECT * FROM queue.pull_any('acme', ARRAY['a', 'a'])                      | QU001 | each queue once, but a repeats
            SELECT * FROM queue.pull_any('acme', ARRAY['a', 'b c'])                    | QU001 | got: "b c"
            SELECT * FROM queue.pull_any('acme', (SELECT array_agg('q' || i) FROM generate_series(1, 65) i)) | QU001 | invalid p_queues
            SELECT queue.ack('acme', NULL)                                             | QU001 | invalid p_id: expected a message id, got: null
            SELECT queue.ack('bad name', 1)                                            | QU001 | invalid p_namespace
            SELECT * FROM queue.ack_batch('acme', NULL)                                | QU001 | invalid p_ids
            SELECT * FROM queue.ack_batch('acme', ARRAY[1, NULL]::bigint[])            | QU001 | none null
            SELECT * FROM queue.ack_batch('acme', ARRAY[1], ARRAY[1, 2]::bigint[])     | QU001 | invalid p_lease_tokens: expected one lease token per id: 1, got: 2 tokens
            SELECT queue.nack('acme', 1, p_delay := '-1 second')                       | QU001 | invalid p_delay
            SELECT queue.nack('acme', NULL)                                            | QU001 | invalid p_id
            SELECT queue.fail('acme', NULL)                                            | QU001 | invalid p_id
            SELECT queue.fail('', 1)                                                   | QU001 | invalid p_namespace
            SELECT queue.extend_visibility('acme', 1, '0 seconds')                     | QU001 | invalid p_extension: expected 1 s to 24 h, got: 00:00:00
            SELECT queue.extend_visibility('acme', 1, NULL)                            | QU001 | invalid p_extension
            SELECT * FROM queue.get_stats('bad name')                                  | QU001 | invalid p_namespace
            SELECT * FROM queue.get_queue_stats(NULL)                                  | QU001 | invalid p_namespace
            SELECT * FROM queue.inspect('acme', NULL)                                  | QU001 | invalid p_id
            SELECT * FROM queue.list_dead_letters('acme', p_limit := 0)                | QU001 | invalid p_limit
            SELECT * FROM queue.list_dead_letters('acme', p_queue := 'x y')            | QU001 | invalid p_queue
            SELECT * FROM queue.redrive_dead_letters('acme', p_queue := 'q', p_ids := ARRAY[1]::bigint[]) | QU001 | either p_ids or p_queue, not both
            SELECT * FROM queue.redrive_dead_letters('acme', p_limit := 0)             | QU001 | invalid p_limit
            SELECT queue.purge_dead_letters('acme', p_limit := 10001)                  | QU001 | invalid p_limit: expected 1 to 10000, got: 10001
            SELECT queue.purge_dead_letters('acme', p_ids := ARRAY[NULL]::bigint[])    | QU001 | invalid p_ids
            SELECT * FROM queue.rescue_expired('acme', 0)                              | QU001 | invalid p_limit
            SELECT queue.create_schedule('acme', 'bad name', 'data', '{}', p_every_interval := '1 hour') | QU001 | invalid p_name
            SELECT queue.create_schedule('acme', 's', 'bad queue', '{}', p_every_interval := '1 hour') | QU001 | invalid p_queue
            SELECT queue.create_schedule('acme', 's', 'data', NULL, p_every_interval := '1 hour') | QU004 | invalid p_payload
            SELECT queue.create_schedule('acme', 's', 'data', '{}')                    | QU001 | exactly one of p_cron_expression and p_every_interval
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_cron_expression := '* * * * *', p_every_interval := '1 hour') | QU001 | exactly one of p_cron_expression and p_every_interval
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '0.5 seconds') | QU001 | invalid p_every_interval: expected 1 s to 365 days, got: 00:00:00.5
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '366 days') | QU001 | invalid p_every_interval
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_timezone := 'Mars/Base') | QU001 | invalid p_timezone: expected a time zone ID such as UTC, Europe/Paris or +02:00, got: "Mars/Base"
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_start_at := '2031-01-02Z', p_end_at := '2031-01-01Z') | QU001 | invalid p_end_at: expected an instant after p_start_at
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_start_at := '1960-01-01Z') | QU001 | invalid p_start_at
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 day', p_start_at := '2031-01-01Z', p_end_at := '2030-12-31Z') | QU001 | invalid p_end_at
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_missed_policy := 'SOMETIMES') | QU001 | invalid p_missed_policy: expected FIRE_ONCE, SKIP or FIRE_EACH, got: "SOMETIMES"
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_missed_bound := 0) | QU001 | invalid p_missed_bound
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_missed_grace := '-1 minute') | QU001 | invalid p_missed_grace
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_headers := (SELECT jsonb_object_agg('h' || i, 'v') FROM generate_series(1, 31) i)) | QU001 | expected at most 30, got: 31 headers
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_priority := 10) | QU001 | invalid p_priority
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_max_attempts := 0) | QU001 | invalid p_max_attempts
            SELECT queue.update_schedule('acme', 'nope', p_priority := 1)              | QU003 | schedule "nope" not found in namespace "acme"
            SELECT queue.update_schedule('acme', 'sync', p_priority := 10)             | QU001 | invalid p_priority
            SELECT queue.update_schedule('acme', 'sync', p_cron_expression := '* * * * *', p_every_interval := '1 hour') | QU001 | exactly one of
            SELECT queue.pause_schedule('acme', 'nope')                                | QU003 | schedule "nope" not found
            SELECT queue.resume_schedule('acme', 'nope')                               | QU003 | schedule "nope" not found
            SELECT queue.delete_schedule('acme', 'bad name')                           | QU001 | invalid p_name
            SELECT * FROM queue.list_schedules('')                                     | QU001 | invalid p_namespace
            SELECT * FROM queue.tick_schedules('acme', 0)                              | QU001 | invalid p_limit
            SELECT queue.set_tenant('bad name')                                        | QU001 | invalid p_namespace
            SELECT queue.set_actor('')                                                 | QU001 | invalid p_actor: expected 1 to 128 characters without control characters, got: ""
            SELECT queue.set_actor(repeat('a', 129))                                   | QU001 | invalid p_actor
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_max_attempts := 0)     | QU001 | invalid p_max_attempts
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_backoff_base := '2 minutes', p_backoff_cap := '1 minute') | QU001 | invalid p_backoff_cap: expected from the base (00:02:00) to 365 days, got: 00:01:00
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_backoff_multiplier := 0.5) | QU001 | invalid p_backoff_multiplier: expected a multiplier from 1 to 100, got: 0.5
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_backoff_jitter := 2)   | QU001 | invalid p_backoff_jitter
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_visibility_timeout := '0 seconds') | QU001 | invalid p_visibility_timeout
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_max_payload_bytes := 1) | QU001 | invalid p_max_payload_bytes
            """)
    void aBadArgumentIsRefusedWithItsNameAndValueAndNothingChanges(String sql, String sqlState, String message) {
        Map<String, String> before = db.footprint();

        PSQLException error = db.error(sql);

        assertThat(error.getSQLState()).as(error.getMessage()).isEqualTo(sqlState);
        assertThat(error.getServerErrorMessage().getMessage()).contains(message);
        assertThat(db.footprint()).isEqualTo(before);
    }
}
