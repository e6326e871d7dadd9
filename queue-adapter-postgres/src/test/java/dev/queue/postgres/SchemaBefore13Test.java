package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Namespace;
import dev.queue.api.Pull;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A schema another tool migrated up to version 12 (before the engine's gates): the queue, run as its owner, falls
 * back to the statements of that version for dead letters and the attempt history.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SchemaBefore13Test {

    private String schema;

    @BeforeAll
    void migrateUpToTwelveLikeFlyway() throws SQLException {
        schema = PostgresTestServer.freshSchema("before13");
        try (Connection connection = PostgresTestServer.dataSource().getConnection();
             Statement statement = connection.createStatement()) {
            for (SchemaMigrator.Migration migration : SchemaMigrator.MIGRATIONS) {
                if (migration.version() <= 12) {
                    statement.execute(SchemaMigrator.read(migration.resource()).replace("${schema}", schema));
                }
            }
        }
    }

    @AfterAll
    void dropSchema() {
        PostgresTestServer.dropSchema(schema);
    }

    @Test
    void deadLettersAndTheAttemptHistoryWorkOnTheStatementsOfVersionTwelve() {
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).listen(false).migrateOnStart(false);
        try (PostgresQueue queue = PostgresQueue.create(PostgresTestServer.dataSource(), config)) {
            Namespace ns = queue.namespace("older");
            MessageId first = ns.publish(Message.to("t").json("{}").maxAttempts(1)).id();
            MessageId second = ns.publish(Message.to("t").json("{}").maxAttempts(1)).id();
            ns.fail(ns.pullOne(Pull.from("t").worker("w1")).orElseThrow(), "first failure");
            ns.fail(ns.pullOne(Pull.from("t").worker("w2")).orElseThrow(), "second failure");

            MessageInfo dead = ns.inspect(first).orElseThrow();
            assertThat(dead.state()).isEqualTo(MessageState.DEAD);
            assertThat(dead.attemptHistory()).extracting(a -> a.attempt() + " " + a.error() + " " + a.worker())
                    .containsExactly("1 first failure w1");

            assertThat(ns.deadLetters().redrive(first)).isTrue();
            assertThat(ns.inspect(first).orElseThrow().state()).isEqualTo(MessageState.PENDING);
            assertThat(ns.deadLetters().purge(second)).isTrue();
            assertThat(ns.inspect(second)).isEmpty();
        }
    }
}
