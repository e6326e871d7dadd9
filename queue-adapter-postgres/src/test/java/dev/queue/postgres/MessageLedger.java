package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.QueueException;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a test of an outage published and handled: producers publish one message at a time until stopped, a
 * handler records each delivery. A publish whose call failed with a {@link QueueException} is not counted as
 * published (it may still have committed, and is then handled without being owed); what was published and never
 * handled is lost, and each extra delivery is a duplicate.
 */
final class MessageLedger {

    private final Map<MessageId, AtomicInteger> deliveries = new ConcurrentHashMap<>();
    private final Map<MessageId, Boolean> published = new ConcurrentHashMap<>();
    private final AtomicInteger publishFailures = new AtomicInteger();
    private final List<Throwable> unexpected = new CopyOnWriteArrayList<>();
    private final AtomicBoolean producing = new AtomicBoolean(true);
    private final AtomicLong lastPublishNanos = new AtomicLong();
    private final List<Thread> producers = new CopyOnWriteArrayList<>();

    /** The handler's part: records one delivery of {@code id}. */
    void handled(MessageId id) {
        deliveries.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    }

    /** Starts a producer publishing to {@code topic}, pausing {@code pauseMillis} between publishes. */
    void produce(Namespace ns, String topic, long pauseMillis) {
        Thread producer = new Thread(() -> {
            int i = 0;
            while (producing.get()) {
                try {
                    published.put(ns.publish(Message.to(topic).json("{\"n\":" + i++ + "}")).id(), Boolean.TRUE);
                    lastPublishNanos.set(System.nanoTime());
                } catch (QueueException e) {
                    publishFailures.incrementAndGet();
                } catch (RuntimeException e) {
                    unexpected.add(e);
                }
                if (pauseMillis > 0) {
                    try {
                        Thread.sleep(pauseMillis);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "ledger-producer-" + producers.size());
        producers.add(producer);
        producer.start();
    }

    void stopProducing() throws InterruptedException {
        producing.set(false);
        for (Thread producer : producers) {
            producer.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    int published() {
        return published.size();
    }

    int handled() {
        return deliveries.size();
    }

    int publishFailures() {
        return publishFailures.get();
    }

    /** When the last publish returned ({@link System#nanoTime()}), 0 before the first. */
    long lastPublishNanos() {
        return lastPublishNanos.get();
    }

    /** Published and never handled. */
    long lost() {
        return published.keySet().stream().filter(id -> !deliveries.containsKey(id)).count();
    }

    /** Deliveries beyond the first, over every message. */
    long duplicates() {
        return deliveries.values().stream().mapToInt(count -> count.get() - 1).sum();
    }

    List<Throwable> unexpected() {
        return unexpected;
    }
}
