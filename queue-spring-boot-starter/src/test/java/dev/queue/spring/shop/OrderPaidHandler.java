package dev.queue.spring.shop;

import dev.queue.api.MessageContext;
import dev.queue.spring.QueueHandler;
import org.springframework.stereotype.Component;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what it handled, with the context it was given. */
@Component
public class OrderPaidHandler {

    /** One handled message. */
    public record Handled(OrderPaid payload, String topic, String namespace, int attempt) {
    }

    private final List<Handled> handled = new CopyOnWriteArrayList<>();

    @QueueHandler(topic = "order.paid", concurrency = 4)
    void onOrderPaid(OrderPaid event, MessageContext context) {
        handled.add(new Handled(event, context.topic(), context.namespace(), context.attempt()));
    }

    public List<Handled> handled() {
        return List.copyOf(handled);
    }
}
