package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.Pull;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Rates in and out per topic (migration 15): publishes of a Java queue counted in memory and flushed, publishes
 * of the SQL API counted inline, completions from snapshots of the completion counters; and the bounded counts
 * of the overview.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TopicRatesTest {

    private HikariDataSource pool;
    private final List<String> schemas = new ArrayList<>();

    @BeforeAll
    void createPool() {
        pool = PostgresTestServer.newPool("rates-test", 6);
    }

    @AfterAll
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
        pool.close();
    }

    private PostgresQueueConfig config() {
        String schema = PostgresTestServer.freshSchema("rates");
        schemas.add(schema);
        return PostgresQueueConfig.defaults().schema(schema).listen(false);
    }

    private static long sum(List<PostgresOperator.TopicRate> rates, String topic, boolean published) {
        return rates.stream().filter(r -> r.topic().equals(topic))
                .mapToLong(r -> published ? r.published() : r.completed()).sum();
    }

    @Test
    void javaPublishesAndCompletionsShowAsRatesOfTheCurrentMinute() {
        PostgresQueueConfig config = config();
        PostgresOperator operator = PostgresOperator.create(pool, config.schema());
        try (PostgresQueue queue = PostgresQueue.create(pool, config)) {
            Namespace ns = queue.namespace("shop");
            for (int i = 0; i < 5; i++) {
                ns.publish("orders", "{}");
            }
            // a batch, with a duplicate that is not counted
            ns.publishAll(List.of(Message.to("orders").uniqueKey("k").json("{}"), Message.to("orders").uniqueKey("k").json("{}"),
                    Message.to("mails").json("{}")));
            for (int i = 0; i < 3; i++) {
                Delivery delivery = ns.pullOne(Pull.from("orders")).orElseThrow();
                ns.ack(delivery);
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                List<PostgresOperator.TopicRate> rates = operator.topicRates("shop", 60);
                assertThat(sum(rates, "orders", true)).isEqualTo(6);
                assertThat(sum(rates, "mails", true)).isEqualTo(1);
                assertThat(sum(rates, "orders", false)).isEqualTo(3);
            });
        }
        // the minute's snapshot of the completion counters was taken by a flush
        assertThat(StoreFixture.firstColumn(pool, "SELECT count(*) FROM \"" + config.schema() + "\".topic_completed"
                + " WHERE namespace = 'shop'")).isNotEqualTo(List.of(0L));
    }

    @Test
    void sqlPushesCountInlineAndTheOverviewCountsAreExactBelowTheCap() {
        PostgresQueueConfig config = config();
        PostgresOperator operator = PostgresOperator.create(pool, config.schema());
        operator.migrate();
        String q = "\"" + config.schema() + "\"";
        StoreFixture.firstColumn(pool, "SELECT " + q + ".push('sql', 'jobs', '{}'::json)");
        StoreFixture.firstColumn(pool, "SELECT id FROM " + q + ".push_batch('sql', 'jobs', ARRAY['{}', '{}', '{}']::json[],"
                + " p_unique_keys := ARRAY['a', 'a', 'b'])");
        StoreFixture.firstColumn(pool, "SELECT id FROM " + q + ".pull('sql', 'jobs')");

        List<PostgresOperator.TopicRate> rates = operator.topicRates("sql", 5);
        assertThat(sum(rates, "jobs", true)).isEqualTo(3);
        assertThat(rates).allSatisfy(r -> assertThat(r.minute().getEpochSecond() % 60).isZero());

        PostgresOperator.TopicStats jobs = operator.topics("sql").get(0);
        assertThat(jobs.topic()).isEqualTo("jobs");
        assertThat(jobs.pending()).isEqualTo(2);
        assertThat(jobs.running()).isEqualTo(1);
        assertThat(jobs.exact()).isTrue();
        assertThat(jobs.oldestDueAt()).isNotNull();
        assertThat(operator.stats("sql")).isEqualTo(new PostgresOperator.Stats(3, 2, 1, 0, 0, 1, true));
    }

    @Test
    void aTenantReadsAndFlushesTheRatesOfItsOwnNamespacesOnly() throws Exception {
        PostgresQueueConfig config = config();
        String q = "\"" + config.schema() + "\"";
        PostgresOperator.create(pool, config.schema()).migrate();
        for (String ns : List.of("acme", "globex")) {
            StoreFixture.firstColumn(pool, "SELECT " + q + ".push('" + ns + "', 'jobs', '{}'::json)");
            StoreFixture.firstColumn(pool, "SELECT " + q + ".ack('" + ns + "', id) FROM " + q + ".pull('" + ns + "', 'jobs')");
        }
        try (TenantRoles roles = new TenantRoles(config.schema())) {
            javax.sql.DataSource acme = roles.dataSource(roles.tenant("acme", "acme"));
            assertThat(StoreFixture.firstColumn(acme, "SELECT sum(published) + sum(completed) FROM " + q + ".topic_rates('acme')"))
                    .containsExactly(java.math.BigDecimal.valueOf(2));
            assertThatThrownBy(() -> StoreFixture.firstColumn(acme, "SELECT * FROM " + q + ".topic_rates('globex')"))
                    .rootCause().hasMessageContaining("\"globex\" is not granted")
                    .satisfies(e -> assertThat(((java.sql.SQLException) e).getSQLState()).isEqualTo("QU005"));
            assertThatThrownBy(() -> StoreFixture.firstColumn(acme, "SELECT " + q + ".engine_record_rates(ARRAY['globex'],"
                    + " ARRAY['jobs'], ARRAY[5::bigint], NULL)"))
                    .satisfies(e -> assertThat(((java.sql.SQLException) e.getCause()).getSQLState()).isEqualTo("QU005"));
            // the tenant's flush records the completion counters it may see: its own namespace's
            StoreFixture.firstColumn(acme, "SELECT " + q + ".engine_record_rates(ARRAY['acme'], ARRAY['jobs'], ARRAY[5::bigint], NULL)");
            assertThat(StoreFixture.firstColumn(pool, "SELECT namespace FROM " + q + ".topic_completed WHERE minute > '-infinity'"))
                    .containsExactly("acme");
            assertThat(StoreFixture.firstColumn(pool, "SELECT sum(published)::int FROM " + q + ".topic_published WHERE namespace = 'acme'"))
                    .containsExactly(6);
        }
    }

    @Test
    void minutesOutOfRangeAreRefusedWithTheValue() {
        PostgresOperator operator = PostgresOperator.create(pool, "queue_unused");
        assertThatThrownBy(() -> operator.topicRates("shop", 0)).isInstanceOf(InvalidInputException.class).hasMessageContaining("0");
        assertThatThrownBy(() -> operator.topicRates("shop", 121)).isInstanceOf(InvalidInputException.class).hasMessageContaining("121");
    }
}
