package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.observation.PublishEvent;
import dev.queue.api.observation.PublishObservation;
import dev.queue.api.observation.QueueInterceptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A publish on the caller's connection is observed like any other, says it is in the caller's transaction, and
 * stores the headers interceptors add with the caller's commit.
 */
class TransactionalPublishObservationTest {

    private final List<String> events = new CopyOnWriteArrayList<>();
    private final String schema = PostgresTestServer.freshSchema("observed");
    private PostgresQueue queue;

    @AfterEach
    void close() {
        queue.close();
        PostgresTestServer.dropSchema(schema);
    }

    @Test
    void aPublishInTheCallersTransactionIsObservedAndCarriesTheAddedHeaders() throws Exception {
        queue = PostgresQueue.create(PostgresTestServer.dataSource(), PostgresQueueConfig.defaults().schema(schema)
                .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofSeconds(1)).interceptor(new QueueInterceptor() {
                    @Override
                    public PublishObservation onPublish(PublishEvent publish) {
                        events.add("publish " + publish.namespace() + " caller-tx=" + publish.inCallerTransaction());
                        publish.headerOnEach("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
                        return new PublishObservation() {
                            @Override
                            public void published(PublishEvent event, List<PublishResult> results) {
                                events.add("published " + results.get(0).id());
                            }
                        };
                    }
                })));
        PublishResult result;
        try (Connection connection = PostgresTestServer.dataSource().getConnection()) {
            connection.setAutoCommit(false);
            result = queue.defaultNamespace().publish(connection, Message.to("order.paid").json("{\"order\":1}"));
            assertThat(queue.defaultNamespace().inspect(result.id())).as("invisible before the commit").isEmpty();
            connection.commit();
        }

        assertThat(events).containsExactly("publish default caller-tx=true", "published " + result.id());
        assertThat(queue.defaultNamespace().inspect(result.id()).orElseThrow().headers())
                .containsEntry("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    }
}
