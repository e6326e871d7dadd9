package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.InvalidInputException;
import dev.queue.api.ScheduleNotFoundException;
import dev.queue.api.Subscriber;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** A running PostgresQueue registers itself in the workers table, and the operator reads what the SQL API says. */
class PostgresOperatorTest {

    private String schema;
    private HikariDataSource pool;
    private PostgresOperator operator;

    @BeforeEach
    void setUp() {
        schema = PostgresTestServer.freshSchema("ops");
        pool = PostgresTestServer.newPool("ops", 4);
        operator = PostgresOperator.create(pool, schema);
        operator.migrate();
    }

    @AfterEach
    void tearDown() {
        pool.close();
        PostgresTestServer.dropSchema(schema);
    }

    @Test
    void aSubscribingQueueIsALiveWorkerWithItsTopicsAndInFlightAndLeavesWhenClosed() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        PostgresQueue queue = PostgresQueue.create(pool, PostgresQueueConfig.defaults().schema(schema));
        try {
            assertThat(operator.workers(null)).as("nothing subscribes yet").isEmpty();
            queue.namespace("acme").subscribe(Subscriber.on("email").concurrency(2).worker("mailer-1").handleDelivery((d, ctx) -> {
                started.countDown();
                release.await(20, TimeUnit.SECONDS);
            }));
            long id = queue.namespace("acme").publish("email", "{}").value();
            assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(operator.workers("acme")).singleElement()
                    .satisfies(w -> {
                        assertThat(w.status()).isEqualTo("alive");
                        assertThat(w.pid()).isEqualTo(ProcessHandle.current().pid());
                        assertThat(w.topics()).containsExactly("acme/email");
                        assertThat(w.concurrency()).isEqualTo(2);
                        assertThat(w.inFlight()).isEqualTo(1);
                        assertThat(w.listener()).isEqualTo("LISTENING");
                    }));
            PostgresOperator.Explanation explained = operator.explain("acme", id);
            assertThat(explained.verdict()).startsWith("running on worker mailer-1");
            assertThat(explained.workerAlive()).isTrue();
            assertThat(operator.health("acme")).isEmpty();
        } finally {
            release.countDown();
            queue.close();
        }
        assertThat(operator.workers(null)).as("closing removes the entry").isEmpty();
    }

    @Test
    void badArgumentsAreRefusedNamingTheValue() {
        assertThatThrownBy(() -> operator.health("bad namespace")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("namespace").hasMessageContaining("bad namespace");
        assertThatThrownBy(() -> operator.deadLetters("acme", null, 0, 5000)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("limit").hasMessageContaining("5000");
        assertThatThrownBy(() -> operator.purgeDeadLetters("acme", "t", List.of(1L), 10, "me")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("either ids or a topic");
        assertThatThrownBy(() -> operator.pauseSchedule("acme", "nope", "me")).isInstanceOf(ScheduleNotFoundException.class);
        assertThatThrownBy(() -> PostgresOperator.connect("mysql://x", null, null, "queue")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("mysql://x");
    }
}
