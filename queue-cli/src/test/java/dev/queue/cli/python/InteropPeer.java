package dev.queue.cli.python;

import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java side of the Python client's interoperability tests, started by them as a process:
 * {@code publish <jdbc-url> <namespace> <topic> <count>} publishes {@code {"seq": i, "from": "java"}} for i from 0
 * through the Java API; {@code handle <jdbc-url> <namespace> <topic> <count> <timeout-seconds>} subscribes until
 * {@code count} distinct sequence numbers were handled, waits two seconds more for duplicates, and prints one line
 * {@code handled=<n> distinct=<n> duplicates=<n>}.
 */
public final class InteropPeer {

    private static final Pattern SEQUENCE = Pattern.compile("\"seq\"\\s*:\\s*(\\d+)");

    private InteropPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: InteropPeer publish|handle <jdbc-url> <namespace> <topic> <count> [timeout-seconds]");
            System.exit(2);
        }
        String jdbcUrl = args[1];
        int count = Integer.parseInt(args[4]);
        try (PostgresQueue queue = PostgresQueue.connect(jdbcUrl, null, null, PostgresQueueConfig.defaults())) {
            Namespace namespace = queue.namespace(args[2]);
            switch (args[0]) {
                case "publish" -> publish(namespace, args[3], count);
                case "handle" -> handle(namespace, args[3], count, Integer.parseInt(args[5]));
                default -> {
                    System.err.println("unknown mode " + args[0] + ": expected publish or handle");
                    System.exit(2);
                }
            }
        }
    }

    private static void publish(Namespace namespace, String topic, int count) {
        List<Message> batch = new ArrayList<>();
        for (int seq = 0; seq < count; seq++) {
            batch.add(Message.to(topic).json("{\"seq\": " + seq + ", \"from\": \"java\"}"));
            if (batch.size() == 500 || seq == count - 1) {
                namespace.publishAll(batch);
                batch.clear();
            }
        }
        System.out.println("published=" + count);
    }

    private static void handle(Namespace namespace, String topic, int count, int timeoutSeconds) throws Exception {
        Map<Integer, AtomicInteger> seen = new ConcurrentHashMap<>();
        AtomicInteger handled = new AtomicInteger();
        Subscription subscription = namespace.subscribe(Subscriber.on(topic).concurrency(8).handleDelivery((delivery, context) -> {
            Matcher matcher = SEQUENCE.matcher(delivery.json());
            if (!matcher.find()) {
                throw new IllegalArgumentException("no seq in " + delivery.json());
            }
            seen.computeIfAbsent(Integer.parseInt(matcher.group(1)), s -> new AtomicInteger()).incrementAndGet();
            handled.incrementAndGet();
        }));
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        while (seen.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        // a duplicate would come from a second claim of a message already handled: give it time to show
        Thread.sleep(2000);
        subscription.close();
        int duplicates = handled.get() - seen.size();
        System.out.println("handled=" + handled.get() + " distinct=" + seen.size() + " duplicates=" + duplicates);
    }
}
