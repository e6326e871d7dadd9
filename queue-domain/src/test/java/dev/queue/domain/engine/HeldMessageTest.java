package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.MessageId;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which held messages others wait for: only their acknowledgements skip the batching delay, so a message without a
 * running limit must not count, or every acknowledgement becomes a statement of its own. A keyed message's successor
 * is promoted by the batched acknowledgement, which no publisher of its key waits for.
 */
class HeldMessageTest {

    @Test
    void aMessageWithoutKeyOrLimitHoldsNoOneBack() {
        assertThat(new HeldMessage(delivery(null), false).holdsOthersBack).isFalse();
    }

    @Test
    void aKeyedMessageIsAcknowledgedInTheBatch() {
        assertThat(new HeldMessage(delivery("customer-7"), false).holdsOthersBack).isFalse();
    }

    @Test
    void aMessageUnderARunningLimitHoldsBackTheRoomItTakes() {
        assertThat(new HeldMessage(delivery(null), true).holdsOthersBack).isTrue();
    }

    private static Delivery delivery(String orderingKey) {
        Instant now = Instant.now();
        return new Delivery(MessageId.of(1), "held", "t", "{}", Map.of(), 0, 1, 5, 1001, "worker", now.plusSeconds(30), now,
                null, orderingKey);
    }
}
