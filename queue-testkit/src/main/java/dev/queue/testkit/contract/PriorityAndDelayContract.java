package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Pull;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** The order of claims (topic order, priority, due time, id) and when delayed messages become due. */
public abstract class PriorityAndDelayContract extends ContractSupport {

    private List<MessageId> pullAllOneByOne(Pull pull) {
        List<MessageId> order = new ArrayList<>();
        for (Optional<Delivery> next = ns.pullOne(pull); next.isPresent(); next = ns.pullOne(pull)) {
            order.add(next.get().id());
        }
        return order;
    }

    @Test
    public void lowerPriorityNumberIsClaimedFirst() {
        MessageId p5 = publish(Message.to("t").priority(5));
        MessageId p0 = publish(Message.to("t").priority(0));
        MessageId p9 = publish(Message.to("t").priority(9));
        MessageId p3 = publish(Message.to("t").priority(3));

        assertThat(pullAllOneByOne(pull("t"))).containsExactly(p0, p3, p5, p9);
    }

    @Test
    public void equalPriorityAndDueTimeIsFirstInFirstOut() {
        List<MessageId> published = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            published.add(publish(Message.to("t").priority(4)));
        }

        assertThat(pullAllOneByOne(pull("t"))).containsExactlyElementsOf(published);
    }

    @Test
    public void equalPriorityIsOrderedByDueTimeThenId() {
        MessageId dueNow = publish(Message.to("t").runAt(START));
        MessageId dueEarlier = publish(Message.to("t").runAt(START.minusSeconds(10)));
        MessageId dueNowToo = publish(Message.to("t"));
        MessageId dueEarliest = publish(Message.to("t").runAt(START.minus(Duration.ofHours(1))));

        assertThat(pullAllOneByOne(pull("t"))).containsExactly(dueEarliest, dueEarlier, dueNow, dueNowToo);
    }

    @Test
    public void priorityWinsOverDueTime() {
        MessageId oldButLow = publish(Message.to("t").priority(5).runAt(START.minus(Duration.ofDays(1))));
        MessageId newButHigh = publish(Message.to("t").priority(1));

        assertThat(pullAllOneByOne(pull("t"))).containsExactly(newButHigh, oldButLow);
    }

    @Test
    public void batchPullTakesTheFirstInClaimOrder() {
        publish(Message.to("t").priority(9));
        MessageId a = publish(Message.to("t").priority(1));
        publish(Message.to("t").priority(8));
        MessageId b = publish(Message.to("t").priority(2));

        List<MessageId> got = ns.pull(pull("t").limit(2)).stream().map(Delivery::id).collect(Collectors.toList());

        assertThat(got).containsExactlyInAnyOrder(a, b);
    }

    @Test
    public void pullAnyHonoursTopicOrderOverPriority() {
        MessageId bulk = publish(Message.to("bulk").priority(0));
        MessageId normal = publish(Message.to("default").priority(5));
        MessageId critical = publish(Message.to("critical").priority(9));

        List<MessageId> order = pullAllOneByOne(Pull.fromAny("critical", "default", "bulk").worker(WORKER));

        assertThat(order).containsExactly(critical, normal, bulk);
    }

    @Test
    public void pullAnyDrainsFirstTopicBeforeNext() {
        MessageId b1 = publish(Message.to("second"));
        MessageId a1 = publish(Message.to("first").priority(9));
        MessageId a2 = publish(Message.to("first").priority(9));
        MessageId b2 = publish(Message.to("second"));

        List<MessageId> order = pullAllOneByOne(Pull.fromAny(List.of("first", "second")).worker(WORKER));

        assertThat(order).containsExactly(a1, a2, b1, b2);
    }

    @Test
    public void pullAnySkipsTopicsWithNothingDue() {
        publish(Message.to("critical").delay(Duration.ofMinutes(1)));
        MessageId due = publish(Message.to("bulk"));

        Optional<Delivery> got = ns.pullOne(Pull.fromAny("critical", "default", "bulk").worker(WORKER));

        assertThat(got).map(Delivery::id).contains(due);
    }

    @Test
    public void pullAnyBatchTakesFromEarlierTopicsFirst() {
        MessageId c1 = publish(Message.to("critical"));
        publish(Message.to("bulk"));
        publish(Message.to("bulk"));
        MessageId d1 = publish(Message.to("default"));

        List<MessageId> got = ns.pull(Pull.fromAny("critical", "default", "bulk").worker(WORKER).limit(2))
                .stream().map(Delivery::id).collect(Collectors.toList());

        assertThat(got).containsExactlyInAnyOrder(c1, d1);
    }

    @Test
    public void delayedMessageIsNotDueBeforeItsDelayAndIsDueAtIt() {
        MessageId id = publish(Message.to("t").delay(Duration.ofSeconds(10)));

        assertThat(info(id).runAt()).isEqualTo(START.plusSeconds(10));
        assertNothingDue("t");
        advance(Duration.ofSeconds(10).minusMillis(1));
        assertNothingDue("t");
        advance(Duration.ofMillis(1));

        assertThat(pullOne("t").id()).isEqualTo(id);
    }

    @Test
    public void runAtMessageIsNotDueBeforeItsTimeAndIsDueAtIt() {
        Instant at = START.plus(Duration.ofHours(1));
        MessageId id = publish(Message.to("t").runAt(at));

        assertThat(info(id).runAt()).isEqualTo(at);
        advance(Duration.ofHours(1).minusMillis(1));
        assertNothingDue("t");
        advance(Duration.ofMillis(1));

        assertThat(pullOne("t").id()).isEqualTo(id);
    }

    @Test
    public void runAtInThePastIsDueNow() {
        Instant past = START.minus(Duration.ofDays(3));
        MessageId id = publish(Message.to("t").runAt(past));

        assertThat(info(id).runAt()).isEqualTo(past);
        assertThat(pullOne("t").id()).isEqualTo(id);
    }

    @Test
    public void runAtIsKeptToTheMicrosecond() {
        Instant at = START.plusSeconds(5).plusNanos(123_456_000);
        MessageId id = publish(Message.to("t").runAt(at));

        assertThat(info(id).runAt()).isEqualTo(at);
        advance(Duration.ofSeconds(5).plusNanos(123_455_000));
        assertNothingDue("t");
        advance(Duration.ofNanos(1_000));
        assertThat(pullOne("t").id()).isEqualTo(id);
    }

    @Test
    public void delayOfZeroIsDueNow() {
        MessageId id = publish(Message.to("t").delay(Duration.ZERO));

        assertThat(pullOne("t").id()).isEqualTo(id);
    }

    @Test
    public void delayOf365DaysIsAccepted() {
        MessageId id = publish(Message.to("t").delay(Duration.ofDays(365)));

        assertThat(info(id).runAt()).isEqualTo(START.plus(Duration.ofDays(365)));
    }

    @Test
    public void lastOfDelayAndRunAtWins() {
        MessageId delayWins = publish(Message.to("t").runAt(START.plus(Duration.ofDays(1))).delay(Duration.ofSeconds(5)));
        MessageId runAtWins = publish(Message.to("t").delay(Duration.ofDays(1)).runAt(START.plusSeconds(7)));

        assertThat(info(delayWins).runAt()).isEqualTo(START.plusSeconds(5));
        assertThat(info(runAtWins).runAt()).isEqualTo(START.plusSeconds(7));
    }

    @Test
    public void delayedHighPriorityDoesNotBlockDueLowPriority() {
        publish(Message.to("t").priority(0).delay(Duration.ofMinutes(1)));
        MessageId due = publish(Message.to("t").priority(9));

        assertThat(pullOne("t").id()).isEqualTo(due);
        assertNothingDue("t");
    }

    @Test
    public void delayedMessagesBecomeDueInDueTimeOrder() {
        MessageId later = publish(Message.to("t").delay(Duration.ofSeconds(20)));
        MessageId sooner = publish(Message.to("t").delay(Duration.ofSeconds(10)));

        advance(Duration.ofSeconds(10));
        assertThat(pullOne("t").id()).isEqualTo(sooner);
        assertNothingDue("t");
        advance(Duration.ofSeconds(10));
        assertThat(pullOne("t").id()).isEqualTo(later);
    }
}
