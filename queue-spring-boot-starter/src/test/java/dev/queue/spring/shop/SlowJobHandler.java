package dev.queue.spring.shop;

import dev.queue.api.MessageContext;
import dev.queue.api.MessageId;
import dev.queue.spring.QueueHandler;
import org.springframework.stereotype.Component;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A handler that runs until the test lets it finish: the message in flight at shutdown. */
@Component
public class SlowJobHandler {

    public static final String TOPIC = "slow.job";

    private final CountDownLatch release = new CountDownLatch(1);
    private final List<MessageId> started = new CopyOnWriteArrayList<>();
    private final List<MessageId> finished = new CopyOnWriteArrayList<>();

    @QueueHandler(topic = TOPIC, concurrency = 1)
    void run(MessageContext context, OrderPaid ignored) throws InterruptedException {
        started.add(context.messageId());
        if (!release.await(1, TimeUnit.MINUTES)) {
            throw new IllegalStateException("slow job " + context.messageId() + " was never released by its test");
        }
        finished.add(context.messageId());
    }

    public void release() {
        release.countDown();
    }

    public List<MessageId> started() {
        return List.copyOf(started);
    }

    public List<MessageId> finished() {
        return List.copyOf(finished);
    }
}
