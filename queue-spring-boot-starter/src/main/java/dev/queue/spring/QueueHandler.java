package dev.queue.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the handler of a topic. The method takes the payload, decoded by the queue's codec to the
 * parameter's type ({@link dev.queue.api.Delivery} for the raw delivery), and optionally a
 * {@link dev.queue.api.MessageContext}, in either order. Returning acknowledges the message; throwing schedules a
 * retry with backoff, or a dead letter once its attempts are used up. Runs at least once per message.
 *
 * <pre>{@code
 * @QueueHandler(topic = "order.paid", concurrency = 8)
 * void onOrderPaid(OrderPaid event, MessageContext context) { ... }
 * }</pre>
 *
 * Subscriptions start with the application context and stop with it: claiming stops, running handlers get
 * {@code queue.handlers.shutdown-timeout} to finish, and what is still running after that runs again elsewhere.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface QueueHandler {

    /**
     * The topics, in priority order: due messages of the first are claimed before those of the next.
     *
     * @return the topics
     */
    String[] topic();

    /**
     * The namespace (tenant); empty: {@code queue.namespace}.
     *
     * @return the namespace, or empty
     */
    String namespace() default "";

    /**
     * Handlers of this method running at once, 1 to 1000; 0: {@code queue.handlers.concurrency}.
     *
     * @return the concurrency, or 0
     */
    int concurrency() default 0;

    /**
     * How long a claim holds a message, as {@code 30s} or {@code PT30S}; empty: {@code queue.handlers.lease}.
     *
     * @return the lease, or empty
     */
    String lease() default "";
}
