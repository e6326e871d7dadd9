package dev.queue.api.observation;

import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One publish call about to happen: the namespace and the messages, in order. Interceptors may add headers (trace
 * context, a correlation id); the queue validates and stores the messages as they stand after every interceptor
 * has seen them. Used by one publishing thread at a time.
 */
public final class PublishEvent {

    private final String namespace;
    private final List<Message> messages;
    private final List<Message> view;
    private final boolean inCallerTransaction;

    /**
     * An event for a publish call; the queue makes these, adapters and tests may too.
     *
     * @param namespace           the namespace published to
     * @param messages            the messages, in order (copied)
     * @param inCallerTransaction whether they are written on the caller's connection and transaction
     * @throws InvalidInputException when {@code messages} is null
     */
    public PublishEvent(String namespace, List<Message> messages, boolean inCallerTransaction) {
        this.namespace = namespace;
        this.messages = new ArrayList<>(InvalidInputException.requireNonNull(messages, "messages", "a list of messages"));
        this.view = Collections.unmodifiableList(this.messages);
        this.inCallerTransaction = inCallerTransaction;
    }

    /**
     * The namespace published to.
     *
     * @return the namespace name
     */
    public String namespace() {
        return namespace;
    }

    /**
     * The messages as they stand now, headers added so far included.
     *
     * @return an unmodifiable view, in publish order
     */
    public List<Message> messages() {
        return view;
    }

    /**
     * True when the messages are written on the caller's connection: they are stored only if the caller's
     * transaction commits, after {@link PublishObservation#published} has been called.
     *
     * @return true inside the caller's transaction
     */
    public boolean inCallerTransaction() {
        return inCallerTransaction;
    }

    /**
     * Sets a header of the message at {@code index}, replacing a header of that name. The header is checked with
     * the message when it is published, under the rules of {@link Message#header(String, String)}.
     *
     * @param index the message's position, from 0
     * @param name  the header name
     * @param value the header value
     * @throws InvalidInputException when {@code index} is out of range
     */
    public void header(int index, String name, String value) {
        if (index < 0 || index >= messages.size()) {
            throw new InvalidInputException("index", index, "0 to " + (messages.size() - 1));
        }
        Message message = messages.get(index);
        if (message != null) {
            messages.set(index, message.header(name, value));
        }
    }

    /**
     * Sets a header of every message, replacing a header of that name.
     *
     * @param name  the header name
     * @param value the header value
     */
    public void headerOnEach(String name, String value) {
        for (int i = 0; i < messages.size(); i++) {
            header(i, name, value);
        }
    }

    @Override
    public String toString() {
        return "PublishEvent{namespace=" + namespace + ", messages=" + messages.size() + ", inCallerTransaction="
                + inCallerTransaction + '}';
    }
}
