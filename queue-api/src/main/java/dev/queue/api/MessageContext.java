package dev.queue.api;

import java.time.Duration;
import java.util.Map;

/** What a handler knows about the message it runs, and how it asks for a different outcome than success. */
public interface MessageContext {

    Delivery delivery();

    default MessageId messageId() {
        return delivery().id();
    }

    default String namespace() {
        return delivery().namespace();
    }

    default String topic() {
        return delivery().topic();
    }

    default int attempt() {
        return delivery().attempt();
    }

    default Map<String, String> headers() {
        return delivery().headers();
    }

    /** After the handler returns, put the message back to pending for this long instead of acknowledging it. */
    void retryIn(Duration delay, String reason);

    /** After the handler returns, make the message a dead letter instead of acknowledging it. */
    void fail(String reason);
}
