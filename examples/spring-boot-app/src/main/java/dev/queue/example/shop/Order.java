package dev.queue.example.shop;

/** An order as the HTTP API shows it. */
public record Order(long id, String customer, long totalCents, boolean receiptSent) {
}
