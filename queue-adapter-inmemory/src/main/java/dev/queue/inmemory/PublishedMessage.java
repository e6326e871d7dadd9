package dev.queue.inmemory;

import dev.queue.api.MessageId;
import dev.queue.api.PayloadCodec;
import dev.queue.codec.jackson.JacksonPayloadCodec;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A message as it was stored by a publish of an {@link InMemoryQueue}, kept for assertions in tests:
 * duplicates (a unique key already held) are not recorded, since nothing was stored for them.
 */
public record PublishedMessage(MessageId id, String namespace, String topic, String json, Map<String, String> headers,
                               Instant publishedAt) {

    private static final PayloadCodec DEFAULT_CODEC = new JacksonPayloadCodec();

    public PublishedMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(json, "json");
        headers = Map.copyOf(headers);
        Objects.requireNonNull(publishedAt, "publishedAt");
    }

    /** The payload decoded by the default (Jackson) codec. */
    public <T> T payload(Class<T> type) {
        return DEFAULT_CODEC.decode(json, type);
    }

    /** The payload decoded by {@code codec}, for a queue configured with a codec of its own. */
    public <T> T payload(Class<T> type, PayloadCodec codec) {
        return Objects.requireNonNull(codec, "codec").decode(json, type);
    }
}
