package dev.queue.postgres;

import dev.queue.api.Subscriber;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The application process {@link ProcessCrashTest} kills: subscribes to a topic on the named server and schema
 * and prints {@code handled <id>} for every message its handler runs, until it is killed. Arguments:
 * JDBC URL (credentials in it), schema, topic.
 */
public final class CrashingWorker {

    private CrashingWorker() {
    }

    public static void main(String[] args) throws InterruptedException {
        String url = args[0];
        String schema = args[1];
        String topic = args[2];
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        PostgresQueue queue = PostgresQueue.connect(url, null, null, PostgresQueueConfig.defaults().schema(schema).poolSize(4));
        queue.defaultNamespace().subscribe(Subscriber.on(topic).concurrency(8).lease(Duration.ofSeconds(2)).handleDelivery((delivery, ctx) -> {
            // The handler's work (not a wait on a condition): 2 ms per message, so that some are always in
            // flight when the process dies.
            Thread.sleep(2);
            out.println("handled " + delivery.id().value());
        }));
        Thread.currentThread().join(); // until killed; never closes the queue
    }
}
