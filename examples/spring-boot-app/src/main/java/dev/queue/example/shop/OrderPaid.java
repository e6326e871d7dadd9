package dev.queue.example.shop;

/** The event of a paid order, the payload of {@code order.paid}. */
public record OrderPaid(long orderId, String customer, long totalCents) {
}
