package dev.queue.testkit.contract;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.NamespaceStats;
import dev.queue.api.TopicStats;
import dev.queue.testkit.Capability;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Counts per namespace and topic: pending, running, completed, dead, totals, topic count. */
public abstract class StatsContract extends ContractSupport {

    @Test
    public void emptyNamespaceHasZeroCountsAndNoTopics() {
        NamespaceStats stats = ns.stats();

        assertThat(stats.namespace()).isEqualTo(NAMESPACE);
        assertThat(stats.pending()).isZero();
        assertThat(stats.running()).isZero();
        assertThat(stats.completed()).isZero();
        assertThat(stats.dead()).isZero();
        assertThat(stats.total()).isZero();
        assertThat(stats.topicCount()).isZero();
        assertThat(stats.topic("unknown")).isEqualTo(new TopicStats("unknown", 0, 0, 0, 0));
    }

    @Test
    public void pendingRunningAndDeadAreCountedPerTopicAndInTotal() {
        publish("a", "{}");
        publish("a", "{}");
        publish("a", "{}");
        publish("b", "{}");
        publish("b", "{}");
        publish(Message.to("c").delay(Duration.ofHours(1)));
        pullOne("a");
        ns.fail(pullOne("b"), "dead");

        NamespaceStats stats = ns.stats();

        assertThat(stats.topic("a")).isEqualTo(new TopicStats("a", 2, 1, 0, 0, START));
        assertThat(stats.topic("b")).isEqualTo(new TopicStats("b", 1, 0, 0, 1, START));
        assertThat(stats.topic("c")).as("a delayed message is not due yet").isEqualTo(new TopicStats("c", 1, 0, 0, 0, null));
        assertThat(stats.pending()).isEqualTo(4);
        assertThat(stats.running()).isEqualTo(1);
        assertThat(stats.dead()).isEqualTo(1);
        assertThat(stats.total()).isEqualTo(6);
        assertThat(stats.topicCount()).isEqualTo(3);
        assertThat(stats.topics().keySet()).containsExactly("a", "b", "c");
    }

    @Test
    public void completedIsCountedPerTopicAndInTotal() {
        requires(Capability.COMPLETED_COUNTS);
        publish("a", "{}");
        publish("a", "{}");
        publish("b", "{}");
        ns.ack(pullOne("a"));
        ns.ack(pullOne("a"));
        ns.ack(pullOne("b"));

        NamespaceStats stats = ns.stats();

        assertThat(stats.topic("a")).isEqualTo(new TopicStats("a", 0, 0, 2, 0));
        assertThat(stats.topic("b")).isEqualTo(new TopicStats("b", 0, 0, 1, 0));
        assertThat(stats.completed()).isEqualTo(3);
        assertThat(stats.total()).isEqualTo(3);
        assertThat(stats.topicCount()).isEqualTo(2);
    }

    @Test
    public void mixOfEveryStateAddsUp() {
        requires(Capability.COMPLETED_COUNTS);
        for (int i = 0; i < 5; i++) {
            publish("t", "{}");
        }
        ns.ack(pullOne("t"));
        ns.ack(pullOne("t"));
        ns.fail(pullOne("t"), "dead");
        pullOne("t");

        NamespaceStats stats = ns.stats();

        assertThat(stats.topic("t")).isEqualTo(new TopicStats("t", 1, 1, 2, 1, START));
        assertThat(stats.topic("t").total()).isEqualTo(5);
        assertThat(stats.total()).isEqualTo(5);
        assertThat(stats.pending() + stats.running() + stats.completed() + stats.dead()).isEqualTo(stats.total());
    }

    @Test
    public void retryWaitCountsAsPending() {
        publish(Message.to("t").maxAttempts(5));
        ns.nack(pullOne("t"), "later", Duration.ofHours(1));

        assertThat(ns.stats().topic("t")).as("a retry in its backoff is not due yet").isEqualTo(new TopicStats("t", 1, 0, 0, 0, null));
    }

    @Test
    public void rescuedExpiredLeaseCountsAsPendingAgain() {
        publish(Message.to("t").maxAttempts(5));
        pullOne("t");
        assertThat(ns.stats().running()).isEqualTo(1);

        advance(Duration.ofSeconds(31));
        assertThat(ns.pull(pull("elsewhere"))).isEmpty();

        assertThat(ns.stats().topic("t")).isEqualTo(new TopicStats("t", 1, 0, 0, 0, now()));
    }

    @Test
    public void redriveMovesCountFromDeadToPending() {
        MessageId id = publish("t", "{}");
        ns.fail(pullOne("t"), "dead");
        assertThat(ns.stats().topic("t").dead()).isEqualTo(1);

        ns.deadLetters().redrive(id);

        assertThat(ns.stats().topic("t")).isEqualTo(new TopicStats("t", 1, 0, 0, 0, START));
    }

    @Test
    public void oldestDueAtIsTheEarliestDueTimeAmongDuePendingMessages() {
        publish("t", "{}");
        advance(Duration.ofSeconds(10));
        publish("t", "{}");
        publish(Message.to("t").priority(5).runAt(START.plusSeconds(4)));
        publish(Message.to("t").delay(Duration.ofMinutes(1)));
        ns.ack(pullOne("t"));

        TopicStats stats = ns.stats().topic("t");

        assertThat(stats.oldestDueAt()).as("the priority-5 message due at +4 s waits longest now the first is done")
                .isEqualTo(START.plusSeconds(4));
        assertThat(stats.oldestDueAge(now())).isEqualTo(Duration.ofSeconds(6));
        assertThat(stats.pending()).isEqualTo(3);
    }

    @Test
    public void purgeRemovesFromDeadCount() {
        publish("t", "{}");
        ns.fail(pullOne("t"), "dead");

        ns.deadLetters().purgeAll();

        assertThat(ns.stats().dead()).isZero();
        assertThat(ns.stats().total()).isZero();
    }

    @Test
    public void topicCountCountsEveryTopicThatHeldAMessage() {
        publish("x", "{}");
        publish("y", "{}");
        publish("y", "{}");
        publish("z", "{}");

        assertThat(ns.stats().topicCount()).isEqualTo(3);
    }

    @Test
    public void completedTopicStaysCounted() {
        requires(Capability.COMPLETED_COUNTS);
        publish("x", "{}");
        ns.ack(pullOne("x"));

        assertThat(ns.stats().topicCount()).isEqualTo(1);
        assertThat(ns.stats().topic("x").completed()).isEqualTo(1);
    }
}
