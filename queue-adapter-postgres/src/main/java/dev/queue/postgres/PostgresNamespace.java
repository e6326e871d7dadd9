package dev.queue.postgres;

import dev.queue.api.DeadLetters;
import dev.queue.api.Delivery;
import dev.queue.api.FlowControl;
import dev.queue.api.Message;
import dev.queue.api.MessageContext;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.Namespace;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.PayloadCodec;
import dev.queue.api.PublishResult;
import dev.queue.api.Pull;
import dev.queue.api.Schedules;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;

import java.sql.Connection;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A namespace of a {@link PostgresQueue}: everything a {@link Namespace} does, and besides that publishing and
 * acknowledging on the caller's own connection, inside the caller's transaction.
 */
public final class PostgresNamespace implements Namespace {

    private final Namespace namespace;
    private final PostgresQueue queue;

    PostgresNamespace(Namespace namespace, PostgresQueue queue) {
        this.namespace = namespace;
        this.queue = queue;
    }

    /**
     * Publishes on the caller's connection and transaction: the message becomes visible, and subscribers are
     * woken (the NOTIFY is part of the same transaction), only when the caller commits; a rollback leaves neither
     * a row nor a wake-up. Validates like {@link #publish(Message)}; never commits, rolls back or closes the
     * connection. With auto-commit on, the statement commits by itself.
     */
    public PublishResult publish(Connection connection, Message message) {
        return publishAll(connection, java.util.Collections.singletonList(message)).get(0);
    }

    /** Like {@link #publish(Connection, Message)} for many messages, in one statement. */
    public List<PublishResult> publishAll(Connection connection, List<Message> messages) {
        return queue.publishOn(connection, name(), messages);
    }

    /**
     * Completes a delivery inside the caller's transaction: the message is done when the caller commits, and still
     * held by the delivery's lease if it rolls back. {@link Outcome#ACKED}, or {@link Outcome#LEASE_LOST} when the
     * caller no longer holds it in this namespace (nothing changed).
     */
    public Outcome ack(Connection connection, Delivery delivery) {
        return queue.ackOn(connection, name(), delivery);
    }

    /**
     * Completes the message a handler runs inside the handler's own transaction (see
     * {@link #ack(Connection, Delivery)}), and tells the subscription so: its own acknowledgement after the handler
     * returns then does not count as a lost lease.
     */
    public Outcome ack(Connection connection, MessageContext context) {
        return queue.ackOn(connection, name(), context);
    }

    @Override
    public String name() {
        return namespace.name();
    }

    @Override
    public MessageId publish(String topic, Object payload) {
        return namespace.publish(topic, payload);
    }

    @Override
    public PublishResult publish(Message message) {
        return namespace.publish(message);
    }

    @Override
    public List<PublishResult> publishAll(List<Message> messages) {
        return namespace.publishAll(messages);
    }

    @Override
    public List<Delivery> pull(Pull pull) {
        return namespace.pull(pull);
    }

    @Override
    public Outcome ack(Delivery delivery) {
        return namespace.ack(delivery);
    }

    @Override
    public Map<MessageId, Outcome> ackAll(Collection<Delivery> deliveries) {
        return namespace.ackAll(deliveries);
    }

    @Override
    public Outcome nack(Delivery delivery, String error) {
        return namespace.nack(delivery, error);
    }

    @Override
    public Outcome nack(Delivery delivery, String error, Duration delay) {
        return namespace.nack(delivery, error, delay);
    }

    @Override
    public Outcome fail(Delivery delivery, String error) {
        return namespace.fail(delivery, error);
    }

    @Override
    public Outcome extend(Delivery delivery, Duration duration) {
        return namespace.extend(delivery, duration);
    }

    @Override
    public Outcome snooze(Delivery delivery, Duration delay) {
        return namespace.snooze(delivery, delay);
    }

    @Override
    public Subscription subscribe(Subscriber<?> subscriber) {
        return namespace.subscribe(subscriber);
    }

    @Override
    public DeadLetters deadLetters() {
        return namespace.deadLetters();
    }

    @Override
    public FlowControl flowControl() {
        return namespace.flowControl();
    }

    @Override
    public Schedules schedules() {
        return namespace.schedules();
    }

    @Override
    public Optional<MessageInfo> inspect(MessageId id) {
        return namespace.inspect(id);
    }

    @Override
    public NamespaceStats stats() {
        return namespace.stats();
    }

    @Override
    public PayloadCodec codec() {
        return namespace.codec();
    }

    @Override
    public String toString() {
        return "PostgresNamespace[" + name() + "]";
    }
}
