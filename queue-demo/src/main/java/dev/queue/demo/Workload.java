package dev.queue.demo;

import dev.queue.api.Backoff;
import dev.queue.api.Message;
import dev.queue.api.MessageContext;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What the demo publishes and how its handlers behave: three topics of one namespace, a realistic mix.
 *
 * <table>
 *   <caption>Topics</caption>
 *   <tr><th>topic</th><th>share</th><th>handler</th><th>max attempts</th><th>backoff</th></tr>
 *   <tr><td>{@value #EMAIL}</td><td>65%</td><td>1-3 ms of work, always succeeds</td><td>20 (default)</td><td>-</td></tr>
 *   <tr><td>{@value #INVOICE}</td><td>30%</td><td>2-5 ms of work, fails 20% of attempts with a transient error</td>
 *       <td>5</td><td>50 ms doubling to 1 s</td></tr>
 *   <tr><td>{@value #WEBHOOK}</td><td>5%</td><td>about 1 ms, then always fails (the endpoint answers 503); gives
 *       up with {@code ctx.fail} on the last attempt</td>
 *       <td>3</td><td>100 ms doubling to 1 s</td></tr>
 * </table>
 *
 * So e-mails all complete, invoices mostly complete after a retry or two (0.2^5: about 3 in 10,000 run out of
 * attempts), and every webhook ends as a dead letter after three attempts.
 */
final class Workload {

    static final String NAMESPACE = "demo";
    static final String EMAIL = "email.send";
    static final String INVOICE = "invoice.render";
    static final String WEBHOOK = "webhook.deliver";
    static final List<String> TOPICS = List.of(EMAIL, INVOICE, WEBHOOK);

    /** Header carrying the publish time in microseconds since the epoch, for publish-to-handler-start latency. */
    static final String PUBLISHED_AT_HEADER = "published-at-us";

    static final int INVOICE_MAX_ATTEMPTS = 5;
    static final int WEBHOOK_MAX_ATTEMPTS = 3;
    static final double INVOICE_FAILURE_RATE = 0.20;
    /** Handlers running at once per subscription; each replica runs one subscription per topic. */
    static final int CONCURRENCY = 8;

    private static final String[] TEMPLATES = {"welcome", "password-reset", "receipt", "weekly-digest"};
    private static final String[] EVENTS = {"order.paid", "order.shipped", "refund.issued"};

    /** Payload of {@value #EMAIL}. */
    record EmailJob(String to, String template) {
    }

    /** Payload of {@value #INVOICE}. */
    record InvoiceJob(long invoiceId, String customer, long amountCents) {
    }

    /** Payload of {@value #WEBHOOK}. */
    record WebhookJob(String url, String event, long orderId) {
    }

    /** A failure that a later attempt may not meet: the subscriber retries it with the topic's backoff. */
    static final class TransientFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TransientFailure(String message) {
            super(message, null, false, false);
        }
    }

    private Workload() {
    }

    /** Short retry backoffs, so that every retry and dead letter happens within the run. */
    static QueueOptions queueOptions() {
        return QueueOptions.defaults()
                .backoff(INVOICE, Backoff.exponential(Duration.ofMillis(50), Duration.ofSeconds(1)))
                .backoff(WEBHOOK, Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1)));
    }

    /** The topic of the {@code index}-th message: a fixed 65/30/5 split, the same on every run. */
    static String topicOf(long index) {
        int slot = (int) (index % 20);
        if (slot == 0) {
            return WEBHOOK;
        }
        return slot <= 6 ? INVOICE : EMAIL;
    }

    /** The {@code index}-th message, stamped with the time it is published. */
    static Message message(long index, long publishedAtMicros) {
        String topic = topicOf(index);
        Message message = switch (topic) {
            case EMAIL -> Message.to(EMAIL)
                    .payload(new EmailJob("user" + (index % 5_000) + "@example.com", TEMPLATES[(int) (index % TEMPLATES.length)]));
            case INVOICE -> Message.to(INVOICE)
                    .payload(new InvoiceJob(100_000 + index, "customer-" + (index % 977), 500 + (index * 7919) % 250_000))
                    .maxAttempts(INVOICE_MAX_ATTEMPTS);
            default -> Message.to(WEBHOOK)
                    .payload(new WebhookJob("https://hooks.example.com/shop/" + (index % 13), EVENTS[(int) (index % EVENTS.length)], index))
                    .maxAttempts(WEBHOOK_MAX_ATTEMPTS);
        };
        return message.header(PUBLISHED_AT_HEADER, Long.toString(publishedAtMicros));
    }

    /** Starts one subscription per topic on a replica's namespace; handlers report to {@code metrics}. */
    static List<Subscription> subscribe(Namespace namespace, int replica, Metrics metrics) {
        String worker = "replica-" + replica;
        List<Subscription> subscriptions = new ArrayList<>();
        subscriptions.add(namespace.subscribe(Subscriber.on(EMAIL).concurrency(CONCURRENCY).worker(worker)
                .shutdownTimeout(Duration.ofSeconds(5))
                .handle(EmailJob.class, (job, ctx) -> {
                    metrics.handlerStarted(replica, ctx);
                    work(1, 3);
                })));
        subscriptions.add(namespace.subscribe(Subscriber.on(INVOICE).concurrency(CONCURRENCY).worker(worker)
                .shutdownTimeout(Duration.ofSeconds(5))
                .handle(InvoiceJob.class, (job, ctx) -> {
                    metrics.handlerStarted(replica, ctx);
                    work(2, 5);
                    if (ThreadLocalRandom.current().nextDouble() < INVOICE_FAILURE_RATE) {
                        throw new TransientFailure("renderer busy while rendering invoice " + job.invoiceId()
                                + " (simulated transient failure, attempt " + ctx.attempt() + ")");
                    }
                })));
        subscriptions.add(namespace.subscribe(Subscriber.on(WEBHOOK).concurrency(CONCURRENCY).worker(worker)
                .shutdownTimeout(Duration.ofSeconds(5))
                .handle(WebhookJob.class, (job, ctx) -> {
                    metrics.handlerStarted(replica, ctx);
                    work(1, 1);
                    String failure = "POST " + job.url() + " answered 503 Service Unavailable (simulated)";
                    if (ctx.delivery().isLastAttempt()) {
                        // giving up explicitly: a dead letter now, recorded quietly (a throw would log a warning)
                        ctx.fail(failure + " on the last of " + ctx.delivery().maxAttempts() + " attempts");
                        return;
                    }
                    throw new TransientFailure(failure);
                })));
        return subscriptions;
    }

    /** Simulated work: parks (no busy spin) for a random time between the bounds, in milliseconds. */
    static void work(int minMillis, int maxMillis) throws InterruptedException {
        long nanos = TimeUnit.MILLISECONDS.toNanos(minMillis)
                + ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(maxMillis - minMillis) + 1);
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException("handler interrupted while working");
            }
        }
    }

    /** For the summary: the handler of each topic in a few words. */
    static String describe(String topic) {
        return switch (topic) {
            case EMAIL -> "1-3 ms, always succeeds";
            case INVOICE -> "2-5 ms, fails 20%, max 5 attempts";
            case WEBHOOK -> "always fails, max 3 attempts";
            default -> "";
        };
    }

    /** Whether the handler receives the message the first time (its latency counts) or as a retry. */
    static boolean isRetry(MessageContext context) {
        return context.attempt() > 1;
    }
}
