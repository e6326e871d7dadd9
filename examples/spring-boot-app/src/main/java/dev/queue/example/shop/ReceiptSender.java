package dev.queue.example.shop;

import dev.queue.api.MessageContext;
import dev.queue.spring.QueueHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** Sends the receipt of a paid order (here: logs it and marks the order). Safe to run twice. */
@Component
class ReceiptSender {

    private static final Logger LOG = LoggerFactory.getLogger(ReceiptSender.class);

    private final Orders orders;

    ReceiptSender(Orders orders) {
        this.orders = orders;
    }

    @QueueHandler(topic = "order.paid")
    void onOrderPaid(OrderPaid event, MessageContext context) {
        LOG.info("receipt for order {} to {} ({} cents); message {} on {} in namespace {}, attempt {}",
                event.orderId(), event.customer(), event.totalCents(), context.messageId(), context.topic(),
                context.namespace(), context.attempt());
        orders.markReceiptSent(event.orderId());
    }
}
