package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.Namespace;
import dev.queue.api.NamespaceStats;
import dev.queue.api.PublishResult;
import dev.queue.api.Pull;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.Capability;
import dev.queue.testkit.QueueFactory;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The base of every contract class: one {@link QueueFactory} per class (from {@link #factory()}), and before each
 * test a fresh, empty queue on a {@link ManualClock} that starts at {@link #START}, with a namespace {@code contract}.
 * Time moves only when a test advances {@link #clock}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ContractSupport {

    /** Where each test's clock starts. */
    public static final Instant START = Instant.parse("2030-01-01T00:00:00Z");
    /** The longest any test waits for something a background thread does. */
    public static final Duration WAIT = Duration.ofSeconds(10);
    /** The namespace {@link #ns} is bound to. */
    public static final String NAMESPACE = "contract";
    /** The worker name the pull helpers use. */
    public static final String WORKER = "w1";

    /**
     * A typed payload for codec round trips.
     *
     * @param id  an order id
     * @param qty a quantity
     */
    public record Order(String id, int qty) {
    }

    private QueueFactory queueFactory;
    /** This test's clock, starting at {@link #START}. */
    protected ManualClock clock;
    /** This test's queue, fresh and empty; closed after the test. */
    protected Queue queue;
    /** The namespace {@value #NAMESPACE} of {@link #queue}. */
    protected Namespace ns;

    /**
     * The adapter under test; called once per contract class.
     *
     * @return a factory of fresh, empty queues
     */
    protected abstract QueueFactory factory();

    /**
     * Options of the queue each test gets; contract classes and adapters may override.
     *
     * @return the defaults with a sweep every 50 ms
     */
    protected QueueOptions options() {
        return QueueOptions.defaults().sweepInterval(Duration.ofMillis(50));
    }

    /** Gets this class's factory from {@link #factory()}, before its first test. */
    @BeforeAll
    protected void createFactory() {
        queueFactory = Objects.requireNonNull(factory(), "factory() returned null");
    }

    /** Creates this test's clock, queue and namespace. */
    @BeforeEach
    protected void createQueue() {
        clock = new ManualClock(START);
        queue = Objects.requireNonNull(queueFactory.create(clock, options()), "QueueFactory.create returned null");
        ns = queue.namespace(NAMESPACE);
    }

    /** Closes this test's queue. */
    @AfterEach
    protected void closeQueue() {
        if (queue != null) {
            queue.close();
            queue = null;
        }
    }

    /**
     * Closes this class's factory, after its last test.
     *
     * @throws Exception when the factory fails to close
     */
    @AfterAll
    protected void closeFactory() throws Exception {
        if (queueFactory != null) {
            queueFactory.close();
        }
    }

    /**
     * The factory of this contract class.
     *
     * @return the factory {@link #factory()} returned
     */
    protected QueueFactory queueFactory() {
        return queueFactory;
    }

    /**
     * Replaces this test's queue with a fresh, empty one built with other options (the clock starts over).
     *
     * @param options the new queue's options
     */
    protected void recreateQueue(QueueOptions options) {
        closeQueue();
        clock = new ManualClock(START);
        queue = queueFactory.create(clock, options);
        ns = queue.namespace(NAMESPACE);
    }

    // ---- capabilities ----

    /**
     * Skips the test, with the adapter's stated reason, when the adapter lacks the capability.
     *
     * @param capability what the rest of the test relies on
     */
    protected void requires(Capability capability) {
        String reason = queueFactory.missingCapabilities().get(capability);
        Assumptions.assumeTrue(reason == null,
                () -> "adapter lacks " + capability + ": " + reason);
    }

    // ---- time ----

    /**
     * The test clock's time.
     *
     * @return now, by {@link #clock}
     */
    protected Instant now() {
        return clock.now();
    }

    /**
     * Moves the test clock forward.
     *
     * @param amount how far
     * @return the new time
     */
    protected Instant advance(Duration amount) {
        return clock.advance(amount);
    }

    /**
     * Awaitility, bounded by {@link #WAIT}, polling often.
     *
     * @return a condition factory polling every 10 ms
     */
    protected ConditionFactory eventually() {
        return Awaitility.await().atMost(WAIT).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }

    // ---- publishing ----

    /**
     * Publishes JSON text to a topic and insists the message was stored.
     *
     * @param topic the topic
     * @param json  the payload as JSON text
     * @return the new message's id
     */
    protected MessageId publish(String topic, String json) {
        return publish(Message.to(topic).json(json));
    }

    /**
     * Publishes and insists the message was stored (not a duplicate).
     *
     * @param message the message
     * @return the new message's id
     */
    protected MessageId publish(Message message) {
        PublishResult result = ns.publish(message);
        assertThat(result).as("publish of %s", message).isInstanceOf(PublishResult.Published.class);
        return result.id();
    }

    // ---- pulling ----

    /**
     * A pull of one message from a topic as {@link #WORKER}.
     *
     * @param topic the topic
     * @return the pull
     */
    protected Pull pull(String topic) {
        return Pull.from(topic).worker(WORKER);
    }

    /**
     * Pulls one message of the topic as {@link #WORKER}; fails when none is due.
     *
     * @param topic the topic
     * @return the delivery
     */
    protected Delivery pullOne(String topic) {
        return pullOne(topic, WORKER);
    }

    /**
     * Pulls one message of the topic as {@code worker}; fails when none is due.
     *
     * @param topic  the topic
     * @param worker the worker name
     * @return the delivery
     */
    protected Delivery pullOne(String topic, String worker) {
        return ns.pullOne(Pull.from(topic).worker(worker)).orElseThrow(() -> new AssertionError(
                "expected a due message on topic " + topic + " at " + now() + " but the pull returned nothing"));
    }

    /**
     * Pulls one message of the topic as {@link #WORKER}, if one is due.
     *
     * @param topic the topic
     * @return the delivery; empty when none is due
     */
    protected Optional<Delivery> tryPullOne(String topic) {
        return ns.pullOne(pull(topic));
    }

    /**
     * Fails unless a pull of the topic returns nothing. A message it does return stays leased.
     *
     * @param topic the topic
     */
    protected void assertNothingDue(String topic) {
        List<Delivery> got = ns.pull(pull(topic).limit(1000));
        assertThat(got).as("deliveries of topic %s at %s", topic, now()).isEmpty();
    }

    // ---- inspecting ----

    /**
     * Inspects a message that must exist.
     *
     * @param id the message's id
     * @return the message as it stands
     */
    protected MessageInfo info(MessageId id) {
        return ns.inspect(id).orElseThrow(() -> new AssertionError("message " + id + " not found by inspect"));
    }

    /**
     * Fails unless inspecting the message finds nothing (it was completed).
     *
     * @param id the message's id
     */
    protected void assertGone(MessageId id) {
        assertThat(ns.inspect(id)).as("inspect(%s) of a completed message", id).isEmpty();
    }

    /**
     * Checks the completed counter. An adapter that declares it keeps none has the rest of the test skipped here,
     * with its stated reason, so call this last.
     *
     * @param stats    the stats read
     * @param expected the completed count expected
     */
    protected void assertCompleted(NamespaceStats stats, long expected) {
        requires(Capability.COMPLETED_COUNTS);
        assertThat(stats.completed()).as("completed of %s", stats).isEqualTo(expected);
    }

    /**
     * Everything observable about one message and its namespace, to prove a call changed nothing.
     *
     * @param info  the message as inspected
     * @param stats the namespace's stats
     */
    protected record Snapshot(Optional<MessageInfo> info, NamespaceStats stats) {
    }

    /**
     * Takes a snapshot of a message and its namespace.
     *
     * @param id the message's id
     * @return the snapshot
     */
    protected Snapshot snapshot(MessageId id) {
        return new Snapshot(ns.inspect(id), ns.stats());
    }

    /**
     * Fails unless the message and the namespace's stats are as in {@code before}.
     *
     * @param before the snapshot taken before the call
     * @param id     the message's id
     */
    protected void assertUnchanged(Snapshot before, MessageId id) {
        Snapshot after = snapshot(id);
        assertThat(after.info()).as("message %s after a call that should have changed nothing", id)
                .isEqualTo(before.info());
        assertThat(after.stats()).as("stats after a call that should have changed nothing").isEqualTo(before.stats());
    }
}
