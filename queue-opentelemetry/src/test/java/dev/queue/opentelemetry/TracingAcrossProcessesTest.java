package dev.queue.opentelemetry;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two processes, as far as tracing can tell: a publisher with its own SDK and queue, closed before a consumer with
 * another SDK and queue opens the same schema. Only the row's headers carry the trace from one to the other. Runs
 * on an embedded PostgreSQL, or on the server {@code QUEUE_TEST_DATABASE_URL} names.
 */
class TracingAcrossProcessesTest {

    private static EmbeddedPostgres embedded;
    private static DataSource dataSource;

    @BeforeAll
    static void startDatabase() throws IOException {
        String url = System.getenv("QUEUE_TEST_DATABASE_URL");
        if (url != null && !url.isBlank()) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(url.strip());
            dataSource = ds;
        } else {
            embedded = EmbeddedPostgres.start();
            dataSource = embedded.getPostgresDatabase();
        }
    }

    @AfterAll
    static void stopDatabase() throws IOException {
        if (embedded != null) {
            embedded.close();
        }
    }

    @Test
    void aHandlerInAnotherProcessContinuesTheTraceReadFromTheStoredMessage() {
        String schema = "otel_" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
        MessageId id;
        SpanData producer;
        SpanData request;
        try (TracingSdk publisherTracing = new TracingSdk();
             Queue publisher = open(schema, publisherTracing)) {
            Span span = publisherTracing.sdk.getTracer("app").spanBuilder("POST /orders").startSpan();
            try (Scope ignored = span.makeCurrent()) {
                id = publisher.namespace("shop").publish(Message.to("orders").json("{\"order\":7}")).id();
            } finally {
                span.end();
            }
            List<SpanData> spans = publisherTracing.awaitSpans(2);
            producer = publisherTracing.named(spans, "publish orders");
            request = publisherTracing.named(spans, "POST /orders");
        }

        try (TracingSdk consumerTracing = new TracingSdk();
             Queue consumer = open(schema, consumerTracing)) {
            assertThat(consumer.namespace("shop").inspect(id).orElseThrow().headers()).containsKey("traceparent");
            consumer.namespace("shop").subscribe(Subscriber.on("orders").handleDelivery((delivery, context) -> { }));

            SpanData process = consumerTracing.awaitSpans(1).get(0);

            assertThat(process.getName()).isEqualTo("process orders");
            assertThat(process.getTraceId()).isEqualTo(request.getTraceId());
            assertThat(process.getParentSpanId()).isEqualTo(producer.getSpanId());
            assertThat(process.getParentSpanContext().isRemote()).isTrue();
            assertThat(process.getAttributes().get(QueueTracing.MESSAGE_ID)).isEqualTo(id.toString());
            assertThat(process.getAttributes().get(QueueTracing.OUTCOME)).isEqualTo("acked");
        } finally {
            dropSchema(schema);
        }
    }

    /** The embedded server goes away with the test; a server named by the environment keeps nothing of it either. */
    private static void dropSchema(String schema) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
        } catch (SQLException e) {
            throw new IllegalStateException("could not drop schema " + schema, e);
        }
    }

    private static Queue open(String schema, TracingSdk tracing) {
        return PostgresQueue.create(dataSource, PostgresQueueConfig.defaults().schema(schema)
                .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(100))
                        .interceptor(QueueTracing.create(tracing.sdk))));
    }
}
