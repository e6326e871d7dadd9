package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.util.PSQLException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The boundary of the public SQL functions (issue 45): values that used to reach a raw PostgreSQL error (an interval
 * overflowing inside a check, a cast before the check, a multi-dimensional array, a constraint of the table) or
 * that were taken where a rule is documented now get the queue's QU001 naming the argument, and change nothing; an
 * optional parameter passed as an explicit NULL takes its default.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlBoundaryTest {

    private static final String HUGE = "'178000000 years'";

    private final String role = "boundary_" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlbound");
        db.value("SELECT queue.push('acme', 'email', '{}')");
        db.rows("SELECT * FROM queue.pull('acme', 'email')");
        db.value("SELECT queue.create_schedule('acme', 'sync', 'data', '{}', p_every_interval := '2 hours')");
        db.rows("CREATE ROLE " + role + " NOLOGIN");
        db.value("SELECT queue.grant_tenant('acme', ?)", role);
    }

    @AfterAll
    void dropDatabase() {
        db.rows("DROP ROLE IF EXISTS " + role);
        db.close();
    }

    /** What the functions write, with the tables SqlTestDatabase.footprint() leaves out. */
    private Map<String, String> everything() {
        Map<String, String> contents = new LinkedHashMap<>(db.footprint());
        for (String table : List.of("workers", "settings", "tenant_grants")) {
            contents.put(table, (String) db.value("SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' "
                    + "ORDER BY t::text)), '') FROM queue." + table + " t"));
        }
        return contents;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiterString = " | ", textBlock = """
            SELECT queue.push('acme', 'email', '{}', p_delay := HUGE)                                           | p_delay
            SELECT queue.push('acme', 'email', '{}', p_delay := '-178000000 years')                             | p_delay
            SELECT queue.push('acme', 'email', '{}', p_run_at := 'infinity')                                    | p_run_at
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}']::json[], p_delay := HUGE)               | p_delay
            SELECT queue.nack('acme', 1, p_delay := HUGE)                                                       | p_delay
            SELECT queue.snooze('acme', 1, p_delay := HUGE)                                                     | p_delay
            SELECT queue.snooze('acme', 1, p_run_at := '-infinity')                                             | p_run_at
            SELECT queue.extend_visibility('acme', 1, HUGE)                                                     | p_extension
            SELECT * FROM queue.pull('acme', 'email', p_visibility_timeout := HUGE)                             | p_visibility_timeout
            SELECT * FROM queue.pull_batch('acme', 'email', p_visibility_timeout := HUGE)                       | p_visibility_timeout
            SELECT * FROM queue.pull_any('acme', ARRAY['email'], p_visibility_timeout := HUGE)                  | p_visibility_timeout
            SELECT queue.set_queue_limits('acme', 'email', p_rate_limit := 5, p_rate_period := HUGE)            | p_rate_period
            SELECT queue.set_queue_limits('acme', 'email', p_partition_header := 'h', p_partition_rate_limit := 5, p_partition_rate_period := HUGE) | p_partition_rate_period
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_backoff_base := HUGE)                           | p_backoff_base
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_backoff_cap := HUGE)                            | p_backoff_cap
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_visibility_timeout := HUGE)                     | p_visibility_timeout
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_backoff_base := '1 month', p_backoff_cap := '2 months') | p_backoff_base
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_backoff_multiplier := 'NaN')                    | p_backoff_multiplier
            SELECT * FROM queue.set_queue_policy('acme', 'q', p_max_attempts := 2147483647)                     | p_max_attempts
            SELECT queue.set_audit_retention(HUGE)                                                              | p_retention
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_interval := HUGE)                               | p_interval
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_remove_after := HUGE)                           | p_remove_after
            SELECT * FROM queue.health(p_max_transaction_age := HUGE)                                           | p_max_transaction_age
            SELECT * FROM queue.health(p_max_pending_age := HUGE)                                               | p_max_pending_age
            SELECT * FROM queue.health(p_dead_letter_window := HUGE)                                            | p_dead_letter_window
            SELECT * FROM queue.health(p_lease_grace := HUGE)                                                   | p_lease_grace
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := HUGE)                   | p_every_interval
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_missed_grace := HUGE) | p_missed_grace
            SELECT queue.update_schedule('acme', 'sync', p_every_interval := HUGE)                              | p_every_interval
            SELECT queue.update_schedule('acme', 'sync', p_missed_grace := HUGE)                                | p_missed_grace
            SELECT queue.create_schedule('acme', 's', 'data', '{}', p_every_interval := '1 hour', p_priority := 2147483647) | p_priority
            SELECT queue.update_schedule('acme', 'sync', p_priority := 2147483647)                              | p_priority
            SELECT queue.update_schedule('acme', 'sync', p_priority := -32769)                                  | p_priority
            SELECT queue.update_schedule('acme', 'sync', p_missed_policy := 'NEVER')                            | p_missed_policy
            SELECT * FROM queue.ack_batch('acme', ARRAY[[1, 2], [3, 4]]::bigint[])                              | p_ids
            SELECT * FROM queue.ack_batch('acme', ARRAY[1, 2]::bigint[], ARRAY[[1, 2]]::bigint[])               | p_lease_tokens
            SELECT queue.purge_dead_letters('acme', p_ids := ARRAY[[1], [2]]::bigint[])                         | p_ids
            SELECT * FROM queue.redrive_dead_letters('acme', p_ids := ARRAY[[1], [2]]::bigint[])                | p_ids
            SELECT * FROM queue.pull_any('acme', ARRAY[['email']])                                              | p_queues
            SELECT * FROM queue.pull_any('acme', ARRAY[['email', 'other'], ['third', 'fourth']])                | p_queues
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY[['{}'], ['{}']]::json[])                      | p_payloads
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}', '{}']::json[], p_unique_keys := ARRAY[['a', 'b']]) | p_unique_keys
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}', '{}']::json[], p_ordering_keys := ARRAY[['a', 'b']]) | p_ordering_keys
            SELECT * FROM queue.push_batch('acme', 'email', array_fill('{}'::json, ARRAY[1001]), p_ordering_keys := (SELECT array_agg('k' || i) FROM generate_series(1, 1001) i)) | p_ordering_keys
            SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{}', '{}']::json[], p_ordering_keys := ARRAY['a', E'b\\nc']) | p_ordering_keys[2]
            SELECT queue.cron_next_run('0 9 * * *', 'UTC', 'infinity')                                          | p_after
            SELECT queue.cron_next_run(repeat('1,', 600) || '1 9 * * *', 'UTC', now())                         | p_expression
            SELECT * FROM queue.rescue_expired('acme', 1001)                                                    | p_limit
            SELECT queue.cron_next_run('0 9 * * *', 'UTC', '-infinity')                                         | p_after
            SELECT queue.cron_next_run('0 9 * * *', 'UTC', '294276-12-31 00:00:00+00')                          | p_after
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "acme", "topics": ["work"], "worker": "x", "concurrency": -5, "in_flight": -9}]') | p_subscriptions[1].concurrency
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "acme", "topics": ["work"], "in_flight": 1.5}]') | p_subscriptions[1].in_flight
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "acme", "topics": ["work"], "concurrency": "4"}]') | p_subscriptions[1].concurrency
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := jsonb_build_array(jsonb_build_object('namespace', 'acme', 'topics', jsonb_build_array('work'), 'worker', repeat('w', 2000000)))) | p_subscriptions[1].worker
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "acme", "topics": ["work"], "worker": null}]') | p_subscriptions[1].worker
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "acme", "topics": ["work"]}, {"namespace": "acme", "topics": ["bad topic"]}]') | p_subscriptions[2].topics
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "acme", "topics": [7]}]') | p_subscriptions[1].topics
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := jsonb_build_array(jsonb_build_object('namespace', 'acme', 'topics', (SELECT jsonb_agg('t' || i) FROM generate_series(1, 65) i)))) | p_subscriptions[1].topics
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "ac me", "topics": []}]') | p_subscriptions[1].namespace
            SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '[{"namespace": "acme", "topics": [], "blob": "x"}]') | p_subscriptions[1]
            SELECT queue.worker_heartbeat(repeat('p', 2000000), 'h', 1, now())                                  | p_id
            SELECT queue.revoke_tenant('', '')                                                                  | p_namespace
            SELECT queue.revoke_tenant('acme'' OR ''1''=''1', 'ROLE')                                | p_namespace
            SELECT queue.revoke_tenant('acme', 'boundary_no_such_role')                                         | p_role
            SELECT queue.revoke_tenant('acme', '')                                                              | p_role
            SELECT queue.revoke_tenant('acme', 'ROLE'' OR ''1''=''1')                                | p_role
            SELECT queue.revoke_tenant('acme', NULL)                                                            | p_role
            SELECT queue.grant_tenant('acme', '')                                                               | p_role
            SELECT queue.grant_tenant('acme', 'ROLE' || repeat('x', 60))                             | p_role
            SELECT queue.delete_queue_policy('acme', repeat('q', 2000000))                                      | p_queue
            SELECT queue.delete_queue_policy('acme', NULL)                                                      | p_queue
            SELECT queue.may_use(NULL)                                                                          | p_namespace
            SELECT queue.may_use('')                                                                            | p_namespace
            SELECT * FROM queue.topic_overview('acme', p_max_topics := 1001)                                    | p_max_topics
            SELECT * FROM queue.topic_overview('acme', p_exact_up_to := 10001)                                  | p_exact_up_to
            """)
    void aValueThatUsedToFailRawIsRefusedNamingItsArgumentAndNothingChanges(String sql, String argument) {
        Map<String, String> before = everything();

        PSQLException error = db.error(sql.replace("HUGE", HUGE).replace("ROLE", role));

        assertThat(error.getSQLState()).as(error.getMessage()).isEqualTo("QU001");
        assertThat(error.getServerErrorMessage().getColumn()).as(error.getMessage()).isEqualTo(argument);
        assertThat(error.getServerErrorMessage().getMessage()).startsWith("invalid " + argument + ": expected ");
        assertThat(everything()).isEqualTo(before);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "SELECT queue.delete_queue_policy('acme', BIG)",
            "SELECT queue.may_use(BIG)",
            "SELECT queue.revoke_tenant(BIG, 'ROLE')",
            "SELECT queue.set_actor(BIG)",
            "SELECT queue.push('acme', 'email', '{}', p_unique_key := BIG)",
            "SELECT queue.cron_next_run('0 9 * * *', BIG, now())",
            "SELECT queue.cron_next_run('0 9 * * ' || BIG, 'UTC', now())",
            "SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := jsonb_build_array(BIG))"})
    void aHugeValueIsShownCutInTheError(String sql) {
        PSQLException error = db.error(sql.replace("BIG", "repeat('x', 2000000)").replace("ROLE", role));

        assertThat(error.getSQLState()).isEqualTo("QU001");
        assertThat(error.getServerErrorMessage().getMessage()).hasSizeLessThan(1000).contains("2000");
    }

    @Test
    void aRefusedHeartbeatStoresNoWorker() {
        db.error("SELECT queue.worker_heartbeat('bad-beat', 'h', 1, now(), p_subscriptions := "
                + "'[{\"namespace\": \"acme\", \"topics\": [\"work\"], \"worker\": \"x\", \"concurrency\": -5, \"in_flight\": -9}]')");

        assertThat(db.count("SELECT count(*) FROM queue.workers WHERE id = 'bad-beat'")).isZero();
    }

    @Test
    void aCallTakesTheLocksOfAtMostAThousandOrderingKeys() {
        String ns = "lockbound";
        for (String prefix : List.of("a", "b")) {
            db.rows("SELECT * FROM queue.push_batch(?, 'keyed', array_fill('{}'::json, ARRAY[550]), p_max_attempts := 1, "
                    + "p_ordering_keys := (SELECT array_agg(? || i) FROM generate_series(1, 550) i))", ns, prefix);
        }
        db.rows("SELECT * FROM queue.pull_batch(?, 'keyed', 1000)", ns);
        db.rows("SELECT * FROM queue.pull_batch(?, 'keyed', 1000)", ns);
        String running = "(SELECT array_agg(m.id) FROM queue.messages m WHERE m.namespace = 'lockbound')";
        Map<String, String> before = everything();

        PSQLException ack = db.error("SELECT * FROM queue.ack_batch('lockbound', " + running + ")");

        assertThat(ack.getSQLState()).isEqualTo("QU001");
        assertThat(ack.getServerErrorMessage().getColumn()).isEqualTo("p_ids");
        assertThat(ack.getServerErrorMessage().getMessage()).contains("1100 ordering keys");
        assertThat(everything()).isEqualTo(before);

        db.rows("SELECT queue.fail('lockbound', m.id) FROM queue.messages m WHERE m.namespace = 'lockbound'");
        before = everything();
        for (String sql : List.of("SELECT * FROM queue.redrive_dead_letters('lockbound', p_limit := 5000)",
                "SELECT queue.purge_dead_letters('lockbound', 'keyed', p_limit := 1101)")) {
            PSQLException error = db.error(sql);
            assertThat(error.getSQLState()).as(sql).isEqualTo("QU001");
            assertThat(error.getServerErrorMessage().getColumn()).as(sql).isEqualTo("p_limit");
            assertThat(everything()).as(sql).isEqualTo(before);
        }
        assertThat(db.rows("SELECT * FROM queue.redrive_dead_letters('lockbound', p_limit := 1000)")).singleElement()
                .satisfies(r -> assertThat(r.get("redriven")).isEqualTo(1000));
        assertThat(db.value("SELECT queue.purge_dead_letters('lockbound', p_limit := 5000)")).isEqualTo(100);
    }

    // ------------------------------------------------------------------ an explicit NULL means the default

    @Test
    void pullsTakeTheirDefaultLimitForNull() {
        db.rows("SELECT * FROM queue.push_batch('nullpull', 'email', array_fill('{}'::json, ARRAY[12]))");

        assertThat(db.rows("SELECT * FROM queue.pull_batch('nullpull', 'email', p_limit := NULL)")).hasSize(10);
        assertThat(db.rows("SELECT * FROM queue.pull_any('nullpull', ARRAY['email'], p_limit := NULL)")).hasSize(1);
    }

    @Test
    void readingFunctionsTakeTheirDefaultsForNull() {
        String ns = "nullread";
        db.rows("SELECT * FROM queue.push_batch(?, 'dead', array_fill('{}'::json, ARRAY[60]), p_max_attempts := 1)", ns);
        db.rows("SELECT queue.fail(?, p.id) FROM queue.pull_batch(?, 'dead', 60) p", ns, ns);
        // more audit rows than list_audit_log's default page
        db.rows("SELECT queue.pause_queue(?, 'q' || i) FROM generate_series(1, 110) i", ns);
        db.rows("SELECT queue.push('nullread-' || i, 'q', '{}') FROM generate_series(1, 105) i");

        Map<String, Integer> defaults = Map.of(
                "SELECT * FROM queue.list_dead_letters('nullread', p_limit := NULL)", 50,
                "SELECT * FROM queue.list_audit_log('nullread', p_limit := NULL)", 100,
                "SELECT * FROM queue.list_namespaces(NULL)", 100);
        defaults.forEach((sql, size) -> assertThat(db.rows(sql)).as(sql).hasSize(size));

        Map<String, String> sameAsDefault = new LinkedHashMap<>();
        sameAsDefault.put("SELECT * FROM queue.list_dead_letters('nullread', p_limit := NULL)",
                "SELECT * FROM queue.list_dead_letters('nullread')");
        sameAsDefault.put("SELECT * FROM queue.list_audit_log('nullread', p_after_id := NULL, p_limit := NULL)",
                "SELECT * FROM queue.list_audit_log('nullread')");
        sameAsDefault.put("SELECT * FROM queue.list_namespaces(NULL)", "SELECT * FROM queue.list_namespaces()");
        sameAsDefault.put("SELECT * FROM queue.find_messages('nullread', p_unique_key := 'k', p_window := NULL, p_limit := NULL)",
                "SELECT * FROM queue.find_messages('nullread', p_unique_key := 'k')");
        sameAsDefault.put("SELECT * FROM queue.topic_overview('nullread', NULL, NULL)",
                "SELECT * FROM queue.topic_overview('nullread')");
        sameAsDefault.put("SELECT * FROM queue.topic_rates('nullread', NULL)", "SELECT * FROM queue.topic_rates('nullread')");
        sameAsDefault.put("SELECT code, queue FROM queue.health('nullread', NULL, NULL, NULL, NULL, NULL, NULL, NULL) "
                + "WHERE namespace = 'nullread'", "SELECT code, queue FROM queue.health('nullread') WHERE namespace = 'nullread'");
        // both in one statement: one time (topic_rates counts by minute), one snapshot
        sameAsDefault.forEach((withNull, plain) -> assertThat(db.value("SELECT (SELECT json_agg(x)::text FROM (" + withNull
                + ") x) IS NOT DISTINCT FROM (SELECT json_agg(x)::text FROM (" + plain + ") x)")).as(withNull).isEqualTo(true));
        assertThat(db.rows("SELECT * FROM queue.topic_overview('nullread', NULL, NULL)")).isNotEmpty();
        assertThat(db.rows("SELECT code FROM queue.health('nullread', NULL, NULL, NULL, NULL, NULL, NULL, NULL)"))
                .extracting(r -> r.get("code")).contains("dead_letters_growing");
    }

    @Test
    void changingFunctionsTakeTheirDefaultsForNull() {
        String ns = "nullwrite";
        db.rows("SELECT * FROM queue.push_batch(?, 'dead', array_fill('{}'::json, ARRAY[4]), p_max_attempts := 1)", ns);
        db.rows("SELECT queue.fail(?, p.id) FROM queue.pull_batch(?, 'dead', 4) p", ns, ns);

        assertThat(db.rows("SELECT * FROM queue.redrive_dead_letters(?, 'dead', p_after_id := NULL, p_limit := NULL)", ns))
                .singleElement().satisfies(r -> assertThat(r.get("redriven")).isEqualTo(4));
        db.rows("SELECT queue.fail(?, p.id) FROM queue.pull_batch(?, 'dead', 4) p", ns, ns);
        assertThat(db.value("SELECT queue.purge_dead_letters(?, 'dead', p_limit := NULL)", ns)).isEqualTo(4);
        assertThat(db.rows("SELECT * FROM queue.rescue_expired(?, NULL)", ns)).hasSize(1);
        assertThat(db.rows("SELECT * FROM queue.tick_schedules(?, NULL)", ns)).isEmpty();
        assertThat(db.value("SELECT queue.prune_audit_log(NULL)")).isEqualTo(0);

        db.value("SELECT queue.worker_heartbeat('null-beat', 'h', 1, now(), p_subscriptions := NULL, p_interval := NULL, "
                + "p_remove_after := NULL)");
        assertThat(db.rows("SELECT subscriptions::text AS s, heartbeat_interval = interval '5 seconds' AS five "
                + "FROM queue.workers WHERE id = 'null-beat'")).singleElement().satisfies(r -> {
                    assertThat(r.get("s")).isEqualTo("[]");
                    assertThat(r.get("five")).isEqualTo(true);
                });
    }
}
