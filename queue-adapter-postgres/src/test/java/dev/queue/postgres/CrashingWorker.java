package dev.queue.postgres;

import dev.queue.api.Subscriber;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The application process {@link ProcessCrashTest} kills: subscribes to a topic on the named server and schema
 * and prints {@code handled <id>} for every message its handler completes, until it is killed. After the given
 * number of messages its handlers hang, as a process's can before it dies, so that messages are certainly
 * running when the kill comes, however fast the machine. Arguments: JDBC URL (credentials in it), schema, topic,
 * how many messages to complete.
 */
public final class CrashingWorker {

    private CrashingWorker() {
    }

    public static void main(String[] args) throws InterruptedException {
        String url = args[0];
        String schema = args[1];
        String topic = args[2];
        int complete = Integer.parseInt(args[3]);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        AtomicInteger started = new AtomicInteger();
        CountDownLatch never = new CountDownLatch(1);
        PostgresQueue queue = PostgresQueue.connect(url, null, null, PostgresQueueConfig.defaults().schema(schema).poolSize(4));
        queue.defaultNamespace().subscribe(Subscriber.on(topic).concurrency(8).lease(Duration.ofSeconds(2)).handleDelivery((delivery, ctx) -> {
            if (started.incrementAndGet() > complete) {
                never.await(); // hangs until the process is killed; its lease is extended meanwhile
            }
            // The handler's work (not a wait on a condition): 2 ms per message.
            Thread.sleep(2);
            out.println("handled " + delivery.id().value());
        }));
        Thread.currentThread().join(); // until killed; never closes the queue
    }
}
