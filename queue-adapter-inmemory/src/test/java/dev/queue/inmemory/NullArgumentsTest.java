package dev.queue.inmemory;

import dev.queue.api.Backoff;
import dev.queue.api.DeadLetters;
import dev.queue.api.Delivery;
import dev.queue.api.FlowControl;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageContext;
import dev.queue.api.MessageHandler;
import dev.queue.api.MessageId;
import dev.queue.api.MissedRuns;
import dev.queue.api.Namespace;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Page;
import dev.queue.api.PayloadCodec;
import dev.queue.api.Pull;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.api.Schedule;
import dev.queue.api.Schedules;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.TopicLimits;
import dev.queue.api.TopicStats;
import dev.queue.api.observation.HandleObservation;
import dev.queue.api.observation.PublishEvent;
import dev.queue.api.observation.PublishObservation;
import dev.queue.api.observation.QueueInterceptor;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.testkit.NullArgumentSweep;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every public constructor and method of the API, the manual clock and the in-memory queue rejects a null argument
 * with the queue's typed error (or takes it as "unset"), never with a bare NullPointerException.
 */
class NullArgumentsTest {

    private static final Instant START = Instant.parse("2030-01-01T00:00:00Z");
    private final List<Queue> opened = new ArrayList<>();

    @AfterEach
    void closeQueues() {
        opened.forEach(Queue::close);
    }

    @Test
    void everyPublicMemberRejectsNullWithATypedError() {
        List<Class<?>> classes = new ArrayList<>(apiClasses());
        classes.add(ManualClock.class);
        classes.add(InMemoryQueue.class);
        classes.add(Queue.class);
        classes.add(Namespace.class);
        classes.add(DeadLetters.class);
        classes.add(Schedules.class);
        assertThat(classes).as("API classes found on the class path").hasSizeGreaterThan(30);

        List<String> failures = sweep().failuresIn(classes);

        assertThat(failures).isEmpty();
    }

    private NullArgumentSweep sweep() {
        JacksonPayloadCodec codec = new JacksonPayloadCodec();
        return new NullArgumentSweep()
                .sample(String.class, () -> "t")
                .sample(Object.class, () -> "x")
                .sample(Duration.class, () -> Duration.ofSeconds(5))
                .sample(Instant.class, () -> START)
                .sample(ZoneId.class, () -> ZoneOffset.UTC)
                .sample(Map.class, Map::of)
                .sample(java.util.Optional.class, java.util.Optional::empty)
                .sample(Class.class, () -> Map.class)
                .sampleByGenericType(List.class, generic -> NullArgumentSweep.elementType(generic) == Message.class
                        ? List.of(Message.to("t")) : List.of("t"))
                .sample(Collection.class, List::of)
                .sample(Message.class, () -> Message.to("t"))
                .sample(Backoff.class, () -> Backoff.DEFAULT)
                .sample(MessageId.class, () -> MessageId.of(1))
                .sample(Page.class, () -> Page.first(10))
                .sample(Pull.class, () -> Pull.from("t"))
                .sample(Schedule.class, () -> Schedule.every("s", Duration.ofMinutes(1)).publishing(Message.to("t")))
                .sample(MissedRuns.class, MissedRuns::fireOnce)
                .sample(TopicLimits.class, () -> TopicLimits.none().withMaxRunning(1))
                .sample(TopicLimits.Partition.class, () -> TopicLimits.Partition.header("c"))
                .sample(InMemoryQueue.class, this::queue)
                .sample(QueueOptions.class, QueueOptions::defaults)
                .sample(PayloadCodec.class, () -> codec)
                .sample(Delivery.class, () -> delivery(codec))
                .sample(MessageHandler.class, () -> (MessageHandler<Object>) (payload, context) -> { })
                .sample(MessageContext.class, this::handlerContext)
                .sample(Subscriber.class, () -> Subscriber.on("t").handleDelivery((d, c) -> { }))
                .sample(Subscriber.Builder.class, () -> Subscriber.on("t"))
                .sample(ManualClock.class, () -> new ManualClock(START))
                .sample(Runnable.class, () -> () -> { })
                .sample(Throwable.class, () -> new IllegalStateException("a cause"))
                .sample(RuntimeException.class, () -> new IllegalStateException("a failure"))
                .sample(QueueInterceptor.class, () -> new QueueInterceptor() { })
                .sample(PublishEvent.class, () -> new PublishEvent("n", List.of(Message.to("t")), false))
                .sample(PublishObservation.class, () -> new PublishObservation() { })
                .sample(HandleObservation.class, () -> new HandleObservation() { })
                .instance(NamespaceStats.class, () -> new NamespaceStats("n", 0, 0, 0, 0, Map.of()))
                .instance(TopicStats.class, () -> new TopicStats("t", 1, 0, 0, 0, START))
                .instance(Subscription.class, () -> queue().namespace("n").subscribe(Subscriber.on("t").handleDelivery((d, c) -> { })))
                .instance(InMemoryQueue.class, this::queue)
                .instance(Queue.class, this::queue)
                .instance(Namespace.class, () -> queue().namespace("n"))
                .instance(DeadLetters.class, () -> queue().namespace("n").deadLetters())
                .instance(FlowControl.class, () -> queue().namespace("n").flowControl())
                .instance(Schedules.class, () -> queue().namespace("n").schedules());
    }

    private InMemoryQueue queue() {
        InMemoryQueue queue = InMemoryQueue.withClock(new ManualClock(START));
        opened.add(queue);
        return queue;
    }

    /** The context a real handler is given. */
    private MessageContext handlerContext() {
        InMemoryQueue queue = queue();
        Namespace namespace = queue.namespace("n");
        List<MessageContext> seen = new ArrayList<>();
        namespace.subscribe(Subscriber.on("t").handleDelivery((delivery, context) -> seen.add(context)));
        namespace.publish(Message.to("t"));
        queue.runDue();
        assertThat(seen).hasSize(1);
        return seen.get(0);
    }

    private static Delivery delivery(PayloadCodec codec) {
        return new Delivery(MessageId.of(1), "n", "t", "{}", Map.of(), 0, 1, 3, 7L, "w", START, START, codec);
    }

    /** The public top-level and nested classes of queue-api, read from its jar or class directory. */
    private static List<Class<?>> apiClasses() {
        try {
            Path location = Path.of(Message.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            List<String> names;
            if (Files.isDirectory(location)) {
                try (Stream<Path> files = Files.walk(location)) {
                    names = files.map(path -> location.relativize(path).toString().replace('\\', '/')).toList();
                }
            } else {
                try (JarFile jar = new JarFile(location.toFile())) {
                    names = jar.stream().map(entry -> entry.getName()).toList();
                }
            }
            List<Class<?>> classes = new ArrayList<>();
            for (String name : names) {
                if (name.startsWith("dev/queue/api/") && name.endsWith(".class") && !name.endsWith("package-info.class")) {
                    Class<?> type = Class.forName(name.substring(0, name.length() - ".class".length()).replace('/', '.'));
                    if (Modifier.isPublic(type.getModifiers())) {
                        classes.add(type);
                    }
                }
            }
            return classes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException | ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }
}
