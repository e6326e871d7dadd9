package dev.queue.postgres;

import dev.queue.api.Delivery;
import dev.queue.api.MessageId;

import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the handlers of a test that shares messages among replicas saw: each delivery counted, and a violation noted
 * when a message is handled while another handler holds it or delivered a second time. For tests whose leases
 * outlast the test, so no message may run twice.
 */
final class HandledOnce {

    final Map<MessageId, AtomicInteger> handled = new ConcurrentHashMap<>();
    final Map<MessageId, Long> firstHandledNanos = new ConcurrentHashMap<>();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final AtomicInteger total = new AtomicInteger();
    private final Set<MessageId> inFlight = ConcurrentHashMap.newKeySet();

    /** Records one delivery by the handler named {@code handler}. */
    void record(Delivery delivery, String handler) {
        if (!inFlight.add(delivery.id())) {
            violations.add(delivery.id() + " handled by " + handler + " while another handler held it");
        }
        if (delivery.attempt() != 1) {
            violations.add(delivery.id() + " delivered again (attempt " + delivery.attempt() + ")");
        }
        handled.computeIfAbsent(delivery.id(), id -> new AtomicInteger()).incrementAndGet();
        firstHandledNanos.putIfAbsent(delivery.id(), System.nanoTime());
        inFlight.remove(delivery.id());
        total.incrementAndGet();
    }
}
