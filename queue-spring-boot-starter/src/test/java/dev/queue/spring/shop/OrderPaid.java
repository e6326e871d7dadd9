package dev.queue.spring.shop;

/** The payload of {@code order.paid} and {@code order.refunded}. */
public record OrderPaid(String orderId, long cents) {
}
