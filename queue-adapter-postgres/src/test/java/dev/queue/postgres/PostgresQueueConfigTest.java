package dev.queue.postgres;

import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.api.QueueOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PostgresQueueConfigTest {

    @Test
    void toStringNamesEveryFieldAndTheQueueOptionsTheirs() {
        String shown = PostgresQueueConfig.defaults().clock(new ManualClock(java.time.Instant.parse("2030-01-01T00:00:00Z"))).toString();
        for (Class<?> type : java.util.List.of(PostgresQueueConfig.class, QueueOptions.class)) {
            for (java.lang.reflect.Field field : type.getDeclaredFields()) {
                if (!java.lang.reflect.Modifier.isStatic(field.getModifiers())) {
                    assertThat(shown).as("%s.%s", type.getSimpleName(), field.getName()).contains(field.getName() + "=");
                }
            }
        }
        assertThat(shown).contains("clock=manual 2030-01-01T00:00:00Z");
    }

    @Test
    void defaultsAreDocumented() {
        PostgresQueueConfig config = PostgresQueueConfig.defaults();

        assertThat(config.schema()).isEqualTo("queue");
        assertThat(config.channel()).isEqualTo("queue_wakeup");
        assertThat(config.poolSize()).isEqualTo(10);
        assertThat(config.migrateOnStart()).isTrue();
        assertThat(config.completedRetention()).isEqualTo(CompletedRetention.DELETE);
        assertThat(config.listen()).isTrue();
        assertThat(config.clock()).isNull();
        assertThat(config.durableAcknowledgements()).isFalse();
        assertThat(config.actor()).isNull();
        assertThat(config.queueOptions().defaultMaxAttempts()).isEqualTo(QueueOptions.DEFAULT_MAX_ATTEMPTS);
    }

    @Test
    void settersReturnNewInstancesAndLeaveTheOriginalAlone() {
        PostgresQueueConfig base = PostgresQueueConfig.defaults();
        ManualClock clock = ManualClock.startingNow();

        PostgresQueueConfig changed = base.schema("billing_queue").poolSize(3).migrateOnStart(false)
                .completedRetention(CompletedRetention.ARCHIVE).listen(false).clock(clock)
                .queueOptions(QueueOptions.defaults().defaultMaxAttempts(5)).durableAcknowledgements(true);

        assertThat(base.schema()).isEqualTo("queue");
        assertThat(changed.schema()).isEqualTo("billing_queue");
        assertThat(changed.poolSize()).isEqualTo(3);
        assertThat(changed.migrateOnStart()).isFalse();
        assertThat(changed.completedRetention()).isEqualTo(CompletedRetention.ARCHIVE);
        assertThat(changed.listen()).isFalse();
        assertThat(changed.clock()).isSameAs(clock);
        assertThat(changed.queueOptions().defaultMaxAttempts()).isEqualTo(5);
        assertThat(changed.durableAcknowledgements()).isTrue();
        assertThat(base.durableAcknowledgements()).isFalse();
        // every other setter carries the choice over
        assertThat(changed.schema("other").poolSize(4).listen(true).notifyWindow(Duration.ZERO)
                .vacuumInterval(Duration.ZERO).durableAcknowledgements()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "Queue", "1queue", "pg_queue", "queue-x", "que ue", "q\"; DROP TABLE x; --",
            "a_name_that_is_much_too_long_for_a_queue_schema_abcdefgh"})
    void rejectsSchemaNamesThatAreNotPlainLowerCaseIdentifiers(String schema) {
        assertThatThrownBy(() -> PostgresQueueConfig.defaults().schema(schema))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("schema")
                .satisfies(e -> assertThat(((InvalidInputException) e).argument()).isEqualTo("schema"));
    }

    @Test
    void acceptsPlainIdentifiers() {
        assertThat(PostgresQueueConfig.defaults().schema("_q2").schema()).isEqualTo("_q2");
        assertThat(PostgresQueueConfig.defaults().schema("a".repeat(50)).schema()).hasSize(50);
    }

    @Test
    void rejectsOtherBadValuesNamingThePropertyAndTheValue() {
        assertThatThrownBy(() -> PostgresQueueConfig.defaults().schema(null)).hasMessageContaining("schema").hasMessageContaining("null");
        assertThatThrownBy(() -> PostgresQueueConfig.defaults().poolSize(0)).hasMessageContaining("poolSize").hasMessageContaining("0");
        assertThatThrownBy(() -> PostgresQueueConfig.defaults().poolSize(1001)).hasMessageContaining("poolSize").hasMessageContaining("1001");
        assertThatThrownBy(() -> PostgresQueueConfig.defaults().queueOptions(null)).hasMessageContaining("queueOptions");
        assertThatThrownBy(() -> PostgresQueueConfig.defaults().completedRetention(null)).hasMessageContaining("completedRetention");
    }

    @Test
    void validateChecksTheQueueOptionsTooAndAcceptsTheDefaults() {
        PostgresQueueConfig defaults = PostgresQueueConfig.defaults();
        assertThat(defaults.validate()).isSameAs(defaults);
        PostgresQueueConfig badOptions = PostgresQueueConfig.defaults()
                .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(1)));

        assertThatThrownBy(badOptions::validate)
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("sweepInterval")
                .hasMessageContaining("PT0.001S");
    }

    @Test
    void connectRefusesBadOptionsBeforeItTriesToConnect() {
        PostgresQueueConfig badOptions = PostgresQueueConfig.defaults()
                .queueOptions(QueueOptions.defaults().defaultMaxAttempts(0));

        // Nothing listens on port 1: a queue that connected first would fail with StoreUnavailableException.
        assertThatThrownBy(() -> PostgresQueue.connect("jdbc:postgresql://127.0.0.1:1/none", "nobody", "none", badOptions))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("defaultMaxAttempts")
                .hasMessageContaining("got: 0");
    }
}
