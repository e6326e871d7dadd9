package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.InvalidPayloadException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.PayloadCodec;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.UnsupportedCapabilityException;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.domain.rules.InputRules;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Between the API's messages and the store's: validates and encodes what is published, with the queue's defaults,
 * and turns what the store answers back into publish results and deliveries.
 */
final class MessageMapping {

    private final InputRules rules;
    private final PayloadCodec codec;
    private final QueueOptions options;
    private final Clock time;
    /** Whether the store keeps ordering keys: a keyed message to a store without them is refused, never unordered. */
    private final BooleanSupplier orderingKeys;

    MessageMapping(InputRules rules, PayloadCodec codec, QueueOptions options, Clock time, BooleanSupplier orderingKeys) {
        this.rules = rules;
        this.codec = codec;
        this.options = options;
        this.time = time;
        this.orderingKeys = orderingKeys;
    }

    PayloadCodec codec() {
        return codec;
    }

    /**
     * One store command for a namespace's messages, defaults applied. Throws {@link InvalidInputException} for the
     * first bad message, before anything is stored.
     */
    PublishCommand preparePublish(String namespace, List<Message> messages) {
        rules.namespace(namespace);
        rules.publishBatch(messages);
        List<NewMessage> prepared = new ArrayList<>(messages.size());
        for (Message message : messages) {
            prepared.add(prepare(namespace, message));
        }
        return new PublishCommand(List.copyOf(prepared), time.commandTime());
    }

    private NewMessage prepare(String namespace, Message message) {
        if (message == null) {
            throw new InvalidInputException("message", null, "a Message, for example Message.to(\"topic\").payload(...)");
        }
        rules.topic(message.topic());
        String json;
        if (message.payloadIsJson()) {
            json = (String) message.payload();
        } else {
            try {
                json = codec.encode(message.payload());
            } catch (RuntimeException e) {
                throw new InvalidPayloadException(message.payload() == null ? null : message.payload().getClass().getName(),
                        "an object the codec can write as JSON (" + e.getMessage() + ")");
            }
        }
        rules.payloadJson(json);
        rules.headers(message.headers());
        int priority = message.priority() != null ? message.priority() : Message.DEFAULT_PRIORITY;
        rules.priority(priority);
        int maxAttempts = message.maxAttempts() != null ? message.maxAttempts() : options.defaultMaxAttempts();
        rules.maxAttempts(maxAttempts);
        rules.uniqueKey(message.uniqueKey());
        rules.orderingKey(message.orderingKey());
        if (message.orderingKey() != null && !orderingKeys.getAsBoolean()) {
            throw new UnsupportedCapabilityException("ordering keys",
                    "the store of this queue does not keep ordering keys, so message " + message
                            + " cannot be published in order");
        }
        Duration delay = Duration.ZERO;
        if (message.delay() != null) {
            rules.delay("delay", message.delay());
            delay = message.delay();
        }
        Instant runAt = message.runAt();
        if (runAt != null) {
            rules.runAt(runAt);
            runAt = runAt.truncatedTo(ChronoUnit.MICROS);
        }
        delay = Duration.ofNanos(delay.toNanos() / 1000 * 1000);
        return new NewMessage(namespace, message.topic(), json, Map.copyOf(message.headers()), priority, maxAttempts,
                message.uniqueKey(), runAt, delay, message.orderingKey());
    }

    /** Pairs what the store did with what was asked, in order. */
    static List<PublishResult> toResults(PublishCommand command, List<StoredOutcome> stored) {
        if (stored.size() != command.messages().size()) {
            throw new IllegalStateException("the store answered " + stored.size() + " outcomes for " + command.messages().size() + " messages");
        }
        List<PublishResult> results = new ArrayList<>(stored.size());
        for (int i = 0; i < stored.size(); i++) {
            StoredOutcome outcome = stored.get(i);
            MessageId id = MessageId.of(outcome.id());
            results.add(outcome.duplicate()
                    ? new PublishResult.Duplicate(id, command.messages().get(i).uniqueKey())
                    : new PublishResult.Published(id));
        }
        return results;
    }

    /** The API's view of a claimed message. */
    Delivery toDelivery(ClaimedMessage m) {
        return new Delivery(MessageId.of(m.id()), m.namespace(), m.topic(), m.json(), m.headers(), m.priority(), m.attempt(),
                m.maxAttempts(), m.leaseToken(), m.worker(), m.leaseUntil(), m.publishedAt(), codec, m.orderingKey());
    }
}
